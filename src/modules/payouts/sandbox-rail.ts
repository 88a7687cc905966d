import { createHash } from 'node:crypto'
import type { PayoutRail } from './payouts.table.ts'

// The port to the bank's payout rails (FAST, EFT, card push) and its only adapter so far: a
// sandbox that answers at once and deterministically. A real adapter would call the bank
// with the payout id as its idempotency key; the sandbox derives its reference from that id,
// so sending one payout twice (a retried job, two workers) gives the same answer.

export type RailOutcome =
  | { status: 'paid'; railReference: string }
  | { status: 'failed'; railReference: string; failureCode: string }

export interface PayoutRailPort {
  send(p: {
    payoutId: string
    rail: PayoutRail
    dest: string
    amountMinor: number
  }): Promise<RailOutcome>
}

/** CONTRACT.md: a valid IBAN whose last four digits are 9999 fails; card pushes succeed. */
export const sandboxRail: PayoutRailPort = {
  send(p) {
    const railReference = `SBX${createHash('sha256').update(p.payoutId).digest('hex').slice(0, 16).toUpperCase()}`
    if (p.rail !== 'card' && p.dest.endsWith('9999')) {
      return Promise.resolve({ status: 'failed', railReference, failureCode: 'account_closed' })
    }
    return Promise.resolve({ status: 'paid', railReference })
  },
}
