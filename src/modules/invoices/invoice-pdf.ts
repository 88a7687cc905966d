import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { formatDateTr, formatTryTr } from './money-format.ts'
import type { Invoice } from './invoice-view.ts'
import type { InvoiceStatus } from './invoices.table.ts'

// The invoice as a PDF: the merchant, the buyer, the lines, the total in TRY written the
// Turkish way ("1.234,56 ₺"), the dates, and the pay link with its QR code. Text is set in
// DejaVu Sans Condensed (embedded, subset by pdfkit): the 14 standard PDF fonts lack ş, ğ, ı,
// İ and the lira sign. Licence: fonts/LICENSE. An invoice has at most 100 lines, so the file
// is built in memory.

const FONT_REGULAR = fileURLToPath(new URL('./fonts/DejaVuSansCondensed.ttf', import.meta.url))
const FONT_BOLD = fileURLToPath(new URL('./fonts/DejaVuSansCondensed-Bold.ttf', import.meta.url))

/** The embedded fonts, for other documents set the same way (the dispute evidence PDF). */
export const PDF_FONT_FILES = { regular: FONT_REGULAR, bold: FONT_BOLD } as const

const MARGIN = 50
const INK = '#111827'
const MUTED = '#4b5563'
const RULE = '#d1d5db'
const ACCENT = '#4338ca'
const PAID = '#067647'
const QR_SIZE = 112

const STATUS_TR: Record<InvoiceStatus, string> = {
  draft: 'Taslak',
  sent: 'Gönderildi',
  activated: 'Ödemeye açık',
  viewed: 'Görüntülendi',
  paid: 'Ödendi',
  expired: 'Süresi doldu',
  cancelled: 'İptal edildi',
}

export interface InvoicePdfInput {
  invoice: Invoice
  merchantName: string
  /** The buyer's page: `{checkout_url}/invoice/<publicHash>`. */
  payUrl: string
  generatedAt: Date
}

interface Column {
  title: string
  x: number
  width: number
  align: 'left' | 'right'
}

export async function renderInvoicePdf(input: InvoicePdfInput): Promise<Buffer> {
  const { invoice } = input
  // pdfkit and qrcode are loaded by the first invoice PDF: an API process that renders none
  // does not hold them (docs/performance.md, "Round 3, part 3: memory").
  const [{ default: PDFDocument }, { default: QRCode }] = await Promise.all([
    import('pdfkit'),
    import('qrcode'),
  ])
  const qrPng = await QRCode.toBuffer(input.payUrl, {
    type: 'png',
    errorCorrectionLevel: 'M',
    margin: 1,
    width: 336,
  })
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: {
      Title: `Ödeme talebi ${invoice.id}`,
      Author: input.merchantName,
      Subject: `Payment request ${invoice.id} from ${input.merchantName}`,
      Creator: 'Kuruş',
      CreationDate: input.generatedAt,
    },
  })
  doc.registerFont('regular', FONT_REGULAR)
  doc.registerFont('bold', FONT_BOLD)
  const chunks: Buffer[] = []
  doc.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = once(doc, 'end')

  const left = MARGIN
  const right = doc.page.width - MARGIN
  const width = right - left
  const bottom = (): number => doc.page.height - MARGIN - 24

  // Header: the merchant on the left, the invoice's identity on the right.
  doc
    .font('bold')
    .fontSize(18)
    .fillColor(INK)
    .text(input.merchantName, left, MARGIN, {
      width: width * 0.55,
    })
  const afterMerchant = doc.y
  doc
    .font('bold')
    .fontSize(22)
    .fillColor(ACCENT)
    .text('ÖDEME TALEBİ', left, MARGIN, { width, align: 'right' })
  // Not a Turkish tax invoice (no KDV breakdown, no VKN/TCKN, no e-Arşiv number): it says so,
  // so no buyer mistakes it for one (docs/decisions/0030-invoice-document.md).
  doc
    .font('regular')
    .fontSize(9)
    .fillColor(MUTED)
    .text('Payment request · Fatura yerine geçmez (not a tax invoice)', {
      width,
      align: 'right',
    })
  const facts: (readonly [string, string])[] = [
    ['Belge no', invoice.id],
    ['Düzenleme tarihi', formatDateTr(invoice.createdAt)],
    ...(invoice.dueDate ? ([['Son ödeme tarihi', formatDateTr(invoice.dueDate)]] as const) : []),
    ...(invoice.expiresAt
      ? ([['Bağlantı geçerliliği', formatDateTr(invoice.expiresAt)]] as const)
      : []),
    ['Durum', STATUS_TR[invoice.status]],
  ]
  doc.moveDown(0.5)
  // One string per fact: pdfkit's `continued` text does not right-align as a whole.
  const factsX = left + width * 0.45
  const labelWidth = 90
  for (const [label, value] of facts) {
    const rowY = doc.y
    doc.font('regular').fontSize(9).fillColor(MUTED)
    doc.text(`${label}:`, factsX, rowY, { width: labelWidth, align: 'right' })
    doc.font('bold').fillColor(INK)
    doc.text(value, factsX + labelWidth + 6, rowY, { width: right - factsX - labelWidth - 6 })
  }
  let y = Math.max(doc.y, afterMerchant) + 20

  // The buyer.
  doc.font('bold').fontSize(9).fillColor(MUTED).text('SAYIN (BILL TO)', left, y)
  doc.font('regular').fontSize(11).fillColor(INK)
  doc.text(invoice.buyerName ?? '—', left, doc.y + 2, { width: width / 2 })
  if (invoice.buyerEmail) doc.fontSize(9).fillColor(MUTED).text(invoice.buyerEmail)
  y = doc.y + 20

  // The lines.
  const columns: Column[] = [
    { title: 'Açıklama', x: left, width: width - 250, align: 'left' },
    { title: 'Adet', x: right - 242, width: 50, align: 'right' },
    { title: 'Birim fiyat', x: right - 186, width: 90, align: 'right' },
    { title: 'Tutar', x: right - 90, width: 90, align: 'right' },
  ]
  const header = (): void => {
    doc.rect(left, y - 4, width, 20).fill('#f3f4f6')
    doc.font('bold').fontSize(9).fillColor(MUTED)
    for (const c of columns) doc.text(c.title, c.x, y + 1, { width: c.width, align: c.align })
    y += 22
  }
  header()
  doc.font('regular').fontSize(10).fillColor(INK)
  for (const line of invoice.lineItems) {
    const name = columns[0]
    if (!name) break
    const h = Math.max(doc.heightOfString(line.name, { width: name.width }), 12)
    if (y + h > bottom()) {
      doc.addPage()
      y = MARGIN
      header()
      doc.font('regular').fontSize(10).fillColor(INK)
    }
    const cells = [
      line.name,
      line.qty.toLocaleString('tr-TR'),
      formatTryTr(line.unitPriceMinor),
      formatTryTr(line.lineTotalMinor),
    ]
    columns.forEach((c, i) => {
      doc.text(cells[i] ?? '', c.x, y, { width: c.width, align: c.align })
    })
    y += h + 6
    doc
      .moveTo(left, y - 3)
      .lineTo(right, y - 3)
      .lineWidth(0.5)
      .strokeColor(RULE)
      .stroke()
  }

  // The total.
  if (y + 60 > bottom()) {
    doc.addPage()
    y = MARGIN
  }
  y += 6
  doc.font('bold').fontSize(12).fillColor(INK)
  doc.text('Genel toplam (TRY)', right - 300, y, { width: 190, align: 'right' })
  doc.text(formatTryTr(invoice.amountMinor), right - 110, y, { width: 110, align: 'right' })
  y = doc.y + 18

  if (invoice.notes) {
    doc.font('bold').fontSize(9).fillColor(MUTED).text('NOTLAR (NOTES)', left, y)
    doc
      .font('regular')
      .fontSize(10)
      .fillColor(INK)
      .text(invoice.notes, left, doc.y + 2, { width })
    y = doc.y + 18
  }

  // How to pay: the link and its QR code (or what became of the invoice).
  if (y + QR_SIZE + 20 > bottom()) {
    doc.addPage()
    y = MARGIN
  }
  doc
    .rect(left, y, width, QR_SIZE + 20)
    .lineWidth(0.8)
    .strokeColor(RULE)
    .stroke()
  doc.image(qrPng, right - QR_SIZE - 10, y + 10, { width: QR_SIZE, height: QR_SIZE })
  const textWidth = width - QR_SIZE - 40
  doc.font('bold').fontSize(11).fillColor(INK)
  if (invoice.status === 'paid') {
    doc
      .fillColor(PAID)
      .text(
        `ÖDENDİ${invoice.paidAt ? ` · ${formatDateTr(invoice.paidAt)}` : ''}`,
        left + 12,
        y + 12,
        { width: textWidth },
      )
    doc.font('regular').fontSize(9).fillColor(MUTED)
    if (invoice.paymentId) doc.text(`Ödeme no: ${invoice.paymentId}`, { width: textWidth })
    doc.text('Belgenin güncel durumu:', { width: textWidth })
  } else if (invoice.status === 'cancelled' || invoice.status === 'expired') {
    doc.text(
      `Bu ödeme talebi ${STATUS_TR[invoice.status].toLocaleLowerCase('tr')}.`,
      left + 12,
      y + 12,
      {
        width: textWidth,
      },
    )
    doc.font('regular').fontSize(9).fillColor(MUTED)
    doc.text('Ödeme alınmaz. Belgenin güncel durumu:', { width: textWidth })
  } else {
    doc.text('Çevrimiçi ödeme (Pay online)', left + 12, y + 12, { width: textWidth })
    doc.font('regular').fontSize(9).fillColor(MUTED)
    doc.text(
      'Kartla ödemek için karekodu okutun ya da bağlantıyı açın. ' +
        '(Scan the QR code or open the link to pay by card.)',
      { width: textWidth },
    )
  }
  doc.moveDown(0.4)
  doc.font('regular').fontSize(9).fillColor(ACCENT).text(input.payUrl, {
    width: textWidth,
    link: input.payUrl,
    underline: true,
  })

  doc
    .font('regular')
    .fontSize(8)
    .fillColor(MUTED)
    .text(
      'Tutarlar Türk lirasıdır (TRY). Bu fatura Kuruş ödeme altyapısı ile oluşturuldu.',
      left,
      doc.page.height - MARGIN - 10,
      { width, align: 'center', lineBreak: false },
    )
  doc.end()
  await ended
  return Buffer.concat(chunks)
}
