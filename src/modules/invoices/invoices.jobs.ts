import type { Deps } from '../../database.ts'
import type { JobDefinition, Reconciler } from '../../platform/jobs/queue.ts'
import { SEND_EMAIL_JOB, sendInvoiceEmail } from './invoice-email.ts'
import { expireDueInvoices, reconcileInvoicePayments } from './invoice-sync.service.ts'

/**
 * Every minute: invoices whose checkout payment was captured become paid, then open
 * invoices past their link expiry become expired (their open session is cancelled).
 * Registered after the payments reconcilers, so one run sees the acquirer's late answers.
 */
export function invoicesReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'invoices.reconcile_payments',
      cron: '* * * * *',
      run: () => reconcileInvoicePayments(deps),
    },
    { name: 'invoices.expire_invoices', cron: '* * * * *', run: () => expireDueInvoices(deps) },
  ]
}

/** The invoice email, enqueued in the transaction that moved the invoice to `sent`. */
export function invoicesJobs(deps: Deps): JobDefinition<{ invoiceId: string }>[] {
  return [
    {
      name: SEND_EMAIL_JOB,
      handler: (data) => sendInvoiceEmail(deps, data.invoiceId),
      // An unreachable SMTP server is retried with backoff (about 12 minutes in all).
      retryLimit: 6,
      retryDelaySeconds: 10,
    },
  ]
}
