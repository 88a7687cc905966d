import { sql, type Kysely } from 'kysely'

// Owned by modules/ledger. Frozen in time: never edit, add a new migration instead.
// Double-entry, append-only, integer kuruş. The database itself refuses an unbalanced entry
// (a deferred constraint trigger checks each entry at COMMIT) and any UPDATE/DELETE/TRUNCATE,
// so a buggy caller cannot commit a broken ledger. See src/modules/ledger/README.md.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Platform accounts are tenant-less (merchant_id null): one buyer_pending, one
  // platform_commission and one bank_settlement for the whole platform. Nothing ever updates
  // an account row (balances are sums over legs), so a shared platform row is never hot.
  await sql`
    create table ledger_accounts (
      id text primary key,
      owner_type text not null check (owner_type in ('platform','merchant','submerchant')),
      owner_id text not null,
      merchant_id text,
      account_type text not null check (account_type in ('buyer_pending','merchant_reserve',
        'merchant_available','platform_commission','payout_clearing','bank_settlement')),
      currency text not null check (currency = 'TRY'),
      created_at timestamptz not null,
      unique (owner_type, owner_id, account_type),
      -- the target of the legs' composite foreign key, which keeps their copies honest
      unique (id, owner_type, owner_id, account_type),
      check ((owner_type = 'platform') = (merchant_id is null)),
      check (owner_type <> 'merchant' or owner_id = merchant_id),
      check ((owner_type = 'platform') =
        (account_type in ('buyer_pending','platform_commission','bank_settlement')))
    )`.execute(db)
  await sql`
    insert into ledger_accounts (id, owner_type, owner_id, merchant_id, account_type, currency,
      created_at)
    values
      ('platform:platform:buyer_pending', 'platform', 'platform', null, 'buyer_pending', 'TRY',
        now()),
      ('platform:platform:platform_commission', 'platform', 'platform', null,
        'platform_commission', 'TRY', now()),
      ('platform:platform:bank_settlement', 'platform', 'platform', null, 'bank_settlement',
        'TRY', now())`.execute(db)

  // reference is the ledger's own idempotency key (capture:<paymentId>, refund:<refundId>, …).
  await sql`
    create table ledger_entries (
      id text primary key,
      merchant_id text not null references merchants(id),
      kind text not null check (kind in ('capture','refund','chargeback','chargeback_reversal',
        'settlement','payout_created','payout_paid','payout_failed')),
      reference text not null unique,
      payment_id text,
      created_at timestamptz not null,
      unique (id, merchant_id)
    )`.execute(db)
  await sql`
    create index ledger_entries_payment_idx on ledger_entries (merchant_id, payment_id)
      where payment_id is not null`.execute(db)

  // Legs copy the tenant, payment and account coordinates so a balance is one index range
  // scan; the composite foreign keys make those copies agree with the entry and the account.
  await sql`
    create table ledger_legs (
      id bigint generated always as identity primary key,
      entry_id text not null,
      merchant_id text not null,
      payment_id text,
      account_id text not null,
      owner_type text not null,
      owner_id text not null,
      account_type text not null,
      direction text not null check (direction in ('DEBIT','CREDIT')),
      amount bigint not null check (amount > 0),
      currency text not null check (currency = 'TRY'),
      created_at timestamptz not null,
      foreign key (entry_id, merchant_id) references ledger_entries (id, merchant_id),
      foreign key (account_id, owner_type, owner_id, account_type)
        references ledger_accounts (id, owner_type, owner_id, account_type)
    )`.execute(db)
  await sql`create index ledger_legs_entry_idx on ledger_legs (entry_id)`.execute(db)
  // Balances are sums over this index (INCLUDE makes them index-only scans); no balance row
  // is updated per payment, which would serialise every capture on the platform's accounts.
  await sql`
    create index ledger_legs_balance_idx
      on ledger_legs (merchant_id, owner_type, owner_id, account_type)
      include (direction, amount)`.execute(db)

  // Append-only: corrections are new entries, never edits.
  await sql`
    create function ledger_forbid_change() returns trigger language plpgsql as $$
    begin
      raise exception 'ledger is append-only: % on % is not allowed', tg_op, tg_table_name
        using errcode = 'restrict_violation';
    end $$`.execute(db)
  for (const table of ['ledger_accounts', 'ledger_entries', 'ledger_legs']) {
    await sql`
      create trigger ${sql.raw(`${table}_append_only`)}
        before update or delete on ${sql.table(table)}
        for each row execute function ledger_forbid_change()`.execute(db)
    await sql`
      create trigger ${sql.raw(`${table}_no_truncate`)}
        before truncate on ${sql.table(table)}
        for each statement execute function ledger_forbid_change()`.execute(db)
  }

  // One entry is well formed when it has at least two legs, its debits equal its credits,
  // every leg carries the entry's payment, and every owner account belongs to the entry's
  // tenant. Called at COMMIT by the deferred triggers below, so it sees all the legs the
  // transaction wrote, whatever order the statements ran in.
  await sql`
    create function ledger_check_entry(entry text) returns void language plpgsql as $$
    declare
      legs_count bigint;
      debits numeric;
      credits numeric;
      foreign_accounts bigint;
      other_payment bigint;
    begin
      select count(l.id),
             coalesce(sum(l.amount) filter (where l.direction = 'DEBIT'), 0),
             coalesce(sum(l.amount) filter (where l.direction = 'CREDIT'), 0),
             count(l.id) filter (where a.owner_type <> 'platform'
                                   and a.merchant_id <> l.merchant_id),
             count(l.id) filter (where l.payment_id is distinct from e.payment_id)
        into legs_count, debits, credits, foreign_accounts, other_payment
        from ledger_entries e
        left join ledger_legs l on l.entry_id = e.id
        left join ledger_accounts a on a.id = l.account_id
       where e.id = entry;
      if legs_count < 2 then
        raise exception 'ledger entry % has % legs; at least 2 are required', entry, legs_count
          using errcode = 'check_violation';
      end if;
      if debits <> credits then
        raise exception 'ledger entry % is unbalanced: debits %, credits %', entry, debits, credits
          using errcode = 'check_violation';
      end if;
      if foreign_accounts > 0 then
        raise exception 'ledger entry % posts to another merchant''s account', entry
          using errcode = 'check_violation';
      end if;
      if other_payment > 0 then
        raise exception 'ledger entry % has legs of another payment', entry
          using errcode = 'check_violation';
      end if;
    end $$`.execute(db)
  await sql`
    create function ledger_legs_check_entry() returns trigger language plpgsql as $$
    begin
      perform ledger_check_entry(new.entry_id);
      return null;
    end $$`.execute(db)
  await sql`
    create function ledger_entries_check_entry() returns trigger language plpgsql as $$
    begin
      perform ledger_check_entry(new.id);
      return null;
    end $$`.execute(db)
  // The legs trigger catches a leg added later to an old entry; the entries trigger catches an
  // entry committed with no legs at all (no leg row would fire the other one).
  await sql`
    create constraint trigger ledger_legs_balanced
      after insert on ledger_legs
      deferrable initially deferred
      for each row execute function ledger_legs_check_entry()`.execute(db)
  await sql`
    create constraint trigger ledger_entries_balanced
      after insert on ledger_entries
      deferrable initially deferred
      for each row execute function ledger_entries_check_entry()`.execute(db)
}
