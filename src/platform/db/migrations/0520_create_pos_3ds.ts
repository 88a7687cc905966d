import { sql, type Kysely } from 'kysely'

// 3-D Secure at a bank POS's own 3D gate (docs/acquiring.md): the POS chosen before the
// challenge, and what the bank's verified callback carried (md, xid, eci, cavv, PosNet's
// packets; in the 3D Pay model the gate's own authorization), which the authorization needs.
// acquirer_pos_payments.three_d: the order went through the gate (PosNet names such orders
// apart, TDSC…, for every later operation).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table acquirer_pos_3ds (
    payment_id text primary key,
    merchant_id text not null,
    pos_account_id text not null,
    model text not null check (model in ('3d','3d_pay')),
    correlation_id text not null,
    card_token text not null,
    amount bigint not null,
    installment_count integer not null,
    pre_auth boolean not null,
    state text not null check (state in ('waiting','authenticated','failed')),
    md_status text,
    authentication jsonb,
    gate_payment jsonb,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`.execute(db)
  await sql`alter table acquirer_pos_payments
    add column three_d boolean not null default false`.execute(db)
}
