import type { Insertable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type { AuditLogRow, AuditLogTable } from './audit.table.ts'

// SQL of the dashboard audit log: insert (the table refuses UPDATE, DELETE and TRUNCATE)
// and newest-first keyset pages per merchant (audit_log_merchant_at_idx).

export async function insertAuditEntry(db: Db | Tx, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute()
}

export function findAuditPage(
  db: Db,
  q: { merchantId: string; before?: { at: Date; id: string }; limit: number },
): Promise<AuditLogRow[]> {
  let query = db.selectFrom('audit_log').selectAll().where('merchant_id', '=', q.merchantId)
  const before = q.before
  if (before) {
    query = query.where((eb) =>
      eb.or([
        eb('at', '<', before.at),
        eb.and([eb('at', '=', before.at), eb('id', '<', before.id)]),
      ]),
    )
  }
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}
