// Goal (issue 35, decision 0035): approving or rejecting a review captures or voids its
// payment and then closes the review, the answer recorded in the closing transaction. A
// request that fails between the two (the capture or void committed, the review still open)
// is finished by its retry with the same Idempotency-Key — the review closed, the bank asked
// once — never refused 409 because the payment is no longer `authorized`.
// Method: a fail point armed in-process (throw) between the action and the close; signed
// HTTP against the real app; the acquirer sandbox's own books count the bank's operations.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, test } from 'node:test'
import { sql } from 'kysely'
import { armFailpoint, disarmAllFailpoints } from '../../src/platform/failpoints.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { createRule } from './_support.ts'

after(() => disarmAllFailpoints())

interface ReviewBody {
  id: string
  status: string
  closedReason: string | null
  paymentStatus?: string
}

for (const verb of ['approve', 'reject'] as const) {
  test(`a review ${verb} failing between its ${verb === 'approve' ? 'capture' : 'void'} and its close is finished by the retry`, async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant()
    await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 10_000] })
    const { res } = await charge(m.client, CARDS.frictionless, 12_000)
    assert.equal(res.body.status, 'authorized', JSON.stringify(res.body))
    const list = await m.client.request<{ items: (ReviewBody & { paymentId: string })[] }>(
      'GET',
      '/v1/reviews?status=open',
    )
    const review = list.body.items.find((r) => r.paymentId === res.body.paymentId)
    assert.ok(review)
    const key = randomUUID()
    const send = () =>
      m.client.request<ReviewBody & { code?: string }>('POST', `/v1/reviews/${review.id}/${verb}`, {
        body: {},
        idempotencyKey: key,
      })
    armFailpoint('review.after_action', { action: 'throw', times: 1 })
    const first = await send()
    disarmAllFailpoints()
    assert.equal(first.status, 500, JSON.stringify(first.body))

    const retry = await send()
    assert.equal(retry.status, 200, JSON.stringify(retry.body))
    assert.equal(retry.body.status, 'closed')
    assert.equal(retry.body.closedReason, verb === 'approve' ? 'approved' : 'rejected')
    assert.equal(retry.body.paymentStatus, verb === 'approve' ? 'captured' : 'voided')
    const op = verb === 'approve' ? 'capture' : 'void'
    const { rows } = await sql<{ n: number }>`select count(*)::int as n
      from acquirer_sandbox_operations where payment_id = ${res.body.paymentId} and op = ${op}`.execute(
      h.deps.db,
    )
    assert.equal(Number(rows[0]?.n), 1, `the bank was asked to ${op} once`)
    const replay = await send()
    assert.equal(replay.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(replay.body, retry.body)
    assert.equal(replay.requestId, retry.requestId)
  })
}
