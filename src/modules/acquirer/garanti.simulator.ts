import { randomBytes, randomInt } from 'node:crypto'
import { safeEqual } from '../../platform/crypto.ts'
import { buildXml, parseXml, str, type XmlValue } from './bank-wire.ts'
import {
  autoPostPage,
  runSimulator,
  type BankAnswer,
  type RunningSimulator,
  type SimulatorListen,
} from './bank-simulator.ts'
import {
  GARANTI_DUPLICATE_ORDER,
  garanti3dHash,
  garantiCallbackHash,
  garantiRequestHash,
  type GarantiCredentials,
} from './garanti.ts'

// Garanti BBVA's GVPS on loopback: the XML provisioning API (/VPServlet) and the 3D gate
// (/servlet/gt3dengine) with the same fields, HashData (hashed password) and callback hash
// as the real one, its own books per OrderID, and the faults of bank-simulator.ts. For
// tests and the demo only. Codes the fixtures do not show are the simulator's own
// (docs/acquiring.md lists them).

export interface GarantiOrder {
  orderId: string
  pan: string
  type: 'sales' | 'preauth'
  /** Kuruş. */
  amount: number
  captured: number
  refunded: number
  voided: boolean
  status: 'approved' | 'declined'
  code: string
  authCode: string
  retrefNum: string
}

/** One line of the bank's transaction list (orderlistinq), kept as the bank would list it. */
export interface GarantiSimTxn {
  orderId: string
  trxType: 'Satis' | 'On Otorizasyon' | 'On Otorizasyon Kapama' | 'Iade' | 'Iptal'
  status: 'Basarili' | 'Basarisiz'
  /** Kuruş. */
  amount: number
  at: Date
  retrefNum: string
  origRetrefNum: string
}

export interface GarantiSimulator extends RunningSimulator {
  readonly api: string
  /** The day lists' lines, in order (a test may plant or edit one: a reconciliation mismatch). */
  readonly transactions: GarantiSimTxn[]
  readonly threeDGate: string
  readonly orders: Map<string, GarantiOrder>
  /** Card number → the host's refusal code (beside the built-in ones). */
  readonly declines: Map<string, string>
  /** Every callback the gate rendered, per order (a test replays them). */
  readonly callbacks: Map<string, Record<string, string>[]>
  authorizations(): number
}

const BUILT_IN_DECLINES: Readonly<Record<string, string>> = {
  '4000000000000002': '05',
  '4000000000009995': '51',
}
const FAILS_3DS = new Set(['4000000000003063'])

const MESSAGES: Readonly<Record<string, string>> = {
  '05': 'Red - onaylanmadı',
  '51': 'Limit yetersiz',
  '54': 'Vadesi dolmuş kart',
}

function digits(n: number): string {
  return Array.from({ length: n }, () => String(randomInt(10))).join('')
}

/** `dd/MM/yyyy HH:mm` (Istanbul) → epoch milliseconds. */
function listDate(text: string): number | undefined {
  const m = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}):(\d{2})$/.exec(text)
  if (!m) return undefined
  const at = Date.parse(`${m[3]}-${m[2]}-${m[1]}T${m[4]}:${m[5]}:00+03:00`)
  return Number.isNaN(at) ? undefined : at
}

function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}
}

export async function startGarantiSimulator(
  credentials: GarantiCredentials,
  at: SimulatorListen = {},
): Promise<GarantiSimulator> {
  const orders = new Map<string, GarantiOrder>()
  const declines = new Map<string, string>()
  const callbacks = new Map<string, Record<string, string>[]>()
  const mds = new Map<string, { pan: string; orderId: string }>()
  let authCount = 0
  const transactions: GarantiSimTxn[] = []
  const log = (order: GarantiOrder, trxType: GarantiSimTxn['trxType'], amount: number) =>
    transactions.push({
      orderId: order.orderId,
      trxType,
      status: order.status === 'approved' ? 'Basarili' : 'Basarisiz',
      amount,
      at: new Date(),
      retrefNum: trxType === 'Satis' || trxType === 'On Otorizasyon' ? order.retrefNum : digits(12),
      origRetrefNum: trxType === 'Satis' || trxType === 'On Otorizasyon' ? '' : order.retrefNum,
    })

  function reply(
    orderId: string,
    response: { source: string; code: string; reason: string; error?: string },
    order?: GarantiOrder,
    inquiry?: Record<string, XmlValue>,
    list?: Record<string, XmlValue>,
  ): BankAnswer {
    const approved = response.code === '00'
    return {
      status: 200,
      contentType: 'text/xml; charset=UTF-8',
      body: buildXml(
        'GVPSResponse',
        {
          Mode: '',
          Terminal: {
            ProvUserID: credentials.provisionUser,
            UserID: credentials.provisionUser,
            ID: credentials.terminalId,
            MerchantID: credentials.merchantId,
          },
          Customer: { IPAddress: '' },
          Order: {
            OrderID: orderId,
            GroupID: '',
            ...(inquiry ? { OrderInqResult: inquiry } : {}),
            ...(list ? { OrderListInqResult: list } : {}),
          },
          Transaction: {
            Response: {
              Source: response.source,
              Code: response.code,
              ReasonCode: response.reason,
              Message: approved ? 'Approved' : 'Declined',
              ErrorMsg: response.error ?? '',
              SysErrMsg: approved ? '' : `ErrorId: ${response.reason}`,
            },
            RetrefNum: order?.retrefNum ?? '',
            AuthCode: approved ? (order?.authCode ?? '') : '',
            BatchNum: approved ? digits(6) : '',
            SequenceNum: approved ? digits(6) : '',
            ProvDate: '20260101 12:00:00',
            CardNumberMasked: order ? `${order.pan.slice(0, 6)}******${order.pan.slice(-4)}` : '',
            HashData: '',
          },
        },
        'UTF-8',
      ),
    }
  }
  const refuse = (orderId: string, reason: string, error: string, order?: GarantiOrder) =>
    reply(orderId, { source: 'GVPS', code: '92', reason, error }, order)
  const ok = (orderId: string, order: GarantiOrder) =>
    reply(orderId, { source: 'HOST', code: '00', reason: '00' }, order)

  function authorize(
    orderId: string,
    pan: string,
    type: 'sales' | 'preauth',
    amount: number,
  ): GarantiOrder | undefined {
    if (orders.get(orderId)?.status === 'approved') return undefined
    authCount++
    const code = declines.get(pan) ?? BUILT_IN_DECLINES[pan] ?? '00'
    const order: GarantiOrder = {
      orderId,
      pan,
      type,
      amount,
      captured: type === 'sales' && code === '00' ? amount : 0,
      refunded: 0,
      voided: false,
      status: code === '00' ? 'approved' : 'declined',
      code,
      authCode: code === '00' ? digits(6) : '',
      retrefNum: digits(12),
    }
    orders.set(orderId, order)
    log(order, type === 'sales' ? 'Satis' : 'On Otorizasyon', amount)
    return order
  }

  function api(body: string): BankAnswer {
    const doc = parseXml(body, 'GVPSRequest')
    if (!doc) return { status: 200, contentType: 'text/plain', body: 'Invalid XML' }
    const terminal = obj(doc['Terminal'])
    const tx = obj(doc['Transaction'])
    const card = obj(doc['Card'])
    const orderId = str(obj(doc['Order'])['OrderID'])
    const type = str(tx['Type'])
    const amount = /^\d{1,13}$/.test(str(tx['Amount'])) ? Number(str(tx['Amount'])) : undefined
    const refundSide = type === 'void' || type === 'refund'
    const user = refundSide
      ? (credentials.refundUser ?? credentials.provisionUser)
      : credentials.provisionUser
    // HashData: order, terminal, card, amount, currency and the hashed password.
    const expectedHash =
      amount === undefined
        ? ''
        : garantiRequestHash(credentials, {
            orderId,
            cardNumber: str(card['Number']),
            amount,
            currency: str(tx['CurrencyCode']),
            txnType: type,
          })
    if (
      !safeEqual(str(terminal['ID']), credentials.terminalId) ||
      !safeEqual(str(terminal['MerchantID']), credentials.merchantId) ||
      !safeEqual(str(terminal['ProvUserID']), user) ||
      !safeEqual(str(terminal['HashData']), expectedHash)
    ) {
      return refuse(orderId, '0651', 'Güvenlik verisi hatalı')
    }
    if (amount === undefined || amount <= 0) {
      return refuse(
        orderId,
        '0002',
        'Giriş yaptığınız işlem tipi için zorunlu alanları kontrol ediniz',
      )
    }
    const order = orders.get(orderId)
    const originalMatches = (o: GarantiOrder) => {
      const ref = str(tx['OriginalRetrefNum'])
      return ref === '' || ref === o.retrefNum
    }
    switch (type) {
      case 'sales':
      case 'preauth': {
        if (str(tx['CurrencyCode']) !== '949') return refuse(orderId, '0002', 'Para birimi')
        const secure = obj(tx['Secure3D'])
        const md = str(secure['Md'])
        const bound = md ? mds.get(md) : undefined
        if (md && (!bound || bound.orderId !== orderId)) {
          return refuse(orderId, '0002', '3D doğrulama verisi geçersiz')
        }
        const pan = bound?.pan ?? str(card['Number'])
        if (!/^\d{12,19}$/.test(pan)) return refuse(orderId, '0002', 'Kart numarası')
        const made = authorize(orderId, pan, type, amount)
        if (!made)
          return refuse(orderId, GARANTI_DUPLICATE_ORDER, 'Sipariş numarası daha önce kullanılmış')
        if (made.status === 'declined') {
          return reply(
            orderId,
            {
              source: 'HOST',
              code: made.code,
              reason: made.code,
              error: MESSAGES[made.code] ?? 'Red',
            },
            made,
          )
        }
        return ok(orderId, made)
      }
      case 'postauth': {
        if (order?.status !== 'approved' || order.type !== 'preauth' || order.voided) {
          return refuse(orderId, '0110', 'İşlem bulunamadı')
        }
        if (!originalMatches(order) || order.captured > 0 || amount > order.amount) {
          return refuse(orderId, '0209', 'Provizyon kapatılamaz', order)
        }
        order.captured = amount
        log(order, 'On Otorizasyon Kapama', amount)
        return ok(orderId, order)
      }
      case 'void': {
        if (order?.status !== 'approved' || order.voided || !originalMatches(order)) {
          return refuse(orderId, '0110', 'İşlem bulunamadı')
        }
        order.voided = true
        log(order, 'Iptal', order.captured || order.amount)
        return ok(orderId, order)
      }
      case 'refund': {
        if (order?.status !== 'approved' || order.voided || order.captured === 0) {
          return refuse(orderId, '0208', 'İade etmek istediğiniz işlem geçerli değil')
        }
        if (!originalMatches(order) || order.refunded + amount > order.captured) {
          return refuse(orderId, '0208', 'İade etmek istediğiniz işlem geçerli değil', order)
        }
        order.refunded += amount
        log(order, 'Iade', amount)
        return ok(orderId, order)
      }
      case 'orderinq':
        return inquiry(orderId)
      case 'orderlistinq':
        return orderList(obj(doc['Order']))
      default:
        return refuse(orderId, '0002', 'İşlem tipi')
    }
  }

  function inquiry(orderId: string): BankAnswer {
    const order = orders.get(orderId)
    if (!order) return refuse(orderId, '0110', 'İşlem bulunamadı')
    const status =
      order.status === 'declined'
        ? 'DECLINED'
        : order.voided
          ? 'VOID'
          : order.type === 'preauth' && order.captured === 0
            ? 'WAITINGPOSTAUTH'
            : 'APPROVED'
    return reply(orderId, { source: 'GVPS', code: '00', reason: '' }, undefined, {
      ChargeType: 'S',
      PreAuthAmount: order.type === 'preauth' ? String(order.amount) : '0',
      AuthAmount: String(order.captured),
      Status: status,
      InstallmentCnt: '0',
      CardNumberMasked: `${order.pan.slice(0, 6)}******${order.pan.slice(-4)}`,
      Code: order.code,
      ReasonCode: order.code,
      RetrefNum: order.retrefNum,
      AuthCode: order.authCode,
      ProvDate: '2026-01-01 12:00:00.000',
    })
  }

  /** orderlistinq: the transactions between StartDate and EndDate (Istanbul), 500 a page. */
  function orderList(order: Record<string, unknown>): BankAnswer {
    const start = listDate(str(order['StartDate']))
    const end = listDate(str(order['EndDate']))
    const page = Number(str(order['ListPageNum']) || '1')
    if (start === undefined || end === undefined || !Number.isInteger(page) || page < 1) {
      return refuse('', '0002', 'Tarih aralığı')
    }
    // EndDate names a minute: its whole minute is in the range.
    const inRange = transactions.filter(
      (x) => x.at.getTime() >= start && x.at.getTime() < end + 60_000,
    )
    if (inRange.length === 0) return refuse('', '0110', 'İşlem bulunamadı')
    const pages = Math.ceil(inRange.length / 500)
    const rows = inRange.slice((page - 1) * 500, page * 500).map((x, i) => ({
      Id: String((page - 1) * 500 + i + 1),
      LastTrxDate: new Date(x.at.getTime() + 3 * 3_600_000)
        .toISOString()
        .slice(0, 19)
        .replace('T', ' '),
      TrxType: x.trxType,
      OrderID: x.orderId,
      AuthCode: '',
      RetrefNum: x.retrefNum,
      OrigRetrefNum: x.origRetrefNum,
      InstallmentCnt: 'Pesin',
      Status: x.status,
      AuthAmount: String(x.amount),
      CurrencyCode: 'TL',
      Settlement: 'N',
      ResponseCode: x.status === 'Basarili' ? '00' : '05',
    }))
    return reply('', { source: 'GVPS', code: '00', reason: '' }, undefined, undefined, {
      OrderTxnList: {
        TotalTxnCount: String(inRange.length),
        TotalPageCount: String(pages),
        ActPageNum: String(page),
        OrderTxn: rows,
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
    if (form['terminalid'] !== credentials.terminalId) return text(400, 'unknown terminal')
    const amount = /^\d{1,13}$/.test(form['txnamount'] ?? '') ? Number(form['txnamount']) : NaN
    const expected = Number.isNaN(amount)
      ? ''
      : garanti3dHash(credentials, {
          orderId: form['orderid'] ?? '',
          amount,
          currency: form['txncurrencycode'] ?? '',
          successUrl: form['successurl'] ?? '',
          errorUrl: form['errorurl'] ?? '',
          txnType: form['txntype'] ?? '',
          installmentCount: form['txninstallmentcount'] ?? '',
        })
    if (!form['secure3dhash'] || !safeEqual(form['secure3dhash'], expected)) {
      return text(400, 'hash mismatch')
    }
    const pan = form['cardnumber'] ?? ''
    const orderId = form['orderid'] ?? ''
    if (!/^\d{12,19}$/.test(pan)) return text(400, 'bad form')
    const mdStatus = FAILS_3DS.has(pan) ? '0' : '1'
    const md = randomBytes(48).toString('base64')
    mds.set(md, { pan, orderId })
    const {
      cardnumber: _pan,
      cardcvv2: _cvv,
      cardexpiredatemonth: _m,
      cardexpiredateyear: _y,
      secure3dhash: _h,
      ...echoed
    } = form
    const fields: Record<string, string> = {
      ...echoed,
      xid: randomBytes(20).toString('base64'),
      mdstatus: mdStatus,
      mderrormessage: mdStatus === '1' ? 'Authenticated' : 'Not authenticated',
      txnstatus: mdStatus === '1' ? 'Y' : 'N',
      eci: mdStatus === '1' ? '02' : '',
      cavv: mdStatus === '1' ? randomBytes(20).toString('base64') : '',
      md,
      oid: orderId,
      clientid: credentials.terminalId,
      authcode: '',
      response: '',
      procreturncode: '',
      rnd: randomBytes(15).toString('base64'),
      MaskedPan: `${pan.slice(0, 6)}***${pan.slice(-4)}`,
      hashparams:
        'clientid:oid:authcode:procreturncode:response:mdstatus:cavv:eci:md:rnd:txnamount:txncurrencycode:',
    }
    fields['hash'] = garantiCallbackHash(credentials, fields) ?? ''
    const list = callbacks.get(orderId) ?? []
    list.push(fields)
    callbacks.set(orderId, list)
    const target = (mdStatus === '1' ? form['successurl'] : form['errorurl']) ?? ''
    return {
      status: 200,
      contentType: 'text/html; charset=utf-8',
      body: autoPostPage(target, fields),
    }
  }

  const running = await runSimulator((path, body) => {
    if (path.endsWith('/VPServlet')) return api(body)
    if (path.endsWith('/servlet/gt3dengine')) return gate(body)
    return { status: 404, contentType: 'text/plain', body: 'not found' }
  }, at)
  return Object.assign(running, {
    api: `${running.base}/VPServlet`,
    threeDGate: `${running.base}/servlet/gt3dengine`,
    orders,
    transactions,
    declines,
    callbacks,
    authorizations: () => authCount,
  })
}
