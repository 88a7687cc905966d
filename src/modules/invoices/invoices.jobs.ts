import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { sendDueInvoiceEmails } from './invoice-email.ts'
import { expireDueInvoices, reconcileInvoicePayments } from './invoice-sync.service.ts'

/**
 * Every minute: invoices whose checkout payment was captured become paid; open invoices
 * past their link expiry become expired (their open session cancelled); invoice emails
 * that failed (or whose attempt was cut short) are retried. Registered after the payments
 * reconcilers, so one run sees the acquirer's late answers.
 */
export function invoicesReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'invoices.reconcile_payments',
      cron: '* * * * *',
      run: () => reconcileInvoicePayments(deps),
    },
    { name: 'invoices.expire_invoices', cron: '* * * * *', run: () => expireDueInvoices(deps) },
    { name: 'invoices.send_emails', cron: '* * * * *', run: () => sendDueInvoiceEmails(deps) },
  ]
}
