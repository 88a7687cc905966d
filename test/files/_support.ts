// Small files of each accepted type, built here (their first bytes are what counts).
import type { TestMerchant } from '../helpers/app.ts'
import { multipartForm } from '../../sdk/index.ts'

export const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n%%EOF\n')
export const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('\x00\x00\x00\x0dIHDR', 'latin1'),
  Buffer.alloc(40, 7),
])
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 0xab)])

export interface FileBody {
  id: string
  purpose: string
  size: number
  type: string
  sha256: string
  createdAt: string
  code?: string
  message?: string
}

/** POST /v1/files with a multipart form, signed over its exact bytes. */
export function upload(
  m: TestMerchant,
  bytes: Uint8Array,
  opts: { filename?: string; contentType?: string; fields?: Record<string, string> } = {},
) {
  const form = multipartForm(opts.fields ?? { purpose: 'dispute_evidence' }, {
    field: 'file',
    filename: opts.filename ?? 'evidence.bin',
    bytes,
    ...(opts.contentType ? { contentType: opts.contentType } : {}),
  })
  return m.client.request<FileBody>('POST', '/v1/files', {
    rawBody: form.body,
    contentType: form.contentType,
  })
}
