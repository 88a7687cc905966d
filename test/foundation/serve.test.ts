// Goal: on a fresh data dir `npm start` serves and its printed curl returns whoami; a restart reuses the data; the CLI (sign, merchant create, kyc set) works against it.
// Method: spawn `node src/main.ts serve` (the pinned Node, as npm start) with a temp KURUS_DATA_DIR and free PORT; run the printed curl with bash.
import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Kurus, canonicalString, sign } from '../../sdk/index.ts'
import { createTestDatabase, testBackend } from '../helpers/db.ts'
import { freePort } from '../helpers/ports.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// Guards against a hang, not assertions about speed: PGlite's first start runs initdb.
const START_GUARD_MS = 120_000
const SERVER_SETTINGS = new Set([
  'DATABASE_URL',
  'KURUS_MASTER_KEY',
  'KURUS_OPERATOR_TOKEN',
  'KURUS_ENV',
  'PUBLIC_API_URL',
  'KURUS_PUBLIC_KEY',
  'KURUS_SECRET_KEY',
  'KURUS_URL',
])

interface Banner {
  merchantId: string
  storeId: string
  publicKey: string
  secretKey: string
  operatorToken: string
  curl: string
}

function parseBanner(stdout: string): Banner | undefined {
  const lines = stdout.split('\n').filter((l) => !l.startsWith('{'))
  const start = lines.findIndex((l) => l.startsWith('curl '))
  if (start < 0) return undefined
  let end = start
  while (end < lines.length && lines[end]!.endsWith('\\')) end++
  if (end >= lines.length) return undefined
  const field = (re: RegExp) => re.exec(stdout)?.[1] ?? ''
  return {
    merchantId: field(/merchant\s+(mrc_\w+)/),
    storeId: field(/store\s+(sto_\w+)/),
    publicKey: field(/public key\s+(pk_\S+)/),
    secretKey: field(/secret key\s+(sk_\S+)/),
    operatorToken: field(/operator\s+Bearer (\S+)/),
    curl: lines.slice(start, end + 1).join('\n'),
  }
}

interface Server {
  child: ChildProcess
  output: () => string
  /** Resolves once the output holds `needle`: log lines reach stdout in batches (≤ 200 ms). */
  logged: (needle: string) => Promise<void>
  banner: Banner
  stop: () => Promise<number | null>
}

async function serve(env: NodeJS.ProcessEnv): Promise<Server> {
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  )
  const banner = await new Promise<Banner>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`no banner:\n${out}\n${err}`)), START_GUARD_MS)
    const check = () => {
      const parsed = parseBanner(out)
      if (parsed) {
        clearTimeout(guard)
        resolve(parsed)
      }
    }
    child.stdout.on('data', check)
    void exited.then((code) => {
      clearTimeout(guard)
      reject(new Error(`server exited (${code}):\n${out}\n${err}`))
    })
  })
  return {
    child,
    banner,
    output: () => out + err,
    logged: (needle) =>
      new Promise<void>((resolve, reject) => {
        const guard = setTimeout(
          () => reject(new Error(`not logged within 5 s: ${needle}\n${out}\n${err}`)),
          5_000,
        )
        const check = () => {
          if (!(out + err).includes(needle)) return
          clearTimeout(guard)
          child.stdout.off('data', check)
          child.stderr.off('data', check)
          resolve()
        }
        child.stdout.on('data', check)
        child.stderr.on('data', check)
        check()
      }),
    stop: async () => {
      child.kill('SIGTERM')
      return exited
    },
  }
}

async function bash(script: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run('bash', ['-c', script], { cwd: ROOT, env })
  return stdout
}

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run(process.execPath, ['src/main.ts', ...args], { cwd: ROOT, env })
  return stdout
}

test(
  'npm start on a fresh data dir: printed curl works, the CLI works, a restart reuses the data',
  { timeout: 4 * START_GUARD_MS },
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kurus-serve-'))
    const port = await freePort()
    // The server reads its settings from its environment: start from ours without any of them.
    const inherited = Object.entries(process.env).filter(([name]) => !SERVER_SETTINGS.has(name))
    const env: NodeJS.ProcessEnv = {
      ...Object.fromEntries(inherited),
      KURUS_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    }
    // On the PostgreSQL run the server gets a fresh database of its own; on PGlite, the data dir.
    const database = testBackend() === 'postgres' ? await createTestDatabase() : undefined
    if (database?.url) env['DATABASE_URL'] = database.url
    const servers: Server[] = []
    t.after(async () => {
      for (const s of servers) if (s.child.exitCode === null) await s.stop()
      await database?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    const first = await serve(env)
    servers.push(first)
    const b = first.banner
    // `serve` sized V8's heap by replacing itself (src/heap-flags.ts): the pid we
    // started is still the server, now with the flag (issue 43; Linux's /proc shows it).
    if (process.platform === 'linux') {
      const argv = readFileSync(`/proc/${first.child.pid}/cmdline`, 'utf8').split('\0')
      assert.ok(argv.includes('--max-semi-space-size=8'), argv.join(' '))
    }
    assert.match(b.merchantId, /^mrc_/)
    assert.match(b.publicKey, /^pk_demo_/)
    assert.match(b.secretKey, /^sk_demo_/)
    assert.match(b.curl, new RegExp(`^curl -sS -X GET 'http://localhost:${port}/v1/auth/whoami'`))
    // The operator token was generated on first start and written to the data dir.
    assert.equal(readFileSync(join(dataDir, 'operator-token'), 'utf8').trim(), b.operatorToken)

    const whoami = JSON.parse(await bash(b.curl, env)) as Record<string, unknown>
    assert.equal(whoami['subjectScope'], 'merchant')
    assert.equal(whoami['merchantId'], b.merchantId)
    assert.equal(whoami['storeId'], b.storeId)

    // The printed dashboard URL and demo login sign in (the login form with its CSRF token).
    const dash = /dashboard\s+(http\S+\/dashboard)\s+(\S+@\S+) \/ (\S+)/.exec(first.output())
    assert.ok(dash, 'the banner prints the dashboard URL and login')
    const [, dashUrl = '', dashEmail = '', dashPassword = ''] = dash
    const form = await fetch(`${dashUrl}/login`)
    const cookie = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ')
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? ''
    const signIn = await fetch(`${dashUrl}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, email: dashEmail, password: dashPassword }),
    })
    assert.equal(signIn.status, 303)
    assert.equal(signIn.headers.get('location'), '/dashboard')

    // The CLI against the running server: KURUS_URL plus the operator token file in the data dir.
    const cliEnv = { ...env, KURUS_URL: `http://127.0.0.1:${port}` }
    const signed = await cli(['sign', 'GET', '/v1/auth/whoami'], cliEnv)
    assert.match(signed, /^curl -sS -X GET 'http:\/\/127\.0\.0\.1:\d+\/v1\/auth\/whoami'/)
    assert.ok(signed.includes(`X-Api-Key: ${b.publicKey}`))
    const viaSign = JSON.parse(await bash(signed, env)) as Record<string, unknown>
    assert.equal(viaSign['merchantId'], b.merchantId)
    // `sign` asked the server for the demo keys rather than opening its database.
    await first.logged('/operator/v1/demo/credentials')

    const created = JSON.parse(
      await cli(
        ['merchant', 'create', '--name', 'Çiçekçi Ayşe', '--kyc', 'approved', '--json'],
        cliEnv,
      ),
    ) as {
      merchantId: string
      storeId: string
      publicKey: string
      secretKey: string
    }
    assert.match(created.merchantId, /^mrc_/)
    const client = new Kurus({ ...created, baseUrl: `http://127.0.0.1:${port}` })
    assert.equal((await client.whoami()).merchantId, created.merchantId)
    assert.equal((await client.kycStatus()).status, 'approved')
    const kycOut = await cli(
      ['kyc', 'set', '--merchant', created.merchantId, '--status', 'suspended'],
      cliEnv,
    )
    assert.match(kycOut, /status: "suspended"/)
    // A signed POST from the CLI: the body it signs is the body curl sends, byte for byte.
    const body = '{"note":"Çay, şeker"}'
    const post = await cli(['sign', 'POST', '/v1/payments/sessions', body], cliEnv)
    assert.ok(post.includes(`--data-raw '${body}'`))
    const header = (name: string) => new RegExp(`${name}: ([^']+)'`).exec(post)?.[1] ?? ''
    assert.equal(
      header('X-Signature'),
      sign(
        b.secretKey,
        canonicalString(header('X-Timestamp'), 'POST', '/v1/payments/sessions', body),
      ),
    )

    assert.equal(await first.stop(), 0)

    // With the server down, `sign` reads the keys from the data itself.
    const offline = await cli(['sign', 'GET', '/v1/kyc/status'], cliEnv)
    assert.ok(offline.includes(`X-Api-Key: ${b.publicKey}`))
    const offlineHeader = (name: string) => new RegExp(`${name}: ([^']+)'`).exec(offline)?.[1] ?? ''
    assert.equal(
      offlineHeader('X-Signature'),
      sign(b.secretKey, canonicalString(offlineHeader('X-Timestamp'), 'GET', '/v1/kyc/status', '')),
    )

    const second = await serve(env)
    servers.push(second)
    assert.equal(second.banner.merchantId, b.merchantId)
    assert.equal(second.banner.storeId, b.storeId)
    assert.equal(second.banner.publicKey, b.publicKey)
    assert.equal(second.banner.secretKey, b.secretKey)
    assert.equal(second.banner.operatorToken, b.operatorToken)
    const again = JSON.parse(await bash(second.banner.curl, env)) as Record<string, unknown>
    assert.equal(again['merchantId'], b.merchantId)
    assert.equal((await client.whoami()).merchantId, created.merchantId)
    assert.equal((await client.kycStatus()).status, 'suspended')
    assert.equal(await second.stop(), 0)
  },
)
