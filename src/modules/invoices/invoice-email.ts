import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { sendMail, type MailMessage } from '../mail/index.ts'
import { markup } from '../../platform/web/html.ts'
import { getMerchant } from '../merchants/index.ts'
import { formatDateTr, formatTryTr } from './money-format.ts'
import * as repo from './invoices.repository.ts'
import { invoiceRowToInvoice, invoiceUrl, type Invoice } from './invoice-view.ts'

// The invoice email: the buyer's link (and the PDF's), the lines and the total. It goes out
// over SMTP when SMTP_URL is set (modules/mail), else into the demo mailbox (/dev/mailbox).
// The invoice row is its outbox: `send` sets email_next_at in the transaction that moves the
// invoice to `sent`, so the email is owed if and only if the invoice was sent. The request
// then delivers it at once; the `invoices.send_emails` reconciler retries what failed.

export function publicPdfUrl(deps: Deps, publicHash: string): string {
  return `${deps.config.publicApiUrl}/v1/public/invoices/${publicHash}/pdf`
}

export function composeInvoiceEmail(
  deps: Deps,
  invoice: Invoice,
  merchantName: string,
): MailMessage {
  const to = invoice.buyerEmail
  assert(to !== null, 'an invoice email needs buyerEmail')
  const url = invoiceUrl(deps.config, invoice.publicHash)
  const pdf = publicPdfUrl(deps, invoice.publicHash)
  const total = formatTryTr(invoice.amountMinor)
  const due = invoice.dueDate ? formatDateTr(invoice.dueDate) : null
  const greeting = invoice.buyerName ? `Merhaba ${invoice.buyerName},` : 'Merhaba,'
  const lines = invoice.lineItems.map(
    (l) => `- ${l.name} × ${l.qty}: ${formatTryTr(l.lineTotalMinor)}`,
  )
  const text = [
    greeting,
    '',
    `${merchantName} size ${total} tutarında bir fatura gönderdi (${invoice.id}).`,
    ...(due ? [`Son ödeme tarihi: ${due}`] : []),
    '',
    ...lines,
    `Toplam: ${total}`,
    '',
    `Faturayı görüntülemek ve ödemek için: ${url}`,
    `PDF: ${pdf}`,
    ...(invoice.notes ? ['', `Not: ${invoice.notes}`] : []),
    '',
    `${merchantName} sent you an invoice for ${total}. View and pay it at ${url}`,
    '',
    '--',
    'Bu e-posta Kuruş ödeme altyapısı üzerinden gönderildi.',
  ].join('\n')
  const html = markup`<!doctype html>
<html lang="tr"><body>
<p>${greeting}</p>
<p>${merchantName} size <strong>${total}</strong> tutarında bir fatura gönderdi (${invoice.id}).</p>
${due ? markup`<p>Son ödeme tarihi: ${due}</p>` : ''}
<ul>${invoice.lineItems.map((l) => markup`<li>${l.name} × ${l.qty}: ${formatTryTr(l.lineTotalMinor)}</li>`)}</ul>
<p>Toplam: <strong>${total}</strong></p>
<p><a href="${url}">Faturayı görüntüle ve öde</a> · <a href="${pdf}">PDF</a></p>
${invoice.notes ? markup`<p>Not: ${invoice.notes}</p>` : ''}
<p lang="en">${merchantName} sent you an invoice for ${total}. <a href="${url}">View and pay it</a>.</p>
</body></html>`
  return {
    to,
    subject: `${merchantName}: ${total} tutarında faturanız`,
    text,
    html: html.value,
  }
}

const LEASE_MS = 5 * 60 * 1000
const ATTEMPTS_MAX = 8
const BATCH = 100

/** 1, 2, 4 … minutes after each failed attempt, at most an hour. */
function retryDelayMs(attempts: number): number {
  return Math.min(60, 2 ** (attempts - 1)) * 60 * 1000
}

/**
 * One delivery attempt of the invoice's due email. The attempt is claimed first (a lease on
 * email_next_at), so the request that sent the invoice and the reconciler never both
 * deliver it; a crash mid-attempt leaves the lease to lapse and the reconciler retries.
 * Failures are counted and retried with backoff (given up after 8 attempts, logged).
 * An invoice cancelled, paid or expired before its email went out is not emailed.
 * Returns whether an email went out; never throws for a failing SMTP server.
 */
export async function deliverInvoiceEmail(deps: Deps, invoiceId: string): Promise<boolean> {
  const now = deps.clock.now()
  const row = await repo.claimEmail(deps.db, invoiceId, now, new Date(now.getTime() + LEASE_MS))
  if (!row) return false
  if ((row.status !== 'sent' && row.status !== 'viewed') || !row.buyer_email) {
    await repo.finishEmail(deps.db, row.id, null)
    return false
  }
  try {
    const merchant = await getMerchant(deps, row.merchant_id)
    const message = composeInvoiceEmail(deps, invoiceRowToInvoice(deps.config, row), merchant.name)
    await sendMail(deps, message)
  } catch (error) {
    const attempts = row.email_attempts + 1
    const nextAt =
      attempts >= ATTEMPTS_MAX
        ? null
        : new Date(deps.clock.now().getTime() + retryDelayMs(attempts))
    await repo.recordEmailFailure(deps.db, row.id, attempts, nextAt)
    deps.log.warn(
      { err: error, invoiceId: row.id, attempts, gaveUp: nextAt === null },
      'invoice email could not be sent',
    )
    return false
  }
  await repo.finishEmail(deps.db, row.id, deps.clock.now())
  return true
}

/** The reconciler: every invoice email that is due (first tries, retries, lapsed leases). */
export async function sendDueInvoiceEmails(deps: Deps): Promise<number> {
  let sent = 0
  for (;;) {
    const ids = await repo.findDueEmails(deps.db, deps.clock.now(), BATCH)
    for (const id of ids) if (await deliverInvoiceEmail(deps, id)) sent++
    // Claimed, finished or rescheduled: none of these ids is due again in this run.
    if (ids.length < BATCH) return sent
  }
}
