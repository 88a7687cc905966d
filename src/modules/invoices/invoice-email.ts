import type { Deps } from '../../database.ts'
import { sendMail, type MailMessage } from '../../platform/mail.ts'
import { markup } from '../../pages/html.ts'
import { getMerchant } from '../merchants/index.ts'
import { formatDateTr, formatTryTr } from './money-format.ts'
import * as repo from './invoices.repository.ts'
import { invoiceRowToInvoice, invoiceUrl, type Invoice } from './invoice-view.ts'

// The invoice email: the buyer's link (and the PDF's), the lines and the total. Sent by the
// `invoices.send_email` job that `send` enqueues in its transaction, over SMTP when SMTP_URL
// is set (platform/mail.ts), else kept in the demo mailbox (/dev/mailbox).

export const SEND_EMAIL_JOB = 'invoices.send_email'

export function publicPdfUrl(deps: Deps, publicHash: string): string {
  return `${deps.config.publicApiUrl}/v1/public/invoices/${publicHash}/pdf`
}

export function composeInvoiceEmail(
  deps: Deps,
  invoice: Invoice,
  merchantName: string,
): MailMessage {
  const to = invoice.buyerEmail
  if (!to) throw new Error('an invoice email needs buyerEmail')
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

/**
 * The job: emails the buyer once. Skipped when the email already went out, or when the
 * invoice was cancelled, paid or expired before the job ran. A failing SMTP server throws,
 * and pg-boss retries with backoff; a crash between the SMTP hand-off and the mark may send
 * the email twice (at least once, as any queue).
 */
export async function sendInvoiceEmail(deps: Deps, invoiceId: string): Promise<void> {
  const row = await repo.findInvoiceByIdUnscoped(deps.db, invoiceId)
  if (!row || row.email_sent_at || !row.buyer_email) return
  if (row.status !== 'sent' && row.status !== 'viewed') return
  const merchant = await getMerchant(deps, row.merchant_id)
  await sendMail(
    deps,
    composeInvoiceEmail(deps, invoiceRowToInvoice(deps.config, row), merchant.name),
  )
  await repo.markEmailSent(deps.db, row.id, deps.clock.now())
}
