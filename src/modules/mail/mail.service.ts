import type { Deps } from '../../database.ts'
import { insertMailboxMessage, selectMailbox } from './mail.repository.ts'

// Outgoing email. With SMTP_URL set, messages go out over SMTP (nodemailer); without it
// (demo, tests) they are kept in the `mailbox` table and listed at /dev/mailbox, so a
// developer sees what a merchant would have received. Call it after the state change
// commits (it may do network I/O), or from a job enqueued in that transaction.

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
}

export const MAIL_FROM = 'Kuruş <no-reply@kurus.local>'
// A hung SMTP server must not hold a worker forever.
const SMTP_TIMEOUT_MS = 15_000

export async function sendMail(deps: Deps, message: MailMessage): Promise<void> {
  const smtpUrl = deps.config.smtpUrl
  if (smtpUrl) {
    // nodemailer is loaded at the first SMTP message: ~7 MB of heap an API process without
    // SMTP_URL (demo, tests) never needs (docs/performance.md, "Round 3, part 3: memory").
    const { default: nodemailer } = await import('nodemailer')
    const transport = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    })
    try {
      await transport.sendMail({
        from: MAIL_FROM,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html !== undefined ? { html: message.html } : {}),
      })
    } finally {
      transport.close()
    }
    return
  }
  await insertMailboxMessage(deps.db, message, deps.clock.now())
}

export interface StoredMail {
  id: string
  to: string
  subject: string
  text: string
  html: string | null
  createdAt: Date
}

/** The newest stored messages (demo mailbox), optionally for one recipient. */
export async function listMailbox(
  deps: Deps,
  q: { to?: string; limit?: number } = {},
): Promise<StoredMail[]> {
  const rows = await selectMailbox(deps.db, q.to, Math.min(q.limit ?? 100, 500))
  return rows.map((r) => ({
    id: r.id,
    to: r.to_address,
    subject: r.subject,
    text: r.text_body,
    html: r.html_body,
    createdAt: r.created_at,
  }))
}
