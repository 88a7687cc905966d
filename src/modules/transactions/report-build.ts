import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { stringify } from 'csv-stringify/sync'
import PDFDocument from 'pdfkit'
import type { Deps } from '../../database.ts'
import {
  balanceSummary,
  payoutAllocationBatches,
  payoutBatches,
  type BalanceOwner,
  type BalanceSummary,
  type PayoutAllocation,
  type PayoutHeader,
} from '../ledger/index.ts'
import { getMerchant } from '../merchants/index.ts'
import type { ChunkWriter } from './chunk-writer.ts'
import { CSV_DELIMITER } from './export-csv.ts'
import { formatIstanbul, formatTry, formatTryGrouped, neutraliseFormula } from './export-format.ts'
import type { ExportRow } from './transactions.table.ts'

// The files of finance reports (POST /v1/reports; docs/reports.md), built by the exports'
// job (exports.service.ts buildExport) into the same chunks. Both reports read the ledger in
// keyset batches and write each batch out before reading the next (`out.flushFull()`), so a
// year of a busy merchant is never held in memory: the balance summary keeps one line per
// type, the reconciliation one batch of allocation rows.

const CSV_OPTIONS = {
  delimiter: CSV_DELIMITER,
  record_delimiter: 'windows',
  cast: { string: (value: string) => neutraliseFormula(value) },
} as const

const FONT_REGULAR = fileURLToPath(new URL('./fonts/DejaVuSansCondensed.ttf', import.meta.url))
const FONT_BOLD = fileURLToPath(new URL('./fonts/DejaVuSansCondensed-Bold.ttf', import.meta.url))
const MARGIN = 40
const ROW_H = 13

export const SUMMARY_CSV_COLUMNS = [
  'line',
  'type',
  'at',
  'count',
  'amountMinor',
  'feeMinor',
  'netMinor',
  'amount',
  'fee',
  'net',
] as const

export const RECONCILIATION_CSV_COLUMNS = [
  'payoutId',
  'payoutStatus',
  'payoutCreatedAt',
  'payoutAmountMinor',
  'balanceTransactionId',
  'type',
  'sourceId',
  'createdAt',
  'availableOn',
  'amountMinor',
  'feeMinor',
  'netMinor',
  'settledMinor',
  'settled',
] as const

const TYPE_LABELS: Record<string, string> = {
  charge: 'Satış (charge)',
  refund: 'İade (refund)',
  chargeback: 'Ters ibraz (chargeback)',
  chargeback_reversal: 'Ters ibraz iadesi (chargeback reversal)',
  payout: 'Ödeme çıkışı (payout)',
  payout_failure: 'Başarısız ödeme (payout failure)',
  adjustment: 'Düzeltme (adjustment)',
}

/** The report's period: [from, to), `to` no later than the moment the report was asked for. */
function periodOf(row: ExportRow): { from: Date; to: Date } {
  const snapshotEnd = new Date(row.snapshot_at.getTime() + 1)
  const from = new Date(row.filters.from ?? 0)
  const to =
    row.filters.to !== undefined && new Date(row.filters.to) < snapshotEnd
      ? new Date(row.filters.to)
      : snapshotEnd
  return { from, to }
}

interface ReportContext {
  reportId: string
  merchantName: string
  period: { from: Date; to: Date }
  createdAt: Date
}

class ReportPdf {
  readonly doc: PDFKit.PDFDocument
  private readonly ended: Promise<unknown[]>
  y = 0

  constructor(out: ChunkWriter, title: string, ctx: ReportContext) {
    this.doc = new PDFDocument({
      size: 'A4',
      margin: MARGIN,
      autoFirstPage: false,
      fontLayoutCache: false,
      info: { Title: `${title} ${ctx.reportId}`, Author: 'Kuruş', CreationDate: ctx.createdAt },
    })
    this.doc.registerFont('regular', FONT_REGULAR)
    this.doc.registerFont('bold', FONT_BOLD)
    this.doc.on('data', (chunk: Buffer) => out.write(chunk))
    this.ended = once(this.doc, 'end')
    this.newPage()
    this.doc.font('bold').fontSize(14).text(title, MARGIN, this.y)
    this.y += 22
    this.doc.font('regular').fontSize(9)
    for (const line of [
      ctx.merchantName,
      `Dönem (period): ${formatIstanbul(ctx.period.from)} – ${formatIstanbul(ctx.period.to)} (İstanbul, UTC+03:00)`,
      `Rapor (report): ${ctx.reportId}`,
    ]) {
      this.doc.text(line, MARGIN, this.y)
      this.y += ROW_H
    }
    this.y += 6
  }

  newPage(): void {
    this.doc.addPage()
    this.y = MARGIN
  }

  private get bottom(): number {
    return this.doc.page.height - MARGIN
  }

  /** One row of cells at x positions; right-aligned cells end at their x + width. */
  row(cells: { text: string; x: number; width: number; right?: boolean }[], bold = false): void {
    if (this.y + ROW_H > this.bottom) this.newPage()
    this.doc.font(bold ? 'bold' : 'regular').fontSize(7)
    for (const c of cells) {
      // One line per cell: a text longer than its column is cut with an ellipsis.
      this.doc.text(c.text, c.x, this.y, {
        width: c.width,
        height: ROW_H,
        align: c.right ? 'right' : 'left',
        lineBreak: false,
        ellipsis: true,
      })
    }
    this.y += ROW_H
  }

  gap(h = 8): void {
    this.y += h
  }

  async end(): Promise<void> {
    this.doc.end()
    await this.ended
  }
}

async function contextOf(deps: Deps, row: ExportRow): Promise<ReportContext> {
  const merchant = await getMerchant(deps, row.merchant_id)
  return {
    reportId: row.id,
    merchantName: merchant.name,
    period: periodOf(row),
    createdAt: row.snapshot_at,
  }
}

async function ownerOf(deps: Deps, row: ExportRow): Promise<BalanceOwner> {
  const merchant = await getMerchant(deps, row.merchant_id)
  return {
    merchantId: row.merchant_id,
    ownerType: 'merchant',
    ownerId: row.merchant_id,
    settlementDelaySeconds: merchant.settlementDelaySeconds,
  }
}

function writeSummaryCsv(out: ChunkWriter, s: BalanceSummary, ctx: ReportContext): number {
  const money = (n: number) => [n, formatTry(n)] as const
  const records: (string | number)[][] = [
    [
      'opening_balance',
      '',
      ctx.period.from.toISOString(),
      '',
      '',
      '',
      s.opening,
      '',
      '',
      formatTry(s.opening),
    ],
    ...s.activity.map((a) => [
      'activity',
      a.type,
      '',
      a.count,
      a.amount,
      a.fee,
      a.net,
      money(a.amount)[1],
      money(a.fee)[1],
      money(a.net)[1],
    ]),
    [
      'closing_balance',
      '',
      ctx.period.to.toISOString(),
      '',
      '',
      '',
      s.closing,
      '',
      '',
      formatTry(s.closing),
    ],
  ]
  out.write(stringify([[...SUMMARY_CSV_COLUMNS], ...records], { ...CSV_OPTIONS, bom: true }))
  return records.length
}

async function writeSummaryPdf(
  out: ChunkWriter,
  s: BalanceSummary,
  ctx: ReportContext,
): Promise<number> {
  const pdf = new ReportPdf(out, 'Bakiye Özeti (Balance summary)', ctx)
  const cols = (label: string, count: string, amount: string, fee: string, net: string) => [
    { text: label, x: MARGIN, width: 200 },
    { text: count, x: 245, width: 50, right: true },
    { text: amount, x: 300, width: 80, right: true },
    { text: fee, x: 385, width: 70, right: true },
    { text: net, x: 460, width: 95, right: true },
  ]
  pdf.row(cols('', 'Adet', 'Tutar (TRY)', 'Komisyon', 'Net (TRY)'), true)
  pdf.row(cols('Açılış bakiyesi (opening balance)', '', '', '', formatTryGrouped(s.opening)), true)
  let activity = 0
  for (const a of s.activity) {
    activity += a.net
    pdf.row(
      cols(
        TYPE_LABELS[a.type] ?? a.type,
        String(a.count),
        formatTryGrouped(a.amount),
        formatTryGrouped(a.fee),
        formatTryGrouped(a.net),
      ),
    )
  }
  pdf.row(cols('Hareketler toplamı (activity)', '', '', '', formatTryGrouped(activity)), true)
  pdf.row(cols('Kapanış bakiyesi (closing balance)', '', '', '', formatTryGrouped(s.closing)), true)
  pdf.gap()
  pdf.row([
    {
      text: `Açılış + hareketler = kapanış: ${formatTryGrouped(s.opening)} + ${formatTryGrouped(activity)} = ${formatTryGrouped(s.closing)} TRY`,
      x: MARGIN,
      width: 515,
    },
  ])
  await pdf.end()
  return s.activity.length + 2
}

async function writeBalanceSummary(
  deps: Deps,
  row: ExportRow,
  out: ChunkWriter,
  progress: (rows: number) => Promise<void>,
): Promise<number> {
  const ctx = await contextOf(deps, row)
  let seen = 0
  const summary = await balanceSummary(deps.db, await ownerOf(deps, row), ctx.period, (n) => {
    seen += n
    return progress(seen)
  })
  if (row.format === 'csv') return writeSummaryCsv(out, summary, ctx)
  return writeSummaryPdf(out, summary, ctx)
}

function reconciliationRecord(p: PayoutHeader, a: PayoutAllocation): (string | number)[] {
  const t = a.transaction
  return [
    p.payoutId,
    p.status,
    p.createdAt.toISOString(),
    p.amount,
    t.id,
    t.type,
    t.sourceId,
    t.createdAt.toISOString(),
    t.availableOn.toISOString(),
    t.amount,
    t.fee,
    t.net,
    a.settled,
    formatTry(a.settled),
  ]
}

async function writePayoutReconciliation(
  deps: Deps,
  row: ExportRow,
  out: ChunkWriter,
  progress: (rows: number) => Promise<void>,
): Promise<number> {
  const ctx = await contextOf(deps, row)
  const owner = await ownerOf(deps, row)
  let rows = 0
  const pdf =
    row.format === 'pdf'
      ? new ReportPdf(out, 'Ödeme Mutabakatı (Payout reconciliation)', ctx)
      : null
  if (!pdf) out.write(stringify([[...RECONCILIATION_CSV_COLUMNS]], { ...CSV_OPTIONS, bom: true }))
  const cols = (a: string, b: string, c: string, d: string, e: string, f: string) => [
    { text: a, x: MARGIN, width: 122 },
    { text: b, x: 164, width: 78 },
    { text: c, x: 244, width: 118 },
    { text: d, x: 364, width: 60, right: true },
    { text: e, x: 426, width: 52, right: true },
    { text: f, x: 480, width: 75, right: true },
  ]
  for await (const payouts of payoutBatches(deps.db, owner, ctx.period)) {
    for (const p of payouts) {
      let settled = 0
      if (pdf) {
        pdf.gap(4)
        pdf.row(
          [
            {
              text: `Ödeme ${p.payoutId} · ${formatIstanbul(p.createdAt)} · ${p.status} · ${formatTryGrouped(p.amount)} TRY`,
              x: MARGIN,
              width: 515,
            },
          ],
          true,
        )
        pdf.row(
          cols('İşlem (transaction)', 'Tür (type)', 'Kaynak (source)', 'Net', 'Komisyon', 'Ödenen'),
          true,
        )
      }
      for await (const batch of payoutAllocationBatches(deps.db, owner, p)) {
        if (pdf) {
          for (const a of batch) {
            pdf.row(
              cols(
                a.transaction.id,
                a.transaction.type,
                a.transaction.sourceId,
                formatTryGrouped(a.transaction.net),
                formatTryGrouped(a.transaction.fee),
                formatTryGrouped(a.settled),
              ),
            )
          }
        } else {
          out.write(
            stringify(
              batch.map((a) => reconciliationRecord(p, a)),
              CSV_OPTIONS,
            ),
          )
        }
        for (const a of batch) settled += a.settled
        rows += batch.length
        await out.flushFull()
        await progress(rows)
      }
      if (pdf) {
        pdf.row(cols('Toplam (total)', '', '', '', '', formatTryGrouped(settled)), true)
      }
    }
  }
  if (pdf) await pdf.end()
  return rows
}

/** Writes the report `row` asks for into `out`; returns its row count. */
export function writeReport(
  deps: Deps,
  row: ExportRow,
  out: ChunkWriter,
  progress: (rows: number) => Promise<void>,
): Promise<number> {
  if (row.kind === 'payout_reconciliation') {
    return writePayoutReconciliation(deps, row, out, progress)
  }
  return writeBalanceSummary(deps, row, out, progress)
}
