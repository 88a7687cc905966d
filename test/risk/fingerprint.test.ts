// Goal: the card fingerprint of CONTRACT.md "Risk": a keyed hash of the card number, equal
// for the same card within a merchant (on tokens, payments and saved cards), different for
// another card and across merchants, and never the card number itself.
// Method: signed HTTP requests against the real app.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

interface TokenBody {
  cardToken: string
  card: { fingerprint: string }
}

async function tokenizeFull(client: import('../../sdk/index.ts').Kurus, cardNumber: string) {
  const res = await client.request<TokenBody>('POST', '/v1/cards/tokens', {
    body: { cardNumber, expMonth: 12, expYear: 2030, cvc: '123', holderName: 'Ayşe Yılmaz' },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

test('the fingerprint is equal for the same card within a merchant and differs across merchants', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const a1 = await tokenizeFull(a.client, CARDS.frictionless)
  const a2 = await tokenizeFull(a.client, '4155 6501 0041 6111')
  const aOther = await tokenizeFull(a.client, CARDS.challenge)
  const b1 = await tokenizeFull(b.client, CARDS.frictionless)
  assert.match(a1.card.fingerprint, /^[A-Za-z0-9_-]{43}$/)
  assert.notEqual(a1.cardToken, a2.cardToken)
  assert.equal(a1.card.fingerprint, a2.card.fingerprint)
  assert.notEqual(a1.card.fingerprint, aOther.card.fingerprint)
  assert.notEqual(a1.card.fingerprint, b1.card.fingerprint)
  assert.equal(a1.card.fingerprint.includes(CARDS.frictionless), false)
})

test('payments and saved cards carry their token fingerprint', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res, cardToken } = await charge(m.client, CARDS.frictionless, 5000)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const fp = (await tokenizeFull(m.client, CARDS.frictionless)).card.fingerprint
  assert.deepEqual(res.body['card'], { fingerprint: fp })
  const got = await m.client.request<{ card: { fingerprint: string } }>(
    'GET',
    `/v1/payments/${res.body.paymentId}`,
  )
  assert.deepEqual(got.body.card, { fingerprint: fp })

  const cus = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: 'c-1', email: 'ayse@example.com', name: 'Ayşe' },
  })
  assert.equal(cus.status, 201, JSON.stringify(cus.body))
  const saved = await tokenizeFull(m.client, CARDS.frictionless)
  const attached = await m.client.request<{ card: { fingerprint: string } }>(
    'POST',
    `/v1/customers/${cus.body.id}/cards`,
    { body: { cardToken: saved.cardToken } },
  )
  assert.equal(attached.status, 201, JSON.stringify(attached.body))
  assert.deepEqual(attached.body.card, { fingerprint: fp })
  const list = await m.client.request<{ items: { card: { fingerprint: string } }[] }>(
    'GET',
    `/v1/customers/${cus.body.id}/cards`,
  )
  assert.deepEqual(list.body.items[0]?.card, { fingerprint: fp })
  assert.ok(cardToken)
})
