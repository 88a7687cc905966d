// Goal: debug. Method: temporary.
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { addEndpoint, authorizedPayment, newDashboardMerchant, startReceiver } from './_support.ts'
import { dispatchPendingEvents, retryDueDeliveries, attemptDelivery } from '../../src/modules/webhooks/delivery.service.ts'

test('debug', { timeout: 60000 }, async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  await addEndpoint(m, receiver.url)
  await authorizedPayment(m.client)
  console.log('dispatch', await dispatchPendingEvents(h.deps))
  const rows = await h.deps.db.selectFrom('webhook_deliveries').selectAll().execute()
  console.log('deliveries', rows.length)
  for (const r of rows) { console.log('attempt', r.id); await attemptDelivery(h.deps, { deliveryId: r.id, attempt: 0 }); console.log('done') }
  console.log('received', receiver.received.length)
  console.log('retry', await retryDueDeliveries(h.deps))
  for (const name of ['payments.reconcile_pending_payments']) console.log(name)
})
