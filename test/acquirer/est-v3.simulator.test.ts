// Goal: the est_v3 connector and the EST simulator speak the same wire format, and every
// failure tells the caller whether the bank can have authorized (failover is safe only when
// it surely did not).
// Method: a simulator on loopback per test; connector calls over real HTTP; the simulator's
// books say what the bank did.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import {
  estV3Authorize,
  estV3Authorize3d,
  estV3Credit,
  estV3OrderStatus,
  estV3PostAuth,
  estV3ThreeDForm,
  estV3VerifyCallback,
  estV3Void,
  fieldsOfAutoPostPage,
  startEstV3Simulator,
} from '../../src/modules/acquirer/index.ts'

const CREDENTIALS = {
  clientId: '700655000200',
  username: 'ISBANKAPI',
  password: 'ISBANK07',
  storeKey: 'TRPS0200',
}
const CARD = { pan: '4355084355084358', expMonth: 12, expYear: 2030, cvc: '000' }

async function setup(t: TestContext, answerMs = 2_000) {
  const sim = await startEstV3Simulator(CREDENTIALS)
  t.after(() => sim.close())
  const config = {
    credentials: CREDENTIALS,
    endpoints: { api: sim.api, threeDGate: sim.threeDGate },
    timeouts: { connectMs: 1_000, answerMs },
  }
  return { sim, config }
}

const sale = (
  orderId: string,
  over: { amount?: number; preAuth?: boolean; pan?: string } = {},
) => ({
  orderId,
  amount: over.amount ?? 10_025,
  installmentCount: 1,
  preAuth: over.preAuth ?? false,
  card: { ...CARD, pan: over.pan ?? CARD.pan },
})

test('Auth approves once per order id; the order status tells the same', async (t) => {
  const { sim, config } = await setup(t)
  const first = await estV3Authorize(config, sale('pay_a1'))
  assert.equal(first.kind, 'approved')
  assert.ok(first.kind === 'approved' && /^P\d{5}$/.test(first.authCode))
  // A retry of the same order is refused by the bank: never a second authorization.
  const again = await estV3Authorize(config, sale('pay_a1'))
  assert.deepEqual(again.kind === 'declined' && again.bankCode, 'CORE-2008')
  assert.equal(sim.authorizations(), 1)
  assert.equal(sim.orders.get('pay_a1')?.amount, 10_025)
  const status = await estV3OrderStatus(config, { orderId: 'pay_a1' })
  assert.deepEqual(status, {
    kind: 'approved',
    authCode: first.kind === 'approved' ? first.authCode : '',
    hostReference: first.kind === 'approved' ? first.hostReference : '',
    amount: 10_025,
    voided: false,
  })
  assert.deepEqual(await estV3OrderStatus(config, { orderId: 'pay_none' }), { kind: 'not_found' })
})

test('a declined card comes back declined with the bank code; the inquiry says declined', async (t) => {
  const { sim, config } = await setup(t)
  sim.declines.set('4111111111111111', '54')
  const insufficient = await estV3Authorize(config, sale('pay_d1', { pan: '4000000000009995' }))
  assert.deepEqual(insufficient.kind === 'declined' && insufficient.bankCode, 'ISO8583-51')
  const expired = await estV3Authorize(config, sale('pay_d2', { pan: '4111111111111111' }))
  assert.deepEqual(expired.kind === 'declined' && expired.bankCode, 'ISO8583-54')
  assert.deepEqual(await estV3OrderStatus(config, { orderId: 'pay_d1' }), {
    kind: 'declined',
    bankCode: '51',
  })
})

test('PreAuth, a PostAuth of less, a Credit up to the captured amount; Void releases', async (t) => {
  const { sim, config } = await setup(t)
  assert.equal((await estV3Authorize(config, sale('pay_p1', { preAuth: true }))).kind, 'approved')
  assert.equal(sim.orders.get('pay_p1')?.captured, 0)
  assert.equal((await estV3PostAuth(config, { orderId: 'pay_p1', amount: 8_000 })).kind, 'approved')
  assert.equal(sim.orders.get('pay_p1')?.captured, 8_000)
  assert.equal((await estV3Credit(config, { orderId: 'pay_p1', amount: 3_000 })).kind, 'approved')
  const over = await estV3Credit(config, { orderId: 'pay_p1', amount: 5_001 })
  assert.equal(over.kind, 'declined')
  assert.equal(sim.orders.get('pay_p1')?.refunded, 3_000)

  assert.equal((await estV3Authorize(config, sale('pay_p2', { preAuth: true }))).kind, 'approved')
  assert.equal((await estV3Void(config, { orderId: 'pay_p2' })).kind, 'approved')
  const status = await estV3OrderStatus(config, { orderId: 'pay_p2' })
  assert.equal(status.kind === 'approved' && status.voided, true)
  assert.equal((await estV3PostAuth(config, { orderId: 'pay_p2', amount: 100 })).kind, 'declined')
})

test('3D model: form to the gate, verified callback, Auth with md; a replayed callback authorizes nothing more', async (t) => {
  const { sim, config } = await setup(t)
  const form = estV3ThreeDForm(config, {
    ...sale('pay_3d1'),
    model: '3d',
    okUrl: 'https://pay.example/ok',
    failUrl: 'https://pay.example/fail',
  })
  const page = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })
  const callback = fieldsOfAutoPostPage(await page.text())
  assert.equal(callback.action, 'https://pay.example/ok')
  assert.equal(callback.fields['pan'], undefined)
  const checked = estV3VerifyCallback(config, callback.fields, {
    orderId: 'pay_3d1',
    amount: 10_025,
  })
  assert.ok(checked.ok && checked.authenticated && checked.payment === undefined)
  const auth = await estV3Authorize3d(config, {
    orderId: 'pay_3d1',
    amount: 10_025,
    installmentCount: 1,
    preAuth: false,
    authentication: checked.authentication,
  })
  assert.equal(auth.kind, 'approved')
  // The same callback posted again (the browser's back button, a double submit).
  const replay = await estV3Authorize3d(config, {
    orderId: 'pay_3d1',
    amount: 10_025,
    installmentCount: 1,
    preAuth: false,
    authentication: checked.authentication,
  })
  assert.equal(replay.kind, 'declined')
  assert.equal(sim.authorizations(), 1)
})

test('3D Pay: the gate authorizes; a callback with a changed amount or a wrong hash is refused', async (t) => {
  const { sim, config } = await setup(t)
  const form = estV3ThreeDForm(config, {
    ...sale('pay_3p1'),
    model: '3d_pay',
    okUrl: 'https://pay.example/ok',
    failUrl: 'https://pay.example/fail',
  })
  const page = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })
  const { fields } = fieldsOfAutoPostPage(await page.text())
  const expected = { orderId: 'pay_3p1', amount: 10_025 }
  const checked = estV3VerifyCallback(config, fields, expected)
  assert.equal(checked.ok && checked.payment?.kind, 'approved')
  assert.deepEqual(estV3VerifyCallback(config, { ...fields, amount: '1.00' }, expected), {
    ok: false,
    reason: 'hash_mismatch',
  })
  assert.deepEqual(estV3VerifyCallback(config, { ...fields, HASH: 'AAAA' }, expected), {
    ok: false,
    reason: 'hash_mismatch',
  })
  // A genuine callback of a 1-lira order offered for a 100.25-lira payment.
  const cheap = estV3ThreeDForm(config, {
    ...sale('pay_3p2', { amount: 100 }),
    model: '3d_pay',
    okUrl: 'https://pay.example/ok',
    failUrl: 'https://pay.example/fail',
  })
  const cheapPage = await fetch(cheap.action, {
    method: 'POST',
    body: new URLSearchParams(cheap.fields),
  })
  const cheapFields = fieldsOfAutoPostPage(await cheapPage.text()).fields
  assert.deepEqual(
    estV3VerifyCallback(config, cheapFields, { orderId: 'pay_3p2', amount: 10_025 }),
    {
      ok: false,
      reason: 'amount_mismatch',
    },
  )
  assert.deepEqual(estV3VerifyCallback(config, cheapFields, expected), {
    ok: false,
    reason: 'order_mismatch',
  })
  assert.equal(sim.orders.get('pay_3p2')?.captured, 100)
  assert.equal(sim.orders.get('pay_3p1')?.captured, 10_025)
})

test('3D authentication that fails goes to failUrl with mdStatus 0: not authenticated', async (t) => {
  const { config } = await setup(t)
  const form = estV3ThreeDForm(config, {
    ...sale('pay_3f1', { pan: '4000000000003063' }),
    model: '3d',
    okUrl: 'https://pay.example/ok',
    failUrl: 'https://pay.example/fail',
  })
  const page = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })
  const callback = fieldsOfAutoPostPage(await page.text())
  assert.equal(callback.action, 'https://pay.example/fail')
  const checked = estV3VerifyCallback(config, callback.fields, {
    orderId: 'pay_3f1',
    amount: 10_025,
  })
  assert.ok(checked.ok && !checked.authenticated && checked.mdStatus === '0')
})

test('a gate form with a wrong hash is refused by the gate', async (t) => {
  const { config } = await setup(t)
  const form = estV3ThreeDForm(
    { ...config, credentials: { ...CREDENTIALS, storeKey: 'wrong' } },
    { ...sale('pay_3h1'), model: '3d', okUrl: 'https://a/ok', failUrl: 'https://a/fail' },
  )
  const page = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })
  assert.equal(page.status, 400)
})

test('bank down (connection refused) and 5xx: not sent, nothing authorized', async (t) => {
  const { sim, config } = await setup(t)
  await sim.setDown(true)
  assert.equal((await estV3Authorize(config, sale('pay_f1'))).kind, 'not_sent')
  await sim.setDown(false)
  sim.faults.http5xx = true
  assert.equal((await estV3Authorize(config, sale('pay_f2'))).kind, 'not_sent')
  sim.faults.http5xx = false
  assert.equal(sim.authorizations(), 0)
  assert.equal((await estV3Authorize(config, sale('pay_f2'))).kind, 'approved')
})

test('timeout before the bank acted: unknown, and the inquiry finds no order', async (t) => {
  const { sim, config } = await setup(t, 300)
  sim.faults.hangBeforeProcessing = true
  assert.equal((await estV3Authorize(config, sale('pay_t1'))).kind, 'unknown')
  sim.faults.hangBeforeProcessing = false
  assert.deepEqual(await estV3OrderStatus(config, { orderId: 'pay_t1' }), { kind: 'not_found' })
})

test('timeout after the bank acted, and a malformed answer: unknown; the inquiry finds the approval', async (t) => {
  const { sim, config } = await setup(t, 300)
  sim.faults.hangAfterProcessing = true
  assert.equal((await estV3Authorize(config, sale('pay_t2'))).kind, 'unknown')
  sim.faults.hangAfterProcessing = false
  const found = await estV3OrderStatus(config, { orderId: 'pay_t2' })
  assert.equal(found.kind, 'approved')

  sim.faults.malformed = true
  assert.equal((await estV3Authorize(config, sale('pay_t3'))).kind, 'unknown')
  sim.faults.malformed = false
  assert.equal((await estV3OrderStatus(config, { orderId: 'pay_t3' })).kind, 'approved')
  assert.equal(sim.authorizations(), 2)
})

test('a slow answer within the timeout is an answer', async (t) => {
  const { sim, config } = await setup(t, 2_000)
  sim.faults.delayMs = 200
  assert.equal((await estV3Authorize(config, sale('pay_s1'))).kind, 'approved')
})

test('no route to the bank (connect timeout or unreachable): not sent', async () => {
  const outcome = await estV3Authorize(
    {
      credentials: CREDENTIALS,
      // TEST-NET-1 (RFC 5737): never routed, so the connection cannot stand.
      endpoints: { api: 'http://192.0.2.1/fim/api', threeDGate: 'http://192.0.2.1/gate' },
      timeouts: { connectMs: 200, answerMs: 1_000 },
    },
    sale('pay_n1'),
  )
  assert.equal(outcome.kind, 'not_sent')
})
