import type { Deps, Tx } from '../../database.ts'
import { notifyMerchantChanged } from './merchants.repository.ts'

// What every request reads about its merchant — the API key (with its decrypted secret) and
// the merchant row (pricing, KYC) — kept in process, so that a signed read makes no database
// round trip for them and a charge one fewer (issue 29).
//
// Correct across processes: whatever changes a key or a merchant row (revoke, roll, KYC)
// calls `announceMerchantChange` inside its transaction, which NOTIFYs the channel at
// commit; every API process LISTENs on it (src/platform/db/listen.ts, started by the app)
// and forgets that merchant's entries at once. The process that made the change also forgets
// them itself after the commit. While a process's listener is not connected (PostgreSQL,
// starting, or the connection lost) it cannot hear changes: then keys are cached for
// KEY_TTL_UNHEARD_MS only, and merchant rows not at all. PGlite is one process by
// construction, so its caches are live from the start.

export const MERCHANT_CHANGES_CHANNEL = 'kurus_merchant_changes'

// A safety net for a missed notification; changes normally arrive within milliseconds.
const TTL_LIVE_MS = 5 * 60_000
const KEY_TTL_UNHEARD_MS = 5_000
const ENTRIES_MAX = 10_000

interface Entry<T> {
  value: T
  merchantId: string
  fetchedAtMs: number
}

interface MerchantCaches {
  keys: Map<string, Entry<unknown>>
  merchants: Map<string, Entry<unknown>>
  /** Bumped by every forget: a read that began before one must not refill the cache. */
  generation: number
  /** True while changes made by other processes are heard (or there are none: PGlite). */
  live: boolean
}

const caches = new WeakMap<object, MerchantCaches>()

function cachesOf(deps: Pick<Deps, 'db'>): MerchantCaches {
  let c = caches.get(deps.db)
  if (!c) {
    c = { keys: new Map(), merchants: new Map(), generation: 0, live: false }
    caches.set(deps.db, c)
  }
  return c
}

/** Marks whether this process hears other processes' changes; either way starts afresh. */
export function setMerchantCachesLive(deps: Pick<Deps, 'db'>, live: boolean): void {
  const c = cachesOf(deps)
  c.live = live
  forgetMerchant(deps)
}

/**
 * Forgets what is cached about a merchant (every merchant when undefined). Call it after the
 * change has committed: called inside the transaction, a request reading between the forget
 * and the commit would cache the old row again.
 */
export function forgetMerchant(deps: Pick<Deps, 'db'>, merchantId?: string): void {
  const c = cachesOf(deps)
  c.generation += 1
  if (merchantId === undefined) {
    c.keys.clear()
    c.merchants.clear()
    return
  }
  for (const map of [c.keys, c.merchants]) {
    for (const [k, entry] of map) if (entry.merchantId === merchantId) map.delete(k)
  }
}

/** Tells every process, at commit, that the merchant's keys or row changed. */
export function announceMerchantChange(tx: Tx, merchantId: string): Promise<void> {
  return notifyMerchantChanged(tx, MERCHANT_CHANGES_CHANNEL, merchantId)
}

type Kind = 'keys' | 'merchants'

function ttlOf(c: MerchantCaches, kind: Kind): number {
  if (c.live) return TTL_LIVE_MS
  return kind === 'keys' ? KEY_TTL_UNHEARD_MS : 0
}

/**
 * The cached value under `key`, or `load()`'s, cached when it names a merchant and no forget
 * happened while it was read.
 */
export async function cached<T>(
  deps: Pick<Deps, 'db'>,
  kind: Kind,
  key: string,
  load: () => Promise<{ value: T; merchantId: string } | undefined>,
): Promise<T | undefined> {
  const c = cachesOf(deps)
  const ttl = ttlOf(c, kind)
  const map = c[kind]
  const hit = map.get(key)
  if (hit && Date.now() - hit.fetchedAtMs <= ttl) return hit.value as T
  const generation = c.generation
  const loaded = await load()
  if (!loaded) return undefined
  if (ttl > 0 && c.generation === generation) {
    if (map.size >= ENTRIES_MAX) map.clear()
    map.set(key, { value: loaded.value, merchantId: loaded.merchantId, fetchedAtMs: Date.now() })
  }
  return loaded.value
}
