import assert from 'node:assert/strict'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { t, isMessageKey } from '../../src/platform/web/i18n.ts'
import type { TestApp } from '../helpers/app.ts'
import { WebClient, signedIn, tableText, type DashboardMerchant } from './_web.ts'

// Shared steps of the section tests (customers, subscriptions, invoices, chargebacks,
// payouts): a signed-in member of a given role (invited by the owner, link from the demo
// mailbox), and what the audit log page shows.

const PASSWORD = 'correct horse battery staple'

/** The owner invites `role`, the invitee sets a password and signs in. */
export async function memberWeb(
  h: TestApp,
  m: DashboardMerchant,
  role: string,
): Promise<WebClient> {
  const owner = await signedIn(h, m)
  const email = `${role}-${crypto.randomUUID()}@example.com`
  const invited = await owner.submit(
    '/dashboard/settings/team/invite',
    { email, role },
    '/dashboard/settings',
  )
  assert.equal(invited.status, 303, invited.text.slice(0, 300))
  const [mail] = await listMailbox(h.deps, { to: email, limit: 1 })
  const path = /\/dashboard\/invite\/[\w-]+/.exec(mail?.text ?? '')?.[0]
  assert.ok(path, 'an invitation link')
  const guest = new WebClient(h.url)
  const accepted = await guest.submit(path, { password: PASSWORD, passwordConfirm: PASSWORD }, path)
  assert.equal(accepted.status, 303, accepted.text.slice(0, 300))
  return signedIn(h, { email, password: PASSWORD })
}

/**
 * How the audit log page names an action (`reports.create` → "Rapor oluşturuldu"): staff read
 * words, not codes. Throws for a code without words, so a new action needs its words.
 */
export function actionWords(action: string, lang: 'tr' | 'en' = 'tr'): string {
  const key = `dash_audit_do_${action.replaceAll('.', '__')}`
  assert.ok(isMessageKey(key), `words for the audit action ${action}`)
  return t(lang, key)
}

/** The audit log's table as text (the newest entries). */
export async function auditText(web: WebClient): Promise<string> {
  const log = await web.get('/dashboard/settings/audit-log')
  assert.equal(log.status, 200)
  return tableText(log.text, 'audit-table')
}

/** A POST with no CSRF token at all (a forged form on another site). */
export function forged(web: WebClient, path: string, fields: Record<string, string> = {}) {
  return web.request('POST', path, new URLSearchParams(fields))
}
