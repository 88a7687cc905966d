// Goal (issue 35, decision 0035): PostgreSQL crash-restarted (`pg_ctl restart -m immediate`)
// while a request is held between two phases — after the claim, after the bank, inside the
// outcome transaction before its commit, after the commit, before and after the answer is
// flushed — of a card charge, a partial final capture and a partial refund; and while the
// worker's payout job is held before and after the rail. For each, the same process carries
// on (nobody restarts it), the retry with the same Idempotency-Key is answered within seconds
// of the release (no 60 s wall, no clock moved, no reconciler run): the first answer byte for
// byte when one left, otherwise the one execution (one payment per transactionId, one
// authorization, one capture, one refund at the bank); the payout is paid once within
// seconds (not left `processing` for minutes); the books and the bank's agree.
// Method: a private cluster (test/helpers/pg-cluster.ts; never the shared server), the
// service as real processes; the test re-arms a running process (`Service.arm`: SIGUSR2 and
// KURUS_FAILPOINTS_FILE) with `<point>:pause*1`, the fail point SIGSTOPs its process at that
// line, the test restarts PostgreSQL and sends SIGCONT. KURUS_REL_PG_PART=charge|capture|refund|payout runs
// one part (a comma list runs several).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import type { ChildProcess } from 'node:child_process'
import { sql } from 'kysely'
import { composeIBAN } from 'ibantools'
import type { Database } from '../../src/database.ts'
import { connectDatabase } from '../../src/platform/db/connect.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import { PrivateCluster } from '../helpers/pg-cluster.ts'
import {
  assertInvariants,
  newKey,
  newMerchant,
  operator,
  rawPoster,
  Service,
  type RawAnswer,
} from './_harness.ts'
import { freePort } from '../helpers/ports.ts'

/** A retry must be answered within this long of the release (PostgreSQL is back by then). */
const RESUME_WITHIN_MS = 10_000
/** A held payout job must be paid within this long of the release. */
const PAID_WITHIN_MS = 15_000
const parts = (process.env['KURUS_REL_PG_PART'] ?? '').split(',').filter(Boolean)
const runs = (part: string) => parts.length === 0 || parts.includes(part)

const occurrences = (file: string, text: string) =>
  readFileSync(file, 'utf8').split(text).length - 1

async function until(label: string, ms: number, done: () => boolean | Promise<boolean>) {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (await done()) return
    await delay(50)
  }
  assert.fail(`${label}: not within ${ms} ms`)
}

/** A final answer: not a 5xx, not pending (202), not "in progress" (409 SVC-GW-2002). */
function final(res: RawAnswer | null): res is RawAnswer {
  if (!res || res.status >= 500 || res.status === 202) return false
  return (JSON.parse(res.text || '{}') as { code?: string }).code !== 'SVC-GW-2002'
}

const describe = (res: RawAnswer | null) =>
  res ? `${res.status} ${(JSON.parse(res.text || '{}') as { code?: string }).code ?? ''}` : 'none'

test('PostgreSQL restarted with -m immediate at every phase of a charge, a capture, a refund and a payout job: exactly once, answered within seconds', async (t) => {
  const cluster = new PrivateCluster(await freePort())
  t.after(() => cluster.remove())
  await cluster.init()
  const service = await Service.create({ databaseUrl: cluster.url, workers: 1 })
  t.after(() => service.stop())
  await service.start()
  const api = service.api
  const worker = service.workers[0]
  assert.ok(api?.pid && worker?.pid)
  const db = await connectDatabase<Database>({ databaseUrl: cluster.url, poolSize: 2 })
  t.after(() => db.close())
  // The test's own connections die with each restart too: a query is retried on a fresh one.
  const query = async <R>(q: ReturnType<typeof sql<R>>) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await q.execute(db.db)).rows
      } catch (error) {
        if (attempt >= 5) throw error
        await delay(200)
      }
    }
  }
  const count = async (q: ReturnType<typeof sql<{ n: number }>>) => Number((await query(q))[0]?.n)

  const m = await newMerchant(service.url)
  const post = rawPoster(service.url, m)
  const cardToken = await tokenize(m.client, CARDS.frictionless)
  const retry = async (path: string, body: unknown, key: string) => {
    const started = Date.now()
    for (;;) {
      const res = await post(path, body, key)
      if (final(res)) return { res, ms: Date.now() - started }
      assert.ok(Date.now() - started < 60_000, `no final answer: ${JSON.stringify(res)}`)
      await delay(100)
    }
  }
  /** A captured (or, with `capture: false`, authorized) charge; splits go on the session. */
  const charged = async (
    amount: number,
    session: Record<string, unknown> = {},
    charge: Record<string, unknown> = {},
  ) => {
    const { transactionId } = await openSession(m.client, amount, session)
    const res = await post(
      '/v1/payments/card',
      { transactionId, amount, currency: 'TRY', cardToken, ...charge },
      newKey(),
    )
    assert.equal(res?.status, 201, res?.text)
    return (JSON.parse(res.text) as { paymentId: string }).paymentId
  }

  /**
   * Arms `point` to pause, starts `work`, waits until the process is held there, restarts
   * PostgreSQL the hard way, releases the process; the moment of release.
   */
  const restartWhileHeld = async <T>(
    child: ChildProcess,
    log: string,
    point: string,
    work: () => Promise<T>,
  ): Promise<{ first: Promise<T>; released: number }> => {
    const held = `fail point ${point}: SIGSTOP`
    const before = occurrences(log, held)
    await service.arm(child, log, `${point}:pause*1`)
    const first = work()
    await until(`held at ${point}`, 20_000, () => occurrences(log, held) > before)
    cluster.restart()
    assert.ok(child.pid)
    process.kill(child.pid, 'SIGCONT')
    return { first, released: Date.now() }
  }
  /** The retry: within seconds, final, and byte for byte the first answer if that was final. */
  const answeredOnce = async (
    label: string,
    path: string,
    body: unknown,
    key: string,
    first: RawAnswer | null,
    released: number,
  ) => {
    const { res } = await retry(path, body, key)
    const ms = Date.now() - released
    assert.ok(ms < RESUME_WITHIN_MS, `${label}: answered ${ms} ms after the release`)
    if (final(first)) {
      assert.equal(res.text, first.text, `${label}: the first answer, byte for byte`)
      assert.equal(res.requestId, first.requestId, label)
      assert.equal(res.status, first.status, label)
    }
    const again = await retry(path, body, key)
    assert.equal(again.res.replayed, true, label)
    assert.equal(again.res.text, res.text, label)
    return res
  }

  const ANSWER = ['answer.before_flush', 'answer.after_flush']
  const measured: string[] = []

  for (const point of runs('charge')
    ? [
        ...['after_intent', 'after_acquirer', 'before_commit', 'after_commit'].map(
          (p) => `charge.${p}`,
        ),
        ...ANSWER,
      ]
    : []) {
    const { transactionId } = await openSession(m.client, 7_000)
    const body = { transactionId, amount: 7_000, currency: 'TRY', cardToken }
    const key = newKey()
    const { first, released } = await restartWhileHeld(api, service.apiLog, point, () =>
      post('/v1/payments/card', body, key),
    )
    const label = `charge at ${point}`
    const answer = await first
    const res = await answeredOnce(label, '/v1/payments/card', body, key, answer, released)
    measured.push(`${label}: first ${describe(answer)}, final ${Date.now() - released} ms after`)
    assert.equal(res.status, 201, `${label}: ${res.text}`)
    const { paymentId } = JSON.parse(res.text) as { paymentId: string }
    assert.equal(
      await count(sql<{ n: number }>`select count(*)::int as n from payments
        where merchant_id = ${m.merchantId} and transaction_id = ${transactionId}`),
      1,
      `${label}: one transactionId, one payment`,
    )
    assert.equal(
      await count(sql<{ n: number }>`select count(*)::int as n from acquirer_sandbox_operations
        where payment_id = ${paymentId} and op = 'authorize'`),
      1,
      `${label}: one authorization at the bank`,
    )
  }

  for (const point of runs('capture')
    ? [
        ...['after_claim', 'after_acquirer', 'before_commit', 'after_commit'].map(
          (p) => `capture.${p}`,
        ),
        ...ANSWER,
      ]
    : []) {
    const paymentId = await charged(20_000, {}, { capture: false })
    const path = `/v1/payments/${paymentId}/capture`
    const body = { amount: 12_271, final: true }
    const key = newKey()
    const { first, released } = await restartWhileHeld(api, service.apiLog, point, () =>
      post(path, body, key),
    )
    const label = `capture at ${point}`
    const answer = await first
    const res = await answeredOnce(label, path, body, key, answer, released)
    measured.push(`${label}: first ${describe(answer)}, final ${Date.now() - released} ms after`)
    // Never "refused but applied": the capture the bank made is the answer.
    assert.equal(res.status, 200, `${label}: ${res.text}`)
    const answered = JSON.parse(res.text) as { status: string; capturedAmount: number }
    assert.equal(answered.status, 'captured', label)
    assert.equal(answered.capturedAmount, 12_271, label)
    assert.equal(
      await count(sql<{ n: number }>`select count(*)::int as n from acquirer_sandbox_operations
        where payment_id = ${paymentId} and op = 'capture'`),
      1,
      `${label}: the bank captured once`,
    )
  }

  for (const point of runs('refund')
    ? [
        ...['after_reserve', 'after_acquirer', 'before_commit', 'after_commit'].map(
          (p) => `refund.${p}`,
        ),
        ...ANSWER,
      ]
    : []) {
    const paymentId = await charged(10_000)
    const path = `/v1/payments/${paymentId}/refund`
    const body = { amount: 4_321 }
    const key = newKey()
    const { first, released } = await restartWhileHeld(api, service.apiLog, point, () =>
      post(path, body, key),
    )
    const label = `refund at ${point}`
    const answer = await first
    const res = await answeredOnce(label, path, body, key, answer, released)
    measured.push(`${label}: first ${describe(answer)}, final ${Date.now() - released} ms after`)
    // Never "refused but applied" (409 not refundable): the refund the bank made.
    assert.equal(res.status, 200, `${label}: ${res.text}`)
    const answered = JSON.parse(res.text) as { lastRefund: { status: string; amount: number } }
    assert.equal(answered.lastRefund.status, 'completed', label)
    assert.equal(answered.lastRefund.amount, 4_321, label)
    assert.equal(
      await count(sql<{ n: number }>`select count(*)::int as n from refunds
        where payment_id = ${paymentId}`),
      1,
      `${label}: one refund`,
    )
    assert.equal(
      await count(sql<{ n: number }>`select count(*)::int as n from acquirer_sandbox_operations
        where payment_id = ${paymentId} and op = 'refund'`),
      1,
      `${label}: one refund at the bank`,
    )
  }

  if (runs('payout')) {
    // A submerchant with money to pay out: a split capture, settled.
    const iban = composeIBAN({ countryCode: 'TR', bban: '0006101234567890123456' })
    assert.ok(iban)
    const sub = await operator<{ submerchantId: string }>(
      service.url,
      'POST',
      `/operator/v1/merchants/${m.merchantId}/submerchants`,
      { name: 'Seller', iban, holderName: 'Seller Ltd' },
    )
    assert.equal(sub.status, 201, JSON.stringify(sub.body))
    const { submerchantId } = sub.body
    await charged(100_000, { splits: [{ submerchantId, amountMinor: 50_000 }] })
    const settled = await post('/v1/sandbox/reconcile', {}, newKey())
    assert.equal(settled?.status, 200, settled?.text)
    // The worker's job, held before and after the rail while the database restarts, rides
    // the outage out: the payout is paid within seconds, once (issue 35's liveness item).
    for (const point of ['payout.before_rail', 'payout.after_rail']) {
      const key = newKey()
      let payoutId = ''
      const { released } = await restartWhileHeld(
        worker,
        service.workerLogs[0] ?? '',
        point,
        async () => {
          const created = await post(
            '/v1/payouts',
            { submerchantId, rail: 'fast', amountMinor: 5_000, currency: 'TRY' },
            key,
          )
          assert.equal(created?.status, 201, created?.text)
          payoutId = (JSON.parse(created.text) as { payoutId: string }).payoutId
        },
      )
      const label = `payout job at ${point}`
      assert.ok(payoutId, label)
      await until(`${label}: paid`, PAID_WITHIN_MS, async () => {
        const rows = await query(sql<{ status: string }>`select status from payouts
          where id = ${payoutId}`)
        return rows[0]?.status === 'paid'
      })
      measured.push(`${label}: paid ${Date.now() - released} ms after the release`)
      assert.equal(
        await count(sql<{ n: number }>`select count(*)::int as n from events
          where resource_id = ${payoutId} and type = 'payout.paid'`),
        1,
        `${label}: one payout.paid`,
      )
    }
  }

  // The same processes throughout: a restart of the database is no restart of the service.
  assert.deepEqual(service.crashes(), [], 'a service process crashed')
  assert.equal(service.api?.pid, api.pid)
  assert.equal(service.api?.exitCode, null)
  assert.equal(service.workers[0]?.pid, worker.pid)
  assert.equal(service.workers[0]?.exitCode, null)
  t.diagnostic(measured.join('\n'))
  await assertInvariants(db.db, service.events.join('\n'))
})
