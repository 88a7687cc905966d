import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto'
import { Mutex } from './mutex.ts'

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

// scrypt from node:crypto: no native addon (ARCHITECTURE.md). The cost is log2 of N:
// 15 (N=2^15) as OWASP suggests, the default of KURUS_PASSWORD_HASH_COST. It is stored in the
// hash (`scrypt$ln=15$salt$key`), so raising it later keeps every stored hash verifiable and
// each is upgraded at its next sign-in; hashes written before the cost was stored
// (`scrypt$salt$key`) are 15.
export const DEFAULT_PASSWORD_HASH_COST = 15
// What a stored hash may ask for: a hash is ours, but a damaged one must not cost a gigabyte.
const MIN_COST = 10
const MAX_COST = 20

// Each scrypt holds 128 · r · N bytes (32 MiB at cost 15) outside the V8 heap while it runs,
// on one of libuv's four threads. Unbounded, a burst of sign-ups or sign-ins ran four at once:
// +130 MiB of RSS in an API process (issue 43: under 250 MB), and every thread of the pool
// busy, which file and DNS work also wait for. One at a time: the others queue, so a burst of
// sign-ins waits its turn (docs/performance.md, "Round 3, part 3: memory").
const scryptTurn = new Mutex()

function scryptAsync(password: string, salt: Buffer, cost: number): Promise<Buffer> {
  // r=8 makes each of the N blocks 1 KiB: 128 · r · N bytes, with headroom.
  const options = { N: 2 ** cost, r: 8, p: 1, maxmem: 2 * 128 * 8 * 2 ** cost }
  return scryptTurn.run(
    () =>
      new Promise((resolve, reject) =>
        scrypt(password, salt, 32, options, (err, key) => (err ? reject(err) : resolve(key))),
      ),
  )
}

export async function hashPassword(
  password: string,
  cost: number = DEFAULT_PASSWORD_HASH_COST,
): Promise<string> {
  const salt = randomBytes(16)
  const key = await scryptAsync(password, salt, cost)
  return `scrypt$ln=${cost}$${salt.toString('base64url')}$${key.toString('base64url')}`
}

interface StoredHash {
  cost: number
  salt: string
  key: string
}

function parseStoredHash(stored: string): StoredHash | undefined {
  const parts = stored.split('$')
  if (parts[0] !== 'scrypt') return undefined
  if (parts.length === 3 && parts[1] && parts[2]) {
    return { cost: DEFAULT_PASSWORD_HASH_COST, salt: parts[1], key: parts[2] }
  }
  const cost = Number(/^ln=(\d+)$/.exec(parts[1] ?? '')?.[1])
  if (parts.length !== 4 || !parts[2] || !parts[3]) return undefined
  if (!Number.isInteger(cost) || cost < MIN_COST || cost > MAX_COST) return undefined
  return { cost, salt: parts[2], key: parts[3] }
}

/** The scrypt cost a stored hash was made with (undefined: not one of ours). */
export function passwordHashCost(stored: string): number | undefined {
  return parseStoredHash(stored)?.cost
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseStoredHash(stored)
  if (!parsed) return false
  const key = await scryptAsync(password, Buffer.from(parsed.salt, 'base64url'), parsed.cost)
  const expected = Buffer.from(parsed.key, 'base64url')
  return key.length === expected.length && timingSafeEqual(key, expected)
}
