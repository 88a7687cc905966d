import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import { EXPORTS, type ExportRow, type ExportStatus, type NewExport } from './transactions.table.ts'

/** Statements and reports share the table; each API sees only its own kind of row. */
export type ExportScope = 'statement' | 'report'

// All SQL over the transactions module's own tables: exports and their file chunks.

export async function insertExport(tx: Tx, row: NewExport): Promise<void> {
  await tx.insertInto('transaction_exports').values(row).execute()
}

export function findExportById(
  db: Db,
  merchantId: string,
  exportId: string,
  scope: ExportScope = 'statement',
): Promise<ExportRow | undefined> {
  return db
    .selectFrom('transaction_exports')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', exportId)
    .where('kind', scope === 'statement' ? '=' : '<>', 'statement')
    .executeTakeFirst()
}

/** The merchant's reports, newest first (transaction_exports_merchant_reports_idx). */
export function findRecentReports(db: Db, merchantId: string, limit: number): Promise<ExportRow[]> {
  return db
    .selectFrom('transaction_exports')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('kind', '<>', 'statement')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
}

export function findExportByKey(
  db: Db,
  merchantId: string,
  idempotencyKey: string,
): Promise<ExportRow | undefined> {
  return db
    .selectFrom('transaction_exports')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst()
}

// Advisory locks live in (namespace, key) pairs; this namespace is the exports' own.
const EXPORT_LOCK_NAMESPACE = 0x4558504f // 'EXPO'

/**
 * Serialises one merchant's export requests until the transaction ends, so two at once cannot
 * both take the last place under the cap (a count alone cannot see the other's insert).
 */
export async function lockMerchantExports(tx: Tx, merchantId: string): Promise<void> {
  const key = createHash('sha256').update(merchantId).digest().readInt32BE(0)
  await sql`select pg_advisory_xact_lock(${EXPORT_LOCK_NAMESPACE}::int4, ${key}::int4)`.execute(tx)
}

/** The merchant's exports not yet finished: queued or building. */
export async function countUnfinishedExports(db: Db, merchantId: string): Promise<number> {
  const row = await db
    .selectFrom('transaction_exports')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('status', 'in', ['queued', 'processing'])
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

// What every claim resets: a new attempt starts with no rows, no file and no error.
const NEW_ATTEMPT = { row_count: 0, byte_size: 0, chunk_count: 0, error: null } as const

/**
 * Starts the next attempt of the export this job already owns (pg-boss retrying the job after
 * an error, or after the worker died): processing stays processing, attempt + 1. Undefined when
 * the job owns no unfinished export, so a duplicate delivery of a finished job does no harm.
 * An export left processing by a build from before migration 0210 has no `claimed_by`: its job
 * built its own export, so it is the one whose id names the job.
 */
export function resumeExportBuild(
  db: Db,
  jobKey: string,
  now: Date,
): Promise<ExportRow | undefined> {
  return db
    .updateTable('transaction_exports')
    .set((eb) => ({
      ...NEW_ATTEMPT,
      attempt: eb('attempt', '+', 1),
      started_at: now,
      updated_at: now,
    }))
    .where(
      'id',
      '=',
      sql<string>`(select o.id from transaction_exports o
        where (o.claimed_by = ${jobKey} or (o.claimed_by is null and o.id = ${jobKey}))
          and o.status = 'processing'
        order by o.started_at limit 1 for update skip locked)`,
    )
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst()
}

/**
 * Claims the fairest queued export of any merchant for this job: queued → processing, attempt 1.
 * Merchants take turns: fewest exports building first, then the one whose last build started
 * longest ago (never served first), then the oldest request. One merchant's full queue thus
 * delays another merchant's export by at most one build per worker, instead of by its whole
 * queue (issue 22 §4: 150 queued exports held another merchant's one for 140 s).
 * Raw SQL: a ranked, locking subquery of the table being updated reads plainer as SQL than as
 * nested builders. SKIP LOCKED lets concurrent workers take different exports instead of
 * queueing on the same row; two workers may then pick the same merchant at once (neither sees
 * the other's claim yet), which costs that round's turn order, never an export. Only each
 * merchant's oldest queued export is ranked (two index probes each, migration 0210), so a claim
 * costs in proportion to the merchants waiting, not to their queues: 40–60 ms with 1,000
 * merchants each at the cap and 100,000 finished exports (docs/transactions.md).
 */
export function claimNextExport(db: Db, jobKey: string, now: Date): Promise<ExportRow | undefined> {
  return db
    .updateTable('transaction_exports')
    .set((eb) => ({
      ...NEW_ATTEMPT,
      status: 'processing',
      attempt: eb('attempt', '+', 1),
      claimed_by: jobKey,
      started_at: now,
      updated_at: now,
    }))
    .where(
      'id',
      '=',
      sql<string>`(select c.id from transaction_exports c
        join (select distinct on (q.merchant_id) q.id from transaction_exports q
          where q.status = 'queued'
          order by q.merchant_id, q.created_at, q.id) head on head.id = c.id
        where c.status = 'queued'
        order by
          (select count(*) from transaction_exports r
            where r.merchant_id = c.merchant_id and r.status = 'processing'),
          (select max(s.started_at) from transaction_exports s
            where s.merchant_id = c.merchant_id and s.started_at is not null) asc nulls first,
          c.created_at, c.id
        limit 1 for update of c skip locked)`,
    )
    .where('status', 'in', EXPORTS.guard('processing', ['queued']))
    .returningAll()
    .executeTakeFirst()
}

/** Chunks of other attempts are garbage once one attempt owns (or finished) the export. */
export async function deleteChunksExceptAttempt(
  db: Db,
  exportId: string,
  attempt: number,
): Promise<void> {
  await db
    .deleteFrom('transaction_export_chunks')
    .where('export_id', '=', exportId)
    .where('attempt', '<>', attempt)
    .execute()
}

export async function deleteChunksOfAttempt(
  db: Db,
  exportId: string,
  attempt: number,
): Promise<void> {
  await db
    .deleteFrom('transaction_export_chunks')
    .where('export_id', '=', exportId)
    .where('attempt', '=', attempt)
    .execute()
}

export async function insertChunk(
  db: Db,
  exportId: string,
  attempt: number,
  seq: number,
  data: Uint8Array,
): Promise<void> {
  await db
    .insertInto('transaction_export_chunks')
    .values({ export_id: exportId, attempt, seq, data })
    .execute()
}

/** Progress for GET …/exports/{id} while the attempt still owns the export. */
export async function updateExportProgress(
  db: Db,
  exportId: string,
  attempt: number,
  rowCount: number,
  now: Date,
): Promise<void> {
  await db
    .updateTable('transaction_exports')
    .set({ row_count: rowCount, updated_at: now })
    .where('id', '=', exportId)
    .where('status', '=', 'processing')
    .where('attempt', '=', attempt)
    .execute()
}

/** processing → ready, only for the attempt that still owns the export. */
export async function markExportReady(
  db: Db,
  exportId: string,
  attempt: number,
  set: { rowCount: number; byteSize: number; chunkCount: number; now: Date; expiresAt: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('transaction_exports')
    .set({
      status: 'ready',
      row_count: set.rowCount,
      byte_size: set.byteSize,
      chunk_count: set.chunkCount,
      completed_at: set.now,
      expires_at: set.expiresAt,
      updated_at: set.now,
    })
    .where('id', '=', exportId)
    .where('status', 'in', EXPORTS.guard('ready', ['processing']))
    .where('attempt', '=', attempt)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}

export async function markExportFailed(
  db: Db,
  exportId: string,
  from: readonly ExportStatus[],
  error: string,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('transaction_exports')
    .set({ status: 'failed', error, completed_at: now, updated_at: now })
    .where('id', '=', exportId)
    .where('status', 'in', EXPORTS.guard('failed', from))
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}

export function findChunk(
  db: Db,
  exportId: string,
  attempt: number,
  seq: number,
): Promise<{ data: Uint8Array } | undefined> {
  return db
    .selectFrom('transaction_export_chunks')
    .select('data')
    .where('export_id', '=', exportId)
    .where('attempt', '=', attempt)
    .where('seq', '=', seq)
    .executeTakeFirst()
}

/** Ready exports whose retention has passed, oldest first. */
export function findExpiredExports(db: Db, now: Date, limit: number): Promise<{ id: string }[]> {
  return db
    .selectFrom('transaction_exports')
    .select('id')
    .where('status', '=', 'ready')
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute()
}

/** Exports no worker has touched since `before` (all retries of their job exhausted). */
export function findAbandonedExports(
  db: Db,
  before: Date,
  limit: number,
): Promise<{ id: string; status: ExportStatus }[]> {
  return db
    .selectFrom('transaction_exports')
    .select(['id', 'status'])
    .where('status', 'in', EXPORTS.sourcesOf('failed'))
    .where('updated_at', '<=', before)
    .orderBy('updated_at')
    .limit(limit)
    .execute()
}

/** ready → expired and the file's chunks deleted, in one transaction. */
export async function expireExport(tx: Tx, exportId: string, now: Date): Promise<boolean> {
  const result = await tx
    .updateTable('transaction_exports')
    .set({ status: 'expired', updated_at: now })
    .where('id', '=', exportId)
    .where('status', 'in', EXPORTS.guard('expired', ['ready']))
    .executeTakeFirst()
  if (result.numUpdatedRows !== 1n) return false
  await tx.deleteFrom('transaction_export_chunks').where('export_id', '=', exportId).execute()
  return true
}

/** Failed exports keep no file: drop whatever the failed attempts wrote. */
export async function deleteAllChunks(db: Db, exportId: string): Promise<void> {
  await db.deleteFrom('transaction_export_chunks').where('export_id', '=', exportId).execute()
}
