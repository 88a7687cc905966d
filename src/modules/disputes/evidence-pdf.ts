import { once } from 'node:events'
import PDFDocument from 'pdfkit'
import { formatDateTr, formatTryTr, PDF_FONT_FILES } from '../invoices/index.ts'
import type { EvidenceDraft } from './disputes.table.ts'

// The evidence package the bank receives: one PDF with the dispute's facts, the payment's
// timeline, the merchant's texts and the list of attached files. Set like the invoice PDF
// (pdfkit, DejaVu Sans Condensed: the standard fonts lack ş, ğ, ı, İ and ₺). Texts are
// bounded by the request schema, so the document is built in memory.

export interface EvidencePdfInput {
  merchantName: string
  chargeback: {
    id: string
    bankChargebackId: string
    reasonCode: string
    amount: number
    receivedAt: Date
    evidenceDueBy: Date
  }
  payment: {
    id: string
    transactionId: string
    amount: number
    capturedAmount: number
    refundAmount: number
    cardMask: string | null
    cardBrand: string | null
    threeDSecure: boolean
    authCode: string | null
    createdAt: Date
  }
  /** The payment's events, oldest first. */
  timeline: { at: Date; type: string }[]
  evidence: EvidenceDraft
  files: { id: string; type: string; size: number; sha256: string }[]
  generatedAt: Date
}

const MARGIN = 50
const INK = '#111827'
const MUTED = '#4b5563'

export const EVIDENCE_TEXTS: readonly (readonly [keyof EvidenceDraft, string])[] = [
  ['productDescription', 'Ürün / hizmet (Product description)'],
  ['customerCommunication', 'Müşteri yazışmaları (Customer communication)'],
  ['shippingTrackingNumber', 'Kargo takip no (Shipping tracking number)'],
  ['refundPolicy', 'İade politikası (Refund policy)'],
  ['uncategorizedText', 'Diğer (Other)'],
]

function isoMinute(d: Date): string {
  return d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC'
}

export async function renderEvidencePdf(input: EvidencePdfInput): Promise<Buffer> {
  const { chargeback: cb, payment: p } = input
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: {
      Title: `Chargeback evidence ${cb.id}`,
      Author: input.merchantName,
      Subject: `Evidence for chargeback ${cb.bankChargebackId} on payment ${p.id}`,
      Creator: 'Kuruş',
      CreationDate: input.generatedAt,
    },
  })
  doc.registerFont('regular', PDF_FONT_FILES.regular)
  doc.registerFont('bold', PDF_FONT_FILES.bold)
  const chunks: Buffer[] = []
  doc.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = once(doc, 'end')
  const width = doc.page.width - 2 * MARGIN

  const heading = (text: string) => {
    doc.moveDown(0.8)
    doc.font('bold').fontSize(12).fillColor(INK).text(text, MARGIN, doc.y, { width })
    doc.moveDown(0.2)
  }
  const fact = (label: string, value: string) => {
    doc.font('regular').fontSize(9).fillColor(MUTED).text(`${label}: `, { continued: true })
    doc.font('bold').fillColor(INK).text(value)
  }

  doc.font('bold').fontSize(18).fillColor(INK).text(input.merchantName, { width })
  doc
    .font('regular')
    .fontSize(11)
    .fillColor(MUTED)
    .text('Ters ibraz itiraz belgeleri (Chargeback evidence)', { width })

  heading('İtiraz (Dispute)')
  fact('Chargeback', cb.id)
  fact('Banka referansı (Bank reference)', cb.bankChargebackId)
  fact('Sebep kodu (Reason code)', cb.reasonCode)
  fact('Tutar (Amount)', formatTryTr(cb.amount))
  fact('Alındı (Received)', `${formatDateTr(cb.receivedAt)} · ${isoMinute(cb.receivedAt)}`)
  fact('Son tarih (Due by)', `${formatDateTr(cb.evidenceDueBy)} · ${isoMinute(cb.evidenceDueBy)}`)

  heading('Ödeme (Payment)')
  fact('Ödeme no (Payment)', p.id)
  fact('Sipariş no (Transaction id)', p.transactionId)
  fact('Tutar (Amount)', formatTryTr(p.amount))
  fact('Tahsil edilen (Captured)', formatTryTr(p.capturedAmount))
  fact('İade edilen (Refunded)', formatTryTr(p.refundAmount))
  fact('Kart (Card)', [p.cardBrand, p.cardMask].filter(Boolean).join(' ') || '—')
  fact('3-D Secure', p.threeDSecure ? 'evet (yes)' : 'hayır (no)')
  fact('Provizyon kodu (Auth code)', p.authCode ?? '—')

  heading('Zaman çizelgesi (Payment timeline)')
  doc.font('regular').fontSize(9).fillColor(INK)
  for (const e of input.timeline) doc.text(`${isoMinute(e.at)}  ${e.type}`, { width })
  if (input.timeline.length === 0) doc.text(`${isoMinute(p.createdAt)}  payment created`)

  for (const [key, label] of EVIDENCE_TEXTS) {
    const text = input.evidence[key]
    if (typeof text !== 'string' || text === '') continue
    heading(label)
    doc.font('regular').fontSize(10).fillColor(INK).text(text, { width })
  }

  heading('Ekler (Attached files)')
  doc.font('regular').fontSize(9).fillColor(INK)
  if (input.files.length === 0) doc.text('—')
  for (const f of input.files) {
    doc.text(`${f.id} · ${f.type.toUpperCase()} · ${f.size} bytes · sha256 ${f.sha256}`, {
      width,
    })
  }

  doc.moveDown(1)
  doc
    .font('regular')
    .fontSize(8)
    .fillColor(MUTED)
    .text(`Kuruş ödeme altyapısı ile oluşturuldu: ${isoMinute(input.generatedAt)}`, { width })
  doc.end()
  await ended
  return Buffer.concat(chunks)
}
