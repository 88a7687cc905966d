import { sql, type Kysely } from 'kysely'

// Owned by modules/vault. Frozen in time.
// The audit's row trigger (0010) refuses UPDATE and DELETE, but TRUNCATE fires no row
// trigger: a statement-level trigger refuses it too, with the same function (it raises
// insufficient_privilege naming tg_op, which is 'TRUNCATE' here).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create trigger vault_card_access_no_truncate
    before truncate on vault_card_access
    for each statement execute function vault_card_access_append_only()`.execute(db)
}
