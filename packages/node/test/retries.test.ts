// Goal: the client retries 429, 503, 409 SVC-GW-2002 and network failures, waiting what
// Retry-After says (seconds or a date) or backing off exponentially, re-signs every attempt and
// keeps one Idempotency-Key for all attempts of a POST; and gives up with a typed error.
// Method: a scripted fetch and a fake clock whose sleep only records the waits.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Kurus, KurusConnectionError, KurusError, retryAfterMs } from '../src/index.ts'

interface Sent {
  url: string
  method: string
  headers: Record<string, string>
  body: string | undefined
}

type Answer = Response | Error

function harness(answers: Answer[], options: { maxRetries?: number } = {}) {
  const sent: Sent[] = []
  const waits: number[] = []
  let now = Date.parse('2026-11-22T10:00:00Z')
  const kurus = new Kurus({
    publicKey: 'pk_demo_test',
    secretKey: 'sk_demo_test',
    baseUrl: 'http://kurus.test',
    now: () => new Date(now),
    sleep: async (ms) => {
      waits.push(ms)
      now += ms
    },
    random: () => 0.5,
    fetch: async (input, init) => {
      sent.push({
        url: input instanceof Request ? input.url : input.toString(),
        method: init?.method ?? 'GET',
        headers: init?.headers as Record<string, string>,
        body: init?.body as string | undefined,
      })
      const answer = answers.shift()
      if (answer === undefined) throw new Error('no scripted answer left')
      if (answer instanceof Error) throw answer
      return answer
    },
    ...options,
  })
  return { kurus, sent, waits }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': 'req-1', ...headers },
  })
const limited = (retryAfter?: string) =>
  json(
    429,
    { code: 'SVC-GW-1004', message: 'rate limit exceeded', requestId: 'req-1' },
    retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  )
const payment = { id: 'pay_1', status: 'captured' }

test('a 429 with Retry-After: 3 waits three seconds, then the retry succeeds', async () => {
  const { kurus, sent, waits } = harness([limited('3'), json(200, payment)])
  assert.deepEqual(await kurus.payments.get('pay_1'), payment)
  assert.deepEqual(waits, [3000])
  assert.equal(sent.length, 2)
  assert.equal(sent[0]?.url, 'http://kurus.test/v1/payments/pay_1')
})

test('a POST keeps one Idempotency-Key across attempts and signs each attempt afresh', async () => {
  const shed = json(
    503,
    { code: 'SVC-GW-1005', message: 'overloaded', requestId: 'r' },
    { 'retry-after': '1' },
  )
  const { kurus, sent, waits } = harness([new TypeError('fetch failed'), shed, json(200, payment)])
  await kurus.payments.capture('pay_1', { amount: 100 })
  assert.equal(sent.length, 3)
  const keys = new Set(sent.map((s) => s.headers['idempotency-key']))
  assert.equal(keys.size, 1)
  assert.match([...keys][0] ?? '', /^[0-9a-f-]{36}$/)
  assert.equal(new Set(sent.map((s) => s.headers['X-Timestamp'])).size, 3)
  assert.equal(new Set(sent.map((s) => s.headers['X-Signature'])).size, 3)
  assert.equal(sent[0]?.body, '{"amount":100}')
  // A network failure backs off (500 ms × 2^0 with jitter 0.5 → 375 ms); the 503 says 1 s.
  assert.deepEqual(waits, [375, 1000])
})

test('a key given by the caller is the one sent; a GET sends none', async () => {
  const { kurus, sent } = harness([json(200, payment), json(200, payment)])
  await kurus.payments.void('pay_1', {}, { idempotencyKey: '7f1d3c52-7a0e-4c61-9a39-2a0b7d6f1e11' })
  await kurus.payments.get('pay_1')
  assert.equal(sent[0]?.headers['idempotency-key'], '7f1d3c52-7a0e-4c61-9a39-2a0b7d6f1e11')
  assert.equal(sent[1]?.headers['idempotency-key'], undefined)
})

test('without Retry-After the waits double: 375 ms, 750 ms, then the error is thrown', async () => {
  const { kurus, waits } = harness([limited(), limited(), limited()])
  const error = await kurus.payments.get('pay_1').then(
    () => assert.fail('should throw'),
    (e: unknown) => e,
  )
  assert.ok(error instanceof KurusError)
  assert.equal(error.status, 429)
  assert.equal(error.code, 'SVC-GW-1004')
  assert.equal(error.requestId, 'req-1')
  assert.deepEqual(waits, [375, 750])
})

test('409 SVC-GW-2002 (same key in flight) is retried; other 4xx are not', async () => {
  const inFlight = json(409, { code: 'SVC-GW-2002', message: 'in flight', requestId: 'r' })
  const declined = json(402, {
    code: 'SVC-PAY-3501',
    message: 'card declined',
    requestId: 'r2',
    paymentId: 'pay_9',
    declineCode: 'card_declined',
  })
  const { kurus, sent } = harness([inFlight, declined])
  const error = await kurus.payments
    .create({ transactionId: 't', amount: 100, currency: 'TRY', cardToken: 'tok' })
    .then(
      () => assert.fail('should throw'),
      (e: unknown) => e,
    )
  assert.ok(error instanceof KurusError)
  assert.equal(error.code, 'SVC-PAY-3501')
  assert.equal(error.paymentId, 'pay_9')
  assert.equal(error.declineCode, 'card_declined')
  assert.equal(sent.length, 2)
})

test('a Retry-After date is honoured; one beyond maxRetryAfterMs is not waited for', async () => {
  const soon = new Date(Date.parse('2026-11-22T10:00:02Z')).toUTCString()
  const { kurus, waits } = harness([limited(soon), json(200, payment)])
  await kurus.payments.get('pay_1')
  assert.deepEqual(waits, [2000])
  const far = harness([limited('3600')])
  await assert.rejects(far.kurus.payments.get('pay_1'), KurusError)
  assert.deepEqual(far.waits, [])
})

test('network failures past the retries end in KurusConnectionError; maxRetries: 0 never retries', async () => {
  const down = harness([new TypeError('ECONNREFUSED'), new TypeError('ECONNREFUSED')], {
    maxRetries: 1,
  })
  await assert.rejects(down.kurus.whoami(), KurusConnectionError)
  assert.equal(down.sent.length, 2)
  const once = harness([limited('1')], { maxRetries: 0 })
  await assert.rejects(once.kurus.whoami(), KurusError)
  assert.deepEqual(once.waits, [])
})

test('retryAfterMs reads delta-seconds and HTTP dates', () => {
  const now = new Date('2026-11-22T10:00:00Z')
  assert.equal(retryAfterMs('5', now), 5000)
  assert.equal(retryAfterMs('Sun, 22 Nov 2026 10:00:10 GMT', now), 10_000)
  assert.equal(retryAfterMs('Sun, 22 Nov 2026 09:00:00 GMT', now), 0)
  assert.equal(retryAfterMs(null, now), undefined)
  assert.equal(retryAfterMs('soon', now), undefined)
})
