// Goal (issue 35, decision 0035): accepting or reversing a chargeback records its answer in
// the transaction that closes it. A request that fails after that commit (the process dies
// before the answer is written, here a fail point throws) is answered with what it did, and
// so is every retry with the same Idempotency-Key — never 409 "already resolved" for the
// close its own first attempt made.
// Method: a fail point armed in-process (throw) after the commit, signed HTTP, the real app.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, test } from 'node:test'
import { armFailpoint, disarmAllFailpoints } from '../../src/platform/failpoints.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { raise } from './_support.ts'

after(() => disarmAllFailpoints())

for (const verb of ['accept', 'reverse'] as const) {
  test(`a chargeback ${verb} failing after its commit answers what it did; the retry replays it`, async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant()
    const { res } = await charge(m.client, CARDS.frictionless, 9_000)
    assert.equal(res.status, 201)
    const cb = await raise(m, res.body.paymentId)
    assert.equal(cb.status, 201, JSON.stringify(cb.body))
    const path = `/v1/payments/${res.body.paymentId}/chargebacks/${cb.body.id}/${verb}`
    const key = randomUUID()
    const send = () =>
      m.client.request<{ status: string; code?: string }>('POST', path, {
        body: {},
        idempotencyKey: key,
      })
    armFailpoint('chargeback.after_commit', { action: 'throw', times: 1 })
    const first = await send()
    disarmAllFailpoints()
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.status, verb === 'accept' ? 'accepted' : 'reversed')
    const retry = await send()
    assert.equal(retry.status, 200, JSON.stringify(retry.body))
    assert.equal(retry.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(retry.body, first.body)
    assert.equal(retry.requestId, first.requestId)
  })
}

test('an evidence submission failing after its commit answers what it did; the retry replays it', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 7_000)
  const cb = await raise(m, res.body.paymentId)
  assert.equal(cb.status, 201, JSON.stringify(cb.body))
  const path = `/v1/payments/${res.body.paymentId}/chargebacks/${cb.body.id}/evidence`
  const key = randomUUID()
  const body = { productDescription: 'A kettle, delivered 3 May', submit: true }
  const send = () =>
    m.client.request<{ status: string }>('POST', path, { body, idempotencyKey: key })
  armFailpoint('chargeback.after_commit', { action: 'throw', times: 1 })
  const first = await send()
  disarmAllFailpoints()
  assert.equal(first.status, 200, JSON.stringify(first.body))
  assert.equal(first.body.status, 'under_review')
  const retry = await send()
  assert.equal(retry.headers.get('idempotent-replayed'), 'true')
  assert.deepEqual(retry.body, first.body)
  assert.equal(retry.requestId, first.requestId)
})

test('the same accept sent 8 times at once: one close, every answer the close or "in progress"', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 9_000)
  const cb = await raise(m, res.body.paymentId)
  assert.equal(cb.status, 201, JSON.stringify(cb.body))
  const path = `/v1/payments/${res.body.paymentId}/chargebacks/${cb.body.id}/accept`
  const key = randomUUID()
  const answers = await Promise.all(
    Array.from({ length: 8 }, () =>
      m.client.request<{ status: string; code?: string }>('POST', path, {
        body: {},
        idempotencyKey: key,
      }),
    ),
  )
  // A duplicate of a request in flight is told to retry, never refused for what it did.
  for (const a of answers) {
    if (a.status === 200) assert.equal(a.body.status, 'accepted')
    else assert.equal(a.body.code, 'SVC-GW-2002', JSON.stringify(a.body))
  }
  const retry = await m.client.request<{ status: string }>('POST', path, {
    body: {},
    idempotencyKey: key,
  })
  assert.equal(retry.status, 200)
  assert.equal(retry.body.status, 'accepted')
})
