// The transactional outbox: every state change records its event in the same transaction.
export { recordEvent, eventsForResource } from './events.service.ts'
export type { NewEvent, DomainEvent } from './events.service.ts'
