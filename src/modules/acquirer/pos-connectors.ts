import type { FieldIssue } from '../../platform/errors.ts'
import type { BankOutcome, BankTimeouts, InquiryOutcome } from './bank-wire.ts'
import {
  EST_V3_BANKS,
  estV3Authorize,
  estV3Credit,
  estV3OrderStatus,
  estV3PostAuth,
  estV3Void,
  type BankEndpoints,
  type CardData,
} from './est-v3.ts'
import {
  GARANTI_ENDPOINTS,
  garantiAuthorize,
  garantiOrderInquiry,
  garantiOrderList,
  garantiPostAuth,
  garantiRefund,
  garantiVoid,
  type GarantiConfig,
  type GarantiListedTxn,
} from './garanti.ts'
import {
  POSNET_ENDPOINTS,
  posnetAuthorize,
  posnetCapture,
  posnetOrderStatus,
  posnetReturn,
  posnetReverse,
  type PosnetConfig,
} from './posnet.ts'
import type { PosEnvironment, PosProvider } from './pos.table.ts'

// One connector per provider behind one shape, so routing and the port's operations do
// not know which bank's wire format they speak. Adding a bank: docs/acquiring.md.

export interface ConnectorConfig {
  credentials: Record<string, string>
  endpoints: BankEndpoints
  /** The account's environment (Garanti wants Mode TEST on its test host). */
  environment?: PosEnvironment
  timeouts?: BankTimeouts
}

/** What the bank knows the authorization by, beside our order id (Garanti's RetrefNum). */
interface Original {
  orderId: string
  hostReference?: string | undefined
  /** The order went through the bank's 3D gate (PosNet names such orders apart). */
  threeD?: boolean
}

export interface PosConnector {
  /** The credentials as the bank issues them, or what is wrong with them. */
  checkCredentials(raw: unknown, bank: string | undefined): FieldIssue[]
  /** Which bank an account of this provider is (est_v3: the credentials name it). */
  bankOf(bank: string | undefined): string
  endpoints(bank: string, environment: PosEnvironment): BankEndpoints
  authorize(
    config: ConnectorConfig,
    p: {
      orderId: string
      amount: number
      installmentCount: number
      preAuth: boolean
      card: CardData
      ip?: string
    },
  ): Promise<BankOutcome>
  postAuth(
    config: ConnectorConfig,
    /** installmentCount: the authorization's (PosNet's capt names it again). */
    p: Original & { amount: number; installmentCount?: number },
  ): Promise<BankOutcome>
  void(config: ConnectorConfig, p: Original): Promise<BankOutcome>
  credit(config: ConnectorConfig, p: Original & { amount: number }): Promise<BankOutcome>
  status(config: ConnectorConfig, p: { orderId: string; threeD?: boolean }): Promise<InquiryOutcome>
  /** The bank's own transaction list over a range, where it has one (reconciliation). */
  list?(
    config: ConnectorConfig,
    p: { start: Date; end: Date },
  ): Promise<
    | { kind: 'list'; txns: GarantiListedTxn[] }
    | { kind: 'not_sent'; reason: string }
    | { kind: 'unknown'; reason: string }
  >
}

const PRINTABLE = /^[\x21-\x7e]{1,128}$/

function stringFields(
  raw: unknown,
  names: readonly string[],
  optional: readonly string[] = [],
): FieldIssue[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return [{ field: 'credentials', reason: 'must be an object' }]
  }
  const issues: FieldIssue[] = []
  const record = raw as Record<string, unknown>
  for (const name of names) {
    const value = record[name]
    if (typeof value !== 'string' || !PRINTABLE.test(value)) {
      issues.push({ field: `credentials.${name}`, reason: 'required: 1-128 printable characters' })
    }
  }
  for (const name of optional) {
    const value = record[name]
    if (value !== undefined && (typeof value !== 'string' || !PRINTABLE.test(value))) {
      issues.push({ field: `credentials.${name}`, reason: '1-128 printable characters' })
    }
  }
  for (const name of Object.keys(record)) {
    if (!names.includes(name) && !optional.includes(name) && name !== 'bank') {
      issues.push({ field: `credentials.${name}`, reason: 'unknown field' })
    }
  }
  return issues
}

const estV3: PosConnector = {
  checkCredentials(raw, bank) {
    // storeType: how the bank set the store up for 3-D Secure (3d, the default, or 3d_pay).
    const issues = stringFields(
      raw,
      ['clientId', 'username', 'password', 'storeKey'],
      ['storeType'],
    )
    const storeType = (raw as Record<string, unknown> | null)?.['storeType']
    if (storeType !== undefined && storeType !== '3d' && storeType !== '3d_pay') {
      issues.push({ field: 'credentials.storeType', reason: 'one of 3d, 3d_pay' })
    }
    if (!bank || !Object.hasOwn(EST_V3_BANKS, bank)) {
      issues.push({
        field: 'credentials.bank',
        reason: `one of ${Object.keys(EST_V3_BANKS).join(', ')}`,
      })
    }
    return issues
  },
  bankOf: (bank) => bank ?? '',
  endpoints(bank, environment) {
    const known = EST_V3_BANKS[bank]
    if (!known) throw new Error(`unknown EST bank ${bank}`)
    return known[environment]
  },
  authorize: (c, p) => estV3Authorize(est(c), p),
  postAuth: (c, p) => estV3PostAuth(est(c), p),
  void: (c, p) => estV3Void(est(c), p),
  credit: (c, p) => estV3Credit(est(c), p),
  status: (c, p) => estV3OrderStatus(est(c), p),
}

export function est(c: ConnectorConfig) {
  const { clientId = '', username = '', password = '', storeKey = '' } = c.credentials
  return {
    credentials: { clientId, username, password, storeKey },
    endpoints: c.endpoints,
    ...(c.timeouts ? { timeouts: c.timeouts } : {}),
  }
}

const garanti: PosConnector = {
  checkCredentials: (raw) =>
    stringFields(
      raw,
      ['merchantId', 'terminalId', 'provisionUser', 'provisionPassword', 'storeKey'],
      ['refundUser', 'refundPassword'],
    ),
  bankOf: () => 'garanti',
  endpoints: (_bank, environment) => GARANTI_ENDPOINTS[environment],
  authorize: (c, p) => garantiAuthorize(gvps(c), p),
  postAuth: (c, p) => garantiPostAuth(gvps(c), p),
  void: (c, p) => garantiVoid(gvps(c), p),
  credit: (c, p) => garantiRefund(gvps(c), p),
  status: (c, p) => garantiOrderInquiry(gvps(c), p),
  list: (c, p) => garantiOrderList(gvps(c), p),
}

export function gvps(c: ConnectorConfig): GarantiConfig {
  const {
    merchantId = '',
    terminalId = '',
    provisionUser = '',
    provisionPassword = '',
    storeKey = '',
    refundUser,
    refundPassword,
  } = c.credentials
  return {
    credentials: {
      merchantId,
      terminalId,
      provisionUser,
      provisionPassword,
      storeKey,
      ...(refundUser ? { refundUser } : {}),
      ...(refundPassword ? { refundPassword } : {}),
    },
    endpoints: c.endpoints,
    mode: c.environment === 'production' ? 'PROD' : 'TEST',
    ...(c.timeouts ? { timeouts: c.timeouts } : {}),
  }
}

const posnet: PosConnector = {
  checkCredentials: (raw) => stringFields(raw, ['merchantId', 'terminalId', 'posnetId', 'encKey']),
  bankOf: () => 'yapikredi',
  endpoints: (_bank, environment) => POSNET_ENDPOINTS[environment],
  authorize: (c, p) => posnetAuthorize(ykb(c), p),
  postAuth: (c, p) => posnetCapture(ykb(c), p),
  void: (c, p) => posnetReverse(ykb(c), p),
  credit: (c, p) => posnetReturn(ykb(c), p),
  status: (c, p) => posnetOrderStatus(ykb(c), p),
}

export function ykb(c: ConnectorConfig): PosnetConfig {
  const { merchantId = '', terminalId = '', posnetId = '', encKey = '' } = c.credentials
  return {
    credentials: { merchantId, terminalId, posnetId, encKey },
    endpoints: c.endpoints,
    ...(c.timeouts ? { timeouts: c.timeouts } : {}),
  }
}

/** The providers whose connector is built (all three). */
export const CONNECTORS: Partial<Record<PosProvider, PosConnector>> = {
  est_v3: estV3,
  garanti,
  posnet,
}

export const PROVIDERS: readonly PosProvider[] = ['est_v3', 'garanti', 'posnet']

/** Each bank's own card program (installments on its cards go through its POS). */
export const BANK_PROGRAMS: Readonly<Record<string, string>> = {
  isbank: 'maximum',
  ziraat: 'bankkart',
  halkbank: 'paraf',
  akbank: 'axess',
  teb: 'bonus',
  garanti: 'bonus',
  yapikredi: 'world',
}
