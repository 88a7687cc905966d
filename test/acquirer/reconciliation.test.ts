// Goal: the daily reconciliation per POS and bank day (issue 39): each provider's bank side
// against its simulator — Garanti's own day list (orderlistinq), EST's and PosNet's order
// inquiry per order of ours — matched against our payments, captures, voids and refunds. A
// clean day reports nothing; a day with a planted difference at the bank (a sale the bank has
// that we do not, an amount that differs, an order the bank lost) lists it once and raises
// `reconciliation.mismatch` once, however often it runs; the daily reconciler covers the day
// before; bad dates, another merchant's POS and a platform POS on demand are refused.
// Method: signed HTTP against a real database with simulators on loopback; the simulators'
// books are edited to plant a difference; the events feed says what was raised.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  garantiListDate,
  garantiOrderListRequest,
  startEstV3Simulator,
  startGarantiSimulator,
  startPosnetSimulator,
} from '../../src/modules/acquirer/index.ts'
import { startTestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import {
  EST_TEST as EST,
  GARANTI_TEST as GARANTI,
  POSNET_TEST as POSNET,
} from '../helpers/bank-credentials.ts'

interface Item {
  orderId: string
  paymentId: string | null
  kind: string
  field: string | null
  ours: { authorized: number } | null
  bank: { authorized: number } | null
}
interface Recon {
  date: string
  method: string | null
  ranAt: string | null
  checkedOrders: number
  bankAnswered?: boolean
  items: Item[]
  nextCursor: string | null
}

function today(): string {
  return new Date(Date.now() + 3 * 3_600_000).toISOString().slice(0, 10)
}

async function addPos(
  m: TestMerchant,
  provider: string,
  credentials: object,
  sim: { api: string; threeDGate: string },
) {
  const res = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
    body: {
      provider,
      name: provider,
      environment: 'test',
      credentials,
      endpoints: { api: sim.api, threeDGate: sim.threeDGate },
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id
}

async function run(m: TestMerchant, posAccountId: string, date = today()) {
  const res = await m.client.request<Recon>('POST', '/v1/acquirer-reconciliation', {
    body: { date, posAccountId },
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

async function mismatchEvents(m: TestMerchant) {
  const res = await m.client.request<{ items: { data: Record<string, unknown> }[] }>(
    'GET',
    '/v1/events?type=reconciliation.mismatch&limit=100',
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items
}

function summary(items: readonly Item[]): string[] {
  return items.map((i) => `${i.orderId}:${i.kind}:${i.field ?? ''}`).sort()
}

test('the orderlistinq request: Istanbul dates as GVPS wants them, no order, Amount 100', () => {
  // mewebstudio/pos GarantiPosRequestDataMapperTest: 2022-05-18 00:00 → "18/05/2022 00:00".
  assert.equal(garantiListDate(new Date('2022-05-18T00:00:00+03:00')), '18/05/2022 00:00')
  assert.equal(garantiListDate(new Date('2022-05-18T20:59:00Z')), '18/05/2022 23:59')
  const body = garantiOrderListRequest(
    { credentials: GARANTI, endpoints: { api: '', threeDGate: '' }, mode: 'TEST' },
    {
      start: new Date('2022-05-18T00:00:00+03:00'),
      end: new Date('2022-05-18T23:59:00+03:00'),
      page: 1,
      ip: '127.0.0.1',
    },
  )
  assert.deepEqual(body['Order'], {
    OrderID: '',
    GroupID: '',
    Description: '',
    StartDate: '18/05/2022 00:00',
    EndDate: '18/05/2022 23:59',
    ListPageNum: '1',
  })
  assert.deepEqual(body['Transaction'], {
    Type: 'orderlistinq',
    Amount: '100',
    CurrencyCode: '949',
    CardholderPresentCode: '0',
    MotoInd: 'N',
  })
  assert.deepEqual(body['Customer'], { IPAddress: '127.0.0.1' })
})

test('garanti: a clean day reports nothing; a planted sale and a changed amount are listed and evented once', async (t) => {
  const h = await startTestApp(t)
  const sim = await startGarantiSimulator(GARANTI)
  t.after(() => sim.close())
  const m = await h.newMerchant()
  const pos = await addPos(m, 'garanti', GARANTI, sim)

  const { res: sale } = await charge(m.client, CARDS.frictionless, 10_000, { threeDSecure: false })
  assert.equal(sale.body.status, 'captured', JSON.stringify(sale.body))
  const { res: auth } = await charge(m.client, CARDS.frictionless, 20_000, {
    threeDSecure: false,
    capture: false,
  })
  const authId = auth.body.paymentId
  const cap = await m.client.request('POST', `/v1/payments/${authId}/capture`, {
    body: { amount: 15_000 },
  })
  assert.ok(cap.status < 300, JSON.stringify(cap.body))
  const refund = await m.client.request('POST', `/v1/payments/${authId}/refund`, {
    body: { amount: 5_000 },
  })
  assert.ok(refund.status < 300, JSON.stringify(refund.body))
  const { res: held } = await charge(m.client, CARDS.frictionless, 3_000, {
    threeDSecure: false,
    capture: false,
  })
  const voided = await m.client.request('POST', `/v1/payments/${held.body.paymentId}/void`)
  assert.ok(voided.status < 300, JSON.stringify(voided.body))

  const before = await m.client.request<Recon>(
    'GET',
    `/v1/acquirer-reconciliation?date=${today()}&posAccountId=${pos}`,
  )
  assert.equal(before.status, 200)
  assert.equal(before.body.ranAt, null)

  const clean = await run(m, pos)
  assert.equal(clean.bankAnswered, true)
  assert.equal(clean.method, 'list')
  assert.equal(clean.checkedOrders, 3)
  assert.deepEqual(clean.items, [])
  assert.equal((await mismatchEvents(m)).length, 0)

  // Planted at the bank: a sale we never made, and the first sale's amount changed.
  const first = sim.transactions.find((x) => x.orderId === sale.body.paymentId)
  assert.ok(first)
  first.amount = 10_100
  sim.transactions.push({
    orderId: 'pay_notoursatall0000000000',
    trxType: 'Satis',
    status: 'Basarili',
    amount: 7_500,
    at: new Date(),
    retrefNum: '999999999999',
    origRetrefNum: '',
  })
  const found = await run(m, pos)
  assert.deepEqual(
    summary(found.items),
    [
      `${sale.body.paymentId}:amount_differs:authorized`,
      `${sale.body.paymentId}:amount_differs:captured`,
      'pay_notoursatall0000000000:missing_at_us:',
    ].sort(),
  )
  const differs = found.items.find((i) => i.field === 'authorized')
  assert.equal(differs?.ours?.authorized, 10_000)
  assert.equal(differs?.bank?.authorized, 10_100)
  assert.equal(differs?.paymentId, sale.body.paymentId)
  const events = await mismatchEvents(m)
  assert.equal(events.length, 3)
  assert.ok(events.some((e) => e.data['orderId'] === 'pay_notoursatall0000000000'))

  // Again: nothing new is listed or raised.
  const again = await run(m, pos)
  assert.equal(again.items.length, 3)
  assert.equal((await mismatchEvents(m)).length, 3)
  const listed = await m.client.request<Recon>(
    'GET',
    `/v1/acquirer-reconciliation?date=${today()}&posAccountId=${pos}&limit=2`,
  )
  assert.equal(listed.body.items.length, 2)
  assert.ok(listed.body.nextCursor)
  const rest = await m.client.request<Recon>(
    'GET',
    `/v1/acquirer-reconciliation?date=${today()}&posAccountId=${pos}&limit=2&after=${listed.body.nextCursor}`,
  )
  assert.equal(rest.body.items.length, 1)
  assert.equal(rest.body.nextCursor, null)

  // The bank down: nothing recorded, said so.
  await sim.setDown(true)
  const down = await run(m, pos)
  assert.equal(down.bankAnswered, false)
  assert.equal(down.items.length, 3)
})

test('est_v3 and posnet: one order inquiry per order of ours; a lost order and a changed amount are listed once', async (t) => {
  const h = await startTestApp(t)
  const est = await startEstV3Simulator(EST)
  t.after(() => est.close())
  const ykb = await startPosnetSimulator(POSNET)
  t.after(() => ykb.close())
  const m = await h.newMerchant()
  const estPos = await addPos(m, 'est_v3', { ...EST, bank: 'isbank' }, est)
  const ykbPos = await addPos(m, 'posnet', POSNET, ykb)

  await m.client.request('PUT', '/v1/routing', { body: { rules: [], default: [estPos] } })
  const { res: a } = await charge(m.client, CARDS.frictionless, 4_000, { threeDSecure: false })
  const { res: b } = await charge(m.client, CARDS.frictionless, 6_000, { threeDSecure: false })
  await m.client.request('PUT', '/v1/routing', { body: { rules: [], default: [ykbPos] } })
  const { res: c } = await charge(m.client, CARDS.frictionless, 8_000, { threeDSecure: false })
  for (const r of [a, b, c]) assert.equal(r.body.status, 'captured', JSON.stringify(r.body))

  const cleanEst = await run(m, estPos)
  assert.deepEqual([cleanEst.method, cleanEst.checkedOrders, cleanEst.items], ['inquiry', 2, []])
  const cleanYkb = await run(m, ykbPos)
  assert.deepEqual([cleanYkb.method, cleanYkb.checkedOrders, cleanYkb.items], ['inquiry', 1, []])

  // The EST bank lost one order and holds another for a different amount; PosNet lost ours.
  est.orders.delete(a.body.paymentId)
  const changed = est.orders.get(b.body.paymentId)
  assert.ok(changed)
  changed.amount = 6_500
  ykb.orders.clear()
  const estFound = await run(m, estPos)
  assert.deepEqual(
    summary(estFound.items),
    [
      `${a.body.paymentId}:missing_at_bank:`,
      `${b.body.paymentId}:amount_differs:authorized`,
    ].sort(),
  )
  const ykbFound = await run(m, ykbPos)
  assert.deepEqual(summary(ykbFound.items), [`${c.body.paymentId}:missing_at_bank:`])
  await run(m, estPos)
  assert.equal((await mismatchEvents(m)).length, 3)
})

test('the daily reconciler covers the day before once; bad dates, other merchants and platform POS on demand are refused', async (t) => {
  const h = await startTestApp(t)
  const est = await startEstV3Simulator(EST)
  t.after(() => est.close())
  const m = await h.newMerchant()
  const pos = await addPos(m, 'est_v3', { ...EST, bank: 'isbank' }, est)
  const { res } = await charge(m.client, CARDS.frictionless, 2_500, { threeDSecure: false })
  assert.equal(res.body.status, 'captured')
  const day = today()
  est.orders.delete(res.body.paymentId)

  for (const date of ['2026-13-01', '2026-02-30', 'yesterday', '2999-01-01']) {
    const bad = await m.client.request('POST', '/v1/acquirer-reconciliation', {
      body: { date, posAccountId: pos },
    })
    assert.equal(bad.status, 400, date)
  }
  const other = await h.newMerchant()
  const theirs = await other.client.request(
    'GET',
    `/v1/acquirer-reconciliation?date=${day}&posAccountId=${pos}`,
  )
  assert.equal(theirs.status, 404)
  const platform = await h.operator<{ id: string }>('POST', '/operator/v1/pos-accounts', {
    provider: 'est_v3',
    name: 'Platform İşbank',
    environment: 'test',
    credentials: { ...EST, bank: 'isbank' },
    endpoints: { api: est.api, threeDGate: est.threeDGate },
    enabled: false,
  })
  assert.equal(platform.status, 201, JSON.stringify(platform.body))
  const onDemand = await m.client.request('POST', '/v1/acquirer-reconciliation', {
    body: { date: day, posAccountId: platform.body.id },
  })
  assert.equal(onDemand.status, 404)
  const readable = await m.client.request<Recon>(
    'GET',
    `/v1/acquirer-reconciliation?date=${day}&posAccountId=${platform.body.id}`,
  )
  assert.equal(readable.status, 200)
  assert.deepEqual(readable.body.items, [])

  // A day later the worker's reconcilers run: yesterday is reconciled, once.
  h.clock.advance(24 * 3_600_000)
  const first = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(first.status, 200, JSON.stringify(first.body))
  assert.equal(first.body.ran['acquirer.reconcile_pos_days'], 1)
  const second = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(second.body.ran['acquirer.reconcile_pos_days'], 0)
  const listed = await m.client.request<Recon>(
    'GET',
    `/v1/acquirer-reconciliation?date=${day}&posAccountId=${pos}`,
  )
  assert.deepEqual(summary(listed.body.items), [`${res.body.paymentId}:missing_at_bank:`])
  assert.equal((await mismatchEvents(m)).length, 1)
})
