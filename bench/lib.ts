// Shared pieces of the benchmark scripts: free ports, the real server as child processes,
// signing, autocannon's typed surface, and the machine description recorded with results.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { createHash, createHmac, randomUUID } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { cpus, totalmem } from 'node:os'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { timestampFor } from '../sdk/index.ts'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface Histogram {
  average: number
  mean?: number
  p50: number
  p99: number
}
export interface AutocannonResult {
  requests: Histogram & { total: number }
  latency: Histogram
  non2xx: number
  errors: number
  timeouts: number
  duration: number
  statusCodeStats?: Record<string, { count: number | string }>
}
export interface AutocannonRequest {
  method?: string
  path?: string
  body?: string
  headers?: Record<string, string>
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest
}
export type Autocannon = (options: {
  url: string
  connections: number
  duration?: number
  amount?: number
  overallRate?: number
  timeout?: number
  requests?: AutocannonRequest[]
}) => Promise<AutocannonResult>

// autocannon ships no type declarations; the shape above is what these scripts use.
const require = createRequire(import.meta.url)
export const autocannon = require('autocannon') as Autocannon

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port)
        else reject(new Error('no port'))
      })
    })
  })
}

let imageArgs: string[] | undefined

/**
 * Node arguments that start a server process as the image does (Dockerfile's NODE_OPTIONS):
 * the sources loaded as the JavaScript bin/strip-types.js writes, which it runs first, so the
 * process never loads Node's type stripper (its memory is part of what the bench reports).
 */
export function imageNodeArgs(): string[] {
  if (!imageArgs) {
    execFileSync(process.execPath, ['bin/strip-types.js'], { cwd: ROOT, stdio: 'ignore' })
    imageArgs = ['--import', './bin/stripped-sources.js']
  }
  return imageArgs
}

export function startProcess(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  return child
}

export async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    try {
      const res = await fetch(url)
      if (res.ok) return
    } catch {
      // not up yet
    }
    await delay(200)
  }
  throw new Error(`${url} did not become ready`)
}

export function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref()
  })
}

export function signHeaders(
  keys: { publicKey: string; secretKey: string },
  method: string,
  path: string,
  body: string,
): Record<string, string> {
  // Unique per request (sub-millisecond digits): a state-changing signature is accepted once.
  const timestamp = timestampFor(new Date())
  const bodyHash = createHash('sha256').update(body).digest('hex')
  const canonical = `${timestamp}\n${method}\n${path}\n${bodyHash}`
  return {
    'x-api-key': keys.publicKey,
    'x-timestamp': timestamp,
    'x-signature': createHmac('sha256', keys.secretKey).update(canonical).digest('hex'),
  }
}

export function machine(): Record<string, string> {
  const run = (cmd: string, args: string[]) => {
    try {
      return execFileSync(cmd, args, { encoding: 'utf8' }).trim()
    } catch {
      return 'unknown'
    }
  }
  return {
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}`,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: process.version,
    postgres: run('psql', ['--version']),
    date: new Date().toISOString(),
  }
}

export function statusCounts(result: AutocannonResult): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [code, v] of Object.entries(result.statusCodeStats ?? {})) out[code] = Number(v.count)
  return out
}

export const OPERATOR_TOKEN = 'bench-operator-token-0123456789'
export const CARD = '4155650100416111'

export interface Keys {
  merchantId: string
  publicKey: string
  secretKey: string
  cardToken: string
}

export async function signed<T>(
  base: string,
  keys: Keys,
  method: string,
  path: string,
  body?: unknown,
) {
  const text = body === undefined ? '' : JSON.stringify(body)
  const res = await fetch(base + path, {
    method,
    headers: {
      ...signHeaders(keys, method, path, text),
      ...(text ? { 'content-type': 'application/json' } : {}),
    },
    ...(text ? { body: text } : {}),
  })
  const json = (await res.json()) as T
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

export async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T)
    }),
  )
}

/** The i-th card of the sandbox's standard behaviour (BIN 415565, Luhn-valid); 0 is CARD. */
export function benchCard(i: number): string {
  if (i === 0) return CARD
  const body = `415565${String(i).padStart(9, '0')}`
  // The Luhn check digit: double every second digit from the right of the body.
  let sum = 0
  for (let k = 0; k < body.length; k++) {
    let d = Number(body[body.length - 1 - k])
    if (k % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2
    sum += d
  }
  return `${body}${(10 - (sum % 10)) % 10}`
}

/** Card tokens of `count` different cards for one merchant (its buyers' cards). */
export async function tokenizeCards(base: string, keys: Keys, count: number): Promise<string[]> {
  const tokens: string[] = []
  await pool(
    Array.from({ length: count }, (_, i) => i),
    8,
    async (i) => {
      const token = await signed<{ cardToken: string }>(base, keys, 'POST', '/v1/cards/tokens', {
        cardNumber: benchCard(i),
        expMonth: 12,
        expYear: 2030,
        cvc: '123',
        holderName: 'Bench Buyer',
      })
      tokens.push(token.cardToken)
    },
  )
  return tokens
}

export async function provision(base: string, count: number): Promise<Keys[]> {
  const out: Keys[] = []
  await pool(
    Array.from({ length: count }, (_, i) => i),
    8,
    async (i) => {
      const res = await fetch(`${base}/operator/v1/merchants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Bench ${i}`, kycStatus: 'approved' }),
      })
      const m = (await res.json()) as Omit<Keys, 'cardToken'>
      const token = await signed<{ cardToken: string }>(
        base,
        { ...m, cardToken: '' },
        'POST',
        '/v1/cards/tokens',
        {
          cardNumber: CARD,
          expMonth: 12,
          expYear: 2030,
          cvc: '123',
          holderName: 'Bench Buyer',
        },
      )
      out.push({ ...m, cardToken: token.cardToken })
    },
  )
  return out
}

export interface Ticket {
  keys: Keys
  transactionId: string
  /** The card this ticket pays with; the merchant's own (keys.cardToken) when unset. */
  cardToken?: string
}

export async function openSessions(
  base: string,
  merchants: Keys[],
  count: number,
): Promise<Ticket[]> {
  const tickets: Ticket[] = []
  await pool(
    Array.from({ length: count }, (_, i) => i),
    32,
    async (i) => {
      const keys = merchants[i % merchants.length] as Keys
      const transactionId = `bench-${randomUUID()}`
      await signed(base, keys, 'POST', '/v1/payments/sessions', {
        transactionId,
        amount: 10_000,
        currency: 'TRY',
        returnUrl: 'https://shop.example/return',
      })
      tickets.push({ keys, transactionId })
    },
  )
  return tickets
}

/** autocannon's request for a card charge: each call pays the next ticket's session, a fresh key. */
export function chargeRequest(tickets: Ticket[]) {
  let next = 0
  return {
    method: 'POST',
    path: '/v1/payments/card',
    setupRequest: (req: object) => {
      const t = tickets[next++ % tickets.length] as Ticket
      const body = JSON.stringify({
        transactionId: t.transactionId,
        amount: 10_000,
        currency: 'TRY',
        cardToken: t.cardToken ?? t.keys.cardToken,
      })
      return {
        ...req,
        body,
        headers: {
          ...signHeaders(t.keys, 'POST', '/v1/payments/card', body),
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
      }
    },
  }
}

const CLOCK_TICKS_PER_S = 100

/** A process's CPU time (user + system) so far, in ms, from /proc. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S) * 1000
}

/** CPU time (ms) used so far by each PostgreSQL server process on this machine, by pid. */
export function postgresCpu(): Map<number, number> {
  const byPid = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue // exited since the listing
    }
    if (stat.includes(' (postgres) ')) byPid.set(Number(entry), cpuMs(Number(entry)))
  }
  return byPid
}

/**
 * The CPU (ms) PostgreSQL's processes used between two `postgresCpu()` readings: the
 * database's side of what ran meanwhile (backends, WAL writer, checkpointer, autovacuum).
 * Only meaningful with the server on this machine and nothing else using it. A process that
 * started meanwhile counts whole; one that exited meanwhile is lost (pooled backends stay).
 */
export function postgresCpuSince(before: Map<number, number>): number {
  let used = 0
  for (const [pid, ms] of postgresCpu()) used += ms - (before.get(pid) ?? 0)
  return used
}

export interface ScratchDatabase {
  /** A connection to the server's own database, open until close(). */
  admin: pg.Client
  /** The scratch database's URL. */
  url: string
  /** Drops the database (unless `keep`) and closes `admin`. */
  close(options?: { keep?: boolean }): Promise<void>
}

/** A fresh database `<prefix>_<pid>` on the server at `baseUrl`, for one bench run. */
export async function scratchDatabase(baseUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${process.pid}`
  const admin = new pg.Client({ connectionString: baseUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return {
    admin,
    url: url.toString(),
    close: async ({ keep = false } = {}) => {
      if (!keep) await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

/**
 * One captured payment for each of the first ten merchants, as the signed reads' targets
 * (paymentReadRequest).
 */
export async function paymentsToRead(
  base: string,
  merchants: Keys[],
): Promise<{ keys: Keys; id: string }[]> {
  const ids = await Promise.all(
    merchants.slice(0, 10).map(async (m) => {
      const [t] = await openSessions(base, [m], 1)
      const p = await signed<{ paymentId: string }>(base, m, 'POST', '/v1/payments/card', {
        transactionId: t?.transactionId,
        amount: 10_000,
        currency: 'TRY',
        cardToken: m.cardToken,
      })
      return { keys: m, id: p.paymentId }
    }),
  )
  return ids.filter((x) => x.id)
}

/** The bench's SQL baseline: tables for a charge-like transaction (see baselineTransaction). */
export async function createBaselineTables(client: pg.Client): Promise<void> {
  await client.query(`
    create table bench_payments (id text primary key, merchant_id text, amount bigint, status text,
      created_at timestamptz default now());
    create table bench_legs (id bigserial primary key, payment_id text, account text, direction text,
      amount bigint);
    create table bench_outbox (id bigserial primary key, payment_id text, data jsonb);
    create table bench_idem (key uuid primary key, response text)`)
}

/**
 * A charge's writes done by hand in one transaction — a payment row, three ledger legs, an
 * outbox event and an idempotency row, six round trips and one commit — the in-run yardstick
 * issue 43's charge targets are ratios to.
 */
export async function baselineTransaction(c: pg.Client): Promise<void> {
  const id = randomUUID()
  await c.query('begin')
  await c.query(
    'insert into bench_payments (id, merchant_id, amount, status) values ($1,$2,$3,$4)',
    [id, 'mrc_bench', 10_000, 'captured'],
  )
  await c.query(
    `insert into bench_legs (payment_id, account, direction, amount) values
     ($1,'buyer_pending','DEBIT',10000),($1,'merchant_reserve','CREDIT',9726),($1,'platform_commission','CREDIT',274)`,
    [id],
  )
  await c.query('insert into bench_outbox (payment_id, data) values ($1, $2)', [id, { id }])
  await c.query('insert into bench_idem (key, response) values ($1, $2)', [randomUUID(), '{}'])
  await c.query('commit')
}

/** autocannon's request for a signed read of a payment: each call reads the next one. */
export function paymentReadRequest(ids: { keys: Keys; id: string }[]) {
  let n = 0
  return {
    method: 'GET' as const,
    setupRequest: (req: object) => {
      const r = ids[n++ % ids.length] as { keys: Keys; id: string }
      const path = `/v1/payments/${r.id}`
      return { ...req, path, headers: signHeaders(r.keys, 'GET', path, '') }
    },
  }
}
