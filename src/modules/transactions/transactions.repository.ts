import type { Db, Tx } from '../../database.ts'
import type { ExportRow, ExportStatus, NewExport } from './transactions.table.ts'

// All SQL over the transactions module's own tables: exports and their file chunks.

export async function insertExport(tx: Tx, row: NewExport): Promise<void> {
  await tx.insertInto('transaction_exports').values(row).execute()
}

export function findExportById(
  db: Db,
  merchantId: string,
  exportId: string,
): Promise<ExportRow | undefined> {
  return db
    .selectFrom('transaction_exports')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', exportId)
    .executeTakeFirst()
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

/** Jobs carry the id only; the merchant comes from the row. */
export function findExportForJob(db: Db, exportId: string): Promise<ExportRow | undefined> {
  return db
    .selectFrom('transaction_exports')
    .selectAll()
    .where('id', '=', exportId)
    .executeTakeFirst()
}

/**
 * Starts a build attempt: queued (first run) or processing (a retry after a crash or an
 * error) becomes processing with the next attempt number. Returns undefined when the export
 * is already finished, so a duplicate job delivery does nothing.
 */
export function claimExportBuild(
  db: Db,
  exportId: string,
  now: Date,
): Promise<ExportRow | undefined> {
  return db
    .updateTable('transaction_exports')
    .set((eb) => ({
      status: 'processing',
      attempt: eb('attempt', '+', 1),
      row_count: 0,
      byte_size: 0,
      chunk_count: 0,
      error: null,
      started_at: now,
      updated_at: now,
    }))
    .where('id', '=', exportId)
    .where('status', 'in', ['queued', 'processing'])
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
    .where('status', '=', 'processing')
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
    .where('status', 'in', from)
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
    .where('status', 'in', ['queued', 'processing'])
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
    .where('status', '=', 'ready')
    .executeTakeFirst()
  if (result.numUpdatedRows !== 1n) return false
  await tx.deleteFrom('transaction_export_chunks').where('export_id', '=', exportId).execute()
  return true
}

/** Failed exports keep no file: drop whatever the failed attempts wrote. */
export async function deleteAllChunks(db: Db, exportId: string): Promise<void> {
  await db.deleteFrom('transaction_export_chunks').where('export_id', '=', exportId).execute()
}
