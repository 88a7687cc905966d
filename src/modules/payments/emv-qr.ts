import { assert } from '../../platform/assert.ts'
import { assertMinor } from '../../platform/money.ts'

// EMVCo merchant-presented QR payloads (EMV QRCPS MPM), laid out as TR Karekod does: a
// string of TLV objects, each a 2-digit id, a 2-digit length and the value, ending with the
// CRC object 63 whose 4 hex digits are the CRC16/CCITT-FALSE of everything before them,
// "6304" included. Values are kept to printable ASCII so that length = characters = bytes.
//
// Layout we emit (ids in ascending order, as the spec recommends):
//   00 "01"                       payload format indicator
//   01 "12"                       point of initiation: dynamic (one payment, amount fixed)
//   26 template                   merchant account information
//      00 GUID                    who routes the payment (our reverse-domain name)
//      01 merchant id             the Kuruş merchant (mrc_…)
//      02 session id              the checkout session this QR pays (UUID)
//   52 MCC, 53 "949" (TRY), 54 amount "123.45", 58 "TR", 59 name (≤25), 60 city (≤15)
//   62 template                   additional data
//      05 reference label         the merchant's transactionId (≤25)
//   63 CRC16

export const EMV_GUID = 'tr.com.kurus'
export const EMV_CURRENCY_TRY = '949'
const NAME_CHARS_MAX = 25
const CITY_CHARS_MAX = 15
const REFERENCE_CHARS_MAX = 25
const VALUE_CHARS_MAX = 99
const AMOUNT_CHARS_MAX = 13

/** CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final xor. */
export function crc16CcittFalse(text: string): number {
  let crc = 0xffff
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
  }
  return crc
}

function crcHex(text: string): string {
  return crc16CcittFalse(text).toString(16).toUpperCase().padStart(4, '0')
}

/** One TLV object. Ids are two digits; values 1..99 printable ASCII characters. */
export function tlv(id: string, value: string): string {
  assert(/^\d{2}$/.test(id), `EMV id must be two digits, got ${id}`)
  assert(value.length >= 1 && value.length <= VALUE_CHARS_MAX, `EMV ${id}: length 1..99`)
  assert(/^[\x20-\x7e]+$/.test(value), `EMV ${id}: printable ASCII only`)
  return id + String(value.length).padStart(2, '0') + value
}

/** Kuruş as the decimal string of field 54, by integer maths: 12345 → "123.45". */
export function emvAmount(amountMinor: number): string {
  assertMinor(amountMinor)
  assert(amountMinor > 0, 'EMV amount must be positive')
  const lira = Math.floor(amountMinor / 100)
  const kurus = amountMinor % 100
  const text = `${lira}.${String(kurus).padStart(2, '0')}`
  assert(text.length <= AMOUNT_CHARS_MAX, 'EMV amount is longer than 13 characters')
  return text
}

const TURKISH_ASCII: Readonly<Record<string, string>> = {
  ç: 'c',
  Ç: 'C',
  ğ: 'g',
  Ğ: 'G',
  ı: 'i',
  İ: 'I',
  ö: 'o',
  Ö: 'O',
  ş: 's',
  Ş: 'S',
  ü: 'u',
  Ü: 'U',
}

/** Fields 59, 60 and 62/05 are ASCII: Turkish letters fold, anything else unprintable goes. */
export function emvText(text: string, charsMax: number): string {
  const folded = text
    .replace(/[çÇğĞıİöÖşŞüÜ]/g, (ch) => TURKISH_ASCII[ch] ?? ch)
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
  return folded.slice(0, charsMax).trim() || '-'
}

export interface EmvPayloadInput {
  merchantId: string
  sessionId: string
  merchantName: string
  merchantCity: string
  amountMinor: number
  reference: string
  /** ISO 18245 merchant category code; 5999 (miscellaneous retail) when unknown. */
  mcc?: string
}

export function buildEmvPayload(input: EmvPayloadInput): string {
  const mcc = input.mcc ?? '5999'
  assert(/^\d{4}$/.test(mcc), 'MCC must be four digits')
  const account = tlv('00', EMV_GUID) + tlv('01', input.merchantId) + tlv('02', input.sessionId)
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('26', account) +
    tlv('52', mcc) +
    tlv('53', EMV_CURRENCY_TRY) +
    tlv('54', emvAmount(input.amountMinor)) +
    tlv('58', 'TR') +
    tlv('59', emvText(input.merchantName, NAME_CHARS_MAX)) +
    tlv('60', emvText(input.merchantCity, CITY_CHARS_MAX)) +
    tlv('62', tlv('05', emvText(input.reference, REFERENCE_CHARS_MAX)))
  const withCrcHeader = body + '6304'
  return withCrcHeader + crcHex(withCrcHeader)
}

export interface EmvObject {
  id: string
  value: string
}

/** Splits a TLV string into its objects; throws on a truncated or malformed string. */
export function parseTlv(text: string): EmvObject[] {
  const out: EmvObject[] = []
  let i = 0
  while (i < text.length) {
    const id = text.slice(i, i + 2)
    const length = Number(text.slice(i + 2, i + 4))
    if (!/^\d{2}$/.test(id) || !/^\d{2}$/.test(text.slice(i + 2, i + 4))) {
      throw new Error(`malformed TLV at ${i}`)
    }
    const value = text.slice(i + 4, i + 4 + length)
    if (value.length !== length) throw new Error(`truncated TLV ${id} at ${i}`)
    out.push({ id, value })
    i += 4 + length
  }
  return out
}

/** True when the payload ends with a 6304 CRC object that matches the rest. */
export function emvCrcValid(payload: string): boolean {
  if (payload.length < 8 || payload.slice(-8, -4) !== '6304') return false
  return crcHex(payload.slice(0, -4)) === payload.slice(-4).toUpperCase()
}
