// Goal: issue 39's done-when flows through the API against each provider's simulator as the
// merchant's POS: a charge, a partial capture, a void and refunds reach the bank that
// authorized; an installment charge on a Bonus card goes to the Garanti POS and a plain one
// to the cheapest (the merchant's default order); with the first POS down the payment fails
// over with one authorization in total.
// Method: signed HTTP against a real database; EST, Garanti and PosNet simulators on
// loopback; the simulators' books and the acquirer's tables say what each bank did.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import {
  posnetOrderId,
  startEstV3Simulator,
  startGarantiSimulator,
  startPosnetSimulator,
} from '../../src/modules/acquirer/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import {
  EST_TEST as EST,
  GARANTI_TEST as GARANTI,
  POSNET_TEST as POSNET,
} from '../helpers/bank-credentials.ts'

const BONUS = '4282209004348015' // Garanti Bonus (bin-table.ts, 428220)

/** What a test needs of a bank simulator, whichever provider it plays. */
interface Bank {
  provider: 'est_v3' | 'garanti' | 'posnet'
  api: string
  threeDGate: string
  credentials: Record<string, string>
  authorizations(): number
  setDown(down: boolean): Promise<void>
  faults: { hangAfterProcessing: boolean }
  processed(): number
  /** The bank's book for our payment: amount, captured, refunded, voided. */
  order(
    paymentId: string,
  ): { amount: number; captured: number; refunded: number; voided: boolean } | undefined
}

async function bank(t: TestContext, provider: Bank['provider']): Promise<Bank> {
  if (provider === 'est_v3') {
    const sim = await startEstV3Simulator(EST)
    t.after(() => sim.close())
    return {
      provider,
      api: sim.api,
      threeDGate: sim.threeDGate,
      credentials: { ...EST, bank: 'isbank' },
      authorizations: () => sim.authorizations(),
      setDown: (d) => sim.setDown(d),
      get faults() {
        return sim.faults
      },
      processed: () => sim.processed.length,
      order: (id) => sim.orders.get(id),
    }
  }
  if (provider === 'garanti') {
    const sim = await startGarantiSimulator(GARANTI)
    t.after(() => sim.close())
    return {
      provider,
      api: sim.api,
      threeDGate: sim.threeDGate,
      credentials: GARANTI,
      authorizations: () => sim.authorizations(),
      setDown: (d) => sim.setDown(d),
      get faults() {
        return sim.faults
      },
      processed: () => sim.processed.length,
      order: (id) => sim.orders.get(id),
    }
  }
  const sim = await startPosnetSimulator(POSNET)
  t.after(() => sim.close())
  return {
    provider,
    api: sim.api,
    threeDGate: sim.threeDGate,
    credentials: POSNET,
    authorizations: () => sim.authorizations(),
    setDown: (d) => sim.setDown(d),
    get faults() {
      return sim.faults
    },
    processed: () => sim.processed.length,
    order: (id) => sim.orders.get(posnetOrderId(id)),
  }
}

async function addPos(
  m: TestMerchant,
  b: Bank,
  name: string,
): Promise<{ id: string; bank: string }> {
  const res = await m.client.request<{ id: string; bank: string }>('POST', '/v1/pos-accounts', {
    body: {
      provider: b.provider,
      name,
      environment: 'test',
      credentials: b.credentials,
      endpoints: { api: b.api, threeDGate: b.threeDGate },
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

async function posPayment(h: TestApp, paymentId: string) {
  return h.deps.db
    .selectFrom('acquirer_pos_payments')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .executeTakeFirstOrThrow()
}

for (const provider of ['est_v3', 'garanti', 'posnet'] as const) {
  test(`${provider}: charge, void by refund, partial capture, partial refund and void go through its simulator from the API`, async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant()
    const b = await bank(t, provider)
    const pos = await addPos(m, b, `${provider} POS`)

    // A sale, refunded whole the same day: a void at the bank.
    const { res } = await charge(m.client, CARDS.frictionless, 10_025, { threeDSecure: false })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(res.body.status, 'captured')
    const id = res.body.paymentId
    assert.equal(b.order(id)?.amount, 10_025)
    assert.equal(b.order(id)?.captured, 10_025)
    const row = await posPayment(h, id)
    assert.equal(row.pos_account_id, pos.id)
    assert.equal(row.provider, provider)
    assert.equal(res.body.authCode, row.auth_code)
    const refund = await m.client.request('POST', `/v1/payments/${id}/refund`, {
      body: { amount: 10_025 },
    })
    assert.ok(refund.status < 300, JSON.stringify(refund.body))
    assert.equal(b.order(id)?.voided, true)

    // Authorize, capture part of it, refund part of the capture.
    const { res: auth } = await charge(m.client, CARDS.frictionless, 20_000, {
      threeDSecure: false,
      capture: false,
    })
    assert.equal(auth.body.status, 'authorized', JSON.stringify(auth.body))
    const authId = auth.body.paymentId
    assert.equal(b.order(authId)?.captured, 0)
    const cap = await m.client.request('POST', `/v1/payments/${authId}/capture`, {
      body: { amount: 15_000 },
    })
    assert.ok(cap.status < 300, JSON.stringify(cap.body))
    assert.equal(b.order(authId)?.captured, 15_000)
    const part = await m.client.request('POST', `/v1/payments/${authId}/refund`, {
      body: { amount: 5_000 },
    })
    assert.ok(part.status < 300, JSON.stringify(part.body))
    assert.equal(b.order(authId)?.refunded, 5_000)

    // Authorize and void: released at the bank.
    const { res: held } = await charge(m.client, CARDS.frictionless, 3_000, {
      threeDSecure: false,
      capture: false,
    })
    const heldId = held.body.paymentId
    const voided = await m.client.request<{ status: string }>('POST', `/v1/payments/${heldId}/void`)
    assert.ok(voided.status < 300, JSON.stringify(voided.body))
    assert.equal(b.order(heldId)?.voided, true)

    // A decline at the bank is the API's decline.
    const { res: declined } = await charge(m.client, CARDS.insufficientFunds, 1_000, {
      threeDSecure: false,
    })
    assert.equal(declined.status, 402, JSON.stringify(declined.body))
    assert.equal((declined.body as Record<string, unknown>)['declineCode'], 'insufficient_funds')
    assert.equal(b.authorizations(), 4)
  })
}

test('an installment charge on a Bonus card goes to the Garanti POS; a plain charge to the cheapest', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const isbank = await bank(t, 'est_v3')
  const garanti = await bank(t, 'garanti')
  const cheap = await addPos(m, isbank, 'İşbank (cheapest)')
  const bonus = await addPos(m, garanti, 'Garanti BBVA')
  // The merchant's default order is its cost order: cheapest first.
  const put = await m.client.request('PUT', '/v1/routing', {
    body: { rules: [], default: [cheap.id, bonus.id] },
  })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  const bin = await m.client.request<Record<string, unknown>>('GET', '/v1/bins/428220')
  assert.deepEqual(
    { bank: bin.body['bank'], program: bin.body['program'] },
    { bank: 'garanti', program: 'bonus' },
  )
  const options = await m.client.request<{ options: unknown[] }>(
    'GET',
    '/v1/installment-options?bin=428220&amount=30000',
  )
  assert.equal(options.body.options.length, 12)

  const { res: inst } = await charge(m.client, BONUS, 30_000, {
    threeDSecure: false,
    installmentCount: 6,
  })
  assert.equal(inst.body.status, 'captured', JSON.stringify(inst.body))
  assert.equal(garanti.order(inst.body.paymentId)?.amount, 30_000)
  assert.equal((await posPayment(h, inst.body.paymentId)).pos_account_id, bonus.id)

  const { res: single } = await charge(m.client, BONUS, 30_000, { threeDSecure: false })
  assert.equal(single.body.status, 'captured')
  assert.ok(isbank.order(single.body.paymentId))
  const { res: plain } = await charge(m.client, CARDS.frictionless, 30_000, { threeDSecure: false })
  assert.ok(isbank.order(plain.body.paymentId))
  assert.equal(isbank.authorizations(), 2)
  assert.equal(garanti.authorizations(), 1)
})

test('with the first POS (Garanti) down the payment fails over to PosNet: one authorization in total', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const garanti = await bank(t, 'garanti')
  const posnet = await bank(t, 'posnet')
  const first = await addPos(m, garanti, 'Garanti BBVA')
  const second = await addPos(m, posnet, 'Yapı Kredi')
  assert.equal(second.bank, 'yapikredi')
  await m.client.request('PUT', '/v1/routing', {
    body: { rules: [], default: [first.id, second.id] },
  })
  await garanti.setDown(true)
  const { res } = await charge(m.client, CARDS.frictionless, 5_000, { threeDSecure: false })
  assert.equal(res.body.status, 'captured', JSON.stringify(res.body))
  assert.equal(garanti.authorizations() + posnet.authorizations(), 1)
  assert.equal(posnet.order(res.body.paymentId)?.amount, 5_000)
  const shown = await m.client.request<{ acquirer: { provider: string; attempts: unknown[] } }>(
    'GET',
    `/v1/payments/${res.body.paymentId}`,
  )
  assert.equal(shown.body.acquirer.provider, 'posnet')
  assert.deepEqual(shown.body.acquirer.attempts, [
    { posAccountId: first.id, outcome: 'not_sent', bankCode: null },
    { posAccountId: second.id, outcome: 'approved', bankCode: '00' },
  ])
  // The refund goes to the POS that authorized.
  const refund = await m.client.request('POST', `/v1/payments/${res.body.paymentId}/refund`, {
    body: { amount: 2_000 },
  })
  assert.ok(refund.status < 300, JSON.stringify(refund.body))
  assert.equal(posnet.order(res.body.paymentId)?.refunded, 2_000)
})

for (const provider of ['garanti', 'posnet'] as const) {
  test(`${provider}: a timeout after sending is resolved by its order inquiry, never by another POS`, async (t) => {
    const h = await startTestApp(t, { env: { KURUS_BANK_ANSWER_TIMEOUT_MS: '300' } })
    const m = await h.newMerchant()
    const first = await bank(t, provider)
    const second = await bank(t, 'est_v3')
    const a = await addPos(m, first, provider)
    const b = await addPos(m, second, 'İşbank')
    await m.client.request('PUT', '/v1/routing', { body: { rules: [], default: [a.id, b.id] } })
    // The bank approves, its answer is lost; the inquiry (after the timeout) finds it.
    first.faults.hangAfterProcessing = true
    const before = first.processed()
    const pending = charge(m.client, CARDS.frictionless, 7_000, { threeDSecure: false })
    while (first.processed() === before) await new Promise((r) => setTimeout(r, 20))
    first.faults.hangAfterProcessing = false
    const { res } = await pending
    assert.equal(res.body.status, 'captured', JSON.stringify(res.body))
    assert.equal(first.authorizations(), 1)
    assert.equal(second.authorizations(), 0)
    const row = await posPayment(h, res.body.paymentId)
    assert.deepEqual(
      row.attempts.map((x) => x.outcome),
      ['unknown', 'approved'],
    )
    assert.equal(row.auth_code, res.body.authCode)
  })
}
