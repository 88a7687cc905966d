import { sql, type Kysely } from 'kysely'

// Owned by modules/payments: partial and multi-capture (CONTRACT.md "Payments, later phase").
// Frozen in time: never edit, add a new one.
// A payment's captures are rows of their own; the payment keeps the running total
// (`captured_minor`) so every check on it (refundable, disputable) reads one row under its
// lock. `partially_captured` joins the statuses.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table captures (
      id text primary key,
      merchant_id text not null,
      payment_id text not null references payments(id),
      amount bigint not null check (amount > 0),
      -- this capture's part of the payment's commission (cumulative half-up, docs/payments.md)
      commission bigint not null check (commission >= 0 and commission <= amount),
      -- final: the rest of the authorization is released when this capture completes
      final boolean not null,
      status text not null check (status in ('pending','completed','failed')),
      created_at timestamptz not null,
      completed_at timestamptz
    )`.execute(db)
  // One capture at a time reaches the bank (the payment's action_in_flight claim); the index
  // says the same in the database.
  await sql`create unique index captures_one_pending on captures (payment_id)
    where status = 'pending'`.execute(db)
  await sql`create index captures_payment_idx on captures (payment_id, created_at, id)`.execute(db)

  await sql`alter table payments
    add column captured_minor bigint not null default 0 check (captured_minor >= 0)`.execute(db)
  await sql`alter table payments drop constraint if exists payments_status_check`.execute(db)
  await sql`alter table payments add constraint payments_status_check check (status in
    ('pending','pending_3ds','authorized','partially_captured','captured','voided','failed',
     'refunded'))`.execute(db)

  // Payments captured before captures existed: one full capture each, with the id a full
  // capture has (cap_ + the payment id's random part) and its commission.
  await sql`update payments set captured_minor = amount
    where status in ('captured','refunded')`.execute(db)
  await sql`
    insert into captures
      (id, merchant_id, payment_id, amount, commission, final, status, created_at, completed_at)
    select 'cap_' || substr(id, 5), merchant_id, id, amount, commission, true, 'completed',
           coalesce(completed_at, updated_at), coalesce(completed_at, updated_at)
      from payments
     where status in ('captured','refunded')`.execute(db)
  await sql`alter table payments add constraint payments_captured_within_amount
    check (captured_minor <= amount)`.execute(db)
  await sql`alter table payments add constraint payments_reserved_within_captured
    check (refund_reserved_minor + chargeback_open_minor <= captured_minor)`.execute(db)

  // The authorization-expiry reconciler's scan, and the stale-claim finisher's.
  await sql`create index payments_open_authorizations_idx on payments (authorized_at)
    where status in ('authorized','partially_captured')`.execute(db)
  await sql`create index payments_action_in_flight_idx on payments (updated_at)
    where action_in_flight is not null`.execute(db)

  // The sandbox bank keeps one operation per capture (keyed by our capture id), no longer
  // one per payment. Its earlier captures were full ones: they get the full capture's id.
  await sql`alter table acquirer_sandbox_operations
    add column capture_id text, add column final boolean`.execute(db)
  await sql`update acquirer_sandbox_operations
    set capture_id = 'cap_' || substr(payment_id, 5), final = true
    where op = 'capture'`.execute(db)
  await sql`drop index acquirer_sandbox_operations_capture_uq`.execute(db)
  await sql`create unique index acquirer_sandbox_operations_capture_uq
    on acquirer_sandbox_operations (capture_id) where op = 'capture'`.execute(db)
  await sql`alter table acquirer_sandbox_operations add constraint
    acquirer_sandbox_operations_capture_id_check check ((op = 'capture') = (capture_id is not null))`.execute(
    db,
  )
}
