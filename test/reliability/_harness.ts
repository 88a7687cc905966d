// Shared by the reliability suite (test/reliability/*.rel.ts, `npm run test:reliability`):
// the service as real child processes (API, cluster, workers) that a test can SIGKILL and
// restart, a client that retries unacknowledged requests with the same Idempotency-Key and
// records every operation, a webhook receiver, and the invariant checker every test ends with.
import assert from 'node:assert/strict'
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { freePort } from '../helpers/ports.ts'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { sql } from 'kysely'
import type { Db } from '../../src/database.ts'
import { auditBooks } from '../../src/modules/audit/index.ts'
import { Kurus } from '../../sdk/index.ts'

export const OPERATOR_TOKEN = 'reliability-operator-token-0123456789'
export const MASTER_KEY = 'e'.repeat(64)
/** A request that has not answered after this long counts as hung (it is aborted). */
export const REQUEST_TIMEOUT_MS = 25_000

// ---------------------------------------------------------------------------------------
// Seeds

/** mulberry32: every random choice of a test comes from its seed, so a seed replays. */
export function rng(seed: number): {
  next(): number
  int(n: number): number
  pick<T>(xs: readonly T[]): T
  chance(p: number): boolean
} {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return {
    next,
    int,
    pick: <T>(xs: readonly T[]) => {
      const x = xs[int(xs.length)]
      assert.ok(x !== undefined, 'pick from an empty list')
      return x
    },
    chance: (p: number) => next() < p,
  }
}

/** Number from the environment (the suite's knobs for long runs), else the default. */
export function knob(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  assert.ok(Number.isFinite(value), `${name} must be a number`)
  return value
}

// ---------------------------------------------------------------------------------------
// Processes

function getStatus(port: number, path: string, timeoutMs = 5_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end()
  })
}

/** /readyz of the service, or 0 when nothing answers. */
export async function readyz(port: number): Promise<number> {
  try {
    return await getStatus(port, '/readyz', 10_000)
  } catch {
    return 0
  }
}

export function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
}

function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number)
  } catch {
    return []
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export interface ServiceOptions {
  databaseUrl: string
  /** API processes: 1 runs `serve --no-worker`, N > 1 `serve --processes N --no-worker`. */
  apiProcesses?: number
  workers?: number
  env?: Record<string, string>
}

/**
 * The service as an operator runs it: API process(es) and `kurus worker` processes over one
 * PostgreSQL. Every start and kill is noted with the time (`events`); each process writes its
 * output to a log file of its own in `dir`.
 */
export class Service {
  readonly port: number
  readonly url: string
  readonly dir: string
  readonly databaseUrl: string
  readonly apiProcesses: number
  readonly events: string[] = []
  api: ChildProcess | undefined
  /** The log file of the API process last started (fail points write to it). */
  apiLog = ''
  workers: (ChildProcess | undefined)[]
  /** Each worker's log file, by index, as last started. */
  readonly workerLogs: string[] = []
  /** Every process reads its fail points from here on SIGUSR2 (`arm`). */
  readonly failpointsFile: string
  private readonly baseEnv: Record<string, string>
  private spawned = 0

  constructor(options: ServiceOptions, port: number) {
    this.port = port
    this.url = `http://127.0.0.1:${port}`
    this.databaseUrl = options.databaseUrl
    this.apiProcesses = options.apiProcesses ?? 1
    this.dir = mkdtempSync(join(tmpdir(), 'kurus-rel-'))
    this.workers = Array.from({ length: options.workers ?? 1 }, () => undefined)
    this.failpointsFile = join(this.dir, 'failpoints')
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !k.startsWith('NODE_TEST') && !k.startsWith('KURUS_')) env[k] = v
    }
    this.baseEnv = {
      ...env,
      DATABASE_URL: options.databaseUrl,
      DATABASE_POOL_SIZE: '6',
      KURUS_ENV: 'demo',
      KURUS_DATA_DIR: this.dir,
      KURUS_MASTER_KEY: MASTER_KEY,
      KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
      KURUS_RATE_LIMIT_RPS: '1000000',
      KURUS_RATE_LIMIT_BURST: '1000000',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      KURUS_FAILPOINTS_FILE: this.failpointsFile,
      ...options.env,
    }
  }

  static async create(options: ServiceOptions): Promise<Service> {
    return new Service(options, await freePort())
  }

  private note(what: string): void {
    this.events.push(`${new Date().toISOString()} ${what}`)
  }

  private spawn(args: string[], env: Record<string, string>): { child: ChildProcess; log: string } {
    const log = join(this.dir, `${String(++this.spawned).padStart(3, '0')}-${args[0]}.log`)
    const fd = openSync(log, 'a')
    try {
      const child = spawn(process.execPath, ['src/main.ts', ...args], {
        env: { ...this.baseEnv, ...env },
        stdio: ['ignore', fd, fd],
      })
      return { child, log }
    } finally {
      closeSync(fd)
    }
  }

  async startApi(env: Record<string, string> = {}): Promise<void> {
    assert.equal(this.api, undefined, 'the API is already running')
    const args =
      this.apiProcesses > 1
        ? ['serve', '--processes', String(this.apiProcesses), '--no-worker']
        : ['serve', '--no-worker']
    const { child, log } = this.spawn(args, env)
    this.api = child
    this.apiLog = log
    this.note(`api start pid ${child.pid} ${JSON.stringify(env)} log ${log}`)
    await this.waitReady()
  }

  async waitReady(timeoutMs = 180_000): Promise<void> {
    const until = Date.now() + timeoutMs
    while (Date.now() < until) {
      if (this.api && (this.api.exitCode !== null || this.api.signalCode !== null)) {
        throw new Error(`the API exited while starting; logs in ${this.dir}\n${this.tail()}`)
      }
      if ((await readyz(this.port)) === 200) return
      await delay(100)
    }
    throw new Error(`the API did not become ready; logs in ${this.dir}\n${this.tail()}`)
  }

  /** The API's process ids: the primary, then its cluster children. */
  apiPids(): number[] {
    const pid = this.api?.pid
    if (pid === undefined) return []
    return this.apiProcesses > 1 ? [pid, ...childPids(pid)] : [pid]
  }

  /** kill -9 of every API process (the cluster's primary first, so it forks nothing new). */
  async killApi(): Promise<void> {
    const api = this.api
    if (!api) return
    const children = this.apiProcesses > 1 && api.pid ? childPids(api.pid) : []
    api.kill('SIGKILL')
    await exited(api)
    for (const pid of children) if (alive(pid)) process.kill(pid, 'SIGKILL')
    for (let i = 0; i < 100 && children.some(alive); i++) await delay(20)
    this.api = undefined
    this.note(`api kill -9 ${[api.pid, ...children].join(',')}`)
  }

  /** kill -9 of one cluster child: the primary forks a replacement. */
  killApiChild(index: number): number | undefined {
    const pid = this.apiPids().slice(1)[index]
    if (pid === undefined) return undefined
    process.kill(pid, 'SIGKILL')
    this.note(`api child kill -9 ${pid}`)
    return pid
  }

  /** Starts worker `index` and waits until it says it is consuming jobs. */
  async startWorker(index: number, env: Record<string, string> = {}): Promise<void> {
    assert.equal(this.workers[index], undefined, `worker ${index} is already running`)
    const { child, log } = this.spawn(['worker'], { LOG_LEVEL: 'info', ...env })
    this.workers[index] = child
    this.workerLogs[index] = log
    this.note(`worker ${index} start pid ${child.pid} log ${log}`)
    for (const until = Date.now() + 180_000; Date.now() < until;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `worker ${index} exited while starting:\n${readFileSync(log, 'utf8').slice(-3000)}`,
        )
      }
      if (readFileSync(log, 'utf8').includes('"msg":"worker started"')) return
      await delay(100)
    }
    throw new Error(`worker ${index} did not start; see ${log}`)
  }

  async killWorker(index: number): Promise<void> {
    const child = this.workers[index]
    if (!child) return
    child.kill('SIGKILL')
    await exited(child)
    this.workers[index] = undefined
    this.note(`worker ${index} kill -9 ${child.pid}`)
  }

  /**
   * Re-arms a running process (the API, or a worker) with a KURUS_FAILPOINTS spec, without a
   * restart: it reads `failpointsFile` on SIGUSR2 and says so in its log, which this awaits.
   */
  async arm(child: ChildProcess | undefined, log: string, spec: string): Promise<void> {
    assert.ok(child?.pid, 'arming a process that is not running')
    const said = 'fail points armed:'
    const before = readFileSync(log, 'utf8').split(said).length
    writeFileSync(this.failpointsFile, spec)
    process.kill(child.pid, 'SIGUSR2')
    for (const until = Date.now() + 10_000; Date.now() < until;) {
      if (readFileSync(log, 'utf8').split(said).length > before) return
      await delay(20)
    }
    throw new Error(`the process did not arm ${spec}; see ${log}`)
  }

  /** The API and every worker, started side by side (migrations take an advisory lock). */
  async start(env: Record<string, string> = {}): Promise<void> {
    await Promise.all([this.startApi(env), ...this.workers.map((_, i) => this.startWorker(i))])
  }

  /** The end of a test: kill -9 of everything (graceful shutdown is tested elsewhere). */
  async stop(): Promise<void> {
    await this.killApi()
    for (let i = 0; i < this.workers.length; i++) await this.killWorker(i)
  }

  /** The last lines of every process's log (for a failure message). */
  tail(lines = 15): string {
    return readdirSync(this.dir)
      .filter((f) => f.endsWith('.log'))
      .sort()
      .map((f) => {
        const text = readFileSync(join(this.dir, f), 'utf8').split('\n').slice(-lines).join('\n')
        return `--- ${f}\n${text}`
      })
      .join('\n')
  }

  /**
   * Did a process die of something other than our SIGKILL (an unhandled crash)? A cluster
   * child that was still starting when its primary was killed dies of EPIPE on its IPC
   * channel: that one is the kill's doing, not a crash.
   */
  crashes(): string[] {
    const crash = /Unhandled 'error' event|unhandledRejection|uncaughtException|^Node\.js v/m
    return readdirSync(this.dir)
      .filter((f) => f.endsWith('.log'))
      .sort()
      .flatMap((f) => {
        const text = readFileSync(join(this.dir, f), 'utf8')
        const orphan = /EPIPE/.test(text) && /cluster\._setupWorker/.test(text)
        return crash.test(text) && !orphan ? [`${f}: ${text.slice(-1500)}`] : []
      })
  }
}

// ---------------------------------------------------------------------------------------
// Time travel for the dead

/**
 * While no API process is alive (or the test's client is quiescent and nothing else calls
 * the API), no request can be in flight, so every `processing`
 * idempotency claim, every `pending` payment and every claimed capture/void belongs to a
 * request that died. The service takes such work over after 60 s; instead of waiting that
 * long the test moves their clocks back past the window. With `deliveries` (only when the
 * workers are down too) the leases of pending webhook deliveries lapse the same way.
 */
export async function fastForwardAbandoned(db: Db, options: { deliveries?: boolean } = {}) {
  await sql`update idempotency_keys set locked_at = locked_at - interval '1 hour'
            where state = 'processing'`.execute(db)
  await sql`update payments set updated_at = updated_at - interval '10 minutes'
            where status = 'pending' or action_in_flight is not null`.execute(db)
  if (options.deliveries) {
    await sql`update webhook_deliveries set next_attempt_at = least(next_attempt_at, now() - interval '1 second')
              where status = 'pending'`.execute(db)
  }
}

// ---------------------------------------------------------------------------------------
// Merchants and the client

export interface Merchant {
  merchantId: string
  storeId: string
  publicKey: string
  secretKey: string
  dashboard: { email: string; password: string }
  client: Kurus
}

/** fetch with a bound: a request that hangs past REQUEST_TIMEOUT_MS is aborted and counted. */
export const hung: { count: number } = { count: 0 }
const boundedFetch: typeof fetch = async (input, init) => {
  try {
    return await fetch(input, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  } catch (error) {
    if (error instanceof DOMException && error.name === 'TimeoutError') hung.count++
    throw error
  }
}

export function clientFor(baseUrl: string, keys: { publicKey: string; secretKey: string }) {
  return new Kurus({ ...keys, baseUrl, fetch: boundedFetch })
}

export async function operator<T>(baseUrl: string, method: string, path: string, body?: unknown) {
  const res = await boundedFetch(baseUrl + path, {
    method,
    headers: {
      authorization: `Bearer ${OPERATOR_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T }
}

export async function newMerchant(baseUrl: string, name = 'Reliability'): Promise<Merchant> {
  const res = await operator<Omit<Merchant, 'client'>>(baseUrl, 'POST', '/operator/v1/merchants', {
    name,
    kycStatus: 'approved',
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { ...res.body, client: clientFor(baseUrl, res.body) }
}

export type Outcome<T = Record<string, unknown>> =
  | { kind: 'ok'; status: number; body: T; attempts: number }
  | { kind: 'fail'; status: number; body: T; attempts: number }
  | { kind: 'info'; status: number; body: T; attempts: number; error: string }

export interface RetryPolicy {
  /** Give up (outcome `info`: unknown whether it happened) after this long. */
  deadlineMs?: number
  /** Keep retrying a 202 until the answer is final. */
  untilFinal?: boolean
}

function retryable(status: number, body: unknown, untilFinal: boolean): boolean {
  const code = (body as { code?: string } | null)?.code
  return status >= 500 || status === 429 || code === 'SVC-GW-2002' || (untilFinal && status === 202)
}

/**
 * Sends a request and retries it with the same Idempotency-Key and body until it is
 * acknowledged: 2xx is `ok`, another 4xx is `fail` (a final refusal), and a request never
 * acknowledged before the deadline is `info` — it may or may not have happened.
 */
export async function send<T = Record<string, unknown>>(
  client: Kurus,
  method: string,
  path: string,
  opts: { body?: unknown; key?: string | undefined },
  policy: RetryPolicy = {},
): Promise<Outcome<T>> {
  const until = Date.now() + (policy.deadlineMs ?? 120_000)
  let attempts = 0
  let last: { status: number; body: unknown; error: string }
  for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
    attempts++
    try {
      const res = await client.request<T>(method, path, {
        ...(opts.body === undefined ? {} : { body: opts.body }),
        ...(opts.key ? { idempotencyKey: opts.key } : {}),
      })
      if (!retryable(res.status, res.body, policy.untilFinal ?? false)) {
        return res.status < 300
          ? { kind: 'ok', status: res.status, body: res.body, attempts }
          : { kind: 'fail', status: res.status, body: res.body, attempts }
      }
      last = { status: res.status, body: res.body, error: `HTTP ${res.status}` }
    } catch (error) {
      last = { status: 0, body: null, error: String(error) }
    }
    if (Date.now() + wait > until) {
      return {
        kind: 'info',
        status: last.status,
        body: last.body as T,
        attempts,
        error: last.error,
      }
    }
    await delay(wait)
  }
}

export const CARDS = {
  frictionless: '4155650100416111',
  debit: '5890040000000016',
  declined: '4000000000000002',
  asyncRefund: '4000000000000259',
  asyncRefundFails: '4000000000000697',
  timeout: '4000000000000119',
} as const

export function newKey(): string {
  return randomUUID()
}

// ---------------------------------------------------------------------------------------
// Webhooks

export interface Receiver {
  url: string
  /** Event ids received (a redelivery repeats one). */
  ids: string[]
  close(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const ids: string[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      try {
        ids.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id)
      } catch {
        // not a webhook
      }
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    ids,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Registers the receiver for every event of the merchant's store (dashboard API). */
export async function subscribe(baseUrl: string, m: Merchant, url: string): Promise<void> {
  const login = await fetch(`${baseUrl}/v1/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(m.dashboard),
  })
  const { token } = (await login.json()) as { token: string }
  assert.equal(login.status, 200, `dashboard login: ${login.status}`)
  const res = await fetch(`${baseUrl}/v1/stores/${m.storeId}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  })
  assert.equal(res.status, 201, `webhook endpoint: ${res.status} ${await res.text()}`)
}

// ---------------------------------------------------------------------------------------
// Draining and the invariants

/**
 * Runs the reconcilers and job queues (POST /v1/sandbox/reconcile, in the API process) until
 * nothing is left in flight: no pending payment or refund, every event dispatched and, with
 * `webhooks`, every delivery done. Returns what is still open after `rounds` rounds.
 */
export async function drain(
  db: Db,
  client: Kurus,
  options: { rounds?: number; webhooks?: boolean } = {},
): Promise<string[]> {
  let open: string[] = []
  for (let round = 0; round < (options.rounds ?? 30); round++) {
    const res = await send(
      client,
      'POST',
      '/v1/sandbox/reconcile',
      { body: {} },
      { deadlineMs: 60_000 },
    )
    assert.equal(res.kind, 'ok', `reconcile: ${JSON.stringify(res)}`)
    open = await openWork(db, options.webhooks ?? false)
    if (open.length === 0) return open
    await delay(200)
  }
  return open
}

async function count(db: Db, query: ReturnType<typeof sql<{ n: number }>>): Promise<number> {
  const { rows } = await query.execute(db)
  return rows[0]?.n ?? 0
}

export async function openWork(db: Db, webhooks: boolean): Promise<string[]> {
  const open: string[] = []
  const checks: [string, ReturnType<typeof sql<{ n: number }>>][] = [
    [
      'pending payments',
      sql<{ n: number }>`select count(*)::int as n from payments where status = 'pending'`,
    ],
    [
      'pending refunds',
      sql<{ n: number }>`select count(*)::int as n from refunds where status = 'pending'`,
    ],
  ]
  if (webhooks) {
    checks.push(
      [
        'undispatched events',
        sql<{ n: number }>`select count(*)::int as n from events where dispatched_at is null`,
      ],
      [
        'pending deliveries',
        sql<{
          n: number
        }>`select count(*)::int as n from webhook_deliveries where status = 'pending'`,
      ],
    )
  }
  for (const [name, query] of checks) {
    const n = await count(db, query)
    if (n > 0) open.push(`${n} ${name}`)
  }
  return open
}

/**
 * The acquirer's books against ours (the sandbox bank keeps its own tables): one
 * authorization per payment, no transactionId charged twice, and no approval, capture, void
 * or refund the bank holds that our records do not show.
 */
export async function acquirerProblems(db: Db): Promise<string[]> {
  const queries: [string, ReturnType<typeof sql<{ id: string }>>][] = [
    [
      'payment authorized more than once at the acquirer',
      sql<{ id: string }>`select payment_id as id from acquirer_sandbox_operations
        where op = 'authorize' group by payment_id having count(*) > 1`,
    ],
    [
      'transactionId with more than one approved authorization (double charge)',
      sql<{ id: string }>`select p.merchant_id || '/' || p.transaction_id as id
        from acquirer_sandbox_operations o join payments p on p.id = o.payment_id
        where o.op = 'authorize' and o.status = 'approved'
        group by p.merchant_id, p.transaction_id having count(*) > 1`,
    ],
    [
      'approved at the acquirer but failed, pending or missing here',
      sql<{ id: string }>`select o.payment_id as id from acquirer_sandbox_operations o
        left join payments p on p.id = o.payment_id
        where o.op = 'authorize' and o.status = 'approved'
          and (p.id is null or p.status in ('failed', 'pending', 'pending_3ds'))`,
    ],
    [
      // What the bank captured (the whole authorization at once, or the sum of its
      // captures) is what our row says it captured.
      'captured at the acquirer but not here',
      sql<{ id: string }>`select p.id from payments p
        join acquirer_sandbox_operations o on o.payment_id = p.id and o.status = 'approved'
          and o.op = 'authorize'
        where (case when o.capture then o.amount
                    else coalesce((select sum(c.amount) from acquirer_sandbox_operations c
                                   where c.payment_id = p.id and c.op = 'capture'), 0) end)
              <> p.captured_minor`,
    ],
    [
      // A void releases what was not captured: nothing captured → `voided`; a part
      // captured → `captured` (or `refunded`) with that part (docs/payments.md).
      'voided at the acquirer but not here',
      sql<{ id: string }>`select p.id from payments p join acquirer_sandbox_operations o
        on o.payment_id = p.id and o.op = 'void'
        where not ((p.captured_minor = 0 and p.status = 'voided')
                or (p.captured_minor > 0 and p.status in ('captured', 'refunded')))`,
    ],
    [
      'refund whose acquirer state differs from ours',
      sql<{ id: string }>`select r.id from refunds r
        left join acquirer_sandbox_operations o on o.op = 'refund' and o.refund_id = r.id
        where (r.status = 'completed' and o.status is distinct from 'completed')
           or (r.status = 'failed' and o.status is distinct from 'failed')`,
    ],
    [
      'refund at the acquirer that we have no record of',
      sql<{ id: string }>`select o.refund_id as id from acquirer_sandbox_operations o
        left join refunds r on r.id = o.refund_id where o.op = 'refund' and r.id is null`,
    ],
  ]
  const problems: string[] = []
  for (const [what, query] of queries) {
    const { rows } = await query.execute(db)
    for (const r of rows.slice(0, 10)) problems.push(`acquirer: ${what}: ${r.id}`)
  }
  return problems
}

/** The suite's end-of-test check: the books (kurus check-ledger) and the acquirer's. */
export async function assertInvariants(db: Db, context = ''): Promise<void> {
  const books = await auditBooks(db)
  const problems = [...books.problems, ...(await acquirerProblems(db))]
  assert.deepEqual(problems, [], `invariants broken${context ? ` (${context})` : ''}`)
  assert.ok(books.payments > 0, 'the invariant check saw no payments at all')
}

/** One signed POST's answer as it came over the wire (exactly-once suites). */
export interface RawAnswer {
  status: number
  text: string
  requestId: string | null
  replayed: boolean
}

/**
 * A signed POST that keeps the raw bytes of its answer, or null when the connection died with
 * the process (a fail point's SIGKILL): what the exactly-once suites compare byte for byte.
 */
export function rawPoster(baseUrl: string, m: Merchant) {
  let last = ''
  const client = new Kurus({
    publicKey: m.publicKey,
    secretKey: m.secretKey,
    baseUrl,
    fetch: async (input, init) => {
      const res = await fetch(input, { ...init, signal: AbortSignal.timeout(20_000) })
      last = await res.clone().text()
      return res
    },
  })
  return async (path: string, body: unknown, key: string): Promise<RawAnswer | null> => {
    try {
      const res = await client.request('POST', path, { body, idempotencyKey: key })
      return {
        status: res.status,
        text: last,
        requestId: res.requestId,
        replayed: res.headers.get('idempotent-replayed') === 'true',
      }
    } catch {
      return null
    }
  }
}

/**
 * Arms the running API with `spec` (re-armed in place: a start costs seconds, and each case
 * needs only the one after the kill), sends the call, lets the fail point kill it, restarts.
 */
export async function dieAtFailpoint<T>(
  service: Service,
  spec: string,
  call: () => Promise<T>,
): Promise<T> {
  if (!service.api) await service.startApi()
  const api = service.api
  assert.ok(api)
  await service.arm(api, service.apiLog, spec)
  const first = await call()
  await exited(api)
  assert.equal(api.signalCode, 'SIGKILL', `${spec}: the fail point did not fire`)
  service.api = undefined
  await service.startApi()
  return first
}
