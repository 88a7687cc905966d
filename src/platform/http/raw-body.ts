import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../errors.ts'
import { JSON_DEPTH_MAX, jsonNestingExceeds } from '../json.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact request bytes: the signature covers these, never a re-serialisation. */
    rawBody?: Buffer
    /**
     * No parser sets this any more: a body that is not JSON, or nests too deep, is refused by
     * the parser itself (unsigned contexts) or right after authentication (the signed API).
     */
    bodyParseFailed?: boolean
    /**
     * Set by a route-scoped collector (`collectRawUnparsed`): how to read `rawBody` once the
     * signature over it is verified. Absent: it is JSON (`parseJsonBody`).
     */
    rawBodyParser?: (bytes: Buffer, request: FastifyRequest) => Promise<unknown>
  }
}

export const BODY_LIMIT_BYTES = 1024 * 1024

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json(;.*)?$/i

/**
 * The body as a JSON value (undefined when empty). Too deep a nesting is refused before
 * JSON.parse sees the text, so a megabyte of brackets costs a short scan, not a parse.
 */
export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined
  if (jsonNestingExceeds(bytes, JSON_DEPTH_MAX)) {
    const reason = `nests arrays or objects deeper than ${JSON_DEPTH_MAX} levels`
    throw new AppError('SVC-VAL-3001', 400, `request body ${reason}`, [{ field: 'body', reason }])
  }
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown
  } catch {
    throw new AppError('SVC-VAL-3002', 400, 'request body is not valid JSON')
  }
}

/**
 * The application-wide JSON parser: keeps the raw bytes and parses them with the depth limit.
 * A context that must authenticate the bytes before reading them replaces it with
 * `collectJsonUnparsed`.
 */
export function installRawJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser(
    JSON_MEDIA_TYPE,
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      const buffer = body as Buffer
      request.rawBody = buffer
      let parsed: unknown
      try {
        parsed = parseJsonBody(buffer)
      } catch (error) {
        done(error as AppError, undefined)
        return
      }
      done(null, parsed)
    },
  )
}

/**
 * For the signed API: the body is only collected (size and media type still checked), never
 * parsed. The context verifies the signature over `request.rawBody` first and then calls
 * `parseJsonBody`, so an unauthenticated sender's bytes never reach JSON.parse.
 */
export function collectJsonUnparsed(ctx: FastifyInstance): void {
  ctx.removeContentTypeParser(JSON_MEDIA_TYPE)
  ctx.addContentTypeParser(
    JSON_MEDIA_TYPE,
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      request.rawBody = body as Buffer
      done(null, undefined)
    },
  )
}

/**
 * For a signed route that takes another media type (multipart/form-data for file uploads):
 * the body is collected whole, up to `bodyLimitBytes` (beyond: 413 before the rest is read),
 * and not parsed. The gateway verifies the signature over `request.rawBody` and only then
 * calls `parse`, so, as with JSON, an unauthenticated sender's bytes reach no parser. Register
 * it in the route's own plugin: other routes keep refusing the media type with 415.
 */
export function collectRawUnparsed(
  ctx: FastifyInstance,
  mediaType: RegExp,
  bodyLimitBytes: number,
  parse: (bytes: Buffer, request: FastifyRequest) => Promise<unknown>,
): void {
  ctx.addContentTypeParser(
    mediaType,
    { parseAs: 'buffer', bodyLimit: bodyLimitBytes },
    (request, body, done) => {
      request.rawBody = body as Buffer
      request.rawBodyParser = parse
      done(null, undefined)
    },
  )
}
