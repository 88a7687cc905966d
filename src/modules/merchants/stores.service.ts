import type { Deps } from '../../database.ts'
import * as repo from './stores.repository.ts'

export interface StoreSummary {
  id: string
  name: string
  createdAt: Date
}

/** The merchant's stores, oldest first (the dashboard's keys and webhooks are per store). */
export async function listStores(deps: Deps, merchantId: string): Promise<StoreSummary[]> {
  const rows = await repo.findStoresByMerchant(deps.db, merchantId)
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at }))
}
