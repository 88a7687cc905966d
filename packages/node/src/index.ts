import { List, Transport, type KurusOptions, type Page, type SendOptions } from './client.ts'
import type { paths } from './openapi.ts'
import type {
  Body,
  Json,
  ListQuery,
  Method,
  Operation,
  PathParams,
  PathsWith,
  QueryParams,
  RequestBody,
  ResponseBody,
} from './types.ts'
import { webhooks } from './webhooks.ts'

// @kurus/node: a thin, typed surface over the Kuruş API. Every route's parameters and answers
// are typed from the OpenAPI document (src/openapi.ts, `npm run sdk:types`); the resources
// below name the common calls, and `kurus.request(method, path, …)` reaches any other route
// with the same types. See README.md.

export { KurusConnectionError, KurusError, type ErrorBody } from './errors.ts'
export {
  List,
  retryAfterMs,
  type KurusOptions,
  type KurusResponse,
  type Page,
  type SendOptions,
} from './client.ts'
export {
  canonicalString,
  sign,
  signedHeaders,
  timestampFor,
  type SignedHeaders,
} from './signing.ts'
export type { Body, Json, ListQuery, Method, PathsWith, Query } from './types.ts'
export type { paths } from './openapi.ts'
export { KurusWebhookError, webhooks, type WebhookEvent, type WebhookHeaders } from './webhooks.ts'

/** Options of one typed call: path and query parameters, body, and transport extras. */
export interface RequestInit<O> {
  params?: { path?: PathParams<O>; query?: QueryParams<O> }
  body?: RequestBody<O>
  /** Default on POST: a fresh UUID v4, the same for every retry of this call. */
  idempotencyKey?: string
  requestId?: string
  headers?: Record<string, string>
}

/** Per-call options of the resource methods. */
export interface CallOptions {
  idempotencyKey?: string
  requestId?: string
}

type Item<P extends keyof paths> = Json<P, 'get'> extends { items: (infer T)[] } ? T : never

export class Kurus {
  readonly transport: Transport
  /** Verifies webhook deliveries (`kurus.webhooks.verify(rawBody, headers, secret)`). */
  readonly webhooks = webhooks

  constructor(options: KurusOptions) {
    this.transport = new Transport(options)
  }

  /** Any route, typed from the OpenAPI document; throws KurusError for a 4xx/5xx answer. */
  request<M extends Method, P extends PathsWith<M>>(
    method: M,
    path: P,
    init: RequestInit<Operation<P, M>> = {},
  ): Promise<ResponseBody<Operation<P, M>>> {
    return this.transport.call(method, path, sendOptions(init))
  }

  private list<P extends PathsWith<'get'>>(
    path: P,
    query: object,
    pathParams?: Record<string, string>,
  ): List<Item<P>> {
    return new List((cursor) =>
      this.transport.call<Page<Item<P>>>('get', path, {
        path: pathParams,
        query: { limit: 20, ...query, ...(cursor === undefined ? {} : { cursor }) },
      }),
    )
  }

  private post<P extends PathsWith<'post'>>(
    path: P,
    body: Body<P, 'post'> | Record<string, never>,
    pathParams?: Record<string, string>,
    opts: CallOptions = {},
  ): Promise<Json<P, 'post'>> {
    return this.transport.call('post', path, { path: pathParams, body, ...opts })
  }

  private get<P extends PathsWith<'get'>>(
    path: P,
    pathParams?: Record<string, string>,
  ): Promise<Json<P, 'get'>> {
    return this.transport.call('get', path, { path: pathParams })
  }

  whoami() {
    return this.get('/v1/auth/whoami')
  }

  /** Card tokens: the vault keeps the card, you keep `cardToken`. */
  readonly cards = {
    tokenize: (body: Body<'/v1/cards/tokens', 'post'>, opts?: CallOptions) =>
      this.post('/v1/cards/tokens', body, undefined, opts),
  }

  /** Checkout sessions: the order a payment is made against (hosted page or card charge). */
  readonly sessions = {
    create: (body: Body<'/v1/payments/sessions', 'post'>, opts?: CallOptions) =>
      this.post('/v1/payments/sessions', body, undefined, opts),
  }

  readonly payments = {
    /** Charges a card token against a session's transactionId (201, 202 pending or pending_3ds). */
    create: (body: Body<'/v1/payments/card', 'post'>, opts?: CallOptions) =>
      this.post('/v1/payments/card', body, undefined, opts),
    get: (id: string) => this.get('/v1/payments/{id}', { id }),
    /** Payments newest first; `for await` walks every page. */
    list: (query: ListQuery<'/v1/payments'> = {}) => this.list('/v1/payments', query),
    update: (id: string, body: Body<'/v1/payments/{id}', 'patch'>) =>
      this.transport.call<Json<'/v1/payments/{id}', 'patch'>>('patch', '/v1/payments/{id}', {
        path: { id },
        body,
      }),
    /** Captures `amount` (default: the uncaptured remainder); `final: false` keeps the rest open. */
    capture: (
      id: string,
      body: Body<'/v1/payments/{id}/capture', 'post'> = {},
      opts?: CallOptions,
    ) => this.post('/v1/payments/{id}/capture', body, { id }, opts),
    void: (id: string, body: Body<'/v1/payments/{id}/void', 'post'> = {}, opts?: CallOptions) =>
      this.post('/v1/payments/{id}/void', body, { id }, opts),
    refund: (id: string, body: Body<'/v1/payments/{id}/refund', 'post'>, opts?: CallOptions) =>
      this.post('/v1/payments/{id}/refund', body, { id }, opts),
    /** Completes a 3-D Secure challenge with the ACS's answer `{correlationId, pares}`. */
    completeThreeDS: (
      id: string,
      body: Body<'/v1/payments/{id}/3ds-callback', 'post'>,
      opts?: CallOptions,
    ) => this.post('/v1/payments/{id}/3ds-callback', body, { id }, opts),
    chargebacks: (id: string) => this.get('/v1/payments/{id}/chargebacks', { id }),
  }

  readonly refunds = {
    create: (
      paymentId: string,
      body: Body<'/v1/payments/{id}/refund', 'post'>,
      opts?: CallOptions,
    ) => this.post('/v1/payments/{id}/refund', body, { id: paymentId }, opts),
    /** A payment's refunds. */
    list: (paymentId: string) => this.get('/v1/payments/{id}/refunds', { id: paymentId }),
  }

  readonly customers = {
    create: (body: Body<'/v1/customers', 'post'>, opts?: CallOptions) =>
      this.post('/v1/customers', body, undefined, opts),
    get: (id: string) => this.get('/v1/customers/{id}', { id }),
    update: (id: string, body: Body<'/v1/customers/{id}', 'put'>) =>
      this.transport.call<Json<'/v1/customers/{id}', 'put'>>('put', '/v1/customers/{id}', {
        path: { id },
        body,
      }),
    del: (id: string) =>
      this.transport.call<Json<'/v1/customers/{id}', 'delete'>>('delete', '/v1/customers/{id}', {
        path: { id },
      }),
    list: (query: ListQuery<'/v1/customers'> = {}) => this.list('/v1/customers', query),
    attachCard: (id: string, body: Body<'/v1/customers/{id}/cards', 'post'>, opts?: CallOptions) =>
      this.post('/v1/customers/{id}/cards', body, { id }, opts),
    cards: (id: string) => this.get('/v1/customers/{id}/cards', { id }),
  }

  readonly subscriptions = {
    create: (body: Body<'/v1/subscriptions', 'post'>, opts?: CallOptions) =>
      this.post('/v1/subscriptions', body, undefined, opts),
    get: (id: string) => this.get('/v1/subscriptions/{id}', { id }),
    list: (query: ListQuery<'/v1/subscriptions'> = {}) => this.list('/v1/subscriptions', query),
    cancel: (id: string, body: Body<'/v1/subscriptions/{id}/cancel', 'post'>) =>
      this.post('/v1/subscriptions/{id}/cancel', body, { id }),
    pause: (id: string) => this.post('/v1/subscriptions/{id}/pause', {}, { id }),
    resume: (id: string) => this.post('/v1/subscriptions/{id}/resume', {}, { id }),
    chargeNow: (id: string, opts?: CallOptions) =>
      this.post('/v1/subscriptions/{id}/charge-now', {}, { id }, opts),
    retry: (id: string) => this.post('/v1/subscriptions/{id}/retry', {}, { id }),
    charges: (id: string, query: ListQuery<'/v1/subscriptions/{id}/charges'> = {}) =>
      this.list('/v1/subscriptions/{id}/charges', query, { id }),
  }

  readonly invoices = {
    create: (body: Body<'/v1/invoices', 'post'>, opts?: CallOptions) =>
      this.post('/v1/invoices', body, undefined, opts),
    get: (id: string) => this.get('/v1/invoices/{id}', { id }),
    list: (query: ListQuery<'/v1/invoices'> = {}) => this.list('/v1/invoices', query),
    send: (id: string) => this.post('/v1/invoices/{id}/send', {}, { id }),
    activate: (id: string) => this.post('/v1/invoices/{id}/activate', {}, { id }),
    cancel: (id: string) => this.post('/v1/invoices/{id}/cancel', {}, { id }),
  }

  readonly payouts = {
    create: (body: Body<'/v1/payouts', 'post'>, opts?: CallOptions) =>
      this.post('/v1/payouts', body, undefined, opts),
    get: (id: string) => this.get('/v1/payouts/{id}', { id }),
    list: (query: ListQuery<'/v1/payouts'> = {}) => this.list('/v1/payouts', query),
  }

  /** The events feed (what webhooks deliver), newest first. */
  readonly events = {
    get: (id: string) => this.get('/v1/events/{id}', { id }),
    list: (query: ListQuery<'/v1/events'> = {}) => this.list('/v1/events', query),
  }

  /**
   * The merchant's API request log, newest first: method, path, status, SVC error code,
   * duration, key and Idempotency-Key of each signed request (no bodies), kept 7 days.
   */
  readonly logs = {
    list: (query: ListQuery<'/v1/logs'> = {}) => this.list('/v1/logs', query),
  }

  readonly balances = {
    get: () => this.get('/v1/balances'),
  }

  /** Sandbox helpers (`demo` only): play the bank's and the buyer's part. */
  readonly sandbox = {
    /** Answers a payment's 3-D Secure challenge as the buyer would (OTP `123456` passes). */
    threeDSChallenge: (paymentId: string, otp: string) =>
      this.post('/v1/sandbox/payments/{id}/3ds-challenge', { otp }, { id: paymentId }),
    /** Runs every due background job once (async refunds, timeouts, webhook deliveries). */
    reconcile: () => this.post('/v1/sandbox/reconcile', {}),
    chargeback: (
      paymentId: string,
      body: Body<'/v1/sandbox/payments/{id}/chargebacks', 'post'> = {},
    ) => this.post('/v1/sandbox/payments/{id}/chargebacks', body, { id: paymentId }),
    advanceSubscription: (id: string) =>
      this.post('/v1/sandbox/subscriptions/{id}/advance', {}, { id }),
  }

  /**
   * Sandbox test clocks (`demo` only): subscriptions created with a clock's `testClockId` live
   * at its time; `advance` runs their renewals and dunning retries as if that time had passed.
   */
  readonly testClocks = {
    create: (body: Body<'/v1/sandbox/test-clocks', 'post'>) =>
      this.post('/v1/sandbox/test-clocks', body),
    get: (id: string) => this.get('/v1/sandbox/test-clocks/{id}', { id }),
    /** Every clock of the merchant (at most 100), newest first: one page. */
    list: () => this.get('/v1/sandbox/test-clocks'),
    advance: (id: string, body: Body<'/v1/sandbox/test-clocks/{id}/advance', 'post'>) =>
      this.post('/v1/sandbox/test-clocks/{id}/advance', body, { id }),
    del: (id: string) =>
      this.transport.call<Json<'/v1/sandbox/test-clocks/{id}', 'delete'>>(
        'delete',
        '/v1/sandbox/test-clocks/{id}',
        { path: { id } },
      ),
  }
}

function sendOptions<O>(init: RequestInit<O>): SendOptions {
  return {
    path: init.params?.path as Record<string, string> | undefined,
    query: init.params?.query as SendOptions['query'],
    body: init.body,
    idempotencyKey: init.idempotencyKey,
    requestId: init.requestId,
    headers: init.headers,
  }
}
