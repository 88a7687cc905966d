import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { authOf } from '../../platform/http/auth.ts'
import { KycStatusResponse, Whoami } from './merchants.schemas.ts'
import { getMerchant } from './merchants.service.ts'

/** Signed routes about the caller itself. Both key scopes may call them. */
export function merchantsRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/v1/auth/whoami',
      {
        config: { scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'identity.whoami',
          tags: ['identity'],
          summary: 'Who the verified API key belongs to',
          description:
            '`{subjectScope, merchantId, apiKeyId}` plus `storeId` for a store key or `submerchantId` for a submerchant key. Merchant and submerchant keys; the cheapest call to check a signing implementation.',
          response: { 200: Whoami, ...errorResponses },
        },
      },
      async (request) => {
        const auth = authOf(request)
        return {
          subjectScope: auth.scope,
          merchantId: auth.merchantId,
          apiKeyId: auth.apiKeyId,
          ...(auth.storeId ? { storeId: auth.storeId } : {}),
          ...(auth.submerchantId ? { submerchantId: auth.submerchantId } : {}),
        }
      },
    )

    app.get(
      '/v1/kyc/status',
      {
        config: { scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'identity.kycStatus',
          tags: ['identity'],
          summary: "The merchant's KYC status",
          description:
            "`{status, decidedAt, sessionId, subjectId}` of the merchant (a submerchant key sees its parent's). Only `approved` may take money in (else 403 SVC-KYC-3101).",
          response: { 200: KycStatusResponse, ...errorResponses },
        },
      },
      async (request) => {
        const merchant = await getMerchant(deps, authOf(request).merchantId)
        return {
          status: merchant.kycStatus,
          decidedAt: isoZ(merchant.kycDecidedAt),
          sessionId: merchant.kycSessionId,
          subjectId: merchant.kycSubjectId,
        }
      },
    )
  }
}
