import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { notFound, validationError } from '../../platform/errors.ts'
import { listDashboardMembers, normalizeIban } from '../merchants/index.ts'
import { sendMail } from '../mail/index.ts'
import { ibanProblem, maskIban } from './payout-rows.ts'
import * as repo from './settlement.repository.ts'
import type { BankAccountRow } from './payouts.table.ts'

// The merchant's own bank account, where settlement payouts go (CONTRACT.md "Settlement to
// the merchant's bank account"): owner or finance may set it (the API's merchant key, or a
// dashboard owner / finance member); a change is emailed to every owner and, in live, holds
// settlement payouts for 24 hours (time for an owner to notice a hijacked account).

export const BANK_ACCOUNT_MAIL_JOB = 'payouts.mail_bank_account_change'
export const BANK_ACCOUNT_HOLD_MS = 24 * 60 * 60 * 1000
export const HOLDER_NAME_MIN = 2
export const HOLDER_NAME_MAX = 140

export interface BankAccount {
  ibanMasked: string
  last4: string
  holderName: string
  /** Settlement payouts wait until then (live, after a change); null when they do not. */
  payoutsHeldUntil: Date | null
  updatedAt: Date
}

function toBankAccount(row: BankAccountRow): BankAccount {
  return {
    ibanMasked: maskIban(row.iban),
    last4: row.iban.slice(-4),
    holderName: row.holder_name,
    payoutsHeldUntil: row.payouts_hold_until,
    updatedAt: row.updated_at,
  }
}

// Letters of any script (Turkish ç ğ ı İ ö ş ü included), digits, spaces and the punctuation
// of company names (Ltd. Şti., A.Ş., "&", "-", "'", parentheses, "/"). Nothing else: no
// control characters, no markup, no emoji (banks refuse them in the recipient name).
const HOLDER_CHARS = /^[\p{L}\p{M}0-9 .,'&()/-]+$/u

/** The holder name as stored (trimmed, inner whitespace collapsed), or a 400. */
export function checkHolderName(raw: string): string {
  const name = raw.normalize('NFC').trim().replace(/\s+/g, ' ')
  if (name.length < HOLDER_NAME_MIN) {
    throw validationError('holderName', `must have at least ${String(HOLDER_NAME_MIN)} characters`)
  }
  if (name.length > HOLDER_NAME_MAX) {
    throw validationError('holderName', `must have at most ${String(HOLDER_NAME_MAX)} characters`)
  }
  if (!HOLDER_CHARS.test(name)) {
    throw validationError(
      'holderName',
      "may contain only letters, digits, spaces and . , ' & ( ) / -",
    )
  }
  if (!/\p{L}/u.test(name)) throw validationError('holderName', 'must contain a letter')
  return name
}

/** The IBAN as stored (electronic format), or a 400 naming why (TR, length, mod-97). */
export function checkIban(raw: string): string {
  const iban = normalizeIban(raw)
  if (iban) return iban
  const problem = (ibanProblem(raw) ?? 'dest: is not a valid TR IBAN').replace(/^dest: /, '')
  throw validationError('iban', problem)
}

export async function getBankAccount(deps: Deps, merchantId: string): Promise<BankAccount> {
  const row = await repo.findBankAccount(deps.db, merchantId)
  if (!row) throw notFound('bank account')
  return toBankAccount(row)
}

/**
 * Sets the bank account. The same IBAN and holder again changes nothing (no mail, no hold).
 * A change commits with the owners' notification job; in live it holds settlement payouts
 * for 24 hours. Returns whether it changed anything.
 */
export async function putBankAccount(
  deps: Deps,
  merchantId: string,
  input: { iban: string; holderName: string },
  record?: RecordAnswer<Tx, BankAccount>,
): Promise<{ account: BankAccount; changed: boolean }> {
  const iban = checkIban(input.iban)
  const holderName = checkHolderName(input.holderName)
  return transact(deps.db, async (tx) => {
    const before = await repo.lockBankAccount(tx, merchantId)
    if (before && before.iban === iban && before.holder_name === holderName) {
      const account = toBankAccount(before)
      await record?.(tx, account)
      return { account, changed: false }
    }
    const now = deps.clock.now()
    const hold = deps.config.env === 'live' ? new Date(now.getTime() + BANK_ACCOUNT_HOLD_MS) : null
    const row = await repo.upsertBankAccount(tx, {
      merchant_id: merchantId,
      iban,
      holder_name: holderName,
      payouts_hold_until: hold,
      created_at: before?.created_at ?? now,
      updated_at: now,
    })
    await deps.jobs.enqueue(tx, BANK_ACCOUNT_MAIL_JOB, {
      merchantId,
      last4: iban.slice(-4),
      previousLast4: before ? before.iban.slice(-4) : null,
      holderName,
      changedAt: now.toISOString(),
      heldUntil: hold?.toISOString() ?? null,
    })
    const account = toBankAccount(row)
    await record?.(tx, account)
    return { account, changed: true }
  })
}

export interface BankAccountMail {
  merchantId: string
  last4: string
  previousLast4: string | null
  holderName: string
  changedAt: string
  heldUntil: string | null
}

export function assertBankAccountMail(data: unknown): asserts data is BankAccountMail {
  const d = data as Partial<Record<keyof BankAccountMail, unknown>> | null
  assert(
    typeof d?.merchantId === 'string' &&
      typeof d.last4 === 'string' &&
      typeof d.holderName === 'string' &&
      typeof d.changedAt === 'string',
    `${BANK_ACCOUNT_MAIL_JOB}: bad payload`,
  )
}

/** The job: tells every owner of the merchant (never the full IBAN: its last four). */
export async function mailBankAccountChange(deps: Deps, data: BankAccountMail): Promise<void> {
  const owners = (await listDashboardMembers(deps, data.merchantId)).filter(
    (m) => m.role === 'owner',
  )
  const lines = [
    'The bank account your Kuruş settlements are paid to was changed.',
    '',
    `New account: IBAN ending ${data.last4}, holder ${data.holderName}`,
    data.previousLast4
      ? `Previous account: IBAN ending ${data.previousLast4}`
      : 'No account was set before.',
    `Changed at: ${data.changedAt}`,
    data.heldUntil
      ? `For your security, settlement payouts wait until ${data.heldUntil}.`
      : 'Settlement payouts go to the new account from the next run.',
    '',
    'If you did not make this change, sign in and set your account again, and contact support.',
  ]
  for (const owner of owners) {
    await sendMail(deps, {
      to: owner.email,
      subject: 'Kuruş: your payout bank account was changed',
      text: lines.join('\n'),
    })
  }
}
