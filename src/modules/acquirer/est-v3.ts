import { createHash, randomBytes } from 'node:crypto'
import { safeEqual } from '../../platform/crypto.ts'
import {
  buildXml,
  decimalToKurus,
  kurusToDecimal,
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

// Payten (Asseco) EST gateway with hash version 3: İşbank, Halkbank, Ziraat, TEB, Şekerbank,
// Akbank's EST. Facts (field names, the ver3 hash, mdStatus and ProcReturnCode meanings,
// ORDERSTATUS fields) from the banks' integration guides as the mewebstudio/pos (MIT) tests
// record them; its published vectors are test/acquirer/est-v3.test.ts.

export interface EstV3Credentials {
  clientId: string
  username: string
  password: string
  storeKey: string
}

export interface BankEndpoints {
  /** The XML API. */
  api: string
  /** The 3-D Secure gate the buyer's browser posts the form to. */
  threeDGate: string
}

export interface EstV3Config {
  credentials: EstV3Credentials
  endpoints: BankEndpoints
  timeouts?: BankTimeouts
}

/** Built-in endpoints per EST bank (test: Payten's integration host; production: the bank's). */
export const EST_V3_BANKS: Readonly<
  Record<string, { name: string; test: BankEndpoints; production: BankEndpoints }>
> = Object.fromEntries(
  (
    [
      ['isbank', 'İş Bankası', 'https://sanalpos.isbank.com.tr/fim'],
      ['halkbank', 'Halkbank', 'https://sanalpos.halkbank.com.tr/fim'],
      ['ziraat', 'Ziraat Bankası', 'https://sanalpos2.ziraatbank.com.tr/fim'],
      ['teb', 'TEB', 'https://sanalpos.teb.com.tr/fim'],
      ['sekerbank', 'Şekerbank', 'https://sanalpos.sekerbank.com.tr/fim'],
      ['akbank', 'Akbank', 'https://www.sanalakpos.com/fim'],
    ] as const
  ).map(([code, name, base]) => [
    code,
    {
      name,
      test: {
        api: 'https://entegrasyon.asseco-see.com.tr/fim/api',
        threeDGate: 'https://entegrasyon.asseco-see.com.tr/fim/est3Dgate',
      },
      production: { api: `${base}/api`, threeDGate: `${base}/est3Dgate` },
    },
  ]),
)

/**
 * PHP's strnatcasecmp (ksort with SORT_NATURAL | SORT_FLAG_CASE), which orders the fields of
 * the ver3 hash: case folded to upper, runs of digits compared as numbers.
 */
export function naturalCaseCompare(a: string, b: string): number {
  const x = a.toUpperCase()
  const y = b.toUpperCase()
  let i = 0
  let j = 0
  while (i < x.length && j < y.length) {
    const cx = x.charCodeAt(i)
    const cy = y.charCodeAt(j)
    const dx = cx >= 48 && cx <= 57
    const dy = cy >= 48 && cy <= 57
    if (dx && dy) {
      let ei = i
      let ej = j
      while (ei < x.length && /\d/.test(x[ei] ?? '')) ei++
      while (ej < y.length && /\d/.test(y[ej] ?? '')) ej++
      const nx = x.slice(i, ei).replace(/^0+(?=\d)/, '')
      const ny = y.slice(j, ej).replace(/^0+(?=\d)/, '')
      if (nx.length !== ny.length) return nx.length - ny.length
      if (nx !== ny) return nx < ny ? -1 : 1
      i = ei
      j = ej
      continue
    }
    if (cx !== cy) return cx - cy
    i++
    j++
  }
  return x.length - i - (y.length - j)
}

const NOT_HASHED = new Set(['hash', 'encoding', 'nationalidno'])

/**
 * The ver3 hash: every field but hash/encoding (sorted naturally, case-insensitively), then
 * the store key, each with `\` and `|` escaped, joined by `|`, SHA-512, base64.
 */
export function estV3Hash(
  fields: Readonly<Record<string, string | null | undefined>>,
  storeKey: string,
): string {
  const keys = Object.keys(fields)
    .filter((k) => !NOT_HASHED.has(k.toLowerCase()))
    .sort(naturalCaseCompare)
  const values = [...keys.map((k) => fields[k] ?? ''), storeKey].map((v) =>
    v.replaceAll('\\', '\\\\').replaceAll('|', '\\|'),
  )
  return createHash('sha512').update(values.join('|'), 'utf8').digest('base64')
}

export interface CardData {
  pan: string
  expMonth: number
  expYear: number
  cvc: string
}

function expires(card: CardData): { month: string; year: string } {
  return {
    month: String(card.expMonth).padStart(2, '0'),
    year: String(card.expYear % 100).padStart(2, '0'),
  }
}

function installmentField(count: number): string {
  return count > 1 ? String(count) : ''
}

/** The form the buyer's browser posts to the 3D gate (3D: authenticate; 3D Pay: also pay). */
export function estV3ThreeDForm(
  config: EstV3Config,
  p: {
    orderId: string
    amount: number
    installmentCount: number
    preAuth: boolean
    model: '3d' | '3d_pay'
    okUrl: string
    failUrl: string
    card: CardData
    lang?: 'tr' | 'en'
    rnd?: string
  },
): ThreeDForm {
  const exp = expires(p.card)
  const fields: Record<string, string> = {
    clientid: config.credentials.clientId,
    storetype: p.model,
    amount: kurusToDecimal(p.amount),
    oid: p.orderId,
    okUrl: p.okUrl,
    failUrl: p.failUrl,
    rnd: p.rnd ?? randomBytes(15).toString('base64url'),
    lang: p.lang ?? 'tr',
    currency: TRY_NUMERIC,
    taksit: installmentField(p.installmentCount),
    islemtipi: p.preAuth ? 'PreAuth' : 'Auth',
    hashAlgorithm: 'ver3',
    pan: p.card.pan,
    Ecom_Payment_Card_ExpDate_Month: exp.month,
    Ecom_Payment_Card_ExpDate_Year: exp.year,
    cv2: p.card.cvc,
  }
  fields['hash'] = estV3Hash(fields, config.credentials.storeKey)
  return { action: config.endpoints.threeDGate, fields }
}

/** mdStatus 1 is a full authentication; anything else is refused (no liability shift). */
function authenticatedBy(mdStatus: string): boolean {
  return mdStatus === '1'
}

/**
 * Checks the gate's callback: HASH over every posted field under our store key, then the
 * order, the amount and the currency against ours. Anything off → `ok: false`, and nothing
 * may be authorized or captured on it.
 */
export function estV3VerifyCallback(
  config: EstV3Config,
  fields: Readonly<Record<string, string>>,
  expected: { orderId: string; amount: number },
): ThreeDCallback {
  const hash = fields['HASH'] ?? fields['hash']
  if (!hash || typeof fields['mdStatus'] !== 'string') return { ok: false, reason: 'malformed' }
  if (!safeEqual(hash, estV3Hash(fields, config.credentials.storeKey))) {
    return { ok: false, reason: 'hash_mismatch' }
  }
  if (fields['oid'] !== expected.orderId || fields['clientid'] !== config.credentials.clientId) {
    return { ok: false, reason: 'order_mismatch' }
  }
  const amount = decimalToKurus(fields['amount'] ?? '')
  if (amount !== expected.amount || (fields['currency'] ?? TRY_NUMERIC) !== TRY_NUMERIC) {
    return { ok: false, reason: 'amount_mismatch' }
  }
  const mdStatus = fields['mdStatus']
  const authenticated = authenticatedBy(mdStatus)
  const authentication = {
    md: fields['md'] ?? '',
    xid: fields['xid'] ?? '',
    eci: fields['eci'] ?? '',
    cavv: fields['cavv'] ?? '',
  }
  if (fields['storetype'] !== '3d_pay') return { ok: true, authenticated, mdStatus, authentication }
  const code = fields['ProcReturnCode'] ?? ''
  const payment: BankOutcome =
    authenticated && code === '00' && fields['Response'] === 'Approved'
      ? {
          kind: 'approved',
          authCode: fields['AuthCode'] ?? '',
          hostReference: fields['HostRefNum'] ?? '',
          transId: fields['TransId'] ?? '',
        }
      : { kind: 'declined', bankCode: code || `md${mdStatus}`, message: fields['ErrMsg'] ?? '' }
  return { ok: true, authenticated, mdStatus, authentication, payment }
}

// ----- the XML API -----

type EstRequest = Record<string, string | Record<string, string>>

function account(config: EstV3Config): EstRequest {
  const c = config.credentials
  return { Name: c.username, Password: c.password, ClientId: c.clientId }
}

/** The request document, ISO-8859-9 as the gateway expects (our fields are ASCII). */
export function estV3RequestXml(request: EstRequest): string {
  return buildXml('CC5Request', request, 'ISO-8859-9')
}

async function send(
  config: EstV3Config,
  request: EstRequest,
): Promise<
  | { kind: 'answer'; doc: Record<string, unknown> }
  | { kind: 'not_sent'; reason: string }
  | { kind: 'unknown'; reason: string }
> {
  const trip = await postToBank(
    config.endpoints.api,
    estV3RequestXml(request),
    'application/x-www-form-urlencoded; charset=ISO-8859-9',
    config.timeouts,
  )
  if (trip.kind === 'not_sent') return trip
  if (trip.kind === 'no_answer') return { kind: 'unknown', reason: trip.reason }
  // A 5xx comes from the bank's front before the gateway accepted anything.
  if (trip.status >= 500) return { kind: 'not_sent', reason: `http ${trip.status}` }
  if (trip.status !== 200) return { kind: 'unknown', reason: `http ${trip.status}` }
  const doc = parseXml(trip.body, 'CC5Response')
  return doc ? { kind: 'answer', doc } : { kind: 'unknown', reason: 'malformed answer' }
}

function extraOf(doc: Record<string, unknown>): Record<string, unknown> {
  const extra = doc['Extra']
  return typeof extra === 'object' && extra !== null ? (extra as Record<string, unknown>) : {}
}

/** ProcReturnCode 00 + Response Approved is the only approval. */
function outcomeOf(doc: Record<string, unknown>): BankOutcome {
  const code = str(doc['ProcReturnCode'])
  if (code === '00' && str(doc['Response']) === 'Approved') {
    return {
      kind: 'approved',
      authCode: str(doc['AuthCode']),
      hostReference: str(doc['HostRefNum']),
      transId: str(doc['TransId']),
    }
  }
  const errorCode = str(extraOf(doc)['ERRORCODE'])
  return { kind: 'declined', bankCode: errorCode || code || 'error', message: str(doc['ErrMsg']) }
}

async function operation(config: EstV3Config, request: EstRequest): Promise<BankOutcome> {
  const answer = await send(config, request)
  return answer.kind === 'answer' ? outcomeOf(answer.doc) : answer
}

/** Auth (sale) or PreAuth with the card (the non-3D "regular" model). */
export function estV3Authorize(
  config: EstV3Config,
  p: {
    orderId: string
    amount: number
    installmentCount: number
    preAuth: boolean
    card: CardData
    ip?: string
  },
): Promise<BankOutcome> {
  const exp = expires(p.card)
  return operation(config, {
    ...account(config),
    Type: p.preAuth ? 'PreAuth' : 'Auth',
    IPAddress: p.ip ?? '',
    OrderId: p.orderId,
    Total: kurusToDecimal(p.amount),
    Currency: TRY_NUMERIC,
    Taksit: installmentField(p.installmentCount),
    Number: p.card.pan,
    Expires: `${exp.month}/${exp.year}`,
    Cvv2Val: p.card.cvc,
    Mode: 'P',
  })
}

/** Auth or PreAuth of the 3D model, with what the verified callback carried. */
export function estV3Authorize3d(
  config: EstV3Config,
  p: {
    orderId: string
    amount: number
    installmentCount: number
    preAuth: boolean
    authentication: Record<string, string>
    ip?: string
  },
): Promise<BankOutcome> {
  return operation(config, {
    ...account(config),
    Type: p.preAuth ? 'PreAuth' : 'Auth',
    IPAddress: p.ip ?? '',
    OrderId: p.orderId,
    Total: kurusToDecimal(p.amount),
    Currency: TRY_NUMERIC,
    Taksit: installmentField(p.installmentCount),
    Number: p.authentication['md'] ?? '',
    PayerTxnId: p.authentication['xid'] ?? '',
    PayerSecurityLevel: p.authentication['eci'] ?? '',
    PayerAuthenticationCode: p.authentication['cavv'] ?? '',
    Mode: 'P',
  })
}

/** PostAuth: captures a PreAuth (the amount may be lower than authorized). */
export function estV3PostAuth(
  config: EstV3Config,
  p: { orderId: string; amount: number },
): Promise<BankOutcome> {
  return operation(config, {
    ...account(config),
    Type: 'PostAuth',
    OrderId: p.orderId,
    Total: kurusToDecimal(p.amount),
  })
}

/** Void: cancels the order's last transaction before the bank's end of day. */
export function estV3Void(config: EstV3Config, p: { orderId: string }): Promise<BankOutcome> {
  return operation(config, { ...account(config), Type: 'Void', OrderId: p.orderId })
}

/** Credit: a refund of a settled sale (after the end of day), full or partial. */
export function estV3Credit(
  config: EstV3Config,
  p: { orderId: string; amount: number },
): Promise<BankOutcome> {
  return operation(config, {
    ...account(config),
    Type: 'Credit',
    OrderId: p.orderId,
    Currency: TRY_NUMERIC,
    Total: kurusToDecimal(p.amount),
  })
}

/** ORDERSTATUS: what the bank holds for the order (decides an ambiguous authorization). */
export async function estV3OrderStatus(
  config: EstV3Config,
  p: { orderId: string },
): Promise<InquiryOutcome> {
  const answer = await send(config, {
    ...account(config),
    OrderId: p.orderId,
    Extra: { ORDERSTATUS: 'QUERY' },
  })
  if (answer.kind !== 'answer') return answer
  const { doc } = answer
  const extra = extraOf(doc)
  const state = str(extra['TRANS_STAT'])
  if (str(doc['ProcReturnCode']) !== '00' || state === '') return { kind: 'not_found' }
  if (state === 'D' || state === 'ERR') {
    return { kind: 'declined', bankCode: str(extra['PROC_RET_CD']) || 'declined' }
  }
  // ORIG_TRANS_AMT is in kuruş (minor units), unlike Total.
  const raw = str(extra['ORIG_TRANS_AMT'])
  return {
    kind: 'approved',
    authCode: str(extra['AUTH_CODE']),
    hostReference: str(extra['HOST_REF_NUM']),
    amount: /^\d+$/.test(raw) ? Number(raw) : undefined,
    voided: state === 'V' || state === 'CNCL',
  }
}
