import { randomBytes, randomInt } from 'node:crypto'
import { safeEqual } from '../../platform/crypto.ts'
import { buildXml, decimalToKurus, parseXml, str } from './bank-wire.ts'
import {
  autoPostPage,
  runSimulator,
  type BankAnswer,
  type RunningSimulator,
  type SimulatorListen,
} from './bank-simulator.ts'
import { estV3Hash, type EstV3Credentials } from './est-v3.ts'

// An EST (Payten) gateway on loopback: the XML API (/fim/api) and the 3D gate
// (/fim/est3Dgate) with the same fields and the same ver3 hash as the real one, its own
// books per OrderId, and the faults of bank-simulator.ts. For tests and the demo only.

export interface EstOrder {
  orderId: string
  pan: string
  type: 'Auth' | 'PreAuth'
  /** Kuruş. */
  amount: number
  captured: number
  refunded: number
  voided: boolean
  status: 'approved' | 'declined'
  procReturnCode: string
  authCode: string
  hostRef: string
  transId: string
}

export interface EstV3Simulator extends RunningSimulator {
  readonly api: string
  readonly threeDGate: string
  readonly orders: Map<string, EstOrder>
  /** Card number → ProcReturnCode the bank declines it with (beside the built-in ones). */
  readonly declines: Map<string, string>
  /** Every callback page the gate rendered, per order (a test replays them). */
  readonly callbacks: Map<string, Record<string, string>[]>
  /** Authorizations that reached the bank (approved or declined). */
  authorizations(): number
}

// Cards the simulated bank always treats the same way (the CONTRACT's test cards).
const BUILT_IN_DECLINES: Readonly<Record<string, string>> = {
  '4000000000000002': '05',
  '4000000000009995': '51',
}
const FAILS_3DS = new Set(['4000000000003063'])

const ERRORS: Readonly<Record<string, string>> = {
  '05': 'Red-Onaylanmadı',
  '51': 'Yetersiz bakiye',
  '54': 'Vadesi dolmuş kart',
  '99': 'Genel hata',
}

function digits(n: number): string {
  return Array.from({ length: n }, () => String(randomInt(10))).join('')
}

function xml(doc: Record<string, string | Record<string, string>>): BankAnswer {
  return {
    status: 200,
    contentType: 'text/xml; charset=ISO-8859-9',
    body: buildXml('CC5Response', doc, 'ISO-8859-9'),
  }
}

export async function startEstV3Simulator(
  credentials: EstV3Credentials,
  at: SimulatorListen = {},
): Promise<EstV3Simulator> {
  const orders = new Map<string, EstOrder>()
  const declines = new Map<string, string>()
  const callbacks = new Map<string, Record<string, string>[]>()
  /** md → the card it stands for (the 3D model's Auth sends md instead of the number). */
  const mds = new Map<string, { pan: string; orderId: string }>()
  let authCount = 0

  const answer = (
    orderId: string,
    code: string,
    extra: Record<string, string> = {},
    order?: EstOrder,
  ) =>
    xml({
      OrderId: orderId,
      GroupId: orderId,
      Response: code === '00' ? 'Approved' : code === '99' ? 'Error' : 'Declined',
      AuthCode: code === '00' ? (order?.authCode ?? '') : '',
      HostRefNum: order?.hostRef ?? '',
      ProcReturnCode: code,
      TransId: order?.transId ?? `${digits(5)}SIM${digits(5)}`,
      ErrMsg: code === '00' ? '' : (ERRORS[code] ?? 'Red'),
      Extra: {
        SETTLEID: '',
        TRXDATE: '20260101 12:00:00',
        ERRORCODE: code === '00' ? '' : (extra['ERRORCODE'] ?? `ISO8583-${code}`),
        NUMCODE: code === '00' ? '00' : code,
        ...extra,
      },
    })

  function declineCodeOf(pan: string): string | null {
    return declines.get(pan) ?? BUILT_IN_DECLINES[pan] ?? null
  }

  function authorize(
    orderId: string,
    pan: string,
    type: 'Auth' | 'PreAuth',
    amount: number,
  ): EstOrder | { duplicate: true } {
    const prior = orders.get(orderId)
    if (prior?.status === 'approved') return { duplicate: true }
    authCount++
    const code = declineCodeOf(pan) ?? '00'
    const order: EstOrder = {
      orderId,
      pan,
      type,
      amount,
      captured: type === 'Auth' && code === '00' ? amount : 0,
      refunded: 0,
      voided: false,
      status: code === '00' ? 'approved' : 'declined',
      procReturnCode: code,
      authCode: code === '00' ? `P${digits(5)}` : '',
      hostRef: digits(12),
      transId: `${digits(5)}SIM${digits(5)}`,
    }
    orders.set(orderId, order)
    return order
  }

  function api(body: string): BankAnswer {
    const doc = parseXml(body, 'CC5Request')
    if (!doc) return { status: 200, contentType: 'text/xml', body: 'Invalid XML' }
    const orderId = str(doc['OrderId'])
    if (
      !safeEqual(str(doc['Name']), credentials.username) ||
      !safeEqual(str(doc['Password']), credentials.password) ||
      !safeEqual(str(doc['ClientId']), credentials.clientId)
    ) {
      return answer(orderId, '99', { ERRORCODE: 'CORE-2001' })
    }
    const extra = doc['Extra']
    if (typeof extra === 'object' && extra !== null && 'ORDERSTATUS' in extra) {
      return orderStatus(orderId)
    }
    const type = str(doc['Type'])
    const total = decimalToKurus(str(doc['Total']))
    const order = orders.get(orderId)
    switch (type) {
      case 'Auth':
      case 'PreAuth': {
        if (total === undefined || total <= 0)
          return answer(orderId, '99', { ERRORCODE: 'CORE-2102' })
        if (str(doc['Currency']) !== '949') return answer(orderId, '99', { ERRORCODE: 'CORE-2103' })
        const number = str(doc['Number'])
        const bound = mds.get(number)
        if (bound && bound.orderId !== orderId)
          return answer(orderId, '99', { ERRORCODE: 'CORE-2507' })
        const made = authorize(orderId, bound?.pan ?? number, type, total)
        if ('duplicate' in made) return answer(orderId, '99', { ERRORCODE: 'CORE-2008' })
        return answer(orderId, made.procReturnCode, {}, made)
      }
      case 'PostAuth': {
        if (order?.status !== 'approved' || order.type !== 'PreAuth' || order.voided) {
          return answer(orderId, '99', { ERRORCODE: 'CORE-2503' })
        }
        const amount = total ?? order.amount
        if (order.captured > 0 || amount > order.amount) {
          return answer(orderId, '99', { ERRORCODE: 'CORE-2504' }, order)
        }
        order.captured = amount
        return answer(orderId, '00', {}, order)
      }
      case 'Void': {
        if (order?.status !== 'approved' || order.voided) {
          return answer(orderId, '99', { ERRORCODE: 'CORE-2008' })
        }
        order.voided = true
        return answer(orderId, '00', {}, order)
      }
      case 'Credit': {
        if (order?.status !== 'approved' || order.voided || order.captured === 0) {
          return answer(orderId, '99', { ERRORCODE: 'CORE-2509' })
        }
        if (total === undefined || order.refunded + total > order.captured) {
          return answer(orderId, '99', { ERRORCODE: 'CORE-2510' }, order)
        }
        order.refunded += total
        return answer(orderId, '00', {}, order)
      }
      default:
        return answer(orderId, '99', { ERRORCODE: 'CORE-2001' })
    }
  }

  function orderStatus(orderId: string): BankAnswer {
    const order = orders.get(orderId)
    if (!order) {
      return xml({
        ErrMsg: `No record found for ${orderId}`,
        ProcReturnCode: '99',
        Response: 'Declined',
        OrderId: '',
        TransId: '',
        Extra: { NUMCODE: '0', TRANS_STAT: '' },
      })
    }
    const state =
      order.status === 'declined'
        ? 'D'
        : order.voided
          ? 'V'
          : order.captured > 0
            ? order.type === 'Auth'
              ? 'S'
              : 'C'
            : 'A'
    return xml({
      ErrMsg: `Record(s) found for ${orderId}`,
      ProcReturnCode: '00',
      Response: 'Approved',
      OrderId: orderId,
      TransId: order.transId,
      Extra: {
        AUTH_CODE: order.authCode,
        HOST_REF_NUM: order.hostRef,
        ORIG_TRANS_AMT: String(order.amount),
        CAPTURE_AMT: order.captured > 0 ? String(order.captured) : '',
        CHARGE_TYPE_CD: 'S',
        TRANS_STAT: state,
        PROC_RET_CD: order.procReturnCode,
        PAN: `${order.pan.slice(0, 4)} ${order.pan.slice(4, 6)}** **** ${order.pan.slice(-4)}`,
        NUMCODE: '0',
      },
    })
  }

  function gate(body: string): BankAnswer {
    const form = Object.fromEntries(new URLSearchParams(body))
    const text = (status: number, msg: string): BankAnswer => ({
      status,
      contentType: 'text/plain; charset=utf-8',
      body: msg,
    })
    if (form['clientid'] !== credentials.clientId) return text(400, 'unknown clientid')
    if (!form['hash'] || form['hash'] !== estV3Hash(form, credentials.storeKey)) {
      return text(400, 'hash mismatch')
    }
    const pan = form['pan'] ?? ''
    const orderId = form['oid'] ?? ''
    const amount = decimalToKurus(form['amount'] ?? '')
    if (amount === undefined || !/^\d{12,19}$/.test(pan)) return text(400, 'bad form')
    const mdStatus = FAILS_3DS.has(pan) ? '0' : '1'
    const md = `${pan.slice(0, 6)}:${randomBytes(32).toString('hex').toUpperCase()}:${digits(4)}:##${credentials.clientId}`
    mds.set(md, { pan, orderId })
    // What the gate posts back: the form's own fields (less the card) and its findings.
    const {
      pan: _pan,
      cv2: _cv2,
      hash: _hash,
      Ecom_Payment_Card_ExpDate_Month: month,
      Ecom_Payment_Card_ExpDate_Year: year,
      ...echoed
    } = form
    const fields: Record<string, string> = {
      ...echoed,
      Ecom_Payment_Card_ExpDate_Month: month ?? '',
      Ecom_Payment_Card_ExpDate_Year: year ?? '',
      maskedCreditCard: `${pan.slice(0, 4)} ${pan.slice(4, 6)}** **** ${pan.slice(-4)}`,
      MaskedPan: `${pan.slice(0, 6)}***${pan.slice(-4)}`,
      md,
      mdStatus,
      txstatus: mdStatus === '1' ? 'Y' : 'N',
      mdErrorMsg: mdStatus === '1' ? 'Authenticated' : 'Not authenticated',
      xid: randomBytes(20).toString('base64'),
      eci: mdStatus === '1' ? '05' : '',
      cavv: mdStatus === '1' ? randomBytes(20).toString('base64') : '',
      ReturnOid: orderId,
    }
    if (form['storetype'] === '3d_pay' && mdStatus === '1') {
      const type = form['islemtipi'] === 'PreAuth' ? 'PreAuth' : 'Auth'
      const made = authorize(orderId, pan, type, amount)
      const order = 'duplicate' in made ? undefined : made
      const code = order?.procReturnCode ?? '99'
      Object.assign(fields, {
        Response: code === '00' ? 'Approved' : 'Declined',
        ProcReturnCode: code,
        AuthCode: order?.authCode ?? '',
        HostRefNum: order?.hostRef ?? '',
        TransId: order?.transId ?? '',
        ErrMsg: code === '00' ? '' : (ERRORS[code] ?? 'Red'),
      })
    }
    fields['HASH'] = estV3Hash(fields, credentials.storeKey)
    const list = callbacks.get(orderId) ?? []
    list.push(fields)
    callbacks.set(orderId, list)
    const ok = mdStatus === '1' && (fields['ProcReturnCode'] ?? '00') === '00'
    const target = (ok ? form['okUrl'] : form['failUrl']) ?? ''
    return {
      status: 200,
      contentType: 'text/html; charset=utf-8',
      body: autoPostPage(target, fields),
    }
  }

  const running = await runSimulator((path, body) => {
    if (path.endsWith('/fim/api')) return api(body)
    if (path.endsWith('/fim/est3Dgate')) return gate(body)
    return { status: 404, contentType: 'text/plain', body: 'not found' }
  }, at)
  return Object.assign(running, {
    api: `${running.base}/fim/api`,
    threeDGate: `${running.base}/fim/est3Dgate`,
    orders,
    declines,
    callbacks,
    authorizations: () => authCount,
  })
}
