import { createHash } from 'node:crypto'
import { safeEqual } from '../../platform/crypto.ts'

// Garanti BBVA virtual POS: the hashes of its 3D form, its callback and its XML provisioning
// API (GVPS). Facts from Garanti's integration guide as mewebstudio/pos (MIT) records them;
// the published vectors are test/acquirer/garanti.test.ts. The XML operations and the
// simulator are not built yet (docs/acquiring.md).

export interface GarantiCredentials {
  merchantId: string
  terminalId: string
  provisionUser: string
  provisionPassword: string
  storeKey: string
  /** The refund user's password (PROVRFN), used for void and refund; provision's by default. */
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
  const names = (fields['hashparams'] ?? '').split(':').filter((n) => n !== '')
  const hash = fields['hash']
  if (names.length === 0 || !hash) return false
  const plain = names.map((n) => fields[n] ?? '').join('') + credentials.storeKey
  return safeEqual(hash, sha512Upper(plain))
}
