import type { Insertable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type { DashboardRole, DashboardUserRow, DashboardUsersTable } from './merchants.table.ts'

// SQL over dashboard_users for the dashboard's team, roles and two-factor (the sign-in
// lookups stay in merchants.repository.ts). Every query is scoped to one merchant.

export function findDashboardUser(
  db: Db | Tx,
  merchantId: string,
  userId: string,
): Promise<DashboardUserRow | undefined> {
  return db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', userId)
    .executeTakeFirst()
}

export function lockDashboardUsersOfMerchant(
  tx: Tx,
  merchantId: string,
): Promise<DashboardUserRow[]> {
  return tx
    .selectFrom('dashboard_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('id')
    .forUpdate()
    .execute()
}

export function listDashboardUsers(db: Db, merchantId: string): Promise<DashboardUserRow[]> {
  return db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export async function dashboardEmailExists(db: Db | Tx, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('dashboard_users')
    .select('id')
    .where('email', '=', email.toLowerCase())
    .executeTakeFirst()
  return row !== undefined
}

export async function insertDashboardUserRow(
  tx: Tx,
  row: Insertable<DashboardUsersTable>,
): Promise<void> {
  await tx.insertInto('dashboard_users').values(row).execute()
}

export async function updateDashboardUserRole(
  tx: Tx,
  merchantId: string,
  userId: string,
  role: DashboardRole,
): Promise<void> {
  await tx
    .updateTable('dashboard_users')
    .set({ role })
    .where('merchant_id', '=', merchantId)
    .where('id', '=', userId)
    .execute()
}

export async function deleteDashboardUser(
  tx: Tx,
  merchantId: string,
  userId: string,
): Promise<void> {
  await tx
    .deleteFrom('dashboard_users')
    .where('merchant_id', '=', merchantId)
    .where('id', '=', userId)
    .execute()
}

export async function updateDashboardUserTotp(
  db: Db | Tx,
  merchantId: string,
  userId: string,
  totp: { secretEnc: string | null; enabledAt: Date | null; lastCounter: number | null },
): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_users')
    .set({
      totp_secret_enc: totp.secretEnc,
      totp_enabled_at: totp.enabledAt,
      totp_last_counter: totp.lastCounter,
    })
    .where('merchant_id', '=', merchantId)
    .where('id', '=', userId)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * Records a used time step, only if it is later than the last one: of two sign-ins with the
 * same code, one wins (the conditional update is atomic).
 */
export async function advanceTotpCounter(
  db: Db,
  merchantId: string,
  userId: string,
  counter: number,
): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_users')
    .set({ totp_last_counter: counter })
    .where('merchant_id', '=', merchantId)
    .where('id', '=', userId)
    .where((eb) =>
      eb.or([eb('totp_last_counter', 'is', null), eb('totp_last_counter', '<', counter)]),
    )
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

// ---- master-key rotation: every sealed TOTP secret, in id order

export function findTotpSecretsAfter(
  db: Db,
  afterId: string,
  limit: number,
): Promise<{ id: string; totp_secret_enc: string | null }[]> {
  return db
    .selectFrom('dashboard_users')
    .select(['id', 'totp_secret_enc'])
    .where('id', '>', afterId)
    .where('totp_secret_enc', 'is not', null)
    .orderBy('id')
    .limit(limit)
    .execute()
}

export function findTotpSecret(
  db: Db,
  id: string,
): Promise<{ id: string; totp_secret_enc: string | null } | undefined> {
  return db
    .selectFrom('dashboard_users')
    .select(['id', 'totp_secret_enc'])
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function updateTotpSecretIfUnchanged(
  db: Db,
  id: string,
  from: string,
  to: string,
): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_users')
    .set({ totp_secret_enc: to })
    .where('id', '=', id)
    .where('totp_secret_enc', '=', from)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

// ---- the account's own changes (password, email)

export function findDashboardUserByEmail(
  db: Db,
  email: string,
): Promise<DashboardUserRow | undefined> {
  return db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('email', '=', email.toLowerCase())
    .executeTakeFirst()
}

export async function updateDashboardUserPassword(
  tx: Tx,
  merchantId: string,
  userId: string,
  passwordHash: string,
): Promise<boolean> {
  const result = await tx
    .updateTable('dashboard_users')
    .set({ password_hash: passwordHash })
    .where('merchant_id', '=', merchantId)
    .where('id', '=', userId)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export async function updateDashboardUserEmail(
  tx: Tx,
  merchantId: string,
  userId: string,
  email: string,
): Promise<boolean> {
  const result = await tx
    .updateTable('dashboard_users')
    .set({ email })
    .where('merchant_id', '=', merchantId)
    .where('id', '=', userId)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
