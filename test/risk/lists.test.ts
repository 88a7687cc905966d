// Goal: block lists (CONTRACT.md "Risk"): each of the five lists blocks a charge whose fact
// is on it (402 SVC-RISK-3701 with paymentId; the payment failed with failureCode blocked,
// no ledger legs); values are normalised and checked; items are listed, removed, and are
// the merchant's own. Method: signed HTTP requests against the real app.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { addItem, assertBlocked, customerWithEmail, fingerprintOf } from './_support.ts'

test('a card on the card_fingerprint list is blocked; another card and another merchant are not', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  await addItem(m.client, 'card_fingerprint', await fingerprintOf(m.client, CARDS.frictionless))
  const blocked = await charge(m.client, CARDS.frictionless, 5000)
  const p = await assertBlocked(m.client, blocked, 'list:card_fingerprint')
  assert.equal(p.capturedAmount, 0)
  assert.deepEqual(await legsForPayment(h.deps.db, m.merchantId, p.id), [])
  const events = await eventsForResource(h.deps.db, m.merchantId, p.id)
  assert.deepEqual(
    events.map((e) => e.type),
    ['payment.failed'],
  )
  assert.equal((await charge(m.client, CARDS.debit, 5000, { threeDSecure: false })).res.status, 201)
  assert.equal((await charge(other.client, CARDS.frictionless, 5000)).res.status, 201)
})

test('the email, ip, bin and customer_id lists each block', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const listedCustomer = await customerWithEmail(m.client, 'thief@example.com')
  await addItem(m.client, 'email', 'Thief@Example.com')
  await assertBlocked(
    m.client,
    await charge(m.client, CARDS.frictionless, 5000, { customerId: listedCustomer }),
    'list:email',
  )

  await addItem(m.client, 'ip', '203.0.113.9')
  await assertBlocked(
    m.client,
    await charge(m.client, CARDS.frictionless, 5000, { ip: '203.0.113.9' }),
    'list:ip',
  )
  assert.equal(
    (await charge(m.client, CARDS.frictionless, 5000, { ip: '203.0.113.10' })).res.status,
    201,
  )

  await addItem(m.client, 'bin', '979202')
  await assertBlocked(
    m.client,
    await charge(m.client, CARDS.troy, 5000, { threeDSecure: false }),
    'list:bin',
  )

  const cus = await customerWithEmail(m.client, 'ok@example.com')
  assert.equal(
    (await charge(m.client, CARDS.frictionless, 5000, { customerId: cus })).res.status,
    201,
  )
  await addItem(m.client, 'customer_id', cus)
  await assertBlocked(
    m.client,
    await charge(m.client, CARDS.frictionless, 5000, { customerId: cus }),
    'list:customer_id',
  )
})

test('list items: created, listed newest first, duplicates 409, bad values 400, removed (204) and the merchant’s own', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const a = await addItem(m.client, 'ip', '198.51.100.1', 'chargeback ring')
  assert.match(a.id, /^rli_[0-9a-z]{24}$/)
  await addItem(m.client, 'ip', '198.51.100.2')
  const dup = await m.client.request('POST', '/v1/risk/lists/ip/items', {
    body: { value: '198.51.100.1' },
  })
  assert.equal(dup.status, 409)
  for (const [list, value] of [
    ['ip', 'not-an-ip'],
    ['email', 'nobody'],
    ['bin', '12345'],
    ['card_fingerprint', '4155650100416111'],
    ['customer_id', 'x'],
  ] as const) {
    const bad = await m.client.request<{ code: string }>('POST', `/v1/risk/lists/${list}/items`, {
      body: { value },
    })
    assert.equal(bad.status, 400, `${list} ${value}`)
    assert.equal(bad.body.code, 'SVC-VAL-3001')
  }
  const unknownList = await m.client.request('POST', '/v1/risk/lists/phone/items', {
    body: { value: '1' },
  })
  assert.equal(unknownList.status, 404)

  const page = await m.client.request<{ items: { id: string; note: string | null }[] }>(
    'GET',
    '/v1/risk/lists/ip/items?limit=1',
  )
  assert.equal(page.status, 200)
  assert.equal(page.body.items.length, 1)
  const all = await m.client.request<{ items: { value: string; note: string | null }[] }>(
    'GET',
    '/v1/risk/lists/ip/items',
  )
  assert.deepEqual(
    all.body.items.map((i) => i.value),
    ['198.51.100.2', '198.51.100.1'],
  )
  assert.equal(all.body.items[1]?.note, 'chargeback ring')

  const foreign = await other.client.request('DELETE', `/v1/risk/lists/ip/items/${a.id}`)
  assert.equal(foreign.status, 404)
  const del = await m.client.request('DELETE', `/v1/risk/lists/ip/items/${a.id}`)
  assert.equal(del.status, 204)
  assert.equal(
    (await charge(m.client, CARDS.frictionless, 5000, { ip: '198.51.100.1' })).res.status,
    201,
  )
  const again = await m.client.request('DELETE', `/v1/risk/lists/ip/items/${a.id}`)
  assert.equal(again.status, 404)
})
