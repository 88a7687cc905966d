import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { assert } from '../../platform/assert.ts'
import { decrypt, encrypt } from '../../platform/crypto.ts'

// Envelope encryption of card numbers. Each token gets its own random 256-bit data key
// (DEK); the PAN is sealed with the DEK (AES-256-GCM) and the DEK is wrapped with a key
// encryption key (KEK) derived from the master key. Rotating the master key then means
// re-wrapping 32-byte DEKs, never re-encrypting PANs. The row stores the KEK's id so a
// re-wrap job can find the rows still under an old master key.
// Every ciphertext's additional data names its token, so a ciphertext pasted onto another
// row does not decrypt.

// Derived once per master key and purpose: every detokenization needs the key id and the
// KEK, and a master key never changes inside a process (rotation restarts with a new config).
const derivedKeys = new WeakMap<Buffer, Map<string, Buffer>>()

function derive(masterKey: Buffer, purpose: string): Buffer {
  let byPurpose = derivedKeys.get(masterKey)
  if (!byPurpose) {
    byPurpose = new Map()
    derivedKeys.set(masterKey, byPurpose)
  }
  let key = byPurpose.get(purpose)
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `kurus/vault/${purpose}`, 32))
    byPurpose.set(purpose, key)
  }
  return key
}

const keyIds = new WeakMap<Buffer, string>()

/** A public, non-reversible id of the master key: which KEK wrapped a row. */
export function masterKeyId(masterKey: Buffer): string {
  let id = keyIds.get(masterKey)
  if (!id) {
    id = `mk_${createHmac('sha256', masterKey).update('kurus/key-id').digest('hex').slice(0, 16)}`
    keyIds.set(masterKey, id)
  }
  return id
}

export interface SealedPan {
  panEnc: string
  dekWrapped: string
  kekId: string
}

export function sealPan(masterKey: Buffer, tokenId: string, pan: string): SealedPan {
  const dek = randomBytes(32)
  try {
    const kekId = masterKeyId(masterKey)
    return {
      panEnc: encrypt(dek, pan, `pan:${tokenId}`),
      dekWrapped: encrypt(derive(masterKey, 'kek'), dek, `dek:${tokenId}:${kekId}`),
      kekId,
    }
  } finally {
    dek.fill(0)
  }
}

/**
 * The PAN of a sealed row. `masterKeys` is the current master key followed by the previous
 * ones: a row still wrapped under an earlier key (a rotation not yet re-wrapped) opens too.
 */
export function openPan(masterKeys: readonly Buffer[], tokenId: string, sealed: SealedPan): string {
  const masterKey = masterKeys.find((k) => masterKeyId(k) === sealed.kekId)
  // A row under a key we no longer hold: a clear error, not a confusing GCM failure.
  assert(
    masterKey !== undefined,
    `card token ${tokenId} is wrapped under unknown key ${sealed.kekId}`,
  )
  const dek = decrypt(derive(masterKey, 'kek'), sealed.dekWrapped, `dek:${tokenId}:${sealed.kekId}`)
  try {
    return decrypt(dek, sealed.panEnc, `pan:${tokenId}`).toString('utf8')
  } finally {
    dek.fill(0)
  }
}

/**
 * Re-wraps a row's data key from the key `from` to the key `to`. The PAN ciphertext is not
 * touched: rotation costs a 32-byte decrypt and encrypt per row.
 */
export function rewrapDek(
  from: Buffer,
  to: Buffer,
  tokenId: string,
  sealed: Pick<SealedPan, 'dekWrapped' | 'kekId'>,
): Pick<SealedPan, 'dekWrapped' | 'kekId'> {
  assert(
    masterKeyId(from) === sealed.kekId,
    `card token ${tokenId} is not under ${masterKeyId(from)}`,
  )
  const dek = decrypt(derive(from, 'kek'), sealed.dekWrapped, `dek:${tokenId}:${sealed.kekId}`)
  try {
    const kekId = masterKeyId(to)
    return { dekWrapped: encrypt(derive(to, 'kek'), dek, `dek:${tokenId}:${kekId}`), kekId }
  } finally {
    dek.fill(0)
  }
}

/**
 * Same card, same merchant → same value, for duplicate detection without decrypting.
 * Keyed (HMAC), never a plain hash: a PAN has too little entropy to survive brute force.
 * Per merchant, so fingerprints cannot link one buyer's card across merchants.
 */
export function cardFingerprint(masterKey: Buffer, merchantId: string, pan: string): string {
  return createHmac('sha256', derive(masterKey, 'fingerprint'))
    .update(`${merchantId}:${pan}`, 'utf8')
    .digest('base64url')
}
