// Goal: the garanti connector and the Garanti (GVPS) simulator speak the same wire format
// (GVPSRequest with HashData over the hashed password; gt3dengine's form and callback hash),
// and every failure tells the caller whether the bank can have authorized.
// Method: a simulator on loopback per test; connector calls over real HTTP; the simulator's
// books say what the bank did. The simulator checks HashData itself, so a wrong password
// or a wrong hash shape is refused.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import {
  fieldsOfAutoPostPage,
  garantiAuthorize,
  garantiAuthorize3d,
  garantiOrderInquiry,
  garantiPostAuth,
  garantiRefund,
  garantiThreeDForm,
  garantiVerifyCallback,
  garantiVoid,
  startGarantiSimulator,
} from '../../src/modules/acquirer/index.ts'

const CREDENTIALS = {
  merchantId: '7000679',
  terminalId: '30691298',
  provisionUser: 'PROVAUT',
  provisionPassword: '123qweASD/',
  storeKey: '12345678',
  refundUser: 'PROVRFN',
  refundPassword: 'rfn-Secret1',
}
const CARD = { pan: '4282209004348015', expMonth: 12, expYear: 2030, cvc: '123' }

async function setup(t: TestContext, answerMs = 2_000) {
  const sim = await startGarantiSimulator(CREDENTIALS)
  t.after(() => sim.close())
  const config = {
    credentials: CREDENTIALS,
    endpoints: { api: sim.api, threeDGate: sim.threeDGate },
    mode: 'TEST' as const,
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

test('sales approves once per order id; the order inquiry tells the same', async (t) => {
  const { sim, config } = await setup(t)
  const first = await garantiAuthorize(config, sale('pay_g1', { installmentCount: 3 }))
  assert.equal(first.kind, 'approved')
  assert.ok(first.kind === 'approved' && /^\d{6}$/.test(first.authCode))
  const again = await garantiAuthorize(config, sale('pay_g1'))
  assert.equal(again.kind === 'declined' && again.duplicateOrder, true)
  assert.equal(sim.authorizations(), 1)
  assert.equal(sim.orders.get('pay_g1')?.amount, 10_025)
  // The request carried the kuruş amount, 949, the installments and the HashData.
  const sent = sim.processed[0]?.body ?? ''
  assert.match(sent, /<Amount>10025<\/Amount>/)
  assert.match(sent, /<CurrencyCode>949<\/CurrencyCode>/)
  assert.match(sent, /<InstallmentCnt>3<\/InstallmentCnt>/)
  assert.match(sent, /<HashData>[0-9A-F]{128}<\/HashData>/)
  assert.equal(sent.includes(CREDENTIALS.provisionPassword), false)
  const status = await garantiOrderInquiry(config, { orderId: 'pay_g1' })
  assert.deepEqual(status, {
    kind: 'approved',
    authCode: first.kind === 'approved' ? first.authCode : '',
    hostReference: first.kind === 'approved' ? first.hostReference : '',
    amount: 10_025,
    voided: false,
  })
  assert.deepEqual(await garantiOrderInquiry(config, { orderId: 'pay_none' }), {
    kind: 'not_found',
  })
})

test('a wrong provision password is refused by the bank (HashData)', async (t) => {
  const { sim, config } = await setup(t)
  const wrong = {
    ...config,
    credentials: { ...CREDENTIALS, provisionPassword: 'not-it' },
  }
  const outcome = await garantiAuthorize(wrong, sale('pay_gw'))
  assert.deepEqual(outcome.kind === 'declined' && outcome.bankCode, '0651')
  assert.equal(sim.authorizations(), 0)
})

test('a declined card comes back declined with the host code; the inquiry says declined', async (t) => {
  const { sim, config } = await setup(t)
  sim.declines.set('4111111111111111', '54')
  const insufficient = await garantiAuthorize(config, sale('pay_gd1', { pan: '4000000000009995' }))
  assert.deepEqual(insufficient.kind === 'declined' && insufficient.bankCode, '51')
  const expired = await garantiAuthorize(config, sale('pay_gd2', { pan: '4111111111111111' }))
  assert.deepEqual(expired.kind === 'declined' && expired.bankCode, '54')
  assert.deepEqual(await garantiOrderInquiry(config, { orderId: 'pay_gd1' }), {
    kind: 'declined',
    bankCode: '51',
  })
})

test('preauth, a postauth of less, refunds up to the captured amount (refund user); void releases', async (t) => {
  const { sim, config } = await setup(t)
  const auth = await garantiAuthorize(config, sale('pay_gp1', { preAuth: true }))
  assert.equal(auth.kind, 'approved')
  const hostReference = auth.kind === 'approved' ? auth.hostReference : ''
  assert.equal(sim.orders.get('pay_gp1')?.captured, 0)
  const waiting = await garantiOrderInquiry(config, { orderId: 'pay_gp1' })
  assert.equal(waiting.kind === 'approved' && waiting.amount, 10_025)
  const cap = await garantiPostAuth(config, { orderId: 'pay_gp1', hostReference, amount: 8_000 })
  assert.equal(cap.kind, 'approved')
  assert.equal(sim.orders.get('pay_gp1')?.captured, 8_000)
  const second = await garantiPostAuth(config, { orderId: 'pay_gp1', hostReference, amount: 1 })
  assert.equal(second.kind, 'declined')
  const part = await garantiRefund(config, { orderId: 'pay_gp1', hostReference, amount: 3_000 })
  assert.equal(part.kind, 'approved')
  assert.match(sim.processed.at(-1)?.body ?? '', /<ProvUserID>PROVRFN<\/ProvUserID>/)
  const over = await garantiRefund(config, { orderId: 'pay_gp1', hostReference, amount: 5_001 })
  assert.deepEqual(over.kind === 'declined' && over.bankCode, '0208')
  assert.equal(sim.orders.get('pay_gp1')?.refunded, 3_000)

  const other = await garantiAuthorize(config, sale('pay_gp2', { preAuth: true }))
  const ref2 = other.kind === 'approved' ? other.hostReference : ''
  assert.equal(
    (await garantiVoid(config, { orderId: 'pay_gp2', hostReference: ref2 })).kind,
    'approved',
  )
  const status = await garantiOrderInquiry(config, { orderId: 'pay_gp2' })
  assert.equal(status.kind === 'approved' && status.voided, true)
  const late = await garantiPostAuth(config, {
    orderId: 'pay_gp2',
    hostReference: ref2,
    amount: 100,
  })
  assert.equal(late.kind, 'declined')
  // Void and refund are signed with the refund password: the provision one is refused.
  const wrongRefund = {
    ...config,
    credentials: { ...CREDENTIALS, refundPassword: CREDENTIALS.provisionPassword },
  }
  const refused = await garantiRefund(wrongRefund, { orderId: 'pay_gp1', amount: 100 })
  assert.deepEqual(refused.kind === 'declined' && refused.bankCode, '0651')
})

async function throughGate(
  config: Parameters<typeof garantiThreeDForm>[0],
  orderId: string,
  amount: number,
  pan = CARD.pan,
) {
  const form = garantiThreeDForm(config, {
    ...sale(orderId, { amount, pan }),
    successUrl: 'https://pay.example/ok',
    errorUrl: 'https://pay.example/fail',
  })
  const page = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })
  return fieldsOfAutoPostPage(await page.text())
}

test('3D model: form to gt3dengine, verified callback, sales with Secure3D; a replayed callback authorizes nothing more', async (t) => {
  const { sim, config } = await setup(t)
  const callback = await throughGate(config, 'pay_g3d1', 10_025)
  assert.equal(callback.action, 'https://pay.example/ok')
  assert.equal(callback.fields['cardnumber'], undefined)
  const checked = garantiVerifyCallback(config, callback.fields, {
    orderId: 'pay_g3d1',
    amount: 10_025,
  })
  assert.ok(checked.ok && checked.authenticated)
  const p = {
    orderId: 'pay_g3d1',
    amount: 10_025,
    installmentCount: 1,
    preAuth: false,
    authentication: checked.authentication,
  }
  assert.equal((await garantiAuthorize3d(config, p)).kind, 'approved')
  assert.match(
    sim.processed.at(-1)?.body ?? '',
    /<CardholderPresentCode>13<\/CardholderPresentCode>/,
  )
  const replay = await garantiAuthorize3d(config, p)
  assert.equal(replay.kind === 'declined' && replay.duplicateOrder, true)
  assert.equal(sim.authorizations(), 1)
  assert.equal(sim.orders.get('pay_g3d1')?.pan, CARD.pan)
})

test('a callback with a wrong hash or a changed amount is refused, and nothing is authorized on it', async (t) => {
  const { sim, config } = await setup(t)
  const { fields } = await throughGate(config, 'pay_g3h1', 10_025)
  const expected = { orderId: 'pay_g3h1', amount: 10_025 }
  assert.deepEqual(garantiVerifyCallback(config, { ...fields, txnamount: '100' }, expected), {
    ok: false,
    reason: 'hash_mismatch',
  })
  assert.deepEqual(garantiVerifyCallback(config, { ...fields, hash: 'AB'.repeat(64) }, expected), {
    ok: false,
    reason: 'hash_mismatch',
  })
  assert.deepEqual(garantiVerifyCallback(config, { ...fields, mdstatus: '1', md: 'x' }, expected), {
    ok: false,
    reason: 'hash_mismatch',
  })
  // A genuine callback of a 1-lira order offered for the 100.25-lira payment.
  const cheap = await throughGate(config, 'pay_g3h2', 100)
  assert.deepEqual(
    garantiVerifyCallback(config, cheap.fields, { orderId: 'pay_g3h2', amount: 10_025 }),
    { ok: false, reason: 'amount_mismatch' },
  )
  assert.deepEqual(garantiVerifyCallback(config, cheap.fields, expected), {
    ok: false,
    reason: 'order_mismatch',
  })
  assert.equal(sim.authorizations(), 0)
  assert.equal(sim.orders.size, 0)
})

test('3D authentication that fails goes to errorurl with mdstatus 0: not authenticated', async (t) => {
  const { config } = await setup(t)
  const callback = await throughGate(config, 'pay_g3f1', 10_025, '4000000000003063')
  assert.equal(callback.action, 'https://pay.example/fail')
  const checked = garantiVerifyCallback(config, callback.fields, {
    orderId: 'pay_g3f1',
    amount: 10_025,
  })
  assert.ok(checked.ok && !checked.authenticated && checked.mdStatus === '0')
})

test('a gate form with a wrong hash is refused by the gate', async (t) => {
  const { config } = await setup(t)
  const form = garantiThreeDForm(
    { ...config, credentials: { ...CREDENTIALS, storeKey: 'wrong' } },
    { ...sale('pay_g3w'), successUrl: 'https://a/ok', errorUrl: 'https://a/fail' },
  )
  const page = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })
  assert.equal(page.status, 400)
})

test('bank down (connection refused) and 5xx: not sent, nothing authorized', async (t) => {
  const { sim, config } = await setup(t)
  await sim.setDown(true)
  assert.equal((await garantiAuthorize(config, sale('pay_gf1'))).kind, 'not_sent')
  assert.equal((await garantiOrderInquiry(config, { orderId: 'pay_gf1' })).kind, 'not_sent')
  await sim.setDown(false)
  sim.faults.http5xx = true
  assert.equal((await garantiAuthorize(config, sale('pay_gf2'))).kind, 'not_sent')
  sim.faults.http5xx = false
  assert.equal(sim.authorizations(), 0)
  assert.equal((await garantiAuthorize(config, sale('pay_gf2'))).kind, 'approved')
})

test('timeout before the bank acted: unknown, and the inquiry finds no order', async (t) => {
  const { sim, config } = await setup(t, 300)
  sim.faults.hangBeforeProcessing = true
  assert.equal((await garantiAuthorize(config, sale('pay_gt1'))).kind, 'unknown')
  sim.faults.hangBeforeProcessing = false
  assert.deepEqual(await garantiOrderInquiry(config, { orderId: 'pay_gt1' }), { kind: 'not_found' })
})

test('timeout after the bank acted, and a malformed answer: unknown; the inquiry finds the approval', async (t) => {
  const { sim, config } = await setup(t, 300)
  sim.faults.hangAfterProcessing = true
  assert.equal((await garantiAuthorize(config, sale('pay_gt2'))).kind, 'unknown')
  sim.faults.hangAfterProcessing = false
  assert.equal((await garantiOrderInquiry(config, { orderId: 'pay_gt2' })).kind, 'approved')
  sim.faults.malformed = true
  assert.equal((await garantiAuthorize(config, sale('pay_gt3'))).kind, 'unknown')
  assert.equal((await garantiOrderInquiry(config, { orderId: 'pay_gt3' })).kind, 'unknown')
  sim.faults.malformed = false
  assert.equal((await garantiOrderInquiry(config, { orderId: 'pay_gt3' })).kind, 'approved')
  assert.equal(sim.authorizations(), 2)
})

test('a slow answer within the timeout is an answer', async (t) => {
  const { sim, config } = await setup(t, 2_000)
  sim.faults.delayMs = 200
  assert.equal((await garantiAuthorize(config, sale('pay_gs1'))).kind, 'approved')
})
