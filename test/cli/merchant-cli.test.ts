// Goal: the merchant commands of the CLI work against a running server: `kurus listen`
// registers a temporary endpoint through the dashboard API, forwards each delivery unchanged
// (the local app verifies it with the printed secret), prints it with the local answer and
// removes the endpoint on SIGINT; `kurus trigger` makes the real objects whose events it
// names; `payments get|list` and `--json` print what the API answers.
// Method: the app on a loopback port; the CLI as `node src/main.ts …` (what `npx kurus` runs)
// in child processes, with the merchant's keys and dashboard login in the environment.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test, type TestContext } from 'node:test'
import { Kurus, webhooks, type WebhookEvent } from '../../packages/node/src/index.ts'
import { TRIGGERS, trigger } from '../../src/merchant-cli.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'

const ROOT = resolve(import.meta.dirname, '../..')

interface Shop {
  publicKey: string
  secretKey: string
  storeId: string
  dashboard: { email: string; password: string }
  kurus: Kurus
}

async function shop(h: TestApp): Promise<Shop> {
  const created = await h.operator<Omit<Shop, 'kurus'>>('POST', '/operator/v1/merchants', {
    name: 'CLI Shop',
    kycStatus: 'approved',
  })
  assert.equal(created.status, 201)
  const { publicKey, secretKey, storeId, dashboard } = created.body
  const kurus = new Kurus({ publicKey, secretKey, baseUrl: h.url, now: () => h.clock.now() })
  return { publicKey, secretKey, storeId, dashboard, kurus }
}

function cliEnv(t: TestContext, h: TestApp, s: Shop): NodeJS.ProcessEnv {
  const dataDir = mkdtempSync(join(tmpdir(), 'kurus-cli-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  return {
    ...process.env,
    KURUS_ENV: 'demo',
    KURUS_DATA_DIR: dataDir,
    KURUS_CONFIG_DIR: dataDir,
    KURUS_URL: h.url,
    KURUS_PUBLIC_KEY: s.publicKey,
    KURUS_SECRET_KEY: s.secretKey,
    KURUS_DASHBOARD_EMAIL: s.dashboard.email,
    KURUS_DASHBOARD_PASSWORD: s.dashboard.password,
    LOG_LEVEL: 'silent',
  }
}

function kurusCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['src/main.ts', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Runs a CLI command to its end. */
function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((done) => {
    const child = kurusCli(args, env)
    let out = ''
    child.stdout?.on('data', (b: Buffer) => (out += b.toString()))
    child.stderr?.on('data', (b: Buffer) => (out += b.toString()))
    child.on('close', (code) => done({ code: code ?? -1, out }))
  })
}

/** A running CLI process whose output is collected; `waitFor` a line of it. */
function startCli(args: string[], env: NodeJS.ProcessEnv) {
  const child = kurusCli(args, env)
  let out = ''
  const waiters: (() => void)[] = []
  const onData = (b: Buffer) => {
    out += b.toString()
    for (const w of [...waiters]) w()
  }
  child.stdout?.on('data', onData)
  child.stderr?.on('data', onData)
  const exited = new Promise<number | null>((done) => child.on('close', done))
  return {
    child,
    exited,
    output: () => out,
    waitFor: (pattern: RegExp) =>
      new Promise<string>((done, fail) => {
        const check = () => {
          const match = pattern.exec(out)
          if (match) {
            waiters.splice(waiters.indexOf(check), 1)
            done(match[0])
          }
        }
        waiters.push(check)
        void exited.then((code) => fail(new Error(`exited ${code}: ${out}`)))
        // A line that never comes fails with what did come, not a hung file.
        setTimeout(
          () => fail(new Error(`no line matching ${pattern} within 90 s: ${out}`)),
          90_000,
        ).unref()
        check()
      }),
  }
}

test('kurus listen forwards signed deliveries, prints each with the local answer, and keeps one secret per machine', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)

  // The merchant's local app: verifies with the secret listen printed, answers 204.
  const received: WebhookEvent[] = []
  let secret = ''
  const local = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      try {
        received.push(webhooks.verify(Buffer.concat(chunks), req.headers, secret))
        res.writeHead(204).end()
      } catch {
        res.writeHead(400).end()
      }
    })
  })
  await new Promise<void>((done) => local.listen(0, '127.0.0.1', done))
  t.after(() => new Promise((done) => local.close(done)))
  const forwardTo = `http://127.0.0.1:${(local.address() as AddressInfo).port}/hooks`

  const env = cliEnv(t, h, s)
  const cli = startCli(['listen', '--forward-to', forwardTo], env)
  t.after(() => cli.child.kill('SIGKILL'))
  secret = (await cli.waitFor(/whsec_\S+/)).trim()
  assert.match(cli.output(), /^Ready\. Forwarding deliveries to /m)

  const endpoints = async () => {
    const res = await fetch(`${h.url}/v1/stores/${s.storeId}/webhooks`, {
      headers: { authorization: `Bearer ${await token(h, s)}` },
    })
    return ((await res.json()) as { items: { id: string; url: string; status: string }[] }).items
  }
  const [endpoint] = (await endpoints()).filter((e) => e.status === 'enabled')
  assert.ok(endpoint)
  assert.match(endpoint.url, /^http:\/\/127\.0\.0\.1:\d+\/kurus-listen\/[0-9a-f]+$/)

  const result = await trigger(s.kurus, 'payment.succeeded')
  assert.equal(result.trigger, 'payment.captured')
  const line = await cli.waitFor(/^.*--> payment\.captured \[evt_\w+\]\s+<-- 204.*$/m)
  assert.ok(line.includes(`POST ${forwardTo}`), line)
  assert.deepEqual(
    received.map((e) => [e.type, e.data['id']]),
    [['payment.captured', result.paymentId]],
  )

  cli.child.kill('SIGINT')
  assert.equal(await cli.exited, 0, cli.output())
  // Kept for the next run: same endpoint, same secret, same port.
  assert.ok((await endpoints()).some((e) => e.id === endpoint.id && e.status === 'enabled'))
  const again = startCli(['listen', '--forward-to', forwardTo], env)
  t.after(() => again.child.kill('SIGKILL'))
  assert.equal((await again.waitFor(/whsec_\S+/)).trim(), secret)
  assert.match(again.output(), /the same as last time/)
  assert.deepEqual(
    (await endpoints()).filter((e) => e.status === 'enabled').map((e) => e.url),
    [endpoint.url],
  )
  const file = join(String(env['KURUS_CONFIG_DIR']), 'listen.json')
  assert.equal(statSync(file).mode & 0o777, 0o600)
  again.child.kill('SIGINT')
  assert.equal(await again.exited, 0, again.output())

  // --new-secret: another endpoint and secret; the old endpoint is deleted.
  const fresh = startCli(['listen', '--forward-to', forwardTo, '--new-secret'], env)
  t.after(() => fresh.child.kill('SIGKILL'))
  const newSecret = (await fresh.waitFor(/whsec_\S+/)).trim()
  assert.notEqual(newSecret, secret)
  const enabled = (await endpoints()).filter((e) => e.status === 'enabled')
  assert.equal(enabled.length, 1)
  assert.notEqual(enabled[0]?.id, endpoint.id)
  fresh.child.kill('SIGINT')
  assert.equal(await fresh.exited, 0, fresh.output())
})

async function token(h: TestApp, s: Shop): Promise<string> {
  const res = await fetch(`${h.url}/v1/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(s.dashboard),
  })
  return ((await res.json()) as { token: string }).token
}

test('kurus trigger makes the objects whose events it names, for every type it offers', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)
  for (const [name, spec] of Object.entries(TRIGGERS)) {
    const result = await trigger(s.kurus, name)
    const resourceIds = [result.paymentId, result.refundId, result.customerId, result.chargebackId]
    const types = new Set<string>()
    for (const id of resourceIds) {
      if (id === undefined) continue
      for await (const e of s.kurus.events.list({ resourceId: id })) types.add(e.type)
    }
    for (const wanted of spec.events)
      assert.ok(types.has(wanted), `${name}: ${wanted} in ${[...types].join(', ')}`)
  }
  await assert.rejects(trigger(s.kurus, 'payment.exploded'), /cannot trigger payment\.exploded/)
})

test('kurus trigger, payments get and payments list print JSON with --json', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)
  const env = cliEnv(t, h, s)
  const triggered = await runCli(['trigger', 'payment.failed', '--json'], env)
  assert.equal(triggered.code, 0, triggered.out)
  const result = JSON.parse(triggered.out) as { trigger: string; paymentId: string }
  assert.equal(result.trigger, 'payment.failed')

  const got = await runCli(['payments', 'get', result.paymentId, '--json'], env)
  assert.equal(got.code, 0, got.out)
  const payment = JSON.parse(got.out) as { id: string; status: string; failureCode: string }
  assert.equal(payment.id, result.paymentId)
  assert.equal(payment.status, 'failed')

  const listed = await runCli(['payments', 'list', '--status', 'failed', '--json'], env)
  assert.equal(listed.code, 0, listed.out)
  assert.deepEqual(
    (JSON.parse(listed.out) as { id: string }[]).map((p) => p.id),
    [result.paymentId],
  )
  const plain = await runCli(['payments', 'list'], env)
  assert.match(plain.out, new RegExp(`^${result.paymentId}\\s+failed\\s+100\\.00 TRY`, 'm'))
})

test('kurus logs tail prints the requests logged after it starts, filtered by status class', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)
  const env = cliEnv(t, h, s)
  const before = await s.kurus.transport.send('GET', `/v1/payments/pay_${'1'.repeat(24)}`)
  assert.equal(before.status, 404)
  // Logged (written within about a second) before the tails start: their starting point.
  while (!(await s.kurus.logs.list()).items.some((l) => l.requestId === before.requestId)) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }

  const json = startCli(['logs', 'tail', '--status', '4xx', '--json'], env)
  t.after(() => json.child.kill('SIGKILL'))
  const plain = startCli(['logs', 'tail'], env)
  t.after(() => plain.child.kill('SIGKILL'))
  await json.waitFor(/^Tailing the API request log/m)
  await plain.waitFor(/^Tailing the API request log/m)

  const ok = await s.kurus.transport.send('GET', '/v1/auth/whoami')
  const missing = await s.kurus.transport.send('GET', `/v1/payments/pay_${'2'.repeat(24)}`)
  assert.equal(missing.status, 404)
  const line = await json.waitFor(new RegExp(`^\\{.*"${missing.requestId}".*\\}$`, 'm'))
  const logged = JSON.parse(line) as { status: number; path: string; errorCode: string }
  assert.equal(logged.status, 404, line)
  assert.equal(logged.path, `/v1/payments/pay_${'2'.repeat(24)}`)
  assert.match(logged.errorCode, /^SVC-/)
  await plain.waitFor(
    new RegExp(
      `^\\S+  404 GET    /v1/payments/pay_2{24}  SVC-\\S+  \\d+ ms  ${missing.requestId}$`,
      'm',
    ),
  )
  await plain.waitFor(
    new RegExp(`^\\S+  200 GET    /v1/auth/whoami  \\d+ ms  ${ok.requestId}$`, 'm'),
  )
  // The filter kept the 200 out, and what was logged before the tail started is not news.
  assert.ok(!json.output().includes(String(ok.requestId)), json.output())
  assert.ok(!json.output().includes(String(before.requestId)), json.output())
  assert.ok(!plain.output().includes(String(before.requestId)), plain.output())

  json.child.kill('SIGINT')
  assert.equal(await json.exited, 0, json.output())
})
