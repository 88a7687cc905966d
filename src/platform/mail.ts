import type { FastifyPluginAsync } from 'fastify'
import nodemailer from 'nodemailer'
import type { Deps } from '../database.ts'
import { newId } from './ids.ts'

// Outgoing email. With SMTP_URL set, messages go out over SMTP (nodemailer); without it
// (demo, tests) they are kept in the `mailbox` table and listed at /dev/mailbox, so a
// developer sees what a merchant would have received. Call it after the state change
// commits (it may do network I/O), or from a job enqueued in that transaction.

export interface MailboxTable {
  id: string
  to_address: string
  subject: string
  text_body: string
  html_body: string | null
  created_at: Date
}

export interface MailTables {
  mailbox: MailboxTable
}

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
  await deps.db
    .insertInto('mailbox')
    .values({
      id: newId('msg'),
      to_address: message.to,
      subject: message.subject,
      text_body: message.text,
      html_body: message.html ?? null,
      created_at: deps.clock.now(),
    })
    .execute()
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
  let query = deps.db.selectFrom('mailbox').selectAll()
  if (q.to !== undefined) query = query.where('to_address', '=', q.to)
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(Math.min(q.limit ?? 100, 500))
    .execute()
  return rows.map((r) => ({
    id: r.id,
    to: r.to_address,
    subject: r.subject,
    text: r.text_body,
    html: r.html_body,
    createdAt: r.created_at,
  }))
}

function escapeHtml(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
}

/**
 * `GET /dev/mailbox`: the stored messages as a plain HTML page. Register it in `demo` only:
 * it has no authentication. Bodies are shown as escaped text, never rendered as HTML.
 */
export function devMailboxRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/dev/mailbox', { schema: { hide: true } }, async (_request, reply) => {
      const messages = await listMailbox(deps)
      const items = messages
        .map(
          (m) => `<article>
  <h2>${escapeHtml(m.subject)}</h2>
  <p class="meta">To <span class="to">${escapeHtml(m.to)}</span> · <time datetime="${m.createdAt.toISOString()}">${m.createdAt.toISOString()}</time></p>
  <pre>${escapeHtml(m.text)}</pre>
</article>`,
        )
        .join('\n')
      const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Kuruş demo mailbox</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
article{border-bottom:1px solid #ddd;padding:1rem 0}.meta{color:#555}pre{white-space:pre-wrap}</style>
</head>
<body>
<h1>Demo mailbox</h1>
<p>Email the service would have sent (no SMTP_URL is set). Newest first.</p>
${items || '<p>No messages yet.</p>'}
</body>
</html>`
      return reply
        .header('cache-control', 'no-store')
        .header(
          'content-security-policy',
          "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        )
        .header('x-content-type-options', 'nosniff')
        .header('x-frame-options', 'DENY')
        .header('referrer-policy', 'no-referrer')
        .type('text/html; charset=utf-8')
        .send(html)
    })
  }
}
