import type { Insertable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type {
  DashboardInvitationRow,
  DashboardInvitationsTable,
  DashboardSessionRow,
  DashboardSessionsTable,
  SessionKind,
} from './dashboard.table.ts'

// All SQL of the dashboard module: web sessions, team invitations, per-merchant settings.

// ---- sessions

export async function insertSession(
  db: Db | Tx,
  row: Insertable<DashboardSessionsTable>,
): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute()
}

export function findLiveSession(
  db: Db,
  idHash: string,
  kind: SessionKind,
): Promise<DashboardSessionRow | undefined> {
  return db
    .selectFrom('dashboard_sessions')
    .selectAll()
    .where('id_hash', '=', idHash)
    .where('kind', '=', kind)
    .where('ended_at', 'is', null)
    .executeTakeFirst()
}

export async function touchSession(db: Db, idHash: string, at: Date): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ last_seen_at: at })
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .execute()
}

/** Ends a session; true if it was live (a second sign-out finds nothing to end). */
export async function endSession(db: Db | Tx, idHash: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_sessions')
    .set({ ended_at: at })
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Ends the user's live sessions (of one kind, or all of them). */
export async function endSessionsOfUser(
  db: Db | Tx,
  userId: string,
  at: Date,
  kind?: SessionKind,
): Promise<void> {
  let query = db
    .updateTable('dashboard_sessions')
    .set({ ended_at: at })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
  if (kind) query = query.where('kind', '=', kind)
  await query.execute()
}

export async function updateSessionPendingTotp(
  db: Db | Tx,
  idHash: string,
  pendingEnc: string | null,
): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ totp_pending_enc: pendingEnc })
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .execute()
}

/** Keeps (or, null, drops) a freshly made set of recovery codes for the page to show once. */
export async function updateSessionRecoveryCodes(
  db: Db | Tx,
  idHash: string,
  sealed: string | null,
): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ recovery_codes_enc: sealed })
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .execute()
}

/** One more wrong second-factor code; returns the new count (undefined: not live). */
export async function countSecondFactorFailure(
  db: Db,
  idHash: string,
): Promise<number | undefined> {
  const row = await db
    .updateTable('dashboard_sessions')
    .set((eb) => ({ second_factor_failures: eb('second_factor_failures', '+', 1) }))
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .returning('second_factor_failures')
    .executeTakeFirst()
  return row?.second_factor_failures
}

/** Deletes up to `limit` sessions past their absolute end or ended before `endedBefore`. */
export async function deleteOldSessions(db: Db, now: Date, limit: number): Promise<void> {
  await db
    .deleteFrom('dashboard_sessions')
    .where('id_hash', 'in', (q) =>
      q
        .selectFrom('dashboard_sessions')
        .select('id_hash')
        .where('expires_at', '<=', now)
        .limit(limit),
    )
    .execute()
}

// ---- second-factor throttles (per user)

export async function lockSecondFactorThrottle(tx: Tx, userId: string) {
  await tx
    .insertInto('dashboard_second_factor_throttles')
    .values({ user_id: userId, failures: '[]', locked_until: null })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute()
  return tx
    .selectFrom('dashboard_second_factor_throttles')
    .selectAll()
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirstOrThrow()
}

export async function updateSecondFactorThrottle(
  tx: Tx,
  userId: string,
  state: { failures: number[]; lockedUntil: Date | null },
): Promise<void> {
  await tx
    .updateTable('dashboard_second_factor_throttles')
    .set({ failures: JSON.stringify(state.failures), locked_until: state.lockedUntil })
    .where('user_id', '=', userId)
    .execute()
}

export async function clearSecondFactorThrottle(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('dashboard_second_factor_throttles').where('user_id', '=', userId).execute()
}

// ---- recovery codes (per user)

/** Replaces the user's recovery codes with these hashes (none: the user has no codes). */
export async function replaceRecoveryCodes(
  tx: Tx,
  userId: string,
  hashes: string[],
  at: Date,
): Promise<void> {
  await tx.deleteFrom('dashboard_recovery_codes').where('user_id', '=', userId).execute()
  if (hashes.length === 0) return
  await tx
    .insertInto('dashboard_recovery_codes')
    .values(hashes.map((code_hash) => ({ user_id: userId, code_hash, created_at: at })))
    .execute()
}

/** Spends an unused code of the user; false when there is none with that hash. */
export async function spendRecoveryCode(
  db: Db | Tx,
  userId: string,
  hash: string,
  at: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_recovery_codes')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export async function countUnusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('dashboard_recovery_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

// ---- invitations

export async function insertInvitation(
  db: Db | Tx,
  row: Insertable<DashboardInvitationsTable>,
): Promise<void> {
  await db.insertInto('dashboard_invitations').values(row).execute()
}

export function findInvitationByTokenHash(
  db: Db | Tx,
  tokenHash: string,
): Promise<DashboardInvitationRow | undefined> {
  return db
    .selectFrom('dashboard_invitations')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst()
}

export function lockInvitationByTokenHash(
  tx: Tx,
  tokenHash: string,
): Promise<DashboardInvitationRow | undefined> {
  return tx
    .selectFrom('dashboard_invitations')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .forUpdate()
    .executeTakeFirst()
}

export async function markInvitationAccepted(tx: Tx, id: string, at: Date): Promise<void> {
  await tx
    .updateTable('dashboard_invitations')
    .set({ accepted_at: at })
    .where('id', '=', id)
    .execute()
}

export async function revokeInvitation(
  db: Db | Tx,
  merchantId: string,
  id: string,
  at: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_invitations')
    .set({ revoked_at: at })
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Invitations still open (not accepted, revoked or expired), newest first. */
export function findOpenInvitations(
  db: Db,
  merchantId: string,
  now: Date,
): Promise<DashboardInvitationRow[]> {
  return db
    .selectFrom('dashboard_invitations')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(100)
    .execute()
}

// ---- settings

export async function findTwoFactorRequired(db: Db, merchantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('dashboard_settings')
    .select('two_factor_required')
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst()
  return row?.two_factor_required ?? false
}

export async function upsertTwoFactorRequired(
  db: Db | Tx,
  merchantId: string,
  required: boolean,
  at: Date,
): Promise<void> {
  await db
    .insertInto('dashboard_settings')
    .values({ merchant_id: merchantId, two_factor_required: required, updated_at: at })
    .onConflict((oc) =>
      oc.column('merchant_id').doUpdateSet({ two_factor_required: required, updated_at: at }),
    )
    .execute()
}
