// Goal: docs/quickstart.md works as written: its `ts` blocks, joined in order into one
// script (examples/quickstart.ts, which lint type-checks), run against the app (a merchant's server would run them against `npm start`) and
// print a 3-D Secure charge captured, its webhook received and verified, a refund and a
// decline. Method: the app on a loopback port, a webhook endpoint registered through the
// dashboard API for the script's receiver, the script run by Node in a child process with the
// doc's environment variables; then the API is asked what happened.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { resolve } from 'node:path'
import { test } from 'node:test'
import { staleExamples } from '../../../scripts/docs-examples.ts'
import { startTestApp } from '../../../test/helpers/app.ts'
import { Kurus } from '../src/index.ts'

const example = resolve(import.meta.dirname, '../examples/quickstart.ts')

test('examples/*.ts are the code of their guides, quickstart first (npm run docs:examples)', () => {
  assert.deepEqual(staleExamples(false), [])
})

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const address = server.address()
  await new Promise((done) => server.close(done))
  assert.ok(address !== null && typeof address === 'object')
  return address.port
}

function run(file: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
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

test('the quickstart runs end to end: 3DS charge, webhook, refund, decline', async (t) => {
  const h = await startTestApp(t)
  const created = await h.operator<{
    publicKey: string
    secretKey: string
    storeId: string
    dashboard: { email: string; password: string }
  }>('POST', '/operator/v1/merchants', { name: 'Quickstart Shop', kycStatus: 'approved' })
  assert.equal(created.status, 201)
  const { publicKey, secretKey, storeId, dashboard } = created.body

  // What `kurus listen` or the dashboard does: an endpoint for the script's receiver.
  const port = await freePort()
  const login = await fetch(`${h.url}/v1/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(dashboard),
  })
  const { token } = (await login.json()) as { token: string }
  const endpoint = await fetch(`${h.url}/v1/stores/${storeId}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ url: `http://127.0.0.1:${port}/webhooks` }),
  })
  assert.equal(endpoint.status, 201)
  const { secret } = (await endpoint.json()) as { secret: string }

  const { code, out } = await run(example, {
    KURUS_PUBLIC_KEY: publicKey,
    KURUS_SECRET_KEY: secretKey,
    KURUS_URL: h.url,
    KURUS_WEBHOOK_SECRET: secret,
    PORT: String(port),
  })
  assert.equal(code, 0, out)

  const paymentId = /^payment (pay_\w+) pending_3ds$/m.exec(out)?.[1]
  assert.ok(paymentId, out)
  assert.match(out, new RegExp(`^session \\S+ http\\S+$`, 'm'))
  assert.match(out, new RegExp(`^payment ${paymentId} captured$`, 'm'))
  assert.match(out, new RegExp(`^webhook payment.captured ${paymentId}$`, 'm'))
  assert.match(out, /^refund \S+ completed$/m)
  assert.match(out, /^declined SVC-PAY-3501 card_declined pay_\w+$/m)
  assert.match(out, new RegExp(`^listed ${paymentId} 15000$`, 'm'))
  const lastReceived = [...out.matchAll(/^received (.*)$/gm)].at(-1)?.[1]?.split(',') ?? []
  for (const type of ['payment.captured', 'refund.completed', 'payment.failed']) {
    assert.ok(lastReceived.includes(type), `${type} in ${lastReceived.join(', ')}`)
  }

  // The API agrees with what the script printed.
  const kurus = new Kurus({ publicKey, secretKey, baseUrl: h.url, now: () => h.clock.now() })
  const payment = await kurus.payments.get(paymentId)
  assert.equal(payment.status, 'captured')
  assert.equal(payment.amount, 15000)
  const refunds = await kurus.refunds.list(paymentId)
  assert.equal(refunds.items.length, 1)
})
