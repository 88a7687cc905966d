// Goal: dispute evidence (CONTRACT.md "Dispute evidence"): the deadline (`evidenceDueBy`,
// KURUS_EVIDENCE_DAYS), its expiry by the reconciler, evidence drafts and submission (one
// rendered PDF, `under_review`), the sandbox bank's won and lost outcomes with their ledger
// effects, reverse from under_review, and the owners' reminder email.
// Method: signed HTTP against the real app (the sandbox helper plays the bank);
// POST /v1/sandbox/reconcile runs the reconcilers; the test clock is moved to the due times
// the API reports.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { startTestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { raise, type Cb } from './_support.ts'

const DAY_MS = 86_400_000

type Chargeback = Cb & {
  evidenceDueBy: string
  resolution: string | null
  evidenceSubmittedAt: string | null
}

async function reconcile(m: TestMerchant): Promise<Record<string, number>> {
  const res = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.ran
}

async function chargebackOf(m: TestMerchant, paymentId: string, id: string): Promise<Chargeback> {
  const list = await m.client.request<{ items: Chargeback[] }>(
    'GET',
    `/v1/payments/${paymentId}/chargebacks`,
  )
  const cb = list.body.items.find((c) => c.id === id)
  assert.ok(cb, `chargeback ${id} listed`)
  return cb
}

test('evidenceDueBy is received + 7 days; unanswered past it, the chargeback expires', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const id = res.body.paymentId
  const raised = await raise(m, id, { amount: 3_000 })
  assert.equal(raised.status, 201, JSON.stringify(raised.body))
  const cb = raised.body as Chargeback
  assert.equal(new Date(cb.evidenceDueBy).getTime() - new Date(cb.receivedAt).getTime(), 7 * DAY_MS)
  assert.equal(cb.resolution, null)

  // A minute before the deadline: still open.
  h.clock.set(new Date(new Date(cb.evidenceDueBy).getTime() - 60_000))
  await reconcile(m)
  assert.equal((await chargebackOf(m, id, cb.id)).status, 'received')

  h.clock.set(new Date(new Date(cb.evidenceDueBy).getTime() + 1_000))
  const ran = await reconcile(m)
  assert.equal(ran['disputes.expire_chargebacks'], 1)
  const closed = await chargebackOf(m, id, cb.id)
  assert.equal(closed.status, 'accepted')
  assert.equal(closed.resolution, 'expired')
  assert.ok(closed.resolvedAt)
  const types = (await eventsForResource(h.deps.db, m.merchantId, cb.id)).map((e) => e.type)
  assert.deepEqual(types, ['chargeback.received', 'chargeback.closed'])
  // Closed: neither accept nor reverse moves it again; the amount stays set aside.
  const again = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payments/${id}/chargebacks/${cb.id}/reverse`,
    { body: {} },
  )
  assert.equal(again.status, 409)
  assert.equal(again.body.code, 'SVC-STATE-3401')
  const payment = await m.client.request<{ refundableAmount: number }>('GET', `/v1/payments/${id}`)
  assert.equal(payment.body.refundableAmount, 7_000)
  assert.equal((await reconcile(m))['disputes.expire_chargebacks'], 0)
})

test('KURUS_EVIDENCE_DAYS sets the deadline', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_EVIDENCE_DAYS: '10' } })
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 5_000)
  const raised = await raise(m, res.body.paymentId)
  const cb = raised.body as Chargeback
  assert.equal(
    new Date(cb.evidenceDueBy).getTime() - new Date(cb.receivedAt).getTime(),
    10 * DAY_MS,
  )
})
