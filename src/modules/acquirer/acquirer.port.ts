// The port between the payment flows and a card acquirer. Callers know only this interface;
// which bank sits behind it is the app's choice (Deps.acquirer, set in app.ts and server.ts).
// Every operation is keyed by our ids (paymentId, refundId) so a retry after a lost answer
// is safe: the acquirer never authorizes or refunds twice for one id.

export type AuthorizeResult =
  | { status: 'approved'; authCode: string; reference: string }
  | { status: 'declined'; declineCode: string }
  /** The acquirer did not answer in time: ask again with inquire, never authorize anew. */
  | { status: 'unknown' }

/** A form for the buyer's browser to post to a bank's 3D gate. */
export interface ThreeDsGateForm {
  action: string
  fields: Record<string, string>
}

export type ThreeDsStart = { kind: 'frictionless' } | { kind: 'challenge'; correlationId: string }

/**
 * `D` is what the caller passes on each call (the services' Deps). The port is generic so it
 * names no root type: Deps itself carries the acquirer (`deps.acquirer`), which is how tests
 * and a second acquirer plug in.
 */
export interface Acquirer<D> {
  /**
   * Throws (402 SVC-PAY-3504) when no acquirer can take a charge of this merchant at all,
   * so the charge is refused before anything is recorded. Optional: a test acquirer may not.
   */
  assertCanCharge?(deps: D, p: { merchantId: string; threeDSecure: boolean }): Promise<void>
  start3ds(
    deps: D,
    p: {
      paymentId: string
      merchantId: string
      cardToken: string
      amount: number
      /** EMV 3DS "challenge mandated" (a risk rule's require_3ds): no frictionless pass. */
      forceChallenge?: boolean
      /** What a bank's 3D form signs (its gate may authorize too, in the 3D Pay model). */
      installmentCount?: number
      capture?: boolean
    },
  ): Promise<ThreeDsStart>
  /**
   * The form the buyer's browser posts to the bank's 3D gate when the challenge is at a bank
   * POS (null: the sandbox ACS's own page). okUrl/failUrl: where the bank posts back.
   */
  threeDsGateForm?(
    deps: D,
    p: { paymentId: string; correlationId: string; okUrl: string; failUrl: string },
  ): Promise<ThreeDsGateForm | null>
  /**
   * The bank's post back from its 3D gate, verified (hash, order, amount, currency) before
   * anything is kept; answers as completeChallenge does. 400 SVC-3DS-3601 when refused.
   */
  completeGateCallback?(
    deps: D,
    p: { paymentId: string; correlationId: string; fields: Record<string, string> },
  ): Promise<{ pares: string; correlationId: string }>
  /** The ACS: checks the buyer's OTP and signs the outcome as `pares` (compact JWS). */
  completeChallenge(
    deps: D,
    p: { paymentId: string; merchantId: string; correlationId: string; otp: string },
  ): Promise<{ pares: string; correlationId: string }>
  /** 400 SVC-3DS-3601 for a forged, expired or mismatched pares. */
  verifyPares(
    deps: D,
    p: { paymentId: string; correlationId: string; pares: string },
  ): Promise<{ authenticated: boolean }>
  authorize(
    deps: D,
    p: {
      paymentId: string
      merchantId: string
      cardToken: string
      amount: number
      installmentCount: number
      capture: boolean
    },
  ): Promise<AuthorizeResult>
  inquire(deps: D, p: { paymentId: string }): Promise<AuthorizeResult>
  /**
   * One capture of the authorization, keyed by our capture id (a retry is a no-op). Several
   * may follow one another up to the authorized amount; `final` releases the rest.
   */
  capture(
    deps: D,
    p: { paymentId: string; reference: string; captureId: string; amount: number; final: boolean },
  ): Promise<void>
  /** Releases the uncaptured rest of the authorization (all of it when nothing is captured). */
  void(deps: D, p: { paymentId: string; reference: string }): Promise<void>
  refund(
    deps: D,
    p: { paymentId: string; refundId: string; reference: string; amount: number },
  ): Promise<{ status: 'completed' | 'pending'; bankRefundId: string }>
  refundStatus(
    deps: D,
    p: { refundId: string },
  ): Promise<{ status: 'completed' | 'pending' | 'failed'; bankRefundId: string }>
}
