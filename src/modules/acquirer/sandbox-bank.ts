import { randomInt } from 'node:crypto'
import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { safeEqual } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import { newUuid } from '../../platform/ids.ts'
import { assertMinor } from '../../platform/money.ts'
import { detokenize, type DetokenizedCard } from '../vault/index.ts'
import { readPares, signPares } from './acs.ts'
import { acquirerError } from './acquirer.errors.ts'
import type { Acquirer, AuthorizeResult, ThreeDsStart } from './acquirer.port.ts'
import * as repo from './acquirer.repository.ts'
import type { OperationRow, RefundMode, ThreeDsRow } from './acquirer.table.ts'
import { binInfo } from './bins.ts'

// The sandbox bank and its ACS behind the Acquirer port. It keeps its own books in its own
// tables, as a real bank would on its side, so idempotency and the asynchronous outcomes
// (lost answers, late refunds) survive restarts and work across processes.
// A card number exists only inside authorize/start3ds, fetched from the vault at that
// moment; the books keep bin and last4.

interface CardBehaviour {
  threeDs: 'frictionless' | 'challenge' | 'challenge_fails'
  declineCode: string | null
  refundMode: RefundMode
  /** The bank approves but its answer is lost: the caller sees `unknown`. */
  answerLost: boolean
}

const STANDARD: CardBehaviour = {
  threeDs: 'frictionless',
  declineCode: null,
  refundMode: 'sync',
  answerLost: false,
}

// CONTRACT.md "Sandbox acquirer: test cards". Several share BIN 400000, so behaviour is
// looked up by the full number; any other card behaves as STANDARD.
const TEST_CARDS: Readonly<Record<string, Partial<CardBehaviour>>> = {
  '5528790000000008': { threeDs: 'challenge' },
  '4000000000003063': { threeDs: 'challenge_fails' },
  '4000000000000002': { declineCode: 'card_declined' },
  '4000000000009995': { declineCode: 'insufficient_funds' },
  '4000000000000259': { refundMode: 'async_completes' },
  '4000000000000697': { refundMode: 'async_fails' },
  '4000000000000119': { answerLost: true },
}

const PASSING_OTP = '123456'

function behaviourOf(pan: string): CardBehaviour {
  return { ...STANDARD, ...TEST_CARDS[pan] }
}

function digits(n: number): string {
  return Array.from({ length: n }, () => String(randomInt(10))).join('')
}

/** Why the bank refuses this card for this authorization, or null to approve. */
function declineCodeFor(
  card: DetokenizedCard,
  behaviour: CardBehaviour,
  installmentCount: number,
  now: Date,
): string | null {
  if (behaviour.declineCode) return behaviour.declineCode
  const month = now.getUTCFullYear() * 12 + now.getUTCMonth() + 1
  if (card.expYear * 12 + card.expMonth < month) return 'expired_card'
  if (!binInfo(card.pan.slice(0, 6)).installments.includes(installmentCount)) {
    return 'installment_not_supported'
  }
  return null
}

/** What the bank recorded for the authorization (what an inquiry returns). */
function recordedOutcome(row: OperationRow): AuthorizeResult {
  if (row.status === 'approved') {
    assert(row.auth_code && row.reference, 'an approval has an auth code and a reference')
    return { status: 'approved', authCode: row.auth_code, reference: row.reference }
  }
  assert(row.status === 'declined' && row.decline_code, 'an authorization is approved or declined')
  return { status: 'declined', declineCode: row.decline_code }
}

/** What the caller hears: the first answer again, lost again for the timeout card. */
function answerOf(row: OperationRow, merchantId: string): AuthorizeResult {
  assert(row.merchant_id === merchantId, `payment ${row.payment_id} belongs to another merchant`)
  return row.response_lost ? { status: 'unknown' } : recordedOutcome(row)
}

function startOf(row: ThreeDsRow, merchantId: string): ThreeDsStart {
  assert(row.merchant_id === merchantId, `payment ${row.payment_id} belongs to another merchant`)
  return row.kind === 'frictionless'
    ? { kind: 'frictionless' }
    : { kind: 'challenge', correlationId: row.correlation_id }
}

/** What the bank has captured of the authorization: all of it at once, or its captures. */
function capturedAmount(auth: OperationRow, captures: readonly OperationRow[]): number {
  return auth.capture ? auth.amount : captures.reduce((sum, c) => sum + c.amount, 0)
}

function assertAmount(amount: number): void {
  assertMinor(amount)
  assert(amount > 0, 'amount must be positive')
}

// A frictionless charge asks the ACS and then the bank in the same request, a few
// milliseconds apart. The ACS's detokenized card is handed to the bank through this stash
// (per database, taken once, gone after CARD_HANDOVER_MS) rather than detokenized a second
// time: one vault read and one synchronous audit commit less per charge (docs/performance.md).
// Anything else — a challenge, a retry, another process — detokenizes as before.
const CARD_HANDOVER_MS = 10_000
const HANDOVERS_MAX = 10_000
interface Handover {
  cardToken: string
  card: DetokenizedCard
  untilMs: number
}
const handovers = new WeakMap<object, Map<string, Handover>>()

function handoverOf(deps: Deps) {
  let map = handovers.get(deps.db)
  if (!map) {
    map = new Map()
    handovers.set(deps.db, map)
  }
  return map
}

function handOver(deps: Deps, paymentId: string, cardToken: string, card: DetokenizedCard): void {
  const map = handoverOf(deps)
  const now = performance.now()
  if (map.size >= HANDOVERS_MAX) {
    for (const [id, held] of map) if (held.untilMs <= now) map.delete(id)
    if (map.size >= HANDOVERS_MAX) map.clear()
  }
  map.set(paymentId, { cardToken, card, untilMs: now + CARD_HANDOVER_MS })
}

function takeHandedOver(
  deps: Deps,
  paymentId: string,
  cardToken: string,
): DetokenizedCard | undefined {
  const map = handoverOf(deps)
  const held = map.get(paymentId)
  if (!held) return undefined
  map.delete(paymentId)
  return held.untilMs > performance.now() && held.cardToken === cardToken ? held.card : undefined
}

export const sandboxBank: Acquirer<Deps> = {
  async start3ds(deps, p) {
    assertAmount(p.amount)
    // Called once per payment by the charge path; a repeat (after a crash) detokenizes again,
    // which the audit shows, and gets the first row's answer.
    const card = await detokenize(deps, {
      merchantId: p.merchantId,
      cardToken: p.cardToken,
      callerService: 'acquirer',
    })
    const { threeDs } = behaviourOf(card.pan)
    // A concurrent start for the same payment may have stored its row first: that one counts.
    const stored = await repo.insertThreeDsOrGet(deps.db, {
      correlation_id: newUuid(),
      payment_id: p.paymentId,
      merchant_id: p.merchantId,
      card_token: p.cardToken,
      kind: threeDs === 'frictionless' && p.forceChallenge !== true ? 'frictionless' : 'challenge',
      // A challenge the requestor mandated on a frictionless card passes with the right OTP.
      challenge_passes: threeDs !== 'challenge_fails',
      result: null,
      amount: p.amount,
      created_at: deps.clock.now(),
      completed_at: null,
    })
    if (stored.kind === 'frictionless' && stored.card_token === p.cardToken) {
      handOver(deps, p.paymentId, p.cardToken, card)
    }
    return startOf(stored, p.merchantId)
  },

  async completeChallenge(deps, p) {
    const row = await repo.findThreeDsByCorrelation(deps.db, p.correlationId)
    if (
      !row ||
      row.kind !== 'challenge' ||
      row.payment_id !== p.paymentId ||
      row.merchant_id !== p.merchantId
    ) {
      throw acquirerError('correlation_invalid')
    }
    const result = row.challenge_passes && safeEqual(p.otp, PASSING_OTP) ? 'Y' : 'N'
    const now = deps.clock.now()
    await repo.updateThreeDsResult(deps.db, row.correlation_id, result, now)
    const claims = { paymentId: row.payment_id, correlationId: row.correlation_id, result } as const
    return {
      pares: await signPares(deps.config.masterKey, claims, now),
      correlationId: row.correlation_id,
    }
  },

  async verifyPares(deps, p) {
    const claims = await readPares(deps.config.masterKey, p.pares, deps.clock.now())
    if (!claims || claims.paymentId !== p.paymentId || claims.correlationId !== p.correlationId) {
      throw acquirerError('pares_invalid')
    }
    const row = await repo.findThreeDsByCorrelation(deps.db, p.correlationId)
    if (!row || row.kind !== 'challenge' || row.payment_id !== p.paymentId) {
      throw acquirerError('pares_invalid')
    }
    return { authenticated: claims.result === 'Y' }
  },

  async authorize(deps, p) {
    assertAmount(p.amount)
    assert(
      Number.isInteger(p.installmentCount) && p.installmentCount >= 1 && p.installmentCount <= 12,
      'installmentCount must be 1..12',
    )
    // The card the ACS just read for this payment (a frictionless charge): no second read.
    // A repeat of the authorization still gets the first answer, from the insert below.
    let card = takeHandedOver(deps, p.paymentId, p.cardToken)
    if (!card) {
      // Idempotent per payment: a retry gets the first answer and the card is not detokenized.
      const existing = await repo.findPaymentOperation(deps.db, 'authorize', p.paymentId)
      if (existing) return answerOf(existing, p.merchantId)
      // A missing or revoked token throws here (404 / 409 from the vault); the bank records
      // nothing, since no authorization was attempted.
      card = await detokenize(deps, {
        merchantId: p.merchantId,
        cardToken: p.cardToken,
        callerService: 'acquirer',
      })
    }
    const behaviour = behaviourOf(card.pan)
    const now = deps.clock.now()
    const declineCode = declineCodeFor(card, behaviour, p.installmentCount, now)
    // When two calls race, the row that won is the one answer for this payment.
    const stored = await repo.insertPaymentOperationOrGet(deps.db, {
      id: newUuid(),
      op: 'authorize',
      payment_id: p.paymentId,
      refund_id: null,
      merchant_id: p.merchantId,
      card_token: p.cardToken,
      bin: card.pan.slice(0, 6),
      last4: card.pan.slice(-4),
      amount: p.amount,
      installment_count: p.installmentCount,
      capture: p.capture,
      status: declineCode ? 'declined' : 'approved',
      decline_code: declineCode,
      auth_code: declineCode ? null : digits(6),
      reference: declineCode ? null : digits(12),
      bank_refund_id: null,
      refund_mode: behaviour.refundMode,
      response_lost: behaviour.answerLost && !declineCode,
      created_at: now,
      updated_at: now,
    })
    return answerOf(stored, p.merchantId)
  },

  async inquire(deps, p) {
    const row = await repo.findPaymentOperation(deps.db, 'authorize', p.paymentId)
    // Nothing reached the bank, so nothing was charged: a definite, safe "no".
    if (!row) return { status: 'declined', declineCode: 'authorization_not_found' }
    return recordedOutcome(row)
  },

  async capture(deps, p) {
    assertAmount(p.amount)
    await transact(deps.db, async (tx) => {
      const auth = await repo.lockAuthorization(tx, p.paymentId)
      if (auth?.status !== 'approved' || auth.reference !== p.reference) {
        throw acquirerError('authorization_not_found')
      }
      const captures = await repo.findCaptureOperations(tx, p.paymentId)
      // The same capture again is a no-op; the same id with another amount is a conflict.
      const same = captures.find((c) => c.capture_id === p.captureId)
      if (same) {
        if (same.amount === p.amount) return
        throw acquirerError('not_capturable')
      }
      if (auth.capture) {
        // Captured at authorization: capturing it all again is a no-op.
        if (p.amount === auth.amount) return
        throw acquirerError('not_capturable')
      }
      // After a void or a final capture nothing is left open; never beyond the authorization.
      const closed =
        captures.some((c) => c.final === true) ||
        (await repo.findPaymentOperation(tx, 'void', p.paymentId)) !== undefined
      if (closed || capturedAmount(auth, captures) + p.amount > auth.amount) {
        throw acquirerError('not_capturable')
      }
      const now = deps.clock.now()
      await repo.insertCaptureOperation(tx, {
        id: newUuid(),
        op: 'capture',
        payment_id: p.paymentId,
        capture_id: p.captureId,
        final: p.final,
        refund_id: null,
        merchant_id: auth.merchant_id,
        amount: p.amount,
        status: 'completed',
        reference: auth.reference,
        refund_mode: auth.refund_mode,
        created_at: now,
        updated_at: now,
      })
    })
  },

  async void(deps, p) {
    await transact(deps.db, async (tx) => {
      const auth = await repo.lockAuthorization(tx, p.paymentId)
      if (auth?.status !== 'approved' || auth.reference !== p.reference) {
        throw acquirerError('authorization_not_found')
      }
      if (await repo.findPaymentOperation(tx, 'void', p.paymentId)) return
      // A void releases what is not captured; after a final capture nothing is.
      const captures = await repo.findCaptureOperations(tx, p.paymentId)
      const captured = capturedAmount(auth, captures)
      if (captured >= auth.amount || captures.some((c) => c.final === true)) {
        throw acquirerError('not_voidable')
      }
      const now = deps.clock.now()
      await repo.insertPaymentOperationOnce(tx, {
        id: newUuid(),
        op: 'void',
        payment_id: p.paymentId,
        refund_id: null,
        merchant_id: auth.merchant_id,
        amount: auth.amount - captured,
        status: 'completed',
        reference: auth.reference,
        refund_mode: auth.refund_mode,
        created_at: now,
        updated_at: now,
      })
    })
  },

  async refund(deps, p) {
    assertAmount(p.amount)
    return transact(deps.db, async (tx) => {
      // The authorization's lock serialises refunds of one payment, so two concurrent
      // refunds cannot both fit under the captured amount.
      const auth = await repo.lockAuthorization(tx, p.paymentId)
      const prior = await repo.findRefundOperation(tx, p.refundId)
      if (prior) {
        assert(prior.payment_id === p.paymentId, `refund ${p.refundId} is of another payment`)
        assert(prior.bank_refund_id, 'a refund has a bank refund id')
        // Same refund id, same refund, never a second one. Its state so far: completed, or
        // pending until settled (a failed one too: refundStatus is what reports the failure).
        return {
          status: prior.status === 'completed' ? 'completed' : 'pending',
          bankRefundId: prior.bank_refund_id,
        }
      }
      if (auth?.status !== 'approved' || auth.reference !== p.reference) {
        throw acquirerError('authorization_not_found')
      }
      const captured = capturedAmount(auth, await repo.findCaptureOperations(tx, p.paymentId))
      if (captured === 0) throw acquirerError('not_refundable')
      if ((await repo.sumActiveRefunds(tx, p.paymentId)) + p.amount > captured) {
        throw acquirerError('refund_exceeds_captured')
      }
      const status = auth.refund_mode === 'sync' ? 'completed' : 'pending'
      const bankRefundId = newUuid()
      const now = deps.clock.now()
      await repo.insertRefundOperation(tx, {
        id: newUuid(),
        op: 'refund',
        payment_id: p.paymentId,
        refund_id: p.refundId,
        merchant_id: auth.merchant_id,
        amount: p.amount,
        status,
        reference: auth.reference,
        bank_refund_id: bankRefundId,
        refund_mode: auth.refund_mode,
        created_at: now,
        updated_at: now,
      })
      return { status, bankRefundId }
    })
  },

  async refundStatus(deps, p) {
    return transact(deps.db, async (tx) => {
      const row = await repo.lockRefundOperation(tx, p.refundId)
      if (!row) throw acquirerError('refund_not_found')
      assert(row.bank_refund_id, 'a refund has a bank refund id')
      // An asynchronous refund settles at the first status check after it was made.
      if (row.status === 'pending') {
        const final = row.refund_mode === 'async_fails' ? 'failed' : 'completed'
        await repo.updateRefundStatus(tx, p.refundId, final, deps.clock.now())
        return { status: final, bankRefundId: row.bank_refund_id }
      }
      assert(row.status === 'completed' || row.status === 'failed', 'refund status')
      return { status: row.status, bankRefundId: row.bank_refund_id }
    })
  },
}
