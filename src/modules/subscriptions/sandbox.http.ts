import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  createTestClock,
  getTestClock,
  listTestClocks,
  type TestClock,
} from '../test-clocks/index.ts'
import { advanceSubscription } from './renewals.service.ts'
import {
  AdvanceTestClockBody,
  CreateTestClockBody,
  EmptyBody,
  SubscriptionParams,
  SubscriptionSchema,
  TestClockList,
  TestClockParams,
  TestClockSchema,
} from './subscriptions.schemas.ts'
import { subscriptionJson } from './subscriptions.http.ts'
import { advanceTestClock, deleteTestClock } from './test-clocks.service.ts'

// The sandbox's subscription routes (demo only): jump a subscription to its next charge, and
// test clocks that move the time of the subscriptions on them.

/** Sandbox helpers, registered only in `demo`. */
export function subscriptionsSandboxRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      '/v1/sandbox/subscriptions/:id/advance',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'sandbox.subscriptions.advance',
          tags: ['sandbox'],
          summary: 'Jump to the next charge time and run it now',
          description:
            'Sandbox only. Runs the next renewal (or, when `past_due`, the next dunning retry) now, as the scheduler would — each call steps one cycle, keeping the calendar anchor; a cancel at period end is carried out instead of a charge. A status that cannot be charged, or a charge in progress, is 409 SVC-STATE-3401. Needs KYC `approved`.',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 200: SubscriptionSchema, ...errorResponses },
        },
      },
      async (request) => {
        return subscriptionJson(
          await advanceSubscription(deps, authOf(request).merchantId, request.params.id),
        )
      },
    )
    await plain.register(testClockRoutes(deps))
  }
}

function testClockJson(c: TestClock) {
  return {
    id: c.id,
    name: c.name,
    frozenTime: isoZ(c.frozenTime),
    status: c.status,
    createdAt: isoZ(c.createdAt),
  }
}

const NoContent = Type.Null({ description: 'No body' })

/** Sandbox test clocks (docs/decisions/0031-test-clocks.md): demo only, like every sandbox route. */
function testClockRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      '/v1/sandbox/test-clocks',
      {
        schema: {
          operationId: 'sandbox.testClocks.create',
          tags: ['sandbox'],
          summary: 'Create a test clock at a frozen time',
          description:
            'Subscriptions created with its testClockId live at its time and renew only when it is advanced.',
          body: CreateTestClockBody,
          response: { 201: TestClockSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const b = request.body
        const clock = await createTestClock(deps, authOf(request).merchantId, {
          frozenTime: new Date(b.frozenTime),
          name: b.name,
        })
        return reply.code(201).send(testClockJson(clock))
      },
    )

    app.get(
      '/v1/sandbox/test-clocks',
      {
        schema: {
          operationId: 'sandbox.testClocks.list',
          tags: ['sandbox'],
          summary: "List the merchant's test clocks (at most 100), newest first",
          description:
            "Sandbox only. The merchant's test clocks (at most 100 exist), newest first, with their frozen time and status; not paginated.",
          response: { 200: TestClockList, ...errorResponses },
        },
      },
      async (request) => {
        const items = await listTestClocks(deps, authOf(request).merchantId)
        return { items: items.map(testClockJson) }
      },
    )

    app.get(
      '/v1/sandbox/test-clocks/:id',
      {
        schema: {
          operationId: 'sandbox.testClocks.get',
          tags: ['sandbox'],
          summary: 'Get a test clock',
          description:
            "Sandbox only. The clock's frozen time and status (`ready` or `advancing`); 404 SVC-RES-3301 for an unknown or another merchant's clock.",
          params: TestClockParams,
          response: { 200: TestClockSchema, ...errorResponses },
        },
      },
      async (request) =>
        testClockJson(await getTestClock(deps, authOf(request).merchantId, request.params.id)),
    )

    app.delete(
      '/v1/sandbox/test-clocks/:id',
      {
        schema: {
          operationId: 'sandbox.testClocks.delete',
          tags: ['sandbox'],
          summary: 'Delete a test clock and cancel the subscriptions on it',
          description:
            "Sandbox only. Deletes the clock and, in the same transaction, cancels at the clock's time every subscription on it that has not ended (`subscription.cancelled`). 409 SVC-STATE-3401 while the clock advances or one of its charges is at the bank.",
          params: TestClockParams,
          response: { 204: NoContent, ...errorResponses },
        },
      },
      async (request, reply) => {
        await deleteTestClock(deps, authOf(request).merchantId, request.params.id)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/v1/sandbox/test-clocks/:id/advance',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'sandbox.testClocks.advance',
          tags: ['sandbox'],
          summary: 'Advance a test clock, running the renewals and retries that fall due',
          description:
            'Runs every renewal and dunning retry of the subscriptions on the clock that falls due by frozenTime, in order, each at its due time; answers when the clock is ready again.',
          params: TestClockParams,
          body: AdvanceTestClockBody,
          response: { 200: TestClockSchema, ...errorResponses },
        },
      },
      async (request) => {
        const clock = await advanceTestClock(
          deps,
          authOf(request).merchantId,
          request.params.id,
          new Date(request.body.frozenTime),
        )
        return testClockJson(clock)
      },
    )
  }
}
