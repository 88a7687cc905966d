// Shared by the gateway tests: a clock that can stand still, hand-made signed requests (so a
// test can make each mistake the SDK never makes) and test-only signed routes.
import { createHash, createHmac } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyPluginAsync } from 'fastify'
import { TestClock } from '../../src/platform/clock.ts'

/** A TestClock that can be frozen, so a boundary (exactly 5:00 of skew) is exact. */
export class FreezableClock extends TestClock {
  private frozenAt: number | undefined
  override now(): Date {
    return this.frozenAt === undefined ? super.now() : new Date(this.frozenAt)
  }
  freeze(at: Date = this.now()): Date {
    this.frozenAt = at.getTime()
    return new Date(this.frozenAt)
  }
  override advance(ms: number): void {
    if (this.frozenAt === undefined) super.advance(ms)
    else this.frozenAt += ms
  }
  override set(date: Date): void {
    if (this.frozenAt === undefined) super.set(date)
    else this.frozenAt = date.getTime()
  }
}

/** HMAC over exactly the canonical string given: node:crypto only, no project code. */
export function hmacHex(secretKey: string, canonical: string): string {
  return createHmac('sha256', secretKey).update(canonical, 'utf8').digest('hex')
}

export function sha256Hex(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex')
}

export interface RawSignedRequest {
  keys: { publicKey: string; secretKey: string }
  timestamp: string
  /** What goes on the wire. */
  method: string
  path: string
  body?: string
  /** What goes into the canonical string; each defaults to what is sent. */
  signedMethod?: string
  signedPath?: string
  signedBody?: string
  /** Headers to add, or to drop with `undefined`. */
  headers?: Record<string, string | undefined>
}

export interface RawResponse {
  status: number
  headers: Headers
  body: Record<string, unknown>
  text: string
}

/** Sends a request signed by hand; `signed*` fields let a test sign something else. */
export async function rawSigned(baseUrl: string, req: RawSignedRequest): Promise<RawResponse> {
  const canonical = [
    req.timestamp,
    req.signedMethod ?? req.method,
    req.signedPath ?? req.path.split('?')[0],
    sha256Hex(req.signedBody ?? req.body ?? ''),
  ].join('\n')
  const headers: Record<string, string | undefined> = {
    'x-api-key': req.keys.publicKey,
    'x-timestamp': req.timestamp,
    'x-signature': hmacHex(req.keys.secretKey, canonical),
    ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...req.headers,
  }
  return send(baseUrl + req.path, req.method, headers, req.body)
}

export async function send(
  url: string,
  method: string,
  headers: Record<string, string | undefined>,
  body?: string,
): Promise<RawResponse> {
  const clean: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) clean[k] = v
  const response = await fetch(url, {
    method,
    headers: clean,
    ...(body === undefined ? {} : { body }),
  })
  const text = await response.text()
  const parsed = parseObject(text)
  return { status: response.status, headers: response.headers, body: parsed, text }
}

function parseObject(text: string): Record<string, unknown> {
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

export interface ProbeState {
  /** How many times POST /v1/test/effects acted. */
  effects: number
  /** POST /v1/test/flaky throws (500) while this is above zero. */
  failuresLeft: number
  /** How long POST /v1/test/effects holds the request, so concurrent ones overlap. */
  holdMs: number
  /** When set, POST /v1/test/effects waits for it instead of holdMs: the test decides. */
  gate: Promise<void> | undefined
  /** Requests inside POST /v1/test/effects right now. */
  inFlight: number
}

export function probeState(): ProbeState {
  return { effects: 0, failuresLeft: 0, holdMs: 50, gate: undefined, inFlight: 0 }
}

/** Test-only signed routes: a side effect we can count, a flaky one, a 202 and an echo. */
export function probeRoutes(state: ProbeState): FastifyPluginAsync {
  return async (app) => {
    app.post('/v1/test/effects', async (request, reply) => {
      state.inFlight += 1
      await (state.gate ?? delay(state.holdMs))
      state.inFlight -= 1
      state.effects += 1
      return reply.code(201).send({ effect: state.effects, received: request.body })
    })
    app.post('/v1/test/flaky', async (_request, reply) => {
      if (state.failuresLeft > 0) {
        state.failuresLeft -= 1
        throw new Error('probe failure with internal detail: db password hunter2')
      }
      state.effects += 1
      return reply.code(201).send({ effect: state.effects })
    })
    app.post('/v1/test/accepted', async (_request, reply) => {
      state.effects += 1
      return reply.code(202).send({ effect: state.effects, status: 'pending' })
    })
    app.post('/v1/test/echo', async (request) => ({ received: request.body }))
    app.get('/v1/test/items/:id', async (request) => ({ params: request.params }))
  }
}

/** Resolves once `check` holds, looking again on every turn of the event loop. */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve))
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
