import { safeEqual } from '../../platform/crypto.ts'
import { randomBytes, randomInt } from 'node:crypto'
import { kurusToDecimal, buildXml, parseXml, str, type XmlValue } from './bank-wire.ts'
import {
  autoPostPage,
  runSimulator,
  type BankAnswer,
  type RunningSimulator,
  type SimulatorListen,
} from './bank-simulator.ts'
import {
  POSNET_TRY,
  posnetRequestMac,
  posnetResponseMac,
  type PosnetCredentials,
} from './posnet.ts'

// Yapı Kredi PosNet on loopback: the XML API (/PosnetWebService/XML, form field xmldata)
// and the 3D gate (/3DSWebService/YKBPaymentService) with the same fields and MACs as the
// real one, its own books per orderID, and the faults of bank-simulator.ts. The bank's
// encrypted packets (data1/data2, MerchantPacket/BankPacket) are opaque random tokens here.
// For tests and the demo only; codes the fixtures do not show are the simulator's own.

export interface PosnetOrder {
  /** The 24-character orderID. */
  orderId: string
  pan: string
  type: 'sale' | 'auth'
  /** Kuruş. */
  amount: number
  captured: number
  refunded: number
  voided: boolean
  hostlogkey: string
  captureKey: string
  authCode: string
  /** Two digits, as sent ("00" for one payment). */
  installment: string
}

export interface PosnetSimulator extends RunningSimulator {
  readonly api: string
  readonly threeDGate: string
  /** Approved orders by orderID (declined ones leave no order at PosNet). */
  readonly orders: Map<string, PosnetOrder>
  /** Card number → the 4-digit respCode the bank declines it with. */
  readonly declines: Map<string, string>
  readonly callbacks: Map<string, Record<string, string>[]>
  authorizations(): number
}

const BUILT_IN_DECLINES: Readonly<Record<string, string>> = {
  '4000000000000002': '0005',
  '4000000000009995': '0051',
}
const FAILS_3DS = new Set(['4000000000003063'])

interface Session {
  pan: string
  amount: number
  currency: string
  xid: string
  tranType: 'Sale' | 'Auth'
  data1: string
  sign: string
  merchantPacket?: string
  bankPacket?: string
  packetSign?: string
  mdStatus?: string
}

function digits(n: number): string {
  return Array.from({ length: n }, () => String(randomInt(10))).join('')
}
const hex = (bytes: number) => randomBytes(bytes).toString('hex').toUpperCase()

function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}
}

export async function startPosnetSimulator(
  credentials: PosnetCredentials,
  at: SimulatorListen = {},
): Promise<PosnetSimulator> {
  const orders = new Map<string, PosnetOrder>()
  const declines = new Map<string, string>()
  const callbacks = new Map<string, Record<string, string>[]>()
  const sessions = new Map<string, Session>()
  let authCount = 0

  const xml = (doc: Record<string, XmlValue>): BankAnswer => ({
    status: 200,
    contentType: 'text/xml; charset=ISO-8859-9',
    body: buildXml('posnetResponse', doc, 'ISO-8859-9'),
  })
  const refuse = (respCode: string, respText: string) => xml({ approved: '0', respCode, respText })
  const approved = (order: PosnetOrder, hostlogkey = order.hostlogkey) =>
    xml({
      approved: '1',
      respCode: '',
      respText: '',
      hostlogkey,
      authCode: order.authCode,
      tranDate: '260101120000',
    })

  function authorize(
    orderId: string,
    pan: string,
    type: 'sale' | 'auth',
    amount: number,
    installment = '00',
  ): BankAnswer {
    const prior = orders.get(orderId)
    if (prior) {
      return xml({
        approved: '2',
        respCode: '0127',
        respText: 'ORDERID DAHA ONCE KULLANILMIS 0127',
        hostlogkey: prior.hostlogkey,
        authCode: prior.authCode,
      })
    }
    authCount++
    const code = declines.get(pan) ?? BUILT_IN_DECLINES[pan]
    if (code) return refuse(code, 'RED-ONAYLANMADI')
    const order: PosnetOrder = {
      orderId,
      pan,
      type,
      amount,
      captured: type === 'sale' ? amount : 0,
      refunded: 0,
      voided: false,
      hostlogkey: `0${digits(17)}`,
      captureKey: '',
      authCode: digits(6),
      installment,
    }
    orders.set(orderId, order)
    return approved(order)
  }

  function agreement(orderId: string): BankAnswer {
    const order = orders.get(orderId)
    if (!order) return refuse('0123', 'ISLEM BULUNAMADI')
    const row = (state: string, amount: number, hostlogkey: string) => ({
      orderID: orderId,
      ccno: `${order.pan.slice(0, 4)} ${order.pan.slice(4, 6)}** **** ${order.pan.slice(-4)}`,
      amount: kurusToDecimal(amount).replace('.', ','),
      currencyCode: POSNET_TRY,
      authCode: order.authCode,
      tranDate: '2026-01-01 12:00:00.000',
      state,
      txnStatus: '1',
      hostlogkey,
    })
    const list: Record<string, string>[] = [
      row(order.type === 'sale' ? 'Sale' : 'Auth', order.amount, order.hostlogkey),
    ]
    if (order.type === 'auth' && order.captured > 0) {
      list.push(row('Capture', order.captured, order.captureKey))
    }
    if (order.voided) list.push(row('Reverse', order.amount, order.hostlogkey))
    if (order.refunded > 0) list.push(row('Return', order.refunded, order.hostlogkey))
    return xml({ approved: '1', transactions: { transaction: list } })
  }

  function threeDRequest(data: Record<string, unknown>): BankAnswer {
    if (str(data['posnetid']) !== credentials.posnetId) return refuse('0148', 'INVALID POSNETID')
    const amount = /^\d{1,13}$/.test(str(data['amount'])) ? Number(str(data['amount'])) : 0
    const pan = str(data['ccno'])
    const xid = str(data['XID'])
    if (amount <= 0 || !/^\d{12,19}$/.test(pan) || !/^[A-Za-z0-9]{20}$/.test(xid)) {
      return refuse('0002', 'EKSIK VEYA HATALI ALAN')
    }
    const session: Session = {
      pan,
      amount,
      currency: str(data['currencyCode']),
      xid,
      tranType: str(data['tranType']) === 'Auth' ? 'Auth' : 'Sale',
      data1: hex(64),
      sign: hex(16),
    }
    sessions.set(session.data1, session)
    return xml({
      approved: '1',
      respCode: '',
      respText: '',
      oosRequestDataResponse: { data1: session.data1, data2: hex(48), sign: session.sign },
    })
  }

  function sessionOfPackets(data: Record<string, unknown>): Session | undefined {
    const s = [...sessions.values()].find((x) => x.merchantPacket === str(data['merchantData']))
    return s && s.bankPacket === str(data['bankData']) && s.packetSign === str(data['sign'])
      ? s
      : undefined
  }

  function macOk(s: Session, mac: string): boolean {
    return safeEqual(
      mac,
      posnetRequestMac(credentials, { orderId: s.xid, amount: s.amount, currency: s.currency }),
    )
  }

  function api(body: string): BankAnswer {
    const doc = parseXml(new URLSearchParams(body).get('xmldata') ?? '', 'posnetRequest')
    if (!doc) return { status: 200, contentType: 'text/plain', body: 'Invalid XML' }
    if (str(doc['mid']) !== credentials.merchantId || str(doc['tid']) !== credentials.terminalId) {
      return refuse('0148', 'INVALID MID TID IP')
    }
    for (const type of ['sale', 'auth'] as const) {
      if (!(type in doc)) continue
      const t = obj(doc[type])
      const amount = /^\d{1,13}$/.test(str(t['amount'])) ? Number(str(t['amount'])) : 0
      if (amount <= 0 || str(t['currencyCode']) !== POSNET_TRY) {
        return refuse('0002', 'EKSIK VEYA HATALI ALAN')
      }
      return authorize(str(t['orderID']), str(t['ccno']), type, amount, str(t['installment']))
    }
    if ('capt' in doc) {
      const t = obj(doc['capt'])
      const order = [...orders.values()].find((o) => o.hostlogkey === str(t['hostLogKey']))
      const amount = Number(str(t['amount']))
      if (!order || order.type !== 'auth' || order.voided) return refuse('0123', 'ISLEM BULUNAMADI')
      if (str(t['installment']) !== order.installment) {
        return refuse('0002', 'TAKSIT SAYISI PROVIZYONLA AYNI OLMALI')
      }
      if (order.captured > 0 || !(amount > 0) || amount > order.amount) {
        return refuse('0224', 'PROVIZYON KAPATILAMAZ')
      }
      order.captured = amount
      order.captureKey = `0${digits(17)}`
      return approved(order, order.captureKey)
    }
    if ('reverse' in doc) {
      const t = obj(doc['reverse'])
      const order = orders.get(str(t['orderID']))
      const transaction = str(t['transaction'])
      if (!order || order.voided) return refuse('0123', 'ISLEM BULUNAMADI')
      if (transaction === 'capt') {
        if (order.captured === 0 || order.type !== 'auth') return refuse('0123', 'ISLEM BULUNAMADI')
        order.captured = 0
        return approved(order, order.captureKey)
      }
      if (transaction !== (order.type === 'sale' ? 'sale' : 'auth')) {
        return refuse('0123', 'ISLEM BULUNAMADI')
      }
      if (order.type === 'auth' && order.captured > 0) return refuse('0225', 'ONCE CAPT IPTAL')
      order.voided = true
      return approved(order)
    }
    if ('return' in doc) {
      const t = obj(doc['return'])
      const order = orders.get(str(t['orderID']))
      const amount = Number(str(t['amount']))
      if (!order || order.voided || order.captured === 0) return refuse('0123', 'ISLEM BULUNAMADI')
      if (!(amount > 0) || order.refunded + amount > order.captured) {
        return refuse('0226', 'IADE TUTARI HATALI')
      }
      order.refunded += amount
      return approved(order)
    }
    if ('agreement' in doc) return agreement(str(obj(doc['agreement'])['orderID']))
    if ('oosRequestData' in doc) return threeDRequest(obj(doc['oosRequestData']))
    if ('oosResolveMerchantData' in doc) {
      const t = obj(doc['oosResolveMerchantData'])
      const s = sessionOfPackets(t)
      if (!s) return refuse('E219', 'PAKET HATALI')
      if (!macOk(s, str(t['mac']))) return refuse('E216', 'Mac Doğrulama hatalı')
      const resolved: Record<string, string> = {
        xid: s.xid,
        amount: String(s.amount),
        currency: s.currency,
        installment: '00',
        point: '0',
        pointAmount: '0',
        txStatus: s.mdStatus === '1' ? 'Y' : 'N',
        mdStatus: s.mdStatus ?? '0',
        mdErrorMessage: s.mdStatus === '1' ? '' : 'Not authenticated',
      }
      resolved['mac'] = posnetResponseMac(credentials, resolved)
      return xml({
        approved: '1',
        respCode: '',
        respText: '',
        oosResolveMerchantDataResponse: resolved,
      })
    }
    if ('oosTranData' in doc) {
      const t = obj(doc['oosTranData'])
      const s = sessionOfPackets(t)
      if (!s) return refuse('E219', 'PAKET HATALI')
      if (!macOk(s, str(t['mac']))) return refuse('E216', 'Mac Doğrulama hatalı')
      if (s.mdStatus !== '1') return refuse('0400', '3D DOGRULAMA BASARISIZ')
      return authorize(`TDSC${s.xid}`, s.pan, s.tranType === 'Auth' ? 'auth' : 'sale', s.amount)
    }
    return refuse('0002', 'BILINMEYEN ISLEM')
  }

  function gate(body: string): BankAnswer {
    const form = Object.fromEntries(new URLSearchParams(body))
    const text = (status: number, msg: string): BankAnswer => ({
      status,
      contentType: 'text/plain; charset=utf-8',
      body: msg,
    })
    const s = sessions.get(form['posnetData'] ?? '')
    if (form['mid'] !== credentials.merchantId || form['posnetID'] !== credentials.posnetId) {
      return text(400, 'unknown merchant')
    }
    if (!s || form['digest'] !== s.sign) return text(400, 'digest mismatch')
    s.mdStatus = FAILS_3DS.has(s.pan) ? '0' : '1'
    s.merchantPacket = hex(96)
    s.bankPacket = hex(64)
    s.packetSign = hex(16)
    const fields: Record<string, string> = {
      MerchantPacket: s.merchantPacket,
      BankPacket: s.bankPacket,
      Sign: s.packetSign,
      CCPrefix: s.pan.slice(0, 6),
      TranType: s.tranType,
      PosnetAmount: String(s.amount),
      Xid: s.xid,
      MerchantId: credentials.merchantId,
    }
    const list = callbacks.get(s.xid) ?? []
    list.push(fields)
    callbacks.set(s.xid, list)
    return {
      status: 200,
      contentType: 'text/html; charset=utf-8',
      body: autoPostPage(form['merchantReturnURL'] ?? '', fields),
    }
  }

  const running = await runSimulator((path, body) => {
    if (path.endsWith('/PosnetWebService/XML')) return api(body)
    if (path.endsWith('/3DSWebService/YKBPaymentService')) return gate(body)
    return { status: 404, contentType: 'text/plain', body: 'not found' }
  }, at)
  return Object.assign(running, {
    api: `${running.base}/PosnetWebService/XML`,
    threeDGate: `${running.base}/3DSWebService/YKBPaymentService`,
    orders,
    declines,
    callbacks,
    authorizations: () => authCount,
  })
}
