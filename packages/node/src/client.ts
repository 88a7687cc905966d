import { randomUUID } from 'node:crypto'
import { errorBodyOf, KurusConnectionError, KurusError, type ErrorBody } from './errors.ts'
import { signedHeaders, timestampFor } from './signing.ts'

// The transport under every call: it signs each attempt afresh, sends an Idempotency-Key on
// every POST (one key for all attempts of a call, so a retried charge is charged once), and
// retries 429, 503, 409 SVC-GW-2002 (same key still in flight) and network failures with
// exponential backoff, waiting what Retry-After says when the server says it. Time (the
// X-Timestamp clock and the waits) is injectable, so tests run retries on a fake clock.

export interface KurusOptions {
  /** The store's public key, `pk_demo_…` or `pk_live_…`. */
  publicKey: string
  /** Its secret key, `sk_demo_…` or `sk_live_…`: signs requests, never sent. */
  secretKey: string
  /** Default http://localhost:3000 (the sandbox `npm start` runs). */
  baseUrl?: string
  /** Retries after the first attempt (default 2); 0 turns retrying off. */
  maxRetries?: number
  /** A Retry-After longer than this (default 60 s) is not waited for: the error is thrown. */
  maxRetryAfterMs?: number
  /** Defaults to the global fetch. */
  fetch?: typeof fetch
  /** Source of X-Timestamp and of "now" for a Retry-After date; defaults to the system clock. */
  now?: () => Date
  /** How to wait between attempts; defaults to setTimeout. */
  sleep?: (ms: number) => Promise<void>
  /** Jitter source in [0, 1); defaults to Math.random. */
  random?: () => number
}

export interface SendOptions {
  /** Path parameters, substituted into `{name}` placeholders of the path (URL-encoded). */
  path?: Record<string, string> | undefined
  query?: Record<string, string | number | boolean | undefined> | undefined
  /** A JSON value, serialised once: the bytes signed are the bytes sent. */
  body?: unknown
  /** Raw body bytes, sent and signed as given (file uploads). */
  rawBody?: string | Uint8Array | undefined
  /** Content-Type of `rawBody`; default application/json. */
  contentType?: string | undefined
  /** Default on POST: a fresh UUID v4 per call, the same for each retry of it. */
  idempotencyKey?: string | undefined
  requestId?: string | undefined
  headers?: Record<string, string> | undefined
}

export interface KurusResponse<T = unknown> {
  status: number
  headers: Headers
  body: T
  requestId: string | null
}

const RETRY_STATUSES = new Set([429, 503])
const BACKOFF_BASE_MS = 500
const BACKOFF_MAX_MS = 8_000

export class Transport {
  readonly options: KurusOptions
  readonly baseUrl: string
  constructor(options: KurusOptions) {
    this.options = options
    this.baseUrl = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '')
  }

  /** Sends one signed call (with its retries); never throws for an HTTP status. */
  async send<T = unknown>(
    method: string,
    template: string,
    opts: SendOptions = {},
  ): Promise<KurusResponse<T>> {
    const upper = method.toUpperCase()
    const path = fillPath(template, opts.path)
    const body: string | Uint8Array =
      opts.rawBody ?? (opts.body === undefined ? '' : JSON.stringify(opts.body))
    const idempotencyKey = opts.idempotencyKey ?? (upper === 'POST' ? randomUUID() : undefined)
    const query = new URLSearchParams()
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) query.set(k, String(v))
    const url = `${this.baseUrl}${path}${query.size > 0 ? `?${query.toString()}` : ''}`
    const maxRetries = this.options.maxRetries ?? 2
    for (let attempt = 0; ; attempt++) {
      // A fresh timestamp per attempt: the server accepts each signature once.
      const headers: Record<string, string> = {
        ...signedHeaders(this.options, upper, path, body, timestampFor(this.now())),
        accept: 'application/json',
      }
      if (body.length > 0) headers['content-type'] = opts.contentType ?? 'application/json'
      if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey
      if (opts.requestId !== undefined) headers['x-request-id'] = opts.requestId
      Object.assign(headers, opts.headers)
      let response: Response
      try {
        response = await (this.options.fetch ?? fetch)(url, {
          method: upper,
          headers,
          ...(body.length > 0
            ? { body: typeof body === 'string' ? body : new Uint8Array(body) }
            : {}),
        })
      } catch (error) {
        if (attempt < maxRetries) {
          await this.sleep(this.backoff(attempt))
          continue
        }
        throw new KurusConnectionError(`${upper} ${path}: ${String(error)}`, { cause: error })
      }
      const parsed = await parseBody(response)
      const wait = this.retryWait(response, parsed, attempt, maxRetries)
      if (wait === undefined) {
        return {
          status: response.status,
          headers: response.headers,
          body: parsed as T,
          requestId: response.headers.get('x-request-id'),
        }
      }
      await this.sleep(wait)
    }
  }

  /** Sends a call and returns its body, or throws KurusError for a 4xx/5xx answer. */
  async call<T>(method: string, template: string, opts: SendOptions = {}): Promise<T> {
    const response = await this.send<T | ErrorBody>(method, template, opts)
    if (response.status >= 400) {
      throw new KurusError(
        response.status,
        errorBodyOf(response.status, response.body, response.requestId),
      )
    }
    return response.body as T
  }

  private now(): Date {
    return this.options.now?.() ?? new Date()
  }

  private sleep(ms: number): Promise<void> {
    return this.options.sleep
      ? this.options.sleep(ms)
      : new Promise((resolve) => setTimeout(resolve, ms))
  }

  /** Exponential backoff with jitter: 250–500 ms, 500–1000 ms, … up to 4–8 s. */
  backoff(attempt: number): number {
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt)
    const random = this.options.random ?? Math.random
    return Math.round(ceiling * (0.5 + random() / 2))
  }

  /** How long to wait before the next attempt, or undefined when this answer is final. */
  private retryWait(
    response: Response,
    body: unknown,
    attempt: number,
    maxRetries: number,
  ): number | undefined {
    if (attempt >= maxRetries) return undefined
    const inFlight = response.status === 409 && errorBodyOf(409, body, null).code === 'SVC-GW-2002'
    if (!RETRY_STATUSES.has(response.status) && !inFlight) return undefined
    const after = retryAfterMs(response.headers.get('retry-after'), this.now())
    if (after === undefined) return this.backoff(attempt)
    return after <= (this.options.maxRetryAfterMs ?? 60_000) ? after : undefined
  }
}

/** Retry-After in ms: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined if absent. */
export function retryAfterMs(value: string | null, now: Date): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime())
}

function fillPath(template: string, params: Record<string, string> | undefined): string {
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name]
    if (value === undefined) throw new TypeError(`${template}: missing path parameter ${name}`)
    return encodeURIComponent(value)
  })
  return path.length > 1 ? path.replace(/\/+$/, '') : path
}

async function parseBody(response: Response): Promise<unknown> {
  const type = response.headers.get('content-type') ?? ''
  if (response.status === 204) return null
  if (type.includes('json')) return response.json()
  if (type.startsWith('text/')) return response.text()
  return new Uint8Array(await response.arrayBuffer())
}

export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

/**
 * A list call: `await` it for the first page, or `for await` over it for every item of every
 * page (the next page is fetched when the current one is used up).
 */
export class List<T> implements AsyncIterable<T>, PromiseLike<Page<T>> {
  private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>
  constructor(fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {
    this.fetchPage = fetchPage
  }

  /** The first page. */
  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.fetchPage(undefined).then(onFulfilled, onRejected)
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let cursor: string | undefined
    do {
      const page = await this.fetchPage(cursor)
      yield* page.items
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
  }

  /** Every item, page after page, at most `max` of them (default 10,000). */
  async toArray(max = 10_000): Promise<T[]> {
    const out: T[] = []
    for await (const item of this) {
      if (out.length >= max) break
      out.push(item)
    }
    return out
  }
}
