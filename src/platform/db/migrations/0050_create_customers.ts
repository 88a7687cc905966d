import { sql, type Kysely } from 'kysely'

// Owned by modules/customers: customers and their saved cards. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Soft delete: a deleted row keeps deleted_at and disappears from every read. The
  // uniqueness of externalId and email holds among live customers only (partial unique
  // indexes below), so a merchant can create a customer again under a deleted one's ids.
  await sql`
    create table customers (
      id text primary key,
      merchant_id text not null references merchants(id),
      external_id text not null check (length(external_id) between 1 and 128),
      email text check (email is null or length(email) between 3 and 254),
      phone text check (phone is null or phone ~ '^\\+90[0-9]{4,13}$'),
      name text check (name is null or length(name) between 1 and 200),
      extra_data jsonb not null check (jsonb_typeof(extra_data) = 'object'),
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`.execute(db)
  await sql`create unique index customers_external_id_key on customers (merchant_id, external_id)
    where deleted_at is null`.execute(db)
  // Emails are ASCII (the API validates the format), so lower() is the same on every
  // collation and both backends agree on what "the same email" is.
  await sql`create unique index customers_email_key on customers (merchant_id, lower(email))
    where deleted_at is null and email is not null`.execute(db)
  // The list: newest first, keyset on (created_at, id).
  await sql`create index customers_list_idx on customers (merchant_id, created_at desc, id desc)
    where deleted_at is null`.execute(db)
  await sql`create index customers_phone_idx on customers (merchant_id, phone)
    where deleted_at is null and phone is not null`.execute(db)

  // A saved card is a reference to a vault token plus the token's non-secret details, copied
  // at attach time (they never change for a token). Detaching keeps the row (detached_at) and
  // revokes the token in the vault, so a token is attached at most once, ever.
  await sql`
    create table customer_cards (
      id text primary key,
      merchant_id text not null references merchants(id),
      customer_id text not null references customers(id),
      card_token text not null,
      last4 text not null check (last4 ~ '^[0-9]{4}$'),
      bin text not null check (bin ~ '^[0-9]{6}$'),
      brand text not null,
      exp_month smallint not null check (exp_month between 1 and 12),
      exp_year smallint not null check (exp_year between 2000 and 2199),
      is_default boolean not null,
      created_at timestamptz not null,
      detached_at timestamptz,
      check (not (is_default and detached_at is not null)),
      unique (merchant_id, card_token)
    )`.execute(db)
  // At most one default card per customer, whatever the code does under concurrency (the
  // service also locks the customer row, so writers queue instead of failing on this).
  await sql`create unique index customer_cards_one_default on customer_cards (customer_id)
    where is_default and detached_at is null`.execute(db)
  await sql`create index customer_cards_customer_idx on customer_cards
    (customer_id, created_at desc, id desc) where detached_at is null`.execute(db)
}
