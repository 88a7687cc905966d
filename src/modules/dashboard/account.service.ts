import type { Deps } from '../../database.ts'
import { randomToken, sha256Hex } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import { audited } from '../audit/index.ts'
import { sendMail } from '../mail/index.ts'
import {
  findDashboardAccount,
  getDashboardMember,
  hashDashboardPassword,
  isDashboardEmailTaken,
  setDashboardMemberEmail,
  setDashboardMemberPassword,
  verifyDashboardLogin,
  type DashboardMember,
} from '../merchants/index.ts'
import * as repo from './account.repository.ts'
import { endEverySession, type WebSession } from './sessions.service.ts'
import { checkNewPassword } from './team.service.ts'

// A member's own account (issues 36 and 41, CONTRACT § "Dashboard sign-in everywhere"):
// changing the password (every other session and every API token ends), resetting a forgotten
// one by an emailed single-use link valid 30 minutes, and moving to a new email confirmed from
// that address. Links carry 32 random bytes; the table keeps their SHA-256 (decision 0036,
// "Accounts").

export const PASSWORD_RESET_TTL_MS = 30 * 60_000
export const EMAIL_CHANGE_TTL_MS = 24 * 60 * 60_000
// Reset mails per account within the window: a stranger who knows an address cannot flood it.
// The per-IP limit of the dashboard's pages holds besides.
export const RESET_MAILS_MAX = 3
export const RESET_MAILS_WINDOW_MS = 15 * 60_000

export function passwordResetPath(token: string): string {
  return `/dashboard/password/reset/${token}`
}

export function emailChangePath(token: string): string {
  return `/dashboard/account/email/${token}`
}

/**
 * The current password of the member, checked through the sign-in's own check (its per-email
 * lockout included): a stolen session cannot guess it faster than a sign-in page could.
 */
async function assertCurrentPassword(
  deps: Deps,
  member: DashboardMember,
  password: string,
): Promise<void> {
  const user = await verifyDashboardLogin(deps, member.email, password)
  if (user?.userId !== member.userId) {
    throw validationError('currentPassword', 'is not your current password')
  }
}

/**
 * Changes the signed-in member's password: the current one proves it is them. Every other web
 * session and every dashboard API token of theirs ends; this session goes on under a new id
 * (returned for the cookie). The change, the ended sessions and the audit entry commit together.
 */
export async function changePassword(
  deps: Deps,
  session: WebSession,
  input: { currentPassword: string; password: string; passwordConfirm: string },
): Promise<{ token: string }> {
  const { member } = session
  checkNewPassword(input.password, input.passwordConfirm)
  await assertCurrentPassword(deps, member, input.currentPassword)
  // scrypt outside the transaction.
  const hash = await hashDashboardPassword(deps, input.password)
  const token = await audited(
    deps,
    {
      merchantId: member.merchantId,
      actorId: member.userId,
      action: 'account.password_change',
      target: member.email,
    },
    () =>
      transact(deps.db, async (tx) => {
        await setDashboardMemberPassword(tx, member.merchantId, member.userId, hash)
        // A reset link sent before the change must not undo it.
        await repo.voidAccountLinks(tx, member.userId, 'password_reset', deps.clock.now())
        return endEverySession(deps, tx, member.userId, session)
      }),
  )
  if (!token) throw new Error('the session that changed the password was not renewed')
  await tellPasswordChanged(deps, member.email)
  return { token }
}

/** After a change or a reset has committed: the person hears of it if it was not them. */
async function tellPasswordChanged(deps: Deps, email: string): Promise<void> {
  await sendMail(deps, {
    to: email,
    subject: 'Kuruş paneli: şifreniz değişti / your password was changed',
    text: [
      'Kuruş paneli şifreniz değişti; tüm diğer oturumlarınız ve API token’larınız kapandı.',
      'Bunu siz yapmadıysanız giriş sayfasındaki "Şifremi unuttum" ile hemen yeni bir şifre belirleyin.',
      '',
      'Your Kuruş dashboard password was changed; all your other sessions and API tokens have ended.',
      'If this was not you, choose a new password at once with "Forgot your password?" on the sign-in page.',
    ].join('\n'),
  })
}

/**
 * "Forgot password": mails a reset link when the email has an account. The caller answers the
 * same whatever happened here (no enumeration): unknown email, throttled, or sent.
 */
export async function requestPasswordReset(deps: Deps, email: string): Promise<void> {
  const account = await findDashboardAccount(deps, email)
  if (!account) return
  const work = sendResetLink(deps, account)
  // Over SMTP a mail takes long enough for the answer's time to tell which addresses have an
  // account: the answer does not wait for it (a lost mail is asked for again). The demo
  // mailbox is a local insert, awaited so what the page says is already in it.
  if (deps.config.smtpUrl) {
    void work.catch((error: unknown) => {
      deps.log.error({ err: error, userId: account.userId }, 'password reset mail failed')
    })
    return
  }
  await work
}

async function sendResetLink(deps: Deps, account: DashboardMember): Promise<void> {
  const now = deps.clock.now()
  const recent = await repo.countAccountLinksSince(
    deps.db,
    account.userId,
    'password_reset',
    new Date(now.getTime() - RESET_MAILS_WINDOW_MS),
  )
  if (recent >= RESET_MAILS_MAX) {
    deps.log.warn({ userId: account.userId }, 'dashboard password reset mail throttled')
    return
  }
  const token = randomToken(32)
  await transact(deps.db, async (tx) => {
    // Only the newest link works.
    await repo.voidAccountLinks(tx, account.userId, 'password_reset', now)
    await repo.insertAccountLink(tx, {
      token_hash: sha256Hex(token),
      user_id: account.userId,
      merchant_id: account.merchantId,
      purpose: 'password_reset',
      new_email: null,
      created_at: now,
      expires_at: new Date(now.getTime() + PASSWORD_RESET_TTL_MS),
    })
  })
  // After the link has committed: mail may be network I/O (SMTP).
  const link = `${deps.config.publicApiUrl}${passwordResetPath(token)}`
  await sendMail(deps, {
    to: account.email,
    subject: 'Kuruş paneli: şifre sıfırlama / password reset',
    text: [
      'Kuruş paneli şifrenizi sıfırlamak için bu bağlantıyı 30 dakika içinde açın (tek kullanımlık):',
      link,
      'Bu isteği siz yapmadıysanız bu e-postayı yok sayın; şifreniz değişmez.',
      '',
      'To reset your Kuruş dashboard password, open this link within 30 minutes (it works once):',
      link,
      'If you did not ask for this, ignore this email; your password stays as it is.',
    ].join('\n'),
  })
}

/** A link spent or expired between its check and its lock: nothing of the action is kept. */
class LinkNotOpen extends Error {}

async function unlessLinkClosed<T>(run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof LinkNotOpen) return undefined
    throw error
  }
}

function linkIsOpen(
  deps: Deps,
  row: { used_at: Date | null; expires_at: Date } | undefined,
): boolean {
  return !!row && !row.used_at && row.expires_at.getTime() > deps.clock.now().getTime()
}

function tokenHash(token: string): string | undefined {
  return token.length < 20 || token.length > 100 ? undefined : sha256Hex(token)
}

/** Whether a reset link can still be used (to show its form or the "no longer valid" page). */
export async function passwordResetOpen(deps: Deps, token: string): Promise<boolean> {
  const hash = tokenHash(token)
  return !!hash && linkIsOpen(deps, await repo.findAccountLink(deps.db, hash, 'password_reset'))
}

/**
 * Uses a reset link: the new password, the spent link, every ended session and token, and the
 * audit entry commit together under the link's row lock (a link used twice sets one password).
 * False: the link is unknown, used or expired. Two-factor is untouched: signing in afterwards
 * still asks for the code.
 */
export async function resetPassword(
  deps: Deps,
  token: string,
  input: { password: string; passwordConfirm: string },
): Promise<boolean> {
  const hash = tokenHash(token)
  if (!hash) return false
  checkNewPassword(input.password, input.passwordConfirm)
  const row = await repo.findAccountLink(deps.db, hash, 'password_reset')
  if (!row || !linkIsOpen(deps, row)) return false
  const passwordHash = await hashDashboardPassword(deps, input.password)
  const done = await unlessLinkClosed(() =>
    audited(
      deps,
      {
        merchantId: row.merchant_id,
        actorId: row.user_id,
        action: 'account.password_reset',
      },
      () =>
        transact(deps.db, async (tx) => {
          const locked = await repo.lockAccountLink(tx, hash, 'password_reset')
          if (!locked || !linkIsOpen(deps, locked)) throw new LinkNotOpen()
          await repo.spendAccountLink(tx, hash, deps.clock.now())
          await setDashboardMemberPassword(tx, locked.merchant_id, locked.user_id, passwordHash)
          await endEverySession(deps, tx, locked.user_id)
          return true
        }),
    ),
  )
  if (done !== true) return false
  const member = await getDashboardMember(deps, row.merchant_id, row.user_id)
  if (member) await tellPasswordChanged(deps, member.email)
  return true
}

/**
 * Starts moving the member to a new email: the current password proves it is them; a link goes
 * to the new address, and the old address is told. Until the link is used the old email stays
 * the login. An address another account holds gets the same answer (no enumeration) and a mail
 * saying it already has an account, with no link.
 */
export async function requestEmailChange(
  deps: Deps,
  session: WebSession,
  input: { email: string; currentPassword: string },
): Promise<{ email: string }> {
  const { member } = session
  const email = input.email.trim().toLowerCase()
  if (email === member.email) throw validationError('email', 'is already your email')
  await assertCurrentPassword(deps, member, input.currentPassword)
  const taken = await isDashboardEmailTaken(deps, email)
  const token = randomToken(32)
  const now = deps.clock.now()
  await audited(
    deps,
    {
      merchantId: member.merchantId,
      actorId: member.userId,
      action: 'account.email_change_request',
      target: member.email,
      details: { newEmail: email },
    },
    () =>
      transact(deps.db, async (tx) => {
        await repo.voidAccountLinks(tx, member.userId, 'email_change', now)
        if (taken) return
        await repo.insertAccountLink(tx, {
          token_hash: sha256Hex(token),
          user_id: member.userId,
          merchant_id: member.merchantId,
          purpose: 'email_change',
          new_email: email,
          created_at: now,
          expires_at: new Date(now.getTime() + EMAIL_CHANGE_TTL_MS),
        })
      }),
  )
  const link = `${deps.config.publicApiUrl}${emailChangePath(token)}`
  await sendMail(deps, {
    to: email,
    subject: 'Kuruş paneli: yeni e-posta adresinizi onaylayın / confirm your new email',
    text: taken
      ? [
          `${member.email} hesabı Kuruş paneli girişini bu adrese taşımak istedi; ancak bu adresle zaten bir hesap var ve bir adres tek hesapta kullanılabilir.`,
          '',
          `The account ${member.email} asked to move its Kuruş dashboard sign-in to this address, but this address already has an account, and an address can hold one account.`,
        ].join('\n')
      : [
          `Kuruş paneli girişinizi bu adrese (${email}) taşımak için bu bağlantıyı 24 saat içinde açın (tek kullanımlık):`,
          link,
          '',
          `To move your Kuruş dashboard sign-in to this address (${email}), open this link within 24 hours (it works once):`,
          link,
        ].join('\n'),
  })
  await sendMail(deps, {
    to: member.email,
    subject: 'Kuruş paneli: e-posta değişikliği istendi / email change requested',
    text: [
      `Kuruş paneli girişinizi ${email} adresine taşımak istendi. Yeni adres onaylanana kadar bu adresle giriş yaparsınız.`,
      'Bunu siz yapmadıysanız şifrenizi hemen değiştirin.',
      '',
      `A move of your Kuruş dashboard sign-in to ${email} was asked for. Until the new address confirms it, you sign in with this one.`,
      'If this was not you, change your password now.',
    ].join('\n'),
  })
  return { email }
}

/** The address an open email-change link moves to, or undefined (unknown, used, expired). */
export async function emailChangeTarget(deps: Deps, token: string): Promise<string | undefined> {
  const hash = tokenHash(token)
  const row = hash ? await repo.findAccountLink(deps.db, hash, 'email_change') : undefined
  return row && linkIsOpen(deps, row) ? (row.new_email ?? undefined) : undefined
}

/**
 * Uses an email-change link: the new email, the spent link and the audit entry commit together
 * under the link's lock; the old address is told afterwards. Undefined: the link is unknown,
 * used or expired (or its member left). The new email taken meanwhile → 409.
 */
export async function confirmEmailChange(
  deps: Deps,
  token: string,
): Promise<{ from: string; to: string } | undefined> {
  const hash = tokenHash(token)
  const row = hash ? await repo.findAccountLink(deps.db, hash, 'email_change') : undefined
  if (!hash || !row?.new_email || !linkIsOpen(deps, row)) return undefined
  const member = await getDashboardMember(deps, row.merchant_id, row.user_id)
  if (!member) return undefined
  const to = row.new_email
  const done = await unlessLinkClosed(() =>
    audited(
      deps,
      {
        merchantId: member.merchantId,
        actorId: member.userId,
        action: 'account.email_change',
        target: member.email,
        details: { newEmail: to },
      },
      () =>
        transact(deps.db, async (tx) => {
          const locked = await repo.lockAccountLink(tx, hash, 'email_change')
          if (!locked || !linkIsOpen(deps, locked)) throw new LinkNotOpen()
          await repo.spendAccountLink(tx, hash, deps.clock.now())
          await setDashboardMemberEmail(tx, member.merchantId, member.userId, to)
          return true
        }),
    ),
  )
  if (!done) return undefined
  await sendMail(deps, {
    to: member.email,
    subject: 'Kuruş paneli: e-posta adresiniz değişti / your email was changed',
    text: [
      `Kuruş paneli girişiniz artık ${to} adresiyle yapılıyor.`,
      'Bunu siz yapmadıysanız hemen destek ekibimize yazın.',
      '',
      `Your Kuruş dashboard sign-in is now ${to}.`,
      'If this was not you, write to our support at once.',
    ].join('\n'),
  })
  return { from: member.email, to }
}
