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
import { riskPort, type RiskAssessment, type RiskFacts } from './risk-port.ts'

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

/** `email` is the payment's customer's, read once by the charge (null: none or unknown). */
async function gatherFacts(
  deps: Deps,
  tx: Tx,
  row: PaymentRow,
  email: string | null,
): Promise<RiskFacts> {
  const bin = row.bin === null ? null : binInfo(row.bin)
  const velocity = await riskFactsRepo.countVelocity(tx, {
    merchantId: row.merchant_id,
    fingerprint: row.card_fingerprint,
    ip: row.client_ip,
    customerId: row.customer_id,
    now: deps.clock.now(),
  })
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
    velocity,
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
  const facts = await gatherFacts(deps, tx, row, customerEmail)
  const port = riskPort()
  // Read through the claim transaction: on PGlite (one connection) a read beside it would wait
  // for it forever.
  const assessment = port ? await port.assess({ ...deps, db: tx }, row.merchant_id, facts) : ALLOW
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
    updated_at: now,
  })
  return { row: updated ?? row, blocked: false }
}

/** Whether the authorization captures at once: not while a review holds the payment. */
export function capturesAtAuthorization(row: PaymentRow): boolean {
  return row.capture_requested && row.risk?.decision !== 'review'
}
