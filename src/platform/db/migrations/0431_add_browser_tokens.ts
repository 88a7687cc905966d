import { sql, type Kysely } from 'kysely'

// Kuruş.js (docs/decisions/0038): card tokens made in the buyer's browser are single-use and
// expire after 15 minutes (owned by modules/vault): `expires_at`, and the one order
// (`bound_transaction_id`) the first charge bound the token to. A store's allowed origins
// (owned by modules/merchants): the merchant pages that may take cards with its publishable
// key. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table vault_card_tokens
    add column single_use boolean not null default false,
    add column expires_at timestamptz,
    add column bound_transaction_id text`.execute(db)
  await sql`alter table stores
    add column allowed_origins jsonb not null default '[]'::jsonb`.execute(db)
}
