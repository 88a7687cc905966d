import type { Deps } from '../../database.ts'
import { sha256Hex } from '../../platform/crypto.ts'
import { AppError, isNotFound, isValidationError, type FieldIssue } from '../../platform/errors.ts'
import { isUuidV4 } from '../../platform/ids.ts'
import { attachCardToCustomer } from '../customers/index.ts'
import {
  allowedOriginsOfStore,
  assertKycApproved,
  findUsableKey,
  getMerchant,
} from '../merchants/index.ts'
import {
  chargeCard,
  isDeclined,
  isPaymentsError,
  isRiskBlocked,
  complete3ds,
  completeSession,
  getPaymentForChallenge,
  getSessionById,
  getSessionPayment,
  qrPayloadForSession,
  quoteInstallments,
  type Payment,
  type Session,
} from '../payments/index.ts'
import { tokenizeCard, type CardTokenView } from '../vault/index.ts'
import { checkoutError, tooManyTokenizations } from './checkout.errors.ts'
import * as repo from './checkout.repository.ts'

// The hosted checkout's use cases. The session id is the buyer's bearer: everything here is
// reachable without a signature, so nothing returned carries card data beyond brand and
// last four, nor the merchant's costs. Card numbers pass straight to the vault and are
// never logged or echoed.

/** CONTRACT card-testing guard: tokenizations per IP per window, by environment. */
export const TOKENIZATION_WINDOW_MS = 10 * 60 * 1000
export const TOKENIZATIONS_PER_IP_MAX = { demo: 100, live: 20 } as const

export interface BuyerCard {
  number: string
  expMonth: number
  expYear: number
  cvc: string
  holderName: string
}

export interface CheckoutView {
  session: Session
  merchantName: string
  /** The session's live (non-failed) payment, when it has one. */
  payment: Payment | undefined
  qrPayload: string | null
  /** Where the buyer goes once the session is over (completed, expired, cancelled). */
  redirectUrl: string | null
}

export interface PayOutcome {
  sessionId: string
  paymentId: string
  status: string
  redirectUrl: string | null
  /** Path of the ACS page on our own origin, when the card needs a 3DS challenge. */
  challengeUrl: string | null
}

/** returnUrl plus our query parameters (any the merchant put there are kept). */
export function returnUrlWith(returnUrl: string, params: Record<string, string>): string {
  const url = new URL(returnUrl)
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  return url.toString()
}

/** Where a finished session sends the buyer; null while it is still open. */
export function finishedRedirect(session: Session, payment: Payment | undefined): string | null {
  if (session.status === 'active') return null
  if (session.status === 'completed') {
    if (session.mode === 'card_update_only') {
      return returnUrlWith(session.returnUrl, { sessionId: session.id, status: 'card_updated' })
    }
    return returnUrlWith(session.returnUrl, {
      sessionId: session.id,
      ...(payment ? { paymentId: payment.id, status: payment.status } : { status: 'completed' }),
    })
  }
  return returnUrlWith(session.returnUrl, { sessionId: session.id, status: session.status })
}

async function loadSession(deps: Deps, sessionId: string): Promise<Session> {
  // Session ids are UUIDs; anything else cannot name one (and would not cast in SQL).
  if (!isUuidV4(sessionId)) throw checkoutError('session_not_found')
  const session = await getSessionById(deps, sessionId)
  if (!session) throw checkoutError('session_not_found')
  return session
}

/** What the hosted page and GET /v1/public/sessions/{id} show. */
export async function getCheckout(deps: Deps, sessionId: string): Promise<CheckoutView> {
  const session = await loadSession(deps, sessionId)
  const merchant = await getMerchant(deps, session.merchantId)
  const payment =
    session.mode === 'card_update_only' ? undefined : await getSessionPayment(deps, session)
  const qrPayload =
    session.mode === 'qr' && session.status === 'active'
      ? await qrPayloadForSession(deps, session)
      : null
  return {
    session,
    merchantName: merchant.name,
    payment,
    qrPayload,
    redirectUrl: finishedRedirect(session, payment),
  }
}

/** The installment plans the card's BIN allows, in buyer terms (no merchant costs). */
export async function quoteCheckoutInstallments(deps: Deps, sessionId: string, bin: string) {
  const session = await loadSession(deps, sessionId)
  if (session.mode !== 'payment' || session.amount === null) throw checkoutError('wrong_mode')
  if (session.status !== 'active') throw checkoutError('session_not_active')
  const quote = await quoteInstallments(deps, session.merchantId, bin, session.amount)
  const options = quote.options
    .filter((o) => session.installmentEnabled || o.installmentCount === 1)
    .map((o) => ({
      installmentCount: o.installmentCount,
      installmentAmount: o.installmentAmount,
      firstInstallmentAmount: o.firstInstallmentAmount,
      totalAmount: o.totalAmount,
    }))
  return { bin: quote.bin, brand: quote.brand, cardType: quote.cardType, bank: quote.bank, options }
}

/**
 * The card-testing guard (CONTRACT): at most 100 tokenizations per IP per 10 minutes in
 * demo, 20 in live. Counted before the vault sees the card, so failed attempts count too.
 */
async function guardTokenization(deps: Deps, clientIp: string): Promise<void> {
  const now = deps.clock.now()
  const count = await repo.logTokenizationAndCount(
    deps.db,
    sha256Hex(`checkout-ip:${clientIp}`),
    now,
    new Date(now.getTime() - TOKENIZATION_WINDOW_MS),
  )
  if (count > TOKENIZATIONS_PER_IP_MAX[deps.config.env]) {
    throw tooManyTokenizations(TOKENIZATION_WINDOW_MS / 1000)
  }
}

const VAULT_FIELDS: Readonly<Record<string, string>> = {
  cardNumber: 'card.number',
  expMonth: 'card.expMonth',
  expYear: 'card.expYear',
  cvc: 'card.cvc',
  holderName: 'card.holderName',
}

/** Tokenizes in the vault; its validation errors are renamed to this API's card.* fields. */
async function tokenizeBuyerCard(
  deps: Deps,
  merchantId: string,
  card: BuyerCard,
  options: { expiresAt?: Date } = {},
): Promise<CardTokenView> {
  try {
    return await tokenizeCard(
      deps,
      merchantId,
      {
        cardNumber: card.number,
        expMonth: card.expMonth,
        expYear: card.expYear,
        cvc: card.cvc,
        holderName: card.holderName,
      },
      options,
    )
  } catch (error) {
    if (!isValidationError(error)) throw error
    const details: FieldIssue[] = (error.details ?? []).map((d) => ({
      field: VAULT_FIELDS[d.field] ?? d.field,
      reason: d.reason,
    }))
    const first = details[0]
    throw new AppError(
      'SVC-VAL-3001',
      400,
      first ? `${first.field}: ${first.reason}` : 'card is invalid',
      details,
    )
  }
}

function challengePath(challengeUrl: string): string {
  // chargeCard names the ACS under the configured checkout URL; the browser is already on
  // our origin, so a path keeps it there whatever host it reached us by.
  const url = new URL(challengeUrl)
  return url.pathname + url.search
}

function outcomeOf(session: Session, payment: Payment, challenge: string | null): PayOutcome {
  const pending3ds = payment.status === 'pending_3ds'
  return {
    sessionId: session.id,
    paymentId: payment.id,
    status: payment.status,
    challengeUrl: pending3ds ? challenge : null,
    redirectUrl: pending3ds
      ? null
      : returnUrlWith(session.returnUrl, {
          sessionId: session.id,
          paymentId: payment.id,
          status: payment.status,
        }),
  }
}

/** A payment already in flight for this session (the buyer went back from the ACS page). */
async function resumeInFlight(deps: Deps, session: Session): Promise<PayOutcome | undefined> {
  const live = await getSessionPayment(deps, session)
  if (!live) return undefined
  const ours = await repo.findCheckoutAttemptByPaymentId(deps.db, live.id)
  if (!ours) return undefined
  const challenge =
    live.status === 'pending_3ds' && live.correlationId
      ? `/3ds/${live.id}?correlationId=${encodeURIComponent(live.correlationId)}`
      : null
  return outcomeOf(session, live, challenge)
}

/**
 * The buyer pays a `payment` session by card: tokenize, charge with 3DS, and answer with
 * where the browser goes next (the ACS page, or the merchant's returnUrl). A decline is
 * 402 SVC-PAY-3501 with the failed payment's id, and the session stays open for another
 * card (up to the payments module's 5 failed attempts). The merchant's risk rules and block
 * lists apply (the buyer's IP is the `ip` fact); a block is shown as a plain decline.
 */
export async function payCheckout(
  deps: Deps,
  sessionId: string,
  input: { card: BuyerCard; installmentCount?: number; saveCard?: boolean },
  clientIp: string,
): Promise<PayOutcome> {
  const session = await loadSession(deps, sessionId)
  if (session.mode !== 'payment' || session.amount === null) throw checkoutError('wrong_mode')
  if (session.status !== 'active') throw checkoutError('session_not_active')
  const installmentCount = input.installmentCount ?? 1
  if (!session.installmentEnabled && installmentCount !== 1) {
    throw checkoutError('installments_disabled')
  }
  await assertKycApproved(deps, session.merchantId)
  await guardTokenization(deps, clientIp)
  const token = await tokenizeBuyerCard(deps, session.merchantId, input.card)
  const customerId = session.customerId
  let outcome
  try {
    outcome = await chargeCard(
      deps,
      { merchantId: session.merchantId },
      {
        transactionId: session.transactionId,
        amount: session.amount,
        currency: 'TRY',
        cardToken: token.cardToken,
        installmentCount,
        threeDSecure: true,
        ip: clientIp,
        ...(customerId ? { customerId, saveCard: input.saveCard === true } : {}),
      },
    )
  } catch (error) {
    // A risk block reads to the buyer as a plain decline: no hint of which rule or list.
    if (isRiskBlocked(error)) {
      throw new AppError('SVC-PAY-3501', 402, 'card declined', undefined, {
        paymentId: error.extra?.['paymentId'] ?? null,
        declineCode: 'declined',
      })
    }
    // The fence holds a payment this checkout started earlier: carry on with that one.
    if (isPaymentsError(error, 'fence_conflict')) {
      const resumed = await resumeInFlight(deps, session)
      if (resumed) return resumed
    }
    throw error
  }
  await repo.insertCheckoutAttempt(deps.db, {
    payment_id: outcome.payment.id,
    session_id: session.id,
    merchant_id: session.merchantId,
    created_at: deps.clock.now(),
  })
  return outcomeOf(
    session,
    outcome.payment,
    outcome.challengeUrl ? challengePath(outcome.challengeUrl) : null,
  )
}

/**
 * A `card_update_only` session: the buyer's card is tokenized and attached to the
 * session's customer as the default card, then the session completes.
 */
export async function updateCheckoutCard(
  deps: Deps,
  sessionId: string,
  input: { card: BuyerCard },
  clientIp: string,
): Promise<{ session: Session; card: CardTokenView; redirectUrl: string }> {
  const session = await loadSession(deps, sessionId)
  if (session.mode !== 'card_update_only' || !session.customerId) throw checkoutError('wrong_mode')
  if (session.status !== 'active') throw checkoutError('session_not_active')
  await guardTokenization(deps, clientIp)
  const card = await tokenizeBuyerCard(deps, session.merchantId, input.card)
  await attachCardToCustomer(deps, session.merchantId, session.customerId, card.cardToken, {
    isDefault: true,
  })
  const completed = await completeSession(deps, session.id)
  return {
    session: completed,
    card,
    redirectUrl: returnUrlWith(session.returnUrl, {
      sessionId: session.id,
      status: 'card_updated',
    }),
  }
}

export interface ChallengeView {
  paymentId: string
  correlationId: string
  amount: number
  merchantName: string
  cardMask: string | null
  cardBrand: string | null
  open: boolean
  /** The returnUrl origin of a direct API charge: the ACS form's redirect goes there. */
  returnOrigin: string | null
}

async function loadChallenge(deps: Deps, paymentId: string, correlationId: string) {
  if (!/^pay_[0-9a-z]{1,64}$/.test(paymentId)) throw checkoutError('payment_not_found')
  let found
  try {
    found = await getPaymentForChallenge(deps, paymentId)
  } catch (error) {
    if (isNotFound(error)) throw checkoutError('payment_not_found')
    throw error
  }
  // The correlation id is the link's second secret: without it the page shows nothing.
  if (!found.payment.correlationId || found.payment.correlationId !== correlationId) {
    throw checkoutError('challenge_invalid')
  }
  return found
}

/** The sandbox ACS page's view of a challenge. */
export async function getChallenge(
  deps: Deps,
  paymentId: string,
  correlationId: string,
): Promise<ChallengeView> {
  const { payment, session } = await loadChallenge(deps, paymentId, correlationId)
  const merchant = await getMerchant(deps, payment.merchantId)
  const viaCheckout = await repo.findCheckoutAttemptByPaymentId(deps.db, paymentId)
  return {
    paymentId,
    correlationId,
    amount: payment.amount,
    merchantName: merchant.name,
    cardMask: payment.cardMask,
    cardBrand: payment.cardBrand,
    open: payment.status === 'pending_3ds',
    returnOrigin: !viaCheckout && session ? new URL(session.returnUrl).origin : null,
  }
}

/**
 * The buyer answered the ACS. A checkout payment goes on to the checkout's own completion
 * step; a direct API charge goes back to the session's returnUrl with paymentId,
 * correlationId and pares, for the merchant's server to call the 3DS callback.
 */
export async function submitChallenge(
  deps: Deps,
  paymentId: string,
  input: { correlationId: string; otp: string },
): Promise<{ redirectUrl: string }> {
  const { payment, session } = await loadChallenge(deps, paymentId, input.correlationId)
  if (payment.status !== 'pending_3ds') throw checkoutError('challenge_done')
  const { pares, correlationId } = await deps.acquirer.completeChallenge(deps, {
    paymentId,
    merchantId: payment.merchantId,
    correlationId: input.correlationId,
    otp: input.otp,
  })
  return returnAfterChallenge(deps, paymentId, session, { correlationId, pares })
}

/**
 * The form the challenge page posts to the bank's 3D gate when the payment's POS is a bank's
 * (null: the sandbox ACS page). The bank posts back to `callbackUrl` on success and failure.
 */
export async function getBankGate(
  deps: Deps,
  paymentId: string,
  correlationId: string,
  callbackUrl: string,
): Promise<{ action: string; fields: Record<string, string> } | null> {
  if (!deps.acquirer.threeDsGateForm) return null
  return deps.acquirer.threeDsGateForm(deps, {
    paymentId,
    correlationId,
    okUrl: callbackUrl,
    failUrl: callbackUrl,
  })
}

/**
 * The bank's post back from its 3D gate: verified by the acquirer (a forged or altered one is
 * 400 and changes nothing), then the buyer goes on exactly as after the sandbox ACS. A
 * duplicate callback is answered the same way; the authorization happens once, later, in
 * the 3DS completion.
 */
export async function submitBankCallback(
  deps: Deps,
  paymentId: string,
  correlationId: string,
  fields: Record<string, string>,
): Promise<{ redirectUrl: string }> {
  const { session } = await loadChallenge(deps, paymentId, correlationId)
  if (!deps.acquirer.completeGateCallback) throw checkoutError('challenge_invalid')
  const done = await deps.acquirer.completeGateCallback(deps, { paymentId, correlationId, fields })
  return returnAfterChallenge(deps, paymentId, session, done)
}

async function returnAfterChallenge(
  deps: Deps,
  paymentId: string,
  session: Session | undefined,
  { correlationId, pares }: { correlationId: string; pares: string },
): Promise<{ redirectUrl: string }> {
  const attempt = await repo.findCheckoutAttemptByPaymentId(deps.db, paymentId)
  if (attempt) {
    const query = new URLSearchParams({ paymentId, correlationId, pares })
    return { redirectUrl: `/s/${attempt.session_id}/3ds-complete?${query.toString()}` }
  }
  if (!session) throw checkoutError('payment_not_found')
  return { redirectUrl: returnUrlWith(session.returnUrl, { paymentId, correlationId, pares }) }
}

export interface ChallengeResult {
  session: Session
  merchantName: string
  paymentId: string
  status: string
  declineCode: string | null
  redirectUrl: string
}

/**
 * The checkout's side of the 3DS callback: it hands the ACS's pares to payments
 * (complete3ds) and reports where the buyer goes: the merchant's returnUrl with sessionId,
 * paymentId and the payment's status. A failed authentication is an outcome, not an error.
 */
export async function finishChallenge(
  deps: Deps,
  sessionId: string,
  input: { paymentId: string; correlationId: string; pares: string },
): Promise<ChallengeResult> {
  const session = await loadSession(deps, sessionId)
  const attempt = await repo.findCheckoutAttemptByPaymentId(deps.db, input.paymentId)
  if (!attempt || attempt.session_id !== session.id) throw checkoutError('payment_not_found')
  let status: string
  let declineCode: string | null = null
  try {
    const payment = await complete3ds(deps, attempt.merchant_id, input.paymentId, {
      pares: input.pares,
      correlationId: input.correlationId,
    })
    status = payment.status
  } catch (error) {
    if (!isDeclined(error)) throw error
    status = 'failed'
    declineCode =
      typeof error.extra?.['declineCode'] === 'string' ? error.extra['declineCode'] : null
  }
  const merchant = await getMerchant(deps, session.merchantId)
  return {
    session,
    merchantName: merchant.name,
    paymentId: input.paymentId,
    status,
    declineCode,
    redirectUrl: returnUrlWith(session.returnUrl, {
      sessionId: session.id,
      paymentId: input.paymentId,
      status,
    }),
  }
}

/** Drops guard rows older than the window (reconciler). */
export async function purgeTokenizationLog(deps: Deps): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - TOKENIZATION_WINDOW_MS)
  return repo.deleteTokenizationsBefore(deps.db, before)
}

/** How long a browser token (Kuruş.js) can be charged: CONTRACT "Embedded card fields". */
const BROWSER_TOKEN_TTL_MS = 15 * 60 * 1000

function refusedKey(): AppError {
  return new AppError(
    'SVC-GW-1003',
    401,
    'publicKey is missing, unknown or revoked (the publishable key of a store: pk_…)',
  )
}

/**
 * Kuruş.js: a card typed into the card fields (served from our origin, in an iframe on the
 * merchant's page) becomes a single-use token valid 15 minutes, which the merchant's server
 * charges with POST /v1/payments/card. The publishable key names the store; the page's origin
 * must be one of the store's allowed origins: the `Origin` the browser sent when the page
 * itself calls, or — when our card fields call from their iframe — the merchant page's origin
 * the fields learnt from the browser (postMessage's event.origin), in `origin`. The card-testing
 * guard counts every attempt against the client IP, as the hosted checkout's.
 */
export async function createBrowserToken(
  deps: Deps,
  input: { publicKey: string; origin?: string | undefined; card: BuyerCard },
  request: { ip: string; origin: string | undefined; selfOrigin: string },
): Promise<{ token: CardTokenView; expiresAt: Date }> {
  const key = await findUsableKey(deps, input.publicKey)
  if (!key || key.env !== deps.config.env || !key.storeId) throw refusedKey()
  const allowed = await allowedOriginsOfStore(deps, key.storeId)
  // Our own card fields call from this origin (the checkout's, however it is reached).
  const fromFields =
    request.origin === new URL(deps.config.checkoutUrl).origin ||
    request.origin === request.selfOrigin
  const pageOrigin = fromFields ? input.origin : request.origin
  if (pageOrigin === undefined || !allowed.includes(pageOrigin)) {
    throw new AppError(
      'SVC-AUTH-3201',
      403,
      `${pageOrigin ?? 'this page'} is not an allowed origin of the store: add it with ` +
        'PUT /v1/stores/{id}/allowed-origins (Dashboard → Developers)',
    )
  }
  await guardTokenization(deps, request.ip)
  const expiresAt = new Date(deps.clock.now().getTime() + BROWSER_TOKEN_TTL_MS)
  const token = await tokenizeBuyerCard(deps, key.merchantId, input.card, { expiresAt })
  return { token, expiresAt }
}

/** The origins that may frame Kuruş.js's card fields for a publishable key: none if unknown. */
export async function browserFieldOrigins(deps: Deps, publicKey: string): Promise<string[]> {
  const key = await findUsableKey(deps, publicKey)
  if (!key || key.env !== deps.config.env || !key.storeId) return []
  return allowedOriginsOfStore(deps, key.storeId)
}
