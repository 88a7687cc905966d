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
