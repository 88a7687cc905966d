import { sql, type Kysely } from 'kysely'

// Owned by modules/subscriptions: subscriptions and their charge history. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per subscription. `status = 'charging'` is the renewal engine's claim: the row
  // carries where it came from (charge_from), why it is charged (charge_kind) and, while a
  // worker holds it, that worker's claim_id. The buyer's portal bearer is stored only as its
  // SHA-256 (public_hash_sha256): the database never holds a usable bearer.
  await sql`
    create table subscriptions (
      id text primary key,
      merchant_id text not null references merchants(id),
      store_id text not null,
      customer_id text not null,
      public_hash_sha256 text not null unique,
      status text not null check (status in
        ('trialing','active','past_due','paused','cancelled','expired','charging')),
      amount_minor bigint not null check (amount_minor between 100 and 10000000000),
      currency text not null check (currency = 'TRY'),
      interval_count integer not null check (interval_count between 1 and 365),
      interval_unit text not null check (interval_unit in ('day','week','month','year')),
      cycle_number integer not null check (cycle_number >= 0),
      next_charge_at timestamptz,
      anchor_at timestamptz not null,
      anchor_cycle integer not null check (anchor_cycle >= 1),
      failed_attempts integer not null default 0 check (failed_attempts >= 0),
      charge_from text check (charge_from in ('trialing','active','past_due')),
      charge_kind text check (charge_kind in ('renewal','retry','charge_now')),
      claim_id text,
      charging_since timestamptz,
      charge_started_at timestamptz,
      awaiting_payment_id text,
      cancel_at_period_end boolean not null default false,
      cancel_reason text,
      cancelled_by text check (cancelled_by in ('merchant','buyer')),
      card_token text not null,
      card_last4 text not null check (card_last4 ~ '^[0-9]{4}$'),
      card_brand text not null,
      card_session_seq integer not null default 0,
      card_synced_seq integer not null default 0,
      trial_end_at timestamptz,
      generate_invoices boolean not null default false,
      description text check (description is null or length(description) between 1 and 500),
      created_at timestamptz not null,
      updated_at timestamptz not null,
      cancelled_at timestamptz,
      ended_at timestamptz,
      check ((status = 'charging') = (charge_from is not null and charge_kind is not null)),
      check (status = 'charging'
        or ((status in ('trialing','active','past_due')) = (next_charge_at is not null))),
      check (card_synced_seq <= card_session_seq)
    )`.execute(db)
  // The renewal engine's scan: due rows in a chargeable status, oldest due first.
  await sql`create index subscriptions_due_idx on subscriptions (next_charge_at, id)
    where status in ('trialing','active','past_due')`.execute(db)
  // Rows in `charging`: stale claims (a crashed worker) and charges awaiting the acquirer.
  await sql`create index subscriptions_charging_idx on subscriptions (charging_since)
    where status = 'charging'`.execute(db)
  // An update-card session not yet looked at: the reconciler's card sweep.
  await sql`create index subscriptions_card_sync_idx on subscriptions (updated_at)
    where card_session_seq > card_synced_seq`.execute(db)
  // The merchant's list: newest first, keyset on (created_at, id); the customer filter has
  // its own index because a customer's subscriptions are few among many.
  await sql`create index subscriptions_list_idx on subscriptions
    (merchant_id, created_at desc, id desc)`.execute(db)
  await sql`create index subscriptions_customer_idx on subscriptions
    (merchant_id, customer_id, created_at desc, id desc)`.execute(db)

  // Every charge attempt of a subscription: the cycle it paid for, the attempt number within
  // that cycle (dunning retries are attempts 2..4) and the payment it made. payment_id is
  // null when no payment could be made (the card token was revoked).
  await sql`
    create table subscription_charges (
      subscription_id text not null references subscriptions(id),
      merchant_id text not null,
      cycle_number integer not null check (cycle_number >= 1),
      attempt integer not null check (attempt >= 1),
      payment_id text,
      status text not null check (status in ('captured','failed')),
      amount_minor bigint not null check (amount_minor > 0),
      decline_code text,
      charged_at timestamptz not null,
      primary key (subscription_id, cycle_number, attempt)
    )`.execute(db)
  // The database's own guarantee of "one charge per cycle": at most one successful charge
  // row per (subscription, cycle), and a payment is recorded at most once.
  await sql`create unique index subscription_charges_one_success on subscription_charges
    (subscription_id, cycle_number) where status = 'captured'`.execute(db)
  await sql`create unique index subscription_charges_payment_key on subscription_charges
    (payment_id) where payment_id is not null`.execute(db)
}
