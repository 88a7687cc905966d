import { createHash } from 'node:crypto'
import { safeEqual } from '../../platform/crypto.ts'
import {
  buildXml,
  decimalToKurus,
  parseXml,
  postToBank,
  str,
  type BankOutcome,
  type BankTimeouts,
  type InquiryOutcome,
  type ThreeDCallback,
  type ThreeDForm,
  type XmlValue,
} from './bank-wire.ts'
import type { BankEndpoints, CardData } from './est-v3.ts'

// Yapı Kredi PosNet: the MACs of its OOS/3D flow and its XML API. Facts from Yapı Kredi's
// integration guide as mewebstudio/pos (MIT) records them; the published vectors are
// test/acquirer/posnet.test.ts. Field names and response shapes come from the same library's
// request/response data mapper tests (facts, not code). Amounts go in kuruş, currency "TL".

export interface PosnetCredentials {
  merchantId: string
  terminalId: string
  posnetId: string
  /** The encryption key Yapı Kredi issues ("10,10,10,10,10,10,10,10" on its test terminal). */
  encKey: string
}

function sha256Base64(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64')
}

function securityData(c: PosnetCredentials): string {
  return sha256Base64(`${c.encKey};${c.terminalId}`)
}

/** The MAC of a 3D transaction request (oosTranData): order, amount, currency, merchant. */
export function posnetRequestMac(
  c: PosnetCredentials,
  p: { orderId: string; amount: number; currency: string },
): string {
  return sha256Base64(
    [p.orderId, String(p.amount), p.currency, c.merchantId, securityData(c)].join(';'),
  )
}

/** The bank's MAC over its 3D answer (mdStatus, xid, amount, currency, merchant). */
export function posnetResponseMac(
  c: PosnetCredentials,
  fields: Readonly<Record<string, string>>,
): string {
  return sha256Base64(
    [
      fields['mdStatus'] ?? '',
      fields['xid'] ?? '',
      fields['amount'] ?? '',
      fields['currency'] ?? '',
      c.merchantId,
      securityData(c),
    ].join(';'),
  )
}

/** Whether the bank's `mac` over its 3D answer is the one our key gives. */
export function posnetResponseMacValid(
  c: PosnetCredentials,
  fields: Readonly<Record<string, string>>,
): boolean {
  const mac = fields['mac']
  return !!mac && safeEqual(mac, posnetResponseMac(c, fields))
}

// ----- endpoints and order ids -----

/** Yapı Kredi's own URLs (mewebstudio/pos config/pos_test.php, pos_production.php). */
export const POSNET_ENDPOINTS: Readonly<Record<'test' | 'production', BankEndpoints>> = {
  test: {
    api: 'https://setmpos.ykb.com/PosnetWebService/XML',
    threeDGate: 'https://setmpos.ykb.com/3DSWebService/YKBPaymentService',
  },
  production: {
    api: 'https://posnet.yapikredi.com.tr/PosnetWebService/XML',
    threeDGate: 'https://posnet.yapikredi.com.tr/3DSWebService/YKBPaymentService',
  },
}

/** PosNet's currency code for the lira. */
export const POSNET_TRY = 'TL'

/**
 * PosNet takes at most 20 characters of order id (the XID). Ours: its last 20 letters and
 * digits, zero-padded (a payment id's last 20 are 100 random bits).
 */
export function posnetXid(orderId: string): string {
  return orderId
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(-20)
    .padStart(20, '0')
}

/** The 24-character orderID of the XML API: "TDSC" before a 3D order's XID, zeros otherwise. */
export function posnetOrderId(orderId: string, threeD = false): string {
  return `${threeD ? 'TDSC' : '0000'}${posnetXid(orderId)}`
}

export interface PosnetConfig {
  credentials: PosnetCredentials
  endpoints: BankEndpoints
  timeouts?: BankTimeouts
}

function installmentField(count: number): string {
  return count > 1 ? String(count).padStart(2, '0') : '00'
}

/** PosNet's expiry: YYMM. */
function expDate(card: CardData): string {
  return `${String(card.expYear % 100).padStart(2, '0')}${String(card.expMonth).padStart(2, '0')}`
}

// ----- the XML API -----

/** The request document (posnetRequest, ISO-8859-9 as the bank expects; our fields are ASCII). */
export function posnetRequestXml(body: Record<string, XmlValue>): string {
  return buildXml('posnetRequest', body, 'ISO-8859-9')
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}
}

type Answer =
  | { kind: 'answer'; doc: Record<string, unknown> }
  | { kind: 'not_sent'; reason: string }
  | { kind: 'unknown'; reason: string }

async function send(config: PosnetConfig, body: Record<string, XmlValue>): Promise<Answer> {
  const c = config.credentials
  // Posted as the form field xmldata.
  const trip = await postToBank(
    config.endpoints.api,
    `xmldata=${encodeURIComponent(posnetRequestXml({ mid: c.merchantId, tid: c.terminalId, ...body }))}`,
    'application/x-www-form-urlencoded; charset=ISO-8859-9',
    config.timeouts,
  )
  if (trip.kind === 'not_sent') return trip
  if (trip.kind === 'no_answer') return { kind: 'unknown', reason: trip.reason }
  if (trip.status >= 500) return { kind: 'not_sent', reason: `http ${trip.status}` }
  if (trip.status !== 200) return { kind: 'unknown', reason: `http ${trip.status}` }
  const doc = parseXml(trip.body, 'posnetResponse')
  return doc ? { kind: 'answer', doc } : { kind: 'unknown', reason: 'malformed answer' }
}

/** "ORDERID DAHA ONCE KULLANILMIS": the bank holds this order id already. */
const DUPLICATE_ORDER = '0127'

/** approved 1 is the only approval; 0 a refusal (respCode), 2 "done already". */
function outcomeOf(doc: Record<string, unknown>): BankOutcome {
  const approved = str(doc['approved'])
  if (approved === '1') {
    return {
      kind: 'approved',
      authCode: str(doc['authCode']),
      hostReference: str(doc['hostlogkey']),
      transId: str(doc['hostlogkey']),
    }
  }
  const code = str(doc['respCode'])
  return {
    kind: 'declined',
    bankCode: code || `approved-${approved || 'none'}`,
    message: str(doc['respText']),
    ...(approved === '2' || code === DUPLICATE_ORDER ? { duplicateOrder: true } : {}),
  }
}

async function operation(
  config: PosnetConfig,
  body: Record<string, XmlValue>,
): Promise<BankOutcome> {
  const answer = await send(config, body)
  return answer.kind === 'answer' ? outcomeOf(answer.doc) : answer
}

/** sale or auth (pre-authorization) with the card (the non-3D model). */
export function posnetAuthorize(
  config: PosnetConfig,
  p: {
    orderId: string
    amount: number
    installmentCount: number
    preAuth: boolean
    card: CardData
  },
): Promise<BankOutcome> {
  return operation(config, {
    tranDateRequired: '1',
    [p.preAuth ? 'auth' : 'sale']: {
      orderID: posnetOrderId(p.orderId),
      installment: installmentField(p.installmentCount),
      amount: String(p.amount),
      currencyCode: POSNET_TRY,
      ccno: p.card.pan,
      expDate: expDate(p.card),
      cvc: p.card.cvc,
    },
  })
}

/** capt: captures an auth by its hostLogKey (the amount may be lower). */
export function posnetCapture(
  config: PosnetConfig,
  p: {
    orderId: string
    amount: number
    hostReference?: string | undefined
    installmentCount?: number
  },
): Promise<BankOutcome> {
  return operation(config, {
    tranDateRequired: '1',
    capt: {
      hostLogKey: p.hostReference ?? '',
      amount: String(p.amount),
      currencyCode: POSNET_TRY,
      installment: installmentField(p.installmentCount ?? 1),
    },
  })
}

/** One transaction of the order as the agreement inquiry lists it. */
interface PosnetTransaction {
  state: string
  amount: number | undefined
  authCode: string
  hostlogkey: string
}

async function transactionsOf(
  config: PosnetConfig,
  orderId: string,
  threeD: boolean,
): Promise<
  { kind: 'list'; items: PosnetTransaction[] } | Exclude<InquiryOutcome, { kind: 'approved' }>
> {
  const answer = await send(config, { agreement: { orderID: posnetOrderId(orderId, threeD) } })
  if (answer.kind !== 'answer') return answer
  const { doc } = answer
  if (str(doc['approved']) !== '1') {
    return str(doc['respCode']) === '0123'
      ? { kind: 'not_found' }
      : { kind: 'unknown', reason: `inquiry refused ${str(doc['respCode'])}` }
  }
  const raw = objectOf(doc['transactions'])['transaction']
  const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(objectOf)
  if (list.length === 0) return { kind: 'not_found' }
  return {
    kind: 'list',
    items: list.map((t) => ({
      state: str(t['state']),
      amount: decimalToKurus(str(t['amount'])),
      authCode: str(t['authCode']),
      hostlogkey: str(t['hostlogkey']),
    })),
  }
}

/** agreement: what the bank holds for the order (decides an ambiguous authorization). */
export async function posnetOrderStatus(
  config: PosnetConfig,
  p: { orderId: string; threeD?: boolean },
): Promise<InquiryOutcome> {
  const found = await transactionsOf(config, p.orderId, p.threeD ?? false)
  if (found.kind !== 'list') return found
  const first = found.items[0]
  if (!first) return { kind: 'not_found' }
  return {
    kind: 'approved',
    authCode: first.authCode,
    hostReference: first.hostlogkey,
    amount: first.amount,
    voided: found.items.some((t) => t.state === 'Reverse' && t.hostlogkey === first.hostlogkey),
  }
}

/**
 * reverse: cancels before the end of day. PosNet wants to know which transaction (sale,
 * auth, capt), so the order is asked first; a captured auth is reversed capture first.
 */
export async function posnetReverse(
  config: PosnetConfig,
  p: { orderId: string; threeD?: boolean },
): Promise<BankOutcome> {
  const found = await transactionsOf(config, p.orderId, p.threeD ?? false)
  if (found.kind === 'not_sent' || found.kind === 'unknown') return found
  if (found.kind !== 'list') return { kind: 'declined', bankCode: '0123', message: 'no such order' }
  const states = new Set(found.items.map((t) => t.state))
  const reverse = (transaction: string) =>
    operation(config, {
      tranDateRequired: '1',
      reverse: { transaction, orderID: posnetOrderId(p.orderId, p.threeD ?? false) },
    })
  if (states.has('Sale')) return reverse('sale')
  if (states.has('Capture')) {
    const capt = await reverse('capt')
    if (capt.kind !== 'approved') return capt
  }
  return reverse('auth')
}

/** return: a refund of a settled sale or capture, full or partial. */
export function posnetReturn(
  config: PosnetConfig,
  p: { orderId: string; amount: number; threeD?: boolean },
): Promise<BankOutcome> {
  return operation(config, {
    tranDateRequired: '1',
    return: {
      amount: String(p.amount),
      currencyCode: POSNET_TRY,
      orderID: posnetOrderId(p.orderId, p.threeD ?? false),
    },
  })
}

// ----- 3-D Secure (OOS) -----

/**
 * The 3D form: the bank first encrypts the card and order (oosRequestData → data1, data2,
 * sign), then the buyer's browser posts them to YKBPaymentService.
 */
export async function posnetThreeDForm(
  config: PosnetConfig,
  p: {
    orderId: string
    amount: number
    installmentCount: number
    preAuth: boolean
    returnUrl: string
    card: CardData
    cardHolderName?: string
    lang?: 'tr' | 'en'
  },
): Promise<{ ok: true; form: ThreeDForm } | { ok: false; outcome: BankOutcome }> {
  const c = config.credentials
  const answer = await send(config, {
    oosRequestData: {
      posnetid: c.posnetId,
      ccno: p.card.pan,
      expDate: expDate(p.card),
      cvc: p.card.cvc,
      amount: String(p.amount),
      currencyCode: POSNET_TRY,
      installment: installmentField(p.installmentCount),
      XID: posnetXid(p.orderId),
      cardHolderName: p.cardHolderName ?? '',
      tranType: p.preAuth ? 'Auth' : 'Sale',
    },
  })
  if (answer.kind !== 'answer') return { ok: false, outcome: answer }
  const data = objectOf(answer.doc['oosRequestDataResponse'])
  if (str(answer.doc['approved']) !== '1' || !str(data['data1'])) {
    return { ok: false, outcome: outcomeOf(answer.doc) }
  }
  return {
    ok: true,
    form: {
      action: config.endpoints.threeDGate,
      fields: {
        mid: c.merchantId,
        posnetID: c.posnetId,
        posnetData: str(data['data1']),
        posnetData2: str(data['data2']),
        digest: str(data['sign']),
        merchantReturnURL: p.returnUrl,
        url: '',
        lang: p.lang ?? 'tr',
      },
    },
  }
}

/**
 * Checks the bank's callback: the packets are resolved by the bank (oosResolveMerchantData,
 * with our MAC over our own order: a packet of another order or amount is refused there),
 * then its answer's MAC under our key, then its XID, amount and currency against ours.
 */
export async function posnetVerifyCallback(
  config: PosnetConfig,
  fields: Readonly<Record<string, string>>,
  expected: { orderId: string; amount: number },
): Promise<ThreeDCallback> {
  const bankData = fields['BankPacket']
  const merchantData = fields['MerchantPacket']
  const sign = fields['Sign']
  if (!bankData || !merchantData || !sign) return { ok: false, reason: 'malformed' }
  const c = config.credentials
  const xid = posnetXid(expected.orderId)
  const answer = await send(config, {
    oosResolveMerchantData: {
      bankData,
      merchantData,
      sign,
      mac: posnetRequestMac(c, { orderId: xid, amount: expected.amount, currency: POSNET_TRY }),
    },
  })
  if (answer.kind !== 'answer') return { ok: false, reason: 'unavailable' }
  if (str(answer.doc['approved']) !== '1') return { ok: false, reason: 'hash_mismatch' }
  const raw = objectOf(answer.doc['oosResolveMerchantDataResponse'])
  const resolved = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, str(v)]))
  if (!posnetResponseMacValid(c, resolved)) return { ok: false, reason: 'hash_mismatch' }
  if (resolved['xid'] !== xid) return { ok: false, reason: 'order_mismatch' }
  if (resolved['amount'] !== String(expected.amount) || resolved['currency'] !== POSNET_TRY) {
    return { ok: false, reason: 'amount_mismatch' }
  }
  const mdStatus = resolved['mdStatus'] ?? ''
  return {
    ok: true,
    authenticated: mdStatus === '1',
    mdStatus,
    authentication: { bankData, merchantData, sign, xid },
  }
}

/** oosTranData: the 3D payment, with the resolved packets and our MAC. */
export function posnetAuthorize3d(
  config: PosnetConfig,
  p: { orderId: string; amount: number; authentication: Record<string, string> },
): Promise<BankOutcome> {
  const a = p.authentication
  return operation(config, {
    oosTranData: {
      bankData: a['bankData'] ?? '',
      merchantData: a['merchantData'] ?? '',
      sign: a['sign'] ?? '',
      wpAmount: '0',
      mac: posnetRequestMac(config.credentials, {
        orderId: posnetXid(p.orderId),
        amount: p.amount,
        currency: POSNET_TRY,
      }),
    },
  })
}
