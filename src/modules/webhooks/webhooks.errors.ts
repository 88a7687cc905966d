import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type WebhooksErrorCode =
  | 'endpoint_not_found'
  | 'delivery_not_found'
  | 'endpoint_not_enabled'
  | 'endpoint_limit_reached'
  | 'url_refused'
  | 'bad_event_type'

const table: ErrorTable<WebhooksErrorCode> = {
  endpoint_not_found: { code: 'SVC-RES-3301', status: 404, message: 'webhook endpoint not found' },
  delivery_not_found: { code: 'SVC-RES-3301', status: 404, message: 'webhook delivery not found' },
  endpoint_not_enabled: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the webhook endpoint is disabled or deleted; enable it first',
  },
  endpoint_limit_reached: {
    code: 'SVC-VAL-3001',
    status: 400,
    message: 'url: a store has at most 16 webhook endpoints',
  },
  url_refused: { code: 'SVC-VAL-3001', status: 400, message: 'url: not an allowed receiver' },
  bad_event_type: { code: 'SVC-VAL-3001', status: 400, message: 'events: not an event type' },
}

export const webhooksError = errorFactory(table)
