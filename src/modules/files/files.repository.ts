import type { Db, Tx } from '../../database.ts'
import type { FileRow, NewFile } from './files.table.ts'

export async function insertFile(tx: Tx | Db, row: NewFile): Promise<void> {
  await tx.insertInto('files').values(row).execute()
}

/** The file's facts without its bytes (merchant_id in the key: another's file is missing). */
export function findFileById(
  db: Db,
  merchantId: string,
  id: string,
): Promise<Omit<FileRow, 'content'> | undefined> {
  return db
    .selectFrom('files')
    .select(['id', 'merchant_id', 'purpose', 'type', 'size', 'sha256', 'name', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export function findFileWithContent(
  db: Db,
  merchantId: string,
  id: string,
): Promise<FileRow | undefined> {
  return db
    .selectFrom('files')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** Facts of several of the merchant's files (those that exist and are its own). */
export function findFilesByIds(
  db: Db,
  merchantId: string,
  ids: readonly string[],
): Promise<Omit<FileRow, 'content'>[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db
    .selectFrom('files')
    .select(['id', 'merchant_id', 'purpose', 'type', 'size', 'sha256', 'name', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('id', 'in', ids)
    .execute()
}
