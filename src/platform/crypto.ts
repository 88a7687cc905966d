import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto'

// AES-256-GCM envelope: "v1.<iv>.<tag>.<ciphertext>", base64url parts. The additional data
// binds a ciphertext to its row (e.g. the key id), so a ciphertext copied onto another row
// does not decrypt.
export function encrypt(key: Buffer, plaintext: Buffer | string, aad = ''): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(aad))
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()])
  const tag = cipher.getAuthTag()
  return ['v1', iv, tag, ct]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.')
}

export function decrypt(key: Buffer, envelope: string, aad = ''): Buffer {
  const [version, iv, tag, ct] = envelope.split('.')
  if (version !== 'v1' || !iv || !tag || ct === undefined)
    throw new Error('bad ciphertext envelope')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAAD(Buffer.from(aad))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()])
}

/**
 * Decrypts with the first key that opens the envelope: the current master key, then the
 * previous ones (a key rotation in progress). GCM authentication tells a wrong key apart.
 */
export function decryptWithAny(keys: readonly Buffer[], envelope: string, aad = ''): Buffer {
  let last: unknown = new Error('no key to decrypt with')
  for (const key of keys) {
    try {
      return decrypt(key, envelope, aad)
    } catch (error) {
      last = error
    }
  }
  throw last
}

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex')
}

export function hmacSha256Hex(key: string | Buffer, data: string | Buffer): string {
  const mac = createHmac('sha256', key)
  return (typeof data === 'string' ? mac.update(data, 'utf8') : mac.update(data)).digest('hex')
}

/** Constant-time string comparison; unequal lengths compare against a dummy first. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab)
    return false
  }
  return timingSafeEqual(ab, bb)
}

export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url')
}

// scrypt from node:crypto: no native addon (ARCHITECTURE.md), N=2^15 as OWASP suggests.
const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }

function scryptAsync(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 32, SCRYPT, (err, key) => (err ? reject(err) : resolve(key))),
  )
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scryptAsync(password, salt)
  return `scrypt$${salt.toString('base64url')}$${key.toString('base64url')}`
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, expected] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !expected) return false
  const key = await scryptAsync(password, Buffer.from(salt, 'base64url'))
  return timingSafeEqual(key, Buffer.from(expected, 'base64url'))
}
