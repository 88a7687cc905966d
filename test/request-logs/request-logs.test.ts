// Goal: GET /v1/logs is the merchant's API request log: each signed request appears (within
// about a second, written in batches off the request path) with its request id, method,
// path, route, status, SVC error code, duration, key prefix, mode and Idempotency-Key; another
// merchant's requests never do; no body, card number or secret is ever kept; keyset pages
// and the filters work; lines past the retention are purged by the reconciler.
// Method: the app over PGlite; requests through @kurus/node's transport (signed like any
// client), the log read back through the API; the stored rows scanned directly for secrets.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { Kurus } from '../../packages/node/src/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'

interface LogLine {
  id: string
  requestId: string
  method: string
  path: string
  route: string | null
  status: number
  errorCode: string | null
  durationMs: number
  apiKeyId: string
  keyPrefix: string
  mode: string
  submerchantId: string | null
  idempotencyKey: string | null
  createdAt: string
}

const PAN = '4155650100416111'

/** A merchant with @kurus/node's client (the signing any integration uses). */
async function merchant(h: TestApp, name = 'Logs Shop') {
  const m = await h.newMerchant({ name })
  return {
    ...m,
    client: new Kurus({ ...m, baseUrl: h.url, now: () => h.clock.now(), maxRetries: 0 }),
  }
}

/** The merchant's log lines, once `wanted` request ids are all in it (flushes are ~500 ms). */
async function logsWith(client: Kurus, wanted: string[], query = {}): Promise<LogLine[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const lines = (await client.logs.list({ limit: 100, ...query }).toArray(1000)) as LogLine[]
    const ids = new Set(lines.map((l) => l.requestId))
    if (wanted.every((id) => ids.has(id))) return lines
    if (Date.now() > deadline) throw new Error(`not logged: ${wanted.join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function requestId(
  client: Kurus,
  method: string,
  path: string,
  opts: Parameters<Kurus['transport']['send']>[2] = {},
): Promise<{ status: number; requestId: string }> {
  const res = await client.transport.send(method, path, opts)
  assert.ok(res.requestId)
  return { status: res.status, requestId: res.requestId }
}

test('each signed request is logged with its fields; no body, card number or secret is kept', async (t) => {
  const h: TestApp = await startTestApp(t)
  const m = await merchant(h)
  const key = randomUUID()
  const tokenize = await requestId(m.client, 'POST', '/v1/cards/tokens', {
    body: { cardNumber: PAN, expMonth: 12, expYear: 2031, cvc: '737', holderName: 'Ayşe Yılmaz' },
    idempotencyKey: key,
  })
  assert.equal(tokenize.status, 201)
  const own = randomUUID()
  const whoami = await requestId(m.client, 'GET', '/v1/auth/whoami', { requestId: own })
  assert.equal(whoami.requestId, own)
  const missing = await requestId(m.client, 'GET', `/v1/payments/pay_${'0'.repeat(24)}`)
  assert.equal(missing.status, 404)
  // A card number put in a URL by mistake: answered, but never written down.
  const panInPath = await requestId(m.client, 'GET', `/v1/payments/${PAN}`, {
    query: { q: PAN },
  })

  const lines = await logsWith(m.client, [
    tokenize.requestId,
    own,
    missing.requestId,
    panInPath.requestId,
  ])
  const byId = new Map(lines.map((l) => [l.requestId, l]))
  const t1 = byId.get(tokenize.requestId)
  assert.ok(t1)
  assert.equal(t1.method, 'POST')
  assert.equal(t1.path, '/v1/cards/tokens')
  assert.equal(t1.route, '/v1/cards/tokens')
  assert.equal(t1.status, 201)
  assert.equal(t1.errorCode, null)
  assert.equal(t1.idempotencyKey, key)
  assert.equal(t1.apiKeyId, m.apiKeyId)
  assert.equal(t1.keyPrefix, m.publicKey.slice(0, 12))
  assert.equal(t1.mode, 'demo')
  assert.match(t1.id, /^req_[0-9a-z]{24}$/)
  assert.ok(Number.isInteger(t1.durationMs) && t1.durationMs >= 0)
  assert.ok(Math.abs(Date.parse(t1.createdAt) - h.clock.now().getTime()) < 60_000)

  const w = byId.get(own)
  assert.equal(w?.idempotencyKey, null)
  assert.equal(w.status, 200)
  const nf = byId.get(missing.requestId)
  assert.equal(nf?.status, 404)
  assert.equal(nf.path, `/v1/payments/pay_${'0'.repeat(24)}`)
  assert.equal(nf.route, '/v1/payments/:id')
  assert.match(nf.errorCode ?? '', /^SVC-[A-Z]+-\d{4}$/)
  const p = byId.get(panInPath.requestId)
  assert.equal(p?.path, '/v1/payments/[redacted]')

  // Reading the log is not itself logged (a tail polls it).
  assert.ok(lines.every((l) => l.path !== '/v1/logs'))

  // Neither the answer nor the stored rows hold the card, the CVC, the holder or the secret.
  const rows = await h.deps.db.selectFrom('request_logs').selectAll().execute()
  for (const text of [JSON.stringify(lines), JSON.stringify(rows)]) {
    assert.ok(!text.includes(PAN), 'no PAN')
    assert.ok(!text.includes(PAN.slice(6)), 'no PAN tail')
    assert.ok(!text.includes('737'.padStart(4, '"')), 'no CVC')
    assert.ok(!text.includes('Ayşe'), 'no body')
    assert.ok(!text.includes(m.secretKey), 'no secret key')
    assert.ok(!text.includes(m.secretKey.slice(0, 16)), 'no part of the secret key')
  }
})

test("another merchant's requests never appear in a merchant's log", async (t) => {
  const h = await startTestApp(t)
  const a = await merchant(h, 'A')
  const b = await merchant(h, 'B')
  const fromA = await requestId(a.client, 'GET', '/v1/auth/whoami')
  const fromB = await requestId(b.client, 'GET', '/v1/auth/whoami')
  const logA = await logsWith(a.client, [fromA.requestId])
  const logB = await logsWith(b.client, [fromB.requestId])
  assert.ok(logA.every((l) => l.apiKeyId === a.apiKeyId))
  assert.ok(logB.every((l) => l.apiKeyId === b.apiKeyId))
  assert.ok(!logA.some((l) => l.requestId === fromB.requestId))
  assert.ok(!logB.some((l) => l.requestId === fromA.requestId))
})

test('keyset pages, the status and since filters, and the retention purge', async (t) => {
  const h = await startTestApp(t)
  const m = await merchant(h)
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    ids.push((await requestId(m.client, 'GET', '/v1/auth/whoami')).requestId)
    h.clock.advance(1000)
  }
  const bad = await requestId(m.client, 'GET', `/v1/customers/cus_${'0'.repeat(24)}`)
  assert.equal(bad.status, 404)
  await logsWith(m.client, [...ids, bad.requestId])

  // Pages of 2, newest first, each line once.
  const seen: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = (await m.client.request('get', '/v1/logs', {
      params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } },
    })) as { items: LogLine[]; nextCursor: string | null }
    assert.ok(page.items.length <= 2)
    seen.push(...page.items.map((l) => l.requestId))
    cursor = page.nextCursor ?? undefined
    pages++
  } while (cursor !== undefined)
  assert.deepEqual(seen.slice(0, 6), [bad.requestId, ...ids.reverse()].slice(0, 6))
  assert.equal(new Set(seen).size, seen.length)
  assert.ok(pages >= 3)

  const errors = (await m.client.logs.list({ status: '4xx' }).toArray()) as LogLine[]
  assert.deepEqual(
    errors.map((l) => l.requestId),
    [bad.requestId],
  )
  assert.deepEqual(
    ((await m.client.logs.list({ status: '404' }).toArray()) as LogLine[]).map((l) => l.requestId),
    [bad.requestId],
  )
  const badStatus = await m.client.transport.send('GET', '/v1/logs', { query: { status: '4x' } })
  assert.equal(badStatus.status, 400)

  // A cursor belongs to its filters: replayed with others it is refused, not misread.
  const first = (await m.client.request('get', '/v1/logs', {
    params: { query: { limit: 1 } },
  })) as { nextCursor: string | null }
  assert.ok(first.nextCursor)
  const mixed = await m.client.transport.send('GET', '/v1/logs', {
    query: { limit: 1, status: '2xx', cursor: first.nextCursor },
  })
  assert.equal(mixed.status, 400)

  const cutoff = new Date(h.clock.now().getTime() - 2500)
  const recent = (await m.client.logs.list({ since: cutoff.toISOString() }).toArray()) as LogLine[]
  assert.ok(recent.length >= 2 && recent.length < 6, `since: ${recent.length}`)
  assert.ok(recent.every((l) => Date.parse(l.createdAt) >= cutoff.getTime()))

  // Eight days on, the reconciler purges the lines past the 7-day retention.
  h.clock.advance(8 * 24 * 60 * 60 * 1000)
  const fresh = await requestId(m.client, 'GET', '/v1/auth/whoami')
  await m.client.sandbox.reconcile()
  const after = await logsWith(m.client, [fresh.requestId])
  const left = new Set(after.map((l) => l.requestId))
  assert.ok(
    ids.every((id) => !left.has(id)),
    'old lines purged',
  )
})

test('two API processes over one database each write their lines; closing one flushes it', async (t) => {
  const h = await startTestApp(t)
  // A second app over the same database: another API process with its own buffer.
  const other = await startTestApp(t, { database: h.database, clock: h.clock })
  const m = await merchant(h)
  const viaOther = new Kurus({ ...m, baseUrl: other.url, now: () => h.clock.now(), maxRetries: 0 })
  const ids: string[] = []
  for (let i = 0; i < 3; i++) {
    ids.push((await requestId(m.client, 'GET', '/v1/auth/whoami')).requestId)
    ids.push((await requestId(viaOther, 'GET', '/v1/auth/whoami')).requestId)
  }
  // The last request of the second process, then its close at once (before its timer):
  // the close writes what is buffered.
  const last = await requestId(viaOther, 'GET', `/v1/payments/pay_${'9'.repeat(24)}`)
  await other.app.fastify.close()
  const written = await h.deps.db
    .selectFrom('request_logs')
    .select('id')
    .where('request_id', '=', last.requestId)
    .execute()
  assert.equal(written.length, 1, 'written by the close, with no wait')
  const lines = await logsWith(m.client, [...ids, last.requestId])
  assert.equal(new Set(lines.map((l) => l.id)).size, lines.length, 'each line once')
  assert.equal(lines.filter((l) => ids.includes(l.requestId)).length, ids.length)
})
