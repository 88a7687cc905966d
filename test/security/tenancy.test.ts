// Goal: tenancy (OWASP API1 BOLA, API5 function-level authorization) on every route of the app's
// route table: another merchant's ids are 404 exactly like missing ones, lists and filters never
// show another tenant's rows, submerchant keys reach only their own routes and rows, and the
// operator and dashboard APIs refuse merchant keys.
// Method: merchants A and B (and A's submerchant S) over HTTP; for each route with a path
// parameter the catalog (_catalog.ts) makes A's resource, B and S attack it, then A's own call
// must succeed (positive control: the attack was aimed at something real and left it intact).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import {
  CATALOG,
  callAs,
  idParams,
  customer,
  customerWithCard,
  defaultFixture,
  nextAccount,
  session,
  settledSubmerchant,
  tokenize,
  type Fixture,
  type World,
} from './_catalog.ts'
import { startReceiver } from './_receiver.ts'
import {
  fillPath,
  isDeliberateMap,
  routeTable,
  type JsonSchema,
  type RouteInfo,
} from './_routes.ts'
import {
  assertEnvelope,
  errorShape,
  fabricateId,
  newActor,
  newSubmerchant,
  rawRequest,
  seen,
  signed,
  trIban,
  type RawResponse,
} from './_support.ts'

/** CONTRACT "Who may call what": the only signed routes a submerchant key may call. */
const SUBMERCHANT_ROUTES = new Set([
  'GET /v1/auth/whoami',
  'GET /v1/kyc/status',
  'POST /v1/payouts',
  'GET /v1/payouts',
  'GET /v1/payouts/{id}',
  // What its own payout settled, line by line; another's payout reads as missing.
  'GET /v1/payouts/{id}/balance-transactions',
  'GET /v1/balances',
  'GET /v1/balance-transactions',
])

const ID_LIKE =
  /^(?:[a-z]+_[0-9a-z]{16,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

/** Every id-looking string in a value (params and bodies of A's fixtures). */
function idsIn(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') {
    if (ID_LIKE.test(value)) into.add(value)
  } else if (Array.isArray(value)) {
    for (const v of value) idsIn(v, into)
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) idsIn(v, into)
  }
}

/** Storage-side names that must never be serialised. */
const INTERNAL_FIELDS = new Set([
  'panEnc',
  'pan',
  'cardNumber',
  'cvc',
  'dekWrapped',
  'kekId',
  'secretEnc',
  'passwordHash',
  'password',
  'claimId',
  'lockedAt',
])

/** Routes whose answer shows a secret once, by design. */
const SECRET_ROUTES = [
  /POST \S*\/v1\/stores\/[^/]+\/api-keys(\/[^/]+\/roll)?$/,
  /POST \S*\/v1\/dashboard\/submerchants$/,
  /POST \S*\/v1\/stores\/[^/]+\/webhooks(\/[^/]+\/rotate-secret)?$/,
  /GET \S*\/v1\/stores\/[^/]+\/webhooks\/callback-secret$/,
]

/** Object schemas in a response that would pass through fields they do not name. */
function openResponseObjects(schema: JsonSchema, at: string): string[] {
  const out: string[] = []
  const isObject = schema.type === 'object' || schema.properties !== undefined
  if (isObject && !isDeliberateMap(schema)) {
    if (schema.properties === undefined || schema.additionalProperties === true) out.push(at)
  }
  for (const [k, sub] of Object.entries(schema.properties ?? {})) {
    // Free-form by contract: the merchant's own metadata/extraData, an event's payload.
    if (['metadata', 'extraData', 'data', 'filters'].includes(k)) continue
    out.push(...openResponseObjects(sub, `${at}.${k}`))
  }
  if (schema.items) out.push(...openResponseObjects(schema.items, `${at}[]`))
  for (const b of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])])
    out.push(...openResponseObjects(b, at))
  return out
}

function walkKeys(value: unknown, visit: (key: string, value: unknown) => void): void {
  if (Array.isArray(value)) {
    for (const v of value) walkKeys(v, visit)
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (['metadata', 'extraData'].includes(k)) continue
      visit(k, v)
      walkKeys(v, visit)
    }
  }
}

function is2xx(res: RawResponse): boolean {
  return res.status >= 200 && res.status < 300
}

test('tenancy on every route of the route table', async (t) => {
  // `seen` is shared by every security file the runner puts in this process (the fuzz file
  // sends random queries to /openapi.json too): scan only what this test received.
  const seenBefore = seen.length
  const h = await startTestApp(t)
  const receiver = await startReceiver(t)
  const w: World = { h, receiverUrl: receiver.url }
  const routes = routeTable(h.app.fastify)
  const A = await newActor(h, { name: 'Tenant A' })
  const B = await newActor(h, { name: 'Tenant B' })
  const S = await newSubmerchant(h, A, nextAccount())
  const aIds = new Set<string>([A.merchantId, A.storeId, A.apiKeyId])
  const fixtures = new Map<string, Fixture>()

  const tenantRoutes = routes.filter(
    (r) => (r.cls === 'signed' || r.cls === 'dashboard') && idParams(r).length > 0,
  )

  await t.test('every signed or dashboard route with a path parameter has a catalog entry', () => {
    assert.ok(tenantRoutes.length >= 40, `route table looks too small: ${tenantRoutes.length}`)
    const missing = tenantRoutes.filter((r) => !CATALOG[r.key]).map((r) => r.key)
    assert.deepEqual(
      missing,
      [],
      `add these routes to test/security/_catalog.ts: ${missing.join(', ')}`,
    )
    const unclassified = routes.filter((r) => r.cls === undefined).map((r) => r.key)
    assert.deepEqual(
      unclassified,
      [],
      `classify these routes in _routes.ts: ${unclassified.join(', ')}`,
    )
  })

  for (const route of tenantRoutes) {
    const make = CATALOG[route.key]
    if (!make) continue
    await t.test(`BOLA ${route.key}`, async () => {
      const fx = await make(w, A)
      fixtures.set(route.key, fx)
      idsIn(fx.params, aIds)
      idsIn(fx.body, aIds)
      const ids = Object.values(fx.params)
      // Selector parameters (SELECTOR_PARAMS: a kind, not a resource) stay as they are.
      const fake = Object.fromEntries(
        Object.entries(fx.params).map(([k, v]) => [
          k,
          idParams(route).includes(k) ? fabricateId(v) : v,
        ]),
      )

      const missing = await callAs(w, route, B, fx, fake)
      assert.equal(missing.status, 404, `${route.key} with made-up ids: ${missing.text}`)
      assertEnvelope(missing, route.key)
      const attack = await callAs(w, route, B, fx)
      assert.equal(
        errorShape(attack, [...ids, ...Object.values(fake)]),
        errorShape(missing, [...ids, ...Object.values(fake)]),
        `${route.key}: B with A's ids must look exactly like a missing id`,
      )

      // Nested resources: B's own parent with A's child (and the other way round).
      if (idParams(route).length > 1) {
        const mine = await make(w, B)
        for (const p of idParams(route)) {
          const mixed = { ...mine.params, [p]: fx.params[p] ?? '' }
          const mixedFake = { ...mine.params, [p]: fake[p] ?? '' }
          const a = await callAs(w, route, B, mine, mixed)
          const m = await callAs(w, route, B, mine, mixedFake)
          assert.equal(m.status, 404, `${route.key} {${p}} made up: ${m.text}`)
          const all = [...Object.values(mixed), ...Object.values(mixedFake)]
          assert.equal(
            errorShape(a, all),
            errorShape(m, all),
            `${route.key}: A's {${p}} under B's parent`,
          )
        }
      }

      if (route.cls === 'signed' && !SUBMERCHANT_ROUTES.has(route.key)) {
        const sub = await callAs(w, route, S, fx)
        assert.equal(sub.status, 403, `${route.key} with a submerchant key: ${sub.text}`)
        assertEnvelope(sub, route.key)
        assert.equal((sub.json as { code: string }).code, 'SVC-AUTH-3201')
      }

      // Positive control, last: the owner's call works, so the attacks hit a real resource
      // and changed nothing it depends on.
      const own = await callAs(w, route, A, fx)
      const okStatuses = fx.ok
      assert.ok(
        okStatuses ? okStatuses.includes(own.status) : is2xx(own),
        `${route.key} as its owner: ${own.status} ${own.text.slice(0, 300)}`,
      )
    })
  }

  await t.test('submerchant keys: every other signed route is 403 SVC-AUTH-3201', async () => {
    const others = routes.filter(
      (r) => r.cls === 'signed' && idParams(r).length === 0 && !SUBMERCHANT_ROUTES.has(r.key),
    )
    assert.ok(others.length >= 10)
    const problems: string[] = []
    for (const route of others) {
      const make = CATALOG[route.key]
      const fx = make ? await make(w, A) : defaultFixture(route)
      const res = await callAs(w, route, S, fx)
      if (res.status !== 403 || (res.json as { code?: string }).code !== 'SVC-AUTH-3201') {
        problems.push(
          `${route.key}: ${res.status} ${res.text.slice(0, 120)}` +
            (res.status === 400 ? ' (give it a valid request in _catalog.ts)' : ''),
        )
      }
    }
    assert.deepEqual(problems, [])
  })

  await t.test('submerchant keys see only their own payouts and balance', async () => {
    const mine = await settledSubmerchant(w, A)
    const other = await settledSubmerchant(w, A)
    const pay = (sub: string) => ({
      submerchantId: sub,
      rail: 'fast',
      amountMinor: 1_000,
      currency: 'TRY',
    })
    const own = await mine.client.request<{ payoutId: string }>('POST', '/v1/payouts', {
      body: pay(mine.submerchantId),
    })
    assert.equal(own.status, 201, JSON.stringify(own.body))
    const theirs = await A.client.request<{ payoutId: string }>('POST', '/v1/payouts', {
      body: pay(other.submerchantId),
    })
    assert.equal(theirs.status, 201)
    // Paying another submerchant out: refused, and nothing moves.
    const forOther = await mine.client.request<{ code: string }>('POST', '/v1/payouts', {
      body: pay(other.submerchantId),
    })
    assert.ok([403, 404].includes(forOther.status), JSON.stringify(forOther.body))
    // Another submerchant's payout reads as missing.
    const read = await signed(h, mine, {
      method: 'GET',
      path: `/v1/payouts/${theirs.body.payoutId}`,
    })
    const madeUp = fabricateId(theirs.body.payoutId)
    const made = await signed(h, mine, { method: 'GET', path: `/v1/payouts/${madeUp}` })
    assert.equal(read.status, 404)
    assert.equal(errorShape(read, [theirs.body.payoutId]), errorShape(made, [madeUp]))
    const list = await signed(h, mine, { method: 'GET', path: '/v1/payouts' })
    assert.equal(list.status, 200)
    assert.ok(list.text.includes(own.body.payoutId))
    assert.ok(!list.text.includes(theirs.body.payoutId))
    assert.ok(!list.text.includes(other.submerchantId))
    const filtered = await signed(h, mine, {
      method: 'GET',
      path: `/v1/payouts?submerchantId=${other.submerchantId}`,
    })
    assert.ok(
      filtered.status >= 400 || !filtered.text.includes(theirs.body.payoutId),
      filtered.text,
    )
    const balances = await signed(h, mine, { method: 'GET', path: '/v1/balances' })
    const items = (balances.json as { items: { ownerId: string }[] }).items
    assert.deepEqual(
      items.map((b) => b.ownerId),
      [mine.submerchantId],
    )
    const whoami = await signed(h, mine, { method: 'GET', path: '/v1/auth/whoami' })
    assert.equal((whoami.json as { submerchantId: string }).submerchantId, mine.submerchantId)
  })

  await t.test("lists never show another tenant's rows", async () => {
    assert.ok(aIds.size > 30, `A made ${aIds.size} resources`)
    const lists = routes.filter(
      (r) =>
        r.method === 'GET' &&
        ((r.cls === 'signed' && idParams(r).length === 0) ||
          (r.cls === 'dashboard' && r.params.join() === 'storeId') ||
          r.key === 'GET /v1/dashboard/me'),
    )
    assert.ok(lists.length >= 8)
    let aSawOwn = 0
    for (const route of lists) {
      const make = CATALOG[route.key]
      const fxB = make ? await make(w, B) : defaultFixture(route)
      const resB = await callAs(w, route, B, fxB)
      assert.equal(resB.status, 200, `${route.key} as B: ${resB.text.slice(0, 200)}`)
      const leaked = [...aIds].filter((id) => resB.text.includes(id))
      assert.deepEqual(leaked, [], `${route.key} shows A's ids to B`)
      const fxA = make ? await make(w, A) : defaultFixture(route)
      const resA = await callAs(w, route, A, fxA)
      if ([...aIds].some((id) => resA.text.includes(id))) aSawOwn += 1
    }
    assert.ok(
      aSawOwn >= 5,
      `A's own lists show A's rows (${aSawOwn}): the check above is not vacuous`,
    )
  })

  await t.test('ids of another tenant inside a body or filter are treated as missing', async () => {
    const aCustomer = await customer(A)
    const aToken = await tokenize(w, A)
    const aSub = await newSubmerchant(h, A, nextAccount())
    const bCustomer = await customerWithCard(w, B)
    const cases: { what: string; send: (id: string) => Promise<RawResponse>; id: string }[] = [
      {
        what: 'charge with A card token',
        id: aToken,
        send: async (id) => {
          const s = await session(B, 5_000)
          return signed(h, B, {
            method: 'POST',
            path: '/v1/payments/card',
            body: JSON.stringify({
              transactionId: s.transactionId,
              amount: 5_000,
              currency: 'TRY',
              cardToken: id,
            }),
          })
        },
      },
      {
        what: "attach A's card token to B's customer",
        id: aToken,
        send: (id) =>
          signed(h, B, {
            method: 'POST',
            path: `/v1/customers/${bCustomer.customerId}/cards`,
            body: JSON.stringify({ cardToken: id }),
          }),
      },
      {
        what: "session for A's customer",
        id: aCustomer,
        send: (id) =>
          signed(h, B, {
            method: 'POST',
            path: '/v1/payments/sessions',
            body: JSON.stringify({
              transactionId: `sec-${randomUUID()}`,
              amount: 5_000,
              currency: 'TRY',
              returnUrl: 'https://shop.example/r',
              customerId: id,
            }),
          }),
      },
      {
        what: "session split to A's submerchant",
        id: aSub.submerchantId,
        send: (id) =>
          signed(h, B, {
            method: 'POST',
            path: '/v1/payments/sessions',
            body: JSON.stringify({
              transactionId: `sec-${randomUUID()}`,
              amount: 5_000,
              currency: 'TRY',
              returnUrl: 'https://shop.example/r',
              splits: [{ submerchantId: id, amountMinor: 1_000 }],
            }),
          }),
      },
      {
        what: "subscription in A's store",
        id: A.storeId,
        send: (id) =>
          signed(h, B, {
            method: 'POST',
            path: '/v1/subscriptions',
            body: JSON.stringify({
              storeId: id,
              customerId: bCustomer.customerId,
              amountMinor: 14_900,
              currency: 'TRY',
              intervalCount: 1,
              intervalUnit: 'month',
            }),
          }),
      },
      {
        what: "subscription for A's customer",
        id: aCustomer,
        send: (id) =>
          signed(h, B, {
            method: 'POST',
            path: '/v1/subscriptions',
            body: JSON.stringify({
              storeId: B.storeId,
              customerId: id,
              amountMinor: 14_900,
              currency: 'TRY',
              intervalCount: 1,
              intervalUnit: 'month',
            }),
          }),
      },
      {
        what: "subscription charging A's card token",
        id: aToken,
        send: (id) =>
          signed(h, B, {
            method: 'POST',
            path: '/v1/subscriptions',
            body: JSON.stringify({
              storeId: B.storeId,
              customerId: bCustomer.customerId,
              cardToken: id,
              amountMinor: 14_900,
              currency: 'TRY',
              intervalCount: 1,
              intervalUnit: 'month',
            }),
          }),
      },
      {
        what: "payout to A's submerchant",
        id: aSub.submerchantId,
        send: (id) =>
          signed(h, B, {
            method: 'POST',
            path: '/v1/payouts',
            body: JSON.stringify({
              submerchantId: id,
              rail: 'fast',
              amountMinor: 1_000,
              currency: 'TRY',
            }),
          }),
      },
      {
        what: "payout draft for A's store",
        id: A.storeId,
        send: (id) =>
          signed(h, B, {
            method: 'POST',
            path: '/v1/payout-drafts',
            body: JSON.stringify({
              storeId: id,
              rows: [
                {
                  rail: 'fast',
                  dest: trIban(nextAccount()),
                  holderName: 'X Y',
                  amountMinor: 1_000,
                  currency: 'TRY',
                },
              ],
            }),
          }),
      },
    ]
    for (const c of cases) {
      const withA = await c.send(c.id)
      const fake = fabricateId(c.id)
      const withFake = await c.send(fake)
      assert.ok(withA.status >= 400, `${c.what}: ${withA.status} ${withA.text}`)
      assert.equal(errorShape(withA, [c.id]), errorShape(withFake, [fake]), c.what)
    }

    // Filters naming A's resources: the same (empty) answer as a made-up id.
    const paymentId = [...aIds].find((id) => id.startsWith('pay_'))
    assert.ok(paymentId)
    const filters: [string, string, string][] = [
      ['/v1/transactions', 'storeId', A.storeId],
      ['/v1/transactions', 'customerId', aCustomer],
      ['/v1/events', 'resourceId', paymentId],
      ['/v1/payouts', 'submerchantId', aSub.submerchantId],
      ['/v1/subscriptions', 'customerId', aCustomer],
      ['/v1/subscriptions', 'storeId', A.storeId],
    ]
    for (const [path, name, id] of filters) {
      const withA = await signed(h, B, { method: 'GET', path: `${path}?${name}=${id}` })
      const withFake = await signed(h, B, {
        method: 'GET',
        path: `${path}?${name}=${fabricateId(id)}`,
      })
      assert.equal(withA.status, withFake.status, `${path}?${name}`)
      if (withA.status === 200) {
        assert.deepEqual((withA.json as { items: unknown[] }).items, [], `${path}?${name}`)
      }
      assert.ok(!withA.text.includes(id) || withA.status >= 400, `${path}?${name} echoes A's rows`)
    }
  })

  await t.test(
    'operator and dashboard APIs refuse merchant keys; the signed API refuses bearer tokens',
    async () => {
      const jwt = await A.token()
      const problems: string[] = []
      const expect401 = (route: RouteInfo, how: string, res: RawResponse) => {
        if (res.status !== 401)
          problems.push(`${route.key} with ${how}: ${res.status} ${res.text.slice(0, 100)}`)
        else assertEnvelope(res, `${route.key} with ${how}`)
      }
      const sample = (route: RouteInfo) =>
        fillPath(
          route.path,
          Object.fromEntries(
            route.params.map((p) => [p, p === 'storeId' ? A.storeId : A.merchantId]),
          ),
        )
      for (const route of routes) {
        const path = sample(route)
        const body = route.body ? '{}' : undefined
        const json = body === undefined ? {} : { 'content-type': 'application/json' }
        const plain = (headers: Record<string, string>) =>
          rawRequest(h, {
            method: route.method,
            path,
            headers: { ...json, ...headers },
            ...(body ? { body } : {}),
          })
        if (route.cls === 'operator') {
          expect401(
            route,
            'signed merchant headers',
            await signed(h, A, { method: route.method, path, ...(body ? { body } : {}) }),
          )
          expect401(
            route,
            'Bearer secret key',
            await plain({ authorization: `Bearer ${A.secretKey}` }),
          )
          expect401(
            route,
            'Bearer dashboard token',
            await plain({ authorization: `Bearer ${jwt}` }),
          )
        } else if (route.cls === 'dashboard') {
          expect401(
            route,
            'signed merchant headers',
            await signed(h, A, { method: route.method, path, ...(body ? { body } : {}) }),
          )
          expect401(
            route,
            'Bearer secret key',
            await plain({ authorization: `Bearer ${A.secretKey}` }),
          )
          expect401(
            route,
            'Bearer public key',
            await plain({ authorization: `Bearer ${A.publicKey}` }),
          )
          expect401(
            route,
            'a dashboard token plus X-Api-Key',
            await plain({ authorization: `Bearer ${jwt}`, 'x-api-key': A.publicKey }),
          )
        } else if (route.cls === 'signed') {
          expect401(
            route,
            'Bearer operator token',
            await plain({ authorization: `Bearer ${h.config.operatorToken}` }),
          )
          expect401(
            route,
            'Bearer dashboard token',
            await plain({ authorization: `Bearer ${jwt}` }),
          )
          expect401(
            route,
            'Bearer secret key',
            await plain({ authorization: `Bearer ${A.secretKey}` }),
          )
        }
      }
      assert.deepEqual(problems, [])
    },
  )

  await t.test('bearer-id routes (public API, hosted pages): a made-up id is 404', async () => {
    const bearer = routes.filter(
      (r) => (r.cls === 'public' || r.cls === 'page') && r.params.length > 0,
    )
    assert.ok(bearer.length >= 8)
    const sampleValue: Record<string, string> = {
      id: fabricateId('00000000-0000-4000-8000-000000000000'),
      sessionId: fabricateId('00000000-0000-4000-8000-000000000000'),
      paymentId: fabricateId('pay_0123456789abcdefghjkmnpq'),
      hash: fabricateId('abcdefghijklmnopqrstuvwxyz012345'),
      name: 'no-such-asset.js',
    }
    for (const route of bearer) {
      const params = Object.fromEntries(
        route.params.map((p) => [p, sampleValue[p] ?? fabricateId('x_0123456789abcdefghjk')]),
      )
      const query = route.path.includes('installments') ? '?bin=415565' : ''
      const card = {
        number: CARDS.frictionless,
        expMonth: 12,
        expYear: 2031,
        cvc: '123',
        holderName: 'X Y',
      }
      const body =
        route.method === 'POST'
          ? JSON.stringify(route.body?.properties?.['card'] ? { card } : {})
          : undefined
      const res = await rawRequest(h, {
        method: route.method,
        path: fillPath(route.path, params) + query,
        ...(body ? { body, headers: { 'content-type': 'application/json' } } : {}),
      })
      if (route.cls === 'public') {
        assert.equal(res.status, 404, `${route.key}: ${res.text.slice(0, 200)}`)
        assertEnvelope(res, route.key)
      } else {
        assert.ok([400, 404].includes(res.status), `${route.key}: ${res.status}`)
        assert.match(String(res.headers['content-type']), /text\/html/, route.key)
      }
    }
  })

  await t.test('responses are allow-lists: declared schemas, no internal or secret fields', () => {
    // Static: every documented JSON success response has a closed schema (Fastify's serializer
    // then drops any field the schema does not name).
    const open: string[] = []
    for (const r of routes.filter((x) => x.documented)) {
      for (const [status, schema] of Object.entries(r.responses)) {
        if (schema === undefined) continue
        for (const at of openResponseObjects(schema, 'response'))
          open.push(`${r.key} ${status} ${at}`)
      }
    }
    assert.deepEqual(open, [])
    // Dynamic: every JSON body this file received, from every route it called.
    const problems: string[] = []
    let bodies = 0
    for (const r of seen.slice(seenBefore)) {
      if (r.status >= 400 || !/^[[{]/.test(r.text) || r.what.includes('/operator/')) continue
      // The OpenAPI document names every field of every schema (cvc, password…) by design.
      if (r.what.startsWith('GET /openapi.json')) continue
      bodies += 1
      walkKeys(JSON.parse(r.text), (key, value) => {
        if (/^[a-z0-9]+(_[a-z0-9]+)+$/.test(key)) problems.push(`${r.what}: internal column ${key}`)
        if (INTERNAL_FIELDS.has(key)) problems.push(`${r.what}: ${key}`)
        // The card's keyed fingerprint is public (`card.fingerprint`, CONTRACT.md "Risk":
        // base64url HMAC-SHA256); a request fingerprint of the fences (hex SHA-256) is not.
        if (
          key === 'fingerprint' &&
          !(typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value))
        ) {
          problems.push(`${r.what}: fingerprint`)
        }
        const shownOnce = SECRET_ROUTES.some((p) => p.test(r.what))
        if (!shownOnce && typeof value === 'string' && /^(sk_(demo|live)_|whsec_)/.test(value)) {
          problems.push(`${r.what}: a secret in ${key}`)
        }
      })
    }
    assert.deepEqual(problems.slice(0, 20), [])
    assert.ok(bodies > 200, `${bodies} bodies checked`)
  })

  // The fixtures are kept for the report of what was covered.
  assert.ok(fixtures.size >= tenantRoutes.length - 1)
})
