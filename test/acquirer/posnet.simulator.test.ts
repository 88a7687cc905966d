// Goal: the posnet connector and the PosNet simulator speak the same wire format (xmldata
// posnetRequest; the OOS 3D flow with its MACs), and every failure tells the caller whether
// the bank can have authorized.
// Method: a simulator on loopback per test; connector calls over real HTTP; the simulator's
// books say what the bank did.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import {
  fieldsOfAutoPostPage,
  posnetAuthorize,
  posnetAuthorize3d,
  posnetCapture,
  posnetOrderId,
  posnetOrderStatus,
  posnetReturn,
  posnetReverse,
  posnetThreeDForm,
  posnetVerifyCallback,
  startPosnetSimulator,
} from '../../src/modules/acquirer/index.ts'

const CREDENTIALS = {
  merchantId: '6706598320',
  terminalId: '67005551',
  posnetId: '27426',
  encKey: '10,10,10,10,10,10,10,10',
}
const CARD = { pan: '4506349116608409', expMonth: 3, expYear: 2030, cvc: '000' }

async function setup(t: TestContext, answerMs = 2_000) {
  const sim = await startPosnetSimulator(CREDENTIALS)
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
  over: { amount?: number; preAuth?: boolean; pan?: string; installmentCount?: number } = {},
) => ({
  orderId,
  amount: over.amount ?? 10_025,
  installmentCount: over.installmentCount ?? 1,
  preAuth: over.preAuth ?? false,
  card: { ...CARD, pan: over.pan ?? CARD.pan },
})

test('the order id: 20 characters of ours, 24 on the wire', () => {
  assert.equal(posnetOrderId('pay_0123456789abcdefghjkmnpq'), '0000456789abcdefghjkmnpq')
  assert.equal(posnetOrderId('2020110828BC', true), 'TDSC000000002020110828BC')
  assert.equal(posnetOrderId('2020110828BC').length, 24)
})

test('sale approves once per order id; the agreement inquiry tells the same', async (t) => {
  const { sim, config } = await setup(t)
  const first = await posnetAuthorize(config, sale('pay_y1', { installmentCount: 3 }))
  assert.equal(first.kind, 'approved')
  const sent = decodeURIComponent((sim.processed[0]?.body ?? '').replace(/^xmldata=/, ''))
  assert.match(sent, /<posnetRequest><mid>6706598320<\/mid><tid>67005551<\/tid>/)
  assert.match(sent, /<amount>10025<\/amount><currencyCode>TL<\/currencyCode>/)
  assert.match(sent, /<installment>03<\/installment>/)
  assert.match(sent, /<expDate>3003<\/expDate>/)
  const again = await posnetAuthorize(config, sale('pay_y1'))
  assert.equal(again.kind === 'declined' && again.duplicateOrder, true)
  assert.equal(sim.authorizations(), 1)
  const status = await posnetOrderStatus(config, { orderId: 'pay_y1' })
  assert.deepEqual(status, {
    kind: 'approved',
    authCode: first.kind === 'approved' ? first.authCode : '',
    hostReference: first.kind === 'approved' ? first.hostReference : '',
    amount: 10_025,
    voided: false,
  })
  assert.deepEqual(await posnetOrderStatus(config, { orderId: 'pay_none' }), { kind: 'not_found' })
})

test('a declined card comes back declined with the bank code', async (t) => {
  const { sim, config } = await setup(t)
  sim.declines.set('4111111111111111', '0054')
  const insufficient = await posnetAuthorize(config, sale('pay_yd1', { pan: '4000000000009995' }))
  assert.deepEqual(insufficient.kind === 'declined' && insufficient.bankCode, '0051')
  const expired = await posnetAuthorize(config, sale('pay_yd2', { pan: '4111111111111111' }))
  assert.deepEqual(expired.kind === 'declined' && expired.bankCode, '0054')
  const foreign = await posnetAuthorize(
    { ...config, credentials: { ...CREDENTIALS, terminalId: '1' } },
    sale('pay_yd3'),
  )
  assert.deepEqual(foreign.kind === 'declined' && foreign.bankCode, '0148')
})

test('auth, a capt of less, returns up to the captured amount; reverse releases', async (t) => {
  const { sim, config } = await setup(t)
  const auth = await posnetAuthorize(config, sale('pay_yp1', { preAuth: true }))
  assert.equal(auth.kind, 'approved')
  const hostReference = auth.kind === 'approved' ? auth.hostReference : ''
  const order = () => sim.orders.get(posnetOrderId('pay_yp1'))
  assert.equal(order()?.captured, 0)
  assert.equal(
    (await posnetCapture(config, { orderId: 'pay_yp1', hostReference, amount: 8_000 })).kind,
    'approved',
  )
  assert.equal(order()?.captured, 8_000)
  assert.equal(
    (await posnetCapture(config, { orderId: 'pay_yp1', hostReference, amount: 1 })).kind,
    'declined',
  )
  assert.equal((await posnetReturn(config, { orderId: 'pay_yp1', amount: 3_000 })).kind, 'approved')
  assert.equal((await posnetReturn(config, { orderId: 'pay_yp1', amount: 5_001 })).kind, 'declined')
  assert.equal(order()?.refunded, 3_000)

  // A captured auth is reversed capture first, then the auth; an uncaptured one at once.
  await posnetAuthorize(config, sale('pay_yp2', { preAuth: true }))
  assert.equal((await posnetReverse(config, { orderId: 'pay_yp2' })).kind, 'approved')
  const status = await posnetOrderStatus(config, { orderId: 'pay_yp2' })
  assert.equal(status.kind === 'approved' && status.voided, true)
  const s3 = await posnetAuthorize(config, sale('pay_yp3', { preAuth: true }))
  const ref3 = s3.kind === 'approved' ? s3.hostReference : ''
  await posnetCapture(config, { orderId: 'pay_yp3', hostReference: ref3, amount: 10_025 })
  assert.equal((await posnetReverse(config, { orderId: 'pay_yp3' })).kind, 'approved')
  assert.equal(sim.orders.get(posnetOrderId('pay_yp3'))?.voided, true)
  // capt names the authorization's installments again.
  const inst = await posnetAuthorize(
    config,
    sale('pay_yp5', { preAuth: true, installmentCount: 3 }),
  )
  const ref5 = inst.kind === 'approved' ? inst.hostReference : ''
  const capt = (installmentCount: number) =>
    posnetCapture(config, {
      orderId: 'pay_yp5',
      hostReference: ref5,
      amount: 100,
      installmentCount,
    })
  assert.equal((await capt(1)).kind, 'declined')
  assert.equal((await capt(3)).kind, 'approved')
  await posnetAuthorize(config, sale('pay_yp4'))
  assert.equal((await posnetReverse(config, { orderId: 'pay_yp4' })).kind, 'approved')
  assert.equal((await posnetReverse(config, { orderId: 'pay_none' })).kind, 'declined')
})

async function throughGate(
  config: Parameters<typeof posnetThreeDForm>[0],
  orderId: string,
  amount: number,
  pan = CARD.pan,
) {
  const made = await posnetThreeDForm(config, {
    ...sale(orderId, { amount, pan }),
    returnUrl: 'https://pay.example/back',
  })
  assert.ok(made.ok)
  const page = await fetch(made.form.action, {
    method: 'POST',
    body: new URLSearchParams(made.form.fields),
  })
  return fieldsOfAutoPostPage(await page.text())
}

test('3D (OOS): encrypted form, resolved and MAC-checked callback, oosTranData; a replay authorizes nothing more', async (t) => {
  const { sim, config } = await setup(t)
  const callback = await throughGate(config, 'pay_y3d1', 10_025)
  assert.equal(callback.action, 'https://pay.example/back')
  assert.equal(JSON.stringify(callback.fields).includes(CARD.pan), false)
  const expected = { orderId: 'pay_y3d1', amount: 10_025 }
  const checked = await posnetVerifyCallback(config, callback.fields, expected)
  assert.ok(checked.ok && checked.authenticated, JSON.stringify(checked))
  const p = { ...expected, authentication: checked.authentication }
  assert.equal((await posnetAuthorize3d(config, p)).kind, 'approved')
  const replay = await posnetAuthorize3d(config, p)
  assert.equal(replay.kind === 'declined' && replay.duplicateOrder, true)
  assert.equal(sim.authorizations(), 1)
  assert.equal(sim.orders.get(posnetOrderId('pay_y3d1', true))?.amount, 10_025)
})

test('a callback with a wrong sign or of a changed amount is refused, and nothing is authorized on it', async (t) => {
  const { sim, config } = await setup(t)
  const { fields } = await throughGate(config, 'pay_y3h1', 10_025)
  const expected = { orderId: 'pay_y3h1', amount: 10_025 }
  assert.deepEqual(
    await posnetVerifyCallback(config, { ...fields, Sign: 'AB'.repeat(16) }, expected),
    {
      ok: false,
      reason: 'hash_mismatch',
    },
  )
  // The genuine packets of a 1-lira order offered for the 100.25-lira payment: our MAC is
  // over our amount, so the bank refuses to resolve them.
  const cheap = await throughGate(config, 'pay_y3h2', 100)
  assert.deepEqual(
    await posnetVerifyCallback(config, cheap.fields, { orderId: 'pay_y3h2', amount: 10_025 }),
    { ok: false, reason: 'hash_mismatch' },
  )
  // And a payment can't be made with them for the changed amount either.
  const tran = await posnetAuthorize3d(config, {
    orderId: 'pay_y3h2',
    amount: 10_025,
    authentication: {
      bankData: cheap.fields['BankPacket'] ?? '',
      merchantData: cheap.fields['MerchantPacket'] ?? '',
      sign: cheap.fields['Sign'] ?? '',
    },
  })
  assert.deepEqual(tran.kind === 'declined' && tran.bankCode, 'E216')
  assert.equal(sim.authorizations(), 0)
  assert.equal(sim.orders.size, 0)
  // A resolved answer whose MAC is not the bank's: the verifier's own check. A key other
  // than the bank's gives another MAC.
  const otherKey = { ...config, credentials: { ...CREDENTIALS, encKey: '1,2,3,4,5,6,7,8' } }
  const good = await throughGate(config, 'pay_y3h3', 10_025)
  assert.deepEqual(
    await posnetVerifyCallback(otherKey, good.fields, { orderId: 'pay_y3h3', amount: 10_025 }),
    { ok: false, reason: 'hash_mismatch' },
  )
})

test('3D authentication that fails: mdStatus 0, not authenticated, no payment', async (t) => {
  const { config } = await setup(t)
  const callback = await throughGate(config, 'pay_y3f1', 10_025, '4000000000003063')
  const expected = { orderId: 'pay_y3f1', amount: 10_025 }
  const checked = await posnetVerifyCallback(config, callback.fields, expected)
  assert.ok(checked.ok && !checked.authenticated && checked.mdStatus === '0')
  const tran = await posnetAuthorize3d(config, {
    ...expected,
    authentication: checked.authentication,
  })
  assert.equal(tran.kind, 'declined')
})

test('bank down (connection refused) and 5xx: not sent, nothing authorized', async (t) => {
  const { sim, config } = await setup(t)
  await sim.setDown(true)
  assert.equal((await posnetAuthorize(config, sale('pay_yf1'))).kind, 'not_sent')
  assert.equal((await posnetReverse(config, { orderId: 'pay_yf1' })).kind, 'not_sent')
  await sim.setDown(false)
  sim.faults.http5xx = true
  assert.equal((await posnetAuthorize(config, sale('pay_yf2'))).kind, 'not_sent')
  sim.faults.http5xx = false
  assert.equal(sim.authorizations(), 0)
  assert.equal((await posnetAuthorize(config, sale('pay_yf2'))).kind, 'approved')
})

test('timeout before the bank acted: unknown, and the inquiry finds no order', async (t) => {
  const { sim, config } = await setup(t, 300)
  sim.faults.hangBeforeProcessing = true
  assert.equal((await posnetAuthorize(config, sale('pay_yt1'))).kind, 'unknown')
  sim.faults.hangBeforeProcessing = false
  assert.deepEqual(await posnetOrderStatus(config, { orderId: 'pay_yt1' }), { kind: 'not_found' })
})

test('timeout after the bank acted, and a malformed answer: unknown; the inquiry finds the approval', async (t) => {
  const { sim, config } = await setup(t, 300)
  sim.faults.hangAfterProcessing = true
  assert.equal((await posnetAuthorize(config, sale('pay_yt2'))).kind, 'unknown')
  sim.faults.hangAfterProcessing = false
  assert.equal((await posnetOrderStatus(config, { orderId: 'pay_yt2' })).kind, 'approved')
  sim.faults.malformed = true
  assert.equal((await posnetAuthorize(config, sale('pay_yt3'))).kind, 'unknown')
  sim.faults.malformed = false
  assert.equal((await posnetOrderStatus(config, { orderId: 'pay_yt3' })).kind, 'approved')
  assert.equal(sim.authorizations(), 2)
})

test('a slow answer within the timeout is an answer', async (t) => {
  const { sim, config } = await setup(t, 2_000)
  sim.faults.delayMs = 200
  assert.equal((await posnetAuthorize(config, sale('pay_ys1'))).kind, 'approved')
})
