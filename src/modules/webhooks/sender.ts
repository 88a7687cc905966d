import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import type { KurusEnv } from '../../config.ts'
import {
  checkAddress,
  guardedLookup,
  hostOf,
  parseReceiverUrl,
  systemResolver,
  type Resolver,
} from './ssrf.ts'

// One HTTP POST to a receiver, outside any database transaction. node:http rather than
// fetch, because its `lookup` option lets the SSRF guard choose the address the socket
// connects to (the Host header and TLS SNI keep the URL's name). Redirects are not followed
// (a 3xx is a failed attempt): a redirect could lead anywhere, including where the guard
// would not let us go, and a receiver has no reason to move: its URL is registered.

export const DELIVERY_TIMEOUT_MS = 10_000
// What we keep of a receiver's answer for the delivery log; the rest is drained unread.
const RESPONSE_EXCERPT_BYTES = 512

export interface SendOutcome {
  /** 2xx: delivered. */
  ok: boolean
  statusCode: number | null
  /** Why it failed, for the delivery log: `HTTP 500: …`, `ECONNREFUSED`, `timeout`… */
  error: string | null
}

function readExcerpt(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let kept = Buffer.alloc(0)
    response.on('data', (chunk: Buffer) => {
      if (kept.length < RESPONSE_EXCERPT_BYTES) {
        kept = Buffer.concat([kept, chunk]).subarray(0, RESPONSE_EXCERPT_BYTES)
      }
    })
    response.on('end', () => resolve(kept.toString('utf8')))
    response.on('error', () => resolve(kept.toString('utf8')))
  })
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timeout'
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EKURUSSSRF') return error.message
    return code ?? error.message
  }
  return String(error)
}

export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  env: KurusEnv,
  resolver: Resolver = systemResolver,
): Promise<SendOutcome> {
  const parsed = parseReceiverUrl(rawUrl)
  if (!parsed.ok) return { ok: false, statusCode: null, error: `url ${parsed.reason}` }
  const { url } = parsed
  // Node connects to an IP literal without calling `lookup`: check it here.
  const host = hostOf(url)
  if (isIP(host) !== 0) {
    const verdict = checkAddress(host, env)
    if (!verdict.ok) return { ok: false, statusCode: null, error: `destination ${verdict.reason}` }
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  const payload = Buffer.from(body, 'utf8')
  try {
    return await new Promise<SendOutcome>((resolve, reject) => {
      const req = send(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(payload.length) },
          lookup: guardedLookup(env, resolver),
          signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
          agent: false,
        },
        (response) => {
          const status = response.statusCode ?? 0
          readExcerpt(response).then((excerpt) => {
            const ok = status >= 200 && status < 300
            resolve({
              ok,
              statusCode: status,
              error: ok ? null : `HTTP ${status}${excerpt ? `: ${excerpt.slice(0, 200)}` : ''}`,
            })
          }, reject)
        },
      )
      req.on('error', reject)
      req.end(payload)
    })
  } catch (error) {
    return { ok: false, statusCode: null, error: describe(error) }
  }
}
