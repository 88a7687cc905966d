// Goal: saved cards of a customer: attach (vault binding in the same transaction), the
// default-card rules, listing with `expired`, detach (revokes the token: it can't be charged),
// tenancy, and the functions index.ts exports. Method: signed HTTP; vault state read via its index.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Kurus } from '../../sdk/index.ts'
import { attachCardToCustomer, getDefaultCard } from '../../src/modules/customers/index.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { getCardToken } from '../../src/modules/vault/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import { attach, createCustomer, listCards, type CardBody, type ErrorBody } from './_support.ts'

async function tokenizeExpiring(client: Kurus, expMonth: number, expYear: number) {
  const res = await client.request<{ cardToken: string }>('POST', '/v1/cards/tokens', {
    body: { cardNumber: CARDS.debit, expMonth, expYear, cvc: '123', holderName: 'Ali Veli' },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.cardToken
}

test('attach: 201 with the card and its bin; the first card becomes the default; the vault binds the token', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const token = await tokenize(m.client, CARDS.frictionless)
  const res = await attach(m.client, c.id, token, false)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const card = res.body
  assert.match(card.id, /^cuc_[0-9a-z]{24}$/)
  assert.deepEqual(
    { ...card, id: '', createdAt: '', card: null },
    {
      id: '',
      card: null,
      customerId: c.id,
      cardToken: token,
      last4: '6111',
      bin: '415565',
      brand: 'visa',
      expMonth: 12,
      expYear: 2030,
      isDefault: true,
      expired: false,
      createdAt: '',
    },
    'the first card is the default even with isDefault: false',
  )
  assert.ok(!JSON.stringify(card).includes(CARDS.frictionless))
  const vaultView = await getCardToken(h.deps, m.merchantId, token)
  assert.equal(vaultView.customerId, c.id)
  assert.equal(vaultView.status, 'active')

  const def = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/customers/${c.id}/cards/default`,
  )
  assert.equal(def.status, 200)
  assert.deepEqual(def.body, {
    cardToken: token,
    customerId: c.id,
    last4: '6111',
    brand: 'visa',
    expMonth: 12,
    expYear: 2030,
  })
  const events = await eventsForResource(h.deps.db, m.merchantId, c.id)
  assert.deepEqual(
    events.map((e) => e.type),
    ['customer.created', 'customer.card_attached'],
  )
})

test('more cards: not default unless isDefault; isDefault: true moves the default; list is newest first, references only', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const first = (await attach(m.client, c.id, await tokenize(m.client, CARDS.frictionless))).body
  h.clock.advance(1)
  const second = await attach(m.client, c.id, await tokenize(m.client, CARDS.troy))
  assert.equal(second.status, 201)
  assert.equal(second.body.isDefault, false)
  assert.equal(second.body.brand, 'troy')
  h.clock.advance(1)
  const third = await attach(m.client, c.id, await tokenize(m.client, CARDS.debit), true)
  assert.equal(third.status, 201)
  assert.equal(third.body.isDefault, true)

  const items = await listCards(m.client, c.id)
  assert.deepEqual(
    items.map((i) => [i.id, i.isDefault]),
    [
      [third.body.id, true],
      [second.body.id, false],
      [first.id, false],
    ],
  )
  for (const item of items) {
    assert.deepEqual(Object.keys(item).sort(), [
      'brand',
      'card',
      'cardToken',
      'createdAt',
      'customerId',
      'expMonth',
      'expYear',
      'expired',
      'id',
      'isDefault',
      'last4',
    ])
    assert.equal(item.expired, false)
  }
  const def = await m.client.request<{ cardToken: string }>(
    'GET',
    `/v1/customers/${c.id}/cards/default`,
  )
  assert.equal(def.body.cardToken, third.body.cardToken)
})

test('attaching the same token again returns the existing card (200); isDefault: true then switches the default', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const a = await tokenize(m.client, CARDS.frictionless)
  const b = await tokenize(m.client, CARDS.troy)
  const cardA = (await attach(m.client, c.id, a)).body
  const cardB = (await attach(m.client, c.id, b)).body
  assert.equal(cardB.isDefault, false)

  const repeat = await attach(m.client, c.id, b)
  assert.equal(repeat.status, 200)
  assert.equal(repeat.body.id, cardB.id)
  assert.equal(repeat.body.isDefault, false)
  assert.equal((await listCards(m.client, c.id)).length, 2)

  const promote = await attach(m.client, c.id, b, true)
  assert.equal(promote.status, 200)
  assert.equal(promote.body.id, cardB.id)
  assert.equal(promote.body.isDefault, true)
  const after = await listCards(m.client, c.id)
  assert.deepEqual(
    after.filter((i) => i.isDefault).map((i) => i.id),
    [cardB.id],
  )
  // isDefault: false on a repeat never leaves the customer without a default.
  const keep = await attach(m.client, c.id, b, false)
  assert.equal(keep.body.isDefault, true)
  assert.equal((await attach(m.client, c.id, a)).body.isDefault, false)

  // The exported use case behaves the same (the payments module's save-card calls it).
  const again = await attachCardToCustomer(h.deps, m.merchantId, c.id, a, { isDefault: true })
  assert.equal(again.id, cardA.id)
  assert.equal(again.isDefault, true)
  assert.equal((await getDefaultCard(h.deps, m.merchantId, c.id))?.id, cardA.id)
  const events = await eventsForResource(h.deps.db, m.merchantId, c.id)
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'customer.created',
      'customer.card_attached',
      'customer.card_attached',
      'customer.default_card_changed',
      'customer.default_card_changed',
    ],
  )
})

test('token errors: bound to another customer 409 SVC-RES-3302; another merchant’s or unknown 404; malformed 400', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const stranger = await h.newMerchant()
  const c1 = await createCustomer(m.client)
  const c2 = await createCustomer(m.client)
  const token = await tokenize(m.client, CARDS.frictionless)
  assert.equal((await attach(m.client, c1.id, token)).status, 201)

  const taken = await attach(m.client, c2.id, token)
  assert.equal(taken.status, 409)
  assert.equal(taken.body.code, 'SVC-RES-3302')
  assert.deepEqual(await listCards(m.client, c2.id), [])
  assert.equal((await getCardToken(h.deps, m.merchantId, token)).customerId, c1.id)

  const theirs = await tokenize(stranger.client, CARDS.frictionless)
  const foreign = await attach(m.client, c1.id, theirs)
  assert.equal(foreign.status, 404)
  assert.equal(foreign.body.code, 'SVC-RES-3301')
  assert.equal((await getCardToken(h.deps, stranger.merchantId, theirs)).customerId, null)

  const unknown = await attach(m.client, c1.id, 'tok_doesnotexist0000000000')
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.code, 'SVC-RES-3301')

  for (const body of [
    { cardToken: CARDS.frictionless },
    {},
    { cardToken: token, isDefault: 'yes' },
  ]) {
    const res = await m.client.request<ErrorBody>('POST', `/v1/customers/${c1.id}/cards`, { body })
    assert.equal(res.status, 400, JSON.stringify(body))
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  assert.equal((await listCards(m.client, c1.id)).length, 1)
})

test('detach: 204, the token is revoked and can no longer be charged; the most recent remaining card becomes default', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const oldest = (await attach(m.client, c.id, await tokenize(m.client, CARDS.frictionless))).body
  h.clock.advance(1)
  const middle = (await attach(m.client, c.id, await tokenize(m.client, CARDS.troy))).body
  h.clock.advance(1)
  const newest = (await attach(m.client, c.id, await tokenize(m.client, CARDS.debit))).body
  assert.equal(oldest.isDefault, true)

  // A saved card can be charged while attached (so the refusal below is about the detach).
  const live = await openSession(m.client, 5000)
  const charged = await m.client.request('POST', '/v1/payments/card', {
    body: {
      transactionId: live.transactionId,
      amount: 5000,
      currency: 'TRY',
      cardToken: middle.cardToken,
    },
  })
  assert.equal(charged.status, 201, JSON.stringify(charged.body))

  const del = await m.client.request('DELETE', `/v1/customers/${c.id}/cards/${oldest.id}`)
  assert.equal(del.status, 204)
  const items = await listCards(m.client, c.id)
  assert.deepEqual(
    items.map((i) => [i.id, i.isDefault]),
    [
      [newest.id, true],
      [middle.id, false],
    ],
  )
  assert.equal((await getCardToken(h.deps, m.merchantId, oldest.cardToken)).status, 'revoked')

  const session = await openSession(m.client, 5000)
  const res = await m.client.request<ErrorBody>('POST', '/v1/payments/card', {
    body: {
      transactionId: session.transactionId,
      amount: 5000,
      currency: 'TRY',
      cardToken: oldest.cardToken,
    },
  })
  assert.ok(res.status >= 400, `charging a detached card must fail, got ${res.status}`)
  assert.equal(res.status, 409)
  assert.equal(res.body.code, 'SVC-STATE-3401')

  // Gone: a second detach is 404 and the token cannot be attached again.
  const twice = await m.client.request<ErrorBody>(
    'DELETE',
    `/v1/customers/${c.id}/cards/${oldest.id}`,
  )
  assert.equal(twice.status, 404)
  assert.equal(twice.body.code, 'SVC-RES-3301')
  const reattach = await attach(m.client, c.id, oldest.cardToken)
  assert.equal(reattach.status, 409)
  assert.equal(reattach.body.code, 'SVC-STATE-3401')

  // Detaching a card that is not the default leaves the default alone.
  assert.equal(
    (await m.client.request('DELETE', `/v1/customers/${c.id}/cards/${middle.id}`)).status,
    204,
  )
  assert.equal((await getDefaultCard(h.deps, m.merchantId, c.id))?.id, newest.id)
  // The last card: no default remains.
  assert.equal(
    (await m.client.request('DELETE', `/v1/customers/${c.id}/cards/${newest.id}`)).status,
    204,
  )
  const none = await m.client.request<ErrorBody>('GET', `/v1/customers/${c.id}/cards/default`)
  assert.equal(none.status, 404)
  assert.equal(none.body.code, 'SVC-RES-3301')
  assert.equal(await getDefaultCard(h.deps, m.merchantId, c.id), undefined)
  assert.deepEqual(await listCards(m.client, c.id), [])
  const events = await eventsForResource(h.deps.db, m.merchantId, c.id)
  assert.equal(events.filter((e) => e.type === 'customer.card_detached').length, 3)
})

test('expired is computed from the service clock; a detached default passes to the newest unexpired card', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const lasting = (await attach(m.client, c.id, await tokenizeExpiring(m.client, 12, 2031))).body
  h.clock.advance(1)
  const expiring = (await attach(m.client, c.id, await tokenizeExpiring(m.client, 2, 2031))).body
  h.clock.advance(1)
  const current = (await attach(m.client, c.id, await tokenizeExpiring(m.client, 1, 2031), true))
    .body
  assert.equal(current.isDefault, true)
  assert.ok((await listCards(m.client, c.id)).every((i) => !i.expired))

  // Valid through the last day of the expiry month.
  h.clock.set(new Date('2031-02-28T23:59:00Z'))
  const feb = await listCards(m.client, c.id)
  assert.deepEqual(
    feb.map((i) => [i.id, i.expired]),
    [
      [current.id, true],
      [expiring.id, false],
      [lasting.id, false],
    ],
  )
  h.clock.set(new Date('2031-03-01T00:00:00Z'))
  const march = await listCards(m.client, c.id)
  assert.deepEqual(
    march.map((i) => [i.id, i.expired]),
    [
      [current.id, true],
      [expiring.id, true],
      [lasting.id, false],
    ],
  )

  // The newest remaining card is expired, so the older unexpired one becomes the default.
  await m.client.request('DELETE', `/v1/customers/${c.id}/cards/${current.id}`)
  assert.equal((await getDefaultCard(h.deps, m.merchantId, c.id))?.id, lasting.id)
  // Only an expired card left: it still becomes the default (the merchant decides what to do).
  await m.client.request('DELETE', `/v1/customers/${c.id}/cards/${lasting.id}`)
  const last = await getDefaultCard(h.deps, m.merchantId, c.id)
  assert.equal(last?.id, expiring.id)
  assert.equal(last.expired, true)
})

test('deleting a customer detaches its cards and revokes their tokens', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const t1 = await tokenize(m.client, CARDS.frictionless)
  const t2 = await tokenize(m.client, CARDS.troy)
  await attach(m.client, c.id, t1)
  await attach(m.client, c.id, t2)
  assert.equal((await m.client.request('DELETE', `/v1/customers/${c.id}`)).status, 204)
  for (const token of [t1, t2]) {
    assert.equal((await getCardToken(h.deps, m.merchantId, token)).status, 'revoked')
  }
  await assert.rejects(getDefaultCard(h.deps, m.merchantId, c.id), { status: 404 })
  // A new customer cannot take over the old customer's tokens.
  const next = await createCustomer(m.client)
  const res = await attach(m.client, next.id, t1)
  assert.equal(res.status, 409)
})

test("another merchant's customer or card is 404 SVC-RES-3301 on every card route", async (t) => {
  const h = await startTestApp(t)
  const owner = await h.newMerchant()
  const stranger = await h.newMerchant()
  const c = await createCustomer(owner.client)
  const sibling = await createCustomer(owner.client)
  const card = (await attach(owner.client, c.id, await tokenize(owner.client, CARDS.frictionless)))
    .body
  const strangerToken = await tokenize(stranger.client, CARDS.troy)
  const strangerCustomer = await createCustomer(stranger.client)

  const probes: [Kurus, string, string, Record<string, unknown> | undefined][] = [
    [stranger.client, 'POST', `/v1/customers/${c.id}/cards`, { cardToken: strangerToken }],
    [stranger.client, 'GET', `/v1/customers/${c.id}/cards`, undefined],
    [stranger.client, 'GET', `/v1/customers/${c.id}/cards/default`, undefined],
    [stranger.client, 'DELETE', `/v1/customers/${c.id}/cards/${card.id}`, undefined],
    [stranger.client, 'DELETE', `/v1/customers/${strangerCustomer.id}/cards/${card.id}`, undefined],
    // The owner's own card under another of its customers: also not found.
    [owner.client, 'DELETE', `/v1/customers/${sibling.id}/cards/${card.id}`, undefined],
    [owner.client, 'POST', `/v1/customers/${c.id}/cards`, { cardToken: strangerToken }],
  ]
  for (const [client, method, path, body] of probes) {
    const res = await client.request<ErrorBody>(method, path, body ? { body } : {})
    assert.equal(res.status, 404, `${method} ${path}`)
    assert.equal(res.body.code, 'SVC-RES-3301')
  }
  await assert.rejects(getDefaultCard(h.deps, stranger.merchantId, c.id), { status: 404 })
  await assert.rejects(attachCardToCustomer(h.deps, stranger.merchantId, c.id, strangerToken), {
    status: 404,
  })
  const items: CardBody[] = await listCards(owner.client, c.id)
  assert.deepEqual(
    items.map((i) => i.id),
    [card.id],
  )
  assert.equal((await getCardToken(h.deps, stranger.merchantId, strangerToken)).customerId, null)
})
