// Goal: the quickstart works as a newcomer runs it: `npm start` (the sandbox with its demo
// merchant), `npx kurus listen --forward-to …` in a second terminal (its demo login and
// store by default), and examples/quickstart.ts (docs/quickstart.md's code) with the printed
// keys and webhook secret. Method: the three as child processes (`node src/main.ts serve`,
// `node src/main.ts listen`, `node quickstart.ts`) on free loopback ports, a temporary data
// directory, the server's embedded worker delivering the webhooks. The script imports the SDK's
// source here (no tarball to build); as-written.test.ts runs it from the installed tarball.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { test } from 'node:test'

const ROOT = resolve(import.meta.dirname, '../../..')
const EXAMPLE = resolve(import.meta.dirname, '../examples/quickstart.ts')
// The server's settings come from the environment: none of ours leaks into it.
const SERVER_SETTINGS = [
  'DATABASE_URL',
  'KURUS_MASTER_KEY',
  'KURUS_OPERATOR_TOKEN',
  'KURUS_ENV',
  'PUBLIC_API_URL',
  'KURUS_PUBLIC_KEY',
  'KURUS_SECRET_KEY',
  'KURUS_URL',
  'KURUS_DASHBOARD_EMAIL',
  'KURUS_DASHBOARD_PASSWORD',
  'PORT',
]

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const address = server.address()
  await new Promise((done) => server.close(done))
  assert.ok(address !== null && typeof address === 'object')
  return address.port
}

/** A child process whose output is collected; `waitFor` a match of it. */
function start(args: string[], env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  const waiters = new Set<() => void>()
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
      new Promise<RegExpExecArray>((done, fail) => {
        const check = () => {
          const match = pattern.exec(out)
          if (!match) return
          waiters.delete(check)
          done(match)
        }
        waiters.add(check)
        void exited.then((code) => fail(new Error(`${args.join(' ')} exited ${code}:\n${out}`)))
        check()
      }),
  }
}

test('the quickstart against npm start, with kurus listen forwarding its webhooks', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kurus-npm-start-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const [apiPort, shopPort] = [await freePort(), await freePort()]
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !SERVER_SETTINGS.includes(name)),
    ),
    KURUS_DATA_DIR: dataDir,
    // Where `kurus listen` keeps its endpoint and secret (not the developer's ~/.config).
    KURUS_CONFIG_DIR: dataDir,
    LOG_LEVEL: 'warn',
  }
  const api = `http://127.0.0.1:${apiPort}`

  // Terminal 1: npm start.
  const server = start(['src/main.ts', 'serve'], {
    ...env,
    PORT: String(apiPort),
    HOST: '127.0.0.1',
  })
  t.after(() => server.child.kill('SIGKILL'))
  const [, publicKey = ''] = await server.waitFor(/public key\s+(pk_demo_\S+)/)
  const [, secretKey = ''] = await server.waitFor(/secret key\s+(sk_demo_\S+)/)

  // Terminal 2: kurus listen, as the demo merchant's dashboard user.
  const shop = `http://localhost:${shopPort}/webhooks`
  const listen = start(['src/main.ts', 'listen', '--forward-to', shop], { ...env, KURUS_URL: api })
  t.after(() => listen.child.kill('SIGKILL'))
  const [, webhookSecret = ''] = await listen.waitFor(/Webhook signing secret: (whsec_\S+)/)

  // Terminal 3: the quickstart.
  const script = join(dataDir, 'quickstart.ts')
  const sdk = pathToFileURL(resolve(import.meta.dirname, '../src/index.ts')).href
  writeFileSync(
    script,
    readFileSync(EXAMPLE, 'utf8').replace(`from '@kurus/node'`, `from '${sdk}'`),
  )
  const quickstart = start([script], {
    ...env,
    KURUS_URL: api,
    KURUS_PUBLIC_KEY: publicKey,
    KURUS_SECRET_KEY: secretKey,
    KURUS_WEBHOOK_SECRET: webhookSecret,
    PORT: String(shopPort),
  })
  assert.equal(await quickstart.exited, 0, quickstart.output())
  const out = quickstart.output()
  const [, paymentId = ''] = /^payment (pay_\w+) pending_3ds$/m.exec(out) ?? []
  assert.match(out, new RegExp(`^payment ${paymentId} captured$`, 'm'))
  assert.match(out, new RegExp(`^webhook payment.captured ${paymentId}$`, 'm'))
  assert.match(out, /^refund \S+ completed$/m)
  assert.match(out, /^declined SVC-PAY-3501 card_declined pay_\w+$/m)

  // listen printed each delivery with the quickstart's answer (204: verified).
  await listen.waitFor(/--> payment\.captured \[evt_\w+\]\s+<-- 204/)
  await listen.waitFor(/--> payment\.failed \[evt_\w+\]/)
  await listen.waitFor(/--> refund\.completed \[evt_\w+\]/)

  listen.child.kill('SIGINT')
  assert.equal(await listen.exited, 0, listen.output())
  server.child.kill('SIGTERM')
  await server.exited
})
