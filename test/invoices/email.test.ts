// Goal: sending an invoice emails its buyer for real: over SMTP (nodemailer) to a real
// in-process SMTP server, with the pay link and the PDF link; a failing server is retried by
// the reconciler with backoff, exactly one email goes out, a cancelled invoice is not
// emailed; without SMTP_URL the demo mailbox (/dev/mailbox) shows it. Method: smtp-server
// listening on loopback, startTestApp with SMTP_URL, POST /v1/sandbox/reconcile, h.clock.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { test, type TestContext } from 'node:test'
import { SMTPServer } from 'smtp-server'
import { startTestApp } from '../helpers/app.ts'
import { action, browser, createInvoice, reconcile } from './_support.ts'

interface Received {
  from: string
  to: string[]
  raw: string
}

/** A real SMTP server on loopback; `rejectFirst` answers the first N messages with a 451. */
async function smtpServer(t: TestContext, options: { rejectFirst?: number } = {}) {
  const received: Received[] = []
  let rejected = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (rejected < (options.rejectFirst ?? 0)) {
          rejected++
          const error = Object.assign(new Error('try again later'), { responseCode: 451 })
          callback(error)
          return
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.server.address() as AddressInfo
  return { url: `smtp://127.0.0.1:${port}`, received, rejected: () => rejected }
}

/** The decoded text of every MIME part (quoted-printable and base64 undone). */
function decodedParts(raw: string): string[] {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1]
  const parts = boundary ? raw.split(`--${boundary}`).slice(1, -1) : [raw]
  return parts.map((part) => {
    const split = part.indexOf('\r\n\r\n')
    const headers = part.slice(0, split)
    const body = part.slice(split + 4)
    const encoding = /content-transfer-encoding:\s*([\w-]+)/i.exec(headers)?.[1]?.toLowerCase()
    if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString()
    if (encoding === 'quoted-printable') {
      const bytes = body
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => `%${hex}`)
      return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'))
    }
    return body
  })
}

/** An RFC 2047 subject (=?UTF-8?Q?…?= or =?UTF-8?B?…?= words), decoded. */
function decodedSubject(raw: string): string {
  const header = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(raw)?.[1] ?? ''
  return header
    .replace(/\r\n[ \t]/g, ' ')
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_m, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString()
        : decodeURIComponent(
            text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, hex: string) => `%${hex}`),
          ),
    )
}

test('send emails the buyer over SMTP with the pay link, once', async (t) => {
  const smtp = await smtpServer(t)
  const h = await startTestApp(t, { env: { SMTP_URL: smtp.url } })
  const m = await h.newMerchant({ name: 'Anadolu Kitap' })
  const buyer = `ayse-${randomUUID()}@example.com`
  const invoice = await createInvoice(m, { buyerEmail: buyer, dueDate: '2027-02-28T09:00:00Z' })
  const sent = await action(m, invoice.id, 'send')
  assert.equal(sent.status, 200, JSON.stringify(sent.body))

  assert.equal(smtp.received.length, 1)
  const [mail] = smtp.received
  assert.ok(mail)
  assert.deepEqual(mail.to, [buyer])
  assert.equal(mail.from, 'no-reply@kurus.local')
  assert.equal(decodedSubject(mail.raw), 'Anadolu Kitap: 1.234,56 ₺ tutarında faturanız')
  const parts = decodedParts(mail.raw)
  assert.equal(parts.length, 2, 'a text and an HTML part')
  const [text = '', html = ''] = parts
  assert.ok(text.includes(invoice.url), text)
  assert.ok(text.includes(`/v1/public/invoices/${invoice.publicHash}/pdf`))
  assert.ok(text.includes('Merhaba Ayşe Yılmaz,'))
  assert.ok(text.includes('Toplam: 1.234,56 ₺'))
  assert.ok(text.includes('Son ödeme tarihi: 28.02.2027'))
  assert.ok(text.includes('Kitap: İstanbul Hatırası × 2: 900,00 ₺'))
  assert.ok(html.includes(`href="${invoice.url}"`), html)

  // Nothing is owed any more: the reconciler sends no second email.
  await reconcile(m)
  assert.equal(smtp.received.length, 1)
  const row = await h.deps.db
    .selectFrom('invoices')
    .select(['email_sent_at', 'email_next_at', 'email_attempts'])
    .where('id', '=', invoice.id)
    .executeTakeFirstOrThrow()
  assert.ok(row.email_sent_at)
  assert.equal(row.email_next_at, null)
  assert.equal(row.email_attempts, 0)
  // Over SMTP the demo mailbox keeps nothing.
  const kept = await h.deps.db
    .selectFrom('mailbox')
    .select('id')
    .where('to_address', '=', buyer)
    .execute()
  assert.deepEqual(kept, [])
})

test('a failing SMTP server does not fail send; the reconciler retries with backoff', async (t) => {
  const smtp = await smtpServer(t, { rejectFirst: 2 })
  const h = await startTestApp(t, { env: { SMTP_URL: smtp.url } })
  const m = await h.newMerchant()
  const buyer = `retry-${randomUUID()}@example.com`
  const invoice = await createInvoice(m, { buyerEmail: buyer })
  const sent = await action(m, invoice.id, 'send')
  assert.equal(sent.status, 200)
  assert.equal(sent.body.status, 'sent')
  assert.equal(smtp.rejected(), 1)
  assert.equal(smtp.received.length, 0)

  // Not due yet: the first retry waits a minute.
  await reconcile(m)
  assert.equal(smtp.rejected(), 1)
  h.clock.advance(61 * 1000)
  await reconcile(m)
  assert.equal(smtp.rejected(), 2)
  // The second retry waits two minutes more.
  h.clock.advance(61 * 1000)
  await reconcile(m)
  assert.equal(smtp.received.length, 0)
  h.clock.advance(61 * 1000)
  await reconcile(m)
  assert.equal(smtp.received.length, 1)
  assert.deepEqual(smtp.received[0]?.to, [buyer])
  const row = await h.deps.db
    .selectFrom('invoices')
    .select(['email_sent_at', 'email_next_at', 'email_attempts'])
    .where('id', '=', invoice.id)
    .executeTakeFirstOrThrow()
  assert.ok(row.email_sent_at)
  assert.equal(row.email_next_at, null)
  assert.equal(row.email_attempts, 2)
  assert.ok(h.logs.some((line) => line.includes('invoice email could not be sent')))
  h.clock.advance(60 * 60 * 1000)
  await reconcile(m)
  assert.equal(smtp.received.length, 1)
})

test('an invoice cancelled before its email went out is not emailed', async (t) => {
  const smtp = await smtpServer(t, { rejectFirst: 1 })
  const h = await startTestApp(t, { env: { SMTP_URL: smtp.url } })
  const m = await h.newMerchant()
  const invoice = await createInvoice(m, { buyerEmail: `cancel-${randomUUID()}@example.com` })
  assert.equal((await action(m, invoice.id, 'send')).status, 200)
  assert.equal(smtp.rejected(), 1)
  assert.equal((await action(m, invoice.id, 'cancel')).status, 200)
  h.clock.advance(5 * 60 * 1000)
  await reconcile(m)
  assert.equal(smtp.received.length, 0)
  const row = await h.deps.db
    .selectFrom('invoices')
    .select(['email_sent_at', 'email_next_at'])
    .where('id', '=', invoice.id)
    .executeTakeFirstOrThrow()
  assert.equal(row.email_sent_at, null)
  assert.equal(row.email_next_at, null)
})

test('without SMTP_URL the email is kept and shown at /dev/mailbox (demo)', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Boğaziçi Çiçek' })
  const buyer = `mailbox-${randomUUID()}@example.com`
  const invoice = await createInvoice(m, { buyerEmail: buyer })
  assert.equal((await action(m, invoice.id, 'send')).status, 200)
  const kept = await h.deps.db
    .selectFrom('mailbox')
    .selectAll()
    .where('to_address', '=', buyer)
    .execute()
  assert.equal(kept.length, 1)
  assert.equal(kept[0]?.subject, 'Boğaziçi Çiçek: 1.234,56 ₺ tutarında faturanız')
  assert.ok(kept[0]?.text_body.includes(invoice.url))
  const page = await browser(h, 'GET', '/dev/mailbox')
  assert.equal(page.status, 200)
  assert.ok(page.text.includes(buyer))
  assert.ok(page.text.includes(invoice.url))
})
