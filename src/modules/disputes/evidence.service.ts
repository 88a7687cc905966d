import type { Deps } from '../../database.ts'
import { AppError, validationError } from '../../platform/errors.ts'
import { transact } from '../../platform/db/transaction.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { eventsForResource } from '../events/index.ts'
import { getFileContents, getFiles, storeFile } from '../files/index.ts'
import { getMerchant } from '../merchants/index.ts'
import { getPayment } from '../payments/index.ts'
import { disputesError } from './disputes.errors.ts'
import * as repo from './disputes.repository.ts'
import {
  closeChargeback,
  emitChargeback,
  toChargeback,
  type Chargeback,
  type RecordAnswer,
} from './disputes.service.ts'
import type { EvidenceDraft } from './disputes.table.ts'
import { EVIDENCE_TEXTS, renderEvidencePdf } from './evidence-pdf.ts'

// Evidence for a chargeback (CONTRACT.md "Dispute evidence"): the merchant saves a draft as
// often as it likes while the chargeback is `received`; `submit: true` renders the one PDF
// the bank receives, stores it as a file and moves the chargeback to `under_review`, all in
// one transaction with `chargeback.evidence_submitted`. The sandbox bank decides at the next
// reconcile (decideSubmittedEvidence).

export interface EvidenceInput extends EvidenceDraft {
  submit?: boolean
}

function merged(current: EvidenceDraft, input: EvidenceInput): EvidenceDraft {
  const next: EvidenceDraft = {}
  for (const [key] of EVIDENCE_TEXTS) {
    // A field given replaces the draft's; "" clears it; one left out keeps it.
    const value = input[key] ?? current[key]
    if (typeof value === 'string' && value !== '') next[key] = value as never
  }
  const fileIds = input.fileIds ?? current.fileIds
  if (fileIds !== undefined) next.fileIds = [...new Set(fileIds)]
  return next
}

function isEmpty(e: EvidenceDraft): boolean {
  return EVIDENCE_TEXTS.every(([key]) => !e[key]) && (e.fileIds ?? []).length === 0
}

/**
 * Saves the draft (fields given replace the draft's; "" clears one) and, with `submit`,
 * sends it. Only while the chargeback is `received` (409 SVC-STATE-3401 after); a file id
 * that is not the merchant's is a 400 naming it.
 */
export async function saveEvidence(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  chargebackId: string,
  input: EvidenceInput,
  /** The request's Idempotency-Key answer, recorded with the save (decision 0035). */
  record: RecordAnswer = async () => undefined,
): Promise<Chargeback> {
  // Reads that use the pool come first: on PGlite the transaction holds the one connection.
  const payment = await getPayment(deps, merchantId, paymentId)
  const before = await repo.findChargebackById(deps.db, merchantId, chargebackId)
  if (!before || before.payment_id !== paymentId) throw disputesError('chargeback_not_found')
  if (before.status !== 'received') throw disputesError('chargeback_resolved')
  const draft = merged(before.evidence, input)
  const { found: files, missing } = await getFiles(deps, merchantId, draft.fileIds ?? [])
  if (missing.length > 0) throw validationError('fileIds', `no such file: ${missing.join(', ')}`)
  let pdf: Buffer | undefined
  if (input.submit === true) {
    if (isEmpty(draft)) throw validationError('body', 'evidence is empty: give a text or a file')
    const [merchant, timeline] = await Promise.all([
      getMerchant(deps, merchantId),
      eventsForResource(deps.db, merchantId, paymentId),
    ])
    // The images go into the document itself (the bank gets one PDF, not our file ids).
    const attached = []
    for (const f of files) {
      const image = f.type === 'png' || f.type === 'jpeg'
      attached.push(
        image ? { ...f, bytes: (await getFileContents(deps, merchantId, f.id)).bytes } : f,
      )
    }
    pdf = await renderEvidencePdf({
      merchantName: merchant.name,
      chargeback: {
        id: before.id,
        bankChargebackId: before.bank_chargeback_id,
        reasonCode: before.reason_code,
        amount: before.amount,
        receivedAt: before.received_at,
        evidenceDueBy: before.evidence_due_by,
      },
      payment,
      timeline: timeline.map((e) => ({ at: e.createdAt, type: e.type })),
      evidence: draft,
      files: attached,
      generatedAt: deps.clock.now(),
    })
  }
  return transact(deps.db, async (tx) => {
    const now = deps.clock.now()
    const current = await repo.lockChargeback(tx, merchantId, paymentId, chargebackId)
    if (!current) throw disputesError('chargeback_not_found')
    // The draft was merged from what was read before the lock: another save in between
    // would be overwritten silently, so it is a 409 to retry instead.
    if (JSON.stringify(current.evidence) !== JSON.stringify(before.evidence)) {
      throw disputesError('chargeback_resolved')
    }
    let row = await repo.updateEvidenceDraft(tx, chargebackId, draft)
    if (!row) throw disputesError('chargeback_resolved')
    if (pdf) {
      const file = await storeFile(tx, deps, merchantId, 'dispute_evidence_submission', pdf)
      row = await repo.moveChargeback(tx, chargebackId, ['received'], 'under_review', {
        evidenceFileId: file.id,
        evidenceSubmittedAt: now,
      })
      if (!row) throw disputesError('chargeback_resolved')
      await emitChargeback(
        tx,
        row,
        payment.storeId,
        payment.callbackUrl,
        now,
        'chargeback.evidence_submitted',
      )
    }
    const saved = toChargeback(row)
    await record(tx, saved)
    return saved
  }).then((saved) => {
    failpoint('chargeback.after_commit')
    return saved
  })
}

const WIN = 'winning_evidence'
const LOSE = 'losing_evidence'
const BATCH = 100

/**
 * The sandbox bank (demo only): a submission whose texts contain `winning_evidence` is won
 * (reversed, the received legs mirrored), one containing `losing_evidence` lost (accepted);
 * `chargeback.closed` either way. Any other submission stays under review.
 */
export async function decideSubmittedEvidence(deps: Deps): Promise<number> {
  let moved = 0
  let offset = 0
  for (;;) {
    const rows = await repo.findUnderReview(deps.db, BATCH, offset)
    for (const row of rows) {
      const texts = EVIDENCE_TEXTS.map(([key]) => row.evidence[key] ?? '').join('\n')
      const outcome = texts.includes(WIN) ? 'won' : texts.includes(LOSE) ? 'lost' : undefined
      if (!outcome) {
        offset++
        continue
      }
      try {
        await closeChargeback(deps, row.merchant_id, row.payment_id, row.id, {
          from: ['under_review'],
          to: outcome === 'won' ? 'reversed' : 'accepted',
          resolution: outcome,
          event: 'chargeback.closed',
        })
        moved++
      } catch (error) {
        // The merchant reversed it meanwhile: nothing left to decide.
        if (!(error instanceof AppError) || error.status !== 409) throw error
      }
    }
    if (rows.length < BATCH) return moved
  }
}
