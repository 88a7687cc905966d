import type { Deps } from '../../database.ts'
import { notFound, validationError } from '../../platform/errors.ts'
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

/** At most this many pages per store may take cards with Kuruş.js. */
const ALLOWED_ORIGINS_MAX = 20

/**
 * `https://shop.example` or `http://localhost:8080`: scheme, host and port only, as a browser
 * sends it in `Origin`. Plain http only for a loopback host, and only in the sandbox.
 */
export function normalizeOrigin(value: string, env: 'demo' | 'live'): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  if (url.origin !== value.replace(/\/$/, '')) return undefined
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  if (url.protocol === 'https:') return url.origin
  if (url.protocol === 'http:' && env === 'demo' && loopback) return url.origin
  return undefined
}

/** The store's allowed origins (Kuruş.js); 404 SVC-RES-3301 for another merchant's store. */
export async function getAllowedOrigins(
  deps: Deps,
  merchantId: string,
  storeId: string,
): Promise<string[]> {
  const origins = await repo.findStoreOrigins(deps.db, merchantId, storeId)
  if (!origins) throw notFound('store')
  return origins
}

/** Replaces the store's allowed origins; each must be an origin (400 names the bad one). */
export async function setAllowedOrigins(
  deps: Deps,
  merchantId: string,
  storeId: string,
  origins: string[],
): Promise<string[]> {
  if (origins.length > ALLOWED_ORIGINS_MAX) {
    throw validationError('origins', `at most ${ALLOWED_ORIGINS_MAX} origins`)
  }
  const normalized = origins.map((o, i) => {
    const n = normalizeOrigin(o, deps.config.env)
    if (!n) {
      throw validationError(
        `origins[${i}]`,
        deps.config.env === 'demo'
          ? 'must be an origin: https://host[:port], or http:// for localhost'
          : 'must be an https origin: https://host[:port]',
      )
    }
    return n
  })
  const unique = [...new Set(normalized)]
  if (!(await repo.setStoreOrigins(deps.db, merchantId, storeId, unique))) throw notFound('store')
  return unique
}

/** The allowed origins of the store a publishable key belongs to (none for a keyless store). */
export async function allowedOriginsOfStore(deps: Deps, storeId: string): Promise<string[]> {
  return (await repo.findOriginsOfStore(deps.db, storeId)) ?? []
}
