import type { Db } from '../../database.ts'
import * as repo from './transactions.repository.ts'

// Streams an export file into transaction_export_chunks. Renderers append bytes as they
// produce them (synchronously, as pdfkit's 'data' events and csv-stringify do); the build
// loop awaits `flushFull()` after each source batch, so at most one batch's output plus one
// chunk is ever held in memory, whatever the size of the export.

export const CHUNK_BYTES = 512 * 1024

export class ChunkWriter {
  private readonly db: Db
  private readonly exportId: string
  private readonly attempt: number
  private pending: Buffer[] = []
  private pendingBytes = 0
  private seq = 0
  private total = 0

  constructor(db: Db, exportId: string, attempt: number) {
    this.db = db
    this.exportId = exportId
    this.attempt = attempt
  }

  write(data: Buffer | string): void {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    if (buf.length === 0) return
    this.pending.push(buf)
    this.pendingBytes += buf.length
    this.total += buf.length
  }

  /** Stores every complete chunk buffered so far. */
  async flushFull(): Promise<void> {
    while (this.pendingBytes >= CHUNK_BYTES) await this.store(CHUNK_BYTES)
  }

  /** Stores everything, the last chunk possibly short. */
  async finish(): Promise<{ byteSize: number; chunkCount: number }> {
    await this.flushFull()
    if (this.pendingBytes > 0) await this.store(this.pendingBytes)
    return { byteSize: this.total, chunkCount: this.seq }
  }

  private async store(bytes: number): Promise<void> {
    const all = Buffer.concat(this.pending, this.pendingBytes)
    const chunk = all.subarray(0, bytes)
    const rest = all.subarray(bytes)
    this.pending = rest.length > 0 ? [Buffer.from(rest)] : []
    this.pendingBytes = rest.length
    await repo.insertChunk(this.db, this.exportId, this.attempt, this.seq, chunk)
    this.seq++
  }
}
