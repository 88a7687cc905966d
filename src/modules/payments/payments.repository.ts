import { sql, type CompiledQuery, type ExpressionBuilder, type Updateable } from 'kysely'
import { jsonArrayFrom } from 'kysely/helpers/postgres'
import type { Database, Db, Tx } from '../../database.ts'
import { ASYNC_COMMIT } from '../../platform/db/transaction.ts'
import { acquirerOfPaymentColumn } from '../acquirer/index.ts'
import {
  CAPTURES,
  PAYMENT_VIEW_COLUMNS,
  PAYMENTS,
  SESSIONS,
  type CaptureRow,
  type NewCapture,
  type NewPayment,
  type PaymentRow,
  type PaymentStatus,
  type PaymentsTable,
} from './payments.table.ts'

// Payments and their captures. Sessions, refunds and the risk facts have repositories of
// their own in this module (sessions.repository.ts, refunds.repository.ts,
// risk-facts.repository.ts).

export async function insertPayment(db: Db, row: NewPayment): Promise<void> {
  await db.insertInto('payments').values(row).execute()
}

/**
 * A card charge's intent, committed without waiting for the WAL flush (ASYNC_COMMIT): the
 * card cannot reach an acquirer before the vault's audit row of its detokenization commits
 * synchronously, which flushes the WAL up to and including this row; a server crash before
 * then loses an intent nobody acted on, and fails the request that wrote it.
 */
export async function insertCardIntent(
  db: Db,
  row: NewPayment,
  /** Transaction-level advisory locks taken by the same statement (risk-facts.repository.ts). */
  lockKeys: readonly string[] = [],
): Promise<PaymentRow> {
  let q = db.insertInto('payments').values(row).returningAll().returning(ASYNC_COMMIT)
  // The risk check's velocity locks ride on the insert (one round trip less): RETURNING runs
  // the subquery within this statement, so they are held before the count's statement
  // takes its snapshot, as a statement of their own would be.
  if (lockKeys.length > 0) q = q.returning(advisoryLocks(lockKeys))
  const {
    async_commit: _,
    velocity_locks: __,
    ...payment
  } = (await q.executeTakeFirstOrThrow()) as PaymentRow & {
    async_commit: string
    velocity_locks?: unknown
  }
  return payment
}

/**
 * Transaction-level advisory locks on `keys`, taken in one order (the hash's), so two
 * transactions locking overlapping sets never wait on each other in a cycle. The volatile
 * lock call sits in a sorted subquery's output, which PostgreSQL evaluates after the sort
 * and never prunes.
 */
function advisoryLocks(keys: readonly string[]) {
  return sql<string>`(select count(*) from (
      select pg_advisory_xact_lock(h) from (
        select distinct hashtextextended(key, 0) as h from unnest(${keys}::text[]) as key
      ) as hashes order by h
    ) as locks)`.as('velocity_locks')
}

export function findPaymentById(
  db: Db,
  merchantId: string,
  paymentId: string,
): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', paymentId)
    .executeTakeFirst()
}

/**
 * A payment and its completed captures, oldest first, in one statement (one round trip for
 * GET /v1/payments/{id}): the captures come as a JSON array and are revived into rows.
 */
/**
 * Payments of the merchant by id, each with its completed captures (GET /v1/payments: one
 * page at once). Order is the caller's to restore.
 */

/** A payment's completed captures, oldest first, as a JSON column of the payment's row. */
function completedCaptures(eb: ExpressionBuilder<Database, 'payments'>, merchantId: string) {
  return jsonArrayFrom(
    eb
      .selectFrom('captures')
      .selectAll('captures')
      .whereRef('captures.payment_id', '=', 'payments.id')
      .where('captures.merchant_id', '=', merchantId)
      .where('captures.status', '=', 'completed')
      .orderBy('captures.created_at')
      .orderBy('captures.id'),
  )
}

export async function findPaymentsWithCaptures(
  db: Db,
  merchantId: string,
  paymentIds: readonly string[],
): Promise<{ row: PaymentRow; captures: CaptureRow[] }[]> {
  if (paymentIds.length === 0) return []
  const found = await db
    .selectFrom('payments')
    .selectAll('payments')
    .select((eb) => completedCaptures(eb, merchantId).as('captures'))
    .where('payments.merchant_id', '=', merchantId)
    .where('payments.id', 'in', paymentIds)
    .execute()
  return found.map(({ captures, ...row }) => ({ row, captures: captures.map(reviveCapture) }))
}

export async function findPaymentWithCaptures(
  db: Db,
  merchantId: string,
  paymentId: string,
): Promise<{ row: PaymentRow; captures: CaptureRow[] } | undefined> {
  const found = await db
    .selectFrom('payments')
    .selectAll('payments')
    .select((eb) => completedCaptures(eb, merchantId).as('captures'))
    .where('payments.merchant_id', '=', merchantId)
    .where('payments.id', '=', paymentId)
    .executeTakeFirst()
  if (!found) return undefined
  const { captures, ...row } = found
  return { row, captures: captures.map(reviveCapture) }
}

// Stand-ins for the read's parameters while it is compiled (never valid ids).
const MERCHANT_PARAM = '\u0000merchant'
const PAYMENT_PARAM = '\u0000payment'

function paymentForRead(db: Db, merchantId: string, paymentId: string) {
  return db
    .selectFrom('payments')
    .select(PAYMENT_VIEW_COLUMNS.map((column) => `payments.${column}` as const))
    .select((eb) => [
      jsonArrayFrom(
        eb
          .selectFrom('captures')
          .select([
            'captures.id',
            'captures.amount',
            'captures.created_at',
            'captures.completed_at',
          ])
          .whereRef('captures.payment_id', '=', 'payments.id')
          .where('captures.merchant_id', '=', merchantId)
          .where('captures.status', '=', 'completed')
          .orderBy('captures.created_at')
          .orderBy('captures.id'),
      ).as('captures'),
      acquirerOfPaymentColumn(eb, eb.ref('payments.id')).as('acquirer'),
    ])
    .where('payments.merchant_id', '=', merchantId)
    .where('payments.id', '=', paymentId)
}

function withParameters<O>(compiled: CompiledQuery<O>, parameters: unknown[]): CompiledQuery<O> {
  return { ...compiled, parameters }
}

// Built and compiled once: building and compiling this statement per request cost more
// API CPU than parsing its row (issue 43's profile). Only the parameters change.
let paymentForReadCompiled: ReturnType<ReturnType<typeof paymentForRead>['compile']> | undefined

/**
 * GET /v1/payments/{id} in one round trip on the (merchant_id, id) key: the answer's columns
 * (PAYMENT_VIEW_COLUMNS), its completed captures and the acquirer module's POS facts (its
 * fragment, its SQL) as JSON columns.
 */
export async function findPaymentForRead(db: Db, merchantId: string, paymentId: string) {
  const compiled = (paymentForReadCompiled ??= paymentForRead(
    db,
    MERCHANT_PARAM,
    PAYMENT_PARAM,
  ).compile())
  const parameters = compiled.parameters.map((value) =>
    value === MERCHANT_PARAM ? merchantId : value === PAYMENT_PARAM ? paymentId : value,
  )
  const found = (await db.executeQuery(withParameters(compiled, parameters))).rows[0]
  if (!found) return undefined
  const { captures, acquirer, ...row } = found
  return {
    row,
    captures: captures.map((c) => ({
      id: c.id,
      amount: c.amount,
      created_at: new Date(c.created_at),
      completed_at: c.completed_at === null ? null : new Date(c.completed_at),
    })),
    acquirer,
  }
}

/** Public status lookups: the payment id itself is the bearer, so no merchant filter. */
export function findPaymentStatusById(
  db: Db,
  paymentId: string,
): Promise<Pick<PaymentRow, 'id' | 'status'> | undefined> {
  return db
    .selectFrom('payments')
    .select(['id', 'status'])
    .where('id', '=', paymentId)
    .executeTakeFirst()
}

export function lockPaymentById(
  tx: Tx,
  merchantId: string,
  paymentId: string,
): Promise<PaymentRow | undefined> {
  return tx
    .selectFrom('payments')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', paymentId)
    .forUpdate()
    .executeTakeFirst()
}

/** The live payment behind a transactionId fence: the one that is not failed. */
export function findFencedPayment(
  db: Db,
  merchantId: string,
  transactionId: string,
): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('transaction_id', '=', transactionId)
    .where('status', '<>', 'failed')
    .executeTakeFirst()
}

/**
 * The state machine's only write path: the update applies only while the row is still in
 * one of `from` that PAYMENTS allows into the new status, so two concurrent requests cannot
 * both move it and no move outside the table is written. Returns the new row, or undefined
 * when another request got there first.
 */
export async function transitionPayment(
  tx: Tx,
  merchantId: string,
  paymentId: string,
  from: readonly PaymentStatus[],
  set: Updateable<PaymentsTable> & { status: PaymentStatus; updated_at: Date },
): Promise<PaymentRow | undefined> {
  return tx
    .updateTable('payments')
    .set(set)
    .where('merchant_id', '=', merchantId)
    .where('id', '=', paymentId)
    .where('status', 'in', PAYMENTS.guard(set.status, from))
    .returningAll()
    .executeTakeFirst()
}

/**
 * An approved authorization recorded in one statement (one round trip of the outcome
 * transaction instead of three): the payment's conditional move out of `pending`, its
 * session's completion and, when it captures at once, the capture of the whole amount (id
 * `captureId`). Undefined when the payment was no longer `pending` (nothing written).
 */
export async function settleApprovedPayment(
  tx: Tx,
  merchantId: string,
  paymentId: string,
  set: Updateable<PaymentsTable> & { status: PaymentStatus; updated_at: Date },
  capture: { captureId: string; at: Date } | null,
): Promise<{ row: PaymentRow; capture: CaptureRow | null } | undefined> {
  const moved = tx.with('moved', (db) =>
    db
      .updateTable('payments')
      .set((eb) => ({ ...set, ...(capture ? { captured_minor: eb.ref('amount') } : {}) }))
      .where('merchant_id', '=', merchantId)
      .where('id', '=', paymentId)
      .where('status', 'in', PAYMENTS.guard(set.status, ['pending']))
      .returningAll(),
  )
  const completed = moved.with('completed', (db) =>
    db
      .updateTable('payment_sessions')
      .set({ status: 'completed', completed_at: set.updated_at })
      .where('id', '=', (eb) => eb.selectFrom('moved').select('moved.session_id'))
      .where('status', 'in', SESSIONS.guard('completed', ['active']))
      .returning('payment_sessions.id'),
  )
  if (!capture) {
    // A data-modifying WITH runs whether or not the main query reads it (PostgreSQL docs).
    const row = await completed.selectFrom('moved').selectAll('moved').executeTakeFirst()
    return row ? { row, capture: null } : undefined
  }
  const found = await completed
    .with('captured', (db) =>
      db
        .insertInto('captures')
        .columns([
          'id',
          'merchant_id',
          'payment_id',
          'amount',
          'commission',
          'final',
          'status',
          'created_at',
          'completed_at',
        ])
        .expression((eb) =>
          eb
            .selectFrom('moved')
            .select((s) => [
              s.val(capture.captureId).as('id'),
              'moved.merchant_id',
              'moved.id',
              'moved.amount',
              'moved.commission',
              s.lit(true).as('final'),
              s.val('completed').as('status'),
              s.val(capture.at).as('created_at'),
              s.val(capture.at).as('completed_at'),
            ]),
        )
        .returningAll(),
    )
    .selectFrom('moved')
    .selectAll('moved')
    .select((eb) => [
      eb
        .selectFrom('captured')
        .select(sql<CaptureJson>`to_jsonb(captured)`.as('c'))
        .as('captured'),
    ])
    .executeTakeFirst()
  if (!found) return undefined
  const { captured, ...row } = found
  return { row, capture: captured && reviveCapture(captured) }
}

/** A capture row as JSON gives it back: its times are ISO strings. */
type CaptureJson = Omit<CaptureRow, 'created_at' | 'completed_at'> & {
  created_at: string
  completed_at: string | null
}

function reviveCapture(c: CaptureJson): CaptureRow {
  return {
    ...c,
    created_at: new Date(c.created_at),
    completed_at: c.completed_at === null ? null : new Date(c.completed_at),
  }
}

/**
 * Payments whose authorization outcome we do not know: those the acquirer did not answer,
 * at once, and those left `pending` by a crash, once they are old enough that no request
 * can still be working on them.
 */
export function findUnsettledPayments(
  db: Db,
  abandonedBefore: Date,
  limit: number,
): Promise<PaymentRow[]> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('status', '=', 'pending')
    .where((eb) =>
      eb.or([eb('outcome_unknown', '=', true), eb('updated_at', '<=', abandonedBefore)]),
    )
    .orderBy('updated_at')
    .limit(limit)
    .execute()
}

export async function markOutcomeUnknown(db: Db, paymentId: string, at: Date): Promise<void> {
  await db
    .updateTable('payments')
    .set({ outcome_unknown: true, updated_at: at })
    .where('id', '=', paymentId)
    .where('status', '=', 'pending')
    .execute()
}

/**
 * Authorizations (with or without captures) still open that were authorized before `before`:
 * those on no test clock (testClockId null: payments_open_authorizations_idx), or those on
 * one clock (payments_test_clock_open_idx).
 */
export function findExpiredAuthorizations(
  db: Db,
  authorizedBefore: Date,
  limit: number,
  testClockId: string | null,
): Promise<PaymentRow[]> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('status', 'in', ['authorized', 'partially_captured'])
    .where('authorized_at', '<=', authorizedBefore)
    .where((eb) =>
      testClockId === null
        ? eb('test_clock_id', 'is', null)
        : eb('test_clock_id', '=', testClockId),
    )
    .orderBy('authorized_at')
    .limit(limit)
    .execute()
}

/** The earliest authorized_at among a test clock's open authorizations, at or before `upTo`. */
export async function findFirstClockAuthorization(
  db: Db,
  testClockId: string,
  upTo: Date,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('payments')
    .select('authorized_at')
    .where('test_clock_id', '=', testClockId)
    .where('status', 'in', ['authorized', 'partially_captured'])
    .where('authorized_at', '<=', upTo)
    .orderBy('authorized_at')
    .limit(1)
    .executeTakeFirst()
  return row?.authorized_at ?? undefined
}

// Captures

export async function insertCapture(tx: Tx, row: NewCapture): Promise<CaptureRow> {
  return tx.insertInto('captures').values(row).returningAll().executeTakeFirstOrThrow()
}

/** The capture whose bank call is under way, if any (at most one per payment). */
export function findPendingCapture(db: Db, paymentId: string): Promise<CaptureRow | undefined> {
  return db
    .selectFrom('captures')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .where('status', '=', 'pending')
    .executeTakeFirst()
}

export function lockCaptureById(tx: Tx, captureId: string): Promise<CaptureRow | undefined> {
  return tx
    .selectFrom('captures')
    .selectAll()
    .where('id', '=', captureId)
    .forUpdate()
    .executeTakeFirst()
}

/** pending → completed | failed; false when it was no longer pending. */
export async function settleCapture(
  tx: Tx,
  captureId: string,
  to: 'completed' | 'failed',
  at: Date,
): Promise<boolean> {
  const result = await tx
    .updateTable('captures')
    .set({ status: to, completed_at: at })
    .where('id', '=', captureId)
    .where('status', 'in', CAPTURES.guard(to, ['pending']))
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}

/** The payment's completed captures, oldest first. */
export function findCapturesByPayment(
  db: Db,
  merchantId: string,
  paymentId: string,
): Promise<CaptureRow[]> {
  return db
    .selectFrom('captures')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('payment_id', '=', paymentId)
    .where('status', '=', 'completed')
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

// Capture and void claims, chargeback totals, metadata

/**
 * Sets (or, with null, clears) the payment's action claim; the caller holds the row lock.
 * A void's reason is written with its claim, so whoever finishes the void knows it.
 */
export async function setPaymentAction(
  tx: Tx,
  paymentId: string,
  action: 'capture' | 'void' | null,
  at: Date,
  voidReason?: string | null,
): Promise<void> {
  await tx
    .updateTable('payments')
    .set({
      action_in_flight: action,
      updated_at: at,
      ...(voidReason !== undefined ? { void_reason: voidReason } : {}),
    })
    .where('id', '=', paymentId)
    .execute()
}

/** Open authorizations whose capture or void claim is older than `staleBefore`. */
export function findStaleActions(db: Db, staleBefore: Date, limit: number): Promise<PaymentRow[]> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('action_in_flight', 'is not', null)
    .where('updated_at', '<', staleBefore)
    .where('status', 'in', ['authorized', 'partially_captured'])
    .orderBy('updated_at')
    .limit(limit)
    .execute()
}

export async function updatePaymentChargebacks(
  tx: Tx,
  paymentId: string,
  set: { chargeback_open_minor: number; chargeback_total_minor: number; updated_at: Date },
): Promise<void> {
  await tx.updateTable('payments').set(set).where('id', '=', paymentId).execute()
}

/** The live payment of a transactionId if there is one, else its most recent failed attempt. */
export function findLatestPaymentByTransactionId(
  db: Db,
  merchantId: string,
  transactionId: string,
): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('transaction_id', '=', transactionId)
    .orderBy((eb) => eb.case().when('status', '=', 'failed').then(1).else(0).end())
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst()
}

// Audit (`kurus check-ledger`, test/reliability): whole-table reads in id order, for the
// operator's command and tests only, never for a request.

export function updatePaymentMetadata(
  tx: Tx,
  paymentId: string,
  metadata: Record<string, string>,
): Promise<PaymentRow> {
  return tx
    .updateTable('payments')
    .set({ metadata: JSON.stringify(metadata) })
    .where('id', '=', paymentId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findPaymentsPage(db: Db, afterId: string, limit: number): Promise<PaymentRow[]> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute()
}

export function findCapturesOfPayments(
  db: Db,
  paymentIds: readonly string[],
): Promise<CaptureRow[]> {
  if (paymentIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('captures')
    .selectAll()
    .where('payment_id', 'in', paymentIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export interface LinkUsageRow {
  payment_link_id: string
  /** Sessions whose payment captured money (captured, partially captured or refunded since). */
  captured: number
  /** Sessions that may still end in a capture: a live payment, or still open for paying. */
  taken: number
}

/**
 * Per payment link: its sessions that captured, and those that hold one of its maxPayments
 * (a captured or live payment, or an active session not past its expiry plus `grace` — a
 * charge that passed the session's expiry check just before it may still be writing its
 * payment). Raw SQL: two EXISTS probes per session over payments_session_idx.
 */
export async function findLinkUsage(
  db: Db,
  merchantId: string,
  linkIds: readonly string[],
  openSince: Date,
): Promise<LinkUsageRow[]> {
  if (linkIds.length === 0) return []
  const rows = await sql<{ payment_link_id: string; captured: string; taken: string }>`
    select s.payment_link_id,
           count(*) filter (where exists (
             select 1 from payments p where p.session_id = s.id
                and p.status in ('partially_captured', 'captured', 'refunded'))) as captured,
           count(*) filter (where exists (
             select 1 from payments p where p.session_id = s.id
                and p.status in ('pending', 'pending_3ds', 'authorized', 'partially_captured',
                                 'captured', 'refunded'))
             or (s.status = 'active' and s.expires_at > ${openSince})) as taken
      from payment_sessions s
     where s.merchant_id = ${merchantId}
       and s.payment_link_id in (${sql.join(linkIds)})
     group by s.payment_link_id`.execute(db)
  return rows.rows.map((r) => ({
    payment_link_id: r.payment_link_id,
    captured: Number(r.captured),
    taken: Number(r.taken),
  }))
}
