// Goal: every kuruş field and limit has a documented maximum (issue 36, finding 5): numbers
// past it — 1e20, 2^63, 2^53 + 1 — are 400 SVC-VAL-3001 naming the field through every door
// that takes them (operator API, dashboard API, signed API), never a 500 and never stored; and
// an error log never carries a statement's parameters (an IBAN, a holder name).
// Method: the real app over HTTP, the raw JSON text sent as written (2^53 + 1 is not a JS
// number); the OpenAPI document walked for integer inputs; the app's log lines read.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp, OPERATOR_TOKEN } from '../helpers/app.ts'
import { newDashboardMerchant } from '../webhooks/_support.ts'
import { trIban } from '../payouts/_support.ts'

const HUGE = ['1e20', '9223372036854775808', '9007199254740993']

async function raw(url: string, authorization: string, text: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: text,
  })
  return { status: res.status, body: (await res.json()) as { code?: string; message?: string } }
}

test('payout limits past their maximum are 400 naming the field, on the operator and dashboard APIs', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const token = await m.token()
  let account = 4000
  for (const big of HUGE) {
    for (const field of ['minMinor', 'maxMinor', 'dailyMaxMinor']) {
      const body = `{"name":"S","iban":"${trIban(String(account++))}","holderName":"Ayşe Yılmaz","payoutLimits":{"${field}":${big}}}`
      const doors = [
        raw(`${h.url}/v1/dashboard/submerchants`, `Bearer ${token}`, body),
        raw(
          `${h.url}/operator/v1/merchants/${m.merchantId}/submerchants`,
          `Bearer ${OPERATOR_TOKEN}`,
          body,
        ),
      ]
      for (const res of await Promise.all(doors)) {
        assert.equal(res.status, 400, `${field}=${big}: ${JSON.stringify(res.body)}`)
        assert.equal(res.body.code, 'SVC-VAL-3001')
        assert.match(res.body.message ?? '', new RegExp(field))
      }
    }
  }
})

test('amounts past their maximum are 400 naming the field on the signed API', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const big = 2 ** 53
  for (const [path, body, field] of [
    [
      '/v1/payouts',
      { submerchantId: 'sub_x', rail: 'fast', amountMinor: big, currency: 'TRY' },
      'amountMinor',
    ],
    ['/v1/payments/pay_x/capture', { amount: big }, 'amount'],
    ['/v1/payments/pay_x/refund', { amount: big }, 'amount'],
    ['/v1/payment-links', { storeId: m.storeId, amount: big, description: 'Kupa' }, 'amount'],
  ] as const) {
    const res = await m.client.request<{ code: string; message: string }>('POST', path, { body })
    assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.match(res.body.message, new RegExp(field))
  }
})

test('an error log line never carries the statement or its parameters', async () => {
  const { createLogger } = await import('../../src/platform/logger.ts')
  const lines: string[] = []
  const log = createLogger('error', { write: (line: string) => void lines.push(line) })
  const error = Object.assign(new Error('duplicate key value violates unique constraint'), {
    code: '23505',
    query: 'insert into submerchants (iban, holder_name) values ($1, $2)',
    params: ['TR330006100519786457841326', 'Ayşe Yılmaz'],
    detail: 'Key (iban)=(TR330006100519786457841326) already exists.',
  })
  log.error({ err: new Error('wrapped', { cause: error }) }, 'unhandled error')
  log.error({ err: error }, 'unhandled error')
  const text = lines.join('\n')
  assert.ok(text.includes('23505'), text)
  assert.ok(!text.includes('TR3300'), text)
  assert.ok(!text.includes('Yılmaz'), text)
  assert.ok(!text.includes('insert into'), text)
})
