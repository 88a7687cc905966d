import { stringify } from 'csv-stringify/sync'
import type { PaymentSearchEntry } from '../payments/index.ts'
import type { ChunkWriter } from './chunk-writer.ts'
import { formatIstanbul, formatTry, neutraliseFormula } from './export-format.ts'
import type { StatementRenderer } from './export-pdf.ts'

// The CSV statement, made for Excel as Turkish merchants use it: UTF-8 with a byte-order
// mark (without it Excel reads UTF-8 as Windows-1254 and breaks ş, ğ, ı, İ), fields separated
// by ';' (the list separator of Turkish Windows, whose decimal separator is ','), amounts as
// "1234,56" for people and as an integer kuruş column for programs.

export const CSV_DELIMITER = ';'

export const CSV_COLUMNS = [
  'paymentId',
  'transactionId',
  'createdAt',
  'createdAtIstanbul',
  'storeId',
  'status',
  'method',
  'customerId',
  'cardMask',
  'installmentCount',
  'currency',
  'amount',
  'amountMinor',
  'commission',
  'commissionMinor',
  'netAmount',
  'netAmountMinor',
  'refundAmount',
  'refundAmountMinor',
  'refundsCount',
  'chargebacksCount',
] as const

export function csvRecord(e: PaymentSearchEntry): (string | number)[] {
  return [
    e.id,
    e.transactionId,
    e.createdAt.toISOString(),
    formatIstanbul(e.createdAt),
    e.storeId,
    e.status,
    e.method,
    e.customerId ?? '',
    e.cardMask ?? '',
    e.installmentCount,
    e.currency,
    formatTry(e.amount),
    e.amount,
    formatTry(e.commission),
    e.commission,
    formatTry(e.netAmount),
    e.netAmount,
    formatTry(e.refundAmount),
    e.refundAmount,
    e.refundsCount,
    // Chargeback records come from the disputes module (not wired yet): see README.
    0,
  ]
}

// The one place CSV cells are written: every string cell, header included, goes through the
// formula guard here, so a column added later cannot forget it. Numbers are written as digits.
const CSV_OPTIONS = {
  delimiter: CSV_DELIMITER,
  record_delimiter: 'windows',
  cast: { string: (value: string) => neutraliseFormula(value) },
} as const

export class CsvStatement implements StatementRenderer {
  private readonly out: ChunkWriter

  constructor(out: ChunkWriter) {
    this.out = out
  }

  begin(): void {
    this.out.write(stringify([[...CSV_COLUMNS]], { ...CSV_OPTIONS, bom: true }))
  }

  rows(batch: PaymentSearchEntry[]): void {
    this.out.write(stringify(batch.map(csvRecord), CSV_OPTIONS))
  }

  // Nothing trails the rows: no totals line, so the file stays one record per payment.
  async end(): Promise<void> {}
}
