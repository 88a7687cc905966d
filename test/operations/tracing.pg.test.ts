// Goal: with OTEL_EXPORTER_OTLP_ENDPOINT set, `kurus serve` exports a span per request (named
// after its route) over OTLP/HTTP, with the request's PostgreSQL queries as its children, and
// without card numbers; probes are not traced. Without the variable nothing of OpenTelemetry
// is loaded. Method: the real entry point in a child process, and a tiny OTLP receiver here.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { createTestDatabase, testBackend } from '../helpers/db.ts'

interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: { key: string; value: Record<string, unknown> }[]
}

interface OtlpBody {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] }
    scopeSpans: { spans: OtlpSpan[] }[]
  }[]
}

const SERVER = 2
const CLIENT = 3
const PAN = '4155650100416111'

async function freePort(): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** An OTLP/HTTP collector that keeps every export request it gets. */
async function startCollector(t: TestContext) {
  const posts: { path: string; contentType: string; raw: string }[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      posts.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        raw: Buffer.concat(chunks).toString('utf8'),
      })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  const spans = () =>
    posts.flatMap((p) =>
      (JSON.parse(p.raw) as OtlpBody).resourceSpans.flatMap((r) =>
        r.scopeSpans.flatMap((s) => s.spans),
      ),
    )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts, spans }
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', (code) => resolve(code))
  })
}

async function serve(t: TestContext, env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'kurus-tracing-'))
  const port = await freePort()
  const childEnv: Record<string, string> = {
    ...env,
    KURUS_DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    // Export every 100 ms instead of every 5 s (read by the OpenTelemetry SDK itself).
    OTEL_BSP_SCHEDULE_DELAY: '100',
  }
  if (testBackend() === 'postgres') {
    const database = await createTestDatabase()
    t.after(() => database.drop())
    childEnv['DATABASE_URL'] = database.url ?? ''
  } else childEnv['DATABASE_URL'] = ''
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    env: { ...process.env, ...childEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  t.after(async () => {
    if (child.exitCode === null) child.kill('SIGTERM')
    await exited(child)
    rmSync(dataDir, { recursive: true, force: true })
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break
    } catch {
      // not listening yet
    }
    assert.ok(i < 3000 && child.exitCode === null, `the server did not start: ${stderr}`)
    await delay(100)
  }
  return { url, child, stderr: () => stderr }
}

function attr(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}

test(
  'with OTEL_EXPORTER_OTLP_ENDPOINT a request exports its span over OTLP/HTTP',
  { timeout: 400_000 },
  async (t) => {
    const collector = await startCollector(t)
    const server = await serve(t, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url })
    await fetch(`${server.url}/healthz`)
    // An unknown key: the gateway looks it up in the database, then answers 401.
    const res = await fetch(`${server.url}/v1/auth/whoami`, {
      headers: {
        'x-api-key': 'pk_demo_unknownKey0123456789',
        'x-timestamp': new Date().toISOString(),
        'x-signature': '0'.repeat(64),
      },
    })
    assert.equal(res.status, 401)
    // A card number in a query string, by mistake: it must not leave in a span.
    await fetch(`${server.url}/v1/installments?bin=${PAN}`)

    let spans: OtlpSpan[] = []
    for (let i = 0; i < 100; i++) {
      spans = collector.spans()
      if (spans.some((s) => s.name === 'GET /v1/installments')) break
      await delay(100)
    }
    assert.ok(collector.posts.length > 0, 'the exporter posted')
    for (const post of collector.posts) {
      assert.equal(post.path, '/v1/traces')
      assert.match(post.contentType, /^application\/json/)
      assert.equal(post.raw.includes(PAN), false, 'no card number in an exported span')
    }
    const resource = (JSON.parse(collector.posts[0]?.raw ?? '{}') as OtlpBody).resourceSpans[0]
      ?.resource
    assert.ok(
      resource?.attributes.some((a) => a.key === 'service.name' && a.value.stringValue === 'kurus'),
    )

    const whoami = spans.find((s) => s.name === 'GET /v1/auth/whoami')
    assert.ok(whoami, `a span for the request: ${spans.map((s) => s.name).join(', ')}`)
    assert.equal(whoami.kind, SERVER)
    assert.equal(attr(whoami, 'http.route'), '/v1/auth/whoami')
    assert.ok(spans.some((s) => s.name === 'GET /v1/installments'))
    // Probes are not traced.
    assert.equal(
      spans.some((s) => s.name.includes('healthz') || s.name.includes('readyz')),
      false,
    )
    if (testBackend() === 'postgres') {
      // The key lookup is a child of the request's span.
      const queries = spans.filter((s) => s.parentSpanId === whoami.spanId && s.kind === CLIENT)
      assert.ok(
        queries.some((s) => s.name.startsWith('pg.query')),
        `a pg.query span under the request: ${spans.map((s) => `${s.name}<${s.parentSpanId ?? ''}`).join(', ')}`,
      )
    }
    // SIGTERM flushes and exits cleanly.
    server.child.kill('SIGTERM')
    assert.equal(await exited(server.child), 0, server.stderr())
  },
)

test('without OTEL_EXPORTER_OTLP_ENDPOINT the OpenTelemetry SDK is not loaded', async () => {
  const script = `
    const { runCommand } = await import('./src/commands.ts')
    const loaded = Object.keys((await import('node:module')).createRequire(import.meta.url).cache)
    // prom-client loads the no-op @opentelemetry/api when installed; the SDK, the exporter
    // and the instrumentations (what hooks http and pg) must stay out.
    const sdk = loaded.filter((p) => p.includes('@opentelemetry') && !p.includes('@opentelemetry/api/'))
    console.log(typeof runCommand, sdk.length)`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()))
  assert.equal(await exited(child), 0)
  assert.equal(out.trim(), 'function 0')
})
