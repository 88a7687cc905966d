// Goal: the dashboard's forms apply the API's input rules (issue 36, finding 7): bidi controls
// (U+202E), control characters (BEL; a newline where the API takes one line) and several
// addresses in buyerEmail are refused in the invoice form (buyer name, buyer email, notes, line
// names) and the payment-link form (description), exactly where the signed API refuses the same
// value, because the page checks the use case's input against the API route's own schema
// (page-rules.ts). Nothing is made, nothing is mailed.
// Method: the real app over HTTP; each bad value sent through the page and through the signed
// API; the API's lists read back to prove nothing was made.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { createSubscription, customerWithCard, getSub } from '../subscriptions/_support.ts'
import {
  alertOf,
  apiPayment,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  type DashboardMerchant,
} from './_web.ts'

const RLO = '\u202e'
const LINE = { line0Name: 'Roman', line0Qty: '1', line0Price: '125,50' }

async function count(m: DashboardMerchant, path: string): Promise<number> {
  const res = await m.client.request<{ items: unknown[] }>(
    'GET',
    path.includes('rules') ? path : `${path}?limit=100`,
  )
  assert.equal(res.status, 200)
  return res.body.items.length
}

const invoiceCases: [string, Record<string, string>, Record<string, unknown>][] = [
  ['bidi in the buyer name', { buyerName: `Ayşe ${RLO}gpj.exe` }, { buyerName: `Ayşe ${RLO}x` }],
  ['bidi in the notes', { notes: `Teşekkürler ${RLO}01` }, { notes: `Teşekkürler ${RLO}01` }],
  ['bidi in a line name', { line0Name: `Roman${RLO}` }, { lineName: `Roman${RLO}` }],
  ['BEL in a line name', { line0Name: 'Roman\u0007' }, { lineName: 'Roman\u0007' }],
  ['a newline in the buyer name', { buyerName: 'Ayşe\nYılmaz' }, { buyerName: 'Ayşe\nYılmaz' }],
  [
    'two addresses in buyerEmail',
    { buyerEmail: 'a@example.com, b@example.com' },
    { buyerEmail: 'a@example.com, b@example.com' },
  ],
]

test('the invoice form refuses what the API refuses: bidi, control characters, two emails', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const form = await web.get('/dashboard/invoices/new')
  for (const [what, fields, api] of invoiceCases) {
    const page = await web.submit(
      '/dashboard/invoices',
      { storeId: m.storeId, ...LINE, ...fields },
      form,
    )
    assert.equal(page.status, 400, `page, ${what}: ${page.text.slice(0, 200)}`)
    assert.ok(alertOf(page.text), `page, ${what}: the form says why`)

    const { lineName, ...rest } = api
    const body = {
      storeId: m.storeId,
      currency: 'TRY',
      amountMinor: 12_550,
      lineItems: [
        {
          name: typeof lineName === 'string' ? lineName : 'Roman',
          qty: 1,
          unitPriceMinor: 12_550,
          lineTotalMinor: 12_550,
        },
      ],
      ...rest,
    }
    const res = await m.client.request<{ code?: string }>('POST', '/v1/invoices', { body })
    assert.equal(res.status, 400, `API, ${what}: ${JSON.stringify(res.body)}`)
  }
  assert.equal(await count(m, '/v1/invoices'), 0, 'nothing made through either door')

  // The same form with clean values is made (the rules refuse only what they should).
  const ok = await web.submit(
    '/dashboard/invoices',
    {
      storeId: m.storeId,
      ...LINE,
      buyerName: 'Ayşe Yılmaz',
      buyerEmail: 'ayse@example.com',
      notes: 'Teşekkürler',
    },
    form,
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
  assert.equal(await count(m, '/v1/invoices'), 1)
})

test('the payment-link form refuses bidi and control characters in the description, as the API', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const form = await web.get('/dashboard/payment-links/new')
  for (const [what, description] of [
    ['bidi', `Kupa ${RLO}gpj.exe`],
    ['BEL', 'Kupa\u0007'],
    ['a newline', 'Kupa\nİkinci satır'],
  ] as const) {
    const page = await web.submit(
      '/dashboard/payment-links',
      { storeId: m.storeId, amount: '149,90', description },
      form,
    )
    assert.equal(page.status, 400, `page, ${what}: ${page.text.slice(0, 200)}`)
    const res = await m.client.request('POST', '/v1/payment-links', {
      body: { storeId: m.storeId, amount: 14_990, description },
    })
    assert.equal(res.status, 400, `API, ${what}`)
  }
  assert.equal(await count(m, '/v1/payment-links'), 0)
  const ok = await web.submit(
    '/dashboard/payment-links',
    { storeId: m.storeId, amount: '149,90', description: 'El yapımı kupa' },
    form,
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
})

test('the block-list form refuses what the API refuses (bidi, control characters in the note)', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const form = await web.get('/dashboard/risk/lists/ip')
  for (const [what, fields] of [
    ['bidi in the note', { value: '198.51.100.9', note: `şüpheli ${RLO}gpj.exe` }],
    ['BEL in the note', { value: '198.51.100.9', note: 'şüpheli\u0007' }],
    ['bidi in the value', { value: `198.51.100.9${RLO}` }],
  ] as const) {
    const page = await web.submit('/dashboard/risk/lists/ip/items', fields, form)
    assert.equal(page.status, 400, `page, ${what}: ${page.text.slice(0, 200)}`)
    const res = await m.client.request('POST', '/v1/risk/lists/ip/items', { body: fields })
    assert.equal(res.status, 400, `API, ${what}`)
  }
  assert.equal(await count(m, '/v1/risk/lists/ip/items'), 0)
  const ok = await web.submit(
    '/dashboard/risk/lists/ip/items',
    { value: '198.51.100.9', note: 'şüpheli' },
    form,
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
})

test('the new-rule form refuses a bidi control in the name, as the API', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const form = await web.get('/dashboard/risk/rules')
  const condition = '{">=": [{"var": "amount"}, 20000]}'
  const name = `Yüksek ${RLO}tutar`
  const page = await web.submit(
    '/dashboard/risk/rules',
    { name, action: 'review', condition },
    form,
  )
  assert.equal(page.status, 400, page.text.slice(0, 200))
  const res = await m.client.request('POST', '/v1/risk/rules', {
    body: { name, action: 'review', condition: JSON.parse(condition) as unknown },
  })
  assert.equal(res.status, 400)
  assert.equal(await count(m, '/v1/risk/rules'), 0)
})

test('the refund form refuses a bidi control in the reason, as the API; nothing is refunded', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 30_000)
  const web = await signedIn(h, m)
  const path = `/dashboard/payments/${paymentId}/refund`
  const reason = `iade ${RLO}gpj.exe`
  const fields = { amount: '100', reason, idempotencyKey: crypto.randomUUID(), confirm: 'yes' }
  const page = await web.submit(path, fields, `/dashboard/payments/${paymentId}`)
  assert.equal(page.status, 400, page.text.slice(0, 300))
  assert.ok(alertOf(page.text), 'the page says what is wrong')
  const api = await m.client.request('POST', `/v1/payments/${paymentId}/refund`, {
    body: { amount: 10_000, reason },
  })
  assert.equal(api.status, 400, 'the API refuses the same reason')
  assert.equal((await apiPayment(m, paymentId))['refundAmount'], 0)
  const ok = await web.submit(
    path,
    { ...fields, reason: 'müşteri istedi', idempotencyKey: crypto.randomUUID() },
    `/dashboard/payments/${paymentId}`,
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
})

test('the subscription cancel form refuses control characters in the reason, as the API', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId, { description: 'Aylık kutu' })
  const web = await signedIn(h, m)
  const path = `/dashboard/subscriptions/${sub.id}/cancel`
  for (const reason of [`pahalı ${RLO}01`, 'pahalı\u0007']) {
    const page = await web.submit(
      path,
      { when: 'now', reason },
      `/dashboard/subscriptions/${sub.id}`,
    )
    assert.equal(page.status, 400, page.text.slice(0, 300))
    const api = await m.client.request('POST', `/v1/subscriptions/${sub.id}/cancel`, {
      body: { atPeriodEnd: false, reason },
    })
    assert.equal(api.status, 400, 'the API refuses the same reason')
  }
  assert.notEqual((await getSub(m, sub.id)).status, 'cancelled')
  const ok = await web.submit(
    path,
    { when: 'now', reason: 'pahalı' },
    `/dashboard/subscriptions/${sub.id}`,
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
  assert.equal((await getSub(m, sub.id)).status, 'cancelled')
})

test('the team-invite form refuses two addresses in one, and a role the table has not', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  for (const fields of [
    { email: 'a@example.com, b@example.com', role: 'viewer' },
    { email: 'c@example.com', role: 'superuser' },
  ]) {
    const page = await web.submit('/dashboard/settings/team/invite', fields, '/dashboard/settings')
    assert.equal(page.status, 400, page.text.slice(0, 300))
  }
  const team = await web.get('/dashboard/settings')
  assert.doesNotMatch(team.text, /[abc]@example\.com/, 'nobody was invited')
})
