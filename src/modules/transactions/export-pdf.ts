import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import PDFDocument from 'pdfkit'
import { assert } from '../../platform/assert.ts'
import type { PaymentSearchEntry } from '../payments/index.ts'
import type { ChunkWriter } from './chunk-writer.ts'
import { formatIstanbul, formatTryGrouped } from './export-format.ts'
import type { ExportFilters } from './transactions.table.ts'

// The PDF statement: merchant, period and filters on top, one table row per payment with
// the column header repeated on every page, totals at the end. pdfkit writes each page out
// when the next one starts, and the build loop stores the bytes after every batch, so a
// 100,000-row statement (about 2,700 pages) never sits in memory whole.

/** Whether money was taken: captured (in part or whole), possibly refunded since. */
function movedMoney(e: PaymentSearchEntry): boolean {
  return e.status === 'captured' || e.status === 'partially_captured' || e.status === 'refunded'
}

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

// The 14 standard PDF fonts cover Windows-1252 only, which lacks ş, ğ, ı, İ, Ş and Ğ: DejaVu
// Sans Condensed is embedded (pdfkit subsets it to the glyphs used) for headings and for any
// cell with such letters. Licence: fonts/LICENSE.
const FONT_REGULAR = fileURLToPath(new URL('./fonts/DejaVuSansCondensed.ttf', import.meta.url))
const FONT_BOLD = fileURLToPath(new URL('./fonts/DejaVuSansCondensed-Bold.ttf', import.meta.url))
const BODY_FONT = 'Helvetica'
/** Text the standard fonts can show: printable ASCII and the rest of Windows-1252 we use. */
const WIN_ANSI = /^[\x20-\x7e\u00a0-\u00ff…–—€•]*$/u
const WIN_ANSI_EXTRA: Record<string, number> = {
  '€': 0x80,
  '…': 0x85,
  '•': 0x95,
  '–': 0x96,
  '—': 0x97,
}

const MARGIN = 36
const ROW_H = 12
const FONT_SIZE = 7.5
const GAP = 4

interface Column {
  title: string
  width: number
  align: 'left' | 'right'
  /** Merchant-chosen text, cut to the column's width; our own values always fit. */
  cut?: true
  value(e: PaymentSearchEntry): string
}

const COLUMNS: readonly Column[] = [
  {
    title: 'Tarih (İstanbul)',
    width: 64,
    align: 'left',
    value: (e) => formatIstanbul(e.createdAt).slice(0, 16),
  },
  { title: 'Ödeme No', width: 118, align: 'left', value: (e) => e.id },
  { title: 'Sipariş No', width: 118, align: 'left', cut: true, value: (e) => e.transactionId },
  { title: 'Mağaza', width: 118, align: 'left', cut: true, value: (e) => e.storeId },
  { title: 'Durum', width: 46, align: 'left', value: (e) => e.status },
  { title: 'Yöntem', width: 26, align: 'left', value: (e) => e.method },
  { title: 'Tutar', width: 62, align: 'right', value: (e) => formatTryGrouped(e.amount) },
  { title: 'Komisyon', width: 48, align: 'right', value: (e) => formatTryGrouped(e.commission) },
  { title: 'Net', width: 62, align: 'right', value: (e) => formatTryGrouped(e.netAmount) },
  { title: 'İade', width: 50, align: 'right', value: (e) => formatTryGrouped(e.refundAmount) },
]

const COLUMN_X: readonly number[] = COLUMNS.reduce<number[]>(
  (xs, c, i) => [...xs, i === 0 ? MARGIN : (xs[i - 1] ?? 0) + (COLUMNS[i - 1]?.width ?? 0) + GAP],
  [],
)

function describeFilters(f: ExportFilters): string {
  const parts: string[] = []
  if (f.storeId !== undefined) parts.push(`Mağaza: ${f.storeId}`)
  if (f.status !== undefined) parts.push(`Durum: ${f.status}`)
  if (f.customerId !== undefined) parts.push(`Müşteri: ${f.customerId}`)
  if (f.paymentId !== undefined) parts.push(`Ödeme: ${f.paymentId}`)
  if (f.amountMin !== undefined) parts.push(`Tutar ≥ ${formatTryGrouped(f.amountMin)} TRY`)
  if (f.amountMax !== undefined) parts.push(`Tutar ≤ ${formatTryGrouped(f.amountMax)} TRY`)
  return parts.length > 0 ? parts.join('  ·  ') : 'yok, tüm işlemler (none: all transactions)'
}

function describePeriod(f: ExportFilters, snapshotAt: Date): string {
  const from = f.from !== undefined ? formatIstanbul(new Date(f.from)) : 'ilk işlem (first)'
  const toDate = f.to !== undefined && new Date(f.to) < snapshotAt ? new Date(f.to) : snapshotAt
  return `${from} – ${formatIstanbul(toDate)} (İstanbul, UTC+03:00)`
}

/** Windows-1252 bytes of `text` as a PDF hex string (WIN_ANSI has checked every char). */
function winAnsiHex(text: string): string {
  let hex = ''
  for (const ch of text) {
    const code = WIN_ANSI_EXTRA[ch] ?? ch.charCodeAt(0)
    hex += code.toString(16).padStart(2, '0')
  }
  return `<${hex}>`
}

/**
 * pdfkit's text() costs about 40 µs a call (it measures each string twice and writes nine
 * operators through separate buffers); a 100,000-row statement makes a million of them. Body
 * cells in the standard font are therefore written as one text object per row, with the
 * font pdfkit itself loaded: its resource name and a reference for the page's resources.
 * These two fields are not in pdfkit's typings, so they are checked, and a pdfkit that
 * changed them fails the export loudly (and the tests) instead of drawing garbage.
 */
interface LoadedFont {
  id: string
  ref(): unknown
  ascender: number
}

function loadedFont(doc: PDFKit.PDFDocument): LoadedFont {
  const font = (doc as unknown as { _font?: Partial<LoadedFont> })._font
  assert(
    font !== undefined &&
      typeof font.id === 'string' &&
      typeof font.ref === 'function' &&
      typeof font.ascender === 'number',
    'pdfkit internals changed: the current font has no id/ref/ascender',
  )
  return font as LoadedFont
}

export class PdfStatement implements StatementRenderer {
  private readonly out: ChunkWriter
  private readonly ctx: StatementContext
  private readonly doc: PDFKit.PDFDocument
  private readonly ended: Promise<unknown[]>
  private readonly body: LoadedFont
  private readonly fallbackShiftY: number
  private readonly charWidths = new Map<string, number>()
  private y = 0
  private page = 0
  private count = 0
  /** Rows whose money moved (captured or refunded): the only ones the totals add. */
  private moved = 0
  private readonly totals = { amount: 0, commission: 0, net: 0, refund: 0 }

  constructor(out: ChunkWriter, ctx: StatementContext) {
    this.out = out
    this.ctx = ctx
    this.doc = new PDFDocument({
      size: 'A4',
      layout: 'landscape',
      margin: MARGIN,
      autoFirstPage: false,
      // pdfkit caches the shaping of every distinct word for the whole document: with a
      // unique payment id per row that cache grows without bound, so it is off.
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
    this.body = loadedFont(this.doc.font(BODY_FONT))
    // pdfkit places text by the top of its line box; the embedded font's taller ascender
    // would sit its cells lower than their neighbours' baseline without this shift.
    this.fallbackShiftY =
      ((this.body.ascender - loadedFont(this.doc.font('regular')).ascender) / 1000) * FONT_SIZE
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
    for (const e of batch) {
      if (this.y + ROW_H > this.bottom) this.newPage()
      if (this.count % 2 === 1) {
        this.doc.rect(MARGIN, this.y - 2, this.right - MARGIN, ROW_H).fill('#f2f4f7')
      }
      this.doc.fillColor('#111111')
      this.drawBodyRow(COLUMNS.map((c) => c.value(e)))
      this.y += ROW_H
      this.count++
      // Totals count money that moved (issue 22 §5): a decline, a void or an authorization
      // not captured yet is listed, but its amount was never taken.
      if (!movedMoney(e)) continue
      this.moved++
      // What was captured: a partial capture took less than the authorized amount.
      this.totals.amount += e.capturedAmount
      this.totals.commission += e.commission
      this.totals.net += e.netAmount
      this.totals.refund += e.refundAmount
    }
  }

  async end(): Promise<void> {
    const doc = this.doc
    if (this.y + ROW_H * 5 > this.bottom) this.newPage()
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
      `${this.moved.toLocaleString('tr-TR')} tahsil edildi`,
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
    const notes =
      this.count === 0
        ? ['Bu filtrelere uyan işlem yok. (No transactions match these filters.)']
        : [
            'Tutarlar TRY; Net = Tutar − Komisyon; İade: tamamlanan ve süren iadeler. ' +
              '(Amounts in TRY; refunds include completed and in-flight ones.)',
            'Toplamlar yalnızca tahsil edilen ödemeleri sayar; başarısız ve iptal edilen ' +
              'ödemelerin komisyonu ve neti 0. (Totals count captured payments only; failed ' +
              'and voided payments bear no commission or net.)',
          ]
    for (const note of notes) {
      doc.text(note, MARGIN, this.y, { lineBreak: false })
      this.y += ROW_H
    }
    doc.end()
    await this.ended
  }

  /** Headings and totals: few cells, through pdfkit's own text(). */
  private drawCells(values: readonly string[]): void {
    const doc = this.doc
    COLUMNS.forEach((c, i) => {
      const text = values[i] ?? ''
      if (text === '') return
      // Right alignment by measuring: pdfkit's `align` needs a width, which turns on its
      // line wrapper (and its automatic page breaks).
      const x = COLUMN_X[i] ?? MARGIN
      const at = c.align === 'right' ? x + c.width - doc.widthOfString(text) : x
      doc.text(text, at, this.y, { lineBreak: false })
    })
  }

  /** One body row: standard-font cells as one text object, others through text(). */
  private drawBodyRow(values: readonly string[]): void {
    const doc = this.doc
    doc.font(BODY_FONT).fontSize(FONT_SIZE)
    const ops: string[] = []
    const fallback: { text: string; at: number }[] = []
    // PDF space has its origin bottom left; pdfkit's y is the top of the line box. These are
    // page coordinates in points (toFixed formats them for the content stream), never money.
    const baseline = (doc.page.height - this.y - (this.body.ascender / 1000) * FONT_SIZE).toFixed(2)
    COLUMNS.forEach((c, i) => {
      let text = values[i] ?? ''
      if (text === '') return
      const x = COLUMN_X[i] ?? MARGIN
      if (!WIN_ANSI.test(text)) {
        fallback.push({ text: c.cut ? this.cutFallback(text, c.width) : text, at: x })
        return
      }
      let width = this.bodyWidth(text)
      if (c.cut && width > c.width) {
        text = this.cutToWidth(text, c.width)
        width = this.bodyWidth(text)
      }
      const at = c.align === 'right' ? x + c.width - width : x
      ops.push(`1 0 0 1 ${at.toFixed(2)} ${baseline} Tm ${winAnsiHex(text)} Tj`)
    })
    if (ops.length > 0) {
      const fonts = doc.page.fonts as Record<string, unknown>
      fonts[this.body.id] ??= this.body.ref()
      // pdfkit draws with y pointing down (its page starts with a flipping matrix); text
      // must be drawn in PDF's own y-up space, as pdfkit's text() does too.
      doc.addContent(
        `q 1 0 0 -1 0 ${doc.page.height} cm BT /${this.body.id} ${FONT_SIZE} Tf ${ops.join(' ')} ET Q`,
      )
    }
    if (fallback.length > 0) {
      doc.font('regular').fontSize(FONT_SIZE)
      for (const { text, at } of fallback) {
        doc.text(text, at, this.y + this.fallbackShiftY, { lineBreak: false })
      }
    }
  }

  /**
   * Width of body text as drawn: the sum of its characters' advances (a Tj without kerning,
   * unlike pdfkit's widthOfString), each looked up once per document.
   */
  private bodyWidth(text: string): number {
    let width = 0
    for (const ch of text) {
      let w = this.charWidths.get(ch)
      if (w === undefined) {
        w = this.doc.font(BODY_FONT).fontSize(FONT_SIZE).widthOfString(ch)
        this.charWidths.set(ch, w)
      }
      width += w
    }
    return width
  }

  /** The longest prefix that fits `width` with an ellipsis after it. */
  private cutToWidth(text: string, width: number): string {
    let used = this.bodyWidth('…')
    let out = ''
    for (const ch of text) {
      used += this.bodyWidth(ch)
      if (used > width) break
      out += ch
    }
    return `${out}…`
  }

  /** cutToWidth for the embedded font (rare cells, so pdfkit's slower measuring is fine). */
  private cutFallback(text: string, width: number): string {
    const doc = this.doc.font('regular').fontSize(FONT_SIZE)
    if (doc.widthOfString(text) <= width) return text
    let chars = Array.from(text)
    while (chars.length > 1 && doc.widthOfString(`${chars.join('')}…`) > width) {
      chars = chars.slice(
        0,
        Math.max(1, Math.min(chars.length - 1, Math.floor(chars.length * 0.9))),
      )
    }
    return `${chars.join('')}…`
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
      const running = `${this.ctx.merchantName}  ·  İşlem Ekstresi  ·  ${this.ctx.exportId}`
      doc.text(running, MARGIN, this.y, { lineBreak: false })
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
    doc.text('Kuruş · kuruş cinsinden tutarlar CSV ekstresinde', MARGIN, y, { lineBreak: false })
    const label = `Sayfa ${this.page}`
    doc.text(label, this.right - doc.widthOfString(label), y, { lineBreak: false })
  }
}
