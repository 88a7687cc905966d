import type { Deps } from '../../database.ts'
import { formatDateTr, formatTryTr } from '../invoices/index.ts'
import { sendMail } from '../mail/index.ts'
import { getMerchant, listDashboardMembers } from '../merchants/index.ts'
import * as repo from './disputes.repository.ts'
import type { ChargebackRow } from './disputes.table.ts'

// The deadline reminder (CONTRACT.md "Dispute evidence"): 2 days before `evidenceDueBy`, the
// merchant's dashboard owners get one email per open chargeback. The row is its own outbox:
// the reminder is claimed (reminder_sent_at set, conditional on null) before the mail goes out,
// so two workers never both send it; a failed send gives the claim back and the next run
// retries. A crash between the claim and the send loses that one reminder: a missed courtesy
// email is the cheaper failure than a duplicate on every retry.

export const REMINDER_LEAD_MS = 2 * 86_400_000
const BATCH = 100

function compose(
  deps: Deps,
  cb: ChargebackRow,
  merchantName: string,
): { subject: string; text: string } {
  const amount = formatTryTr(cb.amount)
  const due = formatDateTr(cb.evidence_due_by)
  const link = `${deps.config.publicApiUrl}/dashboard/chargebacks/${cb.id}`
  return {
    subject: `Ters ibraz için son 2 gün: ${amount} (${cb.id})`,
    text: [
      `${merchantName} hesabındaki ${cb.payment_id} ödemesine ${amount} tutarında ters ibraz`,
      `(${cb.id}, sebep kodu ${cb.reason_code}) geldi. İtiraz belgelerini ${due} tarihine`,
      `(${cb.evidence_due_by.toISOString()}) kadar gönderin; gönderilmezse ters ibraz kabul`,
      'edilmiş sayılır.',
      '',
      `A chargeback of ${amount} on payment ${cb.payment_id} (${cb.id}) needs your evidence by`,
      `${cb.evidence_due_by.toISOString()}; unanswered, it closes as accepted.`,
      '',
      `POST /v1/payments/${cb.payment_id}/chargebacks/${cb.id}/evidence`,
      link,
    ].join('\n'),
  }
}

/** The reconciler: every open chargeback within 2 days of its deadline, reminded once. */
export async function sendEvidenceReminders(deps: Deps): Promise<number> {
  let sent = 0
  // A reminder whose send failed is released and would be fetched again: each is tried once
  // per run, and a batch of nothing but tried ones ends the run.
  const tried = new Set<string>()
  for (;;) {
    const now = deps.clock.now()
    const due = await repo.findReminderDue(
      deps.db,
      new Date(now.getTime() + REMINDER_LEAD_MS),
      now,
      BATCH,
    )
    for (const cb of due) {
      if (tried.has(cb.id)) continue
      tried.add(cb.id)
      if (!(await repo.claimReminder(deps.db, cb.id, now))) continue
      try {
        const [merchant, members] = await Promise.all([
          getMerchant(deps, cb.merchant_id),
          listDashboardMembers(deps, cb.merchant_id),
        ])
        const message = compose(deps, cb, merchant.name)
        for (const owner of members.filter((m) => m.role === 'owner')) {
          await sendMail(deps, { to: owner.email, ...message })
        }
        sent++
      } catch (error) {
        await repo.releaseReminder(deps.db, cb.id)
        deps.log.warn({ err: error, chargebackId: cb.id }, 'evidence reminder not sent')
      }
    }
    if (due.length < BATCH || due.every((cb) => tried.has(cb.id))) return sent
  }
}
