import { CsvError, parse } from 'csv-parse/sync'
import { validationError } from '../../platform/errors.ts'
import { DRAFT_ROWS_MAX, type DraftRowInput } from './payout-rows.ts'

// A payout draft as a CSV file (the dashboard's upload): a header row naming the columns of
// the API's draft rows — rail, dest, holderName, amountMinor (kuruş), optionally currency —
// in any order, then one payout per line. Parsing only: each row is checked by createDraft
// as the API's JSON rows are, and reported row by row.

export const DRAFT_CSV_COLUMNS = ['rail', 'dest', 'holderName', 'amountMinor', 'currency'] as const
/** Far more than 1000 rows of these columns need. */
export const DRAFT_CSV_CHARS_MAX = 400_000

export function parseDraftCsv(text: string): DraftRowInput[] {
  if (text.length > DRAFT_CSV_CHARS_MAX) {
    throw validationError('csv', `at most ${String(DRAFT_CSV_CHARS_MAX)} characters`)
  }
  let records: Record<string, string>[]
  let named: string[] = []
  try {
    records = parse(text, {
      columns: (header: string[]) => {
        const names = header.map((h) => h.trim())
        const unknown = names.filter((n) => !(DRAFT_CSV_COLUMNS as readonly string[]).includes(n))
        if (unknown.length > 0) {
          throw validationError(
            'csv',
            `unknown column ${unknown.join(', ')}; the columns are ${DRAFT_CSV_COLUMNS.join(', ')}`,
          )
        }
        named = names
        return names
      },
      bom: true,
      skip_empty_lines: true,
      trim: true,
      delimiter: [',', ';'],
      to: DRAFT_ROWS_MAX + 1,
    })
  } catch (error) {
    if (error instanceof CsvError) throw validationError('csv', error.message)
    throw error
  }
  if (records.length > DRAFT_ROWS_MAX) {
    throw validationError('rows', `at most ${String(DRAFT_ROWS_MAX)} rows per draft`)
  }
  // Without a currency column every row is in lira (TRY), the only currency of payouts.
  const currencyNamed = named.includes('currency')
  return records.map((r) => {
    const row: DraftRowInput = {}
    if (r['rail']) row.rail = r['rail']
    if (r['dest']) row.dest = r['dest']
    if (r['holderName']) row.holderName = r['holderName']
    if (!currencyNamed) row.currency = 'TRY'
    else if (r['currency']) row.currency = r['currency']
    const amount = r['amountMinor']
    // Anything but an integer becomes NaN, which the row's report calls "not an integer".
    if (amount) row.amountMinor = /^-?\d{1,16}$/.test(amount) ? Number(amount) : Number.NaN
    return row
  })
}
