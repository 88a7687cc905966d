import { Secret, TOTP } from 'otpauth'
import type { Deps, Tx } from '../../database.ts'
import { audited, recordAuditEntry } from '../audit/index.ts'
import { randomInt } from 'node:crypto'
import { decrypt, encrypt, randomToken, sha256Hex } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import {
  dashboardMemberTotpSecret,
  getDashboardMember,
  setDashboardMemberTotp,
  spendTotpStep,
  verifyDashboardLogin,
  type DashboardMember,
} from '../merchants/index.ts'
import { dashboardError } from './dashboard.errors.ts'
import * as repo from './dashboard.repository.ts'
import type { DashboardSessionRow, SessionKind, SessionStage } from './dashboard.table.ts'
import { twoFactorApplies } from './permissions.ts'

// Sessions of the dashboard's web pages, kept server-side: the cookie carries 32 random bytes,
// the table their SHA-256. A session ends after 30 minutes without a request, 12 hours after
// sign-in whatever happens, at sign-out, and when its user leaves the team. Times come from
// deps.clock. Sign-in goes through verifyDashboardLogin (merchants) and nothing else, so the
// per-email lockout and the constant-time answer for unknown emails hold here too.
// A password alone gives a session in stage `second_factor` when the user has TOTP on (only
// the code page works), or `enrol` when the merchant requires two-factor of an owner or admin
// who has none yet (only the enrolment page works). Passing either step issues a NEW session
// id: a session id seen before the second factor is never the one that is fully signed in.

export const SESSION_IDLE_MS = 30 * 60_000
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60_000
// The dashboard API's tokens are sessions of kind `api` (decision 0036): the same idle limit,
// an hour at most, and a two-factor challenge that must be answered within 5 minutes.
export const API_SESSION_ABSOLUTE_MS = 60 * 60_000
const API_CHALLENGE_MS = 5 * 60_000
// last_seen_at is written at most once a minute: the idle timeout is exact to a minute, and
// a page's burst of requests (page, CSS, script) costs one write, not several.
const TOUCH_EVERY_MS = 60_000
/** Wrong codes allowed at the second-factor step before the session is ended. */
export const SECOND_FACTOR_ATTEMPTS_MAX = 5
// Per user, whatever the session or the door (decision 0036): 5 wrong codes within 15 minutes
// lock that user's second factor for 15 minutes. Signing in again does not reset the count.
export const TOTP_FAILURES_MAX = 5
export const TOTP_WINDOW_MS = 15 * 60_000
export const TOTP_LOCK_MS = 15 * 60_000
const CLEANUP_BATCH = 100

// RFC 6238 with the parameters every authenticator app understands.
const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const
// One step either side: a phone clock 30 s off still works.
const TOTP_WINDOW = 1

export interface WebSession {
  /** SHA-256 of the cookie value. */
  idHash: string
  stage: SessionStage
  member: DashboardMember
  createdAt: Date
  expiresAt: Date
  /** A TOTP secret being set up (base32), while the enrolment page is open. */
  pendingTotpSecret: string | null
  /** Recovery codes just made, until the page has shown them once. */
  freshRecoveryCodes: string[] | null
}

function hashId(token: string): string {
  return sha256Hex(token)
}

function pendingAad(idHash: string): string {
  return `dashboard-totp-pending:${idHash}`
}

function recoveryAad(idHash: string): string {
  return `dashboard-recovery-codes:${idHash}`
}

// ---- recovery codes (CONTRACT § "Dashboard sign-in everywhere", decision 0036)
// Ten per user, each 16 characters of a 32-letter alphabet (80 random bits) written in four
// groups: xxxx-xxxx-xxxx-xxxx. Stored as SHA-256 of the user id and the code: with 80 bits
// a fast hash is not a shortcut to the code, and the lookup stays one indexed statement.
export const RECOVERY_CODE_COUNT = 10
// Crockford's base32: no i, l, o or u to misread.
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
const RECOVERY_GROUPS = 4

function newRecoveryCode(): string {
  const groups: string[] = []
  for (let g = 0; g < RECOVERY_GROUPS; g++) {
    let group = ''
    for (let i = 0; i < 4; i++)
      group += RECOVERY_ALPHABET.charAt(randomInt(RECOVERY_ALPHABET.length))
    groups.push(group)
  }
  return groups.join('-')
}

/** The code as typed (any case, spaces or dashes anywhere), or undefined if it cannot be one. */
function normaliseRecoveryCode(typed: string): string | undefined {
  const letters = typed.toLowerCase().replace(/[\s-]+/g, '')
  return /^[a-z0-9]{16}$/.test(letters) ? letters : undefined
}

function recoveryHash(userId: string, normalised: string): string {
  return sha256Hex(`${userId}:${normalised}`)
}

/**
 * Makes a new set of recovery codes for the member, replacing every earlier one, inside the
 * caller's transaction; the plain codes are sealed into the session for the page to show once.
 */
async function issueRecoveryCodes(
  deps: Deps,
  tx: Tx,
  userId: string,
  sessionIdHash: string,
): Promise<void> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
  const hashes = codes.map((code) => recoveryHash(userId, normaliseRecoveryCode(code) ?? code))
  await repo.replaceRecoveryCodes(tx, userId, hashes, deps.clock.now())
  const sealed = encrypt(deps.config.masterKey, JSON.stringify(codes), recoveryAad(sessionIdHash))
  await repo.updateSessionRecoveryCodes(tx, sessionIdHash, sealed)
}

/** The recovery codes waiting to be shown, shown now: the session forgets them. */
export async function takeFreshRecoveryCodes(
  deps: Deps,
  session: WebSession,
): Promise<string[] | null> {
  if (!session.freshRecoveryCodes) return null
  await repo.updateSessionRecoveryCodes(deps.db, session.idHash, null)
  return session.freshRecoveryCodes
}

export async function unusedRecoveryCodes(deps: Deps, userId: string): Promise<number> {
  return repo.countUnusedRecoveryCodes(deps.db, userId)
}

/**
 * A new set of recovery codes, the old set void (a current TOTP code proves it is the member,
 * under the per-user lockout). Audited in the same transaction.
 */
export async function regenerateRecoveryCodes(
  deps: Deps,
  session: WebSession,
  code: string,
): Promise<void> {
  const { member } = session
  if (!member.totpEnabled) throw dashboardError('totp_code_wrong')
  if (!(await checkCodeThrottled(deps, member, code, { recovery: false }))) {
    throw dashboardError('totp_code_wrong')
  }
  await audited(
    deps,
    {
      merchantId: member.merchantId,
      actorId: member.userId,
      action: 'two_factor.recovery_codes_regenerate',
      target: member.email,
    },
    () => transact(deps.db, (tx) => issueRecoveryCodes(deps, tx, member.userId, session.idHash)),
  )
}

export async function twoFactorRequired(deps: Deps, merchantId: string): Promise<boolean> {
  return repo.findTwoFactorRequired(deps.db, merchantId)
}

/** Which stage a signed-in member starts in (or is held in). */
async function stageFor(deps: Deps, member: DashboardMember): Promise<SessionStage> {
  if (member.totpEnabled) return 'second_factor'
  if (twoFactorApplies(member.role) && (await twoFactorRequired(deps, member.merchantId))) {
    return 'enrol'
  }
  return 'active'
}

async function openSession(
  deps: Deps,
  member: DashboardMember,
  stage: SessionStage,
  since?: { createdAt: Date; expiresAt: Date },
  kind: SessionKind = 'web',
  tx?: Tx,
): Promise<string> {
  const token = randomToken(32)
  const now = deps.clock.now()
  await repo.insertSession(tx ?? deps.db, {
    id_hash: hashId(token),
    user_id: member.userId,
    merchant_id: member.merchantId,
    stage,
    kind,
    created_at: since?.createdAt ?? now,
    last_seen_at: now,
    // The absolute limit counts from the password, not from the second factor.
    expires_at: since?.expiresAt ?? new Date(now.getTime() + SESSION_ABSOLUTE_MS),
  })
  return token
}

/**
 * Opens a fully signed-in session with its `session.sign_in` audit entry in the same
 * transaction (decision 0036): no session without its entry. `replaces` is ended in it too.
 */
async function openSignedIn(
  deps: Deps,
  member: DashboardMember,
  opts: {
    kind: SessionKind
    since?: { createdAt: Date; expiresAt: Date }
    replaces?: string
    secondFactor?: 'totp' | 'recovery_code'
  },
): Promise<string> {
  const details = {
    ...(opts.kind === 'api' ? { door: 'dashboard_api' } : {}),
    ...(opts.secondFactor ? { secondFactor: opts.secondFactor } : {}),
  }
  return audited(
    deps,
    {
      merchantId: member.merchantId,
      actorId: member.userId,
      action: 'session.sign_in',
      details,
    },
    () =>
      transact(deps.db, async (tx) => {
        if (opts.replaces) await repo.endSession(tx, opts.replaces, deps.clock.now())
        return openSession(deps, member, 'active', opts.since, opts.kind, tx)
      }),
  )
}

/**
 * Checks the password (through the merchants module, with its lockout) and opens a session.
 * Undefined for every failure alike: unknown email, wrong password, locked email.
 */
export async function signIn(
  deps: Deps,
  email: string,
  password: string,
): Promise<{ token: string; stage: SessionStage; member: DashboardMember } | undefined> {
  await repo.deleteOldSessions(deps.db, deps.clock.now(), CLEANUP_BATCH)
  const user = await verifyDashboardLogin(deps, email, password)
  if (!user) return undefined
  const member = await getDashboardMember(deps, user.merchantId, user.userId)
  if (!member) return undefined
  const stage = await stageFor(deps, member)
  const token =
    stage === 'active'
      ? await openSignedIn(deps, member, { kind: 'web' })
      : await openSession(deps, member, stage)
  return { token, stage, member }
}

/** What the dashboard API's login gives: a token, a two-factor challenge, or "enrol first". */
export type ApiSignIn =
  | { outcome: 'token'; sessionId: string; member: DashboardMember; expiresAt: Date }
  | { outcome: 'challenge'; challengeId: string; member: DashboardMember; expiresAt: Date }
  | { outcome: 'enrol'; member: DashboardMember }

function apiWindow(deps: Deps, ms: number): { createdAt: Date; expiresAt: Date } {
  const now = deps.clock.now()
  return { createdAt: now, expiresAt: new Date(now.getTime() + ms) }
}

/**
 * The dashboard API's sign-in, under the web's policy: the password through
 * verifyDashboardLogin (lockout included); a user with two-factor gets a challenge (a
 * session of kind `api` in stage `second_factor`), never a token; an owner or admin whom the
 * merchant requires to use two-factor and who has none must enrol on the web first.
 * Undefined for every password failure alike.
 */
export async function signInApi(
  deps: Deps,
  email: string,
  password: string,
): Promise<ApiSignIn | undefined> {
  await repo.deleteOldSessions(deps.db, deps.clock.now(), CLEANUP_BATCH)
  const user = await verifyDashboardLogin(deps, email, password)
  if (!user) return undefined
  const member = await getDashboardMember(deps, user.merchantId, user.userId)
  if (!member) return undefined
  const stage = await stageFor(deps, member)
  if (stage === 'enrol') return { outcome: 'enrol', member }
  if (stage === 'second_factor') {
    const window = apiWindow(deps, API_CHALLENGE_MS)
    const challengeId = await openSession(deps, member, stage, window, 'api')
    return { outcome: 'challenge', challengeId, member, expiresAt: window.expiresAt }
  }
  const window = apiWindow(deps, API_SESSION_ABSOLUTE_MS)
  const sessionId = await openSignedIn(deps, member, { kind: 'api', since: window })
  return { outcome: 'token', sessionId, member, expiresAt: window.expiresAt }
}

/**
 * The live session behind a cookie value (or, kind `api`, a token's session id), or
 * undefined: unknown, signed out, idle for 30 minutes, past its absolute end, or its user no
 * longer in the team. An expired one is ended here.
 */
export async function resolveSession(
  deps: Deps,
  token: string,
  kind: SessionKind = 'web',
): Promise<WebSession | undefined> {
  if (token.length < 20 || token.length > 100) return undefined
  const idHash = hashId(token)
  const row = await repo.findLiveSession(deps.db, idHash, kind)
  if (!row) return undefined
  const now = deps.clock.now()
  const idle = now.getTime() - row.last_seen_at.getTime() >= SESSION_IDLE_MS
  if (idle || now.getTime() >= row.expires_at.getTime()) {
    await repo.endSession(deps.db, idHash, now)
    return undefined
  }
  const member = await getDashboardMember(deps, row.merchant_id, row.user_id)
  if (!member) {
    await repo.endSession(deps.db, idHash, now)
    return undefined
  }
  if (now.getTime() - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
    await repo.touchSession(deps.db, idHash, now)
  }
  return {
    idHash,
    stage: await effectiveStage(deps, row, member),
    member,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    pendingTotpSecret: row.totp_pending_enc
      ? decrypt(deps.config.masterKey, row.totp_pending_enc, pendingAad(idHash)).toString('utf8')
      : null,
    freshRecoveryCodes: row.recovery_codes_enc
      ? (JSON.parse(
          decrypt(deps.config.masterKey, row.recovery_codes_enc, recoveryAad(idHash)).toString(
            'utf8',
          ),
        ) as string[])
      : null,
  }
}

/** An active owner or admin is held at enrolment once the merchant starts requiring it. */
async function effectiveStage(
  deps: Deps,
  row: DashboardSessionRow,
  member: DashboardMember,
): Promise<SessionStage> {
  if (row.stage !== 'active' || member.totpEnabled || !twoFactorApplies(member.role)) {
    return row.stage
  }
  return (await twoFactorRequired(deps, member.merchantId)) ? 'enrol' : 'active'
}

/**
 * Ends this session. Signing out of the web also ends the user's dashboard API tokens: a
 * token must not outlive the sign-out of the person it belongs to (decision 0036).
 */
export async function signOut(deps: Deps, session: WebSession): Promise<boolean> {
  const now = deps.clock.now()
  return transact(deps.db, async (tx) => {
    const ended = await repo.endSession(tx, session.idHash, now)
    await repo.endSessionsOfUser(tx, session.member.userId, now, 'api')
    // A signed-in person's sign-out is audited with it; ending a half-finished sign-in
    // (second factor, enrolment) is not a sign-out (decision 0036).
    if (ended && session.stage === 'active') {
      const { merchantId, userId } = session.member
      await recordAuditEntry(deps, { merchantId, actorId: userId, action: 'session.sign_out' }, tx)
    }
    return ended
  })
}

/**
 * Ends one dashboard API token's session (its sign-out), in a transaction of its own so the
 * door's audit entry commits with it. The user's other tokens and web sessions go on.
 */
export async function endApiSession(deps: Deps, session: WebSession): Promise<void> {
  await transact(deps.db, (tx) => repo.endSession(tx, session.idHash, deps.clock.now()))
}

function totpFor(member: DashboardMember, secretBase32: string): TOTP {
  return new TOTP({
    issuer: 'Kuruş',
    label: member.email,
    secret: Secret.fromBase32(secretBase32),
    ...TOTP_PARAMS,
  })
}

/** The time step a code is valid for, or undefined if it is not valid now (±1 step). */
function matchingStep(deps: Deps, totp: TOTP, code: string): number | undefined {
  const token = code.replace(/\s+/g, '')
  if (!/^\d{6}$/.test(token)) return undefined
  const timestamp = deps.clock.now().getTime()
  const delta = totp.validate({ token, timestamp, window: TOTP_WINDOW })
  if (delta === null) return undefined
  return TOTP.counter({ period: TOTP_PARAMS.period, timestamp }) + delta
}

/**
 * Counts this code as wrong before checking it (undone when right), so parallel guesses cannot
 * outrun the count: at most TOTP_FAILURES_MAX codes are ever checked per window. False: locked.
 */
async function reserveCodeAttempt(deps: Deps, userId: string): Promise<boolean> {
  const nowMs = deps.clock.now().getTime()
  return transact(deps.db, async (tx) => {
    const row = await repo.lockSecondFactorThrottle(tx, userId)
    if (row.locked_until && row.locked_until.getTime() > nowMs) return false
    const failures = row.failures.filter((at) => at > nowMs - TOTP_WINDOW_MS)
    if (failures.length >= TOTP_FAILURES_MAX) return false
    failures.push(nowMs)
    const locks = failures.length >= TOTP_FAILURES_MAX
    await repo.updateSecondFactorThrottle(tx, userId, {
      // A lock starts a fresh count: when it ends, the user has five codes again.
      failures: locks ? [] : failures,
      lockedUntil: locks ? new Date(nowMs + TOTP_LOCK_MS) : null,
    })
    if (locks) deps.log.warn({ userId }, 'dashboard second factor locked')
    return true
  })
}

/**
 * A right, unused second factor of the member, under the per-user lockout: a TOTP code (its
 * step spent) or, where `recovery` allows it, one of the member's recovery codes (spent).
 * What was used, or undefined when nothing was right.
 */
async function checkCodeThrottled(
  deps: Deps,
  member: DashboardMember,
  code: string,
  { recovery }: { recovery: boolean },
): Promise<'totp' | 'recovery_code' | undefined> {
  if (!(await reserveCodeAttempt(deps, member.userId))) return undefined
  const recoveryCode = recovery ? normaliseRecoveryCode(code) : undefined
  let used: 'totp' | 'recovery_code' | undefined
  if (recoveryCode !== undefined) {
    const hash = recoveryHash(member.userId, recoveryCode)
    const spent = await repo.spendRecoveryCode(deps.db, member.userId, hash, deps.clock.now())
    if (spent) used = 'recovery_code'
  } else {
    const secret = await dashboardMemberTotpSecret(deps, member.merchantId, member.userId)
    const step = secret ? matchingStep(deps, totpFor(member, secret), code) : undefined
    const spent =
      step !== undefined && (await spendTotpStep(deps, member.merchantId, member.userId, step))
    if (spent) used = 'totp'
  }
  if (used) await repo.clearSecondFactorThrottle(deps.db, member.userId)
  return used
}

export type SecondFactorOutcome =
  | {
      ok: true
      token: string
      stage: SessionStage
      expiresAt: Date
      /** What answered the challenge. */
      secondFactor: 'totp' | 'recovery_code'
    }
  | { ok: false; ended: boolean }

/**
 * The code step of sign-in: a right, unused code (TOTP, or one of the member's recovery codes)
 * swaps the session for a signed-in one. A web session keeps the times of its password step;
 * an API challenge becomes a token of its own hour.
 */
export async function verifySecondFactor(
  deps: Deps,
  session: WebSession,
  code: string,
  kind: SessionKind = 'web',
): Promise<SecondFactorOutcome> {
  const { member } = session
  const used = await checkCodeThrottled(deps, member, code, { recovery: true })
  if (!used) {
    const failures = await repo.countSecondFactorFailure(deps.db, session.idHash)
    const ended = failures === undefined || failures >= SECOND_FACTOR_ATTEMPTS_MAX
    if (ended) await repo.endSession(deps.db, session.idHash, deps.clock.now())
    return { ok: false, ended }
  }
  const since = kind === 'api' ? apiWindow(deps, API_SESSION_ABSOLUTE_MS) : session
  const token = await openSignedIn(deps, member, {
    kind,
    since,
    replaces: session.idHash,
    secondFactor: used,
  })
  return { ok: true, token, stage: 'active', expiresAt: since.expiresAt, secondFactor: used }
}

export interface Enrolment {
  secretBase32: string
  /** otpauth://totp/… for the QR code. */
  uri: string
}

/** Starts (or shows again) a TOTP enrolment: the secret waits in the session until confirmed. */
export async function beginEnrolment(deps: Deps, session: WebSession): Promise<Enrolment> {
  let secret = session.pendingTotpSecret
  if (!secret) {
    secret = new Secret({ size: 20 }).base32
    const sealed = encrypt(deps.config.masterKey, secret, pendingAad(session.idHash))
    await repo.updateSessionPendingTotp(deps.db, session.idHash, sealed)
  }
  return { secretBase32: secret, uri: totpFor(session.member, secret).toString() }
}

/**
 * Confirms an enrolment with a code from the app. Two-factor is on from then, with ten new
 * recovery codes (waiting in the session to be shown once); a session held at enrolment is
 * swapped for a fully signed-in one (returned token), an active one goes on. The audit entry
 * commits with the codes.
 */
export async function confirmEnrolment(
  deps: Deps,
  session: WebSession,
  code: string,
): Promise<{ token: string | undefined }> {
  const secret = session.pendingTotpSecret
  const step = secret ? matchingStep(deps, totpFor(session.member, secret), code) : undefined
  if (!secret || step === undefined) throw dashboardError('totp_code_wrong')
  const { member } = session
  let token: string | undefined
  await audited(
    deps,
    {
      merchantId: member.merchantId,
      actorId: member.userId,
      action: 'two_factor.enable',
      target: member.email,
    },
    () =>
      transact(deps.db, async (tx) => {
        await setDashboardMemberTotp(
          deps,
          member.merchantId,
          member.userId,
          { secretBase32: secret, counter: step },
          tx,
        )
        let idHash = session.idHash
        if (session.stage === 'enrol') {
          await repo.endSession(tx, session.idHash, deps.clock.now())
          token = await openSession(deps, member, 'active', session, 'web', tx)
          idHash = hashId(token)
        } else {
          await repo.updateSessionPendingTotp(tx, session.idHash, null)
        }
        await issueRecoveryCodes(deps, tx, member.userId, idHash)
      }),
  )
  return { token }
}

/** Turns the member's two-factor off; a current code proves it is them. */
export async function disableTwoFactor(
  deps: Deps,
  session: WebSession,
  code: string,
): Promise<void> {
  const { member } = session
  if (twoFactorApplies(member.role) && (await twoFactorRequired(deps, member.merchantId))) {
    throw dashboardError('two_factor_required')
  }
  const used = await checkCodeThrottled(deps, member, code, { recovery: false })
  if (!used) throw dashboardError('totp_code_wrong')
  await audited(
    deps,
    {
      merchantId: member.merchantId,
      actorId: member.userId,
      action: 'two_factor.disable',
      target: member.email,
    },
    () =>
      transact(deps.db, async (tx) => {
        await setDashboardMemberTotp(deps, member.merchantId, member.userId, null, tx)
        // Codes of a second factor that is off would be a way round it once it is on again.
        await repo.replaceRecoveryCodes(tx, member.userId, [], deps.clock.now())
      }),
  )
}

/** Requires (or stops requiring) two-factor of the merchant's owners and admins. */
export async function setTwoFactorRequired(
  deps: Deps,
  session: WebSession,
  required: boolean,
): Promise<void> {
  // Whoever turns it on must already use it: they would lock themselves out otherwise.
  if (required && !session.member.totpEnabled) throw dashboardError('two_factor_self_first')
  // A transaction of its own, for the page's audit entry to commit in (decision 0036).
  await transact(deps.db, (tx) =>
    repo.upsertTwoFactorRequired(tx, session.member.merchantId, required, deps.clock.now()),
  )
}

/**
 * Ends every web session and API token of the user inside the caller's transaction (a
 * password change or reset: CONTRACT § "Dashboard sign-in everywhere"). With `keep`, the
 * session that made the change goes on under a new id with its times (the old id is ended
 * like the rest); its token is returned for the cookie.
 */
export async function endEverySession(
  deps: Deps,
  tx: Tx,
  userId: string,
  keep?: WebSession,
): Promise<string | undefined> {
  await repo.endSessionsOfUser(tx, userId, deps.clock.now())
  if (!keep) return undefined
  return openSession(deps, keep.member, 'active', keep, 'web', tx)
}
