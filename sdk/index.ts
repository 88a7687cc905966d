import { randomUUID } from 'node:crypto'
import { signedHeaders, timestampFor } from '../packages/node/src/signing.ts'

// The test suite's client of the Kuruş API: raw signed requests (any status, any body, exotic
// payloads) for tests of the server's edges. Merchants use @kurus/node (packages/node), whose
// signer this file re-exports: the canonical string is X-Timestamp, the upper-case method, the
// path (no query, no trailing slash) and the hex SHA-256 of the exact body bytes sent, joined
// by "\n"; the signature is hex HMAC-SHA256 of it keyed with the secret key.

export interface KurusOptions {
  publicKey: string
  secretKey: string
  /** e.g. http://localhost:3000 */
  baseUrl: string
  /** Override for tests; defaults to the global fetch. */
  fetch?: typeof fetch
  /** Source of X-Timestamp; defaults to the system clock. */
  now?: () => Date
}

export interface RequestOptions {
  /** A JSON value, serialised once: the bytes signed are the bytes sent. */
  body?: unknown
  /** Raw body bytes, sent and signed as given (file uploads, exotic payloads). */
  rawBody?: string | Uint8Array
  /** Content-Type of `rawBody`; default application/json. */
  contentType?: string
  query?: Record<string, string | number | boolean | undefined>
  /** Sends Idempotency-Key; pass `true` for a fresh UUID v4. */
  idempotencyKey?: string | true
  requestId?: string
  headers?: Record<string, string>
}

export interface KurusResponse<T = unknown> {
  status: number
  headers: Headers
  body: T
  requestId: string | null
}

export interface ErrorBody {
  code: string
  message: string
  requestId: string
  details?: { field: string; reason: string }[]
  [extra: string]: unknown
}

export class KurusApiError extends Error {
  override name = 'KurusApiError'
  readonly status: number
  readonly code: string
  readonly requestId: string
  readonly body: ErrorBody
  constructor(status: number, body: ErrorBody) {
    super(`${status} ${body.code}: ${body.message}`)
    this.status = status
    this.code = body.code
    this.requestId = body.requestId
    this.body = body
  }
}

// The signer is @kurus/node's (packages/node/src/signing.ts): one implementation, held to
// test/vectors/signing.json by both test/gateway/vectors.test.ts and the package's own tests.
export {
  canonicalString,
  sign,
  signedHeaders,
  timestampFor,
  type SignedHeaders,
} from '../packages/node/src/signing.ts'

export class Kurus {
  private readonly options: KurusOptions
  constructor(options: KurusOptions) {
    this.options = options
  }

  /** Sends a signed request; never throws for an HTTP status (see `call`). */
  async request<T = unknown>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<KurusResponse<T>> {
    const upper = method.toUpperCase()
    // Only the path is signed: a query written into `path` is sent, not signed.
    const [pathOnly = '', inlineQuery] = path.split(/\?(.*)/s)
    const cleanPath = pathOnly.length > 1 ? pathOnly.replace(/\/+$/, '') : pathOnly
    const body: string | Uint8Array =
      opts.rawBody ?? (opts.body === undefined ? '' : JSON.stringify(opts.body))
    // A fresh timestamp per call: a retry is a new call, so a new signature.
    const timestamp = timestampFor(this.options.now?.() ?? new Date())
    const headers: Record<string, string> = {
      ...signedHeaders(this.options, upper, cleanPath, body, timestamp),
      accept: 'application/json',
    }
    if (body.length > 0) headers['content-type'] = opts.contentType ?? 'application/json'
    if (opts.idempotencyKey !== undefined) {
      headers['idempotency-key'] = opts.idempotencyKey === true ? randomUUID() : opts.idempotencyKey
    }
    if (opts.requestId) headers['x-request-id'] = opts.requestId
    Object.assign(headers, opts.headers)
    const query = new URLSearchParams(inlineQuery)
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) query.set(k, String(v))
    const qs = query.size > 0 ? `?${query.toString()}` : ''
    const doFetch = this.options.fetch ?? fetch
    const response = await doFetch(`${this.options.baseUrl}${cleanPath}${qs}`, {
      method: upper,
      headers,
      // A Uint8Array over an ArrayBuffer is a BodyInit; copy views over shared memory.
      ...(body.length > 0 ? { body: typeof body === 'string' ? body : new Uint8Array(body) } : {}),
    })
    const type = response.headers.get('content-type') ?? ''
    const parsed: unknown = type.includes('json')
      ? await response.json()
      : type.startsWith('text/')
        ? await response.text()
        : Buffer.from(await response.arrayBuffer())
    return {
      status: response.status,
      headers: response.headers,
      body: parsed as T,
      requestId: response.headers.get('x-request-id'),
    }
  }

  /** Sends a signed request and returns the body, or throws KurusApiError. */
  async call<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const response = await this.request<T | ErrorBody>(method, path, opts)
    if (response.status >= 400) throw new KurusApiError(response.status, response.body as ErrorBody)
    return response.body as T
  }

  whoami() {
    return this.call<{
      subjectScope: 'merchant' | 'submerchant'
      merchantId: string
      apiKeyId: string
      storeId?: string
      submerchantId?: string
    }>('GET', '/v1/auth/whoami')
  }

  kycStatus() {
    return this.call<{
      status: string
      decidedAt: string | null
      sessionId: string | null
      subjectId: string
    }>('GET', '/v1/kyc/status')
  }

  /** One page of the caller's balance transactions (docs/reports.md); follow `nextCursor`. */
  listBalanceTransactions(query: BalanceTransactionQuery = {}) {
    return this.call<{ items: BalanceTransaction[]; nextCursor: string | null }>(
      'GET',
      '/v1/balance-transactions',
      { query: { ...query } },
    )
  }

  /** Every balance transaction matching `query`, page after page. */
  async *balanceTransactions(
    query: Omit<BalanceTransactionQuery, 'cursor'> = {},
  ): AsyncGenerator<BalanceTransaction> {
    let cursor: string | null = null
    do {
      const page: { items: BalanceTransaction[]; nextCursor: string | null } =
        await this.listBalanceTransactions({ ...query, ...(cursor !== null ? { cursor } : {}) })
      yield* page.items
      cursor = page.nextCursor
    } while (cursor !== null)
  }

  /** Queues a balance summary or payout reconciliation (202); poll `getReport`. */
  createReport(body: ReportRequest, opts: { idempotencyKey?: string } = {}) {
    return this.call<Report>('POST', '/v1/reports', {
      body,
      ...(opts.idempotencyKey !== undefined ? { idempotencyKey: opts.idempotencyKey } : {}),
    })
  }

  getReport(reportId: string) {
    return this.call<Report>('GET', `/v1/reports/${encodeURIComponent(reportId)}`)
  }

  /** The ready report's file (CSV text or PDF bytes); 409 KurusApiError until it is ready. */
  downloadReport(reportId: string) {
    return this.call<string | Buffer>('GET', `/v1/reports/${encodeURIComponent(reportId)}/download`)
  }

  getPayment(paymentId: string) {
    return this.call<Payment>('GET', `/v1/payments/${encodeURIComponent(paymentId)}`)
  }

  /**
   * Captures `amount` kuruş (default: the uncaptured remainder); `final: false` keeps the
   * rest of the authorization open for more captures.
   */
  capturePayment(paymentId: string, body: { amount?: number; final?: boolean } = {}) {
    return this.call<CaptureResult>(
      'POST',
      `/v1/payments/${encodeURIComponent(paymentId)}/capture`,
      { body },
    )
  }

  /** Voids an authorization, or releases the rest of a partially captured one. */
  voidPayment(paymentId: string, reason?: string) {
    return this.call<{
      id: string
      status: PaymentStatus
      amount: number
      currency: 'TRY'
      capturedAmount: number
    }>('POST', `/v1/payments/${encodeURIComponent(paymentId)}/void`, {
      body: reason === undefined ? {} : { reason },
    })
  }

  /** Merges `metadata` into the payment's; a key set to "" is removed. */
  updatePaymentMetadata(paymentId: string, metadata: Record<string, string>) {
    return this.call<Payment>('PATCH', `/v1/payments/${encodeURIComponent(paymentId)}`, {
      body: { metadata },
    })
  }

  /** Sandbox (demo only): sets the calling merchant's KYC status. */
  sandboxSetKyc(status: 'none' | 'pending' | 'approved' | 'rejected' | 'suspended' | 'expired') {
    return this.call<{ merchantId: string; status: string; decidedAt: string | null }>(
      'POST',
      '/v1/sandbox/kyc',
      { body: { status } },
    )
  }

  /** Creates a payment link: a reusable page `{checkout_url}/l/{hash}` with one Pay button. */
  createPaymentLink(body: CreatePaymentLinkBody) {
    return this.call<PaymentLink>('POST', '/v1/payment-links', { body })
  }

  getPaymentLink(linkId: string) {
    return this.call<PaymentLink>('GET', `/v1/payment-links/${encodeURIComponent(linkId)}`)
  }

  /** The merchant's payment links, newest first; pass `nextCursor` back as `cursor`. */
  listPaymentLinks(query: { limit?: number; cursor?: string } = {}) {
    const q: Record<string, string> = {}
    if (query.limit !== undefined) q['limit'] = String(query.limit)
    if (query.cursor !== undefined) q['cursor'] = query.cursor
    return this.call<{ items: PaymentLink[]; nextCursor: string | null }>(
      'GET',
      '/v1/payment-links',
      { query: q },
    )
  }

  /**
   * Uploads a file (multipart/form-data, signed over its exact bytes): PDF, PNG or JPEG by
   * content, at most 5 MiB. Use its id in `fileIds` of chargeback evidence.
   */
  uploadFile(bytes: Uint8Array, opts: { purpose?: 'dispute_evidence'; filename?: string } = {}) {
    const form = multipartForm(
      { purpose: opts.purpose ?? 'dispute_evidence' },
      { field: 'file', filename: opts.filename ?? 'evidence', bytes },
    )
    return this.call<KurusFile>('POST', '/v1/files', {
      rawBody: form.body,
      contentType: form.contentType,
    })
  }

  getFile(fileId: string) {
    return this.call<KurusFile>('GET', `/v1/files/${encodeURIComponent(fileId)}`)
  }

  /** The file's bytes. */
  async getFileContents(fileId: string): Promise<Buffer> {
    return this.call<Buffer>('GET', `/v1/files/${encodeURIComponent(fileId)}/contents`)
  }

  /** A payment's chargebacks, oldest first. */
  listChargebacks(paymentId: string) {
    return this.call<{ items: Chargeback[] }>(
      'GET',
      `/v1/payments/${encodeURIComponent(paymentId)}/chargebacks`,
    )
  }

  /**
   * Saves the chargeback's evidence draft (fields given replace the draft's); `submit: true`
   * sends it: one evidence PDF is rendered and the chargeback goes `under_review`.
   */
  saveChargebackEvidence(paymentId: string, chargebackId: string, body: ChargebackEvidenceBody) {
    return this.call<ChargebackEvidence>(
      'POST',
      `/v1/payments/${encodeURIComponent(paymentId)}/chargebacks/${encodeURIComponent(chargebackId)}/evidence`,
      { body },
    )
  }

  acceptChargeback(paymentId: string, chargebackId: string) {
    return this.call<ChargebackResolution>(
      'POST',
      `/v1/payments/${encodeURIComponent(paymentId)}/chargebacks/${encodeURIComponent(chargebackId)}/accept`,
      { body: {} },
    )
  }

  reverseChargeback(paymentId: string, chargebackId: string) {
    return this.call<ChargebackResolution>(
      'POST',
      `/v1/payments/${encodeURIComponent(paymentId)}/chargebacks/${encodeURIComponent(chargebackId)}/reverse`,
      { body: {} },
    )
  }

  /** Deactivates a payment link: its page answers 410 from now on. Idempotent. */
  deactivatePaymentLink(linkId: string) {
    return this.call<PaymentLink>(
      'POST',
      `/v1/payment-links/${encodeURIComponent(linkId)}/deactivate`,
      { body: {} },
    )
  }

  /** Adds a value to a block list: a charge whose fact is on it is blocked (402 SVC-RISK-3701). */
  addRiskListItem(list: RiskListName, value: string, note?: string) {
    return this.call<RiskListItem>('POST', `/v1/risk/lists/${list}/items`, {
      body: { value, ...(note === undefined ? {} : { note }) },
    })
  }

  /** A block list's values, newest first; pass `nextCursor` back as `cursor`. */
  listRiskListItems(list: RiskListName, query: { limit?: number; cursor?: string } = {}) {
    const q: Record<string, string> = {}
    if (query.limit !== undefined) q['limit'] = String(query.limit)
    if (query.cursor !== undefined) q['cursor'] = query.cursor
    return this.call<{ items: RiskListItem[]; nextCursor: string | null }>(
      'GET',
      `/v1/risk/lists/${list}/items`,
      { query: q },
    )
  }

  async removeRiskListItem(list: RiskListName, itemId: string): Promise<void> {
    await this.call<null>('DELETE', `/v1/risk/lists/${list}/items/${encodeURIComponent(itemId)}`)
  }

  /** Creates a rule: `condition` is JSON Logic over the facts of docs/risk.md. */
  createRiskRule(body: CreateRiskRuleBody) {
    return this.call<RiskRule>('POST', '/v1/risk/rules', { body })
  }

  listRiskRules() {
    return this.call<{ items: RiskRule[] }>('GET', '/v1/risk/rules')
  }

  getRiskRule(ruleId: string) {
    return this.call<RiskRule>('GET', `/v1/risk/rules/${encodeURIComponent(ruleId)}`)
  }

  updateRiskRule(ruleId: string, body: { name?: string; enabled?: boolean; condition?: unknown }) {
    return this.call<RiskRule>('PATCH', `/v1/risk/rules/${encodeURIComponent(ruleId)}`, { body })
  }

  async deleteRiskRule(ruleId: string): Promise<void> {
    await this.call<null>('DELETE', `/v1/risk/rules/${encodeURIComponent(ruleId)}`)
  }

  /** Replays a condition over the facts of the last 30 days' card payments. */
  backtestRiskRule(condition: unknown) {
    return this.call<RiskBacktest>('POST', '/v1/risk/rules/backtest', { body: { condition } })
  }

  listReviews(query: { status?: 'open' | 'closed'; limit?: number; cursor?: string } = {}) {
    const q: Record<string, string> = {}
    if (query.status !== undefined) q['status'] = query.status
    if (query.limit !== undefined) q['limit'] = String(query.limit)
    if (query.cursor !== undefined) q['cursor'] = query.cursor
    return this.call<{ items: Review[]; nextCursor: string | null }>('GET', '/v1/reviews', {
      query: q,
    })
  }

  getReview(reviewId: string) {
    return this.call<Review>('GET', `/v1/reviews/${encodeURIComponent(reviewId)}`)
  }

  /** Approves a review: the payment is captured when its charge asked for capture. */
  approveReview(reviewId: string) {
    return this.call<Review>('POST', `/v1/reviews/${encodeURIComponent(reviewId)}/approve`, {
      body: {},
    })
  }

  /** Rejects a review: the authorization is voided. */
  rejectReview(reviewId: string) {
    return this.call<Review>('POST', `/v1/reviews/${encodeURIComponent(reviewId)}/reject`, {
      body: {},
    })
  }
}

export type RiskListName = 'card_fingerprint' | 'email' | 'ip' | 'bin' | 'customer_id'

export interface RiskListItem {
  id: string
  list: RiskListName
  value: string
  note: string | null
  createdAt: string
}

export interface CreateRiskRuleBody {
  name: string
  action: 'block' | 'review' | 'require_3ds'
  /** JSON Logic, e.g. `{ '>': [{ var: 'velocity.cardAttempts1h' }, 3] }`. */
  condition: Record<string, unknown>
  enabled?: boolean
}

export interface RiskRule extends Required<CreateRiskRuleBody> {
  id: string
  createdAt: string
  updatedAt: string
}

export interface RiskBacktest {
  evaluated: number
  matched: number
  matchedAmount: number
  samplePaymentIds: string[]
}

/** What the risk check decided for a payment (`payment.risk`). */
export interface RiskAssessment {
  decision: 'allow' | 'review' | 'require_3ds' | 'block'
  /** 0–99; signals and weights in docs/risk.md. */
  score: number
  reasons: string[]
  ruleIds: string[]
}

export interface Review {
  id: string
  paymentId: string
  status: 'open' | 'closed'
  closedReason: 'approved' | 'rejected' | 'expired' | null
  reasons: string[]
  /** After approve / reject: the payment's status. */
  paymentStatus?: string
  createdAt: string
  closedAt: string | null
}

export interface BalanceTransactionQuery {
  from?: string
  to?: string
  type?: BalanceTransaction['type']
  payoutId?: string
  limit?: number
  cursor?: string
}

export interface BalanceTransaction {
  id: string
  type:
    | 'charge'
    | 'refund'
    | 'chargeback'
    | 'chargeback_reversal'
    | 'payout'
    | 'payout_failure'
    | 'adjustment'
  amount: number
  fee: number
  net: number
  currency: 'TRY'
  status: 'pending' | 'available'
  availableOn: string
  sourceId: string
  payoutId?: string
  createdAt: string
}

export interface ReportRequest {
  type: 'balance_summary' | 'payout_reconciliation'
  from: string
  to: string
  format: 'csv' | 'pdf'
}

export interface Report extends ReportRequest {
  reportId: string
  status: 'queued' | 'processing' | 'ready' | 'failed' | 'expired'
  downloadUrl: string
  rowCount: number
  createdAt: string
  completedAt: string | null
  expiresAt: string | null
}

export interface CreatePaymentLinkBody {
  storeId: string
  /** Kuruş. */
  amount: number
  description: string
  /** At most this many captured payments. */
  maxPayments?: number
  /** ISO 8601; the link answers 410 after it. */
  expiresAt?: string
  metadata?: Record<string, string>
  installments?: boolean
  /** What the page asks the buyer for (added to the payment's metadata). */
  collect?: { email?: boolean; phone?: boolean; name?: boolean }
  /** Where the checkout returns to; default the link's own page. */
  returnUrl?: string
}

export interface PaymentLink {
  id: string
  storeId: string
  url: string
  qrUrl: string
  active: boolean
  status: 'active' | 'deactivated' | 'expired' | 'completed'
  amount: number
  currency: 'TRY'
  description: string
  maxPayments: number | null
  /** Payments through the link that captured money. */
  paymentsCount: number
  expiresAt: string | null
  metadata: Record<string, string>
  installments: boolean
  collect: { email?: boolean; phone?: boolean; name?: boolean }
  returnUrl: string | null
  createdAt: string
  deactivatedAt: string | null
}

export type PaymentStatus =
  | 'pending'
  | 'pending_3ds'
  | 'authorized'
  | 'partially_captured'
  | 'captured'
  | 'voided'
  | 'failed'
  | 'refunded'

export interface CaptureSummary {
  id: string
  amount: number
  createdAt: string
}

export interface CaptureResult {
  id: string
  status: PaymentStatus
  /** The authorized amount. */
  amount: number
  capturedAmount: number
  currency: 'TRY'
  commission: number
  netAmount: number
  refundableAmount: number
  captures: CaptureSummary[]
  completedAt: string | null
}

export interface Payment {
  id: string
  merchantId: string
  storeId: string
  transactionId: string
  method: 'card' | 'qr'
  status: PaymentStatus
  amount: number
  capturedAmount: number
  currency: 'TRY'
  commission: number
  netAmount: number
  captures: CaptureSummary[]
  cardMask: string | null
  cardBrand: string | null
  cardType: string | null
  bin: string | null
  installmentCount: number
  threeDSecure: boolean
  authCode: string | null
  declineCode: string | null
  /** Why a failed payment failed: the decline code, or `blocked` by a risk rule or list. */
  failureCode: string | null
  /** The card's fingerprint: keyed per merchant (equal for the same card within it). */
  card: { fingerprint: string } | null
  risk: RiskAssessment | null
  refundAmount: number
  refundableAmount: number
  customerId: string | null
  metadata: Record<string, string>
  /** The payment link it was made through. */
  paymentLinkId: string | null
  /** The subscription a renewal payment renews, and its cycle; null otherwise. */
  subscriptionId: string | null
  subscriptionCycle: number | null
  createdAt: string
  completedAt: string | null
}

/** A multipart/form-data body: text fields, then one file part. */
export function multipartForm(
  fields: Record<string, string>,
  file: { field: string; filename: string; bytes: Uint8Array; contentType?: string },
): { body: Buffer; contentType: string } {
  const boundary = `kurus-${randomUUID()}`
  const quote = (s: string) => s.replace(/["\r\n]/g, '_')
  const parts: Buffer[] = []
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`,
      ),
    )
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; ` +
        `filename="${quote(file.filename)}"\r\n` +
        `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
    ),
    Buffer.from(file.bytes),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  )
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` }
}

export interface KurusFile {
  id: string
  purpose: 'dispute_evidence' | 'dispute_evidence_submission'
  size: number
  /** Read from the content: pdf, png or jpeg. */
  type: 'pdf' | 'png' | 'jpeg'
  sha256: string
  createdAt: string
}

export type ChargebackStatus = 'received' | 'under_review' | 'accepted' | 'reversed'

export interface Chargeback {
  id: string
  paymentId: string
  amount: number
  status: ChargebackStatus
  reasonCode: string
  bankChargebackId: string
  receivedAt: string
  resolvedAt: string | null
  /** The deadline to submit evidence; unanswered past it, the chargeback closes as expired. */
  evidenceDueBy: string
  resolution: 'accepted' | 'reversed' | 'won' | 'lost' | 'expired' | null
  evidenceSubmittedAt: string | null
}

export interface ChargebackResolution {
  chargebackId: string
  status: ChargebackStatus
  resolution: Chargeback['resolution']
  resolvedAt: string | null
}

export interface ChargebackEvidenceFields {
  productDescription?: string
  customerCommunication?: string
  shippingTrackingNumber?: string
  refundPolicy?: string
  uncategorizedText?: string
  /** Ids of uploaded files (`POST /v1/files`). */
  fileIds?: string[]
}

export interface ChargebackEvidenceBody extends ChargebackEvidenceFields {
  submit?: boolean
}

export interface ChargebackEvidence {
  chargebackId: string
  status: ChargebackStatus
  evidenceDueBy: string
  evidence: ChargebackEvidenceFields
  /** The rendered evidence PDF, once submitted. */
  evidenceFileId: string | null
  submittedAt: string | null
}
