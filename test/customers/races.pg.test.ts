// Goal: concurrent writers keep the invariants: one default card per customer, one live
// customer per externalId and per email, one binding per token. Method: many signed HTTP
// requests fired at once (truly parallel on PostgreSQL, queued on PGlite), then the state read back.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { getCardToken } from '../../src/modules/vault/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'
import { attach, createCustomer, listCards, type ErrorBody } from './_support.ts'

const WRITERS = 10

test('10 concurrent attaches with isDefault: true leave exactly one default card', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const tokens = await Promise.all(
    Array.from({ length: WRITERS }, () => tokenize(m.client, CARDS.frictionless)),
  )
  const results = await Promise.all(tokens.map((token) => attach(m.client, c.id, token, true)))
  assert.deepEqual(
    results.map((r) => r.status),
    Array<number>(WRITERS).fill(201),
    JSON.stringify(results.map((r) => r.body)),
  )
  const items = await listCards(m.client, c.id)
  assert.equal(items.length, WRITERS)
  const defaults = items.filter((i) => i.isDefault)
  assert.equal(defaults.length, 1)
  const def = await m.client.request<{ cardToken: string }>(
    'GET',
    `/v1/customers/${c.id}/cards/default`,
  )
  assert.equal(def.body.cardToken, defaults[0]?.cardToken)
})

test('10 concurrent default switches among existing cards leave exactly one default', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const tokens: string[] = []
  for (let i = 0; i < WRITERS; i++) {
    const token = await tokenize(m.client, CARDS.troy)
    assert.equal((await attach(m.client, c.id, token)).status, 201)
    tokens.push(token)
  }
  // Twice over each card, all at once: the switches cross one another.
  const results = await Promise.all(
    [...tokens, ...tokens].map((token) => attach(m.client, c.id, token, true)),
  )
  assert.ok(
    results.every((r) => r.status === 200 && r.body.isDefault),
    JSON.stringify(results.map((r) => r.status)),
  )
  const items = await listCards(m.client, c.id)
  assert.equal(items.length, WRITERS)
  assert.equal(items.filter((i) => i.isDefault).length, 1)
})

test('concurrent detaches of the default card and attaches keep exactly one default', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const cards = []
  for (let i = 0; i < 6; i++) {
    cards.push((await attach(m.client, c.id, await tokenize(m.client, CARDS.debit), true)).body)
  }
  const fresh = await Promise.all(
    Array.from({ length: 4 }, () => tokenize(m.client, CARDS.frictionless)),
  )
  const results = await Promise.all([
    ...cards.map((card) => m.client.request('DELETE', `/v1/customers/${c.id}/cards/${card.id}`)),
    ...fresh.map((token) => attach(m.client, c.id, token, true)),
  ])
  assert.deepEqual(
    results.map((r) => r.status),
    [...Array<number>(6).fill(204), ...Array<number>(4).fill(201)],
  )
  const items = await listCards(m.client, c.id)
  assert.equal(items.length, 4)
  assert.equal(items.filter((i) => i.isDefault).length, 1)
})

test('two concurrent creates with one externalId: one 201, one 409 SVC-RES-3302', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (let round = 0; round < 5; round++) {
    const externalId = `race-${randomUUID()}`
    const results = await Promise.all(
      [1, 2].map((n) =>
        m.client.request<ErrorBody>('POST', '/v1/customers', {
          body: { externalId, name: `writer ${n}` },
        }),
      ),
    )
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 409])
    assert.equal(results.find((r) => r.status === 409)?.body.code, 'SVC-RES-3302')
  }
})

test('two concurrent creates with one email (any case): one 201, one 409 SVC-RES-3302', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (let round = 0; round < 5; round++) {
    const local = `race-${randomUUID()}`
    const results = await Promise.all(
      [`${local}@example.com`, `${local.toUpperCase()}@EXAMPLE.com`].map((email) =>
        m.client.request<ErrorBody>('POST', '/v1/customers', {
          body: { externalId: `ext-${randomUUID()}`, email },
        }),
      ),
    )
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 409])
    assert.equal(results.find((r) => r.status === 409)?.body.code, 'SVC-RES-3302')
  }
})

test('two concurrent PUTs moving two customers to one email: one 200, one 409', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const a = await createCustomer(m.client)
  const b = await createCustomer(m.client)
  const results = await Promise.all(
    [a, b].map((c) =>
      m.client.request<ErrorBody>('PUT', `/v1/customers/${c.id}`, {
        body: { email: 'contested@example.com' },
      }),
    ),
  )
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 409])
})

test('one token attached concurrently to two customers: one 201, one 409 SVC-RES-3302', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const a = await createCustomer(m.client)
  const b = await createCustomer(m.client)
  const token = await tokenize(m.client, CARDS.frictionless)
  const results = await Promise.all([attach(m.client, a.id, token), attach(m.client, b.id, token)])
  assert.deepEqual(results.map((r) => r.status).sort(), [201, 409])
  const winner = results[0]?.status === 201 ? a : b
  const loser = winner === a ? b : a
  assert.equal((await getCardToken(h.deps, m.merchantId, token)).customerId, winner.id)
  assert.equal((await listCards(m.client, winner.id)).length, 1)
  assert.deepEqual(await listCards(m.client, loser.id), [])
})

test('one token attached concurrently to one customer five times: one card', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const token = await tokenize(m.client, CARDS.frictionless)
  const results = await Promise.all(Array.from({ length: 5 }, () => attach(m.client, c.id, token)))
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 201])
  assert.equal(new Set(results.map((r) => r.body.id)).size, 1)
  assert.equal((await listCards(m.client, c.id)).length, 1)
})

test('deleting a customer while cards are attached: no card survives on a deleted customer', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  const tokens = await Promise.all(
    Array.from({ length: 5 }, () => tokenize(m.client, CARDS.frictionless)),
  )
  const results = await Promise.all([
    ...tokens.map((token) => attach(m.client, c.id, token)),
    m.client.request('DELETE', `/v1/customers/${c.id}`),
  ])
  assert.equal(results.at(-1)?.status, 204)
  for (const r of results.slice(0, -1)) assert.ok([201, 404].includes(r.status), String(r.status))
  // Every token that made it onto the customer before the delete was revoked by it.
  for (const [i, token] of tokens.entries()) {
    const view = await getCardToken(h.deps, m.merchantId, token)
    if (results[i]?.status === 201) assert.equal(view.status, 'revoked')
    else assert.equal(view.customerId, null)
  }
})
