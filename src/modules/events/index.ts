// The transactional outbox: every state change records its event in the same transaction.
export {
  EVENT_DISPATCH_JOB,
  claimEventForDispatch,
  claimEventsForDispatch,
  eventsForResource,
  eventTypeCounts,
  getEvent,
  listEvents,
  oldestUndispatchedEventAt,
  recordEvent,
} from './events.service.ts'
export type { DispatchableEvent } from './events.service.ts'
export { eventsRoutes } from './events.http.ts'
