import { electronicFormatIBAN, isValidIBAN } from 'ibantools'
import { normalizeIban } from '../merchants/index.ts'
import type { PayoutRail } from './payouts.table.ts'

// Pure rules for one payout destination row: validation reasons and the masks the API shows
// instead of a destination. No I/O here except through the `cardOwned` lookup passed in.

export const RAILS: readonly PayoutRail[] = ['fast', 'eft', 'card']
export const DRAFT_ROWS_MAX = 1000
export const HOLDER_NAME_LENGTH_MAX = 140
/** Per row: keeps a 1000-row draft's total far below 2^53 (the session maximum, too). */
export const DRAFT_ROW_AMOUNT_MAX_MINOR = 10_000_000_000

export interface DraftRowInput {
  rail?: string
  dest?: string
  holderName?: string
  amountMinor?: number
  currency?: string
}

export interface CheckedRow {
  valid: boolean
  errors: string[]
  rail: PayoutRail | null
  holderName: string | null
  amountMinor: number | null
  /** Normalised IBAN or card token when valid, else null (an invalid dest is never kept). */
  dest: string | null
  destMasked: string | null
}

function isRail(value: string | undefined): value is PayoutRail {
  return value !== undefined && (RAILS as readonly string[]).includes(value)
}

/** Why an IBAN is refused, most specific first; undefined when it is a valid Turkish IBAN. */
export function ibanProblem(raw: string): string | undefined {
  if (normalizeIban(raw)) return undefined
  const iban = electronicFormatIBAN(raw) ?? ''
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]+$/.test(iban)) return 'dest: is not an IBAN'
  if (!iban.startsWith('TR')) return 'dest: IBAN must be a Turkish (TR) IBAN'
  if (iban.length !== 26) return 'dest: a TR IBAN has 26 characters'
  if (!isValidIBAN(iban)) return 'dest: IBAN check digits (mod-97) do not match'
  return 'dest: is not a valid TR IBAN'
}

/** First 4 and last 4 of a valid IBAN, the middle starred: TR33******************1326. */
export function maskIban(iban: string): string {
  return `${iban.slice(0, 4)}${'*'.repeat(Math.max(0, iban.length - 8))}${iban.slice(-4)}`
}

export function maskCard(last4: string): string {
  return `**** **** **** ${last4}`
}

/** Any other text: only its last 4 characters survive (or none when it is that short). */
export function maskOpaque(value: string): string {
  const trimmed = value.trim()
  if (trimmed.length <= 4) return '*'.repeat(trimmed.length)
  return `${'*'.repeat(Math.min(trimmed.length - 4, 30))}${trimmed.slice(-4)}`
}

/**
 * Checks one row. `cardLast4` answers for a card token: its last 4 digits when the token
 * belongs to this merchant and is active, undefined otherwise.
 */
export function checkDraftRow(
  row: DraftRowInput,
  cardLast4: (token: string) => string | undefined,
): CheckedRow {
  const errors: string[] = []
  const rail = isRail(row.rail) ? row.rail : null
  if (!rail) errors.push('rail: must be one of fast, eft, card')

  let dest: string | null = null
  let destMasked: string | null = null
  const rawDest = row.dest?.trim() ?? ''
  if (rawDest === '') {
    errors.push('dest: is required')
  } else if (rail === 'card') {
    const last4 = /^tok_[0-9a-z]{1,64}$/.test(rawDest) ? cardLast4(rawDest) : undefined
    if (last4 === undefined) {
      errors.push('dest: is not an active card token of this merchant')
      destMasked = maskOpaque(rawDest)
    } else {
      dest = rawDest
      destMasked = maskCard(last4)
    }
  } else {
    const iban = normalizeIban(rawDest)
    if (iban) {
      dest = iban
      destMasked = maskIban(iban)
    } else {
      // For an unknown rail the dest is still checked as an IBAN, so the report lists
      // every problem of the row at once.
      errors.push(ibanProblem(rawDest) ?? 'dest: is not a valid TR IBAN')
      destMasked = maskOpaque(rawDest)
    }
  }

  const holderName = row.holderName?.trim() ?? ''
  if (holderName === '') errors.push('holderName: is required')
  else if (holderName.length > HOLDER_NAME_LENGTH_MAX) {
    errors.push(`holderName: at most ${HOLDER_NAME_LENGTH_MAX} characters`)
  }

  const amount = row.amountMinor
  const amountOk =
    amount !== undefined &&
    Number.isSafeInteger(amount) &&
    amount > 0 &&
    amount <= DRAFT_ROW_AMOUNT_MAX_MINOR
  if (amount === undefined) errors.push('amountMinor: is required')
  else if (!Number.isInteger(amount)) errors.push('amountMinor: must be an integer of kuruş')
  else if (amount <= 0) errors.push('amountMinor: must be greater than 0')
  else if (!amountOk) errors.push(`amountMinor: at most ${DRAFT_ROW_AMOUNT_MAX_MINOR}`)

  if (row.currency !== 'TRY') errors.push('currency: must be TRY')

  const valid = errors.length === 0
  return {
    valid,
    errors,
    rail,
    holderName: holderName === '' ? null : holderName.slice(0, HOLDER_NAME_LENGTH_MAX),
    // Reported as given (0, negative) so the merchant sees the offending value.
    amountMinor: amount !== undefined && Number.isSafeInteger(amount) ? amount : null,
    dest: valid ? dest : null,
    destMasked,
  }
}
