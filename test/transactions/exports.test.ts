// Goal: statement exports go queued → ready through the job, hold exactly the filter's rows,
// come back as a CSV that parses to the same rows (BOM, Turkish text, integer-exact amounts) and
// a PDF that renders, stay per merchant, and expire after 7 days.
// Method: signed HTTP; the build job and the expiry reconciler run via POST /v1/sandbox/reconcile;
// the PDF is checked with poppler (pdftoppm renders page 1, pdftotext/pdfinfo read it back).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'csv-parse/sync'
import { signedHeaders } from '../../sdk/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { customer, listAll, pay, type ListItem } from './_support.ts'

interface ExportBody {
  exportId: string
  status: string
  format: string
  downloadUrl: string
  rowCount: number
  filters: Record<string, unknown>
  expiresAt: string | null
}

interface ErrorBody {
  code: string
}

async function requestExport(m: TestMerchant, body: object): Promise<ExportBody> {
  const res = await m.client.request<ExportBody>('POST', '/v1/transactions/exports', { body })
  assert.equal(res.status, 202, JSON.stringify(res.body))
  assert.match(res.body.exportId, /^exp_/)
  assert.equal(res.body.status, 'queued')
  return res.body
}

async function reconcile(m: TestMerchant): Promise<void> {
  const res = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(res.status, 200, JSON.stringify(res.body))
}

async function exportStatus(m: TestMerchant, id: string): Promise<ExportBody> {
  const res = await m.client.request<ExportBody>('GET', `/v1/transactions/exports/${id}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

/** A signed download read as raw bytes (the SDK decodes text, which would drop the BOM). */
async function download(h: TestApp, m: TestMerchant, id: string) {
  const path = `/v1/transactions/exports/${id}/download`
  const headers = signedHeaders(m, 'GET', path, '', h.clock.now().toISOString())
  const res = await fetch(h.url + path, { headers: { ...headers } })
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) }
}

function pdfTool(tool: string, args: string[]): string {
  return execFileSync(tool, args, { encoding: 'utf8' })
}

type CsvRow = Record<string, string>

function parseCsv(bytes: Buffer): CsvRow[] {
  return parse(bytes, { bom: true, columns: true, delimiter: ';', skip_empty_lines: true })
}

function tryText(kurus: number): string {
  return `${Math.trunc(kurus / 100)},${String(kurus % 100).padStart(2, '0')}`
}

test('a CSV export parses back to the listed rows: BOM, Turkish text, exact amounts', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Kuruş Deneme Mağazası Ltd. Şti.' })
  const ayse = await customer(m.client, 'Ayşe Yılmaz')
  const ids = [
    await pay(m.client, 123_456, { transactionId: `sipariş-ğüşıöçİŞĞ-${randomUUID()}` }),
    await pay(m.client, 100, { customerId: ayse }),
    await pay(m.client, 10_000_000_000),
    await pay(m.client, 9_999, { transactionId: `=HYPERLINK("x")-${randomUUID()}` }),
    await pay(m.client, 5_005, { card: CARDS.declined }),
  ]
  const refunded = ids[0]!
  const refund = await m.client.request('POST', `/v1/payments/${refunded}/refund`, {
    body: { amount: 3_456 },
  })
  assert.equal(refund.status, 200)

  const created = await requestExport(m, { format: 'csv' })
  const early = await download(h, m, created.exportId)
  assert.equal(early.status, 409, 'not ready before the job ran')
  assert.equal((JSON.parse(early.bytes.toString()) as ErrorBody).code, 'SVC-STATE-3401')
  assert.equal((await exportStatus(m, created.exportId)).status, 'queued')

  await reconcile(m)
  const ready = await exportStatus(m, created.exportId)
  assert.equal(ready.status, 'ready')
  assert.equal(ready.rowCount, 5)
  assert.equal(ready.downloadUrl, `/v1/transactions/exports/${created.exportId}/download`)
  assert.ok(ready.expiresAt)

  const file = await download(h, m, created.exportId)
  assert.equal(file.status, 200)
  assert.equal(file.headers.get('content-type'), 'text/csv; charset=utf-8')
  assert.equal(
    file.headers.get('content-disposition'),
    `attachment; filename="transactions-${created.exportId}.csv"`,
  )
  assert.deepEqual([...file.bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 byte-order mark')
  assert.equal(Number(file.headers.get('content-length')), file.bytes.length)

  const rows = parseCsv(file.bytes)
  const listed = await listAll(m.client, {})
  assert.deepEqual(
    rows.map((r) => r['paymentId']),
    listed.map((i) => i.id),
    'same rows, same order as the list',
  )
  const byId = new Map<string, ListItem>(listed.map((i) => [i.id, i]))
  for (const row of rows) {
    const item = byId.get(row['paymentId']!)!
    const minor = Number(row['amountMinor'])
    assert.equal(minor, item.amount)
    assert.equal(row['amount'], tryText(minor))
    if (row['status'] === 'failed') {
      // A decline moved no money: no commission, no net (issue 22 §5).
      assert.equal(row['commissionMinor'], '0')
      assert.equal(row['netAmountMinor'], '0')
    } else {
      assert.equal(
        Number(row['netAmountMinor']) + Number(row['commissionMinor']),
        minor,
        'net + commission = amount',
      )
    }
    assert.equal(row['netAmount'], tryText(Number(row['netAmountMinor'])))
    assert.equal(row['status'], item.status)
    assert.equal(row['createdAt'], item.createdAt)
    assert.equal(row['currency'], 'TRY')
    assert.equal(row['refundsCount'], String(item.refundsCount))
  }
  const turkish = rows.find((r) => r['paymentId'] === refunded)!
  assert.match(turkish['transactionId']!, /^sipariş-ğüşıöçİŞĞ-/, 'Turkish characters intact')
  assert.equal(turkish['refundAmountMinor'], '3456')
  assert.equal(turkish['refundAmount'], '34,56')
  assert.equal(turkish['amount'], '1234,56')
  const big = rows.find((r) => r['amountMinor'] === '10000000000')!
  assert.equal(big['amount'], '100000000,00')
  assert.equal(rows.find((r) => r['amountMinor'] === '100')!['customerId'], ayse)
  // A formula-looking value gets a leading apostrophe so Excel shows it as text.
  assert.ok(rows.some((r) => r['transactionId']!.startsWith(`'=HYPERLINK("x")-`)))
  assert.equal(rows.find((r) => r['amountMinor'] === '5005')!['status'], 'failed')
})

test('export row counts equal the list count for every filter', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const ayse = await customer(m.client, 'Ayşe')
  const a = await pay(m.client, 1_000, { customerId: ayse })
  await pay(m.client, 2_000, { capture: false })
  await pay(m.client, 3_000, { card: CARDS.declined })
  const boundary = new Date(h.clock.now().getTime() + 60_000)
  h.clock.advance(120_000)
  await pay(m.client, 4_000, { customerId: ayse })
  await pay(m.client, 5_000)

  const cases: Record<string, string | number>[] = [
    {},
    { status: 'captured' },
    { status: 'authorized' },
    { status: 'failed' },
    { storeId: m.storeId },
    { storeId: 'sto_other' },
    { customerId: ayse },
    { from: boundary.toISOString() },
    { to: boundary.toISOString() },
    { amountMin: 2_000 },
    { amountMax: 3_000 },
    { amountMin: 2_000, amountMax: 4_000, status: 'captured' },
    { customerId: ayse, from: boundary.toISOString() },
  ]
  // A merchant may have 5 exports queued or building at once (KURUS_EXPORTS_QUEUED_MAX):
  // request them in groups and let the job build each group.
  const exports = []
  for (const [i, filters] of cases.entries()) {
    exports.push({ filters, created: await requestExport(m, { format: 'csv', filters }) })
    if (i % 5 === 4) await reconcile(m)
  }
  const single = await requestExport(m, { format: 'pdf', filters: { paymentId: a } })
  await reconcile(m)
  for (const { filters, created } of exports) {
    const expected = (await listAll(m.client, filters)).map((i) => i.id)
    const done = await exportStatus(m, created.exportId)
    assert.equal(done.status, 'ready', JSON.stringify(filters))
    assert.equal(done.rowCount, expected.length, JSON.stringify(filters))
    assert.deepEqual(done.filters, filters)
    const rows = parseCsv((await download(h, m, created.exportId)).bytes)
    assert.deepEqual(
      rows.map((r) => r['paymentId']),
      expected,
      JSON.stringify(filters),
    )
  }
  assert.equal((await exportStatus(m, single.exportId)).rowCount, 1)
})

test('a PDF statement renders, repeats its header on every page and ends with totals', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Kuruş Deneme Mağazası Ltd. Şti.' })
  // Enough rows for two pages (about 38 rows fit on the first).
  const amounts = Array.from({ length: 45 }, (_, i) => 1_000 + i * 111)
  for (let i = 0; i < amounts.length; i += 5) {
    await Promise.all(
      amounts.slice(i, i + 5).map((amount, k) =>
        pay(m.client, amount, {
          transactionId: k === 0 ? `sipariş-ğış-${randomUUID()}` : `ord-${randomUUID()}`,
        }),
      ),
    )
  }
  const created = await requestExport(m, {
    format: 'pdf',
    filters: { status: 'captured', amountMin: 1_000 },
  })
  assert.equal((await download(h, m, created.exportId)).status, 409)
  await reconcile(m)
  assert.equal((await exportStatus(m, created.exportId)).rowCount, 45)
  const file = await download(h, m, created.exportId)
  assert.equal(file.status, 200)
  assert.equal(file.headers.get('content-type'), 'application/pdf')
  assert.match(file.headers.get('content-disposition') ?? '', /^attachment; filename=".*\.pdf"$/)
  assert.equal(file.bytes.subarray(0, 5).toString(), '%PDF-')

  const dir = mkdtempSync(join(tmpdir(), 'kurus-pdf-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const pdf = join(dir, 'statement.pdf')
  writeFileSync(pdf, file.bytes)
  pdfTool('pdftoppm', ['-png', '-r', '50', '-f', '1', '-l', '1', pdf, join(dir, 'page')])
  const png = readFileSync(join(dir, 'page-1.png'))
  assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'page 1 renders to a PNG')
  assert.ok(png.length > 2_000, 'the rendered page is not blank')

  const pages = Number(/Pages:\s+(\d+)/.exec(pdfTool('pdfinfo', [pdf]))?.[1])
  assert.ok(pages >= 2, `expected a page break, got ${pages} page(s)`)
  const page1 = pdfTool('pdftotext', ['-f', '1', '-l', '1', '-layout', pdf, '-'])
  assert.match(page1, /İşlem Ekstresi/)
  assert.match(page1, /Kuruş Deneme Mağazası Ltd\. Şti\./, 'merchant name with Turkish letters')
  assert.match(page1, /Durum: captured/)
  assert.match(page1, /Tutar ≥ 10,00 TRY/)
  assert.match(page1, /sipariş-ğış-/)
  const last = pdfTool('pdftotext', ['-f', String(pages), '-l', String(pages), '-layout', pdf, '-'])
  assert.match(last, /Ödeme No/, 'the table header repeats on the last page')
  assert.match(last, new RegExp(`Sayfa ${pages}`))
  const total = amounts.reduce((s, x) => s + x, 0)
  const grouped = tryText(total).replace(/\B(?=(\d{3})+(?!\d))/g, '.')
  assert.match(last, /Toplam\s+45 işlem/)
  assert.ok(last.includes(grouped), `totals show ${grouped}`)
  const all = pdfTool('pdftotext', ['-layout', pdf, '-'])
  assert.equal(all.match(/pay_[0-9a-z]{24}/g)?.length, 45, 'every payment once')
})

test("another merchant's export is 404; bad requests are 400", async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  await pay(m.client, 1_000)
  const created = await requestExport(m, { format: 'csv' })
  await reconcile(m)
  for (const path of [
    `/v1/transactions/exports/${created.exportId}`,
    `/v1/transactions/exports/${created.exportId}/download`,
    '/v1/transactions/exports/exp_unknown',
  ]) {
    const res = await other.client.request<ErrorBody>('GET', path)
    assert.equal(res.status, 404, path)
    assert.equal(res.body.code, 'SVC-RES-3301')
  }
  const bad: object[] = [
    {},
    { format: 'xlsx' },
    { format: 'csv', filters: { method: 'qr' } },
    { format: 'csv', filters: { status: 'paid' } },
    { format: 'csv', filters: { amountMin: 5, amountMax: 1 } },
    { format: 'csv', filters: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' } },
    { format: 'csv', filters: { from: 'last week' } },
    { format: 'csv', extra: true },
  ]
  for (const body of bad) {
    const res = await m.client.request<ErrorBody>('POST', '/v1/transactions/exports', { body })
    assert.equal(res.status, 400, JSON.stringify(body))
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  // An Idempotency-Key replay returns the same export instead of building another.
  const key = randomUUID()
  const first = await m.client.request<ExportBody>('POST', '/v1/transactions/exports', {
    body: { format: 'pdf' },
    idempotencyKey: key,
  })
  const again = await m.client.request<ExportBody>('POST', '/v1/transactions/exports', {
    body: { format: 'pdf' },
    idempotencyKey: key,
  })
  assert.equal(again.status, 202)
  assert.equal(again.body.exportId, first.body.exportId)
})

test('ready files expire after 7 days: status expired, download 409', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await pay(m.client, 1_000)
  const created = await requestExport(m, { format: 'csv' })
  await reconcile(m)
  assert.equal((await download(h, m, created.exportId)).status, 200)
  h.clock.advance(6 * 24 * 3_600_000)
  await reconcile(m)
  assert.equal((await exportStatus(m, created.exportId)).status, 'ready', 'kept for 7 days')
  h.clock.advance(24 * 3_600_000 + 60_000)
  await reconcile(m)
  assert.equal((await exportStatus(m, created.exportId)).status, 'expired')
  const gone = await download(h, m, created.exportId)
  assert.equal(gone.status, 409)
  assert.equal((JSON.parse(gone.bytes.toString()) as ErrorBody).code, 'SVC-STATE-3401')
})
