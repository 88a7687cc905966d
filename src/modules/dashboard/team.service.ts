import type { Deps } from '../../database.ts'
import { randomToken, safeEqual, sha256Hex } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import { newId } from '../../platform/ids.ts'
import { sendMail } from '../mail/index.ts'
import { recordAuditEntry } from '../audit/index.ts'
import {
  addDashboardMember,
  changeDashboardMemberRole,
  getDashboardMember,
  getMerchant,
  hashDashboardPassword,
  isDashboardEmailTaken,
  removeDashboardMember,
  type DashboardMember,
  type DashboardRole,
} from '../merchants/index.ts'
import { dashboardError } from './dashboard.errors.ts'
import * as repo from './dashboard.repository.ts'
import { can } from './permissions.ts'

// The team: invitations by email (a single-use link valid 72 hours; the invitee chooses a
// password there), role changes and removals. Members themselves live in the merchants
// module (dashboard_users); who may do what is permissions.ts.

export const INVITATION_TTL_MS = 72 * 60 * 60_000
export const PASSWORD_LENGTH_MIN = 12
export const PASSWORD_LENGTH_MAX = 200
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export interface Invitation {
  id: string
  email: string
  role: DashboardRole
  invitedBy: string
  createdAt: Date
  expiresAt: Date
}

/** The link's path; the token is its only bearer (the table keeps its hash). */
export function invitationPath(token: string): string {
  return `/dashboard/invite/${token}`
}

/** Owners only may make owners; everyone else of the team is the team managers' to invite. */
function assertMayGrant(actor: DashboardMember, role: DashboardRole): void {
  if (!can(actor.role, 'team.manage')) throw dashboardError('forbidden')
  if (role === 'owner' && !can(actor.role, 'team.owners')) throw dashboardError('forbidden')
}

export async function inviteMember(
  deps: Deps,
  actor: DashboardMember,
  input: { email: string; role: DashboardRole },
): Promise<Invitation & { path: string }> {
  assertMayGrant(actor, input.role)
  const email = input.email.trim().toLowerCase()
  if (!EMAIL.test(email) || email.length > 320) throw validationError('email', 'is not an email')
  // The answer is the same whether the email has an account (at any merchant) or not: the
  // person is told by email instead (decision 0036). Their invitation cannot be accepted (an
  // email is one account), and its mail carries no link.
  const taken = await isDashboardEmailTaken(deps, email)
  const token = randomToken(32)
  const now = deps.clock.now()
  const invitation: Invitation = {
    id: newId('ivt'),
    email,
    role: input.role,
    invitedBy: actor.userId,
    createdAt: now,
    expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
  }
  // A transaction of its own, for the page's audit entry to commit in (decision 0036).
  await transact(deps.db, (tx) =>
    repo.insertInvitation(tx, {
      id: invitation.id,
      merchant_id: actor.merchantId,
      email,
      role: input.role,
      token_hash: sha256Hex(token),
      invited_by: actor.userId,
      created_at: now,
      expires_at: invitation.expiresAt,
    }),
  )
  // After the insert has committed: mail may be network I/O (SMTP).
  const merchant = await getMerchant(deps, actor.merchantId)
  const link = `${deps.config.publicApiUrl}${invitationPath(token)}`
  if (taken) {
    await sendMail(deps, {
      to: email,
      subject: `${merchant.name}: Kuruş paneline davet / invitation to the Kuruş dashboard`,
      text: [
        `${actor.email}, sizi ${merchant.name} ekibine (${input.role}) davet etti.`,
        'Bu e-posta adresiyle zaten bir Kuruş paneli hesabınız var; bir adres tek hesapta kullanılabilir.',
        `Katılmak için ${actor.email} ile başka bir e-posta adresi kullanmayı konuşun.`,
        '',
        `${actor.email} invited you to the ${merchant.name} team (${input.role}).`,
        'You already have a Kuruş dashboard account with this email address, and an address can hold one account.',
        `To join, agree on another email address with ${actor.email}.`,
      ].join('\n'),
    })
    return { ...invitation, path: invitationPath(token) }
  }
  await sendMail(deps, {
    to: email,
    subject: `${merchant.name}: Kuruş paneline davet / invitation to the Kuruş dashboard`,
    text: [
      `${actor.email}, sizi ${merchant.name} ekibine (${input.role}) davet etti.`,
      `Şifrenizi belirlemek için bu bağlantıyı 72 saat içinde açın (tek kullanımlık):`,
      link,
      '',
      `${actor.email} invited you to the ${merchant.name} team (${input.role}).`,
      `Open this link within 72 hours to choose your password (it works once):`,
      link,
    ].join('\n'),
  })
  return { ...invitation, path: invitationPath(token) }
}

export async function listOpenInvitations(deps: Deps, merchantId: string): Promise<Invitation[]> {
  const rows = await repo.findOpenInvitations(deps.db, merchantId, deps.clock.now())
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    role: r.role,
    invitedBy: r.invited_by,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }))
}

export async function revokeInvitation(
  deps: Deps,
  actor: DashboardMember,
  invitationId: string,
): Promise<void> {
  if (!can(actor.role, 'team.manage')) throw dashboardError('forbidden')
  // A transaction of its own, for the page's audit entry to commit in (decision 0036).
  const done = await transact(deps.db, (tx) =>
    repo.revokeInvitation(tx, actor.merchantId, invitationId, deps.clock.now()),
  )
  if (!done) throw dashboardError('invitation_invalid')
}

/** The open invitation behind a link, or undefined (used, revoked, expired, unknown). */
export async function findInvitation(
  deps: Deps,
  token: string,
): Promise<{ email: string; merchantName: string } | undefined> {
  if (token.length < 20 || token.length > 100) return undefined
  const row = await repo.findInvitationByTokenHash(deps.db, sha256Hex(token))
  if (!row || row.accepted_at || row.revoked_at) return undefined
  if (row.expires_at.getTime() <= deps.clock.now().getTime()) return undefined
  return { email: row.email, merchantName: (await getMerchant(deps, row.merchant_id)).name }
}

export function checkNewPassword(password: string, confirmation: string): void {
  if (password.length < PASSWORD_LENGTH_MIN) {
    throw validationError('password', `must be at least ${PASSWORD_LENGTH_MIN} characters`)
  }
  if (password.length > PASSWORD_LENGTH_MAX) {
    throw validationError('password', `must be at most ${PASSWORD_LENGTH_MAX} characters`)
  }
  if (!safeEqual(password, confirmation)) {
    throw validationError('passwordConfirm', 'does not match')
  }
}

/**
 * Uses an invitation: the new member and the spent link commit together, under the
 * invitation's row lock, so a link opened twice makes one member.
 */
export async function acceptInvitation(
  deps: Deps,
  token: string,
  password: string,
  confirmation: string,
): Promise<DashboardMember> {
  checkNewPassword(password, confirmation)
  const passwordHash = await hashDashboardPassword(deps, password)
  return transact(deps.db, async (tx) => {
    const row = await repo.lockInvitationByTokenHash(tx, sha256Hex(token))
    const now = deps.clock.now()
    if (!row || row.accepted_at || row.revoked_at || row.expires_at.getTime() <= now.getTime()) {
      throw dashboardError('invitation_invalid')
    }
    const member = await addDashboardMember(tx, {
      merchantId: row.merchant_id,
      email: row.email,
      passwordHash,
      role: row.role,
      at: now,
    })
    await repo.markInvitationAccepted(tx, row.id, now)
    // The new member is the actor, known only here: the entry commits with the join
    // (decision 0036).
    await recordAuditEntry(
      deps,
      {
        merchantId: member.merchantId,
        actorId: member.userId,
        action: 'team.join',
        target: member.email,
        details: { role: member.role },
      },
      tx,
    )
    return member
  })
}

export async function changeMemberRole(
  deps: Deps,
  actor: DashboardMember,
  userId: string,
  role: DashboardRole,
): Promise<DashboardMember> {
  assertMayGrant(actor, role)
  const target = await getDashboardMember(deps, actor.merchantId, userId)
  // Taking the owner role away is as much an owner's decision as giving it.
  if (target?.role === 'owner' && !can(actor.role, 'team.owners')) {
    throw dashboardError('forbidden')
  }
  return changeDashboardMemberRole(deps, actor.merchantId, userId, role)
}

export async function removeMember(
  deps: Deps,
  actor: DashboardMember,
  userId: string,
): Promise<DashboardMember> {
  if (!can(actor.role, 'team.manage')) throw dashboardError('forbidden')
  const target = await getDashboardMember(deps, actor.merchantId, userId)
  if (target?.role === 'owner' && !can(actor.role, 'team.owners')) {
    throw dashboardError('forbidden')
  }
  const removed = await removeDashboardMember(deps, actor.merchantId, userId)
  // Their sessions end at their next request (the member is gone); end them now as well.
  await repo.endSessionsOfUser(deps.db, userId, deps.clock.now())
  return removed
}
