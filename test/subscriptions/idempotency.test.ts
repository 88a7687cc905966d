// Goal (issue 35, decision 0035): a charge-now's queued charge and its 202 receipt commit
// together, and the receipt is the Idempotency-Key's final answer: a retry with the same key
// (the client never saw the 202, or retries anyway) replays it and never queues a second
// cycle's charge — before this, a 202 was re-run on retry, and once the first charge had
// finished the re-run charged the buyer again.
// Method: signed HTTP; the renewal engine run through POST /v1/sandbox/reconcile.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { charges, getSub, reconcile, subscribed } from './_support.ts'

test('charge-now retried with its Idempotency-Key replays the 202 and charges one cycle', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h)
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).cycleNumber, 1)

  const key = randomUUID()
  const chargeNow = () =>
    m.client.request<Record<string, unknown>>('POST', `/v1/subscriptions/${sub.id}/charge-now`, {
      body: {},
      idempotencyKey: key,
    })
  const first = await chargeNow()
  assert.equal(first.status, 202, JSON.stringify(first.body))
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).cycleNumber, 2)

  const retry = await chargeNow()
  assert.equal(retry.status, 202)
  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.cycleNumber, 2, 'one key, one charge')
  assert.equal(after.status, 'active')
  assert.equal((await charges(m, sub.id)).length, 2)
  assert.equal(retry.headers.get('idempotent-replayed'), 'true')
  assert.deepEqual(retry.body, first.body)
  assert.equal(retry.requestId, first.requestId)
})
