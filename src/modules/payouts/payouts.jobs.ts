import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import type { JobDefinition, Reconciler } from '../../platform/jobs/queue.ts'
import { PAYOUTS_PER_JOB_MAX, PROCESS_PAYOUT_JOB } from './payouts.service.ts'
import { processPayout, reconcileStalePayouts } from './processing.service.ts'
import { settleFunds } from './settlement.service.ts'
import { runSettlementPayouts } from './settlement-payouts.service.ts'
import {
  BANK_ACCOUNT_MAIL_JOB,
  assertBankAccountMail,
  mailBankAccountChange,
} from './bank-account.service.ts'

// PostgreSQL away (refused, shut down, connection lost): SQLSTATE classes 08 and 57P, and
// the driver's own socket errors.
const OUTAGE = /^(08|57P)|^ECONN|^EPIPE$|^ETIMEDOUT$/
const OUTAGE_WAIT_MS_MAX = 120_000

function isOutage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && OUTAGE.test(code)) return true
  return (
    error instanceof Error && /Connection terminated|connection (is )?closed/i.test(error.message)
  )
}

/**
 * Runs one payout, riding out a database outage in place (issue 35): a job whose database went
 * away cannot even be marked failed, so pg-boss would hold it `active` until it expires and
 * the payout would sit in `processing` for many minutes. Retried here every second instead,
 * it resumes as soon as the database is back (each step is a conditional update, the rail is
 * keyed by the payout id: a repeat does nothing twice).
 */
async function processRidingOutages(deps: Deps, merchantId: string, payoutId: string) {
  const until = Date.now() + OUTAGE_WAIT_MS_MAX
  for (;;) {
    try {
      return await processPayout(deps, merchantId, payoutId)
    } catch (error) {
      if (!isOutage(error) || Date.now() > until) throw error
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    }
  }
}

interface ProcessPayoutData {
  merchantId: string
  payoutIds: string[]
}

function assertProcessPayoutData(data: unknown): asserts data is ProcessPayoutData {
  const d = data as Partial<Record<keyof ProcessPayoutData, unknown>> | null
  assert(
    typeof d?.merchantId === 'string' &&
      Array.isArray(d.payoutIds) &&
      d.payoutIds.length <= PAYOUTS_PER_JOB_MAX &&
      d.payoutIds.every((id) => typeof id === 'string'),
    `${PROCESS_PAYOUT_JOB}: bad payload`,
  )
}

export function payoutsJobs(deps: Deps): JobDefinition<object>[] {
  return [
    {
      name: PROCESS_PAYOUT_JOB,
      // Ids only; each payout is re-read and every step is a conditional update, so a retry
      // of the whole job after a crash (at-least-once delivery) skips what is already done.
      handler: async (data) => {
        assertProcessPayoutData(data)
        for (const payoutId of data.payoutIds) {
          await processRidingOutages(deps, data.merchantId, payoutId)
        }
      },
      retryLimit: 8,
      retryDelaySeconds: 15,
    },
    {
      name: BANK_ACCOUNT_MAIL_JOB,
      handler: async (data) => {
        assertBankAccountMail(data)
        await mailBankAccountChange(deps, data)
      },
      retryLimit: 5,
      retryDelaySeconds: 60,
    },
  ]
}

export function payoutsReconcilers(deps: Deps): Reconciler[] {
  return [
    { name: 'payouts.settle_funds', cron: '* * * * *', run: () => settleFunds(deps) },
    // After settle_funds: a run pays what this tick just made available. Every minute: a
    // run claimed once per merchant per run date, so the ticks after it are cheap no-ops.
    {
      name: 'payouts.settlement_payouts',
      cron: '* * * * *',
      run: () => runSettlementPayouts(deps),
    },
    {
      name: 'payouts.reconcile_payouts',
      cron: '*/5 * * * *',
      run: () => reconcileStalePayouts(deps),
    },
  ]
}
