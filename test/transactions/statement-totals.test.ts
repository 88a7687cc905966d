// Goal: statements count only money that moved (issue 22 §5). A declined charge and a voided
// authorization bear no commission and no net, on the transaction detail, the payment, the
// CSV rows and the PDF statement, and no total adds their amounts; an open authorization is
// listed with the commission its capture would post but is not totalled either.
// Method: one success, one decline, one voided authorization and one open authorization made
// through the signed API next to each other; the detail, the payment, the list, a CSV export
// (parsed with csv-parse) and a PDF statement (read back with pdftotext) are checked to the
// kuruş against the success alone.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'csv-parse/sync'
import { signedHeaders } from '../../sdk/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { listAll, pay } from './_support.ts'

interface Money {
  status: string
  amount: number
  commission: number
  netAmount: number
}

// The default pricing (CONTRACT: 249 bps + 25 kuruş for one installment), half-up.
const SUCCESS = { amount: 10_000, commission: 274, net: 9_726 }
const OPEN_AUTHORIZATION = { amount: 2_000, commission: 75, net: 1_925 }

async function exportFile(h: TestApp, m: TestMerchant, format: 'csv' | 'pdf'): Promise<Buffer> {
  const created = await m.client.request<{ exportId: string }>('POST', '/v1/transactions/exports', {
    body: { format },
  })
  assert.equal(created.status, 202, JSON.stringify(created.body))
  const ran = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(ran.status, 200)
  const path = `/v1/transactions/exports/${created.body.exportId}/download`
  const headers = signedHeaders(m, 'GET', path, '', h.clock.now().toISOString())
  const res = await fetch(h.url + path, { headers: { ...headers } })
  assert.equal(res.status, 200)
  return Buffer.from(await res.arrayBuffer())
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0)

test('failed and voided payments have zero commission and net, and no total counts them', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Ekstre Deneme A.Ş.' })
  const success = await pay(m.client, SUCCESS.amount)
  const declined = await pay(m.client, 5_000, { card: CARDS.declined })
  const voided = await pay(m.client, 3_000, { capture: false })
  const void_ = await m.client.request('POST', `/v1/payments/${voided}/void`, { body: {} })
  assert.equal(void_.status, 200, JSON.stringify(void_.body))
  const open = await pay(m.client, OPEN_AUTHORIZATION.amount, { capture: false })

  // Transaction detail and the payment itself.
  const expected: Record<string, Omit<Money, 'amount'>> = {
    [success]: { status: 'captured', commission: SUCCESS.commission, netAmount: SUCCESS.net },
    [declined]: { status: 'failed', commission: 0, netAmount: 0 },
    [voided]: { status: 'voided', commission: 0, netAmount: 0 },
    [open]: {
      status: 'authorized',
      commission: OPEN_AUTHORIZATION.commission,
      netAmount: OPEN_AUTHORIZATION.net,
    },
  }
  for (const [id, want] of Object.entries(expected)) {
    for (const path of [`/v1/transactions/${id}`, `/v1/payments/${id}`]) {
      const res = await m.client.request<Money>('GET', path)
      assert.equal(res.status, 200, path)
      assert.deepEqual(
        { status: res.body.status, commission: res.body.commission, netAmount: res.body.netAmount },
        want,
        path,
      )
    }
  }

  // The list: every attempt is listed, with its own status.
  const listed = await listAll(m.client, {})
  assert.deepEqual(Object.fromEntries(listed.map((i) => [i.id, [i.status, i.amount]])), {
    [success]: ['captured', 10_000],
    [declined]: ['failed', 5_000],
    [voided]: ['voided', 3_000],
    [open]: ['authorized', 2_000],
  })

  // CSV: rows to the kuruş, and the column totals a spreadsheet makes.
  const rows: Record<string, string>[] = parse(await exportFile(h, m, 'csv'), {
    bom: true,
    columns: true,
    delimiter: ';',
  })
  assert.equal(rows.length, 4)
  const row = (id: string) => rows.find((r) => r['paymentId'] === id)!
  for (const id of [declined, voided]) {
    assert.equal(row(id)['commissionMinor'], '0', id)
    assert.equal(row(id)['commission'], '0,00', id)
    assert.equal(row(id)['netAmountMinor'], '0', id)
    assert.equal(row(id)['netAmount'], '0,00', id)
  }
  assert.equal(row(success)['commissionMinor'], String(SUCCESS.commission))
  assert.equal(row(success)['commission'], '2,74')
  assert.equal(row(success)['netAmountMinor'], String(SUCCESS.net))
  assert.equal(row(success)['netAmount'], '97,26')
  const moved = rows.filter((r) => r['status'] === 'captured' || r['status'] === 'refunded')
  assert.equal(sum(moved.map((r) => Number(r['amountMinor']))), SUCCESS.amount)
  assert.equal(sum(moved.map((r) => Number(r['commissionMinor']))), SUCCESS.commission)
  assert.equal(sum(moved.map((r) => Number(r['netAmountMinor']))), SUCCESS.net)
  const notMoved = rows.filter((r) => r['status'] === 'failed' || r['status'] === 'voided')
  assert.equal(sum(notMoved.map((r) => Number(r['commissionMinor']))), 0)
  assert.equal(sum(notMoved.map((r) => Number(r['netAmountMinor']))), 0)

  // PDF: the totals row holds the success's figures only.
  const dir = mkdtempSync(join(tmpdir(), 'kurus-totals-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const pdf = join(dir, 'statement.pdf')
  writeFileSync(pdf, await exportFile(h, m, 'pdf'))
  const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' })
  const totals = text.split('\n').find((line) => line.includes('Toplam'))
  assert.ok(totals, text)
  assert.deepEqual(
    totals.match(/\d{1,3}(?:\.\d{3})*,\d{2}/g),
    ['100,00', '2,74', '97,26', '0,00'],
    `totals row: ${totals}`,
  )
  assert.match(totals, /4 işlem/, 'every listed attempt is counted as a row')
  assert.match(totals, /1 tahsil/, 'one of them moved money')
  // Each row of the table shows the same figures as the detail.
  const line = (id: string) => text.split('\n').find((l) => l.includes(id)) ?? ''
  assert.deepEqual(line(declined).match(/\d{1,3}(?:\.\d{3})*,\d{2}/g), [
    '50,00',
    '0,00',
    '0,00',
    '0,00',
  ])
  assert.deepEqual(line(voided).match(/\d{1,3}(?:\.\d{3})*,\d{2}/g), [
    '30,00',
    '0,00',
    '0,00',
    '0,00',
  ])
  assert.deepEqual(line(success).match(/\d{1,3}(?:\.\d{3})*,\d{2}/g), [
    '100,00',
    '2,74',
    '97,26',
    '0,00',
  ])
})
