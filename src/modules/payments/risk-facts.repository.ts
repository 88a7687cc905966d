import { sql, type AliasedExpression, type ExpressionBuilder } from 'kysely'
import type { Database, Db } from '../../database.ts'
import { ASYNC_COMMIT } from '../../platform/db/transaction.ts'
import { type PaymentRow } from './payments.table.ts'

// What the risk check reads and stores on a card payment: velocity counts over the
// merchant's payments, the decision and facts, and the backtest's input.

export interface VelocityKeys {
  merchantId: string
  fingerprint: string | null
  ip: string | null
  customerId: string | null
  now: Date
}

/**
 * The advisory-lock keys of a charge's velocity counts, taken by the statement that writes its
 * intent row (insertCardIntent). The intent row and the count share the claim transaction, so
 * a concurrent charge's row is invisible until it commits: N charges of one card at once would
 * each count only themselves. A transaction lock per velocity key makes the next charge of the
 * same card, IP or customer count after the previous one has committed; the count is a later
 * statement, so its snapshot sees that row (docs/risk.md "Velocity").
 */
export function velocityLockKeys(k: Omit<VelocityKeys, 'now'>): string[] {
  return [
    k.fingerprint === null ? null : `card:${k.fingerprint}`,
    k.ip === null ? null : `ip:${k.ip}`,
    k.customerId === null ? null : `customer:${k.customerId}`,
  ]
    .filter((key): key is string => key !== null)
    .map((key) => `velocity:${k.merchantId}:${key}`)
}

/**
 * The velocity facts of a charge, counted after its own intent row is written (so it counts
 * itself) and its velocity locks are held (velocityLockKeys). Raw SQL for four scalar
 * subqueries; each is an index range count, never a scan: payments_merchant_fingerprint_created_idx,
 * payments_merchant_ip_created_idx (migration 0290) and payments_merchant_customer_idx (0061).
 * A null key counts nothing. `more` adds the risk screen's columns to the same statement (one
 * round trip); `read` is the whole row, for them.
 */
export async function countVelocity(
  db: Db,
  k: VelocityKeys,
  more?: (eb: ExpressionBuilder<Database, never>) => AliasedExpression<unknown, string>[],
) {
  const hourAgo = new Date(k.now.getTime() - 3_600_000)
  const dayAgo = new Date(k.now.getTime() - 86_400_000)
  const read: Record<string, unknown> = await db
    .selectNoFrom((eb) => [
      sql<string>`(select count(*) from payments where merchant_id = ${k.merchantId}
        and card_fingerprint = ${k.fingerprint} and created_at > ${hourAgo})`.as(
        'card_attempts_1h',
      ),
      sql<string>`(select count(*) from payments where merchant_id = ${k.merchantId}
        and card_fingerprint = ${k.fingerprint} and created_at > ${dayAgo}
        and status = 'failed')`.as('card_declines_24h'),
      sql<string>`(select count(*) from payments where merchant_id = ${k.merchantId}
        and client_ip = ${k.ip} and created_at > ${hourAgo})`.as('ip_attempts_1h'),
      sql<string>`(select coalesce(sum(amount), 0) from payments where merchant_id = ${k.merchantId}
        and customer_id = ${k.customerId} and created_at > ${dayAgo}
        and status <> 'failed')`.as('customer_amount_24h'),
      ...(more?.(eb) ?? []),
    ])
    .executeTakeFirstOrThrow()
  return {
    velocity: {
      cardAttempts1h: Number(read.card_attempts_1h ?? 0),
      cardDeclines24h: Number(read.card_declines_24h ?? 0),
      ipAttempts1h: Number(read.ip_attempts_1h ?? 0),
      customerAmount24h: Number(read.customer_amount_24h ?? 0),
    },
    read,
  }
}

/** Records the risk check's facts and decision on a payment still `pending`. */
export async function recordRisk(
  db: Db,
  merchantId: string,
  paymentId: string,
  set: { risk: string; risk_facts: string; three_d_secure: boolean; updated_at: Date },
): Promise<PaymentRow | undefined> {
  // Asynchronous commit, for the reason the intent's is (insertCardIntent): the vault's
  // synchronous audit commit comes before any acquirer acts on the decision.
  const found = await db
    .updateTable('payments')
    .set(set)
    .where('merchant_id', '=', merchantId)
    .where('id', '=', paymentId)
    .where('status', '=', 'pending')
    .returningAll()
    .returning(ASYNC_COMMIT)
    .executeTakeFirst()
  if (!found) return undefined
  const { async_commit: _, ...row } = found
  return row
}

/** The backtest's input: the facts stored with the merchant's card payments since `from`. */
export function findRiskFactsSince(db: Db, merchantId: string, from: Date, limit: number) {
  return db
    .selectFrom('payments')
    .select(['id', 'amount', 'risk_facts', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', from)
    .where('risk_facts', 'is not', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
}

/** The facts the risk check stored with one payment (the dashboard's risk panel). */
export async function findRiskFactsByPaymentId(db: Db, merchantId: string, paymentId: string) {
  return db
    .selectFrom('payments')
    .select(['risk_facts'])
    .where('merchant_id', '=', merchantId)
    .where('id', '=', paymentId)
    .executeTakeFirst()
}
