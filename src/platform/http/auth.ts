import type { FastifyRequest } from 'fastify'
import { AppError } from '../errors.ts'

// The authenticated caller, set by the gateway on every signed route. It lives in platform so
// every module's HTTP layer can read it without importing the gateway.
export interface AuthContext {
  apiKeyId: string
  merchantId: string
  storeId: string | null
  submerchantId: string | null
  scope: 'merchant' | 'submerchant'
  kycStatus: 'none' | 'pending' | 'approved' | 'rejected' | 'suspended' | 'expired'
}

/**
 * A request the gateway refused (401) although its X-Api-Key names a usable key: whose it was
 * and why, so the merchant's request log shows their own failed attempts. Never a secret.
 */
export interface RefusedAuth {
  apiKeyId: string
  merchantId: string
  submerchantId: string | null
  reason: string
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null
    refusedAuth: RefusedAuth | null
  }
  interface FastifyReply {
    /** Set on an idempotent replay: the X-Request-Id of the original request. */
    replayedRequestId?: string
  }
  interface FastifyContextConfig {
    /** Which key scopes may call the route; merchant keys only when unset. */
    scopes?: AuthContext['scope'][]
    /** Money coming in: the merchant's KYC must be approved (403 SVC-KYC-3101). */
    requireKyc?: boolean
    /** Set by the gateway on the routes that honour Idempotency-Key (the OpenAPI shows it). */
    idempotencyKey?: boolean
    /**
     * The use case writes the Idempotency-Key record in its own claim transaction (through
     * request.idempotentAnswer): the gateway only checks the key (decision 0035).
     */
    deferredIdempotency?: boolean
  }
}

/** The caller's identity; throws 401 if a route outside the signed context asks for it. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) {
    throw new AppError('SVC-GW-1003', 401, 'X-Api-Key is missing, unknown or revoked')
  }
  return request.auth
}
