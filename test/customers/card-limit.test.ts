// Goal: a customer holds at most CARDS_PER_CUSTOMER_MAX attached cards (it bounds the
// unpaginated card list); a detach makes room again. Method: signed HTTP on a file of its own.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'
import { attach, createCustomer, listCards } from './_support.ts'

const MAX = 50

test('the 51st card is 400 SVC-VAL-3001 until a card is detached', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client)
  for (let i = 0; i < MAX; i++) {
    const res = await attach(m.client, c.id, await tokenize(m.client, CARDS.troy))
    assert.equal(res.status, 201, JSON.stringify(res.body))
  }
  const extra = await tokenize(m.client, CARDS.frictionless)
  const refused = await attach(m.client, c.id, extra)
  assert.equal(refused.status, 400)
  assert.equal(refused.body.code, 'SVC-VAL-3001')
  const cards = await listCards(m.client, c.id)
  assert.equal(cards.length, MAX)
  // The refusal rolled back the vault binding: the token is still free.
  const other = await createCustomer(m.client)
  assert.equal((await attach(m.client, other.id, extra)).status, 201)

  const victim = cards.at(-1)
  assert.ok(victim)
  const del = await m.client.request('DELETE', `/v1/customers/${c.id}/cards/${victim.id}`)
  assert.equal(del.status, 204)
  const next = await attach(m.client, c.id, await tokenize(m.client, CARDS.debit))
  assert.equal(next.status, 201)
  assert.equal((await listCards(m.client, c.id)).length, MAX)
})
