import { randomBytes } from 'node:crypto'
import type { Deps } from '../../database.ts'
import { notFound } from '../../platform/errors.ts'
import { connectorConfigOf, type PosOwner } from './pos-accounts.service.ts'
import { CONNECTORS } from './pos-connectors.ts'
import * as repo from './pos.repository.ts'

// "Send a 1 TRY auth+void" (issue 39): the dashboard's check that an account's credentials
// and URLs work. It talks to the bank only: no payment, capture or ledger leg is recorded for
// the merchant, and its order id (`pst_…`) is no payment's, so nothing can settle or pay out.
// The door records the result as an audit entry (docs/dashboard.md, "Banka POS").

/** The built-in test card (CONTRACT's frictionless card; the simulators know it). */
const TEST_CARD = { pan: '4155650100416111', expMonth: 12, expYear: 2030, cvc: '000' }
const TEST_AMOUNT = 100

export type PosTestResult =
  /** test accounts: 1 TRY pre-authorized and voided at once. */
  | { outcome: 'approved_voided'; orderId: string; authCode: string }
  /** authorized but the void failed: the bank holds 1 TRY until it expires (bank's code). */
  | { outcome: 'approved_not_voided'; orderId: string; authCode: string; bankCode: string | null }
  | { outcome: 'declined'; orderId: string; bankCode: string }
  /** production accounts: the bank answered an order inquiry (credentials and URL work). */
  | { outcome: 'reachable'; orderId: string }
  | { outcome: 'not_sent'; orderId: string }
  | { outcome: 'unknown'; orderId: string }

function testOrderId(): string {
  // 20 hex digits: within every bank's order-id length (PosNet keeps 20 letters and digits).
  return `pst_${randomBytes(10).toString('hex')}`
}

/**
 * Tests one of the merchant's own accounts (a platform account, another merchant's or a
 * deleted one is 404). A `test` account gets a 1 TRY pre-authorization with the test card and
 * its void; a `production` account only an order inquiry for an order that does not exist, so
 * no real card is needed and no money moves.
 */
export async function testPosAccount(
  deps: Deps,
  owner: PosOwner,
  id: string,
): Promise<PosTestResult> {
  const row = await repo.findPosAccount(deps.db, id)
  const mine =
    row !== undefined &&
    row.deleted_at === null &&
    ('merchantId' in owner ? row.merchant_id === owner.merchantId : row.merchant_id === null)
  const connector = row ? CONNECTORS[row.provider] : undefined
  if (!mine || !connector) throw notFound('pos account')
  const config = connectorConfigOf(deps, row)
  const orderId = testOrderId()
  if (row.environment === 'production') {
    const found = await connector.status(config, { orderId })
    if (found.kind === 'not_found' || found.kind === 'approved') {
      return { outcome: 'reachable', orderId }
    }
    if (found.kind === 'declined') return { outcome: 'declined', orderId, bankCode: found.bankCode }
    return { outcome: found.kind, orderId }
  }
  const auth = await connector.authorize(config, {
    orderId,
    amount: TEST_AMOUNT,
    installmentCount: 1,
    preAuth: true,
    card: TEST_CARD,
  })
  if (auth.kind === 'declined') return { outcome: 'declined', orderId, bankCode: auth.bankCode }
  if (auth.kind !== 'approved') return { outcome: auth.kind, orderId }
  const voided = await connector.void(config, { orderId, hostReference: auth.hostReference })
  return voided.kind === 'approved'
    ? { outcome: 'approved_voided', orderId, authCode: auth.authCode }
    : {
        outcome: 'approved_not_voided',
        orderId,
        authCode: auth.authCode,
        bankCode: voided.kind === 'declined' ? voided.bankCode : null,
      }
}

/** The names of POS accounts by id (deleted ones too: payments keep their reference). */
export async function posAccountNames(
  deps: Deps,
  ids: readonly string[],
): Promise<Map<string, { name: string; bank: string }>> {
  const rows = await repo.findPosAccountsByIds(deps.db, ids)
  return new Map(rows.map((r) => [r.id, { name: r.name, bank: r.bank }]))
}
