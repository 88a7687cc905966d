import type { Db } from '../../database.ts'
import type { KeysetPosition } from '../../platform/cursor.ts'
import type { NewRequestLog, RequestLogRow } from './request-logs.table.ts'

// All SQL of the request log.

/** One multi-row insert per flush: the buffer's rows, written off the request path. */
export async function insertRequestLogs(db: Db, rows: readonly NewRequestLog[]): Promise<void> {
  if (rows.length === 0) return
  await db
    .insertInto('request_logs')
    .values([...rows])
    .execute()
}

export interface RequestLogPageQuery {
  merchantId: string
  before: KeysetPosition | undefined
  limit: number
  /** Answers with status in [statusMin, statusMax]. */
  statusMin?: number | undefined
  statusMax?: number | undefined
  since?: Date | undefined
  method?: string | undefined
}

/** The merchant's requests, newest first, from `before` (exclusive). */
export function findRequestLogPage(db: Db, q: RequestLogPageQuery): Promise<RequestLogRow[]> {
  let query = db.selectFrom('request_logs').selectAll().where('merchant_id', '=', q.merchantId)
  if (q.statusMin !== undefined) query = query.where('status', '>=', q.statusMin)
  if (q.statusMax !== undefined) query = query.where('status', '<=', q.statusMax)
  if (q.since !== undefined) query = query.where('created_at', '>=', q.since)
  if (q.method !== undefined) query = query.where('method', '=', q.method)
  const { before } = q
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}

/** Deletes up to `limit` rows older than `cutoff`, oldest first; returns how many. */
export async function deleteRequestLogsBefore(db: Db, cutoff: Date, limit: number) {
  const result = await db
    .deleteFrom('request_logs')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('request_logs')
        .select('id')
        .where('created_at', '<', cutoff)
        .orderBy('created_at')
        .limit(limit),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
