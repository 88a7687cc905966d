// `npm run test:ha` (root only; docs/operations.md "High availability"): the failover scenario
// on a network of namespaces (test/ha/env.ts). Under retrying, idempotent charge and refund
// load from the client host, the primary's host is lost (its postmaster kill -9 and its link
// cut, so Patroni there can neither restart it nor keep the leader key); Patroni promotes the
// synchronous standby; then one API host is killed (kill -9 of all its processes). Then the
// client's record is held against the database: acknowledged payments lost = 0, duplicates =
// 0, every acknowledged state in place, the books balanced (kurus check-ledger), the worker
// still dispatching; the time from the loss to the first successful write is measured.
//
// Usage: npm run test:ha [-- --runs N] [-- --results test/ha/RESULTS.md] [-- --keep]
//   --runs N      the scenario N times in a row, each on a fresh environment (default 1)
//   --results F   write the runs' numbers as Markdown to F
//   --keep        keep the temp dir with every host's log (always kept on failure)
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Attempt, Report } from './client.ts'
import {
  HaEnv,
  LB_API_URL,
  LB_PG_URL,
  OPERATOR_TOKEN,
  ensurePackages,
  teardownNetwork,
  type DbHost,
} from './env.ts'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** The target of the issue: writes succeed again less than this long after the loss. */
const FIRST_WRITE_TARGET_MS = 30_000

interface RunResult {
  startedAt: string
  bringUpS: number
  primaryLost: DbHost
  promotionMs: number
  firstWriteMs: number
  /** The slowest operation caught by the failover: from the loss to its acknowledgement. */
  caughtAckMs: number
  apiKillGapMs: number
  report: Omit<Report, 'attempts'>
  statuses: Record<string, number>
  unexpected: string[]
  problems: string[]
}

function args(): { runs: number; results: string | undefined; keep: boolean } {
  const argv = process.argv.slice(2)
  const at = (flag: string) => {
    const i = argv.indexOf(flag)
    return i >= 0 ? argv[i + 1] : undefined
  }
  return {
    runs: Number(at('--runs') ?? '1'),
    results: at('--results'),
    keep: argv.includes('--keep'),
  }
}

/** The client process in its namespace, as a stream of its JSON lines. */
function startClient(env: HaEnv) {
  const child = spawn('ip', ['netns', 'exec', 'kha-cli', process.execPath, 'test/ha/client.ts'], {
    cwd: REPO,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      KURUS_HA_API: LB_API_URL,
      KURUS_HA_DATABASE_URL: LB_PG_URL,
      KURUS_HA_OPERATOR_TOKEN: OPERATOR_TOKEN,
    },
  })
  env.children.set('client', child)
  const state = { ready: false, acked: 0, report: undefined as Report | undefined, stderr: '' }
  child.stderr.on(
    'data',
    (d: Buffer) => (state.stderr = (state.stderr + d.toString()).slice(-4000)),
  )
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as { t: string; acked?: number }
    if (m.t === 'ready') state.ready = true
    if (m.t === 'progress') state.acked = m.acked ?? 0
    if (m.t === 'report') state.report = m as unknown as Report
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, state, exited }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function statusName(a: Attempt): string {
  if (a.status === 0) return 'no answer'
  return String(a.status)
}

async function scenario(env: HaEnv): Promise<RunResult> {
  const startedAt = new Date().toISOString()
  const t0 = Date.now()
  env.network()
  await env.etcd()
  await env.patroni()
  env.haproxy()
  await env.until(
    'createdb through HAProxy',
    30_000,
    () => {
      try {
        env.createDatabase()
        return true
      } catch {
        return false
      }
    },
    ['haproxy'],
  )
  await env.service()
  const bringUpS = Math.round((Date.now() - t0) / 1000)
  process.stdout.write(`environment up in ${bringUpS} s (${env.dir})\n`)

  const client = startClient(env)
  const clientAlive = () => client.child.exitCode === null
  await env.until('client ready', 60_000, () => client.state.ready || !clientAlive())
  assert.ok(client.state.ready, `the client failed to start:\n${client.state.stderr}`)
  await env.until('load running', 60_000, () => client.state.acked >= 40 || !clientAlive())

  // 1. The primary's host is lost.
  const primary = env.primary()
  assert.ok(primary, 'no primary before the fault')
  const standby: DbHost = primary === 'db1' ? 'db2' : 'db1'
  const lossAt = Date.now()
  env.killPostmaster(primary)
  env.cutLink(primary)
  await env.until('Patroni promotes the standby', 90_000, () => env.primary() === standby, [
    standby,
  ])
  const promotionMs = Date.now() - lossAt
  env.note(`${standby} promoted after ${promotionMs} ms`)
  const ackedAtPromotion = client.state.acked
  await env.until(
    'writes succeed after the failover',
    90_000,
    () => client.state.acked >= ackedAtPromotion + 20 || !clientAlive(),
  )

  // 2. One API host is lost as well; HAProxy sends everything to the other.
  const apiKilledAt = Date.now()
  env.killHost('api1')
  const ackedAtKill = client.state.acked
  await env.until(
    'writes succeed after the API host is gone',
    90_000,
    () => client.state.acked >= ackedAtKill + 40 || !clientAlive(),
  )
  client.child.stdin.end('stop\n')
  await client.exited
  const report = client.state.report
  assert.ok(report, `the client ended without a report:\n${client.state.stderr}`)
  writeFileSync(join(env.dir, 'attempts.json'), JSON.stringify(report.attempts))

  // The numbers.
  const writesAfter = (t: number) =>
    report.attempts.filter((a) => a.start >= t && a.status >= 200 && a.status < 300)
  const firstWrite = Math.min(...writesAfter(lossAt).map((a) => a.end))
  const firstWriteMs = firstWrite - lossAt
  // Operations already under way when the first write after the loss succeeded: how long
  // after the loss each got its answer (its last attempt).
  const lastAttempt = new Map<number, Attempt>()
  const firstAttempt = new Map<number, Attempt>()
  for (const a of report.attempts) {
    lastAttempt.set(a.op, a)
    if (!firstAttempt.has(a.op)) firstAttempt.set(a.op, a)
  }
  let caughtAckMs = 0
  for (const [op, first] of firstAttempt) {
    const last = lastAttempt.get(op)
    if (last && first.start < firstWrite && last.end > lossAt) {
      caughtAckMs = Math.max(caughtAckMs, last.end - lossAt)
    }
  }
  const okEnds = report.attempts
    .filter((a) => a.status >= 200 && a.status < 300)
    .map((a) => a.end)
    .sort((a, b) => a - b)
  let apiKillGapMs = 0
  for (let i = 1; i < okEnds.length; i++) {
    const [prev, cur] = [okEnds[i - 1] ?? 0, okEnds[i] ?? 0]
    if (cur >= apiKilledAt && prev <= apiKilledAt + 60_000) {
      apiKillGapMs = Math.max(apiKillGapMs, cur - Math.max(prev, apiKilledAt))
      if (prev >= apiKilledAt) break
    }
  }
  const statuses: Record<string, number> = {}
  for (const a of report.attempts) statuses[statusName(a)] = (statuses[statusName(a)] ?? 0) + 1
  // What a client sees besides success, 503 (retry later) and 202/409-in-progress (retry):
  // anything else, attempt by attempt, with its time relative to the loss.
  const unexpected = report.attempts
    .filter(
      (a) => !(a.status >= 200 && a.status < 300) && a.status !== 503 && a.code !== 'SVC-GW-2002',
    )
    .map(
      (a) =>
        `${a.status === 0 ? 'no answer' : `HTTP ${a.status}`}${a.code ? ` ${a.code}` : ''}` +
        `${a.error ? ` (${a.error.slice(0, 80)})` : ''} at ${((a.start - lossAt) / 1000).toFixed(1)} s`,
    )

  // The surviving processes: still the same ones, none crashed.
  const problems: string[] = []
  for (const name of ['api2', 'wrk']) {
    const c = env.children.get(name)
    if (!c || c.exitCode !== null || c.signalCode !== null) problems.push(`${name} is not running`)
    if (
      /Unhandled 'error' event|unhandledRejection|uncaughtException|^Node\.js v/m.test(
        env.log(name),
      )
    ) {
      problems.push(`${name} crashed:\n${env.tail([name], 30)}`)
    }
  }
  const listenLog = env.log('api2')
  const lostAt = listenLog.lastIndexOf('LISTEN connection lost')
  if (lostAt >= 0 && listenLog.indexOf('LISTEN connection back', lostAt) < 0) {
    problems.push('api2: the LISTEN connection did not come back')
  }

  const { attempts: _attempts, ...summary } = report
  return {
    startedAt,
    bringUpS,
    primaryLost: primary,
    promotionMs,
    firstWriteMs,
    caughtAckMs,
    apiKillGapMs,
    report: summary,
    statuses,
    unexpected,
    problems,
  }
}

function verdict(r: RunResult): string[] {
  const failures: string[] = []
  const rep = r.report
  if (rep.lost.length > 0) failures.push(`lost: ${rep.lost.join('; ')}`)
  if (rep.duplicates.length > 0) failures.push(`duplicates: ${rep.duplicates.join('; ')}`)
  if (rep.wrongState.length > 0) failures.push(`wrong state: ${rep.wrongState.join('; ')}`)
  if (rep.unacknowledged.length > 0) {
    failures.push(`never acknowledged: ${rep.unacknowledged.join('; ')}`)
  }
  if (!rep.ledger.ok) failures.push(`check-ledger: ${rep.ledger.problems.join('; ')}`)
  if (rep.acquirer.length > 0) failures.push(`acquirer: ${rep.acquirer.join('; ')}`)
  if (rep.undispatchedEvents > 0) failures.push(`${rep.undispatchedEvents} events never dispatched`)
  if (!(r.firstWriteMs < FIRST_WRITE_TARGET_MS)) {
    failures.push(
      `first write ${r.firstWriteMs} ms after the loss (target < ${FIRST_WRITE_TARGET_MS})`,
    )
  }
  if (r.unexpected.some((u) => /HTTP 4\d\d/.test(u))) {
    failures.push('a 4xx answer to a valid request (see unexpected)')
  }
  failures.push(...r.problems)
  return failures
}

function markdown(results: { result?: RunResult; error?: string }[]): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  const lines = [
    '# HA scenario results',
    '',
    'Written by `npm run test:ha -- --runs N --results test/ha/RESULTS.md` (test/ha/run.ts; what',
    'it does: docs/operations.md "High availability"). Each run: a fresh environment of network',
    'namespaces (etcd, PostgreSQL 15 + Patroni ×2 with a synchronous standby, HAProxy, two API',
    'hosts, a worker, the client); open-loop load (a new order every 250 ms, at most 32 under',
    'way: session, charge, every other one a partial refund), each request retried with its',
    'Idempotency-Key until answered; the primary host lost (postmaster kill -9 + link cut);',
    'Patroni promotes the standby; then one API host killed (kill -9).',
    '',
    '| run | started (UTC) | acknowledged charges / refunds | lost | duplicates | wrong state | unacknowledged | promotion | first write after loss | slowest answer to a request caught by the loss | longest gap after API kill | check-ledger | attempts by status | verdict |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  results.forEach(({ result: r, error }, i) => {
    if (!r) {
      lines.push(`| ${i + 1} | | | | | | | | | | | | | FAILED: ${(error ?? '').split('\n')[0]} |`)
      return
    }
    const f = verdict(r)
    lines.push(
      `| ${i + 1} | ${r.startedAt.slice(0, 19)} | ${r.report.acked.charge} / ${r.report.acked.refund} | ` +
        `${r.report.lost.length} | ${r.report.duplicates.length} | ${r.report.wrongState.length} | ` +
        `${r.report.unacknowledged.length} | ${s(r.promotionMs)} | ${s(r.firstWriteMs)} | ${s(r.caughtAckMs)} | ` +
        `${s(r.apiKillGapMs)} | ${r.report.ledger.ok ? `ok (${r.report.ledger.payments} payments)` : 'FAILED'} | ` +
        `${Object.entries(r.statuses)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')} | ${f.length === 0 ? 'pass' : `FAIL: ${f.join('; ')}`} |`,
    )
  })
  lines.push('', '## Client-visible answers other than 2xx, 503 and "in progress", per run', '')
  results.forEach(({ result: r }, i) => {
    if (!r) return
    const counts = new Map<string, number>()
    for (const u of r.unexpected) {
      const k = u.replace(/ at -?[\d.]+ s$/, '')
      counts.set(k, (counts.get(k) ?? 0) + 1)
    }
    lines.push(
      `- run ${i + 1}: ${
        counts.size === 0 ? 'none' : [...counts].map(([k, n]) => `${n} × ${k}`).join('; ')
      }`,
    )
  })
  return lines.join('\n') + '\n'
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) {
    process.stderr.write('test:ha needs root (network namespaces, apt-get, runuser)\n')
    return 1
  }
  const { runs, results: resultsFile, keep } = args()
  // One run at a time: a second one would tear down the first one's namespaces.
  const lock = '/run/lock/kurus-test-ha.pid'
  if (existsSync(lock)) {
    const holder = Number(readFileSync(lock, 'utf8'))
    if (holder !== process.pid && alive(holder)) {
      process.stderr.write(`test:ha is already running (pid ${holder})\n`)
      return 1
    }
  }
  mkdirSync(dirname(lock), { recursive: true })
  writeFileSync(lock, String(process.pid))
  process.once('exit', () => rmSync(lock, { force: true }))
  ensurePackages()
  const results: { result?: RunResult; error?: string }[] = []
  let failed = false
  for (let i = 0; i < runs; i++) {
    const env = new HaEnv({ repo: REPO })
    const onSignal = () => {
      teardownNetwork()
      process.exit(130)
    }
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    let ok = false
    try {
      process.stdout.write(`=== HA scenario, run ${i + 1} of ${runs} ===\n`)
      const result = await scenario(env)
      const failures = verdict(result)
      results.push({ result })
      process.stdout.write(
        `primary lost: ${result.primaryLost}; promoted after ${result.promotionMs} ms; first write ` +
          `${result.firstWriteMs} ms after the loss; the slowest request caught by the loss ` +
          `answered ${result.caughtAckMs} ms after it; longest gap after the API kill ` +
          `${result.apiKillGapMs} ms\nacknowledged: ${JSON.stringify(result.report.acked)}; lost ` +
          `${result.report.lost.length}; duplicates ${result.report.duplicates.length}; wrong state ` +
          `${result.report.wrongState.length}; unacknowledged ${result.report.unacknowledged.length}; ` +
          `check-ledger ${result.report.ledger.ok ? 'ok' : 'FAILED'}\nattempts: ` +
          `${JSON.stringify(result.statuses)}\n`,
      )
      if (result.unexpected.length > 0) {
        process.stdout.write(`other answers:\n  ${result.unexpected.slice(0, 30).join('\n  ')}\n`)
      }
      writeFileSync(join(env.dir, 'result.json'), JSON.stringify(result, null, 2))
      ok = failures.length === 0
      process.stdout.write(ok ? 'PASS\n' : `FAIL\n  ${failures.join('\n  ')}\n`)
    } catch (error) {
      results.push({ error: String(error) })
      process.stdout.write(
        `FAIL: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      )
    } finally {
      process.stdout.write(`events:\n  ${env.events.join('\n  ')}\n`)
      env.teardown(keep || !ok)
      if (keep || !ok) process.stdout.write(`logs kept in ${env.dir}\n`)
      process.removeListener('SIGINT', onSignal)
      process.removeListener('SIGTERM', onSignal)
    }
    if (!ok) failed = true
    if (resultsFile) writeFileSync(resultsFile, markdown(results))
    if (!ok) break
    await delay(1_000)
  }
  return failed ? 1 : 0
}

process.exitCode = await main()
