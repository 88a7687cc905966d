import type { FileType } from './files.table.ts'

// The file's type from its first bytes, never from its name or the Content-Type the client
// declared: three fixed signatures (docs/decisions/0027-file-uploads.md says why no library).
// - PDF: "%PDF-" at offset 0 (ISO 32000-1 § 7.5.2; the header must be the first line);
// - PNG: the 8-byte signature 89 50 4E 47 0D 0A 1A 0A (PNG spec § 5.2);
// - JPEG: the SOI marker FF D8 followed by a marker's FF (JFIF, Exif and raw JPEG alike).

const SIGNATURES: readonly (readonly [FileType, readonly number[]])[] = [
  ['pdf', [0x25, 0x50, 0x44, 0x46, 0x2d]],
  ['png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['jpeg', [0xff, 0xd8, 0xff]],
]

export function sniffFileType(bytes: Uint8Array): FileType | undefined {
  for (const [type, signature] of SIGNATURES) {
    if (bytes.length >= signature.length && signature.every((b, i) => bytes[i] === b)) return type
  }
  return undefined
}

export const MEDIA_TYPES: Readonly<Record<FileType, string>> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpeg: 'image/jpeg',
}
