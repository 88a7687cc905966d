import type { Deps } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { newUuid } from '../../platform/ids.ts'
import { lockedOwnerBalance, ownerBalance, postPayoutCreated } from '../ledger/index.ts'
import { maskIban } from './payout-rows.ts'
import { recordPayoutsCreated } from './payouts.service.ts'
import * as repo from './payouts.repository.ts'
import * as settlementRepo from './settlement.repository.ts'
import {
  FAST_LIMIT_MINOR,
  istanbulDate,
  latestRunDate,
  nextRunDate,
  settlementRail,
} from './settlement-calendar.ts'
import type { NewPayout } from './payouts.table.ts'

// Settlement payouts (issue 40, decision 0040): on each scheduled run the merchant's whole
// available balance goes to its own bank account. The reconciler visits every merchant with
// a bank account and an automatic schedule; a run (merchant, Istanbul run date) is claimed
// by inserting its payout_runs row, in ONE transaction with its outcome — the payout row,
// its ledger legs, the `payout.created` event and the rail job — so two workers, or a run
// retried after a crash, make one payout per merchant per run. The rail job then takes the
// payout through the usual lifecycle (processPayout).
//
// A run waits (nothing recorded, tried on the next tick) while the bank account's 24-hour
// hold lasts (live) and while a settlement above the FAST limit waits for EFT to open. It is
// recorded without a payout when the available balance is zero or negative (a chargeback
// after a payout: later settlements net it) or below the schedule's minimum.

const PAGE = 200

export type RunOutcome =
  'paid' | 'below_minimum' | 'nothing_available' | 'not_due' | 'held' | 'waiting_for_eft' | 'taken'

/** One tick: every due run. Returns how many settlement payouts it created. */
export async function runSettlementPayouts(deps: Deps): Promise<number> {
  let created = 0
  let after: string | undefined
  for (;;) {
    const page = await settlementRepo.findRunCandidates(deps.db, after, PAGE)
    for (const candidate of page) {
      const outcome = await runFor(deps, candidate)
      if (outcome === 'paid') created++
    }
    after = page.at(-1)?.merchant_id
    if (page.length < PAGE) return created
  }
}

/** The merchant's due run, if any: claimed, decided and (maybe) paid in one transaction. */
export async function runFor(
  deps: Deps,
  candidate: settlementRepo.RunCandidate,
): Promise<RunOutcome> {
  const now = deps.clock.now()
  const runDate = latestRunDate(
    { interval: candidate.interval ?? 'daily', anchor: candidate.anchor },
    istanbulDate(now),
  )
  if (runDate === undefined) return 'not_due'
  if (candidate.last_run_date !== null && candidate.last_run_date >= runDate) return 'not_due'
  if (candidate.payouts_hold_until && candidate.payouts_hold_until.getTime() > now.getTime()) {
    return 'held'
  }
  const merchantId = candidate.merchant_id
  const minimum = candidate.minimum_minor ?? 0
  return transact(deps.db, async (tx): Promise<RunOutcome> => {
    // Serialised with the merchant's other payouts (drafts) before the ledger's owner lock,
    // in the order payouts.service takes them.
    await repo.lockPayoutOwner(tx, `merchant:${merchantId}`)
    const account = await settlementRepo.lockBankAccount(tx, merchantId)
    // The account may have changed since the candidate was read: its hold decides.
    if (!account) return 'not_due'
    if (account.payouts_hold_until && account.payouts_hold_until.getTime() > now.getTime()) {
      return 'held'
    }
    const balance = await lockedOwnerBalance(tx, merchantId, 'merchant', merchantId)
    const available = balance.availableMinor
    const rail = available > 0 ? settlementRail(available, now) : undefined
    if (available > 0 && available >= minimum && rail === undefined) return 'waiting_for_eft'
    const outcome =
      available <= 0 ? 'nothing_available' : available < minimum ? 'below_minimum' : 'paid'
    const payoutId = outcome === 'paid' ? newUuid() : null
    const claimed = await settlementRepo.claimRun(tx, {
      merchant_id: merchantId,
      run_date: runDate,
      outcome,
      payout_id: payoutId,
      available_minor: available,
      created_at: now,
    })
    if (!claimed) return 'taken'
    if (payoutId === null || rail === undefined) return outcome
    const row: NewPayout = {
      id: payoutId,
      merchant_id: merchantId,
      store_id: null,
      draft_id: null,
      draft_row_idx: null,
      owner_type: 'merchant',
      owner_id: merchantId,
      submerchant_id: null,
      rail: rail.rail,
      dest: account.iban,
      dest_masked: maskIban(account.iban),
      holder_name: account.holder_name,
      amount_minor: available,
      currency: 'TRY',
      status: 'pending',
      client_reference: null,
      idempotency_key: null,
      metadata: JSON.stringify({}),
      failure_code: null,
      rail_reference: null,
      kind: 'settlement',
      run_date: runDate,
      arrival_date: rail.arrivalDate,
      created_at: now,
      processing_at: null,
      paid_at: null,
      failed_at: null,
      updated_at: now,
    }
    await repo.insertPayouts(tx, [row])
    await postPayoutCreated(tx, {
      merchantId,
      ownerType: 'merchant',
      ownerId: merchantId,
      payoutId,
      amount: available,
      at: now,
    })
    await recordPayoutsCreated(deps, tx, [row])
    return 'paid'
  })
}

export interface UpcomingSettlement {
  /** The next payout's run date (Istanbul), null for a manual schedule. */
  runDate: string | null
  /** What it would pay if it ran now: the available balance when positive. */
  amountMinor: number
  rail: 'fast' | 'eft'
  availableMinor: number
  /** Why nothing would be paid, if so. */
  blocked: 'no_bank_account' | 'manual' | 'negative' | 'nothing' | 'below_minimum' | null
  heldUntil: Date | null
}

/** The merchant's next settlement payout as far as it is known now (the dashboard). */
export async function upcomingSettlement(
  deps: Deps,
  merchantId: string,
): Promise<UpcomingSettlement> {
  const now = deps.clock.now()
  const today = istanbulDate(now)
  const [account, scheduleRow, runs, balance] = await Promise.all([
    settlementRepo.findBankAccount(deps.db, merchantId),
    settlementRepo.findSchedule(deps.db, merchantId),
    settlementRepo.findRuns(deps.db, merchantId, 1),
    ownerBalance(deps.db, merchantId, 'merchant', merchantId),
  ])
  const rule = { interval: scheduleRow?.interval ?? 'daily', anchor: scheduleRow?.anchor ?? null }
  const minimum = scheduleRow?.minimum_minor ?? 0
  const latest = latestRunDate(rule, today)
  const lastRun = runs[0]?.run_date
  const runDate =
    latest !== undefined && (lastRun === undefined || lastRun < latest)
      ? latest
      : (nextRunDate(rule, today) ?? null)
  const available = balance.availableMinor
  const blocked = !account
    ? 'no_bank_account'
    : rule.interval === 'manual'
      ? 'manual'
      : available < 0
        ? 'negative'
        : available === 0
          ? 'nothing'
          : available < minimum
            ? 'below_minimum'
            : null
  const held =
    account?.payouts_hold_until && account.payouts_hold_until.getTime() > now.getTime()
      ? account.payouts_hold_until
      : null
  return {
    runDate,
    amountMinor: Math.max(0, available),
    rail: available > FAST_LIMIT_MINOR ? 'eft' : 'fast',
    availableMinor: available,
    blocked,
    heldUntil: held,
  }
}
