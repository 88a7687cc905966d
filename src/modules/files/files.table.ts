import type { ColumnType, Insertable, Selectable } from 'kysely'

/** What a file is for: uploaded evidence, or the evidence PDF the platform rendered. */
export type FilePurpose = 'dispute_evidence' | 'dispute_evidence_submission'

/** The type read from the file's first bytes (never from its name or declared type). */
export type FileType = 'pdf' | 'png' | 'jpeg'

export interface FilesTable {
  id: string
  merchant_id: string
  purpose: FilePurpose
  type: FileType
  size: number
  /** Hex SHA-256 of the bytes. */
  sha256: string
  /** The uploader's file name (shown to staff; never used to type the file); null if none. */
  name: string | null
  /** pg returns a Buffer, PGlite a Uint8Array. */
  content: ColumnType<Uint8Array, Uint8Array, never>
  created_at: Date
}

export interface FilesTables {
  files: FilesTable
}

export type FileRow = Selectable<FilesTable>
export type NewFile = Insertable<FilesTable>
