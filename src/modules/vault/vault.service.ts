import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { signedCursor } from '../../platform/cursor.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { validationError, type FieldIssue } from '../../platform/errors.ts'
import { newId } from '../../platform/ids.ts'
import { cardKindOf, luhnValid, type CardBrand, type CardType } from './cards.ts'
import { cardFingerprint, masterKeyId, openPan, rewrapDek, sealPan } from './vault.crypto.ts'
import { vaultError } from './vault.errors.ts'
import * as repo from './vault.repository.ts'
import type {
  CardAccessOp,
  CardAccessResult,
  CardAccessRow,
  CardTokenRow,
  CardTokenStatus,
} from './vault.table.ts'

export interface TokenizeCardInput {
  cardNumber: string
  expMonth: number
  expYear: number
  cvc: string
  holderName: string
}

export interface CardTokenView {
  cardToken: string
  last4: string
  bin: string
  brand: CardBrand
  cardType: CardType
  expMonth: number
  expYear: number
  /** Keyed per merchant (vault.crypto.ts cardFingerprint): same card, same merchant, same value. */
  fingerprint: string
}

export interface CardTokenInfo extends CardTokenView {
  merchantId: string
  holderName: string
  /** Made in a buyer's browser (Kuruş.js): one order only, 15 minutes (claimCardToken). */
  singleUse: boolean
  status: CardTokenStatus
  customerId: string | null
  createdAt: Date
}

export interface DetokenizedCard {
  pan: string
  expMonth: number
  expYear: number
  holderName: string
}

/** The services allowed to see a PAN. Only the acquirer sends card numbers to the bank. */
export type DetokenizeCaller = 'acquirer'
const DETOKENIZE_CALLERS: ReadonlySet<string> = new Set<DetokenizeCaller>(['acquirer'])

export interface AuditRow {
  op: CardAccessOp
  cardToken: string
  callerService: string
  result: CardAccessResult
  createdAt: Date
}

const HOLDER_NAME_CHARS_MAX = 100
/** Cards are issued for at most about 10 years; 20 leaves room and catches typos. */
const EXPIRY_YEARS_AHEAD_MAX = 20

interface ValidCard {
  pan: string
  brand: CardBrand
  cardType: CardType
  holderName: string
}

/**
 * Every rule a card must pass before it is stored, all reported at once. Reasons never
 * quote the submitted value: it may be a card number.
 */
function validateCard(input: TokenizeCardInput, now: Date): ValidCard {
  const issues: FieldIssue[] = []
  const raw: unknown = input.cardNumber
  // Spaces and dashes are how people type card numbers; only the digits matter.
  const pan = typeof raw === 'string' ? raw.replace(/[\s-]/g, '') : ''
  if (!/^\d{12,19}$/.test(pan))
    issues.push({ field: 'cardNumber', reason: 'must be 12 to 19 digits' })
  else if (!luhnValid(pan)) issues.push({ field: 'cardNumber', reason: 'fails the Luhn check' })
  const kind = cardKindOf(pan.slice(0, 6))

  const { expMonth, expYear } = input
  const nowYear = now.getUTCFullYear()
  const nowMonth = now.getUTCMonth() + 1
  const monthOk = Number.isInteger(expMonth) && expMonth >= 1 && expMonth <= 12
  const yearOk = Number.isInteger(expYear) && expYear >= 2000 && expYear <= 2199
  if (!monthOk) issues.push({ field: 'expMonth', reason: 'must be an integer from 1 to 12' })
  if (!yearOk) issues.push({ field: 'expYear', reason: 'must be a four-digit year' })
  if (monthOk && yearOk) {
    // A card is valid through the last day of its expiry month.
    if (expYear < nowYear) issues.push({ field: 'expYear', reason: 'card has expired' })
    else if (expYear === nowYear && expMonth < nowMonth)
      issues.push({ field: 'expMonth', reason: 'card has expired' })
    else if (expYear > nowYear + EXPIRY_YEARS_AHEAD_MAX)
      issues.push({ field: 'expYear', reason: 'is too far in the future' })
  }

  const cvcDigits = kind.brand === 'amex' ? 4 : 3
  if (typeof input.cvc !== 'string' || !new RegExp(`^\\d{${cvcDigits}}$`).test(input.cvc)) {
    issues.push({ field: 'cvc', reason: `must be ${cvcDigits} digits` })
  }

  const holderName = typeof input.holderName === 'string' ? input.holderName.trim() : ''
  if (holderName.length === 0 || holderName.length > HOLDER_NAME_CHARS_MAX) {
    issues.push({ field: 'holderName', reason: `must be 1 to ${HOLDER_NAME_CHARS_MAX} characters` })
  } else if (/\d{12,}/.test(holderName.replace(/[\s-]/g, ''))) {
    // A card number typed into the name field would be stored in clear: refuse it.
    issues.push({ field: 'holderName', reason: 'must not contain a card number' })
  }

  const first = issues[0]
  if (first) throw vaultError('invalid_card', `${first.field}: ${first.reason}`, issues)
  return { pan, brand: kind.brand, cardType: kind.cardType, holderName }
}

/** What a token's views read: no sealed PAN, no key (cardTokenJsonOf's columns). */
type PublicTokenRow = Pick<
  CardTokenRow,
  | 'id'
  | 'merchant_id'
  | 'fingerprint'
  | 'last4'
  | 'bin'
  | 'brand'
  | 'card_type'
  | 'exp_month'
  | 'exp_year'
  | 'holder_name'
  | 'status'
  | 'customer_id'
  | 'created_at'
  | 'single_use'
>

function rowToView(row: PublicTokenRow): CardTokenView {
  return {
    cardToken: row.id,
    last4: row.last4,
    bin: row.bin,
    brand: row.brand,
    cardType: row.card_type,
    expMonth: row.exp_month,
    expYear: row.exp_year,
    fingerprint: row.fingerprint,
  }
}

function rowToInfo(row: PublicTokenRow): CardTokenInfo {
  return {
    ...rowToView(row),
    merchantId: row.merchant_id,
    holderName: row.holder_name,
    singleUse: row.single_use,
    status: row.status,
    customerId: row.customer_id,
    createdAt: row.created_at,
  }
}

/** Stores a card and returns its token. The CVC is checked here and never kept. */
export async function tokenizeCard(
  deps: Deps,
  merchantId: string,
  input: TokenizeCardInput,
  options: {
    /** A browser token (Kuruş.js): single-use, and unusable after `expiresAt`. */
    expiresAt?: Date
    /** The signed call's answer, committed with the token (decision 0035). */
    record?: RecordAnswer<Tx, CardTokenView> | undefined
  } = {},
): Promise<CardTokenView> {
  const card = validateCard(input, deps.clock.now())
  const id = newId('tok')
  const sealed = sealPan(deps.config.masterKey, id, card.pan)
  const row: CardTokenRow = {
    id,
    merchant_id: merchantId,
    pan_enc: sealed.panEnc,
    dek_wrapped: sealed.dekWrapped,
    kek_id: sealed.kekId,
    fingerprint: cardFingerprint(deps.config.masterKey, merchantId, card.pan),
    last4: card.pan.slice(-4),
    bin: card.pan.slice(0, 6),
    brand: card.brand,
    card_type: card.cardType,
    exp_month: input.expMonth,
    exp_year: input.expYear,
    holder_name: card.holderName,
    status: 'active',
    customer_id: null,
    created_at: deps.clock.now(),
    revoked_at: null,
    single_use: options.expiresAt !== undefined,
    expires_at: options.expiresAt ?? null,
    bound_transaction_id: null,
  }
  const view = rowToView(row)
  const record = options.record
  if (!record) {
    await repo.insertCardToken(deps.db, row)
    return view
  }
  await transact(deps.db, async (tx) => {
    await repo.insertCardToken(tx, row)
    await record(tx, view)
  })
  return view
}

/** The token's non-secret details; 404 when missing or another merchant's. */
export async function getCardToken(
  deps: Deps,
  merchantId: string,
  cardToken: string,
): Promise<CardTokenInfo> {
  const row = await repo.findCardTokenById(deps.db, merchantId, cardToken)
  if (!row) throw vaultError('card_token_not_found')
  return rowToInfo(row)
}

/**
 * For another module's statement: `cardTokenColumn(db, merchantId, cardToken)` selects the
 * token as one JSON column, `cardTokenFromColumn(column)` turns it into what getCardToken
 * answers, 404 included (one round trip instead of two).
 */
export const cardTokenColumn = repo.cardTokenJsonOf

export function cardTokenFromColumn(
  column: (Omit<PublicTokenRow, 'created_at'> & { created_at: Date | string }) | null,
): CardTokenInfo {
  if (!column) throw vaultError('card_token_not_found')
  // JSON carries the timestamp as text.
  return rowToInfo({ ...column, created_at: new Date(column.created_at) })
}

/**
 * A single-use (browser) token is charged for one order: the first charge binds it to its
 * transactionId, in one conditional update, so two orders racing for it cannot both have it;
 * a repeat of that order's charge passes. Unbound and past its 15 minutes, it is refused.
 * 409 SVC-STATE-3401 either way; a server-made token passes untouched.
 */
export async function claimCardToken(
  deps: Deps,
  merchantId: string,
  cardToken: string,
  transactionId: string,
): Promise<void> {
  const bound = await repo.bindSingleUseToken(
    deps.db,
    merchantId,
    cardToken,
    transactionId,
    deps.clock.now(),
  )
  if (bound) return
  const row = await repo.findCardTokenById(deps.db, merchantId, cardToken)
  if (!row) throw vaultError('card_token_not_found')
  if (!row.single_use) return
  throw vaultError('card_token_used')
}

// What the audit row records as the token: a well-formed id, or a placeholder so that a
// caller who passes something else (a card number by mistake) cannot write it to the log.
function auditedToken(cardToken: string): string {
  return /^tok_[0-9a-z]{1,64}$/.test(cardToken) ? cardToken : 'tok_invalid'
}

/**
 * The card number behind a token, for the acquirer only (README). Every call writes an
 * audit row in the same transaction that reads the token, before the PAN is decrypted: if
 * the audit insert fails, no PAN comes out. A refused call is audited as `denied` and then
 * throws: 404 SVC-RES-3301 when the token is missing or another merchant's, 409
 * SVC-STATE-3401 when it is revoked.
 */
export async function detokenize(
  deps: Deps,
  p: { merchantId: string; cardToken: string; callerService: DetokenizeCaller },
): Promise<DetokenizedCard> {
  const allowed = DETOKENIZE_CALLERS.has(p.callerService)
  const row = await repo.findCardTokenAudited(deps.db, {
    merchantId: p.merchantId,
    id: p.cardToken,
    auditedToken: auditedToken(p.cardToken),
    callerService: p.callerService,
    allowed,
    at: deps.clock.now(),
  })
  const denial = !allowed
    ? ('caller' as const)
    : !row
      ? ('not_found' as const)
      : row.status !== 'active'
        ? ('revoked' as const)
        : undefined
  const outcome =
    denial || !row
      ? { denial: denial ?? 'not_found' }
      : {
          card: {
            pan: openPan([deps.config.masterKey, ...deps.config.masterKeyPrevious], row.id, {
              panEnc: row.pan_enc,
              dekWrapped: row.dek_wrapped,
              kekId: row.kek_id,
            }),
            expMonth: row.exp_month,
            expYear: row.exp_year,
            holderName: row.holder_name,
          },
        }
  // The denial is thrown after the audit row is written, so that it is kept.
  if ('card' in outcome) return outcome.card
  assert(outcome.denial !== 'caller', `detokenize refused for caller ${p.callerService}`)
  throw vaultError(outcome.denial === 'revoked' ? 'card_token_revoked' : 'card_token_not_found')
}

/**
 * Attaches a token to a customer inside the caller's transaction. Binding to the same
 * customer again is a no-op; another customer is 409 SVC-RES-3302; a revoked token 409
 * SVC-STATE-3401.
 */
export async function bindCardToCustomer(
  tx: Tx,
  merchantId: string,
  cardToken: string,
  customerId: string,
): Promise<void> {
  const row = await repo.lockCardTokenById(tx, merchantId, cardToken)
  if (!row) throw vaultError('card_token_not_found')
  if (row.customer_id === customerId) return
  if (row.customer_id !== null) throw vaultError('card_bound_to_other_customer')
  if (row.status !== 'active') throw vaultError('card_token_revoked')
  await repo.updateCardTokenCustomer(tx, row.id, customerId)
}

/** Revokes a token for good inside the caller's transaction; revoking twice is a no-op. */
export async function revokeCardToken(
  tx: Tx,
  merchantId: string,
  cardToken: string,
): Promise<void> {
  const row = await repo.lockCardTokenById(tx, merchantId, cardToken)
  if (!row) throw vaultError('card_token_not_found')
  await repo.updateCardTokenRevoked(tx, row.id)
}

// The card-access log's cursor: its (created_at, numeric id) position, bound to the merchant.
// Same payload and key as before the shared helper, so cursors handed out earlier still verify.
const cardAccessCursor = signedCursor('card-access', 'kurus/vault/card-access-cursor', {
  write: (at: { createdAt: Date; id: number }) => ({ t: at.createdAt.toISOString(), i: at.id }),
  read: (c) =>
    typeof c['t'] === 'string' && !Number.isNaN(Date.parse(c['t'])) && Number.isSafeInteger(c['i'])
      ? { createdAt: new Date(c['t']), id: c['i'] as number }
      : undefined,
})

export const CARD_ACCESS_LIMIT_MAX = 100

/**
 * The merchant's detokenization audit, newest first, in pages of `limit`. The cursor is
 * signed and names its merchant: an edited cursor, or another merchant's, is a 400.
 */
export async function listCardAccess(
  deps: Deps,
  merchantId: string,
  q: { from?: Date; to?: Date; limit: number; cursor?: string },
): Promise<{ items: AuditRow[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= CARD_ACCESS_LIMIT_MAX, 'limit')
  if (q.from && q.to && q.from.getTime() > q.to.getTime()) {
    throw validationError('from', 'must not be after to')
  }
  return cardAccessCursor.page(deps.config.masterKey, merchantId, q, {
    fetch: (before, limit) =>
      repo.findCardAccessPage(deps.readDb, { merchantId, from: q.from, to: q.to, before, limit }),
    view: (rows) => rows.map(accessRowToAuditRow),
    position: (row) => ({ createdAt: row.created_at, id: row.id }),
  })
}

function accessRowToAuditRow(row: CardAccessRow): AuditRow {
  return {
    op: row.op,
    cardToken: row.card_token,
    callerService: row.caller_service,
    result: row.result,
    createdAt: row.created_at,
  }
}

export interface RotationReport {
  /** The current master key's id: every re-wrapped row is under it now. */
  kekId: string
  rewrapped: number
  /** Rows under a key that is neither current nor in KURUS_MASTER_KEY_PREVIOUS (by kek id). */
  unknown: Record<string, number>
}

const REWRAP_BATCH = 500

/**
 * Master-key rotation: re-wraps the data key of every card token still wrapped under a previous
 * master key (config.masterKeyPrevious) under the current one, in short batches. PAN ciphertexts
 * are untouched. Safe to run while serving (rows are locked per batch; detokenization reads
 * either wrapping) and to run again. Rows under a key it does not hold are reported, not lost.
 */
export async function rotateMasterKey(
  deps: Pick<Deps, 'db' | 'config'>,
  batchSize = REWRAP_BATCH,
): Promise<RotationReport> {
  const current = deps.config.masterKey
  const kekId = masterKeyId(current)
  const previous = new Map(deps.config.masterKeyPrevious.map((k) => [masterKeyId(k), k]))
  const report: RotationReport = { kekId, rewrapped: 0, unknown: {} }
  for (;;) {
    const keep = [kekId, ...Object.keys(report.unknown)]
    const done = await transact(deps.db, async (tx) => {
      const rows = await repo.lockRowsToRewrap(tx, keep, batchSize)
      for (const row of rows) {
        const from = previous.get(row.kek_id)
        if (!from) {
          report.unknown[row.kek_id] = (report.unknown[row.kek_id] ?? 0) + 1
          continue
        }
        const wrapped = rewrapDek(from, current, row.id, {
          dekWrapped: row.dek_wrapped,
          kekId: row.kek_id,
        })
        await repo.updateWrappedDek(tx, row.id, row.kek_id, wrapped)
        report.rewrapped += 1
      }
      return rows.length < batchSize
    })
    if (done) break
  }
  // Rows under unknown keys were counted once per batch that saw them; count them exactly.
  for (const id of Object.keys(report.unknown)) {
    report.unknown[id] = await repo.countRowsUnderKek(deps.db, id)
  }
  return report
}
