import type { FastifyPluginAsync } from 'fastify'
import { assertDemo } from '../../config.ts'
import type { Deps } from '../../database.ts'
import { listMailbox } from './mail.service.ts'

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
  assertDemo(deps.config, '/dev/mailbox')
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
