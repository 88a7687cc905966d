// Goal (issue 22 §2): an unauthenticated request costs almost nothing. The headers alone refuse
// a missing or unknown key, a stale timestamp or a missing signature before a byte of the body
// is read; the HMAC is verified over the raw bytes before JSON.parse sees them; JSON nests at
// most 64 levels wherever it comes in (400 SVC-VAL-3001 naming the limit, never a 500); and
// failed authentications are limited per client address, which follows X-Forwarded-For only
// through the proxies KURUS_TRUST_PROXY names.
// Method: real app over HTTP. "Before the body is read" is shown with a raw socket that sends
// the headers and part of a declared 1 MiB body and then waits: the answer must come while the
// body is unfinished. "Before JSON.parse" is shown by watching JSON.parse in this process (the
// app runs in it) for a marker that only the refused body carries. Limits run on a frozen
// clock, so buckets refill only when the test moves time; other client addresses are other
// loopback source addresses (127.0.0.x).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { test, type TestContext } from 'node:test'
import { timestampFor } from '../../sdk/index.ts'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { OPERATOR_TOKEN, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { FreezableClock, hmacHex, probeRoutes, probeState, sha256Hex } from './_support.ts'

const WHOAMI = '/v1/auth/whoami'
// Secrets given, so loadConfig writes nothing to a data directory.
const KEYS = { masterKey: Buffer.alloc(32, 1), operatorToken: 'operator-token-for-config-tests' }
const ECHO = '/v1/test/echo'

function nested(depth: number, inner = '1'): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth)
}

/** About 1 MiB of JSON nested 500,000 deep, with `marker` inside: what the flood sent. */
function hugeNested(marker: string): string {
  const depth = 500_000
  return '['.repeat(depth) + JSON.stringify(marker) + ']'.repeat(depth)
}

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Record<string, unknown>
}

/** Any request from any loopback source address, with any headers. */
function call(
  h: Pick<TestApp, 'url'>,
  req: {
    method: string
    path: string
    headers?: Record<string, string>
    body?: string
    from?: string
  },
): Promise<Answer> {
  const url = new URL(h.url)
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: {
          ...(req.body === undefined
            ? {}
            : {
                'content-type': 'application/json',
                'content-length': String(Buffer.byteLength(req.body)),
              }),
          ...req.headers,
        },
        ...(req.from ? { localAddress: req.from } : {}),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          })
        })
      },
    )
    r.on('error', reject)
    r.end(req.body)
  })
}

function signedHeaders(
  keys: { publicKey: string; secretKey: string },
  method: string,
  path: string,
  body: string,
  timestamp: string,
): Record<string, string> {
  return {
    'x-api-key': keys.publicKey,
    'x-timestamp': timestamp,
    'x-signature': hmacHex(keys.secretKey, [timestamp, method, path, sha256Hex(body)].join('\n')),
  }
}

/**
 * Sends the request line, the headers and `sent` bytes of a body declared `declared` bytes
 * long, then nothing more. Resolves with the status line once the server answers; rejects if
 * it has not answered within `waitMs` (it is waiting for the rest of the body).
 */
function answerBeforeBody(
  h: Pick<TestApp, 'url'>,
  path: string,
  headers: Record<string, string>,
  sent: string,
  declared: number,
  waitMs = 5_000,
): Promise<{ status: number; text: string }> {
  const url = new URL(h.url)
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) })
    let received = Buffer.alloc(0)
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer within ${waitMs} ms while the body was unfinished`))
    }, waitMs)
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const end = received.indexOf('\r\n\r\n')
      const head = received.subarray(0, Math.max(0, end)).toString('latin1')
      const length = /content-length: (\d+)/i.exec(head)?.[1]
      if (end >= 0 && length !== undefined && received.length >= end + 4 + Number(length)) {
        clearTimeout(timer)
        socket.destroy()
        resolve({
          status: Number(head.slice(9, 12)),
          text: received.subarray(end + 4).toString('utf8'),
        })
      }
    })
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\n` +
        `content-length: ${declared}\r\n` +
        Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('') +
        `\r\n${sent}`,
    )
  })
}

/** Records every text JSON.parse is given in this process that contains `marker`. */
function watchJsonParse(t: TestContext, marker: string): { seen: number } {
  const original = JSON.parse
  const watch = { seen: 0 }
  JSON.parse = function (text: string, reviver?: Parameters<typeof JSON.parse>[1]): unknown {
    if (typeof text === 'string' && text.includes(marker)) watch.seen++
    return original(text, reviver) as unknown
  } as typeof JSON.parse
  t.after(() => {
    JSON.parse = original
  })
  return watch
}

interface Setup {
  h: TestApp
  m: TestMerchant
  clock: FreezableClock
}

async function setup(t: TestContext, env: Record<string, string> = {}): Promise<Setup> {
  const clock = new FreezableClock()
  const h = await startTestApp(t, { clock, env, extraSignedRoutes: [probeRoutes(probeState())] })
  const m = await h.newMerchant()
  clock.freeze()
  return { h, m, clock }
}

test('the headers alone refuse a request before a byte of its body is read', async (t) => {
  const { h, m, clock } = await setup(t)
  const now = clock.now()
  const fresh = timestampFor(now)
  const stale = timestampFor(new Date(now.getTime() - 5 * 60_000 - 1_000))
  const cases: [string, Record<string, string>, string][] = [
    ['no key', { 'x-timestamp': fresh, 'x-signature': 'a'.repeat(64) }, 'SVC-GW-1003'],
    [
      'unknown key',
      {
        'x-api-key': 'pk_demo_doesNotExist0123456789abc',
        'x-timestamp': fresh,
        'x-signature': 'a'.repeat(64),
      },
      'SVC-GW-1003',
    ],
    [
      'stale timestamp',
      { 'x-api-key': m.publicKey, 'x-timestamp': stale, 'x-signature': 'a'.repeat(64) },
      'SVC-GW-1001',
    ],
    ['no signature', { 'x-api-key': m.publicKey, 'x-timestamp': fresh }, 'SVC-GW-1002'],
  ]
  for (const [name, headers, code] of cases) {
    // 1 MiB declared, 64 bytes sent: a server reading the body first would wait for the rest.
    const answer = await answerBeforeBody(h, ECHO, headers, '['.repeat(64), 1024 * 1024)
    assert.equal(answer.status, 401, `${name}: ${answer.text}`)
    assert.equal((JSON.parse(answer.text) as { code: string }).code, code, name)
  }
  // A stale timestamp is refused first even when the request is otherwise correctly signed.
  const body = JSON.stringify({ hello: 'world' })
  const correctButStale = signedHeaders(m, 'POST', ECHO, body, stale)
  const answer = await answerBeforeBody(h, ECHO, correctButStale, body.slice(0, 5), body.length)
  assert.equal(answer.status, 401, answer.text)
  assert.equal((JSON.parse(answer.text) as { code: string }).code, 'SVC-GW-1001')
})

test('the HMAC is checked over the raw bytes before JSON.parse is handed them', async (t) => {
  const { h, m, clock } = await setup(t)
  const marker = `marker-${randomUUID()}`
  const watch = watchJsonParse(t, marker)
  const stamp = () => timestampFor(clock.now())
  // Headers signed over other bytes: a valid key and timestamp, a signature that cannot match.
  const forged = () => signedHeaders(m, 'POST', ECHO, '{"other":"bytes"}', stamp())

  // A malformed body under a wrong signature: the auth error, not the parse error.
  const malformed = `{"a": ${JSON.stringify(marker)}, oops`
  const bad = await call(h, { method: 'POST', path: ECHO, headers: forged(), body: malformed })
  assert.equal(bad.status, 401)
  assert.equal(bad.body['code'], 'SVC-GW-1002')
  // The flood's body: ~1 MiB nested half a million deep, under a wrong signature.
  const huge = hugeNested(marker)
  assert.ok(huge.length > 1_000_000 && huge.length <= 1024 * 1024)
  const flood = await call(h, { method: 'POST', path: ECHO, headers: forged(), body: huge })
  assert.equal(flood.status, 401)
  assert.equal(flood.body['code'], 'SVC-GW-1002')
  assert.equal(watch.seen, 0, 'an unauthenticated body reached JSON.parse')

  // Correctly signed, the same huge body is refused by the depth scan, still before JSON.parse.
  const deep = await call(h, {
    method: 'POST',
    path: ECHO,
    headers: signedHeaders(m, 'POST', ECHO, huge, stamp()),
    body: huge,
  })
  assert.equal(deep.status, 400)
  assert.equal(deep.body['code'], 'SVC-VAL-3001')
  assert.match(String(deep.body['message']), /deeper than 64 levels/)
  assert.equal(watch.seen, 0, 'a too-deep body reached JSON.parse')

  // And correctly signed, the malformed body is parsed (and refused): the watch does see it.
  const parsed = await call(h, {
    method: 'POST',
    path: ECHO,
    headers: signedHeaders(m, 'POST', ECHO, malformed, stamp()),
    body: malformed,
  })
  assert.equal(parsed.status, 400)
  assert.equal(parsed.body['code'], 'SVC-VAL-3002')
  assert.equal(watch.seen, 1)
})

test('JSON nests at most 64 levels on signed, public, dashboard and operator routes', async (t) => {
  const { h, m, clock } = await setup(t)
  const sign = (path: string, body: string) =>
    signedHeaders(m, 'POST', path, body, timestampFor(clock.now()))
  const assertTooDeep = (res: Answer, where: string) => {
    assert.equal(res.status, 400, `${where}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body['code'], 'SVC-VAL-3001', where)
    assert.match(String(res.body['message']), /deeper than 64 levels/, where)
    assert.deepEqual(
      res.body['details'],
      [{ field: 'body', reason: 'nests arrays or objects deeper than 64 levels' }],
      where,
    )
  }
  const tooDeep = `{"x":${nested(64)}}`
  const deepest = `{"x":${nested(63)}}`

  // Signed: 64 levels pass the parser (the echo answers them back); 65 do not.
  const ok = await call(h, {
    method: 'POST',
    path: ECHO,
    headers: sign(ECHO, deepest),
    body: deepest,
  })
  assert.equal(ok.status, 200, JSON.stringify(ok.body))
  assertTooDeep(
    await call(h, { method: 'POST', path: ECHO, headers: sign(ECHO, tooDeep), body: tooDeep }),
    'signed',
  )
  // A 10,000-level extraData (it gave a 500: the value was stringified before its depth was
  // checked) is refused as a 400; at 20 levels the customers' own rule (8) answers.
  for (const [depth, expected] of [
    [10_000, /deeper than 64 levels/],
    [20, /extraData/],
  ] as const) {
    const body = `{"externalId":"ext-${randomUUID()}","extraData":{"a":${nested(depth)}}}`
    const res = await call(h, {
      method: 'POST',
      path: '/v1/customers',
      headers: sign('/v1/customers', body),
      body,
    })
    assert.equal(res.status, 400, `extraData ${depth}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body['code'], 'SVC-VAL-3001')
    assert.match(String(res.body['message']), expected)
  }

  // Public (the checkout's pay endpoint; the session need not exist: the body comes first).
  assertTooDeep(
    await call(h, {
      method: 'POST',
      path: '/v1/public/sessions/ses_doesnotexist/pay',
      body: tooDeep,
    }),
    'public',
  )
  // Dashboard: the open login route and a route behind the token.
  assertTooDeep(
    await call(h, { method: 'POST', path: '/v1/dashboard/login', body: tooDeep }),
    'dashboard login',
  )
  const created = await h.operator<{ dashboard: { email: string; password: string } }>(
    'POST',
    '/operator/v1/merchants',
    { name: 'Deep JSON', kycStatus: 'approved' },
  )
  const login = await call(h, {
    method: 'POST',
    path: '/v1/dashboard/login',
    body: JSON.stringify(created.body.dashboard),
  })
  assert.equal(login.status, 200, JSON.stringify(login.body))
  assertTooDeep(
    await call(h, {
      method: 'POST',
      path: `/v1/stores/${m.storeId}/webhooks`,
      headers: { authorization: `Bearer ${String(login.body['token'])}` },
      body: tooDeep,
    }),
    'dashboard',
  )
  // Operator.
  assertTooDeep(
    await call(h, {
      method: 'POST',
      path: '/operator/v1/merchants',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      body: tooDeep,
    }),
    'operator',
  )
})

const LIMITED = {
  KURUS_AUTH_FAILURE_BURST: '3',
  // One more failure every 10 s.
  KURUS_AUTH_FAILURE_PER_MINUTE: '6',
}

test('failed authentications are limited per client address, before anything else is read', async (t) => {
  const { h, m, clock } = await setup(t, LIMITED)
  const whoami = (from: string, extra: Record<string, string> = {}, signature?: string) => {
    const headers = signedHeaders(m, 'GET', WHOAMI, '', timestampFor(clock.now()))
    return call(h, {
      method: 'GET',
      path: WHOAMI,
      from,
      headers: { ...headers, ...(signature ? { 'x-signature': signature } : {}), ...extra },
    })
  }
  const wrong = 'f'.repeat(64)
  // Three failures fit the burst; the fourth is answered 401 and spends the last of it.
  for (let i = 0; i < 4; i++) {
    const res = await whoami('127.0.0.1', {}, wrong)
    assert.equal(res.status, 401, `failure ${i + 1}`)
  }
  // From now on this address is refused before its headers are looked at: even a correctly
  // signed request, even one claiming another address in X-Forwarded-For (no proxy trusted).
  for (const extra of [{}, { 'x-forwarded-for': '203.0.113.9' }]) {
    const res = await whoami('127.0.0.1', extra)
    assert.equal(res.status, 429, JSON.stringify(res.body))
    assert.equal(res.body['code'], 'SVC-GW-1004')
    assert.equal(res.headers['retry-after'], '10')
  }
  // Refused before the body is read, too.
  const blocked = await answerBeforeBody(h, ECHO, { 'x-api-key': m.publicKey }, '[[[[', 1024 * 1024)
  assert.equal(blocked.status, 429, blocked.text)
  // Another client address is not affected.
  assert.equal((await whoami('127.0.0.2', {}, wrong)).status, 401)
  assert.equal((await whoami('127.0.0.2')).status, 200)
  // The operator and dashboard APIs count failures to the same budget per address.
  for (const api of [
    { path: '/operator/v1/merchants/mrc_x', auth: 'Bearer wrong-operator-token' },
    { path: '/v1/dashboard/me', auth: 'Bearer not-a-jwt' },
  ]) {
    const from = api.path.startsWith('/operator') ? '127.0.0.3' : '127.0.0.4'
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const res = await call(h, {
        method: 'GET',
        path: api.path,
        from,
        headers: { authorization: api.auth },
      })
      statuses.push(res.status)
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429], api.path)
  }
  // After Retry-After, the address may try again.
  clock.advance(10_000)
  assert.equal((await whoami('127.0.0.1')).status, 200)
})

test('behind KURUS_TRUST_PROXY the limits follow X-Forwarded-For, and a prepended address changes nothing', async (t) => {
  const { h, m, clock } = await setup(t, {
    ...LIMITED,
    KURUS_TRUST_PROXY: '127.0.0.1',
    KURUS_RATE_LIMIT_RPS: '1',
    KURUS_RATE_LIMIT_BURST: '3',
  })
  const wrongFrom = (xff: string) =>
    call(h, {
      method: 'GET',
      path: WHOAMI,
      headers: {
        ...signedHeaders(m, 'GET', WHOAMI, '', timestampFor(clock.now())),
        'x-signature': 'f'.repeat(64),
        'x-forwarded-for': xff,
      },
    })
  for (let i = 0; i < 4; i++) assert.equal((await wrongFrom('203.0.113.7')).status, 401)
  assert.equal((await wrongFrom('203.0.113.7')).status, 429)
  // The client cannot choose its address: what it prepends is left of the trusted hop.
  assert.equal((await wrongFrom('198.51.100.1, 203.0.113.7')).status, 429)
  // Another client behind the same proxy is another bucket.
  assert.equal((await wrongFrom('203.0.113.8')).status, 401)
  // An IPv6 client is its /64: another address of the same /64 is the same client.
  for (let i = 0; i < 4; i++) assert.equal((await wrongFrom('2001:db8:1:2::a')).status, 401)
  assert.equal((await wrongFrom('2001:db8:1:2:ffff::b')).status, 429)
  assert.equal((await wrongFrom('2001:db8:1:3::a')).status, 401)
  // An untrusted peer's X-Forwarded-For is ignored: 127.0.0.2 is not the configured proxy.
  const direct = await call(h, {
    method: 'GET',
    path: WHOAMI,
    from: '127.0.0.2',
    headers: {
      ...signedHeaders(m, 'GET', WHOAMI, '', timestampFor(clock.now())),
      'x-forwarded-for': '203.0.113.7',
    },
  })
  assert.equal(direct.status, 200, JSON.stringify(direct.body))

  // Unauthenticated routes: the per-IP bucket is the forwarded client's as well.
  const publicGet = (xff: string) =>
    call(h, {
      method: 'GET',
      path: '/v1/public/sessions/ses_doesnotexist',
      headers: { 'x-forwarded-for': xff },
    })
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await publicGet('192.0.2.10')).status)
  assert.deepEqual(statuses, [404, 404, 404, 429])
  assert.equal((await publicGet('192.0.2.99, 192.0.2.10')).status, 429)
  assert.equal((await publicGet('192.0.2.11')).status, 404)
})

test('without a trusted proxy, X-Forwarded-For does not split the per-IP limit of public routes', async (t) => {
  const { h } = await setup(t, { KURUS_RATE_LIMIT_RPS: '1', KURUS_RATE_LIMIT_BURST: '3' })
  const statuses: number[] = []
  for (let i = 0; i < 5; i++) {
    const res = await call(h, {
      method: 'GET',
      path: '/v1/public/sessions/ses_doesnotexist',
      from: '127.0.0.5',
      headers: { 'x-forwarded-for': `192.0.2.${i + 1}` },
    })
    statuses.push(res.status)
  }
  assert.deepEqual(statuses, [404, 404, 404, 429, 429])
})

test('KURUS_TRUST_PROXY accepts addresses, ranges and hop counts, and refuses true', () => {
  const trust = (value: string) => loadConfig({ KURUS_TRUST_PROXY: value }, KEYS).trustProxy
  assert.equal(trust(''), false)
  assert.equal(trust('2'), 2)
  assert.deepEqual(trust('10.0.0.0/8, 192.168.1.7,loopback,2001:db8::/32'), [
    '10.0.0.0/8',
    '192.168.1.7',
    'loopback',
    '2001:db8::/32',
  ])
  for (const bad of ['true', '*', '0', '11', '10.0.0.0/33', 'proxy.example', '10.0.0.1/8/1']) {
    assert.throws(() => trust(bad), ConfigError, bad)
  }
  assert.throws(() => trust('true'), /never "true"/)
})
