// Goal: POS accounts per CONTRACT (credentials sealed, never returned or logged), charges
// routed to a bank POS (its simulator on loopback) with captures, voids and refunds going to
// the POS that authorized, failover only when the bank surely did not authorize, and live
// never reaching the sandbox bank.
// Method: signed HTTP against a real database; EST simulators on loopback as the banks; the
// simulators' books and the acquirer's tables say what the banks did.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { startEstV3Simulator, type EstV3Simulator } from '../../src/modules/acquirer/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

const CREDENTIALS = {
  clientId: '700655000200',
  username: 'ISBANKAPI',
  password: 'ISBANK07-secret',
  storeKey: 'TRPS0200-storekey',
}

interface PosView {
  id: string
  owner: string
  provider: string
  bank: string
  name: string
  environment: string
  installmentPrograms: string[]
  enabled: boolean
  createdAt: string
  [k: string]: unknown
}

async function simulator(t: TestContext): Promise<EstV3Simulator> {
  const sim = await startEstV3Simulator(CREDENTIALS)
  t.after(() => sim.close())
  return sim
}

async function addPos(
  m: TestMerchant,
  sim: EstV3Simulator,
  over: Record<string, unknown> = {},
): Promise<PosView> {
  const res = await m.client.request<PosView>('POST', '/v1/pos-accounts', {
    body: {
      provider: 'est_v3',
      name: 'İşbank sanal POS',
      environment: 'test',
      credentials: { ...CREDENTIALS, bank: 'isbank' },
      endpoints: { api: sim.api, threeDGate: sim.threeDGate },
      ...over,
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

async function setup(t: TestContext) {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  return { h, m }
}

async function posPayment(h: TestApp, paymentId: string) {
  return h.deps.db
    .selectFrom('acquirer_pos_payments')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .executeTakeFirst()
}

test('a POS account is created, listed, changed and disabled; credentials never come back or reach the logs', async (t) => {
  const { h, m } = await setup(t)
  const sim = await simulator(t)
  const created = await addPos(m, sim)
  assert.match(created.id, /^pos_/)
  assert.deepEqual(
    { ...created, id: undefined, createdAt: undefined },
    {
      id: undefined,
      createdAt: undefined,
      owner: 'merchant',
      provider: 'est_v3',
      bank: 'isbank',
      name: 'İşbank sanal POS',
      environment: 'test',
      installmentPrograms: ['maximum'],
      enabled: true,
    },
  )
  const list = await m.client.request<{ items: PosView[] }>('GET', '/v1/pos-accounts')
  assert.deepEqual(
    list.body.items.map((a) => a.id),
    [created.id],
  )
  const patched = await m.client.request<PosView>('PATCH', `/v1/pos-accounts/${created.id}`, {
    body: { enabled: false, installmentPrograms: ['maximum', 'bonus'] },
  })
  assert.equal(patched.status, 200)
  assert.equal(patched.body.enabled, false)
  assert.deepEqual(patched.body.installmentPrograms, ['maximum', 'bonus'])
  const other = await h.newMerchant()
  const foreign = await other.client.request('GET', `/v1/pos-accounts/${created.id}`)
  assert.equal(foreign.status, 404)
  const deleted = await m.client.request('DELETE', `/v1/pos-accounts/${created.id}`)
  assert.equal(deleted.status, 204)
  const after = await m.client.request<{ items: PosView[] }>('GET', '/v1/pos-accounts')
  assert.deepEqual(after.body.items, [])

  const row = await h.deps.db
    .selectFrom('acquirer_pos_accounts')
    .selectAll()
    .where('id', '=', created.id)
    .executeTakeFirstOrThrow()
  const everything = JSON.stringify([list.body, patched.body, row, h.logs])
  for (const secret of Object.values(CREDENTIALS)) {
    assert.equal(everything.includes(secret), false, `${secret} leaked`)
  }
  assert.equal(row.enabled, false)
})

test('bad POS accounts are refused with the field named, and nothing is stored', async (t) => {
  const { h, m } = await setup(t)
  const sim = await simulator(t)
  const bad = [
    [{ provider: 'visa' }, 'provider'],
    [{ provider: 'garanti' }, 'credentials.merchantId'],
    [{ provider: 'posnet' }, 'credentials.posnetId'],
    [{ credentials: { ...CREDENTIALS, bank: 'mybank' } }, 'credentials.bank'],
    [{ credentials: { bank: 'isbank', clientId: 'x' } }, 'credentials.username'],
    [{ installmentPrograms: ['gold'] }, 'installmentPrograms[0]'],
    [{ endpoints: { api: 'ftp://x', threeDGate: 'http://x' } }, 'endpoints.api'],
  ] as const
  for (const [over, field] of bad) {
    const res = await m.client.request<{ code: string; details: { field: string }[] }>(
      'POST',
      '/v1/pos-accounts',
      {
        body: {
          provider: 'est_v3',
          name: 'x',
          environment: 'test',
          credentials: { ...CREDENTIALS, bank: 'isbank' },
          endpoints: { api: sim.api, threeDGate: sim.threeDGate },
          ...over,
        },
      },
    )
    assert.equal(res.status, 400, JSON.stringify(over))
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.ok(
      res.body.details.some((d) => d.field === field),
      `${field} in ${JSON.stringify(res.body)}`,
    )
  }
  const count = await h.deps.db
    .selectFrom('acquirer_pos_accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', m.merchantId)
    .executeTakeFirstOrThrow()
  assert.equal(count.n, 0)
})

test('the operator adds a platform POS that every merchant sees and may route to', async (t) => {
  const { h, m } = await setup(t)
  const sim = await simulator(t)
  const res = await h.operator<PosView>('POST', '/operator/v1/pos-accounts', {
    provider: 'est_v3',
    name: 'Platform Halkbank',
    environment: 'test',
    credentials: { ...CREDENTIALS, bank: 'halkbank' },
    endpoints: { api: sim.api, threeDGate: sim.threeDGate },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.owner, 'platform')
  // Offered to every merchant of this file's database: gone when the test ends.
  t.after(async () => {
    await h.operator('DELETE', `/operator/v1/pos-accounts/${res.body.id}`)
  })
  const seen = await m.client.request<{ items: PosView[] }>('GET', '/v1/pos-accounts')
  assert.deepEqual(
    seen.body.items.map((a) => [a.id, a.owner]),
    [[res.body.id, 'platform']],
  )
  // A merchant cannot change the platform's account.
  const patch = await m.client.request('PATCH', `/v1/pos-accounts/${res.body.id}`, {
    body: { enabled: false },
  })
  assert.equal(patch.status, 404)
  const { res: paid } = await charge(m.client, CARDS.frictionless, 2_500, { threeDSecure: false })
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.equal(sim.orders.get(paid.body.paymentId)?.amount, 2_500)
})

test('a charge goes through the POS (order id = payment id); the refund the same day is a Void there', async (t) => {
  const { h, m } = await setup(t)
  const sim = await simulator(t)
  const pos = await addPos(m, sim)
  const { res } = await charge(m.client, CARDS.frictionless, 10_025, { threeDSecure: false })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'captured')
  const order = sim.orders.get(res.body.paymentId)
  assert.equal(order?.amount, 10_025)
  assert.equal(order.type, 'Auth')
  assert.equal(res.body.authCode, order.authCode)
  const row = await posPayment(h, res.body.paymentId)
  assert.equal(row?.pos_account_id, pos.id)
  assert.deepEqual(row.attempts, [{ posAccountId: pos.id, outcome: 'approved', bankCode: '00' }])
  // Nothing reached the sandbox bank.
  const sandbox = await h.deps.db
    .selectFrom('acquirer_sandbox_operations')
    .select('id')
    .where('payment_id', '=', res.body.paymentId)
    .execute()
  assert.deepEqual(sandbox, [])

  const refund = await m.client.request<{ status: string }>(
    'POST',
    `/v1/payments/${res.body.paymentId}/refund`,
    { body: { amount: 10_025 } },
  )
  assert.ok(refund.status === 201 || refund.status === 200, JSON.stringify(refund.body))
  assert.equal(sim.orders.get(res.body.paymentId)?.voided, true)
})

test('authorize, partial capture (PostAuth) and a partial refund (Credit) at the same POS', async (t) => {
  const { m } = await setup(t)
  const sim = await simulator(t)
  await addPos(m, sim)
  const { res } = await charge(m.client, CARDS.frictionless, 20_000, {
    threeDSecure: false,
    capture: false,
  })
  assert.equal(res.body.status, 'authorized', JSON.stringify(res.body))
  const id = res.body.paymentId
  assert.equal(sim.orders.get(id)?.type, 'PreAuth')
  const cap = await m.client.request('POST', `/v1/payments/${id}/capture`, {
    body: { amount: 15_000 },
  })
  assert.ok(cap.status < 300, JSON.stringify(cap.body))
  assert.equal(sim.orders.get(id)?.captured, 15_000)
  const refund = await m.client.request('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 5_000 },
  })
  assert.ok(refund.status < 300, JSON.stringify(refund.body))
  assert.equal(sim.orders.get(id)?.refunded, 5_000)
})

test('with the first POS down the payment fails over: one authorization in total', async (t) => {
  const { h, m } = await setup(t)
  const first = await simulator(t)
  const second = await simulator(t)
  const a = await addPos(m, first, { name: 'İşbank' })
  const b = await addPos(m, second, {
    name: 'Halkbank',
    credentials: { ...CREDENTIALS, bank: 'halkbank' },
  })
  const routing = await m.client.request('PUT', '/v1/routing', {
    body: { rules: [], default: [a.id, b.id] },
  })
  assert.equal(routing.status, 200, JSON.stringify(routing.body))
  await first.setDown(true)
  const { res } = await charge(m.client, CARDS.frictionless, 5_000, { threeDSecure: false })
  assert.equal(res.body.status, 'captured', JSON.stringify(res.body))
  assert.equal(first.authorizations() + second.authorizations(), 1)
  assert.equal(second.orders.get(res.body.paymentId)?.amount, 5_000)
  const row = await posPayment(h, res.body.paymentId)
  assert.equal(row?.pos_account_id, b.id)
  assert.deepEqual(row.attempts, [
    { posAccountId: a.id, outcome: 'not_sent', bankCode: null },
    { posAccountId: b.id, outcome: 'approved', bankCode: '00' },
  ])
  const shown = await m.client.request<{ acquirer: Record<string, unknown> }>(
    'GET',
    `/v1/payments/${res.body.paymentId}`,
  )
  assert.deepEqual(shown.body.acquirer, {
    posAccountId: b.id,
    provider: 'est_v3',
    bank: 'halkbank',
    authCode: second.orders.get(res.body.paymentId)?.authCode,
    hostReference: second.orders.get(res.body.paymentId)?.hostRef,
    attempts: row.attempts,
  })
  // A 5xx is before acceptance too.
  await first.setDown(false)
  first.faults.http5xx = true
  const { res: again } = await charge(m.client, CARDS.frictionless, 5_000, { threeDSecure: false })
  assert.equal(again.body.status, 'captured')
  assert.equal(first.authorizations() + second.authorizations(), 2)
})

test('a decline is final: no failover to the next POS', async (t) => {
  const { m } = await setup(t)
  const first = await simulator(t)
  const second = await simulator(t)
  const a = await addPos(m, first)
  const b = await addPos(m, second)
  await m.client.request('PUT', '/v1/routing', { body: { rules: [], default: [a.id, b.id] } })
  const { res } = await charge(m.client, CARDS.insufficientFunds, 5_000, { threeDSecure: false })
  assert.equal(res.status, 402, JSON.stringify(res.body))
  assert.equal((res.body as Record<string, unknown>)['declineCode'], 'insufficient_funds')
  assert.equal(second.authorizations(), 0)
})

test('a timeout after sending is resolved by the order inquiry, never by another POS', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_BANK_ANSWER_TIMEOUT_MS: '300' } })
  const m = await h.newMerchant()
  const first = await simulator(t)
  const second = await simulator(t)
  const a = await addPos(m, first)
  const b = await addPos(m, second)
  await m.client.request('PUT', '/v1/routing', { body: { rules: [], default: [a.id, b.id] } })
  // The bank approves, its answer is lost; the inquiry finds the approval.
  first.faults.hangAfterProcessing = true
  const inquiry = first.processed.length
  const pending = charge(m.client, CARDS.frictionless, 7_000, { threeDSecure: false })
  // The inquiry goes out once the authorization timed out; answer it.
  while (first.processed.length === inquiry) await new Promise((r) => setTimeout(r, 20))
  first.faults.hangAfterProcessing = false
  const { res } = await pending
  assert.equal(res.body.status, 'captured', JSON.stringify(res.body))
  assert.equal(second.authorizations(), 0)
  assert.equal(first.authorizations(), 1)
  const row = await posPayment(h, res.body.paymentId)
  assert.deepEqual(
    row?.attempts.map((x) => x.outcome),
    ['unknown', 'approved'],
  )
})

test('routing rules: installments go only to a POS of the card program, on-us first; a plain card to the default', async (t) => {
  const { h, m } = await setup(t)
  const isbank = await simulator(t)
  const akbank = await simulator(t)
  const a = await addPos(m, isbank, { name: 'İşbank' })
  const b = await addPos(m, akbank, {
    name: 'Akbank',
    credentials: { ...CREDENTIALS, bank: 'akbank' },
  })
  assert.deepEqual(b.installmentPrograms, ['axess'])
  await m.client.request('PUT', '/v1/routing', { body: { rules: [], default: [a.id, b.id] } })
  const axess = '4355084355084358' // Akbank Axess (bin-table.ts)
  const bin = await m.client.request<Record<string, unknown>>('GET', '/v1/bins/435508')
  assert.deepEqual(bin.body, {
    bin: '435508',
    brand: 'visa',
    funding: 'credit',
    bank: 'akbank',
    program: 'axess',
    country: 'TR',
  })
  const options = await m.client.request<{ options: { installmentCount: number }[] }>(
    'GET',
    '/v1/installment-options?bin=435508&amount=12000',
  )
  assert.equal(options.body.options.length, 12)
  const { res: inst } = await charge(m.client, axess, 12_000, {
    threeDSecure: false,
    installmentCount: 3,
  })
  assert.equal(inst.body.status, 'captured', JSON.stringify(inst.body))
  assert.ok(akbank.orders.has(inst.body.paymentId))
  assert.equal(isbank.authorizations(), 0)
  const { res: plain } = await charge(m.client, axess, 12_000, { threeDSecure: false })
  assert.ok(isbank.orders.has(plain.body.paymentId))
  // A rule over the card facts picks the POS.
  const put = await m.client.request('PUT', '/v1/routing', {
    body: {
      rules: [{ condition: { '==': [{ var: 'card.program' }, 'axess'] }, posAccountIds: [b.id] }],
      default: [a.id],
    },
  })
  assert.equal(put.status, 200)
  const { res: ruled } = await charge(m.client, axess, 12_000, { threeDSecure: false })
  assert.ok(akbank.orders.has(ruled.body.paymentId))
  const bad = await m.client.request<{ details: { field: string }[] }>('PUT', '/v1/routing', {
    body: {
      rules: [{ condition: { '==': [{ var: 'card.pan' }, 1] }, posAccountIds: [a.id] }],
      default: ['pos_nope'],
    },
  })
  assert.equal(bad.status, 400)
  assert.deepEqual(
    bad.body.details.map((d) => d.field),
    ['rules[0].condition.==[0].var', 'default[0]'],
  )
  assert.ok(h)
})

test('live refuses an account that names a bank simulator', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const m = await h.newMerchant({ kycStatus: 'approved' })
  // A simulator is demo-only: live refuses an account that names one.
  const sim = await simulator(t)
  const res2 = await m.client.request<{ details: { field: string }[] }>(
    'POST',
    '/v1/pos-accounts',
    {
      body: {
        provider: 'est_v3',
        name: 'x',
        environment: 'production',
        credentials: { ...CREDENTIALS, bank: 'isbank' },
        endpoints: { api: sim.api, threeDGate: sim.threeDGate },
      },
    },
  )
  assert.equal(res2.status, 400)
  assert.deepEqual(
    res2.body.details.map((d) => d.field),
    ['endpoints'],
  )
})
