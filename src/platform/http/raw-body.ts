import type { FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact request bytes: the signature covers these, never a re-serialisation. */
    rawBody?: Buffer
    /** Set when the body was not valid JSON; reported after authentication (see gateway). */
    bodyParseFailed?: boolean
  }
}

export const BODY_LIMIT_BYTES = 1024 * 1024

// The JSON parser keeps the raw bytes and defers parse failures: a request must be
// authenticated before we tell its sender anything about its body.
export function installRawJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json(;.*)?$/i,
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      const buffer = body as Buffer
      request.rawBody = buffer
      if (buffer.length === 0) {
        done(null, undefined)
        return
      }
      try {
        done(null, JSON.parse(buffer.toString('utf8')) as unknown)
      } catch {
        request.bodyParseFailed = true
        done(null, undefined)
      }
    },
  )
}
