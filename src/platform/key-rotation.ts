import { decrypt, encrypt } from './crypto.ts'

// Master-key rotation for secrets sealed with `encrypt` (envelopes that carry no key id): each
// module that owns such a column re-encrypts it with `reencryptSealedRows`, the vault re-wraps
// its data keys itself (its rows name their key). The scan is idempotent (a row the current key
// opens is left alone) and restartable (no state but the rows), and it never holds a lock
// across batches: a row is updated only where it still holds the envelopes that were read, so
// a concurrent write (a rolled secret) is never overwritten; the row is read again instead.

/** The keys a column is sealed under: the current one first, then previous ones. */
export interface KeyRing {
  readonly current: Buffer
  readonly previous: readonly Buffer[]
}

export function keyRing(config: {
  masterKey: Buffer
  masterKeyPrevious: readonly Buffer[]
}): KeyRing {
  return { current: config.masterKey, previous: config.masterKeyPrevious }
}

/** The same ring with every key passed through `derive` (columns sealed under a derived key). */
export function deriveRing(ring: KeyRing, derive: (masterKey: Buffer) => Buffer): KeyRing {
  return { current: derive(ring.current), previous: ring.previous.map(derive) }
}

/** The current key, then the previous ones: the order readers try them in. */
export function ringKeys(ring: KeyRing): readonly Buffer[] {
  return [ring.current, ...ring.previous]
}

/** One row's sealed columns, in a fixed order; null is an empty column. */
export interface SealedRow {
  /** Unique, and the scan's order (keyset pagination). */
  readonly key: string
  readonly fields: readonly { readonly envelope: string | null; readonly aad: string }[]
}

export interface SealedTable {
  /** Up to `limit` rows with key > `after` (all rows when null), in key order. */
  page(after: string | null, limit: number): Promise<SealedRow[]>
  /** The row as it is now; undefined once deleted. */
  reload(key: string): Promise<SealedRow | undefined>
  /**
   * Sets the columns to `envelopes` (same order as `row.fields`) where every column still
   * holds `row`'s envelope; false when the row changed meanwhile (or is gone).
   */
  update(row: SealedRow, envelopes: readonly (string | null)[]): Promise<boolean>
}

export interface ReencryptionReport {
  /** Rows read. */
  scanned: number
  /** Rows re-encrypted under the current key. */
  reencrypted: number
  /** Rows with a column no key of the ring opens: left as they are. */
  unreadable: number
}

type Outcome = { kind: 'current' } | { kind: 'sealed'; envelope: string } | { kind: 'unreadable' }

/** What rotation does with one envelope. GCM authentication tells a wrong key apart. */
export function reencryptEnvelope(ring: KeyRing, envelope: string, aad: string): Outcome {
  try {
    decrypt(ring.current, envelope, aad).fill(0)
    return { kind: 'current' }
  } catch {
    // not under the current key: try the previous ones
  }
  for (const key of ring.previous) {
    let plain: Buffer
    try {
      plain = decrypt(key, envelope, aad)
    } catch {
      continue
    }
    try {
      return { kind: 'sealed', envelope: encrypt(ring.current, plain, aad) }
    } finally {
      plain.fill(0)
    }
  }
  return { kind: 'unreadable' }
}

const ATTEMPTS_PER_ROW = 5

/** Re-encrypts every row of `table` still sealed under a previous key, `batchSize` rows a read. */
export async function reencryptSealedRows(
  ring: KeyRing,
  table: SealedTable,
  batchSize: number,
): Promise<ReencryptionReport> {
  const report: ReencryptionReport = { scanned: 0, reencrypted: 0, unreadable: 0 }
  let after: string | null = null
  for (;;) {
    const rows = await table.page(after, batchSize)
    for (const first of rows) {
      report.scanned += 1
      let row: SealedRow | undefined = first
      for (let attempt = 1; row !== undefined; attempt++) {
        const outcomes = row.fields.map((f) =>
          f.envelope === null ? null : reencryptEnvelope(ring, f.envelope, f.aad),
        )
        if (outcomes.some((o) => o?.kind === 'unreadable')) {
          report.unreadable += 1
          break
        }
        if (!outcomes.some((o) => o?.kind === 'sealed')) break
        const envelopes = outcomes.map((o, i) =>
          o?.kind === 'sealed' ? o.envelope : (row?.fields[i]?.envelope ?? null),
        )
        if (await table.update(row, envelopes)) {
          report.reencrypted += 1
          break
        }
        // Written meanwhile: read it again (a writer seals under the current key, but may
        // have copied an old envelope, as a rolled webhook secret keeps its predecessor).
        if (attempt >= ATTEMPTS_PER_ROW) throw new Error(`row ${row.key} keeps changing`)
        row = await table.reload(row.key)
      }
    }
    const last = rows.at(-1)
    if (rows.length < batchSize || last === undefined) return report
    after = last.key
  }
}
