// Goal: the CLI as an integrator meets it (issue 38): `kurus sign` signs the path without its
// query string, so the curl it prints is accepted for a URL with one; `--help` names every
// trigger; `kurus logs tail` shows the requests the gateway refused for one of the merchant's
// keys (a wrong secret, a skewed clock, a missing header) with the reason and without the
// secret; `kurus trigger` with a live key says it is sandbox-only, in one line, no stack.
// Method: the app on a loopback port; the CLI as `node src/main.ts …` (what `npx kurus` runs)
// in child processes; the curl `sign` prints is sent with fetch, headers as printed.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test, type TestContext } from 'node:test'
import { Kurus, canonicalString, sign } from '../../packages/node/src/index.ts'
import { TRIGGERS } from '../../src/merchant-cli.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'

const ROOT = resolve(import.meta.dirname, '../..')

async function shop(h: TestApp) {
  const created = await h.operator<{ publicKey: string; secretKey: string }>(
    'POST',
    '/operator/v1/merchants',
    { name: 'CLI Shop', kycStatus: 'approved' },
  )
  assert.equal(created.status, 201)
  const { publicKey, secretKey } = created.body
  const kurus = new Kurus({ publicKey, secretKey, baseUrl: h.url, now: () => h.clock.now() })
  return { publicKey, secretKey, kurus }
}

/** The three authentication headers, signed with `secretKey` at `timestamp`. */
function signedHeaders(publicKey: string, secretKey: string, path: string, timestamp: string) {
  return {
    'X-Api-Key': publicKey,
    'X-Timestamp': timestamp,
    'X-Signature': sign(secretKey, canonicalString(timestamp, 'GET', path, '')),
  }
}

function cliEnv(t: TestContext, url: string, keys: Record<string, string>): NodeJS.ProcessEnv {
  const dataDir = mkdtempSync(join(tmpdir(), 'kurus-cli-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  return {
    ...process.env,
    KURUS_ENV: 'demo',
    KURUS_DATA_DIR: dataDir,
    KURUS_CONFIG_DIR: dataDir,
    KURUS_URL: url,
    ...keys,
    LOG_LEVEL: 'silent',
  }
}

function spawnCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['src/main.ts', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

function runCli(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number; out: string; err: string }>((done) => {
    const child = spawnCli(args, env)
    let out = ''
    let err = ''
    child.stdout?.on('data', (b: Buffer) => (out += b.toString()))
    child.stderr?.on('data', (b: Buffer) => (err += b.toString()))
    child.on('close', (code) => done({ code: code ?? -1, out, err }))
  })
}

test('kurus sign: the printed curl is accepted for a path with a query string', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)
  const env = cliEnv(t, h.url, { KURUS_PUBLIC_KEY: s.publicKey, KURUS_SECRET_KEY: s.secretKey })
  const { code, out } = await runCli(['sign', 'GET', '/v1/transactions?limit=2'], env)
  assert.equal(code, 0, out)
  const url = /curl -sS -X GET '([^']+)'/.exec(out)?.[1]
  assert.equal(url, `${h.url}/v1/transactions?limit=2`)
  const headers = Object.fromEntries(
    [...out.matchAll(/-H '([^:]+): ([^']+)'/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
  )
  const res = await fetch(url, { headers })
  assert.equal(res.status, 200, await res.clone().text())
  const body = (await res.json()) as { items: unknown[] }
  assert.ok(Array.isArray(body.items))
})

test('kurus --help names every trigger the CLI offers', async (t) => {
  const { code, out } = await runCli(['--help'], cliEnv(t, 'http://127.0.0.1:9', {}))
  assert.equal(code, 0, out)
  for (const name of Object.keys(TRIGGERS)) assert.ok(out.includes(name), name)
})

test('kurus trigger with a live key says it is sandbox-only, without a stack', async (t) => {
  const env = cliEnv(t, 'http://127.0.0.1:9', {
    KURUS_PUBLIC_KEY: 'pk_live_abcdefghijklmnop',
    KURUS_SECRET_KEY: 'sk_live_abcdefghijklmnopqrstuvwxyz',
  })
  const { code, out, err } = await runCli(['trigger', 'payment.captured'], env)
  assert.equal(code, 1)
  assert.equal(out, '')
  assert.match(err, /^kurus trigger works in the sandbox only/)
  assert.doesNotMatch(err, /^\s+at /m)
  assert.equal(err.trim().split('\n').length, 1, err)
})

test('a server error reaches the CLI as one line with its code and request id', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)
  const env = cliEnv(t, h.url, { KURUS_PUBLIC_KEY: s.publicKey, KURUS_SECRET_KEY: s.secretKey })
  const { code, err } = await runCli(['payments', 'get', `pay_${'9'.repeat(24)}`], env)
  assert.equal(code, 1)
  assert.match(err, /^404 SVC-\S+: .* \(request \S+\)$/m)
  assert.doesNotMatch(err, /^\s+at /m)
})

test('kurus logs tail shows refused requests of the merchant key, with the reason, never the secret', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)
  const env = cliEnv(t, h.url, { KURUS_PUBLIC_KEY: s.publicKey, KURUS_SECRET_KEY: s.secretKey })
  const tail = spawnCli(['logs', 'tail', '--status', '401', '--json'], env)
  t.after(() => tail.kill('SIGKILL'))
  let out = ''
  tail.stdout?.on('data', (b: Buffer) => (out += b.toString()))
  let err = ''
  await new Promise<void>((ready) =>
    tail.stderr?.on('data', (b: Buffer) => {
      err += b.toString()
      if (err.includes('Tailing')) ready()
    }),
  )

  const path = '/v1/auth/whoami'
  const send = (headers: Record<string, string>) =>
    fetch(h.url + path, { headers }).then(async (r) => ({
      status: r.status,
      requestId: r.headers.get('x-request-id') ?? '',
    }))
  const now = () => h.clock.now().toISOString()
  // A key no merchant has stays out of every merchant's log (sent first: the lines below are
  // written after it).
  const unknown = await send(signedHeaders('pk_demo_nobodyskey0000', 'x', path, now()))
  const badSignature = await send(signedHeaders(s.publicKey, 'sk_demo_not-it', path, now()))
  const sevenMinutesAgo = new Date(h.clock.now().getTime() - 7 * 60_000).toISOString()
  const late = await send(signedHeaders(s.publicKey, s.secretKey, path, sevenMinutesAgo))
  const noSignature = await send({ 'X-Api-Key': s.publicKey, 'X-Timestamp': now() })
  for (const r of [badSignature, late, noSignature, unknown]) assert.equal(r.status, 401)

  const lineOf = async (requestId: string) => {
    for (;;) {
      const line = out.split('\n').find((l) => l.includes(requestId))
      if (line) return JSON.parse(line) as { status: number; errorCode: string; reason: string }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const bad = await lineOf(badSignature.requestId)
  assert.equal(bad.errorCode, 'SVC-GW-1002')
  assert.match(bad.reason, /X-Signature does not match .*"\/v1\/auth\/whoami"/)
  const skew = await lineOf(late.requestId)
  assert.equal(skew.errorCode, 'SVC-GW-1001')
  assert.match(skew.reason, /X-Timestamp is 7 min behind the server's clock/)
  const missing = await lineOf(noSignature.requestId)
  assert.equal(missing.errorCode, 'SVC-GW-1002')
  assert.match(missing.reason, /X-Signature header is missing/)

  // The unknown key's refusal came first: it would be there by now.
  assert.ok(!out.includes(unknown.requestId), out)
  assert.ok(!out.includes(s.secretKey), 'no secret in the log')
  const logged = await s.kurus.logs.list({ status: '401' })
  assert.ok(logged.items.every((l) => l.status === 401 && l.reason !== null))
  tail.kill('SIGINT')
})
