// Shared by the webhooks and dashboard tests: a real HTTP receiver on 127.0.0.1:0 that
// records every request, a merchant with its dashboard login, and Standard Webhooks checks.
import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { Webhook } from 'standardwebhooks'
import type { Kurus } from '../../sdk/index.ts'
import type { TestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

export interface Received {
  headers: IncomingHttpHeaders
  /** The raw body bytes as text: what the signature covers. */
  raw: string
  json: {
    id: string
    type: string
    createdAt: string
    sequence: number
    data: Record<string, unknown>
  }
}

export interface Receiver {
  url: string
  received: Received[]
  /** The status the next request gets (n counts from 1); 200 unless set. */
  respond: (n: number) => number
  /** Requests whose data names this id (a payment's id, a refund's paymentId, a customerId). */
  about(resourceId: string): Received[]
  close(): Promise<void>
}

export async function startReceiver(t: TestContext, path = '/hooks'): Promise<Receiver> {
  const received: Received[] = []
  const receiver: Receiver = {
    url: '',
    received,
    respond: () => 200,
    about: (id) => received.filter((r) => Object.values(r.json.data).includes(id)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      received.push({ headers: req.headers, raw, json: JSON.parse(raw) as Received['json'] })
      res.statusCode = receiver.respond(received.length)
      res.end(res.statusCode < 300 ? 'ok' : 'nope')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  t.after(() => receiver.close())
  return receiver
}

/** Standard Webhooks verification with the library, as a merchant's receiver does it. */
export function verifyNow(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.raw, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  })
}

/**
 * Does one of the request's `v1,` signatures match this secret? The library's own signer,
 * at the request's timestamp: for requests sent with the test clock moved days ahead,
 * which `Webhook.verify` would reject as too new against the real time.
 */
export function signedWith(secret: string, r: Received): boolean {
  const id = String(r.headers['webhook-id'])
  const ts = new Date(Number(r.headers['webhook-timestamp']) * 1000)
  const expected = new Webhook(secret).sign(id, ts, r.raw)
  return String(r.headers['webhook-signature']).split(' ').includes(expected)
}

export interface DashboardMerchant {
  merchantId: string
  storeId: string
  publicKey: string
  secretKey: string
  apiKeyId: string
  email: string
  password: string
  client: Kurus
  /** A dashboard call with a fresh-enough token (logs in again after the clock moved). */
  dash<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }>
  token(): Promise<string>
}

export async function dashboardFetch<T>(
  h: TestApp,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(h.url + path, {
    method,
    headers: {
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    },
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
  })
  const text = await response.text()
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T }
}

export async function login(h: TestApp, email: string, password: string) {
  return dashboardFetch<{ token: string; expiresAt: string; code?: string; message?: string }>(
    h,
    'POST',
    '/v1/dashboard/login',
    { body: { email, password } },
  )
}

export async function newDashboardMerchant(h: TestApp): Promise<DashboardMerchant> {
  const created = await h.operator<{
    merchantId: string
    storeId: string
    apiKeyId: string
    publicKey: string
    secretKey: string
    dashboard: { email: string; password: string }
  }>('POST', '/operator/v1/merchants', { name: 'Webhook Merchant', kycStatus: 'approved' })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const { dashboard, ...keys } = created.body
  let session: { token: string; expiresAt: number; usedAt: number } | undefined
  const token = async () => {
    const now = h.clock.now().getTime()
    // A token ends an hour after login, or after 30 minutes without a request.
    if (!session || session.expiresAt - 60_000 <= now || now - session.usedAt >= 29 * MINUTE) {
      const res = await login(h, dashboard.email, dashboard.password)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      session = { token: res.body.token, expiresAt: Date.parse(res.body.expiresAt), usedAt: now }
    }
    session.usedAt = now
    return session.token
  }
  return {
    ...keys,
    email: dashboard.email,
    password: dashboard.password,
    client: h.clientFor(keys),
    token,
    dash: async (method, path, body) =>
      dashboardFetch(h, method, path, { token: await token(), body }),
  }
}

export interface CreatedEndpoint {
  id: string
  secret: string
  url: string
  events: string[] | null
  status: string
}

export async function addEndpoint(
  m: DashboardMerchant,
  url: string,
  events?: string[],
): Promise<CreatedEndpoint> {
  const res = await m.dash<CreatedEndpoint>('POST', `/v1/stores/${m.storeId}/webhooks`, {
    url,
    ...(events ? { events } : {}),
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

/** Runs every reconciler and drains every queue once (POST /v1/sandbox/reconcile). */
export async function reconcile(client: Kurus): Promise<void> {
  const res = await client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(res.status, 200, JSON.stringify(res.body))
}

/** An authorized (uncaptured) payment through the signed API. */
export async function authorizedPayment(
  client: Kurus,
  amount = 5000,
  sessionExtra: Record<string, unknown> = {},
  chargeExtra: Record<string, unknown> = {},
): Promise<string> {
  const { res } = await charge(
    client,
    CARDS.frictionless,
    amount,
    { capture: false, ...chargeExtra },
    sessionExtra,
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'authorized')
  return res.body.paymentId
}

export interface DeliveryJson {
  id: string
  eventId: string
  eventType: string
  endpointId: string | null
  url: string
  status: 'pending' | 'delivered' | 'failed'
  attemptCount: number
  nextAttemptAt: string | null
  lastAttemptAt: string | null
  lastStatusCode: number | null
  lastError: string | null
  deliveredAt: string | null
}

export async function deliveries(
  m: DashboardMerchant,
  query: Record<string, string> = {},
): Promise<{ items: DeliveryJson[]; nextCursor: string | null }> {
  const qs = new URLSearchParams({ limit: '100', ...query }).toString()
  const res = await m.dash<{ items: DeliveryJson[]; nextCursor: string | null }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks/deliveries?${qs}`,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR
