import type { Db } from '../../database.ts'
import type { CheckoutAttemptRow, NewCheckoutAttempt } from './checkout.table.ts'

// All of the checkout module's SQL.

export async function insertCheckoutAttempt(db: Db, row: NewCheckoutAttempt): Promise<void> {
  // A fence replay hands back a payment we already recorded: keep the first row.
  await db
    .insertInto('checkout_attempts')
    .values(row)
    .onConflict((oc) => oc.column('payment_id').doNothing())
    .execute()
}

export function findCheckoutAttemptByPaymentId(
  db: Db,
  paymentId: string,
): Promise<CheckoutAttemptRow | undefined> {
  return db
    .selectFrom('checkout_attempts')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .executeTakeFirst()
}

/**
 * Logs one tokenization for this IP and returns how many it has made since `since`, this
 * one included. Insert first, count second: two concurrent requests both see each other,
 * so the guard can refuse one too many but never lets one too many through.
 */
export async function logTokenizationAndCount(
  db: Db,
  ipKey: string,
  at: Date,
  since: Date,
): Promise<number> {
  await db.insertInto('checkout_tokenizations').values({ ip_key: ipKey, created_at: at }).execute()
  const row = await db
    .selectFrom('checkout_tokenizations')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('ip_key', '=', ipKey)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function deleteTokenizationsBefore(db: Db, before: Date): Promise<number> {
  const result = await db
    .deleteFrom('checkout_tokenizations')
    .where('created_at', '<=', before)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
