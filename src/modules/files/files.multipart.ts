import { Busboy, type BusboyInstance } from '@fastify/busboy'
import { AppError } from '../../platform/errors.ts'

// The upload form, parsed from bytes already collected and authenticated (the gateway checks
// the signature over them first): @fastify/busboy, the parser @fastify/multipart is built on,
// fed from the buffer instead of the socket (docs/decisions/0027-file-uploads.md says why).
// Every field becomes a property of the body (so the route's schema refuses unknown ones);
// the file part's bytes travel as a latin1 ("binary") string, one char per byte, which the
// schema types as `format: binary` and the handler turns back into bytes losslessly.

const FIELDS_MAX = 8
const FIELD_BYTES_MAX = 1024
const FILES_MAX = 2

/**
 * Where the parsed body keeps the file part's name: a symbol, so the route's schema (which
 * refuses unknown properties) does not see it. Read it with `uploadFileName`.
 */
const FILE_NAME = Symbol('upload file name')

/** The file name the browser or client sent with the file part, if any. */
export function uploadFileName(body: unknown): string | undefined {
  const name = (body as { [FILE_NAME]?: unknown } | null)?.[FILE_NAME]
  return typeof name === 'string' ? name : undefined
}

function invalid(reason: string): AppError {
  return new AppError('SVC-VAL-3001', 400, `body: ${reason}`, [{ field: 'body', reason }])
}

export function parseUploadForm(bytes: Buffer, contentType: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let parser: BusboyInstance
    try {
      parser = new Busboy({
        headers: { 'content-type': contentType },
        limits: {
          fields: FIELDS_MAX,
          fieldSize: FIELD_BYTES_MAX,
          files: FILES_MAX,
          parts: FIELDS_MAX + FILES_MAX,
          headerPairs: 16,
        },
      })
    } catch {
      reject(invalid('must be multipart/form-data with a boundary'))
      return
    }
    const body: Record<string, string> & { [FILE_NAME]?: string } = {}
    let failure: AppError | undefined
    const put = (name: string, value: string) => {
      if (Object.hasOwn(body, name)) failure ??= invalid(`${name} is given more than once`)
      else body[name] = value
    }
    parser.on(
      'field',
      (name: string, value: string, nameTruncated: boolean, valueTruncated: boolean) => {
        if (nameTruncated || valueTruncated) failure ??= invalid(`${name} is too long`)
        else if (name === 'file') failure ??= invalid('file must be a file part (with a filename)')
        else put(name, value)
      },
    )
    parser.on('file', (name: string, stream: NodeJS.ReadableStream, filename: string) => {
      if (name === 'file' && filename) body[FILE_NAME] = filename
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('error', () => (failure ??= invalid('is not well-formed multipart/form-data')))
      stream.on('end', () => put(name, Buffer.concat(chunks).toString('latin1')))
    })
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit']) {
      parser.on(limit, () => (failure ??= invalid('has too many parts')))
    }
    parser.on('error', () => reject(invalid('is not well-formed multipart/form-data')))
    parser.on('finish', () => (failure ? reject(failure) : resolve(body)))
    parser.end(bytes)
  })
}
