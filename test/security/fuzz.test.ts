// Goal: no client input makes any route of the app answer 5xx, crash the process or leave an
// unhandled rejection; every error of a JSON route is the spec's envelope with the right code
// (malformed JSON 400 SVC-VAL-3002, over 1 MiB 413 SVC-VAL-3003, not JSON 415 SVC-VAL-3004,
// unknown fields 400), and nothing of what was sent (card numbers, CVCs, keys) leaks into a
// log line or an error response.
// Method: fast-check over the route table read from the running app: schema-shaped and random
// bodies, query strings and path parameters (real ids of a merchant included), then fixed
// hostile cases and header mutations per route; the logs and error bodies are scanned at the end.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import fc from 'fast-check'
import { BODY_LIMIT_BYTES } from '../../src/platform/http/raw-body.ts'
import { OPERATOR_TOKEN, startTestApp } from '../helpers/app.ts'
import { CATALOG, type Fixture, type World } from './_catalog.ts'
import { DEEP_ARRAY, DEEP_OBJECT, jsonText, paramValue, queryText } from './_fuzz.ts'
import { startReceiver } from './_receiver.ts'
import { fillPath, MUTATING, openObjects, routeTable, type RouteInfo } from './_routes.ts'
import {
  assertEnvelope,
  assertNoServerError,
  errorLogLines,
  newActor,
  rawRequest,
  scanForCardData,
  seen,
  signed,
  watchProcess,
  type Actor,
  type RawResponse,
} from './_support.ts'

const RUNS = Number(process.env['KURUS_FUZZ_RUNS'] ?? 12)
const HEADER_RUNS = Math.max(4, Math.round(RUNS / 2))

const JSON_CLASSES = new Set(['signed', 'public', 'dashboard', 'dashboard-login', 'operator'])

interface Sent {
  path: string
  body: string | undefined
  contentType?: string | null
  headers?: Record<string, string | string[]>
}

function check(route: RouteInfo, res: RawResponse, what: string): void {
  const context = `${route.key} ${what}`
  if (route.cls && JSON_CLASSES.has(route.cls)) {
    assertNoServerError(res, context)
    return
  }
  assert.ok(res.status < 500, `${context} → ${res.status} ${res.text.slice(0, 300)}`)
  if (res.status >= 400 && route.cls === 'page') {
    assert.match(String(res.headers['content-type']), /text\/html|application\/json/, context)
    assert.doesNotMatch(res.text, /\bat \S+\.ts:\d+|node_modules/, context)
  }
  // Whatever a page reflects (its own URL in the language links) stays escaped.
  if (route.cls === 'page') assert.ok(!res.text.includes('<script>alert(1)</script>'), context)
}

test('fuzzing every route of the route table', async (t) => {
  const watch = watchProcess()
  const h = await startTestApp(t)
  const receiver = await startReceiver(t)
  const w: World = { h, receiverUrl: receiver.url }
  // KURUS_FUZZ_ONLY=<regex> narrows the run to matching route keys (for reproducing a finding).
  const only = new RegExp(process.env['KURUS_FUZZ_ONLY'] ?? '')
  const routes = routeTable(h.app.fastify).filter(
    (r) => (r.cls !== 'infra' || !r.path.startsWith('/docs')) && only.test(r.key),
  )
  const F: Actor = await newActor(h, { name: 'Fuzz Merchant' })
  const jwt = await F.token()

  // Signing out ends the token it is sent with: that route gets a token of its own each time,
  // so the others keep theirs.
  const SIGN_OUT = 'POST /v1/dashboard/logout'
  const throwawayToken = async (): Promise<string> => {
    const res = await rawRequest(h, {
      method: 'POST',
      path: '/v1/dashboard/login',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: F.email, password: F.password }),
    })
    return (res.json as { token: string }).token
  }

  /** Sends as the route's legitimate caller would authenticate, with the given parts. */
  const send = async (route: RouteInfo, req: Sent): Promise<RawResponse> => {
    const base = {
      method: route.method,
      path: req.path,
      ...(req.body === undefined ? {} : { body: req.body }),
    }
    const ct =
      req.body === undefined || req.contentType === null
        ? {}
        : { 'content-type': req.contentType ?? 'application/json' }
    if (route.cls === 'signed') {
      return signed(h, F, {
        ...base,
        ...(req.contentType !== undefined ? { contentType: req.contentType } : {}),
        ...(req.headers ? { headers: req.headers } : {}),
      })
    }
    const auth =
      route.cls === 'dashboard'
        ? { authorization: `Bearer ${route.key === SIGN_OUT ? await throwawayToken() : jwt}` }
        : route.cls === 'operator'
          ? { authorization: `Bearer ${OPERATOR_TOKEN}` }
          : {}
    return rawRequest(h, { ...base, headers: { ...auth, ...ct, ...req.headers } })
  }

  await t.test('every body schema refuses unknown fields (additionalProperties: false)', () => {
    const open = routes.flatMap((r) => openObjects(r.body).map((at) => `${r.key} ${at}`))
    assert.deepEqual(open, [])
    if (!process.env['KURUS_FUZZ_ONLY']) assert.ok(routes.filter((r) => r.body).length >= 40)
  })

  for (const route of routes) {
    await t.test(route.key, async () => {
      // Real ids (a resource the fuzz merchant owns) for routes that take input beyond the path.
      let fx: Fixture | undefined
      const make = CATALOG[route.key]
      const takesInput =
        route.body?.properties !== undefined || route.query?.properties !== undefined
      if (make && takesInput && route.cls !== 'operator') fx = await make(w, F)

      const params = fc.record(
        Object.fromEntries(route.params.map((p) => [p, paramValue(fx?.params[p])])),
      ) as fc.Arbitrary<Record<string, string>>
      const body =
        MUTATING.has(route.method) || route.body
          ? fc.option(jsonText(route.body), { freq: 12 })
          : fc.option(jsonText(undefined), { freq: 8 })
      await fc.assert(
        fc.asyncProperty(params, queryText(route.query), body, async (ps, qs, b) => {
          const path = fillPath(route.path, ps) + qs
          const res = await send(route, { path, body: b ?? undefined })
          check(route, res, `${path} ${String(b).slice(0, 200)}`)
        }),
        { numRuns: RUNS },
      )

      // A path whose parameters pass their own checks, so the body checks below are reached.
      const shaped = (p: string): string => {
        const pattern = route.paramSchemas[p]?.pattern
        return pattern ? (fc.sample(fc.stringMatching(new RegExp(pattern)), 1)[0] ?? 'x1') : 'x1'
      }
      const path = fillPath(
        route.path,
        fx?.params ?? Object.fromEntries(route.params.map((p) => [p, shaped(p)])),
      )
      const acceptsBody = MUTATING.has(route.method) && route.method !== 'DELETE'
      if (!acceptsBody) return
      const json = route.cls !== undefined && JSON_CLASSES.has(route.cls)

      // Malformed JSON: 400 SVC-VAL-3002 (after authentication on signed routes).
      for (const bad of [
        '{',
        '{"a":1',
        '[1,2',
        'nul',
        '{"a":1}}',
        "{'a':1}",
        '{"a":01}',
        '{"a":NaN}',
        '{"a":1,}',
        '\ufeff{}',
        '\u0000',
      ]) {
        const res = await send(route, { path, body: bad })
        check(route, res, `malformed ${JSON.stringify(bad)}`)
        if (json) {
          assert.equal(
            res.status,
            400,
            `${route.key} malformed ${JSON.stringify(bad)}: ${res.text}`,
          )
          assert.equal((res.json as { code: string }).code, 'SVC-VAL-3002', `${route.key} ${bad}`)
        }
      }
      // Deep nesting: valid JSON that a recursive walker could choke on.
      for (const deep of [DEEP_ARRAY, DEEP_OBJECT, `{"metadata":${DEEP_OBJECT}}`]) {
        check(route, await send(route, { path, body: deep }), 'deeply nested body')
      }
      // Over the limit: 413 SVC-VAL-3003; exactly at it: anything but 413 or 5xx.
      const pad = (size: number) => `{"x":"${'a'.repeat(size - 8)}"}`
      const over = await send(route, { path, body: pad(BODY_LIMIT_BYTES + 1) })
      check(route, over, '1 MiB + 1 body')
      assert.equal(over.status, 413, `${route.key} 1 MiB + 1: ${over.text.slice(0, 200)}`)
      if (json) assert.equal((over.json as { code: string }).code, 'SVC-VAL-3003')
      const at = await send(route, { path, body: pad(BODY_LIMIT_BYTES) })
      check(route, at, '1 MiB body')
      assert.notEqual(at.status, 413, `${route.key}: exactly 1 MiB is allowed`)
      // Not JSON: 415 SVC-VAL-3004 (the hosted ACS form alone takes urlencoded).
      for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
        const res = await send(route, { path, body: '{}', contentType: type })
        check(route, res, `content-type ${type}`)
        // A route documenting the media type (file uploads take multipart) parses it instead.
        const documented = route.consumes.some((c) => type.startsWith(c))
        if (json && !documented) {
          assert.equal(res.status, 415, `${route.key} as ${type}: ${res.text}`)
        }
      }
      check(route, await send(route, { path, body: '{}', contentType: null }), 'no content-type')
      // Unknown fields: 400 with "unknown field" where nothing else is required.
      if (json && route.body && (route.body.required ?? []).length === 0) {
        const res = await send(route, { path, body: '{"zzUnknownField":1}' })
        check(route, res, 'unknown field')
        assert.equal(res.status, 400, `${route.key} unknown field: ${res.text}`)
        const details = (res.json as { details?: { reason: string }[] }).details ?? []
        assert.ok(
          details.some((d) => d.reason === 'unknown field'),
          res.text,
        )
      }

      if (route.cls !== 'signed') return
      // Header mutations: missing, duplicated, stale, malformed.
      const mutation = fc.oneof(
        fc.constantFrom<[string, Record<string, string | string[]>, number | undefined]>(
          ['no key', { 'x-api-key': '' }, 401],
          ['no timestamp', { 'x-timestamp': '' }, 401],
          ['no signature', { 'x-signature': '' }, 401],
          ['two keys', { 'x-api-key': [F.publicKey, F.publicKey] }, 401],
          ['two signatures', { 'x-signature': ['0'.repeat(64), '1'.repeat(64)] }, 401],
          [
            'two timestamps',
            { 'x-timestamp': [new Date(0).toISOString(), new Date(0).toISOString()] },
            401,
          ],
          ['secret key as the key', { 'x-api-key': F.secretKey }, 401],
          ['live key in demo', { 'x-api-key': F.publicKey.replace('pk_demo_', 'pk_live_') }, 401],
          ['idempotency key not a UUID', { 'idempotency-key': 'not-a-uuid' }, undefined],
          ['two idempotency keys', { 'idempotency-key': [randomUUID(), randomUUID()] }, undefined],
          ['odd request id', { 'x-request-id': '../../etc\r' }, undefined],
        ),
        fc
          .oneof(
            fc.string({ maxLength: 40 }),
            fc.constantFrom(
              '2026-02-30T00:00:00Z',
              '1970-01-01T00:00:00Z',
              '9999-12-31T23:59:59Z',
              '1763800000',
              'now',
            ),
          )
          .map(
            (ts) =>
              ['bad timestamp', { 'x-timestamp': ts }, 401] as [
                string,
                Record<string, string>,
                number,
              ],
          ),
        fc
          .oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ maxLength: 80 }))
          .map(
            (sig) =>
              ['bad signature', { 'x-signature': sig }, 401] as [
                string,
                Record<string, string>,
                number,
              ],
          ),
      )
      await fc.assert(
        fc.asyncProperty(mutation, async ([what, headers, expected]) => {
          const clean = Object.fromEntries(
            Object.entries(headers).filter(([, v]) => !(typeof v === 'string' && v.includes('\r'))),
          )
          const res = await send(route, { path, body: '{}', headers: clean })
          check(route, res, what)
          if (expected !== undefined)
            assert.equal(res.status, expected, `${route.key} ${what}: ${res.text}`)
        }),
        { numRuns: HEADER_RUNS },
      )
    })
    // The sandbox KYC route sets the fuzz merchant's own KYC to whatever it drew: approve it
    // again, or every money-in setup of the routes after it would be 403.
    if (route.key === 'POST /v1/sandbox/kyc') {
      await h.operator('PUT', `/operator/v1/merchants/${F.merchantId}/kyc`, { status: 'approved' })
    }
  }

  await t.test('unknown paths and methods are 404 envelopes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
        fc.array(
          fc.oneof(
            fc.string({ maxLength: 12 }),
            fc.constantFrom('v1', 'payments', '..', '%2e%2e', ''),
          ),
          {
            maxLength: 5,
          },
        ),
        async (method, segments) => {
          const path = '/' + segments.map((s) => encodeURIComponent(s)).join('/') + '/zz'
          // A malformed percent-encoding and an over-long segment on a real route, too.
          for (const odd of ['/v1/payments/%E0%A4%A', `/v1/payments/${'x'.repeat(300)}`]) {
            const res = await rawRequest(h, { method, path: odd })
            assert.ok(res.status < 500, `${method} ${odd} → ${res.status}`)
            assertEnvelope(res, `${method} ${odd}`)
          }
          const res = await rawRequest(h, { method, path })
          assert.ok(res.status < 500, `${method} ${path} → ${res.status}`)
          if (res.status === 404) assertEnvelope(res, `${method} ${path}`)
        },
      ),
      { numRuns: RUNS * 3 },
    )
  })

  await t.test('afterwards: the process is healthy and nothing leaked', async () => {
    const health = await rawRequest(h, { method: 'GET', path: '/healthz' })
    assert.equal(health.status, 200)
    assert.deepEqual(watch.problems, [])
    assert.deepEqual(errorLogLines(h.logs), [])
    const errors = seen.filter((r) => r.status >= 400)
    if (!process.env['KURUS_FUZZ_ONLY']) {
      assert.ok(errors.length > 1000, `the fuzzer saw ${errors.length} errors`)
    }
    const findings = scanForCardData([
      ...h.logs.map((text, i) => ({ where: `log line ${i}`, text })),
      ...errors.map((r) => ({ where: `${r.what} → ${r.status}`, text: r.text })),
    ])
    // A hosted page may link to its own URL (the language switch): the request's own path
    // coming back is not a leak. Anything else is.
    const leaks = findings.filter((f) => !f.where.split(' → ')[0]?.includes(f.hit))
    assert.deepEqual(leaks.slice(0, 10), [])
    const secrets = [F.secretKey, F.password, OPERATOR_TOKEN, jwt]
    for (const line of h.logs) {
      for (const s of secrets)
        assert.ok(!line.includes(s), `a secret in a log line: ${line.slice(0, 200)}`)
      assert.doesNotMatch(line, /sk_(demo|live)_[A-Za-z0-9_-]{20,}/)
    }
  })
})
