import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { expireOverdueChargebacks } from './disputes.service.ts'
import { decideSubmittedEvidence } from './evidence.service.ts'
import { sendEvidenceReminders } from './reminders.service.ts'

/**
 * Every minute: chargebacks left unanswered past `evidenceDueBy` close as `accepted` with
 * `resolution: expired`; owners are reminded 2 days before; in demo, the sandbox bank decides submitted evidence.
 */
export function disputesReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'disputes.expire_chargebacks',
      cron: '* * * * *',
      run: () => expireOverdueChargebacks(deps),
    },
    {
      name: 'disputes.send_reminders',
      cron: '* * * * *',
      run: () => sendEvidenceReminders(deps),
    },
    // The sandbox bank's decisions on submitted evidence: demo only (a live acquirer's dispute
    // feed reports outcomes instead).
    ...(deps.config.env === 'demo'
      ? [
          {
            name: 'disputes.decide_evidence',
            cron: '* * * * *',
            run: () => decideSubmittedEvidence(deps),
          },
        ]
      : []),
  ]
}
