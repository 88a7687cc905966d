import { createHash } from 'node:crypto'
import type { Deps, Tx } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { newId } from '../../platform/ids.ts'
import { filesError } from './files.errors.ts'
import * as repo from './files.repository.ts'
import { sniffFileType } from './files.sniff.ts'
import type { FilePurpose, FileRow, FileType } from './files.table.ts'

/** The largest file accepted (CONTRACT.md "Dispute evidence"): 5 MiB. */
export const FILE_SIZE_MAX_BYTES = 5 * 1024 * 1024

export interface StoredFile {
  id: string
  purpose: FilePurpose
  type: FileType
  size: number
  sha256: string
  /** The uploader's file name, for people to recognise it; null for files we made. */
  name: string | null
  createdAt: Date
}

function toFile(row: Omit<FileRow, 'content'>): StoredFile {
  return {
    id: row.id,
    purpose: row.purpose,
    type: row.type,
    size: row.size,
    sha256: row.sha256,
    name: row.name,
    createdAt: row.created_at,
  }
}

function checked(bytes: Uint8Array): FileType {
  if (bytes.length > FILE_SIZE_MAX_BYTES) throw filesError('file_too_large')
  const type = sniffFileType(bytes)
  if (!type) throw filesError('file_type_unsupported')
  return type
}

async function insert(
  tx: Parameters<typeof repo.insertFile>[0],
  deps: Deps,
  merchantId: string,
  purpose: FilePurpose,
  bytes: Uint8Array,
  name: string | null = null,
): Promise<StoredFile> {
  const type = checked(bytes)
  const row = {
    id: newId('file'),
    merchant_id: merchantId,
    purpose,
    type,
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    name,
    content: bytes,
    created_at: deps.clock.now(),
  }
  await repo.insertFile(tx, row)
  return toFile(row)
}

/** An upload: PDF, PNG or JPEG by content, at most 5 MiB, kept in the merchant's scope. */
export function uploadFile(
  deps: Deps,
  merchantId: string,
  input: { purpose: 'dispute_evidence'; bytes: Uint8Array; name?: string | undefined },
  record?: RecordAnswer<Tx, StoredFile>,
): Promise<StoredFile> {
  const name = cleanName(input.name)
  if (!record) return insert(deps.db, deps, merchantId, input.purpose, input.bytes, name)
  // The file and the signed call's recorded answer commit together (decision 0035).
  return transact(deps.db, async (tx) => {
    const file = await insert(tx, deps, merchantId, input.purpose, input.bytes, name)
    await record(tx, file)
    return file
  })
}

/** A file the platform made (the rendered evidence PDF), in the caller's transaction. */
export function storeFile(
  tx: Tx,
  deps: Deps,
  merchantId: string,
  purpose: FilePurpose,
  bytes: Uint8Array,
): Promise<StoredFile> {
  return insert(tx, deps, merchantId, purpose, bytes)
}

export async function getFile(deps: Deps, merchantId: string, id: string): Promise<StoredFile> {
  const row = await repo.findFileById(deps.db, merchantId, id)
  if (!row) throw filesError('file_not_found')
  return toFile(row)
}

export async function getFileContents(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<{ file: StoredFile; bytes: Buffer }> {
  const row = await repo.findFileWithContent(deps.db, merchantId, id)
  if (!row) throw filesError('file_not_found')
  const c = row.content
  return { file: toFile(row), bytes: Buffer.from(c.buffer, c.byteOffset, c.byteLength) }
}

/**
 * The merchant's own files among `ids`, in the order asked; a missing or foreign id is
 * reported by `onMissing` (the caller's 400), never revealed as another merchant's.
 */
export async function getFiles(
  deps: Deps,
  merchantId: string,
  ids: readonly string[],
): Promise<{ found: StoredFile[]; missing: string[] }> {
  const rows = await repo.findFilesByIds(deps.db, merchantId, [...new Set(ids)])
  const byId = new Map(rows.map((r) => [r.id, toFile(r)]))
  const found: StoredFile[] = []
  const missing: string[] = []
  for (const id of ids) {
    const file = byId.get(id)
    if (file) found.push(file)
    else missing.push(id)
  }
  return { found, missing }
}

/** The upload's file name as shown: its last path part, no control characters, ≤ 200 chars. */
function cleanName(name: string | undefined): string | null {
  const base = (name ?? '').split(/[\\/]/).pop() ?? ''
  const clean = Array.from(base)
    .filter((ch) => ch >= ' ' && ch !== '\u007f')
    .join('')
    .trim()
    .slice(0, 200)
  return clean === '' ? null : clean
}
