import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { dirname } from 'node:path'
import type { AddressInfo } from 'node:net'
import { KurusError, type Json, type Kurus, type ListQuery } from '../packages/node/src/index.ts'

type PaymentListQuery = ListQuery<'/v1/payments'>

// The merchant-facing commands of the `kurus` CLI (src/commands.ts parses them): `listen`,
// `trigger`, `payments get|list`, `events tail`, `logs tail`. Each is a client of the public API through
// @kurus/node (signed with the merchant's keys), except `listen`, which registers its
// temporary webhook endpoint through the dashboard API as the merchant's dashboard user
// (docs/decisions/0028-cli-listen.md). Nothing here reads the database.

export type Out = (line: string) => void

/** A failure the user can act on: printed as its message, without a stack. */
export class CliError extends Error {
  override name = 'CliError'
}

// ---------------------------------------------------------------------------------------------
// listen

export interface DashboardLogin {
  email: string
  password: string
  /** For a user with two-factor on: the app's current code, or one of their recovery codes. */
  code?: string | undefined
}

export interface ListenOptions {
  /** The Kuruş server, e.g. http://localhost:3000. */
  baseUrl: string
  login: DashboardLogin
  storeId: string
  /** Where each delivery is forwarded, e.g. http://localhost:4242/hooks. */
  forwardTo: string
  /** Event types to subscribe to; all when absent. */
  events?: string[] | undefined
  /** The local port deliveries arrive on (default: any free one). */
  port?: number | undefined
  json?: boolean | undefined
  out: Out
  /** Where the endpoint of an earlier run is kept (its secret is reused); none: a new one. */
  secrets?: ListenSecrets | undefined
  /** Replace the kept endpoint (and its secret) with a new one. */
  newSecret?: boolean | undefined
}

export interface ListenHandle {
  endpointId: string
  /** `whsec_…`: what the forwarded deliveries are signed with (verify with it locally). */
  secret: string
  /** The URL Kuruş delivers to (this process). */
  url: string
  /** Whether the endpoint (and secret) of an earlier run was reused. */
  reused: boolean
  /** Stops listening; a kept endpoint stays registered for the next run, another is deleted. */
  stop(): Promise<void>
}

/** The endpoint `listen` made on this machine for one server, store and event filter. */
interface KeptEndpoint {
  endpointId: string
  secret: string
  port: number
  path: string
}

export interface ListenSecrets {
  get(key: string): KeptEndpoint | undefined
  set(key: string, value: KeptEndpoint | undefined): void
}

/**
 * The endpoints `listen` keeps between runs, in a JSON file readable by its owner only
 * (it holds webhook signing secrets, as a developer's shell history or .env would).
 */
export function listenSecretStore(file: string): ListenSecrets {
  const read = (): Record<string, KeptEndpoint> => {
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as {
        endpoints?: Record<string, KeptEndpoint>
      }
      return parsed.endpoints ?? {}
    } catch {
      return {}
    }
  }
  return {
    get: (key) => read()[key],
    set: (key, value) => {
      const endpoints = Object.fromEntries(
        Object.entries(read()).filter(([k]) => k !== key),
      ) as Record<string, KeptEndpoint>
      if (value !== undefined) endpoints[key] = value
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
      writeFileSync(file, JSON.stringify({ endpoints }, null, 2) + '\n', { mode: 0o600 })
    },
  }
}

async function dashboardCall<T>(
  baseUrl: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<T> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  if (!response.ok) throw new CliError(`${method} ${path}: ${response.status} ${text}`)
  return (text ? JSON.parse(text) : null) as T
}

/**
 * Signs in as the dashboard user: the password, then, for a user with two-factor on, the
 * challenge answered with `login.code` (CONTRACT § "Dashboard sign-in everywhere").
 */
async function dashboardToken(baseUrl: string, login: DashboardLogin): Promise<string> {
  const first = await dashboardCall<{
    token?: string
    twoFactorRequired?: boolean
    challengeToken?: string
  }>(baseUrl, 'POST', '/v1/dashboard/login', undefined, {
    email: login.email,
    password: login.password,
  })
  if (!first.twoFactorRequired) return first.token ?? ''
  if (!login.code) {
    throw new CliError(
      `${login.email} signs in with two-factor: pass --code with the current code of the authenticator app (or a recovery code)`,
    )
  }
  const second = await dashboardCall<{ token: string }>(
    baseUrl,
    'POST',
    '/v1/dashboard/login/two-factor',
    undefined,
    { challengeToken: first.challengeToken, code: login.code },
  )
  return second.token
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

const FORWARDED = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']

/**
 * Registers a webhook endpoint of the store that points at this process (or, with `secrets`,
 * takes up the one an earlier run on this machine registered, same port, path and secret), and
 * forwards every delivery to `forwardTo` with its body and Standard Webhooks headers
 * unchanged (so the local server verifies it with `secret`). The local answer's status is
 * Kuruş's answer, so a local failure is retried like any failed delivery.
 */
export async function listen(options: ListenOptions): Promise<ListenHandle> {
  const { baseUrl, out } = options
  const keptKey = `${baseUrl} ${options.storeId} ${options.events?.join(',') ?? '*'}`
  const stored = options.secrets?.get(keptKey)
  const kept = options.newSecret ? undefined : stored
  const path = kept?.path ?? `/kurus-listen/${randomBytes(6).toString('hex')}`
  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req)
      const headers: Record<string, string> = {}
      for (const name of FORWARDED) {
        const value = req.headers[name]
        if (typeof value === 'string') headers[name] = value
      }
      let type = '?'
      try {
        type = String((JSON.parse(raw.toString('utf8')) as { type?: unknown }).type)
      } catch {
        // not JSON: forwarded as it is
      }
      const started = performance.now()
      let status: number
      let error: string | undefined
      try {
        const answer = await fetch(options.forwardTo, {
          method: 'POST',
          headers,
          body: new Uint8Array(raw),
        })
        status = answer.status
        await answer.arrayBuffer()
      } catch (e) {
        status = 502
        error = e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : ''
      }
      const ms = Math.round(performance.now() - started)
      const eventId = headers['webhook-id'] ?? ''
      out(
        options.json
          ? JSON.stringify({
              eventId,
              type,
              forwardedTo: options.forwardTo,
              status,
              durationMs: ms,
              ...(error === undefined ? {} : { error }),
            })
          : `${new Date().toISOString()}  --> ${type} [${eventId}]  <-- ` +
              (error === undefined ? `${status}` : `failed: ${error}`) +
              ` (${ms} ms) POST ${options.forwardTo}`,
      )
      res.writeHead(status).end()
    })()
  })
  const port = options.port ?? kept?.port ?? 0
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', resolve)
    })
  } catch (error) {
    if (kept && (error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CliError(
        `port ${port}, where this machine's endpoint ${kept.endpointId} delivers, is in use ` +
          '(another kurus listen?); --new-secret makes another endpoint on another port',
      )
    }
    throw error
  }
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  let endpoint: { id: string; secret: string }
  let reused = false
  let token: string
  try {
    token = await dashboardToken(baseUrl, options.login)
    const hooks = `/v1/stores/${options.storeId}/webhooks`
    if (stored && options.newSecret) {
      // The old endpoint goes: its secret is the one being replaced.
      await dashboardCall(baseUrl, 'DELETE', `${hooks}/${stored.endpointId}`, token).catch(
        () => undefined,
      )
    }
    const existing = kept
      ? (
          await dashboardCall<{ items: { id: string; status: string }[] }>(
            baseUrl,
            'GET',
            hooks,
            token,
          )
        ).items.find((e) => e.id === kept.endpointId)
      : undefined
    if (kept && existing) {
      // Disabled after days of failed deliveries while no listen ran: back on.
      if (existing.status !== 'enabled') {
        await dashboardCall(baseUrl, 'POST', `${hooks}/${kept.endpointId}/enable`, token, {})
      }
      endpoint = { id: kept.endpointId, secret: kept.secret }
      reused = true
    } else {
      endpoint = await dashboardCall(baseUrl, 'POST', hooks, token, {
        url,
        ...(options.events === undefined ? {} : { events: options.events }),
      })
      options.secrets?.set(keptKey, {
        endpointId: endpoint.id,
        secret: endpoint.secret,
        port: (server.address() as AddressInfo).port,
        path,
      })
    }
  } catch (error) {
    await close()
    throw error
  }
  const keptNote = options.secrets
    ? `${reused ? 'the same as last time' : 'new'}; kept for the next listen on this machine, --new-secret replaces it`
    : 'removed when listen stops'
  out(
    options.json
      ? JSON.stringify({
          ready: true,
          endpointId: endpoint.id,
          secret: endpoint.secret,
          url,
          reused,
        })
      : `Ready. Forwarding deliveries to ${options.forwardTo}\n` +
          `Webhook signing secret: ${endpoint.secret}  (endpoint ${endpoint.id}, ${keptNote})`,
  )
  let stopped = false
  return {
    endpointId: endpoint.id,
    secret: endpoint.secret,
    url,
    reused,
    stop: async () => {
      if (stopped) return
      stopped = true
      // Kept for the next run: deliveries made meanwhile fail and are retried, so they arrive
      // when listen runs again (docs/decisions/0038).
      // Signing out ends the token now rather than after 30 idle minutes (a token that has
      // already ended answers 401, which changes nothing here).
      const signOut = (t: string) =>
        dashboardCall(baseUrl, 'POST', '/v1/dashboard/logout', t).catch(() => undefined)
      if (options.secrets) {
        await signOut(token)
        return close()
      }
      // A fresh token: the first one lasts an hour, and listen may have run longer. A
      // two-factor code is spent at the first sign-in, so that user keeps the first token.
      const current = options.login.code ? token : await dashboardToken(baseUrl, options.login)
      await dashboardCall(
        baseUrl,
        'DELETE',
        `/v1/stores/${options.storeId}/webhooks/${endpoint.id}`,
        current,
      )
      await signOut(current)
      if (current !== token) await signOut(token)
      await close()
    },
  }
}

// ---------------------------------------------------------------------------------------------
// trigger

const CARDS = {
  frictionless: '4155650100416111',
  declined: '4000000000000002',
  asyncRefundFails: '4000000000000697',
} as const

/** What `kurus trigger` can cause, and the event type each one records. */
export const TRIGGERS: Record<string, { events: string[]; about: string }> = {
  'payment.captured': { events: ['payment.captured'], about: 'a card charge, captured' },
  'payment.authorized': { events: ['payment.authorized'], about: 'a charge with capture: false' },
  'payment.voided': {
    events: ['payment.authorized', 'payment.voided'],
    about: 'an authorization, voided',
  },
  'payment.failed': { events: ['payment.failed'], about: 'a charge of a declined card' },
  'payment.refunded': {
    events: ['payment.captured', 'refund.created', 'refund.completed', 'payment.refunded'],
    about: 'a captured charge, refunded in full',
  },
  'refund.failed': {
    events: ['payment.captured', 'refund.created', 'refund.failed'],
    about: 'a refund the bank refuses (card …0697)',
  },
  'customer.created': { events: ['customer.created'], about: 'a customer' },
  'chargeback.received': {
    events: ['payment.captured', 'chargeback.received'],
    about: 'a captured charge the bank disputes',
  },
}

/** Names people reach for, mapped to Kuruş's event types. */
export const TRIGGER_ALIASES: Record<string, string> = {
  'payment.succeeded': 'payment.captured',
  'refund.created': 'payment.refunded',
  'refund.completed': 'payment.refunded',
  'refund.succeeded': 'payment.refunded',
}

export interface TriggerResult {
  trigger: string
  events: string[]
  paymentId?: string
  refundId?: string
  customerId?: string
  chargebackId?: string
}

async function charge(kurus: Kurus, cardNumber: string, capture = true) {
  const transactionId = `cli-${randomUUID()}`
  const amount = 10_000
  await kurus.sessions.create({
    transactionId,
    amount,
    currency: 'TRY',
    returnUrl: 'https://example.com/kurus-cli',
    description: 'kurus trigger',
  })
  const card = await kurus.cards.tokenize({
    cardNumber,
    expMonth: 12,
    expYear: new Date().getUTCFullYear() + 4,
    cvc: '123',
    holderName: 'Kuruş CLI',
  })
  return kurus.payments.create({
    transactionId,
    amount,
    currency: 'TRY',
    cardToken: card.cardToken,
    capture,
  })
}

/**
 * Makes real sandbox objects whose changes record `event` (and what leads to it), then runs
 * the sandbox's due jobs so their webhooks go out now.
 */
export async function trigger(kurus: Kurus, event: string): Promise<TriggerResult> {
  const name = TRIGGER_ALIASES[event] ?? event
  const spec = TRIGGERS[name]
  if (!spec) {
    throw new CliError(
      `cannot trigger ${event}; one of: ${[...Object.keys(TRIGGERS), ...Object.keys(TRIGGER_ALIASES)].join(', ')}`,
    )
  }
  const result: TriggerResult = { trigger: name, events: spec.events }
  switch (name) {
    case 'payment.captured':
    case 'payment.authorized':
      result.paymentId = (
        await charge(kurus, CARDS.frictionless, name === 'payment.captured')
      ).paymentId
      break
    case 'payment.voided': {
      const { paymentId } = await charge(kurus, CARDS.frictionless, false)
      await kurus.payments.void(paymentId, {})
      result.paymentId = paymentId
      break
    }
    case 'payment.failed':
      try {
        await charge(kurus, CARDS.declined)
        throw new Error('the declined test card was approved')
      } catch (error) {
        if (!(error instanceof KurusError) || error.paymentId === undefined) throw error
        result.paymentId = error.paymentId
      }
      break
    case 'payment.refunded':
    case 'refund.failed': {
      const card = name === 'refund.failed' ? CARDS.asyncRefundFails : CARDS.frictionless
      const { paymentId } = await charge(kurus, card)
      const refund = await kurus.payments.refund(paymentId, { reason: 'kurus trigger' })
      result.paymentId = paymentId
      result.refundId = refund.lastRefund.refundId
      break
    }
    case 'customer.created':
      result.customerId = (
        await kurus.customers.create({ externalId: `cli-${randomUUID()}`, name: 'Kuruş CLI' })
      ).id
      break
    case 'chargeback.received': {
      const { paymentId } = await charge(kurus, CARDS.frictionless)
      result.paymentId = paymentId
      result.chargebackId = (await kurus.sandbox.chargeback(paymentId, {})).id
      break
    }
  }
  // Async refund outcomes, and every webhook delivery, now rather than at the next tick.
  await kurus.sandbox.reconcile()
  return result
}

// ---------------------------------------------------------------------------------------------
// payments get | list, events tail

/** "1234.56 TRY" from integer kuruş, with integer arithmetic only (money is never a float). */
function money(kurus: number): string {
  const sign = kurus < 0 ? '-' : ''
  const abs = Math.abs(kurus)
  const cents = abs % 100
  return `${sign}${(abs - cents) / 100}.${String(cents).padStart(2, '0')} TRY`
}

export async function paymentsGet(kurus: Kurus, id: string, json: boolean, out: Out) {
  const payment = await kurus.payments.get(id)
  if (json) return out(JSON.stringify(payment, null, 2))
  for (const [k, v] of Object.entries(payment)) out(`${k}: ${JSON.stringify(v)}`)
}

export async function paymentsList(
  kurus: Kurus,
  query: { status?: string | undefined; limit: number },
  json: boolean,
  out: Out,
) {
  // The server checks the status (400 SVC-VAL-3001 names the allowed ones).
  const status = query.status as PaymentListQuery['status']
  const items = await kurus.payments
    .list({ ...(status === undefined ? {} : { status }), limit: Math.min(query.limit, 100) })
    .toArray(query.limit)
  if (json) return out(JSON.stringify(items, null, 2))
  for (const p of items) {
    out(
      `${p.id}  ${p.status.padEnd(18)} ${money(p.amount).padStart(14)}  ${p.createdAt}  ${p.transactionId}`,
    )
  }
}

/**
 * Prints the merchant's events as they are recorded (the feed webhooks are made from), polling
 * `GET /v1/events` every `intervalMs`; stops when `signal` aborts.
 */
export async function eventsTail(
  kurus: Kurus,
  opts: {
    json: boolean
    intervalMs: number
    signal: AbortSignal
    sleep?: (ms: number) => Promise<void>
  },
  out: Out,
): Promise<void> {
  const seen = new Set<string>()
  const sleep =
    opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  // What exists already is the starting point, not news.
  for (const e of (await kurus.events.list({ limit: 100 })).items) seen.add(e.id)
  while (!opts.signal.aborted) {
    await sleep(opts.intervalMs)
    const fresh = (await kurus.events.list({ limit: 100 })).items.filter((e) => !seen.has(e.id))
    for (const e of fresh.reverse()) {
      seen.add(e.id)
      out(
        opts.json
          ? JSON.stringify(e)
          : `${e.createdAt}  ${e.type.padEnd(28)} ${e.resourceId}  ${e.id}`,
      )
    }
  }
}

// ---------------------------------------------------------------------------------------------
// logs tail

/** How far back each poll of `logs tail` looks again: another API process writes its lines
 * up to about a second late, with the time the request finished (docs/decisions/0032). */
const LOGS_OVERLAP_MS = 10_000
/** Pages one poll reads at most (100 lines each). */
const LOGS_PAGES_MAX = 10

type RequestLogLine = Json<'/v1/logs', 'get'>['items'][number]

function logLine(l: RequestLogLine): string {
  return (
    `${l.createdAt}  ${l.status} ${l.method.padEnd(6)} ${l.path}` +
    `${l.errorCode === null ? '' : `  ${l.errorCode}`}  ${l.durationMs} ms  ${l.requestId}` +
    // A refused request says why (a bad signature, a skewed clock…) on the next line.
    (l.reason === null ? '' : `\n    ${l.reason}`)
  )
}

/**
 * Prints the merchant's API requests as they are logged (GET /v1/logs), oldest first, polling
 * every `intervalMs` until `signal` aborts. Each poll asks for the lines since the newest one
 * seen minus LOGS_OVERLAP_MS and prints those it has not printed, so a line written late by
 * another process still shows.
 */
export async function logsTail(
  kurus: Kurus,
  opts: {
    status?: string | undefined
    json: boolean
    intervalMs: number
    signal: AbortSignal
    sleep?: (ms: number) => Promise<void>
    /** Called once the starting point is read: lines logged from now on are printed. */
    onReady?: () => void
  },
  out: Out,
): Promise<void> {
  const sleep =
    opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  // The server checks the filter (400 SVC-VAL-3001 for anything but `4xx` or `404`).
  const filter = opts.status === undefined ? {} : { status: opts.status }
  const seen = new Map<string, number>()
  let newest: number | undefined
  const poll = async (): Promise<RequestLogLine[]> => {
    const since = newest === undefined ? undefined : new Date(newest - LOGS_OVERLAP_MS)
    const query = { ...filter, limit: 100, ...(since ? { since: since.toISOString() } : {}) }
    const list = kurus.logs.list(query)
    // Without a starting point only the newest page matters (it is the starting point).
    const lines =
      since === undefined ? (await list).items : await list.toArray(LOGS_PAGES_MAX * 100)
    const fresh = lines.filter((l) => !seen.has(l.id))
    for (const l of fresh) {
      const at = Date.parse(l.createdAt)
      seen.set(l.id, at)
      newest = newest === undefined ? at : Math.max(newest, at)
    }
    // Only lines inside the next poll's window can come back: forget the rest.
    if (newest !== undefined) {
      for (const [id, at] of seen) if (at < newest - 2 * LOGS_OVERLAP_MS) seen.delete(id)
    }
    return fresh.reverse()
  }
  // What was logged before the tail started is the starting point, not news.
  await poll()
  opts.onReady?.()
  while (!opts.signal.aborted) {
    await sleep(opts.intervalMs)
    if (opts.signal.aborted) break
    for (const l of await poll()) out(opts.json ? JSON.stringify(l) : logLine(l))
  }
}
