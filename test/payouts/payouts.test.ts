// Goal: submerchant payouts — who may pay whom (key scopes), limits, the available-balance
// rule (under concurrency: races.pg.test.ts), the rail lifecycle (paid, failed and refunded to
// available), reads, lists with keyset cursors, the balance view and the outbox events.
// Method: signed HTTP against the real app with merchant and submerchant keys; funds come
// from split captures settled by POST /v1/sandbox/reconcile, which also runs the rail jobs.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { processPayout } from '../../src/modules/payouts/index.ts'
import { startTestApp } from '../helpers/app.ts'
import {
  assertLedgerOk,
  balanceOf,
  balances,
  captureAndSettle,
  fundedSubmerchant,
  newSubmerchant,
  pay,
  reconcile,
  trIban,
  type PayoutBody,
} from './_support.ts'

test('a submerchant payout: pending → processing → paid, ledger legs, events', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 50_000)
  const funded = await balanceOf(m.client, sub.submerchantId)
  assert.equal(funded.reserveMinor, 0)
  assert.ok(funded.availableMinor > 40_000)

  const created = await pay(m.client, sub.submerchantId, 30_000, { clientReference: 'hakediş-7' })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const p = created.body
  assert.match(p.payoutId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.equal(p.status, 'pending')
  assert.equal(p.submerchantId, sub.submerchantId)
  assert.equal(p.ownerType, 'submerchant')
  assert.equal(p.clientReference, 'hakediş-7')
  assert.equal(p.holderName, 'Seller Ltd')
  const iban = trIban('1234567890123456')
  assert.equal(p.destMasked, `${iban.slice(0, 4)}${'*'.repeat(18)}3456`)
  assert.ok(!JSON.stringify(p).includes(iban), 'the IBAN is masked')

  const held = await balanceOf(m.client, sub.submerchantId)
  assert.equal(held.availableMinor, funded.availableMinor - 30_000)
  assert.equal(held.payoutPendingMinor, 30_000)

  const ran = await reconcile(m.client)
  assert.ok((ran['payouts.process_payout'] ?? 0) >= 1)
  const got = await m.client.request<PayoutBody>('GET', `/v1/payouts/${p.payoutId}`)
  assert.equal(got.status, 200)
  assert.equal(got.body.status, 'paid')
  assert.ok(got.body.processingAt && got.body.paidAt)
  assert.equal(got.body.failedAt, null)
  const paid = await balanceOf(m.client, sub.submerchantId)
  assert.equal(paid.availableMinor, funded.availableMinor - 30_000)
  assert.equal(paid.payoutPendingMinor, 0)

  const events = await eventsForResource(h.deps.db, m.merchantId, p.payoutId)
  assert.deepEqual(
    events.map((e) => [e.type, e.sequence, e.data['status']]),
    [
      ['payout.created', 1, 'pending'],
      ['payout.paid', 2, 'paid'],
    ],
  )
  assert.equal(events[0]?.data['clientReference'], 'hakediş-7')

  // A second worker (or a retried job) finds the payout done and changes nothing.
  assert.equal(await processPayout(h.deps, m.merchantId, p.payoutId), 'paid')
  assert.equal((await eventsForResource(h.deps.db, m.merchantId, p.payoutId)).length, 2)

  // Two workers on one pending payout at once: races.pg.test.ts.
  await assertLedgerOk(h)
})

test('a valid IBAN ending 9999 fails on the rail and the money returns to available', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 20_000, { iban: trIban('4444555566669999') })
  const funded = await balanceOf(m.client, sub.submerchantId)
  const created = await pay(m.client, sub.submerchantId, 15_000)
  assert.equal(created.status, 201)
  assert.equal((await balanceOf(m.client, sub.submerchantId)).payoutPendingMinor, 15_000)
  await reconcile(m.client)
  const got = await m.client.request<PayoutBody>('GET', `/v1/payouts/${created.body.payoutId}`)
  assert.equal(got.body.status, 'failed')
  assert.equal(got.body.failureCode, 'account_closed')
  assert.ok(got.body.failedAt)
  assert.equal(got.body.paidAt, null)
  const after = await balanceOf(m.client, sub.submerchantId)
  assert.equal(after.availableMinor, funded.availableMinor)
  assert.equal(after.payoutPendingMinor, 0)
  const types = (await eventsForResource(h.deps.db, m.merchantId, created.body.payoutId)).map(
    (e) => e.type,
  )
  assert.deepEqual(types, ['payout.created', 'payout.failed'])
  // A failed payout doesn't count toward the daily total, and the funds can go out again.
  const retry = await pay(m.client, sub.submerchantId, 15_000)
  assert.equal(retry.status, 201)
  await assertLedgerOk(h)
})

test('scope: a submerchant key pays out only to itself; a merchant key to any of its own', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const a = await newSubmerchant(h, m.merchantId)
  const b = await newSubmerchant(h, m.merchantId, { iban: trIban('9876543210') })
  const stranger = await h.newMerchant({ name: 'Stranger' })
  const strangerSub = await newSubmerchant(h, stranger.merchantId)
  await captureAndSettle(m, 40_000, [
    { submerchantId: a.submerchantId, amountMinor: 10_000 },
    { submerchantId: b.submerchantId, amountMinor: 10_000 },
  ])

  const own = await pay(a.client, a.submerchantId, 1_000)
  assert.equal(own.status, 201, JSON.stringify(own.body))
  const sibling = await pay(a.client, b.submerchantId, 1_000)
  assert.equal(sibling.status, 403)
  assert.equal(sibling.body.code, 'SVC-AUTH-3201')
  const byParent = await pay(m.client, b.submerchantId, 2_000)
  assert.equal(byParent.status, 201)
  const foreign = await pay(m.client, strangerSub.submerchantId, 1_000)
  assert.equal(foreign.status, 404)
  assert.equal(foreign.body.code, 'SVC-RES-3301')
  const foreignBySub = await pay(strangerSub.client, a.submerchantId, 1_000)
  assert.equal(foreignBySub.status, 403)

  // Reads: a submerchant sees its own payouts only; its sibling's is not found for it.
  assert.equal((await a.client.request('GET', `/v1/payouts/${own.body.payoutId}`)).status, 200)
  assert.equal((await a.client.request('GET', `/v1/payouts/${byParent.body.payoutId}`)).status, 404)
  assert.equal(
    (await stranger.client.request('GET', `/v1/payouts/${own.body.payoutId}`)).status,
    404,
  )
  assert.equal((await m.client.request('GET', `/v1/payouts/not-a-uuid`)).status, 404)
  const listA = await a.client.request<{ items: PayoutBody[] }>('GET', '/v1/payouts')
  assert.deepEqual(
    listA.body.items.map((p) => p.payoutId),
    [own.body.payoutId],
  )
  const peek = await a.client.request<{ code: string }>('GET', '/v1/payouts', {
    query: { submerchantId: b.submerchantId },
  })
  assert.equal(peek.status, 403)
  assert.equal(peek.body.code, 'SVC-AUTH-3201')
  const listParent = await m.client.request<{ items: PayoutBody[] }>('GET', '/v1/payouts')
  assert.equal(listParent.body.items.length, 2)

  // Balances: the merchant sees every owner, a submerchant only itself.
  const all = await balances(m.client)
  assert.deepEqual(
    all.map((x) => x.ownerId).sort(),
    [m.merchantId, a.submerchantId, b.submerchantId].sort(),
  )
  assert.equal(all[0]?.ownerId, m.merchantId, 'the parent comes first')
  const mine = await balances(a.client)
  assert.deepEqual(
    mine.map((x) => [x.ownerType, x.ownerId, x.payoutPendingMinor, x.currency]),
    [['submerchant', a.submerchantId, 1_000, 'TRY']],
  )
  // Anything else is closed to a submerchant key.
  const charge = await a.client.request<{ code: string }>('GET', `/v1/payments/pay_x`)
  assert.equal(charge.status, 403)
  assert.equal(charge.body.code, 'SVC-AUTH-3201')
})

test('limits: min, max per payout and the daily total → 400 SVC-PAY-3503', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 60_000, {
    payoutLimits: { minMinor: 500, maxMinor: 10_000, dailyMaxMinor: 15_000 },
  })
  const low = await pay(m.client, sub.submerchantId, 499)
  assert.equal(low.status, 400)
  assert.equal(low.body.code, 'SVC-PAY-3503')
  const high = await pay(m.client, sub.submerchantId, 10_001)
  assert.equal(high.status, 400)
  assert.equal(high.body.code, 'SVC-PAY-3503')
  assert.equal((await pay(m.client, sub.submerchantId, 500)).status, 201)
  assert.equal((await pay(m.client, sub.submerchantId, 10_000)).status, 201)
  const overDay = await pay(m.client, sub.submerchantId, 4_501)
  assert.equal(overDay.status, 400)
  assert.equal(overDay.body.code, 'SVC-PAY-3503')
  assert.equal((await pay(m.client, sub.submerchantId, 4_500)).status, 201, 'exactly the total')
  // The next Istanbul day starts a new total.
  h.clock.advance(24 * 60 * 60 * 1000)
  assert.equal((await pay(m.client, sub.submerchantId, 10_000)).status, 201)
  h.clock.reset()

  // Defaults (CONTRACT.md): min 100 and max 50,000,000 per payout.
  const plain = await newSubmerchant(h, m.merchantId)
  assert.equal((await pay(m.client, plain.submerchantId, 99)).body.code, 'SVC-PAY-3503')
  assert.equal((await pay(m.client, plain.submerchantId, 50_000_001)).body.code, 'SVC-PAY-3503')
  // Nothing to pay it from: inside the limits, the balance rule answers.
  assert.equal((await pay(m.client, plain.submerchantId, 100)).body.code, 'SVC-PAY-3502')
})

test('request rules: card rail, currency, KYC, idempotency key replay', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 10_000)
  const card = await pay(m.client, sub.submerchantId, 1_000, { rail: 'card' })
  assert.equal(card.status, 400)
  assert.equal(card.body.code, 'SVC-VAL-3001')
  const usd = await pay(m.client, sub.submerchantId, 1_000, { currency: 'USD' })
  assert.equal(usd.status, 400)
  assert.equal(usd.body.code, 'SVC-VAL-3001')

  const key = randomUUID()
  const body = {
    submerchantId: sub.submerchantId,
    rail: 'eft',
    amountMinor: 1_000,
    currency: 'TRY',
  }
  const first = await m.client.request<PayoutBody>('POST', '/v1/payouts', {
    body,
    idempotencyKey: key,
  })
  const replay = await m.client.request<PayoutBody>('POST', '/v1/payouts', {
    body,
    idempotencyKey: key,
  })
  assert.equal(first.status, 201)
  assert.equal(replay.status, 201)
  assert.equal(replay.body.payoutId, first.body.payoutId)
  assert.equal((await balanceOf(m.client, sub.submerchantId)).payoutPendingMinor, 1_000)

  await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status: 'suspended' })
  const kyc = await pay(sub.client, sub.submerchantId, 1_000)
  assert.equal(kyc.status, 403)
  assert.equal(kyc.body.code, 'SVC-KYC-3101')
  // Reading stays allowed.
  assert.equal((await sub.client.request('GET', '/v1/balances')).status, 200)
})

test('a payout whose response was never recorded: the retry finds it, not a second payout', async (t) => {
  // The process died after the payout committed and before the gateway stored the response
  // (the history checker found this): here the gateway's record is deleted to stand for it.
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 10_000)
  const key = randomUUID()
  const body = {
    submerchantId: sub.submerchantId,
    rail: 'fast',
    amountMinor: 2_000,
    currency: 'TRY',
  }
  const first = await m.client.request<PayoutBody>('POST', '/v1/payouts', {
    body,
    idempotencyKey: key,
  })
  assert.equal(first.status, 201, JSON.stringify(first.body))
  const forget = () =>
    sql`delete from idempotency_keys where idempotency_key = ${key}`.execute(h.deps.db)
  await forget()

  const retry = await m.client.request<PayoutBody>('POST', '/v1/payouts', {
    body,
    idempotencyKey: key.toUpperCase(),
  })
  assert.equal(retry.status, 201, JSON.stringify(retry.body))
  assert.equal(retry.body.payoutId, first.body.payoutId)
  assert.equal(retry.headers.get('idempotent-replayed'), null)
  const rows = await sql<{ n: number }>`select count(*)::int as n from payouts
    where merchant_id = ${m.merchantId}`.execute(h.deps.db)
  assert.equal(rows.rows[0]?.n, 1)
  assert.equal((await balanceOf(m.client, sub.submerchantId)).payoutPendingMinor, 2_000)

  // The same key for other terms is refused and changes nothing.
  await forget()
  const other = await m.client.request<PayoutBody>('POST', '/v1/payouts', {
    body: { ...body, amountMinor: 3_000 },
    idempotencyKey: key,
  })
  assert.equal(other.status, 409, JSON.stringify(other.body))
  assert.equal(other.body.code, 'SVC-GW-2001')
  assert.equal((await balanceOf(m.client, sub.submerchantId)).payoutPendingMinor, 2_000)

  // Another merchant's identical key is its own.
  const { m: m2, sub: sub2 } = await fundedSubmerchant(h, 10_000)
  const theirs = await m2.client.request<PayoutBody>('POST', '/v1/payouts', {
    body: { ...body, submerchantId: sub2.submerchantId },
    idempotencyKey: key,
  })
  assert.equal(theirs.status, 201, JSON.stringify(theirs.body))
  assert.notEqual(theirs.body.payoutId, first.body.payoutId)
  await assertLedgerOk(h)
})

test('GET /v1/payouts: filters status, submerchantId, from/to and keyset pages', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const a = await newSubmerchant(h, m.merchantId)
  const b = await newSubmerchant(h, m.merchantId, { iban: trIban('1111222233339999') })
  await captureAndSettle(m, 60_000, [
    { submerchantId: a.submerchantId, amountMinor: 20_000 },
    { submerchantId: b.submerchantId, amountMinor: 20_000 },
  ])
  const ids: string[] = []
  const createdAt: number[] = []
  for (const [who, amount] of [
    [a, 1_000],
    [b, 1_100],
    [a, 1_200],
    [b, 1_300],
    [a, 1_400],
  ] as const) {
    h.clock.advance(1_000)
    const res = await pay(m.client, who.submerchantId, amount)
    assert.equal(res.status, 201)
    ids.push(res.body.payoutId)
    createdAt.push(Date.parse(res.body.createdAt))
  }
  await reconcile(m.client) // b's IBAN ends 9999: its payouts fail

  const pages: string[] = []
  let cursor: string | null = null
  do {
    const page: { status: number; body: { items: PayoutBody[]; nextCursor: string | null } } =
      await m.client.request('GET', '/v1/payouts', {
        query: { limit: 2, ...(cursor ? { cursor } : {}) },
      })
    assert.equal(page.status, 200)
    assert.ok(page.body.items.length <= 2)
    pages.push(...page.body.items.map((p) => p.payoutId))
    cursor = page.body.nextCursor
  } while (cursor)
  assert.deepEqual(pages, [...ids].reverse(), 'newest first, every payout once')

  const failed = await m.client.request<{ items: PayoutBody[] }>('GET', '/v1/payouts', {
    query: { status: 'failed' },
  })
  assert.deepEqual(
    failed.body.items.map((p) => p.amountMinor),
    [1_300, 1_100],
  )
  const ofA = await m.client.request<{ items: PayoutBody[] }>('GET', '/v1/payouts', {
    query: { submerchantId: a.submerchantId, status: 'paid' },
  })
  assert.deepEqual(
    ofA.body.items.map((p) => p.amountMinor),
    [1_400, 1_200, 1_000],
  )
  const window = await m.client.request<{ items: PayoutBody[] }>('GET', '/v1/payouts', {
    query: {
      // From the 2nd payout (inclusive) to just after the 3rd (`to` is exclusive), cut from
      // their own times: the test clock runs with real time, so offsets from a start drift.
      from: new Date(createdAt[1] ?? 0).toISOString(),
      to: new Date((createdAt[2] ?? 0) + 1).toISOString(),
    },
  })
  assert.deepEqual(
    window.body.items.map((p) => p.amountMinor),
    [1_200, 1_100],
  )
  const tampered = await m.client.request<{ code: string }>('GET', '/v1/payouts', {
    query: { cursor: 'eyJrIjoicGF5b3V0cyJ9.AAAA' },
  })
  assert.equal(tampered.status, 400)
  assert.equal(tampered.body.code, 'SVC-VAL-3001')
  const badStatus = await m.client.request('GET', '/v1/payouts', { query: { status: 'lost' } })
  assert.equal(badStatus.status, 400)
  await assertLedgerOk(h)
})
