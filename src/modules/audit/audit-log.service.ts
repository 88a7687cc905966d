import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { keysetCursor } from '../../platform/cursor.ts'
import { newId } from '../../platform/ids.ts'
import * as repo from './audit-log.repository.ts'
import type { AuditDetails } from './audit.table.ts'

// The dashboard's audit log: one entry {actor, action, target, at} per action a person takes
// (sign-in and sign-out, refunds, captures, keys, webhooks, team changes). Written after the
// action's own transaction has committed, by the dashboard handler that called the service:
// the services are shared with the API, whose callers are keys, not people.

export type { AuditDetails }

export interface AuditEntry {
  id: string
  actorId: string
  action: string
  target: string | null
  details: AuditDetails
  at: Date
}

export const AUDIT_PAGE_MAX = 100
const AUDIT_CURSOR = keysetCursor('audit-log', 'kurus/audit/log-cursor')

export async function recordAuditEntry(
  deps: Deps,
  entry: {
    merchantId: string
    actorId: string
    action: string
    target?: string | null
    details?: AuditDetails
  },
): Promise<void> {
  await repo.insertAuditEntry(deps.db, {
    id: newId('aud'),
    merchant_id: entry.merchantId,
    actor_id: entry.actorId,
    action: entry.action,
    target: entry.target ?? null,
    details: JSON.stringify(entry.details ?? {}),
    at: deps.clock.now(),
  })
}

/** The merchant's entries, newest first, `limit` a page; a signed cursor for the next one. */
export async function listAuditEntries(
  deps: Deps,
  merchantId: string,
  q: { limit: number; cursor?: string | undefined },
): Promise<{ items: AuditEntry[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= AUDIT_PAGE_MAX, 'limit')
  return AUDIT_CURSOR.page(deps.config.masterKey, merchantId, q, {
    // The log is the record of what people did: read from the primary, never a lagging replica.
    fetch: (position, limit) =>
      repo.findAuditPage(deps.db, {
        merchantId,
        ...(position ? { before: { at: position.createdAt, id: position.id } } : {}),
        limit,
      }),
    view: (rows) =>
      rows.map((r) => ({
        id: r.id,
        actorId: r.actor_id,
        action: r.action,
        target: r.target,
        details: r.details,
        at: r.at,
      })),
    position: (row) => ({ createdAt: row.at, id: row.id }),
  })
}
