// Shared by the security tests: raw HTTP (any header, any bytes, any source address), actors
// (a merchant with its keys and dashboard login, a submerchant), the error-envelope check,
// a recorder of every response for the card-data scans, and the scanners themselves.
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { sql } from 'kysely'
import { Kurus, signedHeaders, timestampFor } from '../../sdk/index.ts'
import type { Db } from '../../src/database.ts'
import { luhnValid } from '../../src/modules/vault/index.ts'
import type { TestApp } from '../helpers/app.ts'

// ---------------------------------------------------------------- recorder

/**
 * Every response body the security tests saw in this process, for the scans. The runner puts
 * several files in one process: a scan of one test's answers starts from its own index.
 */
export const seen: { what: string; status: number; text: string }[] = []

function record(what: string, status: number, text: string): void {
  seen.push({ what, status, text })
}

// ---------------------------------------------------------------- raw HTTP

export interface RawResponse {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** Parsed when the response is JSON. */
  json: unknown
}

export interface RawRequest {
  method: string
  /** Sent verbatim (already percent-encoded), query string included. */
  path: string
  /** A string[] value sends the header once per element (duplicate headers). */
  headers?: Record<string, string | string[]>
  body?: string | Buffer
  /** Source address on the loopback (127.0.0.2 …) to act as another client IP. */
  localAddress?: string
}

export function rawRequest(h: Pick<TestApp, 'url'>, req: RawRequest): Promise<RawResponse> {
  const url = new URL(h.url)
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        ...(req.localAddress ? { localAddress: req.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          const type = res.headers['content-type'] ?? ''
          let json: unknown = undefined
          if (type.includes('json') && text) json = JSON.parse(text) as unknown
          const status = res.statusCode ?? 0
          record(`${req.method} ${req.path}`, status, text)
          resolve({ status, headers: res.headers, text, json })
        })
      },
    )
    r.on('error', reject)
    for (const [name, value] of Object.entries(req.headers ?? {})) r.setHeader(name, value)
    if (req.body !== undefined) r.setHeader('content-length', Buffer.byteLength(req.body))
    r.end(req.body)
  })
}

export interface Keys {
  publicKey: string
  secretKey: string
}

/** A correctly signed request (at the app's clock) whose parts can then be overridden. */
export function signed(
  h: Pick<TestApp, 'url' | 'clock'>,
  keys: Keys,
  req: RawRequest & { timestamp?: string; contentType?: string | null },
): Promise<RawResponse> {
  const body = req.body === undefined ? '' : req.body.toString()
  const pathOnly = req.path.split('?')[0] ?? ''
  const headers: Record<string, string | string[]> = {
    ...signedHeaders(
      keys,
      req.method,
      pathOnly,
      body,
      // Unique per request (as the SDK signs): a state-changing signature is accepted once.
      req.timestamp ?? timestampFor(h.clock.now()),
    ),
  }
  if (req.body !== undefined && req.contentType !== null) {
    headers['content-type'] = req.contentType ?? 'application/json'
  }
  return rawRequest(h, { ...req, headers: { ...headers, ...req.headers } })
}

/** fetch that records every response (for the SDK client the factories use). */
const recordingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init)
  const text = await response.clone().text()
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
  const what = `${init?.method ?? 'GET'} ${url}`
  record(what, response.status, text)
  return response
}

export function clientFor(h: Pick<TestApp, 'url' | 'clock'>, keys: Keys): Kurus {
  return new Kurus({ ...keys, baseUrl: h.url, now: () => h.clock.now(), fetch: recordingFetch })
}

// ---------------------------------------------------------------- actors

export interface Actor extends Keys {
  merchantId: string
  storeId: string
  apiKeyId: string
  email: string
  password: string
  client: Kurus
  /** A dashboard JWT (logs in once, again after the clock moved past its hour). */
  token(): Promise<string>
  dash(
    method: string,
    path: string,
    opts?: { body?: unknown; query?: Record<string, string> },
  ): Promise<RawResponse>
}

interface CreatedMerchant extends Keys {
  merchantId: string
  storeId: string
  apiKeyId: string
  dashboard: { email: string; password: string }
}

export async function newActor(
  h: TestApp,
  opts: { kycStatus?: string; name?: string } = {},
): Promise<Actor> {
  const created = await h.operator<CreatedMerchant>('POST', '/operator/v1/merchants', {
    name: opts.name ?? 'Security Merchant',
    kycStatus: opts.kycStatus ?? 'approved',
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const { dashboard, ...keys } = created.body
  let session: { token: string; expiresAt: number; usedAt: number } | undefined
  const token = async () => {
    const now = h.clock.now().getTime()
    // A token ends an hour after login, or after 30 minutes without a request.
    if (!session || session.expiresAt - 60_000 <= now || now - session.usedAt >= 29 * 60_000) {
      const res = await rawRequest(h, {
        method: 'POST',
        path: '/v1/dashboard/login',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(dashboard),
      })
      assert.equal(res.status, 200, res.text)
      const body = res.json as { token: string; expiresAt: string }
      session = { token: body.token, expiresAt: Date.parse(body.expiresAt), usedAt: now }
    }
    session.usedAt = now
    return session.token
  }
  return {
    ...keys,
    email: dashboard.email,
    password: dashboard.password,
    client: clientFor(h, keys),
    token,
    dash: async (method, path, o = {}) => {
      const qs = o.query ? `?${new URLSearchParams(o.query).toString()}` : ''
      return rawRequest(h, {
        method,
        path: path + qs,
        headers: {
          authorization: `Bearer ${await token()}`,
          ...(o.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
      })
    },
  }
}

export interface SubActor extends Keys {
  submerchantId: string
  apiKeyId: string
  client: Kurus
}

/** A mod-97-valid TR IBAN (bank 00061) ending in the given account digits. */
export function trIban(account: string): string {
  const bban = `000610${account.padStart(16, '0')}`
  const numeric = `${bban}2927` + '00' // "TR" = 29 27, check digits 00
  let rem = 0
  for (const ch of numeric) rem = (rem * 10 + Number(ch)) % 97
  const check = String(98 - rem).padStart(2, '0')
  return `TR${check}${bban}`
}

export async function newSubmerchant(h: TestApp, m: Actor, account = '1234567890123456') {
  const res = await h.operator<Keys & { submerchantId: string; apiKeyId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Seller', iban: trIban(account), holderName: 'Seller Ltd' },
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { ...res.body, client: clientFor(h, res.body) } satisfies SubActor
}

// ---------------------------------------------------------------- error envelope

const CODES_BY_STATUS: Record<number, string[]> = {
  400: ['SVC-VAL-3001', 'SVC-VAL-3002', 'SVC-3DS-3601', 'SVC-PAY-3503'],
  401: ['SVC-GW-1001', 'SVC-GW-1002', 'SVC-GW-1003', 'SVC-GW-1006'],
  402: ['SVC-PAY-3501', 'SVC-RISK-3701'],
  403: ['SVC-KYC-3101', 'SVC-AUTH-3201'],
  404: ['SVC-RES-3301'],
  409: ['SVC-GW-2001', 'SVC-GW-2002', 'SVC-PAY-3502', 'SVC-STATE-3401', 'SVC-RES-3302'],
  410: ['SVC-STATE-3401'],
  413: ['SVC-VAL-3003'],
  415: ['SVC-VAL-3004'],
  429: ['SVC-GW-1004'],
}

/** Words that only an internal error would put in a message. */
const INTERNALS =
  /\bat \S+\.(ts|js):\d+|node_modules|\/src\/|\bselect\b.*\bfrom\b|\binsert into\b|relation "|syntax error|duplicate key|violates|TypeError|ReferenceError|RangeError|Cannot read prop|is not a function|undefined is not|ECONNREFUSED|kysely|pglite|postgres/i

/** Asserts `res` is an error in the spec's envelope, consistent with its status. */
export function assertEnvelope(res: RawResponse, context: string): void {
  const where = `${context} → ${res.status} ${res.text.slice(0, 300)}`
  assert.match(String(res.headers['content-type']), /^application\/json/, where)
  const body = res.json as Record<string, unknown>
  assert.equal(typeof body, 'object', where)
  const code = body['code']
  assert.equal(typeof code, 'string', where)
  assert.ok(
    (CODES_BY_STATUS[res.status] ?? []).includes(code as string),
    `code ${String(code)} does not belong to HTTP ${res.status}: ${where}`,
  )
  assert.equal(typeof body['message'], 'string', where)
  assert.ok((body['message'] as string).length > 0, where)
  assert.doesNotMatch(body['message'] as string, INTERNALS, where)
  assert.equal(body['requestId'], res.headers['x-request-id'], where)
  for (const k of Object.keys(body)) {
    assert.ok(
      ['code', 'message', 'requestId', 'details', 'paymentId', 'declineCode'].includes(k),
      `unexpected envelope field ${k}: ${where}`,
    )
  }
  if (body['details'] !== undefined) {
    assert.ok(Array.isArray(body['details']), where)
    for (const d of body['details'] as unknown[]) {
      const item = d as Record<string, unknown>
      assert.equal(typeof item['field'], 'string', where)
      assert.equal(typeof item['reason'], 'string', where)
      assert.doesNotMatch(item['reason'] as string, INTERNALS, where)
    }
  }
}

/** No 5xx, and every 4xx of a JSON route is the envelope. */
export function assertNoServerError(res: RawResponse, context: string): void {
  assert.ok(res.status < 500, `${context} → ${res.status} ${res.text.slice(0, 500)}`)
  if (res.status >= 400) assertEnvelope(res, context)
}

/** The parts of an error that must not tell "another merchant's" from "does not exist". */
export function errorShape(res: RawResponse, ids: string[] = []): string {
  const body = (res.json ?? {}) as Record<string, unknown>
  let text = JSON.stringify({
    status: res.status,
    code: body['code'],
    message: body['message'],
    details: body['details'],
  })
  for (const id of ids) text = text.replaceAll(id, '<id>')
  return text
}

// ---------------------------------------------------------------- ids

const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz'

/** An id of the same shape as `id` that names nothing. */
export function fabricateId(id: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id)) {
    return randomUUID()
  }
  const m = /^([a-z]+_(?:[a-z]+_)?)(.+)$/.exec(id)
  const bytes = randomBytes(64)
  if (m) {
    const rest = m[2] ?? ''
    return (m[1] ?? '') + Array.from(rest, (_, i) => BASE32[(bytes[i] ?? 0) % 32]).join('')
  }
  return randomBytes(id.length).toString('base64url').slice(0, id.length)
}

// ---------------------------------------------------------------- card data

/**
 * Digit runs of 13 to 19 digits (single spaces or dashes allowed between digits), not part of
 * a longer token (an id, a UUID, a decimal fraction, a hash), that pass the Luhn check. A 13-digit run starting with 1 is an
 * epoch-milliseconds timestamp (no card scheme issues 13-digit numbers starting with 1).
 */
export function luhnHits(text: string): string[] {
  const hits: string[] = []
  const run = /(?<![0-9A-Za-z_.-])\d(?:[ -]?\d){12,18}(?![0-9A-Za-z_]|[.-][0-9A-Za-z])/g
  for (const m of text.matchAll(run)) {
    const digits = m[0].replace(/[ -]/g, '')
    if (digits.length < 13 || digits.length > 19) continue
    if (digits.length === 13 && digits.startsWith('1')) continue
    if (luhnValid(digits)) hits.push(m[0])
  }
  return hits
}

/** A CVC value next to its name: `"cvc":"123"`, `cvc=123`, `cvv: 1234`. */
export function cvcHits(text: string): string[] {
  return [
    ...text.matchAll(/["']?\b(cvc|cvv2?|csc|cid|securityCode)["']?\s*[:=]\s*["']?\d{3,4}\b/gi),
  ].map((m) => m[0])
}

/** Every table of the database (all schemas), one JSON text per table. */
export async function dumpAllTables(db: Db): Promise<{ table: string; json: string }[]> {
  const tables = await sql<{ table_schema: string; table_name: string }>`
    select table_schema, table_name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
  `.execute(db)
  const out: { table: string; json: string }[] = []
  for (const { table_schema, table_name } of tables.rows) {
    const dump = await sql<{ j: string }>`
      select coalesce(json_agg(t)::text, '[]') as j from ${sql.id(table_schema, table_name)} t
    `.execute(db)
    out.push({ table: `${table_schema}.${table_name}`, json: dump.rows[0]?.j ?? '' })
  }
  return out
}

/** Columns that hold vault ciphertext: the one place a card number may be, encrypted. */
export const VAULT_CIPHERTEXT_COLUMNS = ['pan_enc', 'dek_wrapped']

/** The dump of a table with the vault's ciphertext columns blanked out. */
export function withoutCiphertext(json: string): string {
  let out = json
  for (const column of VAULT_CIPHERTEXT_COLUMNS) {
    out = out.replace(new RegExp(`"${column}":"[^"]*"`, 'g'), `"${column}":"<ciphertext>"`)
  }
  return out
}

export interface Finding {
  where: string
  hit: string
  /** The text around the hit, for the failure message. */
  around: string
}

/** Luhn-valid numbers and CVCs in each named text. */
export function scanForCardData(texts: { where: string; text: string }[]): Finding[] {
  const findings: Finding[] = []
  for (const { where, text } of texts) {
    for (const hit of [...luhnHits(text), ...cvcHits(text)]) {
      const at = text.indexOf(hit)
      findings.push({ where, hit, around: text.slice(Math.max(0, at - 80), at + hit.length + 40) })
    }
  }
  return findings
}

// ---------------------------------------------------------------- process health

/** Collects unhandled rejections and uncaught exceptions of this test process. */
export function watchProcess(): { problems: string[] } {
  const problems: string[] = []
  process.on('unhandledRejection', (reason) =>
    problems.push(`unhandledRejection: ${String(reason)}`),
  )
  process.on('uncaughtExceptionMonitor', (error) =>
    problems.push(`uncaughtException: ${String(error)}`),
  )
  return { problems }
}

/**
 * Log lines at error level or above (pino: 50 error, 60 fatal) written while serving a request
 * (they carry its requestId). Background job noise is not a request's doing.
 */
export function errorLogLines(logs: string[]): string[] {
  return logs.filter((line) => /"level":(50|60)/.test(line) && line.includes('"requestId"'))
}
