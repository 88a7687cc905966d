// Goal: a 3-D Secure charge routed to a bank POS is authenticated at that bank's own 3D gate
// and authorized once at the same POS (issue 39): for est_v3 (3D and 3D Pay), garanti and
// posnet, from the API through the simulator's gate to captured; a failed authentication
// (…3063) fails with nothing authorized; a callback with a wrong hash or a changed amount is
// refused and changes nothing; a duplicate bank callback is harmless; the POS is chosen
// before the challenge and no other is asked after it.
// Method: signed HTTP against a real database; the challenge page, the gate and the bank's
// post back driven with fetch as the buyer's browser would; the simulators' books say what
// each bank did.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import {
  fieldsOfAutoPostPage,
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

type Provider = 'est_v3' | 'est_v3_pay' | 'garanti' | 'posnet'

interface Bank {
  api: string
  threeDGate: string
  provider: 'est_v3' | 'garanti' | 'posnet'
  credentials: Record<string, string>
  authorizations(): number
  setDown(down: boolean): Promise<void>
  callbacks(paymentId: string): Record<string, string>[]
  order(paymentId: string): { amount: number; captured: number } | undefined
}

async function bank(t: TestContext, provider: Provider): Promise<Bank> {
  if (provider === 'est_v3' || provider === 'est_v3_pay') {
    const sim = await startEstV3Simulator(EST)
    t.after(() => sim.close())
    const storeType = provider === 'est_v3_pay' ? { storeType: '3d_pay' } : {}
    return {
      api: sim.api,
      threeDGate: sim.threeDGate,
      provider: 'est_v3',
      credentials: { ...EST, bank: 'isbank', ...storeType },
      authorizations: () => sim.authorizations(),
      setDown: (d) => sim.setDown(d),
      callbacks: (id) => sim.callbacks.get(id) ?? [],
      order: (id) => sim.orders.get(id),
    }
  }
  if (provider === 'garanti') {
    const sim = await startGarantiSimulator(GARANTI)
    t.after(() => sim.close())
    return {
      api: sim.api,
      threeDGate: sim.threeDGate,
      provider,
      credentials: GARANTI,
      authorizations: () => sim.authorizations(),
      setDown: (d) => sim.setDown(d),
      callbacks: (id) => sim.callbacks.get(id) ?? [],
      order: (id) => sim.orders.get(id),
    }
  }
  const sim = await startPosnetSimulator(POSNET)
  t.after(() => sim.close())
  return {
    api: sim.api,
    threeDGate: sim.threeDGate,
    provider,
    credentials: POSNET,
    authorizations: () => sim.authorizations(),
    setDown: (d) => sim.setDown(d),
    callbacks: (id) => sim.callbacks.get(posnetOrderId(id).slice(4)) ?? [],
    order: (id) => sim.orders.get(posnetOrderId(id, true)),
  }
}

async function setup(t: TestContext, provider: Provider) {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const b = await bank(t, provider)
  const res = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
    body: {
      provider: b.provider,
      name: provider,
      environment: 'test',
      credentials: b.credentials,
      endpoints: { api: b.api, threeDGate: b.threeDGate },
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { h, m, b }
}

const unescape = (s: string) =>
  s
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** Our challenge page's form to the bank's gate (what checkout.js submits). */
function gateFormOf(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form id="bank-gate-form" method="post" action="([^"]*)"/.exec(html)?.[1]
  assert.ok(action, html)
  const fields: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)"/g)) {
    fields[unescape(m[1] ?? '')] = unescape(m[2] ?? '')
  }
  return { action: unescape(action), fields }
}

/** Charges with 3-D Secure and plays the buyer up to the bank's post back (not yet sent). */
async function toGate(h: TestApp, m: TestMerchant, card: string, amount: number) {
  const { res } = await charge(m.client, card, amount)
  assert.equal(res.body.status, 'pending_3ds', JSON.stringify(res.body))
  const challenge = new URL(String(res.body.challengeUrl))
  const page = await fetch(`${h.url}${challenge.pathname}${challenge.search}`)
  assert.equal(page.status, 200)
  const csp = page.headers.get('content-security-policy') ?? ''
  const html = await page.text()
  assert.match(html, /<script[^>]* src="\/assets\/checkout\.js/)
  assert.doesNotMatch(html, /<script>|onload=/)
  const form = gateFormOf(html)
  // The form may leave for the bank's gate, and only for it.
  assert.ok(csp.includes(`form-action 'self' ${new URL(form.action).origin}`), csp)
  const gate = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })
  assert.equal(gate.status, 200, await gate.clone().text())
  const callback = fieldsOfAutoPostPage(await gate.text())
  assert.ok(callback.action.startsWith(`${h.url}/3ds/${res.body.paymentId}/bank?`), callback.action)
  return { paymentId: res.body.paymentId, callback }
}

function postBack(callback: { action: string; fields: Record<string, string> }) {
  return fetch(callback.action, {
    method: 'POST',
    body: new URLSearchParams(callback.fields),
    redirect: 'manual',
  })
}

/** The bank's post back → our 303 to the merchant's returnUrl with the pares. */
async function returned(callback: { action: string; fields: Record<string, string> }) {
  const res = await postBack(callback)
  assert.equal(res.status, 303, await res.text())
  const to = new URL(res.headers.get('location') ?? '')
  assert.equal(to.origin, 'https://shop.example')
  return {
    pares: to.searchParams.get('pares') ?? '',
    correlationId: to.searchParams.get('correlationId') ?? '',
  }
}

for (const provider of ['est_v3', 'est_v3_pay', 'garanti', 'posnet'] as const) {
  test(`${provider}: a 3-D Secure charge is authenticated at the bank's 3D gate and authorized once there`, async (t) => {
    const { h, m, b } = await setup(t, provider)
    const { paymentId, callback } = await toGate(h, m, CARDS.frictionless, 12_345)
    // Nothing moved at the bank before the callback is verified (3D Pay: the gate paid).
    assert.equal(b.authorizations(), provider === 'est_v3_pay' ? 1 : 0)
    const back = await returned(callback)
    // The bank posts the same callback again (its retry, the buyer's back button).
    const replayed = b.callbacks(paymentId).at(-1)
    assert.ok(replayed)
    const again = await returned({ action: callback.action, fields: replayed })
    assert.equal(again.correlationId, back.correlationId)
    const done = await m.client.request<Record<string, unknown>>(
      'POST',
      `/v1/payments/${paymentId}/3ds-callback`,
      { body: back },
    )
    assert.equal(done.status, 200, JSON.stringify(done.body))
    assert.equal(done.body['status'], 'captured')
    const repeat = await m.client.request<Record<string, unknown>>(
      'POST',
      `/v1/payments/${paymentId}/3ds-callback`,
      { body: again },
    )
    assert.equal(repeat.body['status'], 'captured', JSON.stringify(repeat.body))
    assert.equal(b.authorizations(), 1)
    assert.equal(b.order(paymentId)?.amount, 12_345)
    const shown = await m.client.request<{ acquirer: { provider: string; authCode: string } }>(
      'GET',
      `/v1/payments/${paymentId}`,
    )
    assert.equal(shown.body.acquirer.provider, b.provider)
    assert.equal(done.body['authCode'], shown.body.acquirer.authCode)
    const gate = await h.deps.db
      .selectFrom('acquirer_pos_3ds')
      .selectAll()
      .where('payment_id', '=', paymentId)
      .executeTakeFirstOrThrow()
    assert.equal(gate.state, 'authenticated')
    assert.equal(gate.md_status, '1')
    // The sandbox ACS was never involved.
    const acs = await h.deps.db.selectFrom('acquirer_sandbox_3ds').select('payment_id').execute()
    assert.equal(acs.length, 0)
    // The refund goes to the POS that authorized (a whole refund the same day: a void).
    const refund = await m.client.request('POST', `/v1/payments/${paymentId}/refund`, {
      body: { amount: 12_345 },
    })
    assert.ok(refund.status < 300, JSON.stringify(refund.body))
  })

  test(`${provider}: a failed authentication fails the payment; a tampered callback is refused; nothing is authorized`, async (t) => {
    const { h, m, b } = await setup(t, provider)
    const failed = await toGate(h, m, CARDS.challengeFails, 5_000)
    const back = await returned(failed.callback)
    const res = await m.client.request<Record<string, unknown>>(
      'POST',
      `/v1/payments/${failed.paymentId}/3ds-callback`,
      { body: back },
    )
    assert.equal(res.status, 402, JSON.stringify(res.body))
    assert.equal(res.body['declineCode'], 'authentication_failed')

    const { paymentId, callback } = await toGate(h, m, CARDS.frictionless, 7_000)
    const tampered =
      provider === 'posnet'
        ? [{ ...callback.fields, MerchantPacket: `${callback.fields['MerchantPacket']}00` }]
        : [
            // Another amount, re-hashed by someone without our store key: the hash fails.
            provider === 'garanti'
              ? { ...callback.fields, txnamount: '1' }
              : { ...callback.fields, amount: '0.01' },
            { ...callback.fields, [provider === 'garanti' ? 'hash' : 'HASH']: 'AAAA' },
          ]
    for (const fields of tampered) {
      const refused = await postBack({ action: callback.action, fields })
      assert.equal(refused.status, 400, await refused.text())
    }
    const gate = await h.deps.db
      .selectFrom('acquirer_pos_3ds')
      .select('state')
      .where('payment_id', '=', paymentId)
      .executeTakeFirstOrThrow()
    assert.equal(gate.state, 'waiting')
    // The payment still waits for its genuine callback; a forged pares gets nothing.
    const forged = await m.client.request('POST', `/v1/payments/${paymentId}/3ds-callback`, {
      body: {
        pares: 'x.y.z',
        correlationId: new URL(callback.action).searchParams.get('correlationId'),
      },
    })
    assert.equal(forged.status, 400, JSON.stringify(forged.body))
    const shown = await m.client.request<{ status: string }>('GET', `/v1/payments/${paymentId}`)
    assert.equal(shown.body.status, 'pending_3ds')
    // 3D Pay: the gate authorizes on its own, before any callback reaches us (the bank's
    // doing, not ours); the 3D model and PosNet: nothing at all.
    assert.equal(b.authorizations(), provider === 'est_v3_pay' ? 1 : 0)
  })
}

test('the POS is chosen before the challenge: with it down after the challenge the payment fails, no other POS is asked', async (t) => {
  const { h, m, b } = await setup(t, 'est_v3')
  const other = await bank(t, 'garanti')
  const second = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
    body: {
      provider: 'garanti',
      name: 'Garanti BBVA',
      environment: 'test',
      credentials: other.credentials,
      endpoints: { api: other.api, threeDGate: other.threeDGate },
    },
  })
  assert.equal(second.status, 201, JSON.stringify(second.body))
  const { paymentId, callback } = await toGate(h, m, CARDS.frictionless, 9_900)
  const back = await returned(callback)
  // The authentication is İşbank's: Garanti would need a challenge of its own.
  await b.setDown(true)
  const res = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/payments/${paymentId}/3ds-callback`,
    { body: back },
  )
  assert.equal(res.status, 402, JSON.stringify(res.body))
  assert.equal(res.body['declineCode'], 'acquirer_unavailable')
  await b.setDown(false)
  assert.equal(b.authorizations() + other.authorizations(), 0)
  const shown = await m.client.request<{ acquirer: { attempts: { outcome: string }[] } }>(
    'GET',
    `/v1/payments/${paymentId}`,
  )
  assert.deepEqual(
    shown.body.acquirer.attempts.map((a) => a.outcome),
    ['not_sent'],
  )
})
