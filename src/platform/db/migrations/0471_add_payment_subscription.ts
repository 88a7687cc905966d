import { sql, type Kysely } from 'kysely'

// Owned by modules/payments. Frozen in time.
// A renewal payment names its subscription and cycle in fields of our own (issue 36, finding
// 9): metadata is the merchant's alone, and renewals used to add `subscriptionId` and `cycle`
// keys to it. Earlier renewals keep those keys in their metadata (what was sent in webhooks
// is not rewritten); their transaction id `<subscriptionId>:<cycle>` fills the new fields.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table payments
    add column subscription_id text,
    add column subscription_cycle integer`.execute(db)
  await sql`update payments
    set subscription_id = split_part(transaction_id, ':', 1),
        subscription_cycle = split_part(transaction_id, ':', 2)::integer
    where transaction_id ~ '^sub_[0-9a-z]+:[0-9]{1,9}$'`.execute(db)
}
