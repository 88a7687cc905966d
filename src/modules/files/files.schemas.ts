import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

export const FileSchema = Type.Object({
  id: Type.String(),
  purpose: Type.Union([
    Type.Literal('dispute_evidence'),
    Type.Literal('dispute_evidence_submission'),
  ]),
  size: Type.Integer(),
  type: Type.Union([Type.Literal('pdf'), Type.Literal('png'), Type.Literal('jpeg')]),
  sha256: Type.String(),
  createdAt: Timestamp,
})

/** The multipart form: its fields as the gateway's parser hands them over (files.multipart.ts). */
export const UploadForm = Type.Object(
  {
    purpose: Type.Literal('dispute_evidence'),
    file: Type.String({
      format: 'binary',
      description: 'The file: PDF, PNG or JPEG (read from its content), at most 5 MiB',
    }),
  },
  { additionalProperties: false },
)

export const FileParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const ContentsResponse = {
  description: "The file's bytes, with the Content-Type of its sniffed type",
  content: {
    'application/pdf': { schema: { type: 'string', format: 'binary' } },
    'image/png': { schema: { type: 'string', format: 'binary' } },
    'image/jpeg': { schema: { type: 'string', format: 'binary' } },
  },
}
