import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import { AppError, validationError } from '../../platform/errors.ts'
import { BODY_LIMIT_BYTES } from '../../platform/http/raw-body.ts'
import {
  csrfInput,
  dataTable,
  facts,
  field,
  postButton,
  section,
  textArea,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { getChargeback, saveEvidence, type Chargeback } from '../disputes/index.ts'
import {
  FILE_SIZE_MAX_BYTES,
  getFileContents,
  getFiles,
  parseUploadForm,
  uploadFile,
  uploadFileName,
  type StoredFile,
} from '../files/index.ts'
import {
  BASE,
  allow,
  attempt,
  permitted,
  auditedAction,
  csrfToken,
  renderPage,
  redirect,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { EvidenceBody } from '../disputes/index.ts'
import { EvidenceUploadBody, PageActionBody } from './dashboard.schemas.ts'
import { pageInput, pageRoute } from './page-rules.ts'
import { formFields } from './forms.ts'
import { idParam } from './list-pages.ts'
import { statusBadge } from './chargeback-view.ts'

// A chargeback's evidence (CONTRACT.md "Dispute evidence") on its dashboard page: the panel
// (the draft's texts and files while `received`, what was submitted after) and its routes
// (save, submit with a confirmation, attach and remove files, download). The routes answer a
// refusal with the chargeback's page, which `chargebacksPages` (chargebacks.pages.ts) passes in.

type EvidenceKey =
  | 'productDescription'
  | 'customerCommunication'
  | 'shippingTrackingNumber'
  | 'refundPolicy'
  | 'uncategorizedText'

/** The draft's texts, their limits (the API's schema) and how each is typed. */
const EVIDENCE_FIELDS: readonly { key: EvidenceKey; charsMax: number; area: boolean }[] = [
  { key: 'productDescription', charsMax: 20_000, area: true },
  { key: 'customerCommunication', charsMax: 20_000, area: true },
  { key: 'shippingTrackingNumber', charsMax: 200, area: false },
  { key: 'refundPolicy', charsMax: 20_000, area: true },
  { key: 'uncategorizedText', charsMax: 20_000, area: true },
]
/** Files on one draft (the API's `fileIds` maxItems). */
const EVIDENCE_FILES_MAX = 20
/**
 * Four texts of 20,000 characters, urlencoded (a Turkish letter is 6 bytes), need ~600 KiB:
 * these two forms take the API's own body limit (1 MiB) instead of the dashboard's 64 KiB.
 */
const EVIDENCE_FORM_BYTES_MAX = BODY_LIMIT_BYTES
/** A 5 MiB file plus the form around it (boundaries, part headers, the CSRF field). */
const UPLOAD_BODY_BYTES_MAX = FILE_SIZE_MAX_BYTES + 64 * 1024
const MULTIPART = /^multipart\/form-data(;.*)?$/i

type EvidenceTexts = Partial<Record<EvidenceKey, string>>

const RESOLUTION_KEYS = {
  accepted: 'dash_cb_resolution_accepted',
  reversed: 'dash_cb_resolution_reversed',
  won: 'dash_cb_resolution_won',
  lost: 'dash_cb_resolution_lost',
  expired: 'dash_cb_resolution_expired',
} as const

function bytesText(lang: Lang, size: number): string {
  return size >= 1024 * 1024
    ? `${formatNumber(Math.round((size / 1024 / 1024) * 10) / 10, lang)} MiB`
    : `${formatNumber(Math.max(1, Math.round(size / 1024)), lang)} KiB`
}

function fileLabel(lang: Lang, f: StoredFile): string {
  return f.name ?? t(lang, 'dash_evd_file_unnamed', { type: f.type.toUpperCase() })
}

function filesTable(
  ctx: PageContext,
  cb: Chargeback,
  files: readonly StoredFile[],
  editable: boolean,
) {
  const { lang } = ctx
  const token = editable ? csrfToken(ctx.request, ctx.reply) : ''
  return dataTable({
    caption: t(lang, 'dash_evd_files'),
    showCaption: true,
    id: 'evidence-files',
    columns: [
      { label: t(lang, 'dash_evd_file') },
      { label: t(lang, 'dash_evd_file_type') },
      { label: t(lang, 'dash_evd_file_size'), numeric: true },
      ...(editable ? [{ label: t(lang, 'dash_pay_actions') }] : []),
    ],
    rows: files.map((f) => [
      // The name the file was uploaded with; staff do not know files by their ids.
      markup`<a href="${BASE}/chargebacks/${cb.id}/files/${f.id}">${fileLabel(lang, f)}</a>`,
      f.type.toUpperCase(),
      bytesText(lang, f.size),
      ...(editable
        ? [
            postButton({
              action: `${BASE}/chargebacks/${cb.id}/evidence/files/${f.id}/remove`,
              csrfToken: token,
              label: t(lang, 'dash_evd_file_remove'),
              ariaLabel: t(lang, 'dash_evd_file_remove_named', { file: fileLabel(lang, f) }),
            }),
          ]
        : []),
    ]),
    empty: t(lang, 'dash_evd_no_files'),
  })
}

function evidenceForm(
  ctx: PageContext,
  cb: Chargeback,
  texts: EvidenceTexts,
  errorKey?: EvidenceKey,
) {
  const { lang } = ctx
  const token = csrfToken(ctx.request, ctx.reply)
  return markup`<form method="post" action="${BASE}/chargebacks/${cb.id}/evidence" class="form-stack" id="evidence-form">
      ${csrfInput(token)}
      ${EVIDENCE_FIELDS.map((f) => {
        const common = {
          name: f.key,
          label: t(lang, `dash_evd_${f.key}`),
          value: texts[f.key],
          maxlength: f.charsMax,
          ...(errorKey === f.key ? { error: t(lang, 'dash_evd_too_long', { n: f.charsMax }) } : {}),
        }
        return f.area ? textArea({ ...common, rows: 4 }) : field(common)
      })}
      <div class="actions">
        <button type="submit" class="button button-secondary">${t(lang, 'dash_evd_save')}</button>
        <button type="submit" class="button button-primary" formaction="${BASE}/chargebacks/${cb.id}/evidence/submit">
          ${t(lang, 'dash_evd_submit')}
        </button>
      </div>
    </form>
    <form method="post" action="${BASE}/chargebacks/${cb.id}/evidence/files" enctype="multipart/form-data" class="form-stack" id="upload-form">
      ${csrfInput(token)}
      <div class="field">
        <label for="f-file">${t(lang, 'dash_evd_upload_label')}</label>
        <input id="f-file" name="file" type="file" required accept=".pdf,.png,.jpg,.jpeg,application/pdf,image/png,image/jpeg" aria-describedby="f-file-hint" />
        <p class="hint" id="f-file-hint">${t(lang, 'dash_evd_upload_hint')}</p>
      </div>
      <div class="actions">
        <button type="submit" class="button button-secondary">${t(lang, 'dash_evd_upload')}</button>
      </div>
    </form>`
}

function submittedTexts(lang: Lang, cb: Chargeback): SafeHtml {
  const given = EVIDENCE_FIELDS.filter((f) => cb.evidence[f.key])
  if (given.length === 0) return markup``
  return facts(given.map((f) => [t(lang, `dash_evd_${f.key}`), cb.evidence[f.key] ?? '']))
}

export async function evidencePanel(
  deps: Deps,
  ctx: PageContext,
  cb: Chargeback,
  edit: { texts?: EvidenceTexts; errorKey?: EvidenceKey },
): Promise<SafeHtml> {
  const { lang } = ctx
  const { found: files } = await getFiles(deps, ctx.member.merchantId, cb.evidence.fileIds ?? [])
  const editable = cb.status === 'received' && ctx.can('payments.refund')
  const status = facts([
    [
      t(lang, 'dash_col_status'),
      markup`<span id="evidence-status">${statusBadge(lang, cb.status)}</span>`,
    ],
    [
      t(lang, 'dash_evd_due'),
      markup`<span id="evidence-due">${formatDate(cb.evidenceDueBy, lang, 'datetime')}</span>`,
    ],
    [
      t(lang, 'dash_evd_submitted'),
      cb.evidenceSubmittedAt ? formatDate(cb.evidenceSubmittedAt, lang, 'datetime') : '—',
    ],
    [
      t(lang, 'dash_evd_outcome'),
      markup`<span id="evidence-outcome">${cb.resolution ? t(lang, RESOLUTION_KEYS[cb.resolution]) : '—'}</span>`,
    ],
    ...(cb.evidenceFileId
      ? [
          [
            t(lang, 'dash_evd_pdf'),
            markup`<a href="${BASE}/chargebacks/${cb.id}/files/${cb.evidenceFileId}" id="evidence-pdf">${t(lang, 'dash_evd_pdf_download')}</a>`,
          ] as const,
        ]
      : []),
  ])
  const texts: EvidenceTexts = edit.texts ?? cb.evidence
  const body = editable
    ? markup`${status}
        <p class="hint">${t(lang, 'dash_cb_evidence_note')}</p>
        ${filesTable(ctx, cb, files, true)}
        ${evidenceForm(ctx, cb, texts, edit.errorKey)}`
    : markup`${status}${submittedTexts(lang, cb)}${files.length ? filesTable(ctx, cb, files, false) : ''}`
  return section({ title: t(lang, 'dash_evd_title'), id: 'evidence-heading', body })
}

export interface DetailExtra {
  problem?: AppError
  texts?: EvidenceTexts
  errorKey?: EvidenceKey
}

function confirmSubmitPage(ctx: PageContext, cb: Chargeback) {
  const { lang } = ctx
  return renderPage(ctx, {
    heading: t(lang, 'dash_evd_confirm_title'),
    section: 'chargebacks',
    content: markup`<div class="panel form-stack">
      <p id="confirm-text">${t(lang, 'dash_evd_confirm_body', { amount: formatMoney(cb.amount, lang) })}</p>
      <form method="post" action="${BASE}/chargebacks/${cb.id}/evidence/submit" class="actions">
        ${csrfInput(csrfToken(ctx.request, ctx.reply))}
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="button button-primary">${t(lang, 'dash_evd_confirm_button')}</button>
        <a class="button button-secondary" href="${BASE}/chargebacks/${cb.id}">${t(lang, 'dash_cancel')}</a>
      </form>
    </div>`,
  })
}

/** The texts of the evidence form, or the first one over its limit. */
function readTexts(ctx: PageContext): { texts: EvidenceTexts; tooLong?: EvidenceKey } {
  const form = formFields(ctx.request)
  const texts: EvidenceTexts = {}
  let tooLong: EvidenceKey | undefined
  for (const f of EVIDENCE_FIELDS) {
    // A field the form leaves blank clears the draft's ("" in the API's terms).
    const value = form.text(f.key, f.charsMax + 1).trim()
    if (value.length > f.charsMax) tooLong ??= f.key
    texts[f.key] = value
  }
  return tooLong ? { texts, tooLong } : { texts }
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  save: pageRoute({ permission: 'payments.refund', schema: EvidenceBody }),
  submit: pageRoute({ permission: 'payments.refund', schema: EvidenceBody }),
  upload: pageRoute({ permission: 'payments.refund', schema: EvidenceUploadBody }),
  removeFile: pageRoute({ permission: 'payments.refund', schema: PageActionBody }),
}

const REMOVE_FILE = '/chargebacks/:id/evidence/files/:fileId/remove'

/** The evidence routes of `chargebacksPages`; `detailPage` draws the chargeback's page. */
export function chargebackEvidenceRoutes(
  deps: Deps,
  app: FastifyInstance,
  detailPage: (
    deps: Deps,
    ctx: PageContext,
    id: string,
    extra?: DetailExtra,
  ) => Promise<FastifyReply>,
): void {
  // Evidence uploads, in this plugin only: the body is read whole (bounded) and parsed by the
  // files module's multipart reader; the CSRF check then reads `_csrf` from the parsed form.
  app.addContentTypeParser(
    MULTIPART,
    { parseAs: 'buffer', bodyLimit: UPLOAD_BODY_BYTES_MAX },
    (request, body, done) => {
      parseUploadForm(body as Buffer, request.headers['content-type'] ?? '').then(
        (form) => done(null, form),
        (error: unknown) => done(error as Error, undefined),
      )
    },
  )

  /** Saves the draft's texts (the API's evidence call without submit); a refusal is shown. */
  // The evidence's audit entry commits with the save that is the action (decision 0036).
  const audited = <T>(
    ctx: PageContext,
    action: string,
    cb: Chargeback,
    details: Record<string, string | number>,
    run: () => Promise<T>,
  ) => auditedAction(ctx, action, cb.id, { paymentId: cb.paymentId, ...details }, run)

  const saveTexts = async (ctx: PageContext, cb: Chargeback, action?: string) => {
    const { texts, tooLong } = readTexts(ctx)
    if (tooLong) {
      return {
        ok: false as const,
        page: await detailPage(deps, ctx, cb.id, {
          problem: validationError(tooLong, 'too long'),
          texts,
          errorKey: tooLong,
        }),
      }
    }
    const save = () => saveEvidence(deps, ctx.member.merchantId, cb.paymentId, cb.id, texts)
    const saved = await attempt(() => {
      const refused = pageInput(ctx.request, texts)
      if (refused) throw refused
      return action ? audited(ctx, action, cb, {}, save) : save()
    })
    if (!saved.ok) {
      return {
        ok: false as const,
        page: await detailPage(deps, ctx, cb.id, { problem: saved.error, texts }),
      }
    }
    return { ok: true as const }
  }

  app.post(
    '/chargebacks/:id/evidence',
    { bodyLimit: EVIDENCE_FORM_BYTES_MAX, ...ROUTES.save },
    async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const cb = await getChargeback(deps, ctx.member.merchantId, idParam(request))
      const saved = await saveTexts(ctx, cb, 'chargeback.evidence_save')
      if (!saved.ok) return saved.page
      setFlash(deps, reply, 'success', 'dash_done_ev_save')
      return redirect(reply, `${BASE}/chargebacks/${cb.id}`)
    },
  )

  app.post(
    '/chargebacks/:id/evidence/submit',
    { bodyLimit: EVIDENCE_FORM_BYTES_MAX, ...ROUTES.submit },
    async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { merchantId } = ctx.member
      const cb = await getChargeback(deps, merchantId, idParam(request))
      if (formFields(request).text('confirm', 3) !== 'yes') {
        // First step: the texts as typed are saved as the draft, then the page asks again.
        const saved = await saveTexts(ctx, cb)
        if (!saved.ok) return saved.page
        return confirmSubmitPage(ctx, cb)
      }
      const result = await attempt(() =>
        audited(ctx, 'chargeback.evidence_submit', cb, {}, () =>
          saveEvidence(deps, merchantId, cb.paymentId, cb.id, { submit: true }),
        ),
      )
      if (!result.ok) return detailPage(deps, ctx, cb.id, { problem: result.error })
      setFlash(deps, reply, 'success', 'dash_done_ev_submit')
      return redirect(reply, `${BASE}/chargebacks/${cb.id}`)
    },
  )

  app.post(
    '/chargebacks/:id/evidence/files',
    {
      ...ROUTES.upload,
      // The multipart parser above carries the upload's 5 MiB limit; any other body keeps
      // the 1 MiB one (and is refused later like any dashboard POST without a session).
      // Nobody's bytes reach the multipart reader before a signed-in session is known (the
      // session was resolved by onRequest; the stage check proper runs later, as elsewhere).
      preParsing: async (request) => {
        const multipart = MULTIPART.test(request.headers['content-type'] ?? '')
        if (multipart && request.dashSession?.stage !== 'active') {
          throw new AppError('SVC-AUTH-3201', 403, 'sign in first')
        }
      },
    },
    async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { merchantId } = ctx.member
      const cb = await getChargeback(deps, merchantId, idParam(request))
      const current = cb.evidence.fileIds ?? []
      const form = (request.body ?? {}) as Record<string, unknown>
      const bytes = typeof form['file'] === 'string' ? Buffer.from(form['file'], 'latin1') : null
      const result = await attempt(async () => {
        if (!MULTIPART.test(request.headers['content-type'] ?? '') || bytes === null) {
          throw validationError('file', 'choose a file to upload')
        }
        // Checked before the file is stored, so a refused upload leaves nothing behind.
        if (cb.status !== 'received') {
          throw new AppError('SVC-STATE-3401', 409, 'chargeback is already resolved')
        }
        if (current.length >= EVIDENCE_FILES_MAX) {
          throw validationError('fileIds', `at most ${String(EVIDENCE_FILES_MAX)} files`)
        }
        // The stored file is not yet evidence: attaching it is the action, with its entry.
        const file = await uploadFile(deps, merchantId, {
          purpose: 'dispute_evidence',
          bytes,
          name: uploadFileName(form),
        })
        const details = { fileId: file.id, type: file.type, size: file.size }
        await audited(ctx, 'chargeback.evidence_file', cb, details, () =>
          saveEvidence(deps, merchantId, cb.paymentId, cb.id, {
            fileIds: [...current, file.id],
          }),
        )
        return file
      })
      if (!result.ok) return detailPage(deps, ctx, cb.id, { problem: result.error })
      setFlash(deps, reply, 'success', 'dash_done_ev_file')
      return redirect(reply, `${BASE}/chargebacks/${cb.id}`)
    },
  )

  app.post(REMOVE_FILE, ROUTES.removeFile, async (request, reply) => {
    const ctx = permitted(deps, request, reply)
    const cb = await getChargeback(deps, ctx.member.merchantId, idParam(request))
    const fileId = idParam(request, 'fileId')
    const current = cb.evidence.fileIds ?? []
    if (!current.includes(fileId)) throw new AppError('SVC-RES-3301', 404, 'file not found')
    const result = await attempt(() =>
      audited(ctx, 'chargeback.evidence_file_remove', cb, { fileId }, () =>
        saveEvidence(deps, ctx.member.merchantId, cb.paymentId, cb.id, {
          fileIds: current.filter((f) => f !== fileId),
        }),
      ),
    )
    if (!result.ok) return detailPage(deps, ctx, cb.id, { problem: result.error })
    setFlash(deps, reply, 'success', 'dash_done_ev_file_remove')
    return redirect(reply, `${BASE}/chargebacks/${cb.id}`)
  })

  // A file of this chargeback's evidence (an attachment, or the submitted PDF); any other
  // file id, the merchant's own included, is the 404 page here.
  app.get('/chargebacks/:id/files/:fileId', async (request, reply) => {
    const ctx = allow(deps, request, reply, 'read')
    const cb = await getChargeback(deps, ctx.member.merchantId, idParam(request))
    const fileId = idParam(request, 'fileId')
    const ours = (cb.evidence.fileIds ?? []).includes(fileId) || cb.evidenceFileId === fileId
    if (!ours) throw new AppError('SVC-RES-3301', 404, 'file not found')
    const { file, bytes } = await getFileContents(deps, ctx.member.merchantId, fileId)
    const types = { pdf: 'application/pdf', png: 'image/png', jpeg: 'image/jpeg' } as const
    return reply
      .type(types[file.type])
      .header('content-disposition', `attachment; filename="${file.id}.${file.type}"`)
      .header('content-length', String(bytes.length))
      .header('x-content-type-options', 'nosniff')
      .send(bytes)
  })
}
