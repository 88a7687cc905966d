import { sql, type Kysely } from 'kysely'

// Owned by modules/audit. Frozen in time.
// What people did in the merchant dashboard: {actor (user id), action, target, at}, per
// merchant, newest first. Append-only: the table refuses UPDATE, DELETE and TRUNCATE itself
// (roles cannot be relied on: PGlite has one superuser), as vault_card_access does.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table audit_log (
      id text primary key,
      merchant_id text not null,
      actor_id text not null,
      action text not null,
      target text,
      details jsonb not null default '{}',
      at timestamptz not null
    )`.execute(db)
  await sql`create index audit_log_merchant_at_idx on audit_log (merchant_id, at desc, id desc)`.execute(
    db,
  )
  await sql`
    create function audit_log_append_only() returns trigger
    language plpgsql as $$
    begin
      raise exception 'audit_log is append-only (% refused)', tg_op
        using errcode = 'insufficient_privilege';
    end
    $$`.execute(db)
  await sql`
    create trigger audit_log_no_update_delete
    before update or delete on audit_log
    for each row execute function audit_log_append_only()`.execute(db)
  await sql`
    create trigger audit_log_no_truncate
    before truncate on audit_log
    for each statement execute function audit_log_append_only()`.execute(db)
}
