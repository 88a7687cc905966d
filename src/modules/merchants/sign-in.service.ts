import { hkdfSync } from 'node:crypto'
import type { Deps } from '../../database.ts'
import {
  hashPassword,
  passwordHashCost,
  hmacSha256Hex,
  randomToken,
  verifyPassword,
} from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import * as repo from './merchants.repository.ts'

// Dashboard sign-in: password check with a constant-cost answer for unknown emails, the
// per-email lockout, and the hash upgrade to the configured cost.

// A hash of a random password: an unknown email still costs one scrypt, so the response
// time does not tell which emails have an account. One per cost (processes run one cost;
// tests build apps with several).
const dummyHashes = new Map<number, Promise<string>>()

function dummyHash(cost: number): Promise<string> {
  let hash = dummyHashes.get(cost)
  if (!hash) dummyHashes.set(cost, (hash = hashPassword(randomToken(12), cost)))
  return hash
}

export interface DashboardUser {
  userId: string
  merchantId: string
  email: string
}

// Sign-in lockout (PCI DSS 8.3.4): 5 failed passwords for one email within 15 minutes lock
// that email for 15 minutes, from every client address and in every process (the state is in
// the database). While locked, no password is checked at all, so the right one is refused
// with the same answer as a wrong one. An unknown email is counted and locked exactly like a
// known one, so the lockout tells nothing about which emails have an account.
export const SIGN_IN_FAILURES_MAX = 5
export const SIGN_IN_WINDOW_MS = 15 * 60_000
export const SIGN_IN_LOCK_MS = 15 * 60_000
// Each sign-in deletes at most this many rows whose window and lock are over.
const SIGN_IN_CLEANUP_BATCH = 100

/** The lockout row's key: a keyed hash of the email as it is looked up (lowercased). */
function signInThrottleKey(deps: Pick<Deps, 'config'>, email: string): string {
  const key = Buffer.from(
    hkdfSync('sha256', deps.config.masterKey, Buffer.alloc(0), 'kurus/dashboard/sign-in', 32),
  )
  return hmacSha256Hex(key, email.toLowerCase())
}

/**
 * Counts this attempt as a failure before the password is checked (undone on success), so
 * parallel guesses cannot all pass the check while the first ones are still hashing: at most
 * SIGN_IN_FAILURES_MAX passwords are ever checked per window. False: the email is locked.
 */
async function reserveSignInAttempt(deps: Deps, emailKey: string): Promise<boolean> {
  const now = deps.clock.now()
  const nowMs = now.getTime()
  return transact(deps.db, async (tx) => {
    const row = await repo.lockLoginThrottle(tx, emailKey, now)
    if (row.locked_until && row.locked_until.getTime() > nowMs) return false
    const failures = row.failures.filter((at) => at > nowMs - SIGN_IN_WINDOW_MS)
    // Only attempts still running can fill the window without a lock: wait for them.
    if (failures.length >= SIGN_IN_FAILURES_MAX) return false
    failures.push(nowMs)
    const locks = failures.length >= SIGN_IN_FAILURES_MAX
    const lockedUntil = locks ? new Date(nowMs + SIGN_IN_LOCK_MS) : null
    await repo.updateLoginThrottle(tx, emailKey, {
      // A lock starts a fresh count: when it ends, the email has five attempts again.
      failures: locks ? [] : failures,
      lockedUntil,
      expiresAt: lockedUntil ?? new Date(nowMs + SIGN_IN_WINDOW_MS),
    })
    if (locks) deps.log.warn({ emailKey: emailKey.slice(0, 16) }, 'dashboard sign-in locked')
    return true
  })
}

/**
 * The dashboard user for these credentials, or undefined: one answer for an unknown email, a
 * wrong password and a locked email. Every way into the dashboard (the API's login, a sign-in
 * page) goes through here, so the lockout holds for all of them.
 */
export async function verifyDashboardLogin(
  deps: Deps,
  email: string,
  password: string,
): Promise<DashboardUser | undefined> {
  await repo.deleteExpiredLoginThrottles(deps.db, deps.clock.now(), SIGN_IN_CLEANUP_BATCH)
  const emailKey = signInThrottleKey(deps, email)
  if (!(await reserveSignInAttempt(deps, emailKey))) return undefined
  const row = await repo.findDashboardUserByEmail(deps.db, email)
  const cost = deps.config.passwordHashCost
  const ok = await verifyPassword(password, row?.password_hash ?? (await dummyHash(cost)))
  if (!row || !ok) return undefined
  // A hash made with a lower cost than the configured one is upgraded while the password
  // is at hand (the only moment it is).
  if ((passwordHashCost(row.password_hash) ?? cost) < cost) {
    await repo.upgradePasswordHash(
      deps.db,
      row.id,
      row.password_hash,
      await hashPassword(password, cost),
    )
  }
  // The right password clears the count (and a lock this very attempt had set).
  await repo.deleteLoginThrottle(deps.db, emailKey)
  return { userId: row.id, merchantId: row.merchant_id, email: row.email }
}

/** Where the merchant's notices go (e.g. a disabled webhook endpoint). */
export async function listDashboardEmails(deps: Deps, merchantId: string): Promise<string[]> {
  const rows = await repo.findDashboardUsersByMerchant(deps.db, merchantId)
  return rows.map((r) => r.email)
}
