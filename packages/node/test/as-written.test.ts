// Goal: docs/quickstart.md and the feature guides (payments, subscriptions, payouts, disputes)
// work exactly as written, from a fresh clone, for someone who knows nothing of this
// repository: the SDK installed the way the quickstart says (a tarball from
// `npm pack ./packages/node`, compiled by its prepack step), each guide's `ts` blocks pasted in
// order into one file of a project of their own, run with the command the guide gives.
// Method: the quickstart's shell commands run as written in a new directory outside the
// repository (only the tarball's destination is that directory instead of the clone's
// parent), with an environment stripped of this repository's npm and PATH entries; each guide's
// blocks copied from the markdown into `<guide>.ts` there and run by `npx node <guide>.ts`
// against the app on a loopback port; then the API is asked what happened.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { staleExamples } from '../../../scripts/docs-examples.ts'
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts'
import { Kurus } from '../src/index.ts'

const packageDir = resolve(import.meta.dirname, '..')
const repoRoot = resolve(packageDir, '../..')
const quickstart = readFileSync(join(repoRoot, 'docs/quickstart.md'), 'utf8')

/** The quickstart's setup, as its step 1 writes it. */
const PACK = 'npm pack ./packages/node --pack-destination ..'
const SETUP = [
  'mkdir ../my-shop && cd ../my-shop',
  'npm init -y && npm pkg set type=module',
  'npm install ../kurus-node-0.1.0.tgz node@24',
]

/** A shell as a newcomer has it: no npm_* variables and no path into this repository. */
function freshEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.toLowerCase().startsWith('npm_') && k !== 'NODE_OPTIONS') env[k] = v
  }
  env['PATH'] = (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((dir) => !dir.startsWith(repoRoot))
    .join(delimiter)
  // The registry's packages come from npm's cache when it has them (CI has just run npm ci).
  env['npm_config_prefer_offline'] = 'true'
  return { ...env, ...extra }
}

const sh = promisify(execFile)

let work = ''
let shop = ''

before(async () => {
  for (const line of [PACK, ...SETUP]) assert.ok(quickstart.includes(line), `quickstart: ${line}`)
  work = mkdtempSync(join(tmpdir(), 'kurus-as-written-'))
  // The tarball lands in `work`, the new project in `work/my-shop`: `../kurus-node-…` as written.
  const packed = await sh('npm', ['pack', './packages/node', '--pack-destination', work], {
    cwd: repoRoot,
    env: freshEnv(),
  })
  assert.match(packed.stdout, /^kurus-node-0\.1\.0\.tgz$/m)
  const root = join(work, 'clone')
  mkdirSync(root)
  await sh('bash', ['-ec', SETUP.join('\n')], { cwd: root, env: freshEnv() })
  shop = join(work, 'my-shop')
})

after(() => {
  if (work) rmSync(work, { recursive: true, force: true })
  rmSync(join(packageDir, 'dist'), { recursive: true, force: true })
})

test('examples/*.ts are the code of their guides, quickstart first (npm run docs:examples)', () => {
  assert.deepEqual(staleExamples(false), [])
})

test('the tarball ships compiled dist/*.js and dist/*.d.ts, no sources, no tests', async () => {
  const { stdout } = await sh('tar', ['-tzf', join(work, 'kurus-node-0.1.0.tgz')])
  const files = stdout
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''))
  for (const wanted of ['dist/index.js', 'dist/index.d.ts', 'dist/openapi.d.ts', 'package.json']) {
    assert.ok(files.includes(wanted), `${wanted} in ${files.join(', ')}`)
  }
  assert.ok(!files.some((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), 'no TypeScript source')
  assert.ok(!files.some((f) => f.startsWith('test/')), 'no tests')
})

/** The `ts` blocks of a doc, in order: what a reader pastes into one file. */
function blocks(doc: string): string {
  const markdown = readFileSync(join(repoRoot, `docs/${doc}.md`), 'utf8')
  const code = [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '')
  assert.ok(code.length > 0, doc)
  return code.join('\n')
}

/** Writes `<guide>.ts` into the project and runs the guide's own command for it. */
function run(guide: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  const markdown = readFileSync(join(repoRoot, `docs/${guide}.md`), 'utf8')
  assert.match(markdown, new RegExp(`^(KURUS_\\S+=\\S+ )*npx node ${guide}\\.ts$`, 'm'))
  writeFileSync(join(shop, `${guide}.ts`), blocks(guide))
  return new Promise((done, fail) => {
    const child = spawn('npx', ['node', `${guide}.ts`], {
      cwd: shop,
      env: freshEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (b: Buffer) => (out += b.toString()))
    child.stderr.on('data', (b: Buffer) => (out += b.toString()))
    child.on('error', fail)
    child.on('close', (code) => done({ code: code ?? -1, out }))
  })
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const address = server.address()
  await new Promise((done) => server.close(done))
  assert.ok(address !== null && typeof address === 'object')
  return address.port
}

async function shopKeys(h: TestApp) {
  const created = await h.operator<{
    merchantId: string
    publicKey: string
    secretKey: string
    storeId: string
    dashboard: { email: string; password: string }
  }>('POST', '/operator/v1/merchants', { name: 'Guide Shop', kycStatus: 'approved' })
  assert.equal(created.status, 201)
  const { publicKey, secretKey } = created.body
  const env = { KURUS_PUBLIC_KEY: publicKey, KURUS_SECRET_KEY: secretKey, KURUS_URL: h.url }
  const kurus = new Kurus({ publicKey, secretKey, baseUrl: h.url, now: () => h.clock.now() })
  return { ...created.body, env, kurus }
}

test('docs/quickstart.md: 3DS charge, webhook, refund, decline, list', async (t) => {
  assert.match(quickstart, /^npx node quickstart\.ts$/m)
  const h = await startTestApp(t)
  const { env, kurus, storeId, dashboard } = await shopKeys(h)

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

  const { code, out } = await run('quickstart', {
    ...env,
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
  const payment = await kurus.payments.get(paymentId)
  assert.equal(payment.status, 'captured')
  assert.equal(payment.amount, 15000)
  const refunds = await kurus.refunds.list(paymentId)
  assert.equal(refunds.items.length, 1)
})

test('docs/payments.md: charge, 3-D Secure, partial captures, refund, decline', async (t) => {
  const h = await startTestApp(t)
  const { env, kurus } = await shopKeys(h)
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
  const { env, kurus } = await shopKeys(h)
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
  const { merchantId, env, kurus } = await shopKeys(h)
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
  const { env, kurus } = await shopKeys(h)
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
