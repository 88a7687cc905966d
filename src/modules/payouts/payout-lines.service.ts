import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { signedCursor } from '../../platform/cursor.ts'
import {
  findPayout,
  payoutAllocationPage,
  payoutWindowPage,
  type BalanceOwner,
  type BalanceTransactionType,
  type PayoutAllocation,
  type PayoutHeader,
} from '../ledger/index.ts'
import { getMerchant, getSubmerchant } from '../merchants/index.ts'
import { getPayout, type Payout, type PayoutCaller } from './payouts.service.ts'
import * as settlementRepo from './settlement.repository.ts'

// What a payout settled, line by line (GET /v1/payouts/{id}/balance-transactions and the
// dashboard's Hakedişler). A settlement payout settles every movement of the merchant's
// available balance since its previous settlement payout (ledger payoutWindowPage: sales
// released from the reserve, refunds and chargebacks taken from available — a negative
// balance netted —, failed payouts returned, other payouts); any other payout its part of
// the balance first in, first out (payoutAllocationPage). Either way the lines' `settled`
// parts sum to the payout's amount.

export const PAYOUT_LINES_LIMIT_MAX = 100

export interface PayoutLine {
  balanceTransactionId: string
  type: BalanceTransactionType
  sourceId: string
  amountMinor: number
  feeMinor: number
  netMinor: number
  settledMinor: number
  createdAt: Date
}

const LINES_CURSOR = signedCursor('payout-lines', 'kurus/payouts/lines-cursor', {
  write: (at: number) => ({ p: at }),
  read: (c) => (Number.isSafeInteger(c['p']) ? (c['p'] as number) : undefined),
})

interface Resolved {
  payout: Payout
  owner: BalanceOwner
  header: PayoutHeader
  previous: PayoutHeader | undefined
}

async function resolve(deps: Deps, caller: PayoutCaller, payoutId: string): Promise<Resolved> {
  const payout = await getPayout(deps, caller, payoutId)
  const delay =
    payout.ownerType === 'merchant'
      ? (await getMerchant(deps, payout.merchantId)).settlementDelaySeconds
      : (await getSubmerchant(deps, payout.merchantId, payout.ownerId)).settlementDelaySeconds
  const owner: BalanceOwner = {
    merchantId: payout.merchantId,
    ownerType: payout.ownerType,
    ownerId: payout.ownerId,
    settlementDelaySeconds: delay,
  }
  const header = await findPayout(deps.db, owner, payout.id)
  assert(header, `payout ${payout.id} has no payout_created entry`)
  let previous: PayoutHeader | undefined
  if (payout.kind === 'settlement') {
    const prev = await settlementRepo.findPreviousSettlement(deps.db, payout.merchantId, {
      id: payout.id,
      created_at: payout.createdAt,
    })
    previous = prev ? await findPayout(deps.db, owner, prev.id) : undefined
  }
  return { payout, owner, header, previous }
}

function fetchLines(
  deps: Deps,
  r: Resolved,
  page: { afterPosition?: number; limit: number },
): Promise<PayoutAllocation[]> {
  return r.payout.kind === 'settlement'
    ? payoutWindowPage(deps.db, r.owner, r.header, r.previous, page)
    : payoutAllocationPage(deps.db, r.owner, r.header, page)
}

function toLine(a: PayoutAllocation): PayoutLine {
  return {
    balanceTransactionId: a.transaction.id,
    type: a.transaction.type,
    sourceId: a.transaction.sourceId,
    amountMinor: a.transaction.amount,
    feeMinor: a.transaction.fee,
    netMinor: a.transaction.net,
    settledMinor: a.settled,
    createdAt: a.transaction.createdAt,
  }
}

/** One page of the payout's lines, in posting order. */
export async function listPayoutLines(
  deps: Deps,
  caller: PayoutCaller,
  payoutId: string,
  q: { limit: number; cursor?: string | undefined },
): Promise<{ items: PayoutLine[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= PAYOUT_LINES_LIMIT_MAX, 'limit')
  const r = await resolve(deps, caller, payoutId)
  return LINES_CURSOR.page(deps.config.masterKey, { m: caller.merchantId, p: r.payout.id }, q, {
    fetch: (after, limit) =>
      fetchLines(deps, r, { ...(after !== undefined ? { afterPosition: after } : {}), limit }),
    view: (rows) => rows.map(toLine),
    position: (row) => row.position,
  })
}

export interface PayoutReportLine {
  type: BalanceTransactionType
  count: number
  amountMinor: number
  feeMinor: number
  settledMinor: number
}

export interface PayoutReport {
  payout: Payout
  lines: PayoutLine[]
  /** Per type (sales = charge, refunds, chargebacks, …): what the payout carried. */
  summary: PayoutReportLine[]
  totalSettledMinor: number
}

/** Every line of a payout and its summary per type (the dashboard's payout report). */
export async function payoutReport(
  deps: Deps,
  caller: PayoutCaller,
  payoutId: string,
  maxLines = 5000,
): Promise<PayoutReport> {
  const r = await resolve(deps, caller, payoutId)
  const lines: PayoutLine[] = []
  let after: number | undefined
  for (;;) {
    const page = await fetchLines(deps, r, {
      ...(after !== undefined ? { afterPosition: after } : {}),
      limit: 1000,
    })
    lines.push(...page.map(toLine))
    after = page.at(-1)?.position
    if (page.length < 1000 || lines.length >= maxLines) break
  }
  const byType = new Map<BalanceTransactionType, PayoutReportLine>()
  let total = 0
  for (const line of lines) {
    const s = byType.get(line.type) ?? {
      type: line.type,
      count: 0,
      amountMinor: 0,
      feeMinor: 0,
      settledMinor: 0,
    }
    s.count++
    s.amountMinor += line.amountMinor
    s.feeMinor += line.feeMinor
    s.settledMinor += line.settledMinor
    byType.set(line.type, s)
    total += line.settledMinor
  }
  return { payout: r.payout, lines, summary: [...byType.values()], totalSettledMinor: total }
}
