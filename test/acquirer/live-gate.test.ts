// Goal: live never reaches the sandbox bank (issue 39 item 8): without a usable POS a live
// charge is 402 SVC-PAY-3504 with nothing recorded; with one it goes to the bank, and its
// 3-D Secure is the bank's own 3D gate, never the sandbox ACS.
// Method: live apps over HTTP; a bank simulator standing in for İşbank's own URLs
// (test/helpers/live-bank.ts); the payments and sandbox tables say what happened.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fieldsOfAutoPostPage } from '../../src/modules/acquirer/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { startLiveTestApp } from '../helpers/live-bank.ts'
import { CARDS, charge } from '../helpers/payments.ts'

async function recorded(h: TestApp, merchantId: string) {
  const payments = await h.deps.db
    .selectFrom('payments')
    .select('id')
    .where('merchant_id', '=', merchantId)
    .execute()
  const sandbox = await h.deps.db.selectFrom('acquirer_sandbox_operations').select('id').execute()
  const acs = await h.deps.db.selectFrom('acquirer_sandbox_3ds').select('payment_id').execute()
  return { payments: payments.length, sandbox: sandbox.length, acs: acs.length }
}

test('live without a usable POS: 402 SVC-PAY-3504, nothing recorded, the sandbox bank untouched', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const m = await h.newMerchant({ kycStatus: 'approved' })
  for (const threeDSecure of [false, true]) {
    const { res } = await charge(m.client, CARDS.frictionless, 2_500, { threeDSecure })
    assert.equal(res.status, 402, JSON.stringify(res.body))
    assert.equal((res.body as Record<string, unknown>)['code'], 'SVC-PAY-3504')
  }
  // A test-environment account does not count in live.
  const sandboxish = await m.client.request('POST', '/v1/pos-accounts', {
    body: {
      provider: 'garanti',
      name: 'Garanti test terminal',
      environment: 'test',
      credentials: {
        merchantId: '7000679',
        terminalId: '30691298',
        provisionUser: 'PROVAUT',
        provisionPassword: '123qweASD/',
        storeKey: '12345678',
      },
    },
  })
  assert.equal(sandboxish.status, 201, JSON.stringify(sandboxish.body))
  const { res } = await charge(m.client, CARDS.frictionless, 2_500, { threeDSecure: false })
  assert.equal(res.status, 402, JSON.stringify(res.body))
  assert.deepEqual(await recorded(h, m.merchantId), { payments: 0, sandbox: 0, acs: 0 })
})

test('live with a production POS: the charge goes to the bank, never the sandbox; 3-D Secure at its 3D gate', async (t) => {
  const h = await startLiveTestApp(t)
  const m = await h.newMerchant({ kycStatus: 'approved' })
  const { res } = await charge(m.client, CARDS.frictionless, 4_200, { threeDSecure: false })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'captured')
  assert.equal(h.bank.orders.get(res.body.paymentId)?.amount, 4_200)
  const declined = await charge(m.client, CARDS.insufficientFunds, 4_200, { threeDSecure: false })
  assert.equal(declined.res.status, 402)
  assert.equal((declined.res.body as Record<string, unknown>)['declineCode'], 'insufficient_funds')
  // 3-D Secure: the challenge page posts the bank's form to İşbank's gate (the simulator),
  // the bank posts back to us, and the merchant's 3DS callback authorizes at the same POS.
  const threeDs = await charge(m.client, CARDS.challenge, 4_200)
  assert.equal(threeDs.res.body.status, 'pending_3ds', JSON.stringify(threeDs.res.body))
  const challenge = new URL(String(threeDs.res.body.challengeUrl))
  const page = await (await fetch(`${h.url}${challenge.pathname}${challenge.search}`)).text()
  const action = /<form id="bank-gate-form" method="post" action="([^"]*)"/.exec(page)?.[1]
  assert.equal(action, h.bank.threeDGate)
  const fields = Object.fromEntries(
    [...page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)"/g)].map(
      (x): [string, string] => [x[1] ?? '', x[2] ?? ''],
    ),
  )
  const gate = await fetch(h.bank.threeDGate, { method: 'POST', body: new URLSearchParams(fields) })
  const callback = fieldsOfAutoPostPage(await gate.text())
  const back = await fetch(callback.action, {
    method: 'POST',
    body: new URLSearchParams(callback.fields),
    redirect: 'manual',
  })
  assert.equal(back.status, 303)
  const to = new URL(back.headers.get('location') ?? '')
  const done = await m.client.request<{ status: string }>(
    'POST',
    `/v1/payments/${threeDs.res.body.paymentId}/3ds-callback`,
    {
      body: {
        pares: to.searchParams.get('pares'),
        correlationId: to.searchParams.get('correlationId'),
      },
    },
  )
  assert.equal(done.status, 200, JSON.stringify(done.body))
  assert.equal(done.body.status, 'captured')
  assert.deepEqual(await recorded(h, m.merchantId), { payments: 3, sandbox: 0, acs: 0 })
  // The sale, the decline and the 3-D Secure sale: one request each at the bank.
  assert.equal(h.bank.authorizations(), 3)
  assert.equal(h.bank.orders.get(threeDs.res.body.paymentId)?.amount, 4_200)
})
