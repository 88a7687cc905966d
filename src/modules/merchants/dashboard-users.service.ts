import type { Deps, Tx } from '../../database.ts'
import { decryptWithAny, encrypt, hashPassword } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import { newId } from '../../platform/ids.ts'
import {
  keyRing,
  reencryptSealedRows,
  ringKeys,
  type ReencryptionReport,
  type SealedRow,
} from '../../platform/key-rotation.ts'
import * as repo from './dashboard-users.repository.ts'
import { merchantsError } from './merchants.errors.ts'
import type { DashboardRole, DashboardUserRow } from './merchants.table.ts'

// The merchant's dashboard team (dashboard_users): members, their roles and their TOTP
// second factor. What each role may do is the dashboard module's permission table; this
// file keeps the data and the one rule about it that is the team's own: a merchant always
// keeps at least one owner. Sign-in itself is verifyDashboardLogin (merchants.service.ts).

export type { DashboardRole }

export const DASHBOARD_ROLES: readonly DashboardRole[] = [
  'owner',
  'admin',
  'developer',
  'finance',
  'support',
  'viewer',
]

export function isDashboardRole(value: unknown): value is DashboardRole {
  return typeof value === 'string' && (DASHBOARD_ROLES as readonly string[]).includes(value)
}

export interface DashboardMember {
  userId: string
  merchantId: string
  email: string
  role: DashboardRole
  totpEnabled: boolean
  createdAt: Date
}

function toMember(row: DashboardUserRow): DashboardMember {
  return {
    userId: row.id,
    merchantId: row.merchant_id,
    email: row.email,
    role: row.role,
    totpEnabled: row.totp_enabled_at !== null,
    createdAt: row.created_at,
  }
}

/** The member, or undefined when there is no such user in this merchant (removed, or another's). */
export async function getDashboardMember(
  deps: Deps,
  merchantId: string,
  userId: string,
): Promise<DashboardMember | undefined> {
  const row = await repo.findDashboardUser(deps.db, merchantId, userId)
  return row && toMember(row)
}

export async function listDashboardMembers(
  deps: Deps,
  merchantId: string,
): Promise<DashboardMember[]> {
  return (await repo.listDashboardUsers(deps.db, merchantId)).map(toMember)
}

export async function isDashboardEmailTaken(deps: Deps, email: string): Promise<boolean> {
  return repo.dashboardEmailExists(deps.db, email)
}

/**
 * Adds a member inside the caller's transaction (an accepted invitation and the new user
 * commit together). Hash the password first: scrypt must not run inside a transaction.
 */
export async function addDashboardMember(
  tx: Tx,
  input: {
    merchantId: string
    email: string
    passwordHash: string
    role: DashboardRole
    at: Date
  },
): Promise<DashboardMember> {
  const email = input.email.toLowerCase()
  if (await repo.dashboardEmailExists(tx, email)) throw merchantsError('dashboard_email_taken')
  const id = newId('usr')
  await repo.insertDashboardUserRow(tx, {
    id,
    merchant_id: input.merchantId,
    email,
    password_hash: input.passwordHash,
    created_at: input.at,
    role: input.role,
  })
  return {
    userId: id,
    merchantId: input.merchantId,
    email,
    role: input.role,
    totpEnabled: false,
    createdAt: input.at,
  }
}

/** The account an email signs in with, if any (a password reset's lookup). */
export async function findDashboardAccount(
  deps: Deps,
  email: string,
): Promise<DashboardMember | undefined> {
  const row = await repo.findDashboardUserByEmail(deps.db, email.trim())
  return row && toMember(row)
}

/** Sets the member's password hash inside the caller's transaction (hash it before). */
export async function setDashboardMemberPassword(
  tx: Tx,
  merchantId: string,
  userId: string,
  passwordHash: string,
): Promise<void> {
  const done = await repo.updateDashboardUserPassword(tx, merchantId, userId, passwordHash)
  if (!done) throw merchantsError('dashboard_user_not_found')
}

/**
 * Moves the member to a new sign-in email inside the caller's transaction; an email is one
 * account, so one another account holds is refused.
 */
export async function setDashboardMemberEmail(
  tx: Tx,
  merchantId: string,
  userId: string,
  email: string,
): Promise<void> {
  const lower = email.toLowerCase()
  if (await repo.dashboardEmailExists(tx, lower)) throw merchantsError('dashboard_email_taken')
  const done = await repo.updateDashboardUserEmail(tx, merchantId, userId, lower)
  if (!done) throw merchantsError('dashboard_user_not_found')
}

/** scrypt, for a password a new member chose (before addDashboardMember's transaction). */
export function hashDashboardPassword(deps: Deps, password: string): Promise<string> {
  return hashPassword(password, deps.config.passwordHashCost)
}

/** Changes the team under the merchant's member rows' lock, keeping at least one owner. */
async function withTeam<T>(
  deps: Deps,
  merchantId: string,
  userId: string,
  fn: (tx: Tx, target: DashboardUserRow, owners: number) => Promise<T>,
): Promise<T> {
  return transact(deps.db, async (tx) => {
    // Locking every member of the merchant serialises concurrent demotions: two owners
    // demoting each other cannot both succeed and leave none.
    const rows = await repo.lockDashboardUsersOfMerchant(tx, merchantId)
    const target = rows.find((r) => r.id === userId)
    if (!target) throw merchantsError('dashboard_user_not_found')
    return fn(tx, target, rows.filter((r) => r.role === 'owner').length)
  })
}

export async function changeDashboardMemberRole(
  deps: Deps,
  merchantId: string,
  userId: string,
  role: DashboardRole,
): Promise<DashboardMember> {
  return withTeam(deps, merchantId, userId, async (tx, target, owners) => {
    if (target.role === 'owner' && role !== 'owner' && owners <= 1) {
      throw merchantsError('last_owner')
    }
    await repo.updateDashboardUserRole(tx, merchantId, userId, role)
    return toMember({ ...target, role })
  })
}

export async function removeDashboardMember(
  deps: Deps,
  merchantId: string,
  userId: string,
): Promise<DashboardMember> {
  return withTeam(deps, merchantId, userId, async (tx, target, owners) => {
    if (target.role === 'owner' && owners <= 1) throw merchantsError('last_owner')
    await repo.deleteDashboardUser(tx, merchantId, userId)
    return toMember(target)
  })
}

// ---- TOTP second factor: the secret is sealed under the master key, bound to the user id.

function masterKeys(deps: Pick<Deps, 'config'>): readonly Buffer[] {
  return ringKeys(keyRing(deps.config))
}

function totpAad(userId: string): string {
  return `dashboard-totp:${userId}`
}

/**
 * Turns two-factor on with this (already verified) secret, or off with null; in the caller's
 * transaction when given one (the dashboard's recovery codes and audit entry commit with it).
 */
export async function setDashboardMemberTotp(
  deps: Deps,
  merchantId: string,
  userId: string,
  totp: { secretBase32: string; counter: number } | null,
  tx?: Tx,
): Promise<void> {
  const done = await repo.updateDashboardUserTotp(tx ?? deps.db, merchantId, userId, {
    secretEnc: totp ? encrypt(deps.config.masterKey, totp.secretBase32, totpAad(userId)) : null,
    enabledAt: totp ? deps.clock.now() : null,
    // The code that proved the enrolment is spent.
    lastCounter: totp ? totp.counter : null,
  })
  if (!done) throw merchantsError('dashboard_user_not_found')
}

/** The member's TOTP secret (base32) to check a code against; undefined when not enrolled. */
export async function dashboardMemberTotpSecret(
  deps: Deps,
  merchantId: string,
  userId: string,
): Promise<string | undefined> {
  const row = await repo.findDashboardUser(deps.db, merchantId, userId)
  if (!row?.totp_secret_enc) return undefined
  return decryptWithAny(masterKeys(deps), row.totp_secret_enc, totpAad(userId)).toString('utf8')
}

/** Spends a code's time step; false when that step (or a later one) was used already. */
export function spendTotpStep(
  deps: Deps,
  merchantId: string,
  userId: string,
  counter: number,
): Promise<boolean> {
  return repo.advanceTotpCounter(deps.db, merchantId, userId, counter)
}

function totpSecretRow(row: { id: string; totp_secret_enc: string | null }): SealedRow {
  return { key: row.id, fields: [{ envelope: row.totp_secret_enc, aad: totpAad(row.id) }] }
}

/** Master-key rotation: TOTP secrets still sealed under a previous key, under the current one. */
export async function reencryptDashboardTotpSecrets(
  deps: Pick<Deps, 'db' | 'config'>,
  batchSize = 500,
): Promise<ReencryptionReport> {
  return reencryptSealedRows(
    keyRing(deps.config),
    {
      page: async (after, limit) =>
        (await repo.findTotpSecretsAfter(deps.db, after ?? '', limit)).map(totpSecretRow),
      reload: async (id) => {
        const row = await repo.findTotpSecret(deps.db, id)
        return row && totpSecretRow(row)
      },
      update: async (row, [to]) => {
        const from = row.fields[0]?.envelope
        if (typeof from !== 'string' || typeof to !== 'string') return false
        return repo.updateTotpSecretIfUnchanged(deps.db, row.key, from, to)
      },
    },
    batchSize,
  )
}
