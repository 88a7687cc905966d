// Goal: the hosted checkout pays through each bank provider's own 3D gate (issue 39's "from
// the hosted checkout", for the providers live-3ds.browser.test.ts does not drive): a merchant
// whose POS is a Garanti or a Yapı Kredi PosNet account (a simulator, as `demo` allows) opens
// the checkout, the buyer types the card, our page posts the bank's signed form to that bank's
// gate, the bank posts back to Kuruş, and the payment is captured with one authorization at
// that bank; the sandbox ACS is never involved.
// Method: playwright-core driving Debian's chromium against a demo app; the POS account is
// added through the signed API with the simulator's endpoints; the returnUrl is a local server.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import {
  posnetOrderId,
  startGarantiSimulator,
  startPosnetSimulator,
} from '../../src/modules/acquirer/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { payOnHostedCheckout } from '../helpers/hosted-checkout.ts'
import { GARANTI_TEST as GARANTI, POSNET_TEST as POSNET } from '../helpers/bank-credentials.ts'

interface Bank {
  provider: 'garanti' | 'posnet'
  credentials: Record<string, string>
  api: string
  threeDGate: string
  authorizations(): number
  capturedOf(paymentId: string): number | undefined
}

async function startBank(t: TestContext, provider: Bank['provider']): Promise<Bank> {
  if (provider === 'garanti') {
    const sim = await startGarantiSimulator(GARANTI)
    t.after(() => sim.close())
    return {
      provider,
      credentials: GARANTI,
      api: sim.api,
      threeDGate: sim.threeDGate,
      authorizations: () => sim.authorizations(),
      capturedOf: (id) => sim.orders.get(id)?.captured,
    }
  }
  const sim = await startPosnetSimulator(POSNET)
  t.after(() => sim.close())
  return {
    provider,
    credentials: POSNET,
    api: sim.api,
    threeDGate: sim.threeDGate,
    authorizations: () => sim.authorizations(),
    capturedOf: (id) => sim.orders.get(posnetOrderId(id, true))?.captured,
  }
}

for (const provider of ['garanti', 'posnet'] as const) {
  test(`the hosted checkout pays with 3-D Secure at the ${provider} POS's own 3D gate`, async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant({ kycStatus: 'approved', name: 'Ege Zeytin' })
    const bank = await startBank(t, provider)
    const pos = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
      body: {
        provider,
        name: provider,
        environment: 'test',
        credentials: bank.credentials,
        endpoints: { api: bank.api, threeDGate: bank.threeDGate },
      },
    })
    assert.equal(pos.status, 201, JSON.stringify(pos.body))

    const { back, posts, problems } = await payOnHostedCheckout(t, h.url, m, 12_990)
    assert.equal(back['status'], 'captured', JSON.stringify(back))
    assert.deepEqual(problems, [])
    const paymentId = back['paymentId'] ?? ''
    // The buyer's browser went to this bank's gate, and the bank's answer came back to us.
    const gate = new URL(bank.threeDGate)
    assert.ok(posts.includes(gate.origin + gate.pathname), posts.join(', '))
    assert.ok(
      posts.some((p) => p.endsWith(`/3ds/${paymentId}/bank`)),
      posts.join(', '),
    )
    const payment = await m.client.request<{
      status: string
      acquirer?: { posAccountId: string; provider: string }
    }>('GET', `/v1/payments/${paymentId}`)
    assert.equal(payment.body.status, 'captured')
    assert.equal(payment.body.acquirer?.provider, provider)
    assert.equal(payment.body.acquirer?.posAccountId, pos.body.id)
    assert.equal(bank.authorizations(), 1)
    assert.equal(bank.capturedOf(paymentId), 12_990)
    const acs = await h.deps.db.selectFrom('acquirer_sandbox_3ds').select('payment_id').execute()
    assert.equal(acs.length, 0)
  })
}
