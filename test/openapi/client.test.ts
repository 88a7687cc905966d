// Goal: a client generated from the served OpenAPI document compiles and runs the quickstart
// (create a session → charge with a test card → get the payment → refund), with no casts, and
// every response it gets matches the document. Method: `npm run openapi` generates the types
// with openapi-typescript into .artifacts/openapi-types.ts (`npm run lint` runs it before tsc,
// which type-checks this file against them); openapi-fetch calls the app on an ephemeral port,
// a middleware signs each request with the SDK's helper, and Ajv checks each body against the
// operation's response schema in the served document.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import createClient, { type Middleware } from 'openapi-fetch'
import type { paths } from '../../.artifacts/openapi-types.ts'
import { signedHeaders, timestampFor } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'

/** Signs each request as docs/api.md says: over its method, path and exact body bytes. */
function signing(keys: { publicKey: string; secretKey: string }, now: () => Date): Middleware {
  return {
    async onRequest({ request }) {
      const body = new Uint8Array(await request.clone().arrayBuffer())
      const path = new URL(request.url).pathname
      const headers = signedHeaders(keys, request.method, path, body, timestampFor(now()))
      request.headers.set('X-Api-Key', headers['X-Api-Key'])
      request.headers.set('X-Timestamp', headers['X-Timestamp'])
      request.headers.set('X-Signature', headers['X-Signature'])
      return request
    },
  }
}

/** Checks a response body against the served document's schema for that operation. */
async function conformance(url: string) {
  const document: unknown = await (await fetch(`${url}/openapi.json`)).json()
  // OpenAPI 3.1 schemas are JSON Schema 2020-12; `example` is an OpenAPI annotation.
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema(document as object, 'openapi.json')
  return (path: string, method: string, status: number, body: unknown) => {
    const pointer = [
      'paths',
      path,
      method,
      'responses',
      String(status),
      'content',
      'application/json',
      'schema',
    ]
      .map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1'))
      .join('/')
    const validate = ajv.getSchema(`openapi.json#/${pointer}`)
    assert.ok(validate, `no schema for ${method} ${path} ${status}`)
    assert.ok(validate(body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`)
  }
}

test('a client generated from /openapi.json runs the quickstart: session, charge, payment, refund', async (t) => {
  const h = await startTestApp(t)
  const merchant = await h.newMerchant()
  const client = createClient<paths>({ baseUrl: h.url })
  client.use(signing(merchant, () => h.clock.now()))
  const conforms = await conformance(h.url)
  const amount = 15_000
  const transactionId = `ord-${randomUUID()}`

  const session = await client.POST('/v1/payments/sessions', {
    body: { transactionId, amount, currency: 'TRY', returnUrl: 'https://shop.example/return' },
  })
  assert.equal(session.response.status, 201, JSON.stringify(session.error))
  conforms('/v1/payments/sessions', 'post', 201, session.data)
  assert.ok(session.data?.checkoutUrl.includes(session.data.sessionId))

  const token = await client.POST('/v1/cards/tokens', {
    body: {
      cardNumber: CARDS.frictionless,
      expMonth: 12,
      expYear: 2030,
      cvc: '123',
      holderName: 'Ayşe Yılmaz',
    },
  })
  assert.equal(token.response.status, 201, JSON.stringify(token.error))
  conforms('/v1/cards/tokens', 'post', 201, token.data)
  const cardToken = token.data?.cardToken ?? ''

  const charge = await client.POST('/v1/payments/card', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: { transactionId, amount, currency: 'TRY', cardToken },
  })
  assert.equal(charge.response.status, 201, JSON.stringify(charge.error))
  conforms('/v1/payments/card', 'post', 201, charge.data)
  const paymentId = charge.data?.paymentId ?? ''
  assert.equal(charge.data?.status, 'captured')

  const payment = await client.GET('/v1/payments/{id}', { params: { path: { id: paymentId } } })
  assert.equal(payment.response.status, 200, JSON.stringify(payment.error))
  conforms('/v1/payments/{id}', 'get', 200, payment.data)
  const status: 'captured' | 'refunded' | undefined =
    payment.data?.status === 'captured' || payment.data?.status === 'refunded'
      ? payment.data.status
      : undefined
  assert.equal(status, 'captured')
  assert.equal(payment.data?.refundableAmount, amount)

  // The body is optional in the document: no body refunds the whole refundable amount.
  const refund = await client.POST('/v1/payments/{id}/refund', {
    params: { path: { id: paymentId } },
  })
  assert.ok([200, 202].includes(refund.response.status), JSON.stringify(refund.error))
  conforms('/v1/payments/{id}/refund', 'post', refund.response.status, refund.data)
  assert.equal(refund.data?.refundAmount, amount)

  const refunds = await client.GET('/v1/payments/{id}/refunds', {
    params: { path: { id: paymentId } },
  })
  conforms('/v1/payments/{id}/refunds', 'get', 200, refunds.data)
  assert.equal(refunds.data?.items.length, 1)

  // An error is the documented envelope, typed as such.
  const missing = await client.GET('/v1/payments/{id}', { params: { path: { id: 'pay_missing' } } })
  assert.equal(missing.response.status, 404)
  conforms('/v1/payments/{id}', 'get', 404, missing.error)
  assert.equal(missing.error?.code.startsWith('SVC-'), true)
})
