import { sql, type Insertable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type {
  BankAccountRow,
  MerchantBankAccountsTable,
  PayoutRow,
  PayoutRunsTable,
  PayoutSchedulesTable,
  ScheduleRow,
} from './payouts.table.ts'

// SQL of settlement to the merchant's bank account: the bank account, the schedule, the
// scheduled runs (one per merchant per run date) and the settlement payouts' neighbours.

export function findBankAccount(db: Db, merchantId: string): Promise<BankAccountRow | undefined> {
  return db
    .selectFrom('merchant_bank_accounts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst()
}

export function lockBankAccount(tx: Tx, merchantId: string): Promise<BankAccountRow | undefined> {
  return tx
    .selectFrom('merchant_bank_accounts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .forUpdate()
    .executeTakeFirst()
}

export function upsertBankAccount(
  tx: Tx,
  row: Insertable<MerchantBankAccountsTable>,
): Promise<BankAccountRow> {
  return tx
    .insertInto('merchant_bank_accounts')
    .values(row)
    .onConflict((oc) =>
      oc.column('merchant_id').doUpdateSet({
        iban: row.iban,
        holder_name: row.holder_name,
        payouts_hold_until: row.payouts_hold_until ?? null,
        updated_at: row.updated_at,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findSchedule(db: Db, merchantId: string): Promise<ScheduleRow | undefined> {
  return db
    .selectFrom('payout_schedules')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst()
}

export function upsertSchedule(
  db: Db | Tx,
  row: Insertable<PayoutSchedulesTable>,
): Promise<ScheduleRow> {
  return db
    .insertInto('payout_schedules')
    .values(row)
    .onConflict((oc) =>
      oc.column('merchant_id').doUpdateSet({
        interval: row.interval,
        anchor: row.anchor ?? null,
        minimum_minor: row.minimum_minor ?? 0,
        updated_at: row.updated_at,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

export interface RunCandidate {
  merchant_id: string
  interval: PayoutSchedulesTable['interval'] | null
  anchor: string | null
  minimum_minor: number | null
  payouts_hold_until: Date | null
  last_run_date: string | null
}

/**
 * Merchants with a bank account and an automatic schedule (no schedule row: daily), with
 * their latest run date, by merchant id after `after`.
 */
export async function findRunCandidates(
  db: Db,
  after: string | undefined,
  limit: number,
): Promise<RunCandidate[]> {
  const rows = await sql<RunCandidate>`
    select b.merchant_id, s.interval, s.anchor, s.minimum_minor, b.payouts_hold_until,
           (select max(r.run_date) from payout_runs r where r.merchant_id = b.merchant_id)
             as last_run_date
      from merchant_bank_accounts b
      left join payout_schedules s on s.merchant_id = b.merchant_id
     where coalesce(s.interval, 'daily') <> 'manual'
       ${after !== undefined ? sql`and b.merchant_id > ${after}` : sql``}
     order by b.merchant_id
     limit ${limit}`.execute(db)
  return rows.rows
}

/**
 * Claims a run: true for the one transaction that inserts it; a second worker's insert
 * waits for the first to commit and then finds it (false).
 */
export async function claimRun(tx: Tx, row: Insertable<PayoutRunsTable>): Promise<boolean> {
  const inserted = await tx
    .insertInto('payout_runs')
    .values(row)
    .onConflict((oc) => oc.columns(['merchant_id', 'run_date']).doNothing())
    .returning('run_date')
    .executeTakeFirst()
  return inserted !== undefined
}

export async function findRuns(db: Db, merchantId: string, limit: number) {
  return db
    .selectFrom('payout_runs')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('run_date', 'desc')
    .limit(limit)
    .execute()
}

/** The settlement payout created just before this one (its window starts after it). */
export function findPreviousSettlement(
  db: Db,
  merchantId: string,
  payout: Pick<PayoutRow, 'id' | 'created_at'>,
): Promise<PayoutRow | undefined> {
  return db
    .selectFrom('payouts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('kind', '=', 'settlement')
    .where((eb) =>
      eb.or([
        eb('created_at', '<', payout.created_at),
        eb.and([eb('created_at', '=', payout.created_at), eb('id', '<', payout.id)]),
      ]),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()
}
