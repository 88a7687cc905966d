import type { ColumnType, Selectable } from 'kysely'

export interface EventsTable {
  id: string
  merchant_id: string
  store_id: string | null
  type: string
  resource_type: string
  resource_id: string
  sequence: number
  data: ColumnType<Record<string, unknown>, string, string>
  callback_url: string | null
  created_at: Date
  /** Set when the webhooks dispatcher has fanned the event out into deliveries. */
  dispatched_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

export interface EventsTables {
  events: EventsTable
}

export type EventRow = Selectable<EventsTable>
