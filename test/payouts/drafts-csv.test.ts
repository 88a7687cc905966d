// Goal: a payout draft's CSV (the dashboard's upload) is read as the API's rows: a header naming
// the row fields in any order, comma or semicolon separated, a BOM and blank lines ignored, TRY
// when there is no currency column; an amount that is not an integer stays visible to the row
// check; an unknown column, broken quoting or too many rows is a 400 naming the problem.
// Method: parseDraftCsv directly (pure: no database); the row checks are createDraft's,
// covered by test/payouts/drafts.test.ts and test/dashboard/web-payouts.test.ts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseDraftCsv } from '../../src/modules/payouts/index.ts'
import { AppError } from '../../src/platform/errors.ts'

function refusal(text: string): string {
  try {
    parseDraftCsv(text)
  } catch (error) {
    assert.ok(error instanceof AppError)
    assert.equal(error.status, 400)
    return error.message
  }
  assert.fail('no refusal')
}

test('rows as the API takes them: any column order, comma or semicolon, BOM, TRY by default', () => {
  const rows = parseDraftCsv(
    '\uFEFFholderName;amountMinor;rail;dest\n\nAyşe Yılmaz;15000;fast;TR330006100519786457841326\n',
  )
  assert.deepEqual(rows, [
    {
      rail: 'fast',
      dest: 'TR330006100519786457841326',
      holderName: 'Ayşe Yılmaz',
      amountMinor: 15_000,
      currency: 'TRY',
    },
  ])
  const quoted = parseDraftCsv(
    'rail,dest,holderName,amountMinor,currency\neft,TR00,"Demir, Mehmet",12.5,USD',
  )
  assert.equal(quoted[0]?.holderName, 'Demir, Mehmet')
  assert.equal(quoted[0]?.currency, 'USD', 'a currency column is taken as written')
  assert.ok(Number.isNaN(quoted[0]?.amountMinor), 'not an integer: the row check says so')
})

test('an unknown column, broken quoting or too many rows is a 400 naming the problem', () => {
  assert.match(refusal('rail,iban\nfast,TR00'), /unknown column iban/)
  assert.match(refusal('rail,dest\n"fast,TR00'), /^csv: /)
  const many = [
    'rail,dest,holderName,amountMinor',
    ...Array.from({ length: 1001 }, () => 'fast,TR00,A,1'),
  ]
  assert.match(refusal(many.join('\n')), /at most 1000 rows/)
})
