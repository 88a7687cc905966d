// Goal: no cell of an exported CSV starts a spreadsheet formula (issue 22 §4), including values
// that hide the trigger behind leading whitespace (space, tab, NBSP, ideographic space,
// zero-width characters) or write it in full-width or small forms (＝ ＋ － ＠ ﹦ …), which Excel
// and LibreOffice still evaluate.
// Method: payments whose merchant-chosen order number (transactionId, the free text the CSV
// carries) holds such values, through the signed API; the export is built by the job
// (POST /v1/sandbox/reconcile), downloaded and parsed with csv-parse; every cell of the file is
// then checked against the trigger rule, and each dangerous value must come back as `'` + value.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { parse } from 'csv-parse/sync'
import { signedHeaders } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { listAll, pay } from './_support.ts'

// A cell is dangerous when, after any run of whitespace or invisible format characters, its
// first character is a formula trigger in any width (NFKC folds ＝ ﹦ ⁼ to =, and so on).
function startsFormula(cell: string): boolean {
  const rest = cell.replace(/^[\s\p{Cf}]+/u, '')
  const first = String.fromCodePoint(rest.codePointAt(0) ?? 0x20).normalize('NFKC')
  return /^[=+\-@]/.test(first) || /^[\t\r\n]/.test(cell)
}

const DANGEROUS = [
  '=1+1',
  ' =1+1',
  '   =HYPERLINK("http://x.example","y")',
  '\t=1+1',
  '\r=1+1',
  '\n@SUM(A1)',
  '\u00a0=1+1',
  '\u00a0\u00a0+1',
  '\u3000=1+1',
  '\u2003-1+1',
  '\u200b=1+1',
  '\ufeff=1+1',
  '＝1+1',
  ' ＝1+1',
  '＋1',
  '－1',
  '＠SUM(A1)',
  '﹦1+1',
  '﹢1',
  '﹣1',
  '﹫x',
  '\t',
]

const SAFE = ['sipariş-ğüşıöçİ', 'a=b', '1-2', 'x @ y', 'order 7']

test('CSV cells never start a formula, whatever hides the trigger', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  // transactionIds are unique per merchant: each value gets a unique, harmless tail.
  for (const v of [...DANGEROUS, ...SAFE]) {
    await pay(m.client, 1_000, { transactionId: `${v}|${randomUUID().slice(0, 8)}` })
  }
  // The order numbers as stored, by payment (PGlite's text decoding drops a leading U+FEFF).
  const values = new Map((await listAll(m.client, {})).map((i) => [i.id, i.transactionId]))

  const created = await m.client.request<{ exportId: string }>('POST', '/v1/transactions/exports', {
    body: { format: 'csv' },
  })
  assert.equal(created.status, 202)
  const ran = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(ran.status, 200)
  const path = `/v1/transactions/exports/${created.body.exportId}/download`
  const headers = signedHeaders(m, 'GET', path, '', h.clock.now().toISOString())
  const res = await fetch(h.url + path, { headers: { ...headers } })
  assert.equal(res.status, 200)
  const bytes = Buffer.from(await res.arrayBuffer())

  const records: string[][] = parse(bytes, { bom: true, delimiter: ';', relax_quotes: false })
  const [header, ...rows] = records
  assert.ok(header)
  assert.equal(rows.length, values.size)
  for (const row of records) {
    for (const cell of row) {
      assert.ok(!startsFormula(cell), `a cell starts a formula: ${JSON.stringify(cell)}`)
    }
  }
  const col = (name: string) => header.indexOf(name)
  for (const row of rows) {
    const original = values.get(row[col('paymentId')]!)
    assert.ok(original !== undefined)
    const cell = row[col('transactionId')]!
    if (startsFormula(original)) {
      assert.equal(cell, `'${original}`, 'neutralised with a leading apostrophe, text kept')
    } else {
      assert.equal(cell, original, 'harmless text is written as it is')
    }
  }
  assert.ok(
    [...values.values()].filter(startsFormula).length >= DANGEROUS.length,
    'every dangerous sample is dangerous by the rule',
  )
})
