import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { collectRawUnparsed } from '../../platform/http/raw-body.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { parseUploadForm, uploadFileName } from './files.multipart.ts'
import { ContentsResponse, FileParams, FileSchema, UploadForm } from './files.schemas.ts'
import {
  FILE_SIZE_MAX_BYTES,
  getFile,
  getFileContents,
  uploadFile,
  type StoredFile,
} from './files.service.ts'
import { MEDIA_TYPES } from './files.sniff.ts'

const tags = ['files']
const MULTIPART = /^multipart\/form-data(;.*)?$/i
/** Room for the form around a 5 MiB file (boundaries, part headers, the purpose field). */
const FORM_OVERHEAD_BYTES = 64 * 1024

export function fileJson(f: StoredFile) {
  return {
    id: f.id,
    purpose: f.purpose,
    size: f.size,
    type: f.type,
    sha256: f.sha256,
    createdAt: isoZ(f.createdAt),
  }
}

/**
 * Files (signed). Only this plugin's routes take multipart/form-data: the body is collected
 * whole (the signature covers its exact bytes) and parsed after the gateway verified it.
 */
export function filesRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    collectRawUnparsed(
      app,
      MULTIPART,
      FILE_SIZE_MAX_BYTES + FORM_OVERHEAD_BYTES,
      (bytes, request) => parseUploadForm(bytes, request.headers['content-type'] ?? ''),
    )
    app.post(
      '/v1/files',
      {
        schema: {
          operationId: 'files.upload',
          tags,
          summary: 'Upload a file (dispute evidence): PDF, PNG or JPEG by content, up to 5 MiB',
          description:
            "`multipart/form-data` with `purpose` (`dispute_evidence`) and `file`; the type is read from the bytes, not the name. Over 5 MiB: 413 SVC-VAL-3003; another type: 400 SVC-VAL-3001; not multipart: 415 SVC-VAL-3004. The answer's id goes into a chargeback's evidence `fileIds`.",
          consumes: ['multipart/form-data'],
          body: { content: { 'multipart/form-data': { schema: UploadForm } } },
          response: { 201: FileSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        if (!MULTIPART.test(request.headers['content-type'] ?? '')) {
          throw new AppError('SVC-VAL-3004', 415, 'request body must be multipart/form-data')
        }
        const form = request.body as { purpose: 'dispute_evidence'; file: string }
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            uploadFile(
              deps,
              authOf(request).merchantId,
              {
                purpose: form.purpose,
                bytes: Buffer.from(form.file, 'latin1'),
                name: uploadFileName(form),
              },
              recordWith(port, 201, fileJson),
            ),
          (file) => reply.code(201).send(fileJson(file)),
        )
      },
    )
    app.get(
      '/v1/files/:id',
      {
        schema: {
          operationId: 'files.get',
          tags,
          summary: "A file's facts",
          description:
            "The file's purpose, content type, size and SHA-256 (not its bytes); 404 SVC-RES-3301 for an unknown or another merchant's file.",
          params: FileParams,
          response: { 200: FileSchema, ...errorResponses },
        },
      },
      async (request) =>
        fileJson(await getFile(deps, authOf(request).merchantId, request.params.id)),
    )
    app.get(
      '/v1/files/:id/contents',
      {
        schema: {
          operationId: 'files.download',
          tags,
          summary: "A file's bytes",
          description:
            "The file's bytes with its content type; 404 SVC-RES-3301 for an unknown or another merchant's file. Evidence PDFs rendered on submission are files too.",
          params: FileParams,
          response: { 200: ContentsResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { file, bytes } = await getFileContents(
          deps,
          authOf(request).merchantId,
          request.params.id,
        )
        return reply
          .type(MEDIA_TYPES[file.type])
          .header('content-disposition', `attachment; filename="${file.id}.${file.type}"`)
          .header('content-length', String(bytes.length))
          .header('cache-control', 'private, no-store')
          .header('x-content-type-options', 'nosniff')
          .send(bytes)
      },
    )
  }
}
