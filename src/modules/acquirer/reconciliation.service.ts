import { randomBytes } from 'node:crypto'
import type { Deps } from '../../database.ts'
import { AppError, notFound } from '../../platform/errors.ts'
import { transact } from '../../platform/db/transaction.ts'
import { recordEvent } from '../events/index.ts'
import type { GarantiListedTxn } from './garanti.ts'
import { connectorConfigOf, type PosOwner } from './pos-accounts.service.ts'
import { CONNECTORS } from './pos-connectors.ts'
import * as posRepo from './pos.repository.ts'
import type { PosAccountRow, PosPaymentRow, PosRefundRow } from './pos.table.ts'
import * as repo from './reconciliation.repository.ts'
import type {
  MismatchField,
  MismatchKind,
  OrderFacts,
  ReconciliationItemRow,
} from './reconciliation.table.ts'

// Daily reconciliation per bank POS (issue 39, docs/acquiring.md "Reconciliation"): what the
// bank holds for the orders of one Istanbul bank day against what we hold, each difference
// listed once and raised once as `reconciliation.mismatch` in the run's transaction.
// - garanti: the bank's own list (orderlistinq) from the day's start to now, so an order the
//   bank has and we do not is found too; the day's orders are those whose authorization the
//   bank lists on that day.
// - est_v3, posnet: their XML APIs have no day list (mewebstudio/pos's EstPos and PosNet
//   `history` are unsupported), so one order inquiry per order of ours of that day; such a run
//   cannot see an order we never sent, and the inquiry tells the authorized amount and a void,
//   not captures or refunds.
// Both sides are compared as they stand when the run asks (current state of the day's orders).

const DAY_MS = 86_400_000
const ISTANBUL_MS = 3 * 3_600_000
/** GVPS lists at most 30 days in one request. */
const LIST_SPAN_MS = 30 * DAY_MS
/** The dashboard's "test" orders (pos-test.service.ts): never a payment, never a mismatch. */
const TEST_ORDER = /^pst_/

export interface ReconciliationItem {
  id: string
  orderId: string
  paymentId: string | null
  kind: MismatchKind
  field: MismatchField | null
  ours: OrderFacts | null
  bank: OrderFacts | null
  createdAt: Date
}

export interface Reconciliation {
  date: string
  posAccountId: string
  method: 'list' | 'inquiry' | null
  ranAt: Date | null
  checkedOrders: number
  items: ReconciliationItem[]
  nextCursor: string | null
}

function invalid(field: string, reason: string): AppError {
  return new AppError('SVC-VAL-3001', 400, `${field}: ${reason}`, [{ field, reason }])
}

/** The Istanbul calendar day of an instant, YYYY-MM-DD. */
function bankDateOf(at: Date): string {
  return new Date(at.getTime() + ISTANBUL_MS).toISOString().slice(0, 10)
}

/** [start, end) of an Istanbul day; 400 for a malformed date or a day not yet begun. */
function dayBounds(deps: Pick<Deps, 'clock'>, date: string): { start: Date; end: Date } {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  const start = match ? new Date(`${date}T00:00:00+03:00`) : undefined
  if (!start || Number.isNaN(start.getTime()) || bankDateOf(start) !== date) {
    throw invalid('date', 'a calendar date, YYYY-MM-DD (Istanbul)')
  }
  if (start.getTime() > deps.clock.now().getTime()) {
    throw invalid('date', 'a bank day that has begun')
  }
  return { start, end: new Date(start.getTime() + DAY_MS) }
}

function ourFacts(row: PosPaymentRow | undefined, refunds: readonly PosRefundRow[]) {
  if (row?.state !== 'approved') return null
  const done = refunds.filter((r) => r.payment_id === row.payment_id && r.state === 'completed')
  return {
    authorized: row.amount,
    captured: row.captured,
    refunded: done.filter((r) => r.kind === 'credit').reduce((sum, r) => sum + r.amount, 0),
    voided: row.voided || done.some((r) => r.kind === 'void'),
  } satisfies OrderFacts
}

const DONE = new Set(['Basarili', 'Onaylandi'])
const AUTHORIZING = new Set(['Satis', 'On Otorizasyon'])

/** A GVPS list folded per order: the orders whose authorization is listed in [start, end). */
function garantiFacts(
  txns: readonly GarantiListedTxn[],
  start: Date,
  end: Date,
): Map<string, OrderFacts> {
  const out = new Map<string, OrderFacts>()
  const inDay = (at: string) => {
    const t = Date.parse(`${at.replace(' ', 'T')}+03:00`)
    return t >= start.getTime() && t < end.getTime()
  }
  for (const x of txns) {
    // An authorization cancelled since is listed with Status Iptal (mewebstudio/pos's mapper).
    if (AUTHORIZING.has(x.trxType) && (DONE.has(x.status) || x.status === 'Iptal') && inDay(x.at)) {
      out.set(x.orderId, { authorized: 0, captured: 0, refunded: 0, voided: false })
    }
  }
  for (const x of txns) {
    const f = out.get(x.orderId)
    if (!f) continue
    const done = DONE.has(x.status)
    if (AUTHORIZING.has(x.trxType) && (done || x.status === 'Iptal')) {
      f.authorized += x.amount
      if (x.trxType === 'Satis') f.captured = (f.captured ?? 0) + x.amount
      if (x.status === 'Iptal') f.voided = true
    } else if (done && x.trxType === 'On Otorizasyon Kapama') {
      f.captured = (f.captured ?? 0) + x.amount
    } else if (done && x.trxType === 'Iade') {
      f.refunded = (f.refunded ?? 0) + x.amount
    } else if (done && x.trxType === 'Iptal') {
      f.voided = true
    }
  }
  return out
}

interface Difference {
  orderId: string
  row: PosPaymentRow | undefined
  kind: MismatchKind
  field: MismatchField | ''
  ours: OrderFacts | null
  bank: OrderFacts | null
}

function compare(
  orderId: string,
  row: PosPaymentRow | undefined,
  ours: OrderFacts | null,
  bank: OrderFacts | null,
): Difference[] {
  const one = (kind: MismatchKind, field: MismatchField | ''): Difference[] => [
    { orderId, row, kind, field, ours, bank },
  ]
  if (!ours && !bank) return []
  if (!bank) return ours && !ours.voided ? one('missing_at_bank', '') : []
  if (!ours) return bank.voided || TEST_ORDER.test(orderId) ? [] : one('missing_at_us', '')
  const out: Difference[] = []
  if (ours.authorized !== bank.authorized) out.push(...one('amount_differs', 'authorized'))
  if (ours.voided !== bank.voided) return [...out, ...one('status_differs', 'voided')]
  // Once voided on both sides, what was captured or refunded before is moot.
  if (ours.voided) return out
  if (bank.captured !== null && ours.captured !== bank.captured) {
    out.push(...one('amount_differs', 'captured'))
  }
  if (bank.refunded !== null && ours.refunded !== bank.refunded) {
    out.push(...one('amount_differs', 'refunded'))
  }
  return out
}

/** What the bank holds for the day: by its list, or by one inquiry per order of ours. */
async function bankSide(
  deps: Deps,
  account: PosAccountRow,
  day: { start: Date; end: Date },
  ours: readonly PosPaymentRow[],
): Promise<{ method: 'list' | 'inquiry'; facts: Map<string, OrderFacts> }> {
  const connector = CONNECTORS[account.provider]
  if (!connector) throw new Error(`no connector for ${account.provider}`)
  const config = connectorConfigOf(deps, account)
  if (connector.list) {
    const now = deps.clock.now().getTime()
    const end = new Date(Math.min(now, day.start.getTime() + LIST_SPAN_MS))
    const listed = await connector.list(config, { start: day.start, end })
    if (listed.kind !== 'list') throw bankUnavailable(listed.reason)
    return { method: 'list', facts: garantiFacts(listed.txns, day.start, day.end) }
  }
  const facts = new Map<string, OrderFacts>()
  for (const row of ours) {
    if (row.state !== 'approved' && row.state !== 'unknown') continue
    const found = await connector.status(config, { orderId: row.payment_id })
    if (found.kind === 'not_sent' || found.kind === 'unknown') throw bankUnavailable(found.reason)
    if (found.kind !== 'approved') continue
    facts.set(row.payment_id, {
      authorized: found.amount ?? row.amount,
      captured: null,
      refunded: null,
      voided: found.voided,
    })
  }
  return { method: 'inquiry', facts }
}

/** The bank did not answer: nothing is recorded, the run can be asked again. */
class BankUnavailable extends Error {}

function bankUnavailable(reason: string): BankUnavailable {
  return new BankUnavailable(`the bank did not answer (${reason})`)
}

function itemView(r: ReconciliationItemRow): ReconciliationItem {
  return {
    id: r.id,
    orderId: r.order_id,
    paymentId: r.payment_id,
    kind: r.kind,
    field: r.field === '' ? null : r.field,
    ours: r.ours,
    bank: r.bank,
    createdAt: r.created_at,
  }
}

/**
 * Reconciles one POS for one Istanbul bank day (the daily job, or on demand): asks the bank,
 * then records the run, each difference not known yet and its `reconciliation.mismatch`
 * event in one transaction. Returns how many differences were new.
 */
export async function reconcilePosDay(
  deps: Deps,
  posAccountId: string,
  date: string,
): Promise<{ bankAnswered: boolean; newItems: number; checkedOrders: number }> {
  const day = dayBounds(deps, date)
  const account = await posRepo.findPosAccount(deps.db, posAccountId)
  if (!account) throw notFound('pos account')
  const ourDay = await repo.findPosPaymentsBetween(deps.db, account.id, day.start, day.end)
  let bank: Awaited<ReturnType<typeof bankSide>>
  try {
    bank = await bankSide(deps, account, day, ourDay)
  } catch (error) {
    if (!(error instanceof BankUnavailable)) throw error
    deps.log.warn(
      { posAccountId, date, reason: error.message },
      'acquirer reconciliation: no answer',
    )
    return { bankAnswered: false, newItems: 0, checkedOrders: 0 }
  }
  // The bank's orders of the day we did not send that day: ours from another day, or none.
  const known = new Set(ourDay.map((r) => r.payment_id))
  const others = await repo.findPosPaymentsByIds(
    deps.db,
    [...bank.facts.keys()].filter((id) => !known.has(id)),
  )
  const rows = new Map(
    [...ourDay, ...others.filter((r) => r.pos_account_id === account.id)].map((r) => [
      r.payment_id,
      r,
    ]),
  )
  const refunds = await repo.findPosRefundsOf(deps.db, [...rows.keys()])
  const orders = new Set([...rows.keys(), ...bank.facts.keys()])
  const differences = [...orders].flatMap((orderId) => {
    const row = rows.get(orderId)
    return compare(orderId, row, ourFacts(row, refunds), bank.facts.get(orderId) ?? null)
  })
  const now = deps.clock.now()
  let newItems = 0
  await transact(deps.db, async (tx) => {
    await repo.upsertRun(tx, {
      pos_account_id: account.id,
      bank_date: date,
      method: bank.method,
      checked_orders: orders.size,
      mismatches: differences.length,
      ran_at: now,
    })
    for (const d of differences) {
      // Random, so an id says nothing of the order (a page cursor orders by it).
      const id = `rcn_${randomBytes(12).toString('hex')}`
      const merchantId = d.row?.merchant_id ?? account.merchant_id
      const inserted = await repo.insertItemOnce(tx, {
        id,
        pos_account_id: account.id,
        bank_date: date,
        order_id: d.orderId,
        payment_id: d.row?.payment_id ?? null,
        merchant_id: merchantId,
        kind: d.kind,
        field: d.field,
        ours: d.ours ? JSON.stringify(d.ours) : null,
        bank: d.bank ? JSON.stringify(d.bank) : null,
        created_at: now,
      })
      if (!inserted) continue
      newItems++
      // A platform POS's order unknown to us belongs to no merchant: listed, not evented.
      if (merchantId === null) continue
      await recordEvent(tx, {
        merchantId,
        storeId: null,
        type: 'reconciliation.mismatch',
        resourceType: 'acquirer_reconciliation',
        resourceId: id,
        data: {
          id,
          posAccountId: account.id,
          date,
          orderId: d.orderId,
          paymentId: d.row?.payment_id ?? null,
          kind: d.kind,
          field: d.field === '' ? null : d.field,
          ours: d.ours,
          bank: d.bank,
        },
        at: now,
      })
    }
  })
  return { bankAnswered: true, newItems, checkedOrders: orders.size }
}

/** The account a merchant may reconcile or read: its own, or (read only) a platform one. */
async function accountFor(deps: Deps, owner: PosOwner, posAccountId: string, run: boolean) {
  const account = await posRepo.findPosAccount(deps.db, posAccountId)
  if (!account || !('merchantId' in owner)) throw notFound('pos account')
  const own = account.merchant_id === owner.merchantId
  if (!own && (run || account.merchant_id !== null)) throw notFound('pos account')
  return { account, own }
}

/** The day's differences on a POS (a platform POS: only this merchant's orders), paged. */
export async function getReconciliation(
  deps: Deps,
  owner: PosOwner,
  q: { date: string; posAccountId: string; limit?: number | undefined; after?: string | undefined },
): Promise<Reconciliation> {
  dayBounds(deps, q.date)
  if (!('merchantId' in owner)) throw notFound('pos account')
  const { account, own } = await accountFor(deps, owner, q.posAccountId, false)
  const limit = q.limit ?? 100
  const run = await repo.findRun(deps.db, account.id, q.date)
  const rows = await repo.findItems(deps.db, {
    posAccountId: account.id,
    bankDate: q.date,
    merchantId: own ? undefined : owner.merchantId,
    after: q.after,
    limit: limit + 1,
  })
  const page = rows.slice(0, limit)
  return {
    date: q.date,
    posAccountId: account.id,
    method: run?.method ?? null,
    ranAt: run?.ran_at ?? null,
    checkedOrders: run?.checked_orders ?? 0,
    items: page.map(itemView),
    nextCursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
  }
}

/** On demand: reconciles one of the merchant's own POS accounts for a day, then lists it. */
export async function runReconciliation(
  deps: Deps,
  owner: PosOwner,
  q: { date: string; posAccountId: string },
): Promise<Reconciliation & { bankAnswered: boolean }> {
  dayBounds(deps, q.date)
  await accountFor(deps, owner, q.posAccountId, true)
  const { bankAnswered } = await reconcilePosDay(deps, q.posAccountId, q.date)
  return { ...(await getReconciliation(deps, owner, q)), bankAnswered }
}

/**
 * The daily run: yesterday's Istanbul bank day for every POS account that took an order of
 * ours that day and has no run for it yet (so a second tick does nothing). A bank that does
 * not answer records nothing and is asked again at the next tick; it does not stop the others.
 * A POS with no order of ours that day is not asked (docs/acquiring.md).
 */
export async function reconcileYesterday(deps: Deps): Promise<number> {
  const date = bankDateOf(new Date(deps.clock.now().getTime() - DAY_MS))
  const day = dayBounds(deps, date)
  let found = 0
  for (const id of await repo.findAccountsToReconcile(deps.db, { ...day, date })) {
    found += (await reconcilePosDay(deps, id, date)).newItems
  }
  return found
}
