// The seeded random workload of the reliability suite and the checker of its history, after
// Jepsen's bank workload and TigerBeetle's VOPR: client sessions run charges, captures, voids,
// refunds, chargebacks, payouts and reads against the service while faults happen; every
// operation is recorded (invoked, completed, outcome); afterwards the checker proves that each
// acknowledged operation is present exactly once, that nothing refused left a trace, that reads
// never go back in time, and that every balance a client read matches some serial order of
// the ledger's entries.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { sql } from 'kysely'
import type { Db } from '../../src/database.ts'
import type { Kurus } from '../../sdk/index.ts'
import {
  CARDS,
  clientFor,
  drain,
  fastForwardAbandoned,
  newKey,
  operator,
  rng,
  send,
  type Merchant,
  type Outcome,
  type Service,
} from './_harness.ts'

export type OpKind =
  | 'session'
  | 'token'
  | 'charge'
  | 'capture'
  | 'void'
  | 'refund'
  | 'chargeback'
  | 'payout'
  | 'readPayment'
  | 'readBalances'

type Json = Record<string, unknown>

export interface Op {
  id: number
  client: number
  kind: OpKind
  key: string | null
  method: string
  path: string
  body: Json | undefined
  /** The payment the operation is about (capture, void, refund, chargeback, reads). */
  target: string | null
  invokedAt: number
  completedAt: number
  outcome: Outcome<Json>['kind']
  status: number
  response: Json | null
  /** When the final phase retried an unacknowledged operation with its key. */
  late?: { at: number; outcome: Outcome<Json>['kind']; status: number; response: Json | null }
}

export class History {
  readonly ops: Op[] = []
  private next = 0

  async run(
    client: Kurus,
    who: number,
    kind: OpKind,
    method: string,
    path: string,
    opts: {
      body?: Json
      key?: boolean
      target?: string | null
      untilFinal?: boolean
      deadlineMs: number
    },
  ): Promise<Op> {
    const op: Op = {
      id: this.next++,
      client: who,
      kind,
      key: opts.key === false ? null : newKey(),
      method,
      path,
      body: opts.body,
      target: opts.target ?? null,
      invokedAt: Date.now(),
      completedAt: 0,
      outcome: 'info',
      status: 0,
      response: null,
    }
    this.ops.push(op)
    const res = await send<Json>(
      client,
      method,
      path,
      { body: opts.body, key: op.key ?? undefined },
      { deadlineMs: opts.deadlineMs, untilFinal: opts.untilFinal ?? false },
    )
    op.completedAt = Date.now()
    op.outcome = res.kind
    op.status = res.status
    op.response = res.kind === 'info' ? null : res.body
    return op
  }

  save(dir: string, name: string): string {
    const file = join(dir, name)
    writeFileSync(file, JSON.stringify(this.ops, null, 1))
    return file
  }
}

export interface World {
  url: string
  db: Db
  merchant: Merchant
  sub: { submerchantId: string; client: Kurus }
}

/** A submerchant of the merchant, through the operator API, with its own API keys. */
export async function newSubmerchant(url: string, merchantId: string) {
  const res = await operator<{ submerchantId: string; publicKey: string; secretKey: string }>(
    url,
    'POST',
    `/operator/v1/merchants/${merchantId}/submerchants`,
    { name: 'Seller', iban: 'TR330006100519786457841326', holderName: 'Seller Ltd' },
  )
  if (res.status !== 201) throw new Error(`submerchant: ${JSON.stringify(res.body)}`)
  return { submerchantId: res.body.submerchantId, client: clientFor(url, res.body) }
}

export interface WorkloadOptions {
  seed: number
  clients: number
  /** Relative weights of the operations each client picks from. */
  mix: Partial<
    Record<
      | 'charge'
      | 'capture'
      | 'void'
      | 'refund'
      | 'chargeback'
      | 'payout'
      | 'readPayment'
      | 'readBalances',
      number
    >
  >
  /** An unacknowledged operation is given up (recorded `info`) after this long. */
  opDeadlineMs: number
}

interface Known {
  amount: number
  status: string
}

/**
 * Runs `options.clients` client sessions until `stop()` says so. Each picks operations by its
 * own seeded stream; targets come from a pool all clients share, so they race each other.
 */
export async function runWorkload(
  world: World,
  history: History,
  options: WorkloadOptions,
  stop: () => boolean,
): Promise<void> {
  const known = new Map<string, Known>()
  const pick = (r: ReturnType<typeof rng>, statuses: string[]): string | null => {
    const ids = [...known.entries()]
      .filter(([, k]) => statuses.includes(k.status))
      .map(([id]) => id)
    return ids.length === 0 ? null : r.pick(ids)
  }
  const learn = (op: Op) => {
    const p = op.response
    if (op.outcome !== 'ok' || !p) return
    const id = (p['paymentId'] ?? p['id']) as string | undefined
    const status = p['status'] as string | undefined
    if (!id?.startsWith('pay_') || !status) return
    const k = known.get(id)
    known.set(id, { amount: (p['amount'] as number | undefined) ?? k?.amount ?? 0, status })
  }
  const { client } = world.merchant
  const d = options.opDeadlineMs
  const weights = Object.entries(options.mix).filter(([, w]) => (w ?? 0) > 0)
  const total = weights.reduce((s, [, w]) => s + (w ?? 0), 0)

  const session = async (who: number, r: ReturnType<typeof rng>) => {
    const amount = 1_000 + r.int(40_000)
    const card = r.pick([
      CARDS.frictionless,
      CARDS.frictionless,
      CARDS.frictionless,
      CARDS.debit,
      CARDS.asyncRefund,
      CARDS.asyncRefundFails,
      CARDS.timeout,
      CARDS.declined,
    ])
    const split = r.chance(0.4)
    const transactionId = `rel-${options.seed}-${who}-${newKey()}`
    const s = await history.run(client, who, 'session', 'POST', '/v1/payments/sessions', {
      body: {
        transactionId,
        amount,
        currency: 'TRY',
        returnUrl: 'https://shop.example/return',
        ...(split
          ? {
              splits: [
                { submerchantId: world.sub.submerchantId, amountMinor: Math.floor(amount * 0.4) },
              ],
            }
          : {}),
      },
      deadlineMs: d,
    })
    if (s.outcome !== 'ok') return
    const t = await history.run(client, who, 'token', 'POST', '/v1/cards/tokens', {
      body: {
        cardNumber: card,
        expMonth: 12,
        expYear: 2030,
        cvc: '123',
        holderName: 'Ayşe Yılmaz',
      },
      deadlineMs: d,
    })
    if (t.outcome !== 'ok' || !t.response) return
    const capture = card === CARDS.debit || !r.chance(0.3)
    const c = await history.run(client, who, 'charge', 'POST', '/v1/payments/card', {
      body: {
        transactionId,
        amount,
        currency: 'TRY',
        cardToken: t.response['cardToken'],
        threeDSecure: false,
        capture,
      },
      untilFinal: true,
      deadlineMs: d,
    })
    learn(c)
  }

  const one = async (who: number, r: ReturnType<typeof rng>) => {
    let roll = r.next() * total
    let kind = 'charge'
    for (const [k, w] of weights) {
      roll -= w ?? 0
      if (roll < 0) {
        kind = k
        break
      }
    }
    if (kind === 'charge') return session(who, r)
    if (kind === 'capture' || kind === 'void') {
      const id = pick(r, ['authorized', 'partially_captured'])
      const k = id ? known.get(id) : undefined
      if (!id || !k) return session(who, r)
      // Half the captures are partial (docs/payments.md): a part of up to a third of the
      // authorization, final or not. A partial capture is not idempotent by itself, so it
      // always carries a key; a full capture or a void only half the time.
      const partial = kind === 'capture' && r.chance(0.5)
      const body = partial
        ? { amount: 1 + r.int(Math.max(1, Math.floor(k.amount / 3))), final: r.chance(0.4) }
        : {}
      const op = await history.run(client, who, kind, 'POST', `/v1/payments/${id}/${kind}`, {
        body,
        key: partial || r.chance(0.5),
        target: id,
        deadlineMs: d,
      })
      return learn(op)
    }
    if (kind === 'refund' || kind === 'chargeback') {
      const id = pick(r, ['captured'])
      const k = id ? known.get(id) : undefined
      if (!id || !k) return session(who, r)
      const amount = 1 + r.int(Math.max(1, Math.floor(k.amount / (kind === 'refund' ? 3 : 5))))
      const path =
        kind === 'refund' ? `/v1/payments/${id}/refund` : `/v1/sandbox/payments/${id}/chargebacks`
      const op = await history.run(client, who, kind, 'POST', path, {
        body: { amount },
        target: id,
        untilFinal: kind === 'refund',
        deadlineMs: d,
      })
      return learn(op)
    }
    if (kind === 'payout') {
      const key = newKey()
      const op = await history.run(world.sub.client, who, 'payout', 'POST', '/v1/payouts', {
        body: {
          submerchantId: world.sub.submerchantId,
          rail: 'fast',
          amountMinor: 100 + r.int(400),
          currency: 'TRY',
          clientReference: key,
        },
        deadlineMs: d,
      })
      return op
    }
    if (kind === 'readPayment') {
      const id = pick(r, [
        'pending',
        'authorized',
        'partially_captured',
        'captured',
        'voided',
        'refunded',
        'failed',
      ])
      if (!id) return session(who, r)
      const op = await history.run(client, who, 'readPayment', 'GET', `/v1/payments/${id}`, {
        key: false,
        target: id,
        deadlineMs: Math.min(d, 5_000),
      })
      return learn(op)
    }
    return history.run(client, who, 'readBalances', 'GET', '/v1/balances', {
      key: false,
      deadlineMs: Math.min(d, 5_000),
    })
  }

  await Promise.all(
    Array.from({ length: options.clients }, async (_, who) => {
      const r = rng(options.seed * 1_000 + who + 1)
      while (!stop()) await one(who, r)
    }),
  )
}

/** Calls POST /v1/sandbox/reconcile every `everyMs` until stopped (reconcilers racing clients). */
export async function poke(client: Kurus, stop: () => boolean, everyMs = 1_000): Promise<number> {
  let runs = 0
  while (!stop()) {
    const res = await send(client, 'POST', '/v1/sandbox/reconcile', { body: {} }, { deadlineMs: 0 })
    if (res.kind === 'ok') runs++
    await delay(everyMs)
  }
  return runs
}

const MUTATING: OpKind[] = [
  'session',
  'token',
  'charge',
  'capture',
  'void',
  'refund',
  'chargeback',
  'payout',
]

/**
 * The client's last step: every operation that was never acknowledged is retried with its
 * key and body until it is (after the faults have stopped and the service was restarted);
 * a keyless capture or void is retried as it is, being idempotent by itself.
 */
export async function retryUnacknowledged(
  world: World,
  history: History,
  drainOnce: () => Promise<void>,
) {
  for (const op of history.ops) {
    if (op.outcome !== 'info' || !MUTATING.includes(op.kind)) continue
    // Keyless retries only for what is idempotent by itself (a full capture, a void).
    const selfIdempotent =
      op.kind === 'void' || (op.kind === 'capture' && op.body?.['amount'] === undefined)
    if (!op.key && !selfIdempotent) continue
    const client = op.kind === 'payout' ? world.sub.client : world.merchant.client
    let res: Outcome<Json> | undefined
    for (let i = 0; i < 6 && res?.kind !== 'ok' && res?.kind !== 'fail'; i++) {
      if (i > 0) await drainOnce()
      res = await send<Json>(
        client,
        op.method,
        op.path,
        { body: op.body, key: op.key ?? undefined },
        {
          untilFinal: op.kind === 'charge' || op.kind === 'refund',
          deadlineMs: 5_000,
        },
      )
    }
    if (res) {
      op.late = {
        at: Date.now(),
        outcome: res.kind,
        status: res.status,
        response: res.kind === 'info' ? null : res.body,
      }
    }
  }
}

/**
 * After the faults: stop everything (kill -9, so nothing is in flight), let the abandoned
 * work's takeover windows pass, start the service clean, retry every unacknowledged
 * operation with its key, and run the reconcilers until nothing is left open. Returns what
 * is still open (nothing, when all is well).
 */
export async function finish(
  service: Service,
  world: World,
  history: History,
  options: { webhooks: boolean },
): Promise<string[]> {
  await service.killApi()
  for (let i = 0; i < service.workers.length; i++) await service.killWorker(i)
  await fastForwardAbandoned(world.db, { deliveries: true })
  await service.start()
  const drainOnce = async () => {
    await drain(world.db, world.merchant.client, { rounds: 1, webhooks: options.webhooks })
  }
  await retryUnacknowledged(world, history, drainOnce)
  return drain(world.db, world.merchant.client, { rounds: 60, webhooks: options.webhooks })
}

// ---------------------------------------------------------------------------------------
// The checker

function str(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

const EXPECTED_REFUSALS: Partial<Record<OpKind, string[]>> = {
  charge: ['SVC-PAY-3501'],
  // A partial capture above what the others left is 400.
  capture: ['SVC-STATE-3401', 'SVC-VAL-3001'],
  void: ['SVC-STATE-3401'],
  refund: ['SVC-VAL-3001', 'SVC-STATE-3401'],
  chargeback: ['SVC-VAL-3001', 'SVC-STATE-3401'],
  payout: ['SVC-PAY-3502', 'SVC-PAY-3503'],
}

// A payment's status can only move along these edges (CONTRACT.md "Payments").
const NEXT: Record<string, string[]> = {
  pending_3ds: ['pending', 'failed'],
  pending: ['authorized', 'captured', 'failed'],
  authorized: ['partially_captured', 'captured', 'voided'],
  partially_captured: ['captured', 'refunded'],
  captured: ['refunded'],
  refunded: [],
  voided: [],
  failed: [],
}

/** Can a payment seen in status `from` later be seen in status `to`? */
function reachable(from: string, to: string): boolean {
  if (from === to) return true
  return (NEXT[from] ?? []).some((s) => reachable(s, to))
}

interface Final {
  payments: Map<string, { status: string; transactionId: string; merchantId: string }>
  refunds: Map<string, { paymentId: string; status: string; amount: number; key: string | null }>
  refundsByKey: Map<string, string[]>
  payoutsByReference: Map<string, string[]>
  chargebacks: Set<string>
  /** The parent merchant's entries: how each moved reserve + available + payout_clearing. */
  entries: { kind: string; reference: string; createdAt: number; effect: number }[]
}

async function finalState(db: Db, merchantId: string): Promise<Final> {
  const payments = await sql<{
    id: string
    status: string
    transaction_id: string
    merchant_id: string
  }>`
    select id, status, transaction_id, merchant_id from payments where merchant_id = ${merchantId}`.execute(
    db,
  )
  const refunds = await sql<{
    id: string
    payment_id: string
    status: string
    amount: number
    idempotency_key: string | null
  }>`
    select id, payment_id, status, amount, idempotency_key from refunds where merchant_id = ${merchantId}`.execute(
    db,
  )
  const payouts = await sql<{ id: string; client_reference: string | null }>`
    select id, client_reference from payouts where merchant_id = ${merchantId}`.execute(db)
  const chargebacks = await sql<{ id: string }>`
    select id from chargebacks where merchant_id = ${merchantId}`.execute(db)
  const entries = await sql<{ kind: string; reference: string; created_at: Date; effect: number }>`
    select e.kind, e.reference, e.created_at,
      sum(case when l.direction = 'CREDIT' then l.amount else -l.amount end)::bigint as effect
    from ledger_entries e join ledger_legs l on l.entry_id = e.id
    where l.merchant_id = ${merchantId} and l.owner_type = 'merchant' and l.owner_id = ${merchantId}
      and l.account_type in ('merchant_reserve', 'merchant_available', 'payout_clearing')
    group by e.id, e.kind, e.reference, e.created_at`.execute(db)
  const refundsByKey = new Map<string, string[]>()
  for (const r of refunds.rows) {
    if (r.idempotency_key)
      refundsByKey.set(r.idempotency_key, [...(refundsByKey.get(r.idempotency_key) ?? []), r.id])
  }
  const payoutsByReference = new Map<string, string[]>()
  for (const p of payouts.rows) {
    if (p.client_reference)
      payoutsByReference.set(p.client_reference, [
        ...(payoutsByReference.get(p.client_reference) ?? []),
        p.id,
      ])
  }
  return {
    payments: new Map(
      payments.rows.map((p) => [
        p.id,
        { status: p.status, transactionId: p.transaction_id, merchantId: p.merchant_id },
      ]),
    ),
    refunds: new Map(
      refunds.rows.map((r) => [
        r.id,
        { paymentId: r.payment_id, status: r.status, amount: r.amount, key: r.idempotency_key },
      ]),
    ),
    refundsByKey,
    payoutsByReference,
    chargebacks: new Set(chargebacks.rows.map((c) => c.id)),
    entries: entries.rows.map((e) => ({
      kind: e.kind,
      reference: e.reference,
      createdAt: e.created_at.getTime(),
      effect: e.effect,
    })),
  }
}

/** What the gateway holds for an operation's key (for a refusal that should not happen). */
async function keyRecord(db: Db, op: Op): Promise<string> {
  const { rows } = await sql<Json>`
    select fingerprint, state, request_id, created_at, locked_at, expires_at, response_status
    from idempotency_keys where idempotency_key = ${op.key ?? ''}`.execute(db)
  return ` (key records ${JSON.stringify(rows)})`
}

/**
 * The ledger references of a payment's captures as the API lists them: a capture of the
 * whole amount at once is `capture:<paymentId>` (its id is cap_ + the payment's random
 * part), each of several `capture:<captureId>`.
 */
function captureReferences(paymentId: string, captures: unknown): string[] {
  if (!Array.isArray(captures)) return [`capture:${paymentId}`]
  return (captures as { id: string }[]).map((c) =>
    c.id === `cap_${paymentId.slice(4)}` ? `capture:${paymentId}` : `capture:${c.id}`,
  )
}

/** Is `target` the sum of `base` and some subset of `items`? (reachable sums, bounded) */
function subsetReaches(
  base: number,
  items: number[],
  target: number,
  cap = 1 << 16,
): boolean | undefined {
  let reachable = new Set([base])
  for (const x of items) {
    const next = new Set(reachable)
    for (const s of reachable) next.add(s + x)
    if (next.size > cap) return undefined
    reachable = next
  }
  return reachable.has(target)
}

export interface CheckReport {
  problems: string[]
  acknowledged: number
  unacknowledged: number
  balanceReadsChecked: number
  balanceReadsUnchecked: number
}

/** The history checker (see the file's opening comment). */
export async function checkHistory(db: Db, world: World, history: History): Promise<CheckReport> {
  const final = await finalState(db, world.merchant.merchantId)
  const problems: string[] = []
  const bad = (op: Op, what: string) =>
    problems.push(
      `op ${op.id} ${op.kind} ${op.method} ${op.path} (${op.outcome} ${op.status}): ${what}`,
    )
  const answer = (op: Op) =>
    op.outcome === 'info' && op.late
      ? { ...op.late }
      : { outcome: op.outcome, status: op.status, response: op.response }
  // When each ledger entry of the parent merchant was first proven committed to a client.
  const provenAt = new Map<string, number>()
  const prove = (reference: string, at: number) => {
    provenAt.set(reference, Math.min(provenAt.get(reference) ?? Infinity, at))
  }

  for (const op of history.ops) {
    const a = answer(op)
    const r = a.response ?? {}
    const at = op.outcome === 'info' ? (op.late?.at ?? Infinity) : op.completedAt
    if (a.outcome === 'fail') {
      const code = str(r['code'])
      if (!(EXPECTED_REFUSALS[op.kind] ?? []).includes(code)) {
        bad(
          op,
          `unexpected refusal ${code}${code === 'SVC-GW-2001' ? await keyRecord(db, op) : ''}`,
        )
      }
    }
    switch (op.kind) {
      case 'charge': {
        const id = str(r['paymentId'])
        if (a.outcome === 'info') break
        const p = final.payments.get(id)
        if (!p) {
          bad(op, `acknowledged payment ${id} does not exist`)
          break
        }
        if (p.transactionId !== op.body?.['transactionId'])
          bad(op, `payment ${id} is of another transactionId`)
        if (a.outcome === 'fail' && p.status !== 'failed')
          bad(op, `declined payment ${id} is ${p.status}`)
        if (r['status'] === 'captured') {
          if (!['captured', 'refunded'].includes(p.status))
            bad(op, `acknowledged captured, now ${p.status}`)
          prove(`capture:${id}`, at)
        }
        if (
          r['status'] === 'authorized' &&
          !['authorized', 'partially_captured', 'captured', 'voided', 'refunded'].includes(p.status)
        ) {
          bad(op, `acknowledged authorized, now ${p.status}`)
        }
        break
      }
      case 'capture':
      case 'void': {
        if (a.outcome !== 'ok' || !op.target) break
        const p = final.payments.get(op.target)
        // What the answer said the payment is, and where it may have gone since: a partial
        // capture leaves it partially_captured, a void of a partially captured one captured.
        const acked = str(r['status'])
        const want = ['partially_captured', 'captured', 'voided', 'refunded'].filter((s) =>
          reachable(acked, s),
        )
        if (!p || !want.includes(p.status))
          bad(op, `acknowledged ${acked}, but the payment is ${p?.status}`)
        if (op.kind === 'capture') {
          for (const ref of captureReferences(op.target, r['captures'])) prove(ref, at)
        }
        break
      }
      case 'refund': {
        const rows = op.key ? (final.refundsByKey.get(op.key) ?? []) : []
        // A refusal may leave a failed record (the bank refused it: decision 0035), never more.
        if (a.outcome === 'fail' && rows.some((id) => final.refunds.get(id)?.status !== 'failed'))
          bad(op, `refused, yet refund ${rows.join(',')} exists`)
        if (rows.length > 1) bad(op, `one key made ${rows.length} refunds: ${rows.join(',')}`)
        if (a.outcome !== 'ok') break
        const last = r['lastRefund'] as
          { refundId: string; status: string; amount: number } | undefined
        const refund = last ? final.refunds.get(last.refundId) : undefined
        if (!last || !refund) {
          bad(op, 'acknowledged refund does not exist')
          break
        }
        if (rows[0] !== last.refundId)
          bad(op, `its key holds ${rows.join(',')}, not ${last.refundId}`)
        if (refund.amount !== op.body?.['amount']) bad(op, `refund amount ${refund.amount}`)
        if (last.status === 'completed') {
          if (refund.status !== 'completed') bad(op, `acknowledged completed, now ${refund.status}`)
          prove(`refund:${last.refundId}`, at)
        }
        break
      }
      case 'chargeback': {
        if (a.outcome !== 'ok') break
        const id = str(r['id'])
        if (!final.chargebacks.has(id)) bad(op, `acknowledged chargeback ${id} does not exist`)
        prove(`chargeback:${id}`, at)
        break
      }
      case 'payout': {
        const reference = str(op.body?.['clientReference'])
        const rows = final.payoutsByReference.get(reference) ?? []
        if (rows.length > 1) bad(op, `one key made ${rows.length} payouts: ${rows.join(',')}`)
        if (a.outcome === 'fail' && rows.length > 0) bad(op, 'refused, yet the payout exists')
        if (a.outcome === 'ok' && rows[0] !== r['payoutId'])
          bad(op, `acknowledged payout ${str(r['payoutId'])} is not stored once`)
        break
      }
      case 'readPayment': {
        if (op.outcome !== 'ok' || !op.target) break
        const status = str(r['status'])
        if (['partially_captured', 'captured', 'refunded'].includes(status)) {
          for (const ref of captureReferences(op.target, r['captures'])) prove(ref, op.completedAt)
        }
        break
      }
      default:
        break
    }
  }

  // Reads never go back in time, and see every write acknowledged before they began.
  const reads = history.ops.filter(
    (o) => o.kind === 'readPayment' && o.outcome === 'ok' && o.target,
  )
  const writes = history.ops.filter(
    (o) => (o.kind === 'capture' || o.kind === 'void' || o.kind === 'charge') && o.outcome === 'ok',
  )
  for (const r2 of reads) {
    const s2 = str(r2.response?.['status'])
    for (const r1 of reads) {
      if (r1.target !== r2.target || r1.completedAt >= r2.invokedAt) continue
      const s1 = str(r1.response?.['status'])
      if (!reachable(s1, s2)) bad(r2, `read ${s2} after an earlier read saw ${s1} (op ${r1.id})`)
    }
    for (const w of writes) {
      const target = w.kind === 'charge' ? str(w.response?.['paymentId']) : w.target
      if (target !== r2.target || w.completedAt >= r2.invokedAt) continue
      const acked = str(w.response?.['status'])
      if (!reachable(acked, s2))
        bad(r2, `read ${s2} after ${w.kind} op ${w.id} acknowledged ${acked}`)
    }
  }

  // Balances: what a read shows of the parent merchant (reserve + available + payout
  // pending, which settlements and payout creations leave unchanged) must be the sum of the
  // entries proven committed before the read began plus some subset of those that may have
  // committed before it ended (created before it ended, not yet proven).
  let checked = 0
  let unchecked = 0
  for (const op of history.ops) {
    if (op.kind !== 'readBalances' || op.outcome !== 'ok') continue
    const items = (op.response?.['items'] ?? []) as {
      ownerType: string
      ownerId: string
      reserveMinor: number
      availableMinor: number
      payoutPendingMinor: number
    }[]
    const mine = items.find(
      (i) => i.ownerType === 'merchant' && i.ownerId === world.merchant.merchantId,
    )
    if (!mine) {
      bad(op, 'no balance of the merchant itself')
      continue
    }
    const seen = mine.reserveMinor + mine.availableMinor + mine.payoutPendingMinor
    let base = 0
    const maybe: number[] = []
    for (const e of final.entries) {
      if (e.effect === 0) continue
      if ((provenAt.get(e.reference) ?? Infinity) < op.invokedAt) base += e.effect
      else if (e.createdAt <= op.completedAt) maybe.push(e.effect)
    }
    const ok = subsetReaches(base, maybe, seen)
    if (ok === undefined) unchecked++
    else {
      checked++
      if (!ok)
        bad(
          op,
          `balance ${seen} matches no serial order (proven ${base}, maybe [${maybe.join(', ')}])`,
        )
    }
  }

  const acknowledged = history.ops.filter((o) => o.outcome !== 'info').length
  return {
    problems,
    acknowledged,
    unacknowledged: history.ops.length - acknowledged,
    balanceReadsChecked: checked,
    balanceReadsUnchecked: unchecked,
  }
}

/** Every event of the merchant was received at least once by its webhook endpoint. */
export async function undelivered(
  db: Db,
  merchantId: string,
  received: readonly string[],
): Promise<string[]> {
  const got = new Set(received)
  const { rows } = await sql<{ id: string; type: string }>`
    select id, type from events where merchant_id = ${merchantId} order by id`.execute(db)
  return rows.filter((e) => !got.has(e.id)).map((e) => `${e.id} ${e.type}`)
}
