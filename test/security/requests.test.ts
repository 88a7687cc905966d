// Goal: signed requests cannot be replayed after 5 minutes, tampered with (one byte of body,
// the timestamp) or moved to another path or method; secret comparisons are constant-time;
// no secret reaches a log line or a table in clear; mass-assignment fields (status,
// merchantId, refundAmount, …) in any body are a 400, never applied.
// Method: hand-signed requests over HTTP with h.clock moved past the window, fast-check over
// tampered byte positions, a scan of src/ for secret comparisons, and for every route with a
// body (from the route table) the catalog's valid body plus each forbidden field.
import assert from 'node:assert/strict'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import fc from 'fast-check'
import { signedHeaders } from '../../sdk/index.ts'
import { safeEqual } from '../../src/platform/crypto.ts'
import { OPERATOR_TOKEN, startTestApp } from '../helpers/app.ts'
import { CATALOG, captured, defaultFixture, callAs, type World } from './_catalog.ts'
import { startReceiver } from './_receiver.ts'
import { MUTATING, routeTable } from './_routes.ts'
import {
  assertEnvelope,
  dumpAllTables,
  newActor,
  rawRequest,
  signed,
  type RawResponse,
} from './_support.ts'

function code(res: RawResponse): string | undefined {
  return (res.json as { code?: string } | undefined)?.code
}

test('signed requests: replay window, tampering, binding to path and method', async (t) => {
  const h = await startTestApp(t)
  const m = await newActor(h)
  const body = JSON.stringify({ externalId: 'ext-replay-1', name: 'Ayşe Yılmaz' })

  await t.test('a signed request replayed after 5 minutes is 401 SVC-GW-1001', async () => {
    const ts = h.clock.now().toISOString()
    const first = await signed(h, m, { method: 'GET', path: '/v1/auth/whoami', timestamp: ts })
    assert.equal(first.status, 200)
    h.clock.advance(4 * 60_000 + 59_000)
    const inside = await signed(h, m, { method: 'GET', path: '/v1/auth/whoami', timestamp: ts })
    assert.equal(inside.status, 200, 'within the window the same signature still verifies')
    h.clock.advance(2_000)
    const replay = await signed(h, m, { method: 'GET', path: '/v1/auth/whoami', timestamp: ts })
    assert.equal(replay.status, 401)
    assertEnvelope(replay, 'replay')
    assert.equal(code(replay), 'SVC-GW-1001')
    // A timestamp more than 5 minutes ahead is refused the same way.
    const ahead = new Date(h.clock.now().getTime() + 5 * 60_000 + 1_000).toISOString()
    const future = await signed(h, m, { method: 'GET', path: '/v1/auth/whoami', timestamp: ahead })
    assert.equal(code(future), 'SVC-GW-1001')
    // Same for a POST with a body: the window applies before anything else.
    const stale = new Date(h.clock.now().getTime() - 6 * 60_000).toISOString()
    const post = await signed(h, m, {
      method: 'POST',
      path: '/v1/customers',
      body,
      timestamp: stale,
    })
    assert.equal(code(post), 'SVC-GW-1001')
  })

  await t.test('one byte of the body changed is 401 SVC-GW-1002', async () => {
    const ts = h.clock.now().toISOString()
    const path = '/v1/customers'
    // Capture the exact headers of a correct request, then send other bytes under them.
    const headers: Record<string, string> = { ...signedHeaders(m, 'POST', path, body, ts) }
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: body.length - 1 }),
        fc.integer({ min: 32, max: 126 }),
        async (at, byte) => {
          const original = Buffer.from(body)
          fc.pre(original[at] !== byte)
          const tampered = Buffer.from(original)
          tampered[at] = byte
          const res = await rawRequest(h, {
            method: 'POST',
            path,
            headers: { ...headers, 'content-type': 'application/json' },
            body: tampered,
          })
          assert.equal(res.status, 401, res.text)
          assert.equal(code(res), 'SVC-GW-1002')
        },
      ),
      { numRuns: 25 },
    )
    // A byte appended, a byte removed, the timestamp moved by a millisecond: all 1002.
    for (const [what, b, stamp] of [
      ['appended', body + ' ', ts],
      ['removed', body.slice(0, -1), ts],
      ['timestamp', body, new Date(Date.parse(ts) + 1).toISOString()],
    ] as const) {
      const res = await rawRequest(h, {
        method: 'POST',
        path,
        headers: { ...headers, 'x-timestamp': stamp, 'content-type': 'application/json' },
        body: b,
      })
      assert.equal(code(res), 'SVC-GW-1002', `${what}: ${res.text}`)
    }
    // Untouched, the same headers work: the 401s above are about the change.
    const clean = await rawRequest(h, {
      method: 'POST',
      path,
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    })
    assert.equal(clean.status, 201, clean.text)
  })

  await t.test('a signature is bound to its path and method', async () => {
    const w: World = { h, receiverUrl: 'http://127.0.0.1:9/hooks' }
    const paymentId = await captured(w, m)
    const ts = h.clock.now().toISOString()
    const forGet: Record<string, string> = {
      ...signedHeaders(m, 'GET', `/v1/payments/${paymentId}`, '', ts),
    }
    const ok = await rawRequest(h, {
      method: 'GET',
      path: `/v1/payments/${paymentId}`,
      headers: forGet,
    })
    assert.equal(ok.status, 200)
    const moves: [string, string][] = [
      ['GET', `/v1/payments/${paymentId}/refunds`],
      ['GET', `/v1/transactions/${paymentId}`],
      ['GET', '/v1/auth/whoami'],
      ['POST', `/v1/payments/${paymentId}/void`],
      ['POST', `/v1/payments/${paymentId}/refund`],
    ]
    for (const [method, path] of moves) {
      const res = await rawRequest(h, {
        method,
        path,
        headers: {
          ...forGet,
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
        },
        ...(method === 'POST' ? { body: '' } : {}),
      })
      assert.equal(res.status, 401, `${method} ${path}: ${res.text}`)
      assert.equal(code(res), 'SVC-GW-1002')
    }
    // A refund signed for one payment, sent for another of the same merchant.
    const other = await captured(w, m)
    const refundBody = JSON.stringify({ amount: 100 })
    const forRefund: Record<string, string> = {
      ...signedHeaders(m, 'POST', `/v1/payments/${paymentId}/refund`, refundBody, ts),
    }
    const moved = await rawRequest(h, {
      method: 'POST',
      path: `/v1/payments/${other}/refund`,
      headers: { ...forRefund, 'content-type': 'application/json' },
      body: refundBody,
    })
    assert.equal(code(moved), 'SVC-GW-1002')
    // Another merchant's signature over the same request: 1002 under this merchant's key.
    const n = await newActor(h)
    const foreign: Record<string, string> = {
      ...signedHeaders(
        { publicKey: m.publicKey, secretKey: n.secretKey },
        'GET',
        '/v1/auth/whoami',
        '',
        ts,
      ),
    }
    const asOther = await rawRequest(h, {
      method: 'GET',
      path: '/v1/auth/whoami',
      headers: foreign,
    })
    assert.equal(code(asOther), 'SVC-GW-1002')
  })
})

// ---------------------------------------------------------------- constant time

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : []
  })
}

/**
 * Comparisons whose operands are secrets or values derived from them. Fingerprints of request
 * payloads are not secrets (equality of two of the caller's own payloads), so they are not
 * matched here.
 */
const SECRET_COMPARISON =
  /\b[\w.]*(signature|secret|password|passwd|otp|hmac|mac|operatorToken|bearer|pares)\w*\s*[!=]==|[!=]==\s*[\w.]*(signature|secret|password|passwd|otp|hmac|mac|operatorToken|bearer|pares)\w*\b/i

test('secrets are compared in constant time', () => {
  const offenders: string[] = []
  for (const file of sourceFiles('src')) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!SECRET_COMPARISON.test(line)) return
        if (/\.length\s*[!=]==|typeof |=== (undefined|null)|!== (undefined|null)/.test(line)) return
        offenders.push(`${file}:${i + 1}: ${line.trim()}`)
      })
  }
  assert.deepEqual(offenders, [], 'compare secrets with safeEqual (src/platform/crypto.ts)')
  // The verifiers themselves use the constant-time primitive.
  const must: [string, RegExp][] = [
    ['src/modules/gateway/gateway.service.ts', /safeEqual\(expected, pending\.signature\)/],
    ['src/modules/operator/operator.http.ts', /safeEqual\(token, deps\.config\.operatorToken\)/],
    ['src/platform/crypto.ts', /timingSafeEqual\(key, expected\)/],
    ['src/platform/cursor.ts', /timingSafeEqual\(given, mac\(key, body\)\)/],
  ]
  for (const [file, pattern] of must) assert.match(readFileSync(file, 'utf8'), pattern, file)
  // safeEqual: correct on equal, unequal and different-length inputs.
  assert.equal(safeEqual('a'.repeat(64), 'a'.repeat(64)), true)
  assert.equal(safeEqual('a'.repeat(64), 'a'.repeat(63) + 'b'), false)
  assert.equal(safeEqual('a'.repeat(64), 'a'.repeat(65)), false)
  assert.equal(safeEqual('', 'x'), false)
})

// ---------------------------------------------------------------- secrets at rest and in logs

test('secret keys, passwords and tokens never reach a log line or a table in clear', async (t) => {
  const h = await startTestApp(t)
  const receiver = await startReceiver(t)
  const m = await newActor(h)
  const secrets = new Set<string>([m.secretKey, m.password, OPERATOR_TOKEN])
  const jwt = await m.token()
  secrets.add(jwt)

  // Misplaced secrets: as the key, as a bearer, in a body, in a query string.
  await rawRequest(h, {
    method: 'GET',
    path: '/v1/auth/whoami',
    headers: { 'x-api-key': m.secretKey },
  })
  await rawRequest(h, {
    method: 'GET',
    path: '/v1/auth/whoami',
    headers: { authorization: `Bearer ${m.secretKey}` },
  })
  await signed(h, m, {
    method: 'POST',
    path: '/v1/customers',
    body: JSON.stringify({ externalId: 'x', secretKey: m.secretKey }),
  })
  await signed(h, m, { method: 'GET', path: `/v1/customers?key=${m.secretKey}` })
  await rawRequest(h, {
    method: 'POST',
    path: '/v1/dashboard/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: m.email, password: `${m.password}x` }),
  })
  // Secrets the service hands out: a rolled key, a new key, a webhook secret, a submerchant's.
  const issued = await m.dash('POST', `/v1/stores/${m.storeId}/api-keys`, { body: {} })
  assert.equal(issued.status, 201)
  secrets.add((issued.json as { secretKey: string }).secretKey)
  const rolled = await m.dash(
    'POST',
    `/v1/stores/${m.storeId}/api-keys/${(issued.json as { apiKeyId: string }).apiKeyId}/roll`,
    { body: {} },
  )
  assert.equal(rolled.status, 200, rolled.text)
  secrets.add((rolled.json as { secretKey: string }).secretKey)
  const hook = await m.dash('POST', `/v1/stores/${m.storeId}/webhooks`, {
    body: { url: receiver.url },
  })
  assert.equal(hook.status, 201, hook.text)
  secrets.add((hook.json as { secret: string }).secret)
  const callback = await m.dash('GET', `/v1/stores/${m.storeId}/webhooks/callback-secret`)
  assert.equal(callback.status, 200)
  secrets.add(
    Object.values(callback.json as Record<string, string>).find((v) => v.startsWith('whsec_')) ??
      '',
  )
  const sub = await h.operator<{ secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    {
      name: 'Seller',
      iban: 'TR330006100519786457841326',
      holderName: 'Seller Ltd',
    },
  )
  assert.equal(sub.status, 201, JSON.stringify(sub.body))
  secrets.add(sub.body.secretKey)
  // A failing request with a key in flight: the error path logs too.
  await signed(h, m, { method: 'POST', path: '/v1/payments/card', body: '{"a":' })

  secrets.delete('')
  assert.ok(secrets.size >= 8)
  // Something was logged to look through: one access line per request (issue 29), and more.
  assert.ok(h.logs.filter((l) => l.includes('"request completed"')).length >= 10)
  for (const line of h.logs) {
    for (const s of secrets)
      assert.ok(!line.includes(s), `a secret in a log line: ${line.slice(0, 300)}`)
    assert.doesNotMatch(line, /\b(sk_(demo|live)_|whsec_)[A-Za-z0-9_+/=-]{16,}/, line.slice(0, 300))
    assert.doesNotMatch(line, /"authorization":"Bearer /i)
  }
  const tables = await dumpAllTables(h.deps.db)
  for (const { table, json } of tables) {
    for (const s of secrets) assert.ok(!json.includes(s), `a secret in clear in ${table}`)
    assert.doesNotMatch(json, /\b(sk_(demo|live)_|whsec_)[A-Za-z0-9_+/=-]{16,}/, table)
  }
})

// ---------------------------------------------------------------- mass assignment

const FORBIDDEN_FIELDS = [
  'status',
  'merchantId',
  'refundAmount',
  'id',
  'createdAt',
  'kycStatus',
  'commission',
  'apiKeyId',
  'capturedAmount',
  '__proto__',
]

test('mass assignment: server-owned fields in any body are 400 unknown field', async (t) => {
  const h = await startTestApp(t)
  const receiver = await startReceiver(t)
  const w: World = { h, receiverUrl: receiver.url }
  const m = await newActor(h)
  const routes = routeTable(h.app.fastify).filter(
    (r) => (r.cls === 'signed' || r.cls === 'dashboard') && MUTATING.has(r.method) && r.body,
  )
  assert.ok(routes.length >= 35, `${routes.length} routes with a body`)
  const problems: string[] = []
  let checked = 0
  for (const route of routes) {
    const make = CATALOG[route.key]
    if (!make && route.params.length > 0) continue // tenancy.test.ts fails for these
    const fx = make ? await make(w, m) : defaultFixture(route)
    const base = (fx.body ?? {}) as Record<string, unknown>
    for (const field of FORBIDDEN_FIELDS) {
      if (route.body?.properties?.[field] !== undefined) continue
      const text = JSON.stringify(base)
        .replace(
          /^\{/,
          `{${JSON.stringify(field)}:${JSON.stringify(field === 'status' ? 'captured' : field === 'refundAmount' ? 999_999 : 'x')},`,
        )
        .replace(/,\}$/, '}')
      const res = await callAs(w, route, m, { ...fx, body: JSON.parse(text) as unknown })
      const details =
        (res.json as { details?: { field: string; reason: string }[] } | undefined)?.details ?? []
      if (
        res.status !== 400 ||
        !details.some((d) => d.field === field && d.reason === 'unknown field')
      ) {
        problems.push(`${route.key} +${field}: ${res.status} ${res.text.slice(0, 150)}`)
      }
      checked += 1
    }
  }
  assert.deepEqual(problems, [])
  assert.ok(checked > 300, `${checked} checks`)
})
