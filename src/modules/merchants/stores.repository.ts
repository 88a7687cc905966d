import type { Db } from '../../database.ts'
import type { StoreRow } from './merchants.table.ts'

export function findStoresByMerchant(db: Db, merchantId: string): Promise<StoreRow[]> {
  return db
    .selectFrom('stores')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export async function findStoreOrigins(
  db: Db,
  merchantId: string,
  storeId: string,
): Promise<string[] | undefined> {
  const row = await db
    .selectFrom('stores')
    .select('allowed_origins')
    .where('merchant_id', '=', merchantId)
    .where('id', '=', storeId)
    .executeTakeFirst()
  return row?.allowed_origins
}

export async function setStoreOrigins(
  db: Db,
  merchantId: string,
  storeId: string,
  origins: string[],
): Promise<boolean> {
  const row = await db
    .updateTable('stores')
    .set({ allowed_origins: JSON.stringify(origins) })
    .where('merchant_id', '=', merchantId)
    .where('id', '=', storeId)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

export async function findOriginsOfStore(db: Db, storeId: string): Promise<string[] | undefined> {
  const row = await db
    .selectFrom('stores')
    .select('allowed_origins')
    .where('id', '=', storeId)
    .executeTakeFirst()
  return row?.allowed_origins
}
