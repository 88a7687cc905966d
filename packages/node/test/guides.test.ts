// Goal: the feature guides work as written: the `ts` blocks of docs/payments.md,
// subscriptions.md, payouts.md and disputes.md, each joined into one script
// (examples/<guide>.ts, written by `npm run docs:examples`, type-checked by lint; the
// quickstart test checks they are current), run against the app and print what the guide
// says they print; the API then agrees.
// Method: the app on a loopback port; a merchant made through the operator API (and, for the
// payouts guide, a submerchant); each script run by Node in a child process with the docs'
// environment variables.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { test } from 'node:test'
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts'
import { Kurus } from '../src/index.ts'

function run(guide: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  const file = resolve(import.meta.dirname, `../examples/${guide}.ts`)
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (b: Buffer) => (out += b.toString()))
    child.stderr.on('data', (b: Buffer) => (out += b.toString()))
    child.on('error', fail)
    child.on('close', (code) => done({ code: code ?? -1, out }))
  })
}

async function shop(h: TestApp) {
  const created = await h.operator<{ merchantId: string; publicKey: string; secretKey: string }>(
    'POST',
    '/operator/v1/merchants',
    { name: 'Guide Shop', kycStatus: 'approved' },
  )
  assert.equal(created.status, 201)
  const { merchantId, publicKey, secretKey } = created.body
  const env = { KURUS_PUBLIC_KEY: publicKey, KURUS_SECRET_KEY: secretKey, KURUS_URL: h.url }
  const kurus = new Kurus({ publicKey, secretKey, baseUrl: h.url, now: () => h.clock.now() })
  return { merchantId, env, kurus }
}

test('docs/payments.md: charge, 3-D Secure, partial captures, refund, decline', async (t) => {
  const h = await startTestApp(t)
  const { env, kurus } = await shop(h)
  const { code, out } = await run('payments', env)
  assert.equal(code, 0, out)
  const charged = /^charged (pay_\w+) captured$/m.exec(out)?.[1]
  assert.ok(charged, out)
  assert.match(out, /^3ds pay_\w+ pending_3ds$/m)
  assert.match(out, /^3ds pay_\w+ captured$/m)
  const held = /^authorized (pay_\w+) authorized$/m.exec(out)?.[1]
  assert.ok(held, out)
  assert.match(out, /^captured partially_captured 4000$/m)
  assert.match(out, /^captured captured 7000$/m)
  assert.match(out, /^refund completed 2500 7500$/m)
  assert.match(out, /^refunds 1$/m)
  assert.match(out, /^declined SVC-PAY-3501 card_declined$/m)

  const payment = await kurus.payments.get(charged)
  assert.equal(payment.refundAmount, 2500)
  const partial = await kurus.payments.get(held)
  assert.equal(partial.status, 'captured')
  assert.equal(partial.capturedAmount, 7000)
})

test('docs/subscriptions.md: a saved card, a monthly plan on a test clock, cancel', async (t) => {
  const h = await startTestApp(t)
  const { env, kurus } = await shop(h)
  const { code, out } = await run('subscriptions', env)
  assert.equal(code, 0, out)
  const id = /^subscription (sub_\w+) active$/m.exec(out)?.[1]
  assert.ok(id, out)
  assert.match(out, /^renewed active 4 2027-05-15T09:00:00(\.000)?Z$/m)
  assert.deepEqual(
    [...out.matchAll(/^cycle (\d+) captured pay_\w+$/gm)].map((m) => Number(m[1])).sort(),
    [1, 2, 3, 4],
  )
  assert.match(out, /^cancel active true$/m)
  assert.match(out, /^cancelled cancelled$/m)
  const subscription = await kurus.subscriptions.get(id)
  assert.equal(subscription.status, 'cancelled')
  assert.equal(subscription.cycleNumber, 4)
})

/** A TR IBAN with valid check digits for a bank account number (sandbox rail: paid). */
function trIban(account: string): string {
  const bban = `000610${account.padStart(16, '0')}`
  let rem = 0
  for (const ch of `${bban}292700`) rem = (rem * 10 + Number(ch)) % 97
  return `TR${String(98 - rem).padStart(2, '0')}${bban}`
}

test('docs/payouts.md: a split sale settles, and the submerchant is paid out', async (t) => {
  const h = await startTestApp(t)
  const { merchantId, env, kurus } = await shop(h)
  const sub = await h.operator<{ submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${merchantId}/submerchants`,
    { name: 'Seller', iban: trIban('1234567890123456'), holderName: 'Seller Ltd' },
  )
  assert.equal(sub.status, 201, JSON.stringify(sub.body))
  const { submerchantId } = sub.body
  const { code, out } = await run('payouts', { ...env, KURUS_SUBMERCHANT_ID: submerchantId })
  assert.equal(code, 0, out)
  assert.match(out, /^sale pay_\w+ captured$/m)
  const available = Number(/^available (\d+) 0$/m.exec(out)?.[1])
  // 12,000 less its share of the 523 commission (249 bps + 25 kuruş, apportioned by share).
  assert.equal(available, 11686, out)
  const payoutId = /^payout (\S+) pending TR\S+$/m.exec(out)?.[1]
  assert.ok(payoutId, out)
  assert.match(out, /^paid paid$/m)
  assert.match(out, new RegExp(`^listed ${payoutId} paid ${available}$`, 'm'))
  const payout = await kurus.payouts.get(payoutId)
  assert.equal(payout.status, 'paid')
  assert.equal(payout.amountMinor, available)
})

test('docs/disputes.md: a chargeback, a file, evidence submitted, won', async (t) => {
  const h = await startTestApp(t)
  const { env, kurus } = await shop(h)
  const { code, out } = await run('disputes', env)
  assert.equal(code, 0, out)
  const chargebackId = /^chargeback (\S+) received \S+$/m.exec(out)?.[1]
  assert.ok(chargebackId, out)
  assert.match(out, /^file file_\w+ pdf$/m)
  assert.match(out, /^submitted under_review true$/m)
  assert.match(out, /^decided reversed won$/m)
  const payments = await kurus.payments.list({ limit: 1 }).toArray(1)
  const chargebacks = await kurus.payments.chargebacks(payments[0]?.id ?? '')
  assert.equal(chargebacks.items[0]?.id, chargebackId)
  assert.equal(chargebacks.items[0]?.resolution, 'won')
})
