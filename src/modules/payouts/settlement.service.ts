import type { Deps } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import {
  listUnsettledReserveCredits,
  settleReserveCredit,
  type ReserveCredit,
} from '../ledger/index.ts'
import { getMerchant, getSubmerchant } from '../merchants/index.ts'

// The settlement reconciler: captured shares sit in each owner's merchant_reserve and become
// payable (merchant_available) once the owner's settlement delay has passed (CONTRACT.md:
// 1 day in live, 0 in demo; merchants/submerchants.settlement_delay_seconds). The ledger
// keeps the work list (one row per owner per reserve credit) and does the arithmetic under
// the owner's lock (settleReserveCredit); this decides when each credit is due.

const PAGE = 200
// One run visits at most this many unsettled credits; the next tick carries on.
const CREDITS_PER_RUN_MAX = 20_000

/** Settles every reserve credit whose owner's delay has passed. Returns how many settled. */
export async function settleFunds(deps: Deps): Promise<number> {
  const now = deps.clock.now()
  const delays = new Map<string, number>()
  const delaySecondsOf = async (credit: ReserveCredit): Promise<number> => {
    const key = `${credit.ownerType}:${credit.ownerId}`
    let seconds = delays.get(key)
    if (seconds === undefined) {
      seconds =
        credit.ownerType === 'merchant'
          ? (await getMerchant(deps, credit.merchantId)).settlementDelaySeconds
          : (await getSubmerchant(deps, credit.merchantId, credit.ownerId)).settlementDelaySeconds
      delays.set(key, seconds)
    }
    return seconds
  }

  let settled = 0
  let visited = 0
  let after: ReserveCredit | undefined
  for (;;) {
    const page = await listUnsettledReserveCredits(deps.db, after, PAGE)
    for (const credit of page) {
      const maturedBefore = new Date(now.getTime() - (await delaySecondsOf(credit)) * 1000)
      if (credit.creditedAt.getTime() > maturedBefore.getTime()) continue // not due yet
      await transact(deps.db, (tx) =>
        settleReserveCredit(tx, {
          merchantId: credit.merchantId,
          entryId: credit.entryId,
          ownerType: credit.ownerType,
          ownerId: credit.ownerId,
          maturedBefore,
          at: now,
        }),
      )
      settled++
    }
    visited += page.length
    after = page.at(-1)
    if (page.length < PAGE || visited >= CREDITS_PER_RUN_MAX) break
  }
  return settled
}
