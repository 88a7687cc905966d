import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'
import { AppError } from './errors.ts'

// Opaque, tamper-evident list cursors: "<base64url JSON>.<base64url HMAC-SHA256>". The payload
// is readable by anyone who decodes it (put no secrets in it), but a client cannot forge or
// edit one, so a keyset position can only come from a page this service handed out.
// Each module signs with its own key (derive it from the master key for its purpose), so a
// cursor of one list is rejected by another.

const MAC_BYTES = 32
const CURSOR_CHARS_MAX = 2048

function mac(key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(body, 'utf8').digest()
}

/** The error for a cursor that verifies but does not fit the list it was sent to. */
export function invalidCursorError(field = 'cursor'): AppError {
  return new AppError('SVC-VAL-3001', 400, `${field}: is not a valid cursor`, [
    { field, reason: 'is not a valid cursor' },
  ])
}

export function encodeCursor(key: Buffer, payload: object): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')
  return `${body}.${mac(key, body).toString('base64url')}`
}

/**
 * The payload of a cursor this service signed with `key`. Any tampering, truncation or a
 * cursor signed with another key is a 400 SVC-VAL-3001 on `field`. The payload's shape is
 * the caller's to check: the signature proves only that we wrote it.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the payload type it encoded
export function decodeCursor<T>(key: Buffer, cursor: string, field = 'cursor'): T {
  if (cursor.length > CURSOR_CHARS_MAX) throw invalidCursorError(field)
  const [body, signature, rest] = cursor.split('.')
  if (!body || !signature || rest !== undefined) throw invalidCursorError(field)
  const given = Buffer.from(signature, 'base64url')
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(key, body)))
    throw invalidCursorError(field)
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T
  } catch {
    throw invalidCursorError(field)
  }
}

/** A position in a newest-first list ordered by (created_at, id). */
export interface KeysetPosition {
  createdAt: Date
  id: string
}

/** The position of a row in a list ordered by (created_at, id). */
export function byCreatedAt(row: { created_at: Date; id: string }): KeysetPosition {
  return { createdAt: row.created_at, id: row.id }
}

/**
 * How a list writes its keyset position into a cursor's payload and reads it back. `read`
 * returns undefined for a payload that holds no position of this shape (then the cursor is a
 * 400). The field names are the payload's, short because the cursor travels in URLs; they
 * must not be `k` (the list's kind) or one of the list's scope fields.
 */
export interface CursorPosition<P> {
  write: (at: P) => Record<string, string | number>
  read: (payload: Readonly<Record<string, unknown>>) => P | undefined
}

/** (created_at, id) as `{ t: ISO time, i: id }`: the position of most lists. */
export const createdAtPosition: CursorPosition<KeysetPosition> = {
  write: (at) => ({ t: at.createdAt.toISOString(), i: at.id }),
  read: (c) =>
    typeof c['t'] === 'string' && !Number.isNaN(Date.parse(c['t'])) && typeof c['i'] === 'string'
      ? { createdAt: new Date(c['t']), id: c['i'] }
      : undefined,
}

/**
 * What a cursor is bound to: a merchant id (written as `m`), or named fields when a list is
 * narrower or wider than one merchant (a store, a subscription, the filters' fingerprint).
 * A cursor issued under another scope is refused as if it were forged.
 */
export type CursorScope = string | Readonly<Record<string, string>>

function scopeFields(scope: CursorScope): Readonly<Record<string, string>> {
  return typeof scope === 'string' ? { m: scope } : scope
}

/**
 * The signed cursor of one keyset-paged list: `kind` names the list inside the payload and
 * `purpose` the HKDF label of its key, so a cursor of another list (or another scope: see
 * `CursorScope`) is refused (400 SVC-VAL-3001) as if it were forged. The payload is
 * `{ k: kind, ...scope, ...position }`; `position` says how the list's order is written
 * (`createdAtPosition` for lists ordered by (created_at, id): use `keysetCursor`).
 */
export function signedCursor<P>(kind: string, purpose: string, position: CursorPosition<P>) {
  const keys = new WeakMap<Buffer, Buffer>()
  const keyOf = (masterKey: Buffer): Buffer => {
    let key = keys.get(masterKey)
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), purpose, 32))
      keys.set(masterKey, key)
    }
    return key
  }
  const cursor = {
    encode(masterKey: Buffer, scope: CursorScope, at: P): string {
      return encodeCursor(keyOf(masterKey), {
        k: kind,
        ...scopeFields(scope),
        ...position.write(at),
      })
    },
    decode(masterKey: Buffer, scope: CursorScope, cursor: string): P {
      const c = decodeCursor<Record<string, unknown> | null>(keyOf(masterKey), cursor)
      if (typeof c !== 'object' || c === null || Array.isArray(c) || c['k'] !== kind) {
        throw invalidCursorError()
      }
      for (const [field, value] of Object.entries(scopeFields(scope))) {
        if (c[field] !== value) throw invalidCursorError()
      }
      const at = position.read(c)
      if (at === undefined) throw invalidCursorError()
      return at
    },
    /**
     * One page of the list: decodes the cursor (400 if it is not this list's, this
     * scope's), fetches one row more than `limit` from that position to learn whether
     * another page follows, and signs the next page's position (null on the last page).
     */
    async page<Row, Item>(
      masterKey: Buffer,
      scope: CursorScope,
      q: { limit: number; cursor?: string | undefined },
      list: {
        fetch: (before: P | undefined, limit: number) => Promise<Row[]>
        view: (rows: Row[]) => Item[] | Promise<Item[]>
        /** The row's position in the list's order (`byCreatedAt` for most lists). */
        position: (row: Row) => P
      },
    ): Promise<{ items: Item[]; nextCursor: string | null }> {
      const before = q.cursor === undefined ? undefined : cursor.decode(masterKey, scope, q.cursor)
      const rows = await list.fetch(before, q.limit + 1)
      const page = rows.slice(0, q.limit)
      const last = page.at(-1)
      return {
        items: await list.view(page),
        nextCursor:
          rows.length > q.limit && last !== undefined
            ? cursor.encode(masterKey, scope, list.position(last))
            : null,
      }
    },
  }
  return cursor
}

/** The signed cursor of a list ordered by (created_at, id), newest first (see `signedCursor`). */
export function keysetCursor(kind: string, purpose: string) {
  return signedCursor(kind, purpose, createdAtPosition)
}
