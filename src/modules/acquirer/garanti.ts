import { createHash } from 'node:crypto'
import { safeEqual } from '../../platform/crypto.ts'
import {
  buildXml,
  parseXml,
  postToBank,
  str,
  TRY_NUMERIC,
  type BankOutcome,
  type BankTimeouts,
  type InquiryOutcome,
  type ThreeDCallback,
  type ThreeDForm,
} from './bank-wire.ts'
import type { BankEndpoints, CardData } from './est-v3.ts'

// Garanti BBVA virtual POS: the hashes of its 3D form, its callback and its XML provisioning
// API (GVPS). Facts from Garanti's integration guide as mewebstudio/pos (MIT) records them;
// the published vectors are test/acquirer/garanti.test.ts. Field names and the response
// shapes come from the same library's request/response data mapper tests (facts, not code).
// Amounts go on Garanti's wire in kuruş (txnamount, Amount), currency 949.

export interface GarantiCredentials {
  merchantId: string
  terminalId: string
  provisionUser: string
  provisionPassword: string
  storeKey: string
  /** The refund user (PROVRFN) and its password, used for void and refund; provision's by default. */
  refundUser?: string
  refundPassword?: string
}

function sha512Upper(text: string): string {
  return createHash('sha512').update(text, 'utf8').digest('hex').toUpperCase()
}

/** SHA-1 of the password and the terminal id padded to 9 digits, upper-case hex. */
export function garantiSecurityData(credentials: GarantiCredentials, txnType: string): string {
  const password =
    txnType === 'void' || txnType === 'refund'
      ? (credentials.refundPassword ?? credentials.provisionPassword)
      : credentials.provisionPassword
  return createHash('sha1')
    .update(`${password}${credentials.terminalId.padStart(9, '0')}`, 'utf8')
    .digest('hex')
    .toUpperCase()
}

/** The 3D form's `secure3dhash`. Amounts are in kuruş on Garanti's wire. */
export function garanti3dHash(
  credentials: GarantiCredentials,
  form: {
    orderId: string
    amount: number
    currency: string
    successUrl: string
    errorUrl: string
    txnType: string
    installmentCount: string
  },
): string {
  return sha512Upper(
    [
      credentials.terminalId,
      form.orderId,
      String(form.amount),
      form.currency,
      form.successUrl,
      form.errorUrl,
      form.txnType,
      form.installmentCount,
      credentials.storeKey,
      garantiSecurityData(credentials, form.txnType),
    ].join(''),
  )
}

/** The XML API's `HashData`: order, terminal, card number, amount, currency, security data. */
export function garantiRequestHash(
  credentials: GarantiCredentials,
  p: { orderId: string; cardNumber?: string; amount: number; currency?: string; txnType: string },
): string {
  return sha512Upper(
    [
      p.orderId,
      credentials.terminalId,
      p.cardNumber ?? '',
      String(p.amount),
      p.currency ?? '',
      garantiSecurityData(credentials, p.txnType),
    ].join(''),
  )
}

/** The callback's `hash`: the fields `hashparams` names (":"-separated) then the store key. */
export function garantiCallbackHashValid(
  credentials: GarantiCredentials,
  fields: Readonly<Record<string, string>>,
): boolean {
  const hash = fields['hash']
  const expected = garantiCallbackHash(credentials, fields)
  return !!hash && expected !== undefined && safeEqual(hash, expected)
}

/** The hash a callback carries (what the gate computes), or undefined without `hashparams`. */
export function garantiCallbackHash(
  credentials: GarantiCredentials,
  fields: Readonly<Record<string, string>>,
): string | undefined {
  const names = (fields['hashparams'] ?? '').split(':').filter((n) => n !== '')
  if (names.length === 0) return undefined
  return sha512Upper(names.map((n) => fields[n] ?? '').join('') + credentials.storeKey)
}

// ----- endpoints, the 3D form and its callback -----

/** Garanti BBVA's own URLs (mewebstudio/pos config/pos_test.php, pos_production.php). */
export const GARANTI_ENDPOINTS: Readonly<Record<'test' | 'production', BankEndpoints>> = {
  test: {
    api: 'https://sanalposprovtest.garantibbva.com.tr/VPServlet',
    threeDGate: 'https://sanalposprovtest.garantibbva.com.tr/servlet/gt3dengine',
  },
  production: {
    api: 'https://sanalposprov.garanti.com.tr/VPServlet',
    threeDGate: 'https://sanalposprov.garanti.com.tr/servlet/gt3dengine',
  },
}

export interface GarantiConfig {
  credentials: GarantiCredentials
  endpoints: BankEndpoints
  /** TEST on Garanti's test host (its gateway wants it), PROD otherwise. */
  mode?: 'TEST' | 'PROD'
  timeouts?: BankTimeouts
}

/** Garanti's installment field: empty for a single payment. */
function installmentField(count: number): string {
  return count > 1 ? String(count) : ''
}

function expiry(card: CardData): { month: string; year: string } {
  return {
    month: String(card.expMonth).padStart(2, '0'),
    year: String(card.expYear % 100).padStart(2, '0'),
  }
}

/** The form the buyer's browser posts to Garanti's gt3dengine (3D: authenticate only). */
export function garantiThreeDForm(
  config: GarantiConfig,
  p: {
    orderId: string
    amount: number
    installmentCount: number
    preAuth: boolean
    successUrl: string
    errorUrl: string
    card: CardData
    ip?: string
  },
): ThreeDForm {
  const c = config.credentials
  const txnType = p.preAuth ? 'preauth' : 'sales'
  const exp = expiry(p.card)
  const fields: Record<string, string> = {
    secure3dsecuritylevel: '3D',
    mode: config.mode ?? 'PROD',
    apiversion: '512',
    terminalprovuserid: c.provisionUser,
    terminaluserid: c.provisionUser,
    terminalmerchantid: c.merchantId,
    terminalid: c.terminalId,
    txntype: txnType,
    txnamount: String(p.amount),
    txncurrencycode: TRY_NUMERIC,
    txninstallmentcount: installmentField(p.installmentCount),
    orderid: p.orderId,
    successurl: p.successUrl,
    errorurl: p.errorUrl,
    customeripaddress: p.ip ?? '',
    cardnumber: p.card.pan,
    cardexpiredatemonth: exp.month,
    cardexpiredateyear: exp.year,
    cardcvv2: p.card.cvc,
  }
  fields['secure3dhash'] = garanti3dHash(c, {
    orderId: p.orderId,
    amount: p.amount,
    currency: TRY_NUMERIC,
    successUrl: p.successUrl,
    errorUrl: p.errorUrl,
    txnType,
    installmentCount: fields['txninstallmentcount'] ?? '',
  })
  return { action: config.endpoints.threeDGate, fields }
}

/**
 * Checks gt3dengine's callback: `hash` over the fields `hashparams` names under our store
 * key, then the order, the terminal, the amount (kuruş) and the currency against ours. Only
 * mdstatus 1 counts as authenticated (no half 3-D Secure).
 */
export function garantiVerifyCallback(
  config: GarantiConfig,
  fields: Readonly<Record<string, string>>,
  expected: { orderId: string; amount: number },
): ThreeDCallback {
  const mdStatus = fields['mdstatus']
  if (!fields['hash'] || !fields['hashparams'] || typeof mdStatus !== 'string') {
    return { ok: false, reason: 'malformed' }
  }
  if (!garantiCallbackHashValid(config.credentials, fields)) {
    return { ok: false, reason: 'hash_mismatch' }
  }
  const orderId = fields['oid'] ?? fields['orderid']
  if (orderId !== expected.orderId || fields['clientid'] !== config.credentials.terminalId) {
    return { ok: false, reason: 'order_mismatch' }
  }
  const amount = /^\d{1,13}$/.test(fields['txnamount'] ?? '') ? Number(fields['txnamount']) : NaN
  if (amount !== expected.amount || (fields['txncurrencycode'] ?? TRY_NUMERIC) !== TRY_NUMERIC) {
    return { ok: false, reason: 'amount_mismatch' }
  }
  return {
    ok: true,
    authenticated: mdStatus === '1',
    mdStatus,
    authentication: {
      md: fields['md'] ?? '',
      xid: fields['xid'] ?? '',
      eci: fields['eci'] ?? '',
      cavv: fields['cavv'] ?? '',
    },
  }
}

// ----- the XML provisioning API (GVPS) -----

type GvpsValue = string | { [k: string]: GvpsValue }
type GvpsRequest = Record<string, GvpsValue>

/** Void and refund go as the refund user (PROVRFN); everything else as the provision user. */
function terminal(
  config: GarantiConfig,
  hashData: string,
  txnType: string,
): Record<string, string> {
  const c = config.credentials
  const user =
    txnType === 'void' || txnType === 'refund' ? (c.refundUser ?? c.provisionUser) : c.provisionUser
  return {
    ProvUserID: user,
    UserID: user,
    HashData: hashData,
    ID: c.terminalId,
    MerchantID: c.merchantId,
  }
}

function request(
  config: GarantiConfig,
  p: {
    orderId: string
    txnType: string
    amount: number
    ip?: string | undefined
    card?: CardData | undefined
    transaction?: Record<string, GvpsValue>
  },
): GvpsRequest {
  const hash = garantiRequestHash(config.credentials, {
    orderId: p.orderId,
    cardNumber: p.card?.pan ?? '',
    amount: p.amount,
    currency: TRY_NUMERIC,
    txnType: p.txnType,
  })
  const exp = p.card ? expiry(p.card) : undefined
  return {
    Mode: config.mode ?? 'PROD',
    Version: '512',
    Terminal: terminal(config, hash, p.txnType),
    Customer: { IPAddress: p.ip ?? '' },
    ...(p.card && exp
      ? { Card: { Number: p.card.pan, ExpireDate: `${exp.month}${exp.year}`, CVV2: p.card.cvc } }
      : {}),
    Order: { OrderID: p.orderId },
    Transaction: {
      Type: p.txnType,
      InstallmentCnt: '',
      Amount: String(p.amount),
      CurrencyCode: TRY_NUMERIC,
      CardholderPresentCode: '0',
      MotoInd: 'N',
      ...p.transaction,
    },
  }
}

/** The request document (GVPSRequest, UTF-8), posted as the raw body. */
export function garantiRequestXml(body: GvpsRequest): string {
  return buildXml('GVPSRequest', body, 'UTF-8')
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}
}

async function send(
  config: GarantiConfig,
  body: GvpsRequest,
): Promise<
  | { kind: 'answer'; doc: Record<string, unknown> }
  | { kind: 'not_sent'; reason: string }
  | { kind: 'unknown'; reason: string }
> {
  const trip = await postToBank(
    config.endpoints.api,
    garantiRequestXml(body),
    'application/xml; charset=UTF-8',
    config.timeouts,
  )
  if (trip.kind === 'not_sent') return trip
  if (trip.kind === 'no_answer') return { kind: 'unknown', reason: trip.reason }
  // A 5xx comes from the bank's front before GVPS accepted anything.
  if (trip.status >= 500) return { kind: 'not_sent', reason: `http ${trip.status}` }
  if (trip.status !== 200) return { kind: 'unknown', reason: `http ${trip.status}` }
  const doc = parseXml(trip.body, 'GVPSResponse')
  return doc ? { kind: 'answer', doc } : { kind: 'unknown', reason: 'malformed answer' }
}

/**
 * The ReasonCode our simulator gives a reused order id. The fixtures we read do not show
 * Garanti's own; docs/acquiring.md lists it as to be confirmed against Garanti's guide. A
 * duplicate is asked about (order inquiry), never taken for a decline.
 */
export const GARANTI_DUPLICATE_ORDER = '0974'

/** Transaction/Response/Code 00 is the only approval; ReasonCode names a refusal. */
function outcomeOf(doc: Record<string, unknown>): BankOutcome {
  const transaction = objectOf(doc['Transaction'])
  const response = objectOf(transaction['Response'])
  const code = str(response['Code'])
  if (code === '00') {
    return {
      kind: 'approved',
      authCode: str(transaction['AuthCode']),
      hostReference: str(transaction['RetrefNum']),
      transId: str(transaction['RetrefNum']),
    }
  }
  const reason = str(response['ReasonCode'])
  return {
    kind: 'declined',
    bankCode: code === '92' && reason ? reason : code || 'error',
    message: str(response['ErrorMsg']),
    ...(reason === GARANTI_DUPLICATE_ORDER ? { duplicateOrder: true } : {}),
  }
}

async function operation(config: GarantiConfig, body: GvpsRequest): Promise<BankOutcome> {
  const answer = await send(config, body)
  return answer.kind === 'answer' ? outcomeOf(answer.doc) : answer
}

/** sales (Auth) or preauth with the card (the non-3D model). */
export function garantiAuthorize(
  config: GarantiConfig,
  p: {
    orderId: string
    amount: number
    installmentCount: number
    preAuth: boolean
    card: CardData
    ip?: string
  },
): Promise<BankOutcome> {
  return operation(
    config,
    request(config, {
      orderId: p.orderId,
      txnType: p.preAuth ? 'preauth' : 'sales',
      amount: p.amount,
      ip: p.ip,
      card: p.card,
      transaction: { InstallmentCnt: installmentField(p.installmentCount) },
    }),
  )
}

/** sales or preauth of the 3D model, with what the verified callback carried. */
export function garantiAuthorize3d(
  config: GarantiConfig,
  p: {
    orderId: string
    amount: number
    installmentCount: number
    preAuth: boolean
    authentication: Record<string, string>
    ip?: string
  },
): Promise<BankOutcome> {
  const a = p.authentication
  return operation(
    config,
    request(config, {
      orderId: p.orderId,
      txnType: p.preAuth ? 'preauth' : 'sales',
      amount: p.amount,
      ip: p.ip,
      transaction: {
        InstallmentCnt: installmentField(p.installmentCount),
        CardholderPresentCode: '13',
        Secure3D: {
          AuthenticationCode: a['cavv'] ?? '',
          SecurityLevel: a['eci'] ?? '',
          TxnID: a['xid'] ?? '',
          Md: a['md'] ?? '',
        },
      },
    }),
  )
}

/** postauth: captures a preauth (the amount may be lower than authorized). */
export function garantiPostAuth(
  config: GarantiConfig,
  p: { orderId: string; amount: number; hostReference?: string | undefined },
): Promise<BankOutcome> {
  const body = request(config, { orderId: p.orderId, txnType: 'postauth', amount: p.amount })
  body['Transaction'] = {
    Type: 'postauth',
    Amount: String(p.amount),
    CurrencyCode: TRY_NUMERIC,
    OriginalRetrefNum: p.hostReference ?? '',
  }
  return operation(config, body)
}

/** void: cancels the order's last transaction before the end of day (amount 100, as GVPS wants). */
export function garantiVoid(
  config: GarantiConfig,
  p: { orderId: string; hostReference?: string | undefined },
): Promise<BankOutcome> {
  return operation(
    config,
    request(config, {
      orderId: p.orderId,
      txnType: 'void',
      amount: 100,
      transaction: { OriginalRetrefNum: p.hostReference ?? '' },
    }),
  )
}

/** refund: of a settled sale, full or partial. */
export function garantiRefund(
  config: GarantiConfig,
  p: { orderId: string; amount: number; hostReference?: string | undefined },
): Promise<BankOutcome> {
  return operation(
    config,
    request(config, {
      orderId: p.orderId,
      txnType: 'refund',
      amount: p.amount,
      transaction: { OriginalRetrefNum: p.hostReference ?? '' },
    }),
  )
}

/** GVPS's "no such order" (ReasonCode 0110, "İşlem bulunamadı"). */
const NOT_FOUND = new Set(['0110', '0108'])

/** orderinq: what GVPS holds for the order (decides an ambiguous authorization). */
export async function garantiOrderInquiry(
  config: GarantiConfig,
  p: { orderId: string },
): Promise<InquiryOutcome> {
  const answer = await send(
    config,
    request(config, { orderId: p.orderId, txnType: 'orderinq', amount: 100 }),
  )
  if (answer.kind !== 'answer') return answer
  const response = objectOf(objectOf(answer.doc['Transaction'])['Response'])
  const result = objectOf(objectOf(answer.doc['Order'])['OrderInqResult'])
  if (str(response['Code']) !== '00') {
    return NOT_FOUND.has(str(response['ReasonCode']))
      ? { kind: 'not_found' }
      : { kind: 'unknown', reason: `inquiry refused ${str(response['ReasonCode'])}` }
  }
  const status = str(result['Status']).toUpperCase()
  if (status === '') return { kind: 'not_found' }
  if (status === 'DECLINED') {
    return {
      kind: 'declined',
      bankCode: str(result['ReasonCode']) || str(result['Code']) || 'declined',
    }
  }
  const auth = str(result['AuthAmount'])
  const pre = str(result['PreAuthAmount'])
  const amount =
    /^\d+$/.test(auth) && auth !== '0' ? Number(auth) : /^\d+$/.test(pre) ? Number(pre) : undefined
  if (
    status === 'APPROVED' ||
    status === 'WAITINGPOSTAUTH' ||
    status === 'VOID' ||
    status === 'REFUNDED'
  ) {
    return {
      kind: 'approved',
      authCode: str(result['AuthCode']),
      hostReference: str(result['RetrefNum']),
      amount,
      voided: status === 'VOID',
    }
  }
  return { kind: 'unknown', reason: `order status ${status}` }
}

/** One transaction of GVPS's order list (orderlistinq), as the bank reports it. */
export interface GarantiListedTxn {
  orderId: string
  /** Satis, On Otorizasyon, On Otorizasyon Kapama, Iade, Iptal (mewebstudio/pos's mapper). */
  trxType: string
  /** Basarili / Onaylandi (done), Basarisiz (refused), Iptal (cancelled since). */
  status: string
  /** Kuruş. */
  amount: number
  /** Istanbul wall time, `YYYY-MM-DD HH:mm:ss`. */
  at: string
  retrefNum: string
  origRetrefNum: string
}

/** `dd/MM/yyyy HH:mm` in Istanbul time (UTC+3 all year since 2016), as orderlistinq wants. */
export function garantiListDate(date: Date): string {
  const local = new Date(date.getTime() + 3 * 3_600_000).toISOString()
  return `${local.slice(8, 10)}/${local.slice(5, 7)}/${local.slice(0, 4)} ${local.slice(11, 16)}`
}

/**
 * The orderlistinq request (mewebstudio/pos's GarantiPosRequestDataMapperTest fixture): no
 * order id or card, Amount 100 as GVPS wants, StartDate/EndDate at most 30 days apart, 500
 * transactions a page (`ListPageNum` from 1). HashData as for any request, order id empty.
 */
export function garantiOrderListRequest(
  config: GarantiConfig,
  p: { start: Date; end: Date; page: number; ip?: string },
): GvpsRequest {
  const hash = garantiRequestHash(config.credentials, {
    orderId: '',
    cardNumber: '',
    amount: 100,
    currency: TRY_NUMERIC,
    txnType: 'orderlistinq',
  })
  return {
    Mode: config.mode ?? 'PROD',
    Version: '512',
    Terminal: terminal(config, hash, 'orderlistinq'),
    Customer: { IPAddress: p.ip ?? '' },
    Order: {
      OrderID: '',
      GroupID: '',
      Description: '',
      StartDate: garantiListDate(p.start),
      EndDate: garantiListDate(p.end),
      ListPageNum: String(p.page),
    },
    Transaction: {
      Type: 'orderlistinq',
      Amount: '100',
      CurrencyCode: TRY_NUMERIC,
      CardholderPresentCode: '0',
      MotoInd: 'N',
    },
  }
}

/** Every transaction GVPS lists between two instants, all pages read. */
export async function garantiOrderList(
  config: GarantiConfig,
  p: { start: Date; end: Date },
): Promise<
  | { kind: 'list'; txns: GarantiListedTxn[] }
  | { kind: 'not_sent'; reason: string }
  | { kind: 'unknown'; reason: string }
> {
  const txns: GarantiListedTxn[] = []
  // 500 a page: 200 pages is 100,000 transactions a day, more than any POS of ours.
  for (let page = 1; page <= 200; page++) {
    const answer = await send(config, garantiOrderListRequest(config, { ...p, page }))
    if (answer.kind !== 'answer') return answer
    const response = objectOf(objectOf(answer.doc['Transaction'])['Response'])
    if (str(response['Code']) !== '00') {
      // No transaction in the range is GVPS's "not found", not a failure.
      if (NOT_FOUND.has(str(response['ReasonCode']))) return { kind: 'list', txns }
      return { kind: 'unknown', reason: `list refused ${str(response['ReasonCode'])}` }
    }
    const list = objectOf(
      objectOf(objectOf(answer.doc['Order'])['OrderListInqResult'])['OrderTxnList'],
    )
    const raw = list['OrderTxn']
    const rows = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]
    for (const row of rows) {
      const r = objectOf(row)
      const amount = str(r['AuthAmount'])
      if (!/^\d{1,13}$/.test(amount)) return { kind: 'unknown', reason: 'malformed list amount' }
      txns.push({
        orderId: str(r['OrderID']),
        trxType: str(r['TrxType']),
        status: str(r['Status']),
        amount: Number(amount),
        at: str(r['LastTrxDate']),
        retrefNum: str(r['RetrefNum']),
        origRetrefNum: str(r['OrigRetrefNum']),
      })
    }
    const pages = Number(str(list['TotalPageCount']) || '1')
    if (!(page < pages)) return { kind: 'list', txns }
  }
  return { kind: 'unknown', reason: 'too many pages' }
}
