import type { Db, Tx } from '../../database.ts'
import { cardTokenColumn } from '../vault/index.ts'
import { SESSIONS, type NewSession, type SessionRow, type SessionStatus } from './payments.table.ts'

// Checkout sessions: the fence a card or QR charge completes.

export async function insertSession(db: Db, row: NewSession): Promise<void> {
  await db.insertInto('payment_sessions').values(row).execute()
}

export function findSessionByTransactionId(
  db: Db,
  merchantId: string,
  transactionId: string,
): Promise<SessionRow | undefined> {
  return db
    .selectFrom('payment_sessions')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('transaction_id', '=', transactionId)
    .executeTakeFirst()
}

/**
 * A card charge's session and its card token (vault's JSON column, null when there is no such
 * token) in one round trip; no row: no such session.
 */
export function findSessionWithCardToken(
  db: Db,
  merchantId: string,
  transactionId: string,
  cardToken: string,
) {
  return db
    .selectFrom('payment_sessions')
    .selectAll('payment_sessions')
    .select(cardTokenColumn(db, merchantId, cardToken).as('charge_card_token'))
    .where('payment_sessions.merchant_id', '=', merchantId)
    .where('payment_sessions.transaction_id', '=', transactionId)
    .executeTakeFirst()
}

export function findSessionById(db: Db, sessionId: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('payment_sessions')
    .selectAll()
    .where('id', '=', sessionId)
    .executeTakeFirst()
}

export async function updateSessionStatus(
  tx: Tx,
  sessionId: string,
  from: SessionStatus,
  to: SessionStatus,
  at: Date,
): Promise<boolean> {
  const result = await tx
    .updateTable('payment_sessions')
    .set({ status: to, ...(to === 'completed' ? { completed_at: at } : {}) })
    .where('id', '=', sessionId)
    .where('status', 'in', SESSIONS.guard(to, [from]))
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}

export async function incrementSessionFailures(tx: Tx, sessionId: string): Promise<void> {
  await tx
    .updateTable('payment_sessions')
    .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) }))
    .where('id', '=', sessionId)
    .execute()
}

export async function expireSessions(db: Db, now: Date, limit: number): Promise<number> {
  const result = await db
    .updateTable('payment_sessions')
    .set({ status: 'expired' })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('payment_sessions')
        .select('id')
        .where('status', 'in', SESSIONS.guard('expired', ['active']))
        .where('expires_at', '<=', now)
        .limit(limit),
    )
    .where('status', '=', 'active')
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
