import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import PDFDocument from 'pdfkit'
import type { PaymentSearchEntry } from '../payments/index.ts'
import type { ChunkWriter } from './chunk-writer.ts'
import { formatIstanbul, formatTryGrouped } from './export-format.ts'
import type { ExportFilters } from './transactions.table.ts'

// The PDF statement: merchant, period and filters on top, one table row per payment with
// the column header repeated on every page, totals at the end. pdfkit writes each page out
// when the next one starts, and the build loop stores the bytes after every batch, so a
// 100,000-row statement (about 2,600 pages) never sits in memory whole.

/** What a statement file is built from, whatever its format. */
export interface StatementRenderer {
  begin(): void
  rows(batch: PaymentSearchEntry[]): void
  end(): Promise<void>
}

export interface StatementContext {
  exportId: string
  merchantName: string
  filters: ExportFilters
  /** Payments created after this are not in the statement. */
  snapshotAt: Date
}

// The 14 standard PDF fonts have no ş, ğ, ı or İ: DejaVu Sans Condensed is embedded (and
// subset by pdfkit to the glyphs used). Licence: fonts/LICENSE.
const FONT_REGULAR = fileURLToPath(new URL('./fonts/DejaVuSansCondensed.ttf', import.meta.url))
const FONT_BOLD = fileURLToPath(new URL('./fonts/DejaVuSansCondensed-Bold.ttf', import.meta.url))

const MARGIN = 36
const ROW_H = 12
const FONT_SIZE = 7.5
const GAP = 4

interface Column {
  title: string
  width: number
  align: 'left' | 'right'
  /** Longest text shown; longer merchant-chosen values are cut with an ellipsis. */
  chars: number
  value(e: PaymentSearchEntry): string
}

const COLUMNS: Column[] = [
  {
    title: 'Tarih (İstanbul)',
    width: 70,
    align: 'left',
    chars: 19,
    value: (e) => formatIstanbul(e.createdAt).slice(0, 16),
  },
  { title: 'Ödeme No', width: 112, align: 'left', chars: 40, value: (e) => e.id },
  { title: 'Sipariş No', width: 112, align: 'left', chars: 30, value: (e) => e.transactionId },
  { title: 'Mağaza', width: 108, align: 'left', chars: 40, value: (e) => e.storeId },
  { title: 'Durum', width: 50, align: 'left', chars: 12, value: (e) => e.status },
  { title: 'Yöntem', width: 30, align: 'left', chars: 6, value: (e) => e.method },
  {
    title: 'Tutar',
    width: 66,
    align: 'right',
    chars: 20,
    value: (e) => formatTryGrouped(e.amount),
  },
  {
    title: 'Komisyon',
    width: 54,
    align: 'right',
    chars: 20,
    value: (e) => formatTryGrouped(e.commission),
  },
  {
    title: 'Net',
    width: 66,
    align: 'right',
    chars: 20,
    value: (e) => formatTryGrouped(e.netAmount),
  },
  {
    title: 'İade',
    width: 56,
    align: 'right',
    chars: 20,
    value: (e) => formatTryGrouped(e.refundAmount),
  },
]

function cut(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars - 1)}…`
}

function describeFilters(f: ExportFilters): string {
  const parts: string[] = []
  if (f.storeId !== undefined) parts.push(`Mağaza: ${f.storeId}`)
  if (f.status !== undefined) parts.push(`Durum: ${f.status}`)
  if (f.customerId !== undefined) parts.push(`Müşteri: ${f.customerId}`)
  if (f.paymentId !== undefined) parts.push(`Ödeme: ${f.paymentId}`)
  if (f.amountMin !== undefined) parts.push(`Tutar ≥ ${formatTryGrouped(f.amountMin)} TRY`)
  if (f.amountMax !== undefined) parts.push(`Tutar ≤ ${formatTryGrouped(f.amountMax)} TRY`)
  return parts.length > 0 ? parts.join('  ·  ') : 'Yok: tüm işlemler (none: all transactions)'
}

function describePeriod(f: ExportFilters, snapshotAt: Date): string {
  const from = f.from !== undefined ? formatIstanbul(new Date(f.from)) : 'ilk işlem (first)'
  const toDate = f.to !== undefined && new Date(f.to) < snapshotAt ? new Date(f.to) : snapshotAt
  return `${from} – ${formatIstanbul(toDate)} (İstanbul, UTC+03:00)`
}

export class PdfStatement implements StatementRenderer {
  private readonly out: ChunkWriter
  private readonly ctx: StatementContext
  private readonly doc: PDFKit.PDFDocument
  private readonly ended: Promise<unknown[]>
  private y = 0
  private bodyFont = false
  private page = 0
  private count = 0
  private totals = { amount: 0, commission: 0, net: 0, refund: 0 }

  constructor(out: ChunkWriter, ctx: StatementContext) {
    this.out = out
    this.ctx = ctx
    this.doc = new PDFDocument({
      size: 'A4',
      layout: 'landscape',
      margin: MARGIN,
      autoFirstPage: false,
      // pdfkit caches the shaping of every distinct word for the whole document: with a
      // unique payment id per row that cache grows without bound (hundreds of MB at 100k
      // rows), so it is off and each cell is shaped afresh.
      fontLayoutCache: false,
      info: {
        Title: `İşlem Ekstresi ${ctx.exportId}`,
        Author: 'Kuruş',
        Subject: `Transaction statement for ${ctx.merchantName}`,
        CreationDate: ctx.snapshotAt,
      },
    })
    this.doc.registerFont('regular', FONT_REGULAR)
    this.doc.registerFont('bold', FONT_BOLD)
    this.doc.on('data', (chunk: Buffer) => this.out.write(chunk))
    this.ended = once(this.doc, 'end')
  }

  private get bottom(): number {
    return this.doc.page.height - MARGIN - 14
  }

  private get right(): number {
    return this.doc.page.width - MARGIN
  }

  begin(): void {
    this.newPage()
  }

  rows(batch: PaymentSearchEntry[]): void {
    const doc = this.doc
    doc.font('regular').fontSize(FONT_SIZE)
    for (const e of batch) {
      if (this.y + ROW_H > this.bottom) {
        this.newPage()
        doc.font('regular').fontSize(FONT_SIZE)
      }
      if (this.count % 2 === 1) {
        doc.rect(MARGIN, this.y - 2, this.right - MARGIN, ROW_H).fill('#f2f4f7')
      }
      doc.fillColor('#111111')
      this.bodyFont = true
      this.drawCells(COLUMNS.map((c) => cut(c.value(e), c.chars)))
      this.bodyFont = false
      this.y += ROW_H
      this.count++
      this.totals.amount += e.amount
      this.totals.commission += e.commission
      this.totals.net += e.netAmount
      this.totals.refund += e.refundAmount
    }
  }

  async end(): Promise<void> {
    const doc = this.doc
    if (this.y + ROW_H * 4 > this.bottom) this.newPage()
    doc
      .moveTo(MARGIN, this.y)
      .lineTo(this.right, this.y)
      .lineWidth(0.8)
      .strokeColor('#333333')
      .stroke()
    this.y += 4
    doc
      .font('bold')
      .fontSize(FONT_SIZE + 0.5)
      .fillColor('#111111')
    const t = this.totals
    this.drawCells([
      'Toplam',
      `${this.count.toLocaleString('tr-TR')} işlem`,
      '',
      '',
      '',
      '',
      formatTryGrouped(t.amount),
      formatTryGrouped(t.commission),
      formatTryGrouped(t.net),
      formatTryGrouped(t.refund),
    ])
    this.y += ROW_H * 2
    doc.font('regular').fontSize(FONT_SIZE).fillColor('#555555')
    const note =
      this.count === 0
        ? 'Bu filtrelere uyan işlem yok. (No transactions match these filters.)'
        : 'Tutarlar TRY cinsindendir; Net = Tutar − Komisyon; İade: tamamlanan ve süren iadeler. ' +
          '(Amounts in TRY; refunds include completed and in-flight ones.)'
    doc.text(note, MARGIN, this.y, { lineBreak: false })
    doc.end()
    await this.ended
  }

  private drawCells(values: string[]): void {
    const doc = this.doc
    let x = MARGIN
    COLUMNS.forEach((c, i) => {
      const text = values[i] ?? ''
      if (text !== '') {
        if (this.bodyFont) doc.font(/^[\x20-\x7e]*$/.test(text) ? 'Helvetica' : 'regular')
        // Right alignment by measuring: pdfkit's own `align` needs a width, which turns on
        // its line wrapper (and its automatic page breaks) for every cell.
        const at = c.align === 'right' ? x + c.width - doc.widthOfString(text) : x
        doc.text(text, at, this.y, { lineBreak: false })
      }
      x += c.width + GAP
    })
  }

  private newPage(): void {
    const doc = this.doc
    doc.addPage()
    this.page++
    this.y = MARGIN
    if (this.page === 1) {
      doc.font('bold').fontSize(16).fillColor('#111111')
      doc.text('İşlem Ekstresi', MARGIN, this.y, { lineBreak: false })
      doc.font('regular').fontSize(9).fillColor('#555555')
      doc.text('Transaction statement', MARGIN + 130, this.y + 6, { lineBreak: false })
      this.y += 24
      doc.font('bold').fontSize(11).fillColor('#111111')
      doc.text(this.ctx.merchantName, MARGIN, this.y, { lineBreak: false })
      this.y += 16
      doc.font('regular').fontSize(8.5).fillColor('#333333')
      const lines = [
        `Dönem (period): ${describePeriod(this.ctx.filters, this.ctx.snapshotAt)}`,
        `Filtreler (filters): ${describeFilters(this.ctx.filters)}`,
        `Oluşturma (created): ${formatIstanbul(this.ctx.snapshotAt)}   ·   Ekstre no: ${this.ctx.exportId}`,
      ]
      for (const line of lines) {
        doc.text(line, MARGIN, this.y, { lineBreak: false })
        this.y += 12
      }
      this.y += 6
    } else {
      doc.font('regular').fontSize(8).fillColor('#555555')
      doc.text(`${this.ctx.merchantName} · İşlem Ekstresi · ${this.ctx.exportId}`, MARGIN, this.y, {
        lineBreak: false,
      })
      this.y += 14
    }
    this.drawFooter()
    this.drawTableHeader()
  }

  private drawTableHeader(): void {
    const doc = this.doc
    doc.rect(MARGIN, this.y - 3, this.right - MARGIN, ROW_H + 3).fill('#dde3ea')
    doc.font('bold').fontSize(FONT_SIZE).fillColor('#111111')
    this.drawCells(COLUMNS.map((c) => c.title))
    this.y += ROW_H + 3
  }

  private drawFooter(): void {
    const doc = this.doc
    doc.font('regular').fontSize(7).fillColor('#777777')
    const y = doc.page.height - MARGIN - 6
    doc.text('Kuruş', MARGIN, y, { lineBreak: false })
    const label = `Sayfa ${this.page}`
    doc.text(label, this.right - doc.widthOfString(label), y, { lineBreak: false })
  }
}
