import { sql } from 'kysely'
import type { Deps, Tx } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import { binInfo } from '../acquirer/index.ts'
import { recordEvent } from '../events/index.ts'
import { paymentEventData, paymentRowToPayment } from './payment-view.ts'
import * as repo from './payments.repository.ts'
import * as riskFactsRepo from './risk-facts.repository.ts'
import * as sessionsRepo from './sessions.repository.ts'
import type { PaymentRow } from './payments.table.ts'
import { riskPort, type RiskAssessment, type RiskFacts, type ScreenFacts } from './risk-port.ts'

// The risk check of a card charge (CONTRACT.md "Risk: rules, lists, reviews"), run inside the
// charge's claim transaction, after the intent row is written and before the acquirer is
// called: gather the facts (velocity counts include this payment), ask the installed risk
// port for a decision, and store both on the row. A block fails the payment in that same
// transaction, with its `payment.failed` event and the session's failed-attempt count, and
// the charge answers 402 SVC-RISK-3701 (decision 0035: the claim is also the outcome).

const ALLOW: RiskAssessment = { decision: 'allow', score: 0, reasons: [], ruleIds: [] }

export function riskBlockedError(paymentId: string): AppError {
  return new AppError('SVC-RISK-3701', 402, 'payment blocked by a risk rule', undefined, {
    paymentId,
    declineCode: 'blocked',
  })
}

/** A charge a risk rule or list blocked (402 SVC-RISK-3701, with the payment's id). */
export function isRiskBlocked(error: unknown): error is AppError {
  return error instanceof AppError && error.code === 'SVC-RISK-3701'
}

/**
 * The advisory locks a card charge's intent statement takes (insertCardIntent), so that its
 * velocity count, a later statement, sees every earlier charge of its card, IP and customer.
 */
export function velocityLocksOf(row: {
  merchant_id: string
  card_fingerprint?: string | null | undefined
  client_ip?: string | null | undefined
  customer_id?: string | null | undefined
}): string[] {
  return riskFactsRepo.velocityLockKeys({
    merchantId: row.merchant_id,
    fingerprint: row.card_fingerprint ?? null,
    ip: row.client_ip ?? null,
    customerId: row.customer_id ?? null,
  })
}

/** The facts known before the count; `email` is the payment's customer's (null: none or unknown). */
function screenFactsOf(row: PaymentRow, email: string | null): ScreenFacts {
  const bin = row.bin === null ? null : binInfo(row.bin)
  return {
    amount: row.amount,
    installmentCount: row.installment_count,
    card: {
      brand: row.card_brand,
      bin: row.bin,
      binCountry: bin?.country ?? null,
      funding: row.card_type,
      fingerprint: row.card_fingerprint,
    },
    customer: { id: row.customer_id, email: email === null ? null : email.toLowerCase() },
    ip: row.client_ip,
  }
}

/**
 * Decides a `pending` card payment inside the charge's claim transaction `tx`. Returns the
 * row with its risk and, for require_3ds, threeDSecure forced on; on a block, the row failed
 * (`blocked`), its event written, and the transaction set to commit synchronously, since it
 * is then also the charge's outcome and is answered at once.
 */
export async function checkRisk(
  deps: Deps,
  tx: Tx,
  row: PaymentRow,
  customerEmail: string | null,
): Promise<{ row: PaymentRow; blocked: boolean }> {
  const screened = screenFactsOf(row, customerEmail)
  const screen = riskPort()?.screen(row.merchant_id, screened)
  // The velocity counts and the lists and rules, in one statement of the claim transaction.
  const { velocity, read } = await riskFactsRepo.countVelocity(
    tx,
    {
      merchantId: row.merchant_id,
      fingerprint: row.card_fingerprint,
      ip: row.client_ip,
      customerId: row.customer_id,
      now: deps.clock.now(),
    },
    screen?.columns,
  )
  const facts: RiskFacts = { ...screened, velocity }
  const assessment = screen ? screen.decide(facts, read) : ALLOW
  const now = deps.clock.now()
  if (assessment.decision === 'block') {
    await sql`select set_config('synchronous_commit', 'on', true)`.execute(tx)
    const failed = await repo.transitionPayment(tx, row.merchant_id, row.id, ['pending'], {
      status: 'failed',
      decline_code: 'blocked',
      risk: JSON.stringify(assessment),
      risk_facts: JSON.stringify(facts),
      completed_at: now,
      updated_at: now,
    })
    if (!failed) return { row, blocked: true }
    if (failed.session_id) await sessionsRepo.incrementSessionFailures(tx, failed.session_id)
    await recordEvent(tx, {
      merchantId: failed.merchant_id,
      storeId: failed.store_id,
      type: 'payment.failed',
      resourceType: 'payment',
      resourceId: failed.id,
      data: paymentEventData(paymentRowToPayment(failed)),
      callbackUrl: failed.callback_url,
      at: now,
    })
    return { row: failed, blocked: true }
  }
  const updated = await riskFactsRepo.recordRisk(tx, row.merchant_id, row.id, {
    risk: JSON.stringify(assessment),
    risk_facts: JSON.stringify(facts),
    three_d_secure: row.three_d_secure || assessment.decision === 'require_3ds',
    // The intent's own instant: this is still its creating transaction. A new updated_at
    // would change a column two indexes hold (reconciliation, actions in flight), making
    // PostgreSQL write a new entry in each of the table's 18 indexes; unchanged, the row's
    // new version can be a heap-only tuple (docs/performance.md, "Round 3, part 4").
    updated_at: row.updated_at,
  })
  return { row: updated ?? row, blocked: false }
}

/** Whether the authorization captures at once: not while a review holds the payment. */
export function capturesAtAuthorization(row: PaymentRow): boolean {
  return row.capture_requested && row.risk?.decision !== 'review'
}
