import { once } from 'node:events'
import { inflateSync } from 'node:zlib'
import { formatDateTr, formatTryTr, PDF_FONT_FILES } from '../invoices/index.ts'
import type { EvidenceDraft } from './disputes.table.ts'
import { reasonCodeInfo } from './reason-codes.ts'

// The evidence package the bank receives: one PDF with the dispute's facts, the payment's
// timeline, the merchant's texts and the list of attached files. Set like the invoice PDF
// (pdfkit, DejaVu Sans Condensed: the standard fonts lack ş, ğ, ı, İ and ₺). Texts are
// bounded by the request schema, so the document is built in memory. Uploaded images (PNG,
// JPEG) are in the document itself, one a page, so the bank reads them without our files;
// an uploaded PDF, or an image pdfkit could not draw, is listed.

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
  /** The attached files; `bytes` for the images, which are drawn into the document. */
  files: { id: string; type: string; size: number; sha256: string; bytes?: Buffer }[]
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
  // Loaded by the first evidence PDF (docs/performance.md, "Round 3, part 3: memory").
  const { default: PDFDocument } = await import('pdfkit')
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
  const reason = reasonCodeInfo(cb.reasonCode)
  fact(
    'Sebep kodu (Reason code)',
    reason ? `${cb.reasonCode} · ${reason.tr.title} (${reason.en.title})` : cb.reasonCode,
  )
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
  const images = input.files.filter((f) => f.bytes !== undefined && drawable(f.type, f.bytes))
  input.files.forEach((f, i) => {
    const shown = images.includes(f) ? 'görsel ekte (image below)' : `${f.size} bytes`
    doc.text(`${i + 1}. ${f.type.toUpperCase()} · ${shown}`, { width })
  })
  input.files.forEach((f, i) => {
    if (!f.bytes || !images.includes(f)) return
    doc.addPage()
    doc
      .font('bold')
      .fontSize(11)
      .fillColor(INK)
      .text(`Ek ${i + 1} (Attachment ${i + 1}) · ${f.type.toUpperCase()}`, { width })
    doc.moveDown(0.5)
    const top = doc.y
    doc.image(f.bytes, MARGIN, top, {
      fit: [width, doc.page.height - MARGIN - top],
      align: 'center',
    })
  })

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

/**
 * Can pdfkit draw these bytes? The upload was typed by its first bytes only; pdfkit throws on
 * a JPEG without a frame header, and inflates a PNG with an alpha channel later, where a
 * corrupt one would throw outside any handler: so both are checked here first.
 */
function drawable(type: string, bytes: Buffer): boolean {
  if (type === 'jpeg') return jpegDrawable(bytes)
  if (type !== 'png') return false
  try {
    let pos = 8
    let header: { width: number; height: number; bits: number; colour: number } | undefined
    const data: Buffer[] = []
    while (pos + 8 <= bytes.length) {
      const length = bytes.readUInt32BE(pos)
      const kind = bytes.toString('latin1', pos + 4, pos + 8)
      const body = bytes.subarray(pos + 8, pos + 8 + length)
      if (body.length !== length) return false
      if (kind === 'IHDR') {
        header = {
          width: body.readUInt32BE(0),
          height: body.readUInt32BE(4),
          bits: body[8] ?? 0,
          colour: body[9] ?? 0,
        }
        if (body[12] !== 0) return false // interlaced: not drawn by pdfkit with alpha
      }
      if (kind === 'IDAT') data.push(body)
      if (kind === 'IEND') break
      pos += 12 + length
    }
    if (!header || header.width < 1 || header.height < 1) return false
    if (header.width > 10_000 || header.height > 10_000 || header.bits !== 8) return false
    const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[header.colour]
    if (channels === undefined) return false
    const pixels = inflateSync(Buffer.concat(data))
    return pixels.length >= header.height * (1 + header.width * channels)
  } catch {
    return false
  }
}

/** A JPEG with a frame header (SOF) of sane size, as pdfkit reads it. */
function jpegDrawable(bytes: Buffer): boolean {
  const SOF = new Set([0xffc0, 0xffc1, 0xffc2, 0xffc3, 0xffc5, 0xffc6, 0xffc7])
  if (bytes.length < 4 || bytes.readUInt16BE(0) !== 0xffd8) return false
  let pos = 2
  while (pos + 4 <= bytes.length) {
    const marker = bytes.readUInt16BE(pos)
    if (SOF.has(marker)) {
      if (pos + 11 > bytes.length) return false
      const height = bytes.readUInt16BE(pos + 5)
      const width = bytes.readUInt16BE(pos + 7)
      const channels = bytes[pos + 9] ?? 0
      return width > 0 && height > 0 && [1, 3, 4].includes(channels)
    }
    if (bytes[pos] !== 0xff) return false
    pos += 2 + bytes.readUInt16BE(pos + 2)
  }
  return false
}
