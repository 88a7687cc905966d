import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  CardAccessList,
  CardAccessQuery,
  CardTokenResponse,
  TokenizeCardBody,
} from './vault.schemas.ts'
import { listCardAccess, tokenizeCard, type CardTokenView } from './vault.service.ts'

/** Signed routes, merchant keys only: tokenization and the detokenization audit. */
export function vaultRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    // Idempotency-Key optional (gateway). No KYC gate: storing a card moves no money.
    app.post(
      '/v1/cards/tokens',
      {
        schema: {
          operationId: 'cards.tokenize',
          tags: ['cards'],
          summary: 'Store a card in the vault and get a token to charge it with',
          description:
            "Validates the card (Luhn, expiry in the future, CVC) and stores it encrypted in the vault; the answer is a `tok_…` token with the masked number, brand and BIN, never the card number. Invalid details are 400 SVC-VAL-3001 naming the field. Card numbers through your server put it in PCI scope: Kuruş.js tokenizes in the buyer's browser instead (docs/kurus-js.md).",
          body: TokenizeCardBody,
          response: { 201: CardTokenResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        // The token and its recorded answer commit together (decision 0035).
        const port = request.idempotentAnswer
        const json = (view: CardTokenView) => ({ ...view, card: { fingerprint: view.fingerprint } })
        return answerOnce(
          reply,
          port,
          () =>
            tokenizeCard(deps, authOf(request).merchantId, request.body, {
              record: recordWith(port, 201, json),
            }),
          (view) => reply.code(201).send(json(view)),
        )
      },
    )

    app.get(
      '/v1/transactions/card-access',
      {
        schema: {
          operationId: 'cards.listAccess',
          tags: ['cards'],
          summary: "Audit of every detokenization of the merchant's card tokens",
          description:
            'One row per read of a card number out of the vault (each charge of a token), newest first, in pages of `limit` with a keyset `nextCursor`; `from`/`to` bound the time (`from` after `to` is 400 SVC-VAL-3001).',
          querystring: CardAccessQuery,
          response: { 200: CardAccessList, ...errorResponses },
        },
      },
      async (request) => {
        const q = request.query
        const page = await listCardAccess(deps, authOf(request).merchantId, {
          limit: q.limit,
          ...(q.from !== undefined ? { from: new Date(q.from) } : {}),
          ...(q.to !== undefined ? { to: new Date(q.to) } : {}),
          ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
        })
        return {
          items: page.items.map((row) => ({ ...row, createdAt: isoZ(row.createdAt) })),
          nextCursor: page.nextCursor,
        }
      },
    )
  }
}
