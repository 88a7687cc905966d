// Goal: issue 22 §4, abuse and leaks: Unicode bidi controls refused in every text a route takes
// (400 SVC-VAL-3001 naming the field), on every route of the route table; the live-mode SSRF
// guard on the addresses the old blocklist missed; /metrics closed on the public port in live;
// demo-only conveniences absent from, and refusing to run in, live.
// Method: the real app over HTTP in demo and live. The bidi sweep reads the route table and
// builds, from each route's own body schema, a body that passes validation, then puts a bidi
// control into one string at a time (validation runs before any handler, so no setup is
// needed and nothing is executed).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { printDemoBanner, seedDemo } from '../../src/commands.ts'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { startRuntime } from '../../src/server.ts'
import { devMailboxRoutes } from '../../src/modules/mail/index.ts'
import { createMetrics, metricsAccess, serveMetrics } from '../../src/platform/metrics.ts'
import { OPERATOR_TOKEN, startTestApp } from '../helpers/app.ts'
import { captured, session, type World } from './_catalog.ts'
import { startReceiver } from './_receiver.ts'
import {
  exampleOf,
  fillPath,
  routeTable,
  stringLeaves,
  type RouteInfo,
  type StringLeaf,
} from './_routes.ts'
import { assertEnvelope, newActor, rawRequest, signed, type RawResponse } from './_support.ts'

// ---------------------------------------------------------------- bidi controls

const RLO = '\u202e'
/** Every code point the rule refuses: embeddings, overrides, PDF, isolates, and the marks. */
const BIDI = [
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200e',
  '\u200f',
  '\u061c',
]

interface Refusal {
  status: number
  code: string | undefined
  field: string | undefined
  reason: string | undefined
}

function refusal(res: RawResponse): Refusal {
  const body = res.json as { code?: string; details?: { field: string; reason: string }[] }
  return {
    status: res.status,
    code: body.code,
    field: body.details?.[0]?.field,
    reason: body.details?.[0]?.reason,
  }
}

function assertBidiRefused(res: RawResponse, field: string, context: string): void {
  assertEnvelope(res, context)
  assert.deepEqual(
    refusal(res),
    {
      status: 400,
      code: 'SVC-VAL-3001',
      field,
      reason:
        'must not contain Unicode bidirectional control characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)',
    },
    `${context}: ${res.text}`,
  )
}

test('bidi controls: refused with 400 naming the field (customer, session, invoice, refund, card holder)', async (t) => {
  const h = await startTestApp(t)
  const receiver = await startReceiver(t)
  const w: World = { h, receiverUrl: receiver.url }
  const m = await newActor(h, { name: 'Bidi Shop' })
  const post = (path: string, body: unknown) =>
    signed(h, m, { method: 'POST', path, body: JSON.stringify(body) })

  await t.test('a customer name, with each of the twelve code points', async () => {
    for (const ch of BIDI) {
      const res = await post('/v1/customers', {
        externalId: `bidi-${ch.codePointAt(0)}`,
        name: `Ali ${ch}Veli`,
      })
      assertBidiRefused(res, 'name', `U+${ch.codePointAt(0)?.toString(16)}`)
    }
    // Right-to-left scripts themselves, and invisible joiners, are text like any other.
    for (const [i, name] of ['مرحبا بالعالم', 'שלום עולם', 'Ayşe 👩‍👩‍👧', 'فاطمة‌ها'].entries()) {
      const ok = await post('/v1/customers', { externalId: `rtl-${i}`, name })
      assert.equal(ok.status, 201, `${name}: ${ok.text}`)
    }
  })

  await t.test('a session description and a metadata value or key', async () => {
    const base = {
      transactionId: 'bidi-session',
      amount: 5_000,
      currency: 'TRY',
      returnUrl: 'https://shop.example/r',
    }
    const description = await post('/v1/payments/sessions', {
      ...base,
      description: `Sipariş ${RLO}4321 gpj.exe`,
    })
    assertBidiRefused(description, 'description', 'session description')
    const value = await post('/v1/payments/sessions', {
      ...base,
      metadata: { order: `A${RLO}B` },
    })
    assertBidiRefused(value, 'metadata.order', 'metadata value')
    const key = await post('/v1/payments/sessions', { ...base, metadata: { [`o${RLO}k`]: 'x' } })
    assertBidiRefused(key, 'metadata', 'metadata key')
  })

  await t.test('an invoice line item and notes', async () => {
    const invoice = {
      storeId: m.storeId,
      amountMinor: 10_000,
      currency: 'TRY',
      lineItems: [
        { name: 'Danışmanlık', qty: 1, unitPriceMinor: 5_000, lineTotalMinor: 5_000 },
        {
          name: `Kurulum \u2067ücreti\u2069`,
          qty: 1,
          unitPriceMinor: 5_000,
          lineTotalMinor: 5_000,
        },
      ],
    }
    assertBidiRefused(await post('/v1/invoices', invoice), 'lineItems.1.name', 'line item')
    const notes = await post('/v1/invoices', {
      ...invoice,
      lineItems: [invoice.lineItems[0]!, { ...invoice.lineItems[0]!, name: 'Kurulum' }],
      notes: `IBAN\u200f 0006 1005 1978`,
    })
    assertBidiRefused(notes, 'notes', 'invoice notes')
  })

  await t.test('a refund reason: refused, and no money moves', async () => {
    const paymentId = await captured(w, m)
    const res = await post(`/v1/payments/${paymentId}/refund`, {
      amount: 100,
      reason: `iade ${RLO}edildi`,
    })
    assertBidiRefused(res, 'reason', 'refund reason')
    const payment = await m.client.request<{ refundableAmount: number }>(
      'GET',
      `/v1/payments/${paymentId}`,
    )
    assert.equal(payment.body.refundableAmount, 10_000)
    const plain = await post(`/v1/payments/${paymentId}/refund`, { amount: 100, reason: 'iade' })
    assert.equal(plain.status, 200, plain.text)
  })

  await t.test("a buyer's card holder name on the public pay endpoint", async () => {
    const s = await session(m, 5_000)
    const res = await rawRequest(h, {
      method: 'POST',
      path: `/v1/public/sessions/${s.sessionId}/pay`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        card: {
          number: '4155650100416111',
          expMonth: 12,
          expYear: h.clock.now().getUTCFullYear() + 2,
          cvc: '123',
          holderName: `AYSE ${RLO}YILMAZ`,
        },
      }),
    })
    assertBidiRefused(res, 'card.holderName', 'public pay')
  })

  await t.test("a submerchant's holder name on the dashboard", async () => {
    const res = await m.dash('POST', '/v1/dashboard/submerchants', {
      body: { name: 'Satıcı', iban: 'TR330006100519786457841326', holderName: `Sat\u202bıcı` },
    })
    assertBidiRefused(res, 'holderName', 'dashboard submerchant')
  })
})

/** A path whose parameters pass their own schemas (the body is what is under test). */
function shapedPath(route: RouteInfo): string {
  const params: Record<string, string> = {}
  for (const p of route.params) {
    const value = exampleOf(route.paramSchemas[p] ?? { type: 'string' })
    params[p] = typeof value === 'string' && value !== '' ? value : 'x1'
  }
  return fillPath(route.path, params)
}

/** `body` with the string at `pointer` replaced. */
function replaced(body: unknown, pointer: string, value: string): unknown {
  const copy = structuredClone(body) as Record<string, unknown>
  const keys = pointer.split('/').slice(1)
  const last = keys.pop()
  let node: Record<string, unknown> = copy
  for (const key of keys) node = node[key] as Record<string, unknown>
  if (last !== undefined) node[last] = value
  return copy
}

/** Would the leaf's schema take this text if it were not for the bidi rule? */
function schemaWouldAccept(leaf: StringLeaf, text: string): boolean {
  const s = leaf.schema
  if (s.enum !== undefined || s.const !== undefined || s.format !== undefined) return false
  if (s.maxLength !== undefined && Array.from(text).length > s.maxLength) return false
  return s.pattern === undefined || new RegExp(s.pattern, 'u').test(text)
}

test('bidi controls: every string of every route body in the route table is refused, naming it', async (t) => {
  const h = await startTestApp(t)
  const m = await newActor(h, { name: 'Bidi Sweep' })
  const jwt = await m.token()
  const send = (route: RouteInfo, path: string, body: string): Promise<RawResponse> => {
    if (route.cls === 'signed') return signed(h, m, { method: route.method, path, body })
    const auth =
      route.cls === 'dashboard'
        ? { authorization: `Bearer ${jwt}` }
        : route.cls === 'operator'
          ? { authorization: `Bearer ${OPERATOR_TOKEN}` }
          : {}
    return rawRequest(h, {
      method: route.method,
      path,
      headers: { ...auth, 'content-type': 'application/json' },
      body,
    })
  }
  const routes = routeTable(h.app.fastify).filter(
    (r) => r.body !== undefined && r.cls !== 'page' && r.cls !== 'infra',
  )
  let byBidiRule = 0
  const checked: string[] = []
  for (const route of routes) {
    const body = exampleOf(route.body)
    const path = shapedPath(route)
    for (const leaf of stringLeaves(route.body, body)) {
      // After the first character: a leading control would also break most patterns first.
      const first = leaf.value === '' ? '' : String.fromCodePoint(leaf.value.codePointAt(0) ?? 0)
      const text = `${first}${RLO}${leaf.value.slice(first.length)}`
      const field = leaf.pointer.slice(1).replaceAll('/', '.')
      const res = await send(route, path, JSON.stringify(replaced(body, leaf.pointer, text)))
      const context = `${route.key} ${field}`
      assertEnvelope(res, context)
      const got = refusal(res)
      assert.equal(got.status, 400, `${context}: ${res.text}`)
      assert.equal(got.code, 'SVC-VAL-3001', context)
      assert.equal(got.field, field, `${context}: ${res.text}`)
      // Free text fails on the bidi rule itself; an id, enum or URL may fail on its own shape.
      if (schemaWouldAccept(leaf, text)) {
        assert.match(got.reason ?? '', /bidirectional control/, context)
        byBidiRule += 1
      }
      checked.push(context)
    }
  }
  // The sweep reached the text fields (names, descriptions, reasons, line items, holders…).
  for (const must of [
    'POST /v1/customers name',
    'POST /v1/payments/sessions description',
    'POST /v1/invoices lineItems.0.name',
    'POST /v1/payments/{id}/refund reason',
    'POST /v1/public/sessions/{id}/pay card.holderName',
    'POST /v1/dashboard/submerchants holderName',
    'POST /v1/payout-drafts rows.0.holderName',
    'POST /operator/v1/merchants name',
  ]) {
    assert.ok(checked.includes(must), `${must} was not swept (${checked.length} fields were)`)
  }
  assert.ok(byBidiRule >= 50, `${byBidiRule} fields refused by the bidi rule itself`)
})

// ---------------------------------------------------------------- SSRF (more in test/webhooks)

test('webhook destinations: the IPv6 forms the old blocklist missed are refused in live', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' }, freshDatabase: true })
  const m = await newActor(h, { name: 'Live Hooks 22' })
  for (const url of [
    'http://[::127.0.0.1]/hooks',
    'http://[::ffff:0:7f00:1]/hooks',
    'http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/',
    'http://[fec0::1]/hooks',
  ]) {
    const res = await m.dash('POST', `/v1/stores/${m.storeId}/webhooks`, { body: { url } })
    assertEnvelope(res, url)
    assert.equal(res.status, 400, `${url}: ${res.text}`)
    assert.equal(refusal(res).field, 'url')
  }
})

// ---------------------------------------------------------------- /metrics

const METRICS_TOKEN = 'metrics-token-0123456789abcdef'

const scrape = (h: { url: string }, authorization?: string) =>
  rawRequest(h, {
    method: 'GET',
    path: '/metrics',
    ...(authorization ? { headers: { authorization } } : {}),
  })

test('/metrics: not served on the public port in live without a token', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  for (const auth of [undefined, `Bearer ${METRICS_TOKEN}`, `Bearer ${OPERATOR_TOKEN}`]) {
    const res = await scrape(h, auth)
    assert.equal(res.status, 404, res.text)
    assertEnvelope(res, 'live /metrics')
    assert.doesNotMatch(res.text, /kurus_|process_cpu/)
  }
  assert.ok(h.logs.some((l) => l.includes('/metrics is not served')))
  // The routes still count: the histogram is fed whether or not it is served here.
  assert.equal((await rawRequest(h, { method: 'GET', path: '/healthz' })).status, 200)
})

test('/metrics: with KURUS_METRICS_TOKEN, only the bearer of that token reads it (live and demo)', async (t) => {
  for (const env of ['live', 'demo']) {
    const h = await startTestApp(t, {
      env: { KURUS_ENV: env, KURUS_METRICS_TOKEN: METRICS_TOKEN },
    })
    for (const auth of [
      undefined,
      'Bearer ',
      `Bearer ${METRICS_TOKEN}x`,
      `Bearer ${METRICS_TOKEN.slice(1)}`,
      `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}`,
      `Bearer ${OPERATOR_TOKEN}`,
    ]) {
      const res = await scrape(h, auth)
      assert.equal(res.status, 401, `${env} ${auth}: ${res.text}`)
      assertEnvelope(res, `${env} ${auth}`)
      assert.equal(res.headers['www-authenticate'], 'Bearer')
      assert.doesNotMatch(res.text, /kurus_|process_cpu/)
    }
    for (const auth of [`Bearer ${METRICS_TOKEN}`, `bearer ${METRICS_TOKEN}`]) {
      const ok = await scrape(h, auth)
      assert.equal(ok.status, 200, `${env}: ${ok.text.slice(0, 200)}`)
      assert.match(ok.text, /# TYPE kurus_http_request_duration_seconds histogram/)
    }
  }
  // Demo without a token stays open, as a developer expects.
  const demo = await startTestApp(t)
  assert.equal((await scrape(demo)).status, 200)
})

test("/metrics: the worker's listener follows the same rule; a short token is refused", async (t) => {
  assert.deepEqual(metricsAccess(loadConfig(liveEnv())), { mode: 'off' })
  assert.deepEqual(
    metricsAccess(loadConfig({ ...liveEnv(), KURUS_METRICS_TOKEN: METRICS_TOKEN })),
    {
      mode: 'token',
      token: METRICS_TOKEN,
    },
  )
  assert.throws(
    () => loadConfig({ ...liveEnv(), KURUS_METRICS_TOKEN: 'short' }),
    (e: unknown) => e instanceof ConfigError && /KURUS_METRICS_TOKEN/.test(e.message),
  )
  const served = await serveMetrics(createMetrics(), '127.0.0.1', 0, {
    mode: 'token',
    token: METRICS_TOKEN,
  })
  t.after(() => served.close())
  const base = { url: served.url.replace('/metrics', '') }
  assert.equal((await scrape(base)).status, 401)
  assert.equal((await scrape(base, `Bearer ${METRICS_TOKEN}x`)).status, 401)
  const ok = await scrape(base, `Bearer ${METRICS_TOKEN}`)
  assert.equal(ok.status, 200)
  assert.match(ok.text, /process_cpu_seconds_total/)
})

// ---------------------------------------------------------------- demo-only conveniences

function liveEnv(dataDir = '/nonexistent-test-data-dir'): Record<string, string> {
  return {
    KURUS_ENV: 'live',
    KURUS_DATA_DIR: dataDir,
    KURUS_MASTER_KEY: 'ab'.repeat(32),
    KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
  }
}

test('demo conveniences: a live app has no mailbox, sandbox or demo-credential route', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const m = await newActor(h, { name: 'Live Shop 22' })
  const demoOnly = routeTable(h.app.fastify).filter(
    (r) =>
      r.path.startsWith('/dev/') ||
      r.path.startsWith('/v1/sandbox/') ||
      r.path.startsWith('/operator/v1/demo/'),
  )
  assert.deepEqual(
    demoOnly.map((r) => r.key),
    [],
  )
  assert.equal((await rawRequest(h, { method: 'GET', path: '/dev/mailbox' })).status, 404)
  const reconcile = await signed(h, m, {
    method: 'POST',
    path: '/v1/sandbox/reconcile',
    body: '{}',
  })
  assert.equal(reconcile.status, 404, reconcile.text)
  const creds = await rawRequest(h, {
    method: 'GET',
    path: '/operator/v1/demo/credentials',
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
  })
  assert.equal(creds.status, 404, creds.text)
  // The same app in demo has them (the check above is not vacuous).
  const demo = await startTestApp(t)
  const demoRoutes = routeTable(demo.app.fastify).map((r) => r.path)
  for (const path of ['/dev/mailbox', '/v1/sandbox/reconcile', '/operator/v1/demo/credentials']) {
    assert.ok(demoRoutes.includes(path), path)
  }
})

test('demo conveniences refuse to run in live: seed, key banner, /dev/mailbox', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const isDemoOnly = (e: unknown) => e instanceof ConfigError && /demo-only/.test(e.message)
  const merchantsBefore = await h.deps.db.selectFrom('merchants').select('id').execute()
  const written: string[] = []
  const write = process.stdout.write.bind(process.stdout)
  process.stdout.write = (chunk: string | Uint8Array) => {
    written.push(String(chunk))
    return true
  }
  try {
    await assert.rejects(seedDemo(h.deps, h.config), isDemoOnly)
    await assert.rejects(printDemoBanner(h.deps, h.config, h.url), isDemoOnly)
  } finally {
    process.stdout.write = write
  }
  assert.deepEqual(written, [])
  const merchantsAfter = await h.deps.db.selectFrom('merchants').select('id').execute()
  assert.equal(merchantsAfter.length, merchantsBefore.length)
  assert.throws(() => devMailboxRoutes(h.deps), isDemoOnly)
})

test('a database the demo set up is refused by live, and a live one by the demo', async (t) => {
  const isMismatch = (env: string) => (e: unknown) =>
    e instanceof ConfigError && new RegExp(`set up by a KURUS_ENV=${env} process`).test(e.message)
  const demoDir = mkdtempSync(join(tmpdir(), 'kurus-installation-demo-'))
  const liveDir = mkdtempSync(join(tmpdir(), 'kurus-installation-live-'))
  t.after(() => {
    rmSync(demoDir, { recursive: true, force: true })
    rmSync(liveDir, { recursive: true, force: true })
  })
  const demoEnv = (dir: string) => ({ KURUS_ENV: 'demo', KURUS_DATA_DIR: dir, LOG_LEVEL: 'silent' })
  const silent = (env: Record<string, string>) => ({ ...env, LOG_LEVEL: 'silent' })

  // The demo starts first: the database remembers it (the data-directory check alone would
  // not see this on PostgreSQL, where the database is not in the directory).
  const demo = await startRuntime(loadConfig(demoEnv(demoDir)))
  await demo.close()
  await assert.rejects(startRuntime(loadConfig(silent(liveEnv(demoDir)))), isMismatch('demo'))
  // The demo itself starts again on its own database.
  await (await startRuntime(loadConfig(demoEnv(demoDir)))).close()

  const live = await startRuntime(loadConfig(silent(liveEnv(liveDir))))
  await live.close()
  await assert.rejects(startRuntime(loadConfig(demoEnv(liveDir))), isMismatch('live'))
})

test('live refuses to start on a data directory the demo used (its secrets were printed)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kurus-demo-dir-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  // Without the demo's seed file, live starts (the secrets come from the environment).
  assert.equal(loadConfig(liveEnv(dir)).env, 'live')
  writeFileSync(join(dir, 'demo.json'), '{"dashboard":{"email":"x","password":"y"}}')
  assert.throws(
    () => loadConfig(liveEnv(dir)),
    (e: unknown) => e instanceof ConfigError && /was used by the demo/.test(e.message),
  )
  assert.equal(loadConfig({ ...liveEnv(dir), KURUS_ENV: 'demo' }).env, 'demo')
  // The real entry point: `serve` exits 1 with that message, before opening anything.
  const run = spawnSync(process.execPath, ['src/main.ts', 'serve'], {
    cwd: new URL('../..', import.meta.url),
    env: { ...process.env, ...liveEnv(dir), PORT: '0' },
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.equal(run.status, 1, run.stderr)
  assert.match(run.stderr, /was used by the demo/)
  assert.doesNotMatch(run.stdout, /secret key|sk_(demo|live)_/)
})
