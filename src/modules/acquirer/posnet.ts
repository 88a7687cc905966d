import { createHash } from 'node:crypto'
import { safeEqual } from '../../platform/crypto.ts'

// Yapı Kredi PosNet: the MACs of its OOS/3D flow. Facts from Yapı Kredi's integration guide as
// mewebstudio/pos (MIT) records them; the published vectors are test/acquirer/posnet.test.ts.
// The XML operations and the simulator are not built yet (docs/acquiring.md).

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

/** The bank's `mac` over its 3D answer (mdStatus, xid, amount, currency, merchant). */
export function posnetResponseMacValid(
  c: PosnetCredentials,
  fields: Readonly<Record<string, string>>,
): boolean {
  const mac = fields['mac']
  if (!mac) return false
  const expected = sha256Base64(
    [
      fields['mdStatus'] ?? '',
      fields['xid'] ?? '',
      fields['amount'] ?? '',
      fields['currency'] ?? '',
      c.merchantId,
      securityData(c),
    ].join(';'),
  )
  return safeEqual(mac, expected)
}
