import type { Deps, Tx } from '../../database.ts'
import { withRider } from '../../platform/db/transaction.ts'
import { assert } from '../../platform/assert.ts'
import { keysetCursor } from '../../platform/cursor.ts'
import { newId } from '../../platform/ids.ts'
import * as repo from './audit-log.repository.ts'
import type { AuditDetails } from './audit.table.ts'

// The dashboard's audit log: one entry {actor, action, target, at} per action a person takes
// (sign-in and sign-out, refunds, captures, keys, webhooks, team changes), through any door a
// person uses: the web pages, the dashboard API, the operator API. `audited` writes the entry
// inside the action's own transaction (decision 0036), so an action never commits without its
// entry; the services stay shared with the signed API, whose callers are keys, not people.

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

export interface AuditInput {
  merchantId: string
  actorId: string
  action: string
  target?: string | null
  details?: AuditDetails
}

function auditRow(deps: Deps, entry: AuditInput) {
  return {
    id: newId('aud'),
    merchant_id: entry.merchantId,
    actor_id: entry.actorId,
    action: entry.action,
    target: entry.target ?? null,
    details: JSON.stringify(entry.details ?? {}),
    at: deps.clock.now(),
  }
}

/**
 * An entry for something that is its own record (a denied attempt): there is no business
 * transaction for it to ride on. Or, given `tx`, written in the caller's transaction, for an
 * entry that depends on what the action found (a sign-out that ended a signed-in session).
 */
export async function recordAuditEntry(deps: Deps, entry: AuditInput, tx?: Tx): Promise<void> {
  await repo.insertAuditEntry(tx ?? deps.db, auditRow(deps, entry))
}

/**
 * Runs an action with its audit entry written in the action's first transaction, before it
 * commits. An action that opened no transaction (one statement, already committed) gets its
 * entry right after; an action that failed before committing gets none.
 */
export async function audited<T>(
  deps: Deps,
  entry: AuditInput,
  action: () => Promise<T>,
): Promise<T> {
  const row = auditRow(deps, entry)
  const { value, committed } = await withRider((tx) => repo.insertAuditEntry(tx as Tx, row), action)
  if (!committed) await repo.insertAuditEntry(deps.db, row)
  return value
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
