import { sql, type Kysely } from 'kysely'

// Owned by modules/vault. Frozen in time: never edit, add a new migration instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  // The PAN exists only as pan_enc (sealed with the row's own data key, which is wrapped by
  // the master key named in kek_id). No CVC column: the CVC is checked and forgotten.
  await sql`
    create table vault_card_tokens (
      id text primary key,
      merchant_id text not null references merchants(id),
      pan_enc text not null,
      dek_wrapped text not null,
      kek_id text not null,
      fingerprint text not null,
      last4 text not null check (last4 ~ '^[0-9]{4}$'),
      bin text not null check (bin ~ '^[0-9]{6}$'),
      brand text not null check (brand in ('visa','mastercard','troy','amex','unknown')),
      card_type text not null check (card_type in ('credit','debit')),
      exp_month smallint not null check (exp_month between 1 and 12),
      exp_year smallint not null check (exp_year between 2000 and 2199),
      holder_name text not null,
      status text not null check (status in ('active','revoked')),
      customer_id text,
      created_at timestamptz not null,
      revoked_at timestamptz
    )`.execute(db)
  await sql`create index vault_card_tokens_merchant_idx on vault_card_tokens (merchant_id, created_at)`.execute(
    db,
  )
  await sql`create index vault_card_tokens_fingerprint_idx on vault_card_tokens (merchant_id, fingerprint)`.execute(
    db,
  )
  await sql`create index vault_card_tokens_customer_idx on vault_card_tokens (merchant_id, customer_id) where customer_id is not null`.execute(
    db,
  )

  // Append-only audit of every detokenization, allowed or not. The id orders rows written in
  // the same millisecond, so (created_at, id) is a total order for keyset pagination.
  await sql`
    create table vault_card_access (
      id bigint generated always as identity primary key,
      op text not null check (op in ('detokenize')),
      card_token text not null,
      merchant_id text not null,
      caller_service text not null,
      result text not null check (result in ('ok','denied')),
      created_at timestamptz not null
    )`.execute(db)
  await sql`create index vault_card_access_merchant_idx on vault_card_access (merchant_id, created_at desc, id desc)`.execute(
    db,
  )
  // Roles cannot be relied on (PGlite has one superuser; the app owns its tables), so the
  // table defends itself: any UPDATE or DELETE of an audit row raises.
  await sql`
    create function vault_card_access_append_only() returns trigger
    language plpgsql as $$
    begin
      raise exception 'vault_card_access is append-only (% refused)', tg_op
        using errcode = 'insufficient_privilege';
    end
    $$`.execute(db)
  await sql`
    create trigger vault_card_access_no_update_delete
    before update or delete on vault_card_access
    for each row execute function vault_card_access_append_only()`.execute(db)
}
