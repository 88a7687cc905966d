import { randomInt } from 'node:crypto'
import type { Deps, Tx } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { newId } from '../../platform/ids.ts'
import { sendMail } from '../mail/index.ts'
import { observeWebhookDeliveryLag } from '../../platform/metrics.ts'
import {
  EVENT_DISPATCH_JOB,
  claimEventForDispatch,
  claimEventsForDispatch,
  getEvent,
  oldestUndispatchedEventAt,
  type DispatchableEvent,
} from '../events/index.ts'
import { listDashboardEmails } from '../merchants/index.ts'
import { endpointSigningSecrets, storeCallbackSecret } from './secrets.ts'
import { postWebhook, type SendOutcome } from './sender.ts'
import { signatureHeader } from './signing.ts'
import { deliveryFaults } from './webhooks.faults.ts'
import * as repo from './webhooks.repository.ts'
import type { DeliveryRow, EndpointRow, NewDelivery } from './webhooks.table.ts'

// Outgoing webhooks, at least once:
// 1. An event commits with its state change (the outbox, modules/events).
// 2. The dispatcher claims undispatched events and, in one transaction, writes one delivery
//    per subscribed endpoint (or one to the payment's callbackUrl) and enqueues a
//    `webhooks.deliver` job for each: all of it commits, or the event stays undispatched.
// 3. The job claims the delivery (a lease: next_attempt_at moves past the HTTP timeout),
//    commits, POSTs outside any transaction, then records the outcome in a second
//    transaction. A crash between sending and recording leaves the lease to lapse and the
//    retry reconciler sends again with the same webhook-id: the receiver may see an event
//    twice, never zero times.
// 4. A failure schedules the next attempt on deps.clock (exponential backoff with jitter)
//    until the 3-day window closes; the retry reconciler sends what is due.

export const DELIVER_JOB = 'webhooks.deliver'
export const NOTIFY_DISABLED_JOB = 'webhooks.notify_endpoint_disabled'
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000
/** An endpoint failing this long without one success is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 60 * 60 * 1000
// Longer than one HTTP attempt (10 s) plus both transactions, so a live attempt is never
// taken over; short enough that a crashed one is retried within minutes.
export const ATTEMPT_LEASE_MS = 2 * 60 * 1000
const BACKOFF_BASE_MS = 60 * 1000
const BACKOFF_MAX_MS = 6 * 60 * 60 * 1000
const DISPATCH_BATCH = 100
const DISPATCH_BATCHES_PER_RUN = 20
const RETRY_BATCH = 200

/**
 * The wait before retry number `attempt` (1 = first retry): 1 min doubling up to 6 h, with
 * ±20 % jitter so a receiver that comes back is not hit by every retry at the same second.
 */
export function backoffMs(attempt: number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt - 1, 20))
  return Math.round(base * (0.8 + randomInt(0, 401) / 1000))
}

export interface DeliverJob {
  deliveryId: string
  /** The attempt_count the job was enqueued for: a stale duplicate job finds it moved on. */
  attempt: number
}

function isDeliverJob(data: unknown): data is DeliverJob {
  if (typeof data !== 'object' || data === null) return false
  const d = data as Partial<DeliverJob>
  return typeof d.deliveryId === 'string' && Number.isInteger(d.attempt)
}

export function assertDeliverJob(data: unknown): DeliverJob {
  if (!isDeliverJob(data)) throw new Error('webhooks.deliver: malformed job payload')
  return data
}

const warmed = new WeakSet<object>()

/**
 * Loads our queues into pg-boss's queue cache, outside any transaction. pg-boss resolves a
 * queue it has not cached through its own connection; inside one of our transactions on
 * PGlite (one connection, held by the transaction) that lookup would wait forever. The
 * cache is filled at boss start, before our queues exist, and refreshed only every minute.
 * Deleting a job id that cannot exist is the public call that fills it and changes nothing.
 */
export async function warmQueueCache(deps: Deps): Promise<void> {
  if (warmed.has(deps.jobs)) return
  for (const name of [EVENT_DISPATCH_JOB, DELIVER_JOB, NOTIFY_DISABLED_JOB]) {
    await deps.jobs.boss.deleteJob(name, NO_SUCH_JOB)
  }
  warmed.add(deps.jobs)
}
const NO_SUCH_JOB = '00000000-0000-4000-8000-000000000000'

function subscribes(endpoint: EndpointRow, type: string): boolean {
  return endpoint.event_types === null || endpoint.event_types.includes(type)
}

/**
 * Writes the deliveries of claimed events and enqueues their jobs, in the caller's tx.
 * A store's event goes to that store's endpoints; a merchant-level event (no store, e.g.
 * customer.*) to the endpoints of every store of the merchant; an event with a callbackUrl
 * only there.
 */
async function fanOut(deps: Deps, tx: Tx, events: DispatchableEvent[], now: Date): Promise<number> {
  const merchantIds = [...new Set(events.map((e) => e.merchantId))]
  const endpoints = await repo.findEnabledEndpointsByMerchants(tx, merchantIds)
  const rows: NewDelivery[] = []
  for (const event of events) {
    const common = {
      merchant_id: event.merchantId,
      event_id: event.id,
      event_type: event.type,
      status: 'pending' as const,
      next_attempt_at: new Date(now.getTime() + ATTEMPT_LEASE_MS),
      retry_until: new Date(now.getTime() + RETRY_WINDOW_MS),
      created_at: now,
      updated_at: now,
    }
    if (event.callbackUrl) {
      // A session's callbackUrl replaces the store's endpoints for that payment's events. It
      // is signed with the store's callback secret, so it needs the store.
      if (event.storeId) {
        rows.push({
          ...common,
          id: newId('dlv'),
          store_id: event.storeId,
          endpoint_id: null,
          url: event.callbackUrl,
        })
      }
      continue
    }
    for (const endpoint of endpoints) {
      if (endpoint.merchant_id !== event.merchantId) continue
      if (event.storeId !== null && endpoint.store_id !== event.storeId) continue
      if (!subscribes(endpoint, event.type)) continue
      rows.push({
        ...common,
        id: newId('dlv'),
        store_id: endpoint.store_id,
        endpoint_id: endpoint.id,
        url: endpoint.url,
      })
    }
  }
  const inserted = await repo.insertDeliveries(tx, rows)
  for (const d of inserted) {
    await deps.jobs.enqueue(tx, DELIVER_JOB, { deliveryId: d.id, attempt: 0 } satisfies DeliverJob)
  }
  return inserted.length
}

/** Reconciler: fans out every event not dispatched yet (the outbox's safety net). */
export async function dispatchPendingEvents(deps: Deps): Promise<number> {
  await warmQueueCache(deps)
  let created = 0
  for (let batch = 0; batch < DISPATCH_BATCHES_PER_RUN; batch++) {
    const { claimed, deliveries } = await transact(deps.db, async (tx) => {
      const now = deps.clock.now()
      const events = await claimEventsForDispatch(tx, DISPATCH_BATCH, now)
      return { claimed: events.length, deliveries: await fanOut(deps, tx, events, now) }
    })
    created += deliveries
    if (claimed < DISPATCH_BATCH) break
  }
  return created
}

/** Job: fans out one event at once (enqueued by recordEvent when given deps.jobs). */
export async function dispatchEvent(deps: Deps, eventId: string): Promise<void> {
  await warmQueueCache(deps)
  await transact(deps.db, async (tx) => {
    const now = deps.clock.now()
    const event = await claimEventForDispatch(tx, eventId, now)
    if (event) await fanOut(deps, tx, [event], now)
  })
}

/** Reconciler: enqueues an attempt for every pending delivery whose time has come. */
export async function retryDueDeliveries(deps: Deps): Promise<number> {
  await warmQueueCache(deps)
  return transact(deps.db, async (tx) => {
    const now = deps.clock.now()
    const due = await repo.lockDueDeliveries(tx, now, RETRY_BATCH)
    for (const d of due) {
      // The lease keeps the next run from enqueueing it again while this job is queued.
      await repo.updateDelivery(tx, d.id, {
        next_attempt_at: new Date(now.getTime() + ATTEMPT_LEASE_MS),
        updated_at: now,
      })
      await deps.jobs.enqueue(tx, DELIVER_JOB, {
        deliveryId: d.id,
        attempt: d.attempt_count,
      } satisfies DeliverJob)
    }
    return due.length
  })
}

/** Queues a delivery again now (dashboard redeliver), in the caller's transaction. */
export async function scheduleRedelivery(
  deps: Deps,
  tx: Tx,
  row: DeliveryRow,
): Promise<DeliveryRow> {
  const now = deps.clock.now()
  const updated = await repo.updateDelivery(tx, row.id, {
    status: 'pending',
    next_attempt_at: new Date(now.getTime() + ATTEMPT_LEASE_MS),
    retry_until: new Date(now.getTime() + RETRY_WINDOW_MS),
    updated_at: now,
  })
  await deps.jobs.enqueue(tx, DELIVER_JOB, {
    deliveryId: row.id,
    attempt: row.attempt_count,
  } satisfies DeliverJob)
  return updated
}

interface Claimed {
  delivery: DeliveryRow
  secrets: string[]
}

/** Step 1 of an attempt: check it is still wanted, take the lease, pick the secrets. */
async function claimAttempt(deps: Deps, job: DeliverJob): Promise<Claimed | undefined> {
  return transact(deps.db, async (tx) => {
    const d = await repo.lockDeliveryById(tx, job.deliveryId)
    if (d?.status !== 'pending' || d.attempt_count !== job.attempt) return undefined
    const now = deps.clock.now()
    let secrets: string[]
    if (d.endpoint_id !== null) {
      const endpoint = await repo.findEndpointById(tx, d.endpoint_id)
      if (endpoint?.status !== 'enabled') {
        await repo.updateDelivery(tx, d.id, {
          status: 'failed',
          next_attempt_at: null,
          last_error: `endpoint ${endpoint?.status ?? 'missing'}`,
          updated_at: now,
        })
        return undefined
      }
      secrets = endpointSigningSecrets(deps, endpoint, now)
    } else {
      secrets = [await storeCallbackSecret(deps, tx, d.merchant_id, d.store_id)]
    }
    const delivery = await repo.updateDelivery(tx, d.id, {
      next_attempt_at: new Date(now.getTime() + ATTEMPT_LEASE_MS),
      updated_at: now,
    })
    return { delivery, secrets }
  })
}

/** The body every receiver gets; `sequence` orders the events of one resource. */
export function webhookBody(event: {
  id: string
  type: string
  createdAt: Date
  sequence: number
  data: Record<string, unknown>
}): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt.toISOString(),
    sequence: event.sequence,
    data: event.data,
  })
}

/** Job `webhooks.deliver`: one attempt of one delivery. Idempotent per (delivery, attempt). */
export async function attemptDelivery(deps: Deps, job: DeliverJob): Promise<void> {
  await warmQueueCache(deps)
  const claimed = await claimAttempt(deps, job)
  if (!claimed) return
  const { delivery, secrets } = claimed
  const event = await getEvent(deps, delivery.merchant_id, delivery.event_id)
  const body = webhookBody(event)
  const sentAt = deps.clock.now()
  const outcome = await postWebhook(
    delivery.url,
    {
      'content-type': 'application/json',
      'user-agent': 'Kurus-Webhooks/1',
      // The event id: the same on every retry, so receivers can deduplicate on it.
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signatureHeader(secrets, event.id, sentAt, body),
    },
    body,
    deps.config.env,
  )
  if (deliveryFaults.crashBeforeRecordOnce) {
    deliveryFaults.crashBeforeRecordOnce = false
    throw new Error('injected fault: crashed after sending, before recording')
  }
  const deliveredAt = await recordOutcome(deps, job, outcome)
  // From the event's commit to the receiver's 2xx: dispatch, queueing, retries and all.
  if (deliveredAt) {
    observeWebhookDeliveryLag((deliveredAt.getTime() - event.createdAt.getTime()) / 1000)
  }
}

/**
 * Seconds since the oldest event not yet delivered was recorded: one still waiting for the
 * dispatcher, or one with a delivery still pending (retrying). 0 when nothing waits. For
 * /metrics, read at scrape time.
 */
export async function oldestUndeliveredEventAgeSeconds(deps: Deps): Promise<number> {
  const [undispatchedAt, pending] = await Promise.all([
    oldestUndispatchedEventAt(deps.db),
    repo.findOldestPendingDelivery(deps.db),
  ])
  const pendingAt = pending
    ? (await getEvent(deps, pending.merchant_id, pending.event_id)).createdAt
    : null
  const times = [undispatchedAt, pendingAt].filter((d) => d !== null).map((d) => d.getTime())
  if (times.length === 0) return 0
  return Math.max(0, (deps.clock.now().getTime() - Math.min(...times)) / 1000)
}

/**
 * Step 3 of an attempt: the outcome, the next retry or the end, the endpoint's health.
 * Returns when the delivery succeeded if this call recorded that success, else undefined.
 */
async function recordOutcome(
  deps: Deps,
  job: DeliverJob,
  outcome: SendOutcome,
): Promise<Date | undefined> {
  return transact(deps.db, async (tx) => {
    const d = await repo.lockDeliveryById(tx, job.deliveryId)
    // Someone recorded this attempt already (a duplicate job): keep theirs.
    if (d?.status !== 'pending' || d.attempt_count !== job.attempt) return undefined
    const now = deps.clock.now()
    const attempts = d.attempt_count + 1
    const common = {
      attempt_count: attempts,
      last_attempt_at: now,
      last_status_code: outcome.statusCode,
      last_error: outcome.error?.slice(0, 500) ?? null,
      updated_at: now,
    }
    if (outcome.ok) {
      await repo.updateDelivery(tx, d.id, {
        ...common,
        status: 'delivered',
        next_attempt_at: null,
        delivered_at: now,
      })
      if (d.endpoint_id !== null) await noteEndpointSuccess(tx, d.endpoint_id, now)
      return now
    }
    const windowClosed = now.getTime() >= d.retry_until.getTime()
    await repo.updateDelivery(tx, d.id, {
      ...common,
      status: windowClosed ? 'failed' : 'pending',
      next_attempt_at: windowClosed
        ? null
        : new Date(Math.min(now.getTime() + backoffMs(attempts), d.retry_until.getTime())),
    })
    if (d.endpoint_id !== null) await noteEndpointFailure(deps, tx, d.endpoint_id, now)
    return undefined
  })
}

async function noteEndpointSuccess(tx: Tx, endpointId: string, now: Date): Promise<void> {
  const endpoint = await repo.lockEndpointById(tx, endpointId)
  if (endpoint?.failing_since) {
    await repo.updateEndpoint(tx, endpointId, { failing_since: null, updated_at: now })
  }
}

/** Starts or extends the endpoint's failure streak; 3 days of it disables the endpoint. */
async function noteEndpointFailure(
  deps: Deps,
  tx: Tx,
  endpointId: string,
  now: Date,
): Promise<void> {
  const endpoint = await repo.lockEndpointById(tx, endpointId)
  if (endpoint?.status !== 'enabled') return
  const since = endpoint.failing_since ?? now
  if (now.getTime() - since.getTime() < DISABLE_AFTER_MS) {
    if (!endpoint.failing_since) {
      await repo.updateEndpoint(tx, endpointId, { failing_since: now, updated_at: now })
    }
    return
  }
  await repo.updateEndpoint(tx, endpointId, {
    status: 'disabled',
    disabled_at: now,
    failing_since: since,
    updated_at: now,
  })
  // The email goes out from a job after this commits: no network I/O in the transaction.
  await deps.jobs.enqueue(tx, NOTIFY_DISABLED_JOB, { endpointId })
}

/** Job: tells the merchant's dashboard users that an endpoint was disabled. */
export async function notifyEndpointDisabled(deps: Deps, endpointId: string): Promise<void> {
  const endpoint = await repo.findEndpointById(deps.db, endpointId)
  if (endpoint?.status !== 'disabled') return
  const recipients = await listDashboardEmails(deps, endpoint.merchant_id)
  const since = endpoint.failing_since?.toISOString() ?? 'unknown'
  const text = [
    'Merhaba,',
    '',
    `Every delivery to your webhook endpoint ${endpoint.url} (${endpoint.id}, store ` +
      `${endpoint.store_id}) has failed since ${since}, so we have disabled it.`,
    'No new events will be sent to it. Events stay available from GET /v1/events.',
    '',
    'Fix the receiver, then enable the endpoint again in the dashboard ' +
      `(POST /v1/stores/${endpoint.store_id}/webhooks/${endpoint.id}/enable) and redeliver ` +
      'the failed deliveries you need.',
    '',
    '— Kuruş',
  ].join('\n')
  for (const to of recipients) {
    await sendMail(deps, { to, subject: `Webhook endpoint disabled: ${endpoint.url}`, text })
  }
}
