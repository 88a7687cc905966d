import type { Deps } from '../../database.ts'
import { sha256Hex } from '../../platform/crypto.ts'
import { isUniqueViolation, transact } from '../../platform/db/transaction.ts'
import { isUuidV4, newId } from '../../platform/ids.ts'
import { getMerchant } from '../merchants/index.ts'
import { emit, recordFullCapture, sharesFor } from './charge.service.ts'
import { computeCommission } from './commission.ts'
import { buildEmvPayload } from './emv-qr.ts'
import { paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import * as sessionsRepo from './sessions.repository.ts'
import { paymentRowToPayment, type Payment } from './payment-view.ts'
import { sessionRowToSession, type Session } from './sessions.service.ts'

// National instant QR payments (TR Karekod). The buyer's bank moves the money itself, so
// there is no card, no 3DS and no authorization step: when the bank reports the payment,
// it is captured at once, priced like one installment, with the same ledger legs and
// `payment.captured` event as a card capture.

/** Our merchants have no city on file yet; field 60 is mandatory, so a default stands in. */
const MERCHANT_CITY_DEFAULT = 'ISTANBUL'

/** The EMV payload a `qr` session shows. */
export async function qrPayloadForSession(deps: Deps, session: Session): Promise<string> {
  if (session.mode !== 'qr' || session.amount === null) throw paymentsError('session_mode_mismatch')
  const merchant = await getMerchant(deps, session.merchantId)
  return buildEmvPayload({
    merchantId: session.merchantId,
    sessionId: session.id,
    merchantName: merchant.name,
    merchantCity: MERCHANT_CITY_DEFAULT,
    amountMinor: session.amount,
    reference: session.transactionId,
  })
}

class SessionTaken extends Error {}

/**
 * The buyer's bank paid a `qr` session (sandbox: POST /v1/sandbox/sessions/{id}/qr-pay).
 * One transaction claims the session (active → completed), stores the captured `qr`
 * payment, posts its capture legs and records `payment.captured`. Repeating it returns the
 * same payment with `created: false`; another merchant's session is 404.
 */
export async function payQrSession(
  deps: Deps,
  merchantId: string,
  sessionId: string,
): Promise<{ payment: Payment; created: boolean }> {
  // Session ids are UUIDs; anything else would be a database cast error, not a 404.
  if (!isUuidV4(sessionId)) throw paymentsError('session_not_found')
  const sessionRow = await sessionsRepo.findSessionById(deps.db, sessionId)
  if (!sessionRow || sessionRow.merchant_id !== merchantId) throw paymentsError('session_not_found')
  const session = sessionRowToSession(sessionRow, deps.clock.now())
  if (session.mode !== 'qr' || session.amount === null) throw paymentsError('session_mode_mismatch')
  const existing = await repo.findFencedPayment(deps.db, merchantId, session.transactionId)
  if (existing) return { payment: paymentRowToPayment(existing), created: false }
  if (session.status !== 'active') throw paymentsError('session_not_active')
  const merchant = await getMerchant(deps, merchantId)
  const amount = session.amount
  const paymentId = newId('pay')
  try {
    const payment = await transact(deps.db, async (tx) => {
      const now = deps.clock.now()
      // The conditional update is the lock: of two concurrent bank reports one claims it.
      if (!(await sessionsRepo.updateSessionStatus(tx, session.id, 'active', 'completed', now))) {
        throw new SessionTaken()
      }
      await repo.insertPayment(tx, {
        id: paymentId,
        merchant_id: merchantId,
        store_id: session.storeId,
        session_id: session.id,
        transaction_id: session.transactionId,
        method: 'qr',
        status: 'captured',
        amount,
        captured_minor: amount,
        currency: 'TRY',
        commission: computeCommission(merchant.pricing, amount, 1),
        installment_count: 1,
        card_token: null,
        card_mask: null,
        card_brand: null,
        card_type: null,
        bin: null,
        three_d_secure: false,
        capture_requested: true,
        auth_code: null,
        acquirer_reference: null,
        decline_code: null,
        correlation_id: null,
        customer_id: session.customerId,
        save_card: false,
        callback_url: session.callbackUrl,
        shares: JSON.stringify(sharesFor(merchantId, amount, session.splits)),
        metadata: JSON.stringify(session.metadata),
        payment_link_id: session.paymentLinkId,
        fingerprint: sha256Hex(`qr:${session.id}`),
        void_reason: null,
        created_at: now,
        authorized_at: now,
        completed_at: now,
        updated_at: now,
      })
      const row = await repo.findPaymentById(tx, merchantId, paymentId)
      if (!row) throw paymentsError('payment_not_found')
      return emit(tx, row, 'payment.captured', now, await recordFullCapture(tx, row, now))
    })
    return { payment, created: true }
  } catch (error) {
    if (!(error instanceof SessionTaken) && !isUniqueViolation(error)) throw error
    // Another report won the race: answer with its payment.
    const winner = await repo.findFencedPayment(deps.db, merchantId, session.transactionId)
    if (!winner) throw paymentsError('session_not_active')
    return { payment: paymentRowToPayment(winner), created: false }
  }
}
