// The client host of the HA scenario (test/ha/run.ts starts it inside the kha-cli namespace):
// retrying, idempotent charge and refund load through HAProxy, then the count of what the
// database holds against what the client was told.
//
// Protocol with run.ts: this process writes one JSON object a line on stdout —
// {"t":"ready"}, {"t":"progress",...} every 500 ms, and at the end {"t":"report",...} — and
// reads "stop" on stdin (finish every operation in flight, retrying until it is acknowledged,
// then check).
import { spawnSync } from 'node:child_process'
import { createInterface } from 'node:readline'
import { setTimeout as delay } from 'node:timers/promises'
import { sql } from 'kysely'
import type { Database } from '../../src/database.ts'
import { connectDatabase } from '../../src/platform/db/connect.ts'
import type { Kurus } from '../../sdk/index.ts'
import { acquirerProblems, CARDS, clientFor, newKey } from '../reliability/_harness.ts'

const API = process.env['KURUS_HA_API'] ?? ''
const DATABASE_URL = process.env['KURUS_HA_DATABASE_URL'] ?? ''
const OPERATOR_TOKEN = process.env['KURUS_HA_OPERATOR_TOKEN'] ?? ''
/**
 * Open-loop load: a new order (session → charge → maybe a refund) every ORDER_EVERY_MS, at
 * most MAX_ORDERS under way. New orders do not wait for old ones: a request caught by the
 * loss keeps retrying (409 "in progress" until its idempotency claim is stale) while the
 * others show when writes work again, as a real client population would.
 */
const ORDER_EVERY_MS = Number(process.env['KURUS_HA_ORDER_EVERY_MS'] ?? '250')
const MAX_ORDERS = Number(process.env['KURUS_HA_MAX_ORDERS'] ?? '32')
/**
 * An operation not acknowledged after this long counts as unacknowledged (it may be lost). One
 * caught by the loss needs its idempotency claim to go stale (60 s) and, for a charge left
 * pending, the reconciler: about two minutes.
 */
const OP_DEADLINE_MS = 300_000
const ATTEMPT_TIMEOUT_MS = 25_000

type Json = Record<string, unknown>

/** One HTTP attempt as the client saw it. */
export interface Attempt {
  op: number
  start: number
  end: number
  /** 0: no HTTP answer (connection refused or reset, timeout). */
  status: number
  code: string | null
  error: string | null
}

export interface Op {
  id: number
  kind: 'session' | 'charge' | 'refund'
  key: string
  transactionId: string
  amount: number
  paymentId: string | null
  acked: boolean
  status: number
  body: Json | null
}

export interface Report {
  t: 'report'
  ops: number
  acked: Record<Op['kind'], number>
  unacknowledged: string[]
  lost: string[]
  duplicates: string[]
  wrongState: string[]
  ledger: { ok: boolean; payments: number; refunds: number; problems: string[] }
  acquirer: string[]
  undispatchedEvents: number
  attempts: Attempt[]
}

const ops: Op[] = []
const attempts: Attempt[] = []
let stopping = false

function emit(message: Json): void {
  process.stdout.write(JSON.stringify(message) + '\n')
}

function retryable(status: number, body: Json | null, untilFinal: boolean): boolean {
  return (
    status === 0 ||
    status >= 500 ||
    status === 429 ||
    body?.['code'] === 'SVC-GW-2002' ||
    (untilFinal && status === 202)
  )
}

/** Sends with the operation's Idempotency-Key until the answer is final (or the deadline). */
async function perform(
  client: Kurus,
  op: Op,
  method: string,
  path: string,
  body: Json,
  untilFinal: boolean,
): Promise<void> {
  const until = Date.now() + OP_DEADLINE_MS
  for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
    const a: Attempt = {
      op: op.id,
      start: Date.now(),
      end: 0,
      status: 0,
      code: null,
      error: null,
    }
    attempts.push(a)
    let resBody: Json | null = null
    try {
      const res = await client.request<Json>(method, path, { body, idempotencyKey: op.key })
      a.status = res.status
      resBody = res.body
      a.code = typeof res.body?.['code'] === 'string' ? res.body['code'] : null
    } catch (error) {
      a.error = String(error).slice(0, 200)
    }
    a.end = Date.now()
    if (!retryable(a.status, resBody, untilFinal)) {
      op.acked = a.status >= 200 && a.status < 300
      op.status = a.status
      op.body = resBody
      return
    }
    if (Date.now() + wait > until) return
    await delay(wait)
  }
}

async function order(client: Kurus, token: string, n: number): Promise<void> {
  const transactionId = `ha-${n}-${newKey()}`
  const amount = 10_000 + ((n * 104729) % 90_000)
  const s: Op = {
    id: ops.length,
    kind: 'session',
    key: newKey(),
    transactionId,
    amount,
    paymentId: null,
    acked: false,
    status: 0,
    body: null,
  }
  ops.push(s)
  await perform(
    client,
    s,
    'POST',
    '/v1/payments/sessions',
    { transactionId, amount, currency: 'TRY', returnUrl: 'https://shop.example/r' },
    false,
  )
  if (!s.acked) return
  const charge: Op = {
    ...s,
    id: ops.length,
    kind: 'charge',
    key: newKey(),
    acked: false,
    status: 0,
    body: null,
  }
  ops.push(charge)
  await perform(
    client,
    charge,
    'POST',
    '/v1/payments/card',
    { transactionId, amount, currency: 'TRY', cardToken: token },
    true,
  )
  const paymentId = charge.body?.['paymentId']
  if (!charge.acked || typeof paymentId !== 'string') return
  charge.paymentId = paymentId
  // Every other payment is refunded in part, so refunds cross the failover too.
  if (n % 2 === 0) return
  const refund: Op = {
    ...charge,
    id: ops.length,
    kind: 'refund',
    key: newKey(),
    amount: Math.floor(amount / 3),
    body: null,
    acked: false,
    status: 0,
  }
  ops.push(refund)
  await perform(
    client,
    refund,
    'POST',
    `/v1/payments/${paymentId}/refund`,
    { amount: refund.amount, reason: 'customer request' },
    true,
  )
}

async function operatorPost(path: string, body: Json): Promise<Json> {
  for (let i = 0; ; i++) {
    try {
      const res = await fetch(API + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      })
      if (res.status < 300) return (await res.json()) as Json
      if (i > 20) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    } catch (error) {
      if (i > 20) throw error
    }
    await delay(500)
  }
}

async function check(merchantId: string): Promise<Omit<Report, 't' | 'attempts'>> {
  const handle = await connectDatabase<Database>({ databaseUrl: DATABASE_URL, poolSize: 2 })
  try {
    const db = handle.db
    const payments = (
      await sql<{
        id: string
        transaction_id: string
        status: string
        amount: number
        refund_completed_minor: number
      }>`select id, transaction_id, status, amount, refund_completed_minor from payments
         where merchant_id = ${merchantId}`.execute(db)
    ).rows
    const refunds = (
      await sql<{ id: string; payment_id: string; status: string; amount: number; key: string }>`
        select id, payment_id, status, amount, idempotency_key as key from refunds
        where merchant_id = ${merchantId}`.execute(db)
    ).rows
    const byId = new Map(payments.map((p) => [p.id, p]))
    const lost: string[] = []
    const wrongState: string[] = []
    const duplicates: string[] = []
    const unacknowledged = ops
      .filter((o) => !o.acked)
      .map((o) => `${o.kind} ${o.transactionId} (last HTTP ${o.status})`)

    // Acknowledged charges: each payment there, in the state the last acknowledgement gave.
    for (const charge of ops.filter((o) => o.kind === 'charge' && o.acked)) {
      const row = charge.paymentId ? byId.get(charge.paymentId) : undefined
      if (!row) {
        lost.push(`payment ${charge.paymentId} (${charge.transactionId})`)
        continue
      }
      const refund = ops.find(
        (o) => o.kind === 'refund' && o.acked && o.paymentId === charge.paymentId,
      )
      const expected = (refund ?? charge).body?.['status']
      if (row.status !== expected) {
        wrongState.push(`payment ${row.id}: ${row.status}, acknowledged ${String(expected)}`)
      }
      const refunded = refund ? refund.amount : 0
      if (row.refund_completed_minor !== refunded) {
        wrongState.push(
          `payment ${row.id}: refunded ${row.refund_completed_minor}, acknowledged ${refunded}`,
        )
      }
    }
    // Acknowledged refunds: each refund there, completed.
    const refundByKey = new Map<string, typeof refunds>()
    for (const r of refunds) refundByKey.set(r.key, [...(refundByKey.get(r.key) ?? []), r])
    for (const refund of ops.filter((o) => o.kind === 'refund' && o.acked)) {
      const rows = refundByKey.get(refund.key) ?? []
      if (rows.length === 0) lost.push(`refund of ${refund.paymentId} (key ${refund.key})`)
      const ackedStatus = (refund.body?.['lastRefund'] as Json | undefined)?.['status']
      for (const r of rows) {
        if (r.status !== ackedStatus) {
          wrongState.push(`refund ${r.id}: ${r.status}, acknowledged ${String(ackedStatus)}`)
        }
      }
    }
    // Doubles: one payment per transactionId, one refund per Idempotency-Key, and nothing
    // in the database that no request of ours asked for.
    const perTransaction = new Map<string, number>()
    for (const p of payments) {
      if (p.status !== 'failed') {
        perTransaction.set(p.transaction_id, (perTransaction.get(p.transaction_id) ?? 0) + 1)
      }
    }
    for (const [t, n] of perTransaction) if (n > 1) duplicates.push(`${n} payments for ${t}`)
    for (const [k, rows] of refundByKey)
      if (rows.length > 1) duplicates.push(`${rows.length} refunds for key ${k}`)
    const charged = new Set(ops.filter((o) => o.kind === 'charge').map((o) => o.transactionId))
    for (const p of payments) {
      if (!charged.has(p.transaction_id)) duplicates.push(`payment ${p.id} nobody charged`)
    }
    const refundKeys = new Set(ops.filter((o) => o.kind === 'refund').map((o) => o.key))
    for (const r of refunds)
      if (!refundKeys.has(r.key)) duplicates.push(`refund ${r.id} nobody asked for`)

    // The worker dispatches the outbox: every event gets out once it is alive after failover.
    let undispatched = 0
    for (let i = 0; i < 120; i++) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from events where dispatched_at is null`.execute(db)
      undispatched = rows[0]?.n ?? 0
      if (undispatched === 0) break
      await delay(500)
    }
    const acquirer = await acquirerProblems(db)

    // The books, by the operator's own command (kurus check-ledger).
    const ledgerRun = spawnSync(process.execPath, ['src/main.ts', 'check-ledger', '--json'], {
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL, LOG_LEVEL: 'warn' },
    })
    let ledger: Report['ledger']
    try {
      ledger = JSON.parse(ledgerRun.stdout) as Report['ledger']
    } catch {
      ledger = {
        ok: false,
        payments: 0,
        refunds: 0,
        problems: [`check-ledger: ${ledgerRun.stdout}${ledgerRun.stderr}`.slice(0, 2000)],
      }
    }
    if (ledgerRun.status !== 0 && ledger.ok) {
      ledger = { ...ledger, ok: false, problems: [`check-ledger exited ${ledgerRun.status}`] }
    }
    const acked = { session: 0, charge: 0, refund: 0 }
    for (const o of ops) if (o.acked) acked[o.kind]++
    return {
      ops: ops.length,
      acked,
      unacknowledged,
      lost,
      duplicates,
      wrongState,
      ledger,
      acquirer,
      undispatchedEvents: undispatched,
    }
  } finally {
    await handle.close()
  }
}

async function main(): Promise<void> {
  const merchant = (await operatorPost('/operator/v1/merchants', {
    name: 'HA',
    kycStatus: 'approved',
  })) as { merchantId: string; publicKey: string; secretKey: string }
  const client = clientFor(API, merchant)
  const token = await client.request<{ cardToken: string }>('POST', '/v1/cards/tokens', {
    body: {
      cardNumber: CARDS.frictionless,
      expMonth: 12,
      expYear: 2030,
      cvc: '123',
      holderName: 'Ali Veli',
    },
  })
  if (token.status !== 201 && token.status !== 200) {
    throw new Error(`card token: ${token.status} ${JSON.stringify(token.body)}`)
  }
  const cardToken = token.body.cardToken
  const commands = createInterface({ input: process.stdin })
  commands.on('line', (line) => {
    if (line.trim() === 'stop') stopping = true
  })
  const progress = setInterval(() => {
    const acked = ops.filter((o) => o.acked && o.kind !== 'session').length
    emit({ t: 'progress', acked })
  }, 500)
  emit({ t: 'ready', merchantId: merchant.merchantId })
  const orders = new Set<Promise<void>>()
  for (let n = 0; !stopping; n++) {
    while (orders.size >= MAX_ORDERS && !stopping) await Promise.race(orders)
    if (stopping) break
    const p: Promise<void> = order(client, cardToken, n).finally(() => orders.delete(p))
    orders.add(p)
    await delay(ORDER_EVERY_MS)
  }
  await Promise.all(orders)
  clearInterval(progress)
  // stdin would keep the process alive after the report.
  commands.close()
  process.stdin.destroy()
  const result = await check(merchant.merchantId)
  emit({ t: 'report', ...result, attempts })
}

await main()
