import type { Deps } from '../../database.ts'
import { sha256Hex } from '../../platform/crypto.ts'
import { isUniqueViolation } from '../../platform/db/transaction.ts'
import { newId } from '../../platform/ids.ts'
import { stableStringify } from '../../platform/json.ts'
import { getMerchant } from '../merchants/index.ts'
import { getCardToken } from '../vault/index.ts'
import { settleAuthorization, sharesFor } from './charge.service.ts'
import { computeCommission } from './commission.ts'
import { paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import { cardMask, paymentRowToPayment, type Payment } from './payment-view.ts'

export interface SavedCardCharge {
  merchantId: string
  storeId: string
  /** The fence: e.g. `<subscriptionId>:<cycle>`; a repeat returns the same payment. */
  transactionId: string
  amount: number
  cardToken: string
  customerId?: string | null
  metadata?: Record<string, string>
  /** The subscription and cycle a renewal pays: fields of ours, never the metadata's. */
  subscription?: { id: string; cycle: number }
  callbackUrl?: string | null
  /** Sandbox: the test clock whose time `deps.clock` answers (docs/decisions/0031). */
  testClockId?: string | null
}

/**
 * A merchant-initiated charge of a saved card (subscription renewals): no session, no 3DS,
 * captured at once, through the same payment, ledger and event code as a buyer's charge.
 * The transactionId fences it: calling again for the same cycle returns the payment made
 * the first time (or, after a decline, makes a new attempt — a retry is a new attempt).
 * Never throws for a decline: the failed payment is the answer.
 */
export async function chargeSavedCard(deps: Deps, input: SavedCardCharge): Promise<Payment> {
  const fenced = await repo.findFencedPayment(deps.db, input.merchantId, input.transactionId)
  if (fenced) return paymentRowToPayment(fenced)
  const token = await getCardToken(deps, input.merchantId, input.cardToken)
  if (token.status !== 'active') throw paymentsError('card_token_revoked')
  const merchant = await getMerchant(deps, input.merchantId)
  const now = deps.clock.now()
  const paymentId = newId('pay')
  try {
    await repo.insertPayment(deps.db, {
      id: paymentId,
      merchant_id: input.merchantId,
      store_id: input.storeId,
      session_id: null,
      transaction_id: input.transactionId,
      method: 'card',
      status: 'pending',
      amount: input.amount,
      currency: 'TRY',
      commission: computeCommission(merchant.pricing, input.amount, 1),
      installment_count: 1,
      card_token: token.cardToken,
      card_fingerprint: token.fingerprint,
      card_mask: cardMask(token.bin, token.last4, token.brand),
      card_brand: token.brand,
      card_type: token.cardType,
      bin: token.bin,
      three_d_secure: false,
      capture_requested: true,
      auth_code: null,
      acquirer_reference: null,
      decline_code: null,
      correlation_id: null,
      customer_id: input.customerId ?? null,
      save_card: false,
      callback_url: input.callbackUrl ?? null,
      shares: JSON.stringify(sharesFor(input.merchantId, input.amount, [])),
      metadata: JSON.stringify(input.metadata ?? {}),
      subscription_id: input.subscription?.id ?? null,
      subscription_cycle: input.subscription?.cycle ?? null,
      fingerprint: sha256Hex(stableStringify(input)),
      void_reason: null,
      created_at: now,
      authorized_at: null,
      completed_at: null,
      updated_at: now,
      test_clock_id: input.testClockId ?? null,
    })
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    const winner = await repo.findFencedPayment(deps.db, input.merchantId, input.transactionId)
    if (!winner) throw error
    return paymentRowToPayment(winner)
  }
  const result = await deps.acquirer.authorize(deps, {
    paymentId,
    merchantId: input.merchantId,
    cardToken: token.cardToken,
    amount: input.amount,
    installmentCount: 1,
    capture: true,
  })
  return settleAuthorization(deps, input.merchantId, paymentId, result, true)
}

/** The payment behind a fence, if any: the live one, else the latest failed attempt. */
export async function findPaymentByTransactionId(
  deps: Deps,
  merchantId: string,
  transactionId: string,
): Promise<Payment | undefined> {
  const row = await repo.findLatestPaymentByTransactionId(deps.db, merchantId, transactionId)
  return row ? paymentRowToPayment(row) : undefined
}
