import type { Deps } from '../../database.ts'
import type { JobDefinition, Reconciler } from '../../platform/jobs/queue.ts'
import { EVENT_DISPATCH_JOB } from '../events/index.ts'
import {
  DELIVER_JOB,
  NOTIFY_DISABLED_JOB,
  assertDeliverJob,
  attemptDelivery,
  dispatchEvent,
  dispatchPendingEvents,
  notifyEndpointDisabled,
  retryDueDeliveries,
} from './delivery.service.ts'

function stringField(data: unknown, field: string, job: string): string {
  const value = (data as Record<string, unknown> | null)?.[field]
  if (typeof value !== 'string') throw new Error(`${job}: malformed job payload`)
  return value
}

/**
 * Jobs, in the order `runDueOnce` drains them: fan-out first, then attempts, then notices.
 * An attempt that fails at the receiver does not throw (its retry is scheduled on
 * deps.clock); a throw means a crash, and pg-boss's own retry or the lease covers it.
 */
export function webhooksJobs(deps: Deps): JobDefinition<object>[] {
  return [
    {
      name: EVENT_DISPATCH_JOB,
      handler: (data) => dispatchEvent(deps, stringField(data, 'eventId', EVENT_DISPATCH_JOB)),
      retryLimit: 5,
    },
    {
      name: DELIVER_JOB,
      handler: (data) => attemptDelivery(deps, assertDeliverJob(data)),
      retryLimit: 2,
    },
    {
      name: NOTIFY_DISABLED_JOB,
      handler: (data) =>
        notifyEndpointDisabled(deps, stringField(data, 'endpointId', NOTIFY_DISABLED_JOB)),
      retryLimit: 5,
    },
  ]
}

export function webhooksReconcilers(deps: Deps): Reconciler[] {
  return [
    // The outbox's safety net: events nobody enqueued a dispatch for, or whose dispatch died.
    {
      name: 'webhooks.dispatch_events',
      cron: '* * * * *',
      // Merchants expect webhooks within seconds, and most events are dispatched only here.
      everySeconds: 2,
      run: () => dispatchPendingEvents(deps),
    },
    // Due retries, and attempts whose worker died between sending and recording.
    {
      name: 'webhooks.retry_deliveries',
      cron: '* * * * *',
      everySeconds: 10,
      run: () => retryDueDeliveries(deps),
    },
  ]
}
