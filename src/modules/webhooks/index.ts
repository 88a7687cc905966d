// Outgoing webhooks (Standard Webhooks): endpoints, fan-out of the events outbox into
// deliveries, signed at-least-once delivery with retries, and the SSRF guard.
export { webhooksDashboardRoutes } from './webhooks.http.ts'
export { webhooksJobs, webhooksReconcilers } from './webhooks.jobs.ts'
export { checkReceiverUrl } from './ssrf.ts'
export { deliveryFaults } from './webhooks.faults.ts'
export { reencryptWebhookSecrets } from './secrets.ts'
export { oldestUndeliveredEventAgeSeconds } from './delivery.service.ts'
// The endpoint and delivery use cases, for the dashboard's web pages (the JWT API above and
// the pages call the same functions).
export {
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  rotateEndpointSecret,
} from './webhooks.service.ts'
// The API's body schema the dashboard's webhook form is checked against (issue 36).
export { CreateEndpointBody } from './webhooks.schemas.ts'
