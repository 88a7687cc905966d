import { randomBytes, randomUUID } from 'node:crypto'

// Crockford-style lowercase base32 without i, l, o, u: ids survive copy-paste and phone reading.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

export type IdPrefix =
  | 'pay'
  | 'cap'
  | 'plink'
  | 'sto'
  | 'mrc'
  | 'cus'
  | 'cuc'
  | 'sub'
  | 'inv'
  | 'exp'
  | 'cbk'
  | 'file'
  | 'rfn'
  | 'drf'
  | 'tok'
  | 'key'
  | 'sbj'
  | 'evt'
  | 'usr'
  | 'whe'
  | 'dlv'
  | 'jrn'
  | 'msg'
  | 'aud'
  | 'ivt'
  | 'rpt'
  | 'rli'
  | 'rule'
  | 'rev'
  | 'clk'
  | 'req'
  | 'pos'

/** 120 random bits as 24 base32 characters behind the spec's type prefix. */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(15)
  let out = ''
  let bits = 0
  let value = 0
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += ALPHABET.charAt((value >>> (bits - 5)) & 31)
      bits -= 5
    }
  }
  return `${prefix}_${out}`
}

export function newUuid(): string {
  return randomUUID()
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i

export function isUuidV4(value: string): boolean {
  return UUID_V4.test(value)
}
