// Goal (issue 35, decision 0035): a payout's creation and its Idempotency-Key answer commit
// together — a failure before the commit leaves nothing (the retry makes the one payout), a
// failure after it answers what was recorded, byte for byte — and a rail outage (the rail
// unreachable, or its answer lost after it paid) ends in exactly one `paid`: one event, one
// set of ledger legs, the money held until then.
// Method: fail points armed in-process (throw) against the real app, through signed HTTP;
// the rail runs through POST /v1/sandbox/reconcile (jobs and reconcilers).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, test } from 'node:test'
import { sql } from 'kysely'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { armFailpoint, disarmAllFailpoints } from '../../src/platform/failpoints.ts'
import { Kurus } from '../../sdk/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { assertLedgerOk, balanceOf, fundedSubmerchant, reconcile } from './_support.ts'

after(() => disarmAllFailpoints())

interface Raw {
  status: number
  text: string
  requestId: string | null
  replayed: boolean
}

/** A client whose answers come back as raw text, so replays compare byte for byte. */
function rawClient(h: TestApp, m: TestMerchant) {
  let last = ''
  const client = new Kurus({
    publicKey: m.publicKey,
    secretKey: m.secretKey,
    baseUrl: h.url,
    fetch: async (input, init) => {
      const res = await fetch(input, init)
      last = await res.clone().text()
      return res
    },
  })
  return async (path: string, body: unknown, key: string): Promise<Raw> => {
    const res = await client.request('POST', path, { body, idempotencyKey: key })
    return {
      status: res.status,
      text: last,
      requestId: res.requestId,
      replayed: res.headers.get('idempotent-replayed') === 'true',
    }
  }
}

async function payoutsOfKey(h: TestApp, merchantId: string, key: string) {
  const { rows } = await sql<{ id: string }>`select id from payouts
    where merchant_id = ${merchantId} and idempotency_key = ${key}`.execute(h.deps.db)
  return rows.map((r) => r.id)
}

test('a payout failing before its creation commits leaves nothing; the retry makes the one payout', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 40_000)
  const post = rawClient(h, m)
  const before = await balanceOf(m.client, sub.submerchantId)
  const body = {
    submerchantId: sub.submerchantId,
    rail: 'fast',
    amountMinor: 12_000,
    currency: 'TRY',
  }
  const key = randomUUID()
  armFailpoint('payout.before_commit', { action: 'throw', times: 1 })
  const first = await post('/v1/payouts', body, key)
  disarmAllFailpoints()
  assert.equal(first.status, 500, first.text)
  assert.deepEqual(await payoutsOfKey(h, m.merchantId, key), [])
  assert.equal((await balanceOf(m.client, sub.submerchantId)).availableMinor, before.availableMinor)

  const retry = await post('/v1/payouts', body, key)
  assert.equal(retry.status, 201, retry.text)
  const { payoutId } = JSON.parse(retry.text) as { payoutId: string }
  assert.deepEqual(await payoutsOfKey(h, m.merchantId, key), [payoutId])
  const replay = await post('/v1/payouts', body, key)
  assert.equal(replay.replayed, true)
  assert.equal(replay.text, retry.text)
  assert.equal(replay.requestId, retry.requestId)
})

test('a payout failing after its creation committed answers what it recorded, and so does every retry', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 40_000)
  const post = rawClient(h, m)
  const body = {
    submerchantId: sub.submerchantId,
    rail: 'eft',
    amountMinor: 9_000,
    currency: 'TRY',
  }
  const key = randomUUID()
  armFailpoint('payout.after_commit', { action: 'throw', times: 1 })
  const first = await post('/v1/payouts', body, key)
  disarmAllFailpoints()
  // The answer was written with the payout, its legs and event: it goes out, not the failure.
  assert.equal(first.status, 201, first.text)
  const retry = await post('/v1/payouts', body, key)
  assert.equal(retry.replayed, true)
  assert.equal(retry.text, first.text)
  assert.equal(retry.requestId, first.requestId)
  const { payoutId } = JSON.parse(first.text) as { payoutId: string }
  assert.deepEqual(await payoutsOfKey(h, m.merchantId, key), [payoutId])
})

for (const step of ['payout.before_rail', 'payout.after_rail'] as const) {
  const what = step === 'payout.before_rail' ? 'unreachable' : 'paid but its answer lost'
  test(`the rail ${what}: the payout stays held, then a retry pays it exactly once`, async (t) => {
    const h = await startTestApp(t)
    const { m, sub } = await fundedSubmerchant(h, 40_000)
    const post = rawClient(h, m)
    const body = {
      submerchantId: sub.submerchantId,
      rail: 'fast',
      amountMinor: 15_000,
      currency: 'TRY',
    }
    const created = await post('/v1/payouts', body, randomUUID())
    assert.equal(created.status, 201, created.text)
    const { payoutId } = JSON.parse(created.text) as { payoutId: string }

    armFailpoint(step, { action: 'throw', times: 1 })
    await reconcile(m.client) // the job meets the outage and fails (pg-boss retries it)
    disarmAllFailpoints()
    const during = await m.client.request<{ status: string }>('GET', `/v1/payouts/${payoutId}`)
    assert.equal(during.body.status, 'processing')
    assert.equal((await balanceOf(m.client, sub.submerchantId)).payoutPendingMinor, 15_000)

    // The stale-payout reconciler's window passes (the job's own retry would do the same).
    h.clock.advance(11 * 60 * 1000)
    await reconcile(m.client)
    await reconcile(m.client)
    const paid = await m.client.request<{ status: string }>('GET', `/v1/payouts/${payoutId}`)
    assert.equal(paid.body.status, 'paid')
    const types = (await eventsForResource(h.deps.db, m.merchantId, payoutId)).map((e) => e.type)
    assert.deepEqual(types.sort(), ['payout.created', 'payout.paid'])
    assert.equal((await balanceOf(m.client, sub.submerchantId)).payoutPendingMinor, 0)
    await assertLedgerOk(h)
  })
}
