import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  postButton,
  section,
  selectField,
  type BadgeTone,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { getSubmerchant, listStores } from '../merchants/index.ts'
import {
  CreateDraftBody,
  DRAFT_CSV_COLUMNS,
  approveDraft,
  cancelDraft,
  createDraft,
  getBalances,
  getDraft,
  listPayouts,
  getPayout,
  listDrafts,
  listRecentDrafts,
  parseDraftCsv,
  type Draft,
  type DraftStatus,
  type PayoutStatus,
} from '../payouts/index.ts'
import {
  BASE,
  allow,
  attempt,
  permitted,
  auditedAction,
  csrfToken,
  refusalText,
  renderPage,
  redirect,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { formFields, queryFields } from './forms.ts'
import { idParam, keysetPager } from './list-pages.ts'
import { settlementRoutes } from './settlement.pages.ts'
import { PageActionBody } from './dashboard.schemas.ts'
import { pageRoute } from './page-rules.ts'

// /dashboard/payouts: balances of the merchant and of each submerchant, the payouts list
// (status filter, keyset pages) and the latest drafts; /dashboard/payouts/drafts/new: a CSV
// of payout rows pasted into a text area (no multipart in the stack yet; see
// docs/dashboard.md) → /dashboard/payouts/drafts/{id}: the per-row report, Approve (needs an
// approved KYC, as the API's route) and Cancel. All through the payouts module's createDraft /
// getDraft / approveDraft / cancelDraft / listPayouts / getBalances, as the API;
// /dashboard/payouts/{id}: one payout with its status timeline (getPayout);
// /dashboard/payouts/drafts: every draft in keyset pages (listDrafts).

const PAGE_SIZE = 25
const STATUSES: readonly PayoutStatus[] = ['pending', 'processing', 'paid', 'failed']
const TONES: Readonly<Record<PayoutStatus, BadgeTone>> = {
  pending: 'warning',
  processing: 'info',
  paid: 'success',
  failed: 'danger',
}
const DRAFT_TONES: Readonly<Record<DraftStatus, BadgeTone>> = {
  draft: 'info',
  approved: 'success',
  cancelled: 'neutral',
}

function payoutBadge(lang: Lang, status: PayoutStatus): SafeHtml {
  return badge(t(lang, `dash_po_status_${status}`), TONES[status])
}

function draftBadge(lang: Lang, status: DraftStatus): SafeHtml {
  return badge(t(lang, `dash_drf_status_${status}`), DRAFT_TONES[status])
}

function draftsTable(lang: Lang, drafts: readonly Draft[]): SafeHtml {
  return dataTable({
    caption: t(lang, 'dash_drf_latest'),
    id: 'drafts-table',
    columns: [
      { label: t(lang, 'dash_col_created') },
      { label: t(lang, 'dash_col_status') },
      { label: t(lang, 'dash_drf_rows'), numeric: true },
      { label: t(lang, 'dash_drf_valid_total'), numeric: true },
    ],
    rows: drafts.map((d) => [
      markup`<a href="${BASE}/payouts/drafts/${d.id}">${formatDate(d.createdAt, lang, 'datetime')}</a>`,
      draftBadge(lang, d.status),
      `${formatNumber(d.validCount, lang)} / ${formatNumber(d.rowCount, lang)}`,
      formatMoney(d.validTotalMinor, lang),
    ]),
    empty: t(lang, 'dash_none'),
  })
}

async function ownerNames(deps: Deps, merchantId: string, ids: readonly string[]) {
  const names = new Map<string, string>()
  for (const id of new Set(ids)) {
    const found = await attempt(() => getSubmerchant(deps, merchantId, id))
    if (found.ok) names.set(id, found.value.name)
  }
  return names
}

async function mainPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const { merchantId } = ctx.member
  const query = queryFields(ctx.request)
  const statusText = query.optional('status', 20)
  const status = STATUSES.find((s) => s === statusText)
  const cursor = query.optional('after', 2048)
  const caller = { merchantId, submerchantId: null }
  const [balances, drafts, result] = await Promise.all([
    getBalances(deps, caller),
    listRecentDrafts(deps, merchantId, 10),
    attempt(() =>
      listPayouts(deps, caller, { limit: PAGE_SIZE, status, ...(cursor ? { cursor } : {}) }),
    ),
  ])
  const { items, nextCursor } = result.ok ? result.value : { items: [], nextCursor: null }
  const names = await ownerNames(
    deps,
    merchantId,
    balances.flatMap((b) => (b.ownerType === 'submerchant' ? [b.ownerId] : [])),
  )
  const money = (m: number) => formatMoney(m, lang)
  const owner = (type: 'merchant' | 'submerchant', id: string) =>
    type === 'merchant'
      ? t(lang, 'dash_po_owner_merchant')
      : markup`${names.get(id) ?? ''} <span class="mono">${id}</span>`
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_payouts'),
    section: 'payouts',
    ...(ctx.can('payouts.manage')
      ? {
          headingAside: markup`<a class="button button-primary" href="${BASE}/payouts/drafts/new">${t(lang, 'dash_drf_new')}</a>`,
        }
      : {}),
    ...(result.ok
      ? {}
      : {
          status: result.error.status,
          flash: { kind: 'error', text: refusalText(lang, result.error) },
        }),
    content: markup`
      ${section({
        title: t(lang, 'dash_po_balances'),
        id: 'balances-heading',
        body: dataTable({
          caption: t(lang, 'dash_po_balances'),
          id: 'balances-table',
          columns: [
            { label: t(lang, 'dash_col_owner') },
            { label: t(lang, 'dash_po_available'), numeric: true },
            { label: t(lang, 'dash_po_reserved'), numeric: true },
            { label: t(lang, 'dash_po_pending'), numeric: true },
          ],
          rows: balances.map((b) => [
            owner(b.ownerType, b.ownerId),
            money(b.availableMinor),
            money(b.reserveMinor),
            money(b.payoutPendingMinor),
          ]),
          empty: t(lang, 'dash_none'),
        }),
      })}
      <p><a id="settlement-link" href="${BASE}/payouts/settlement">${lang === 'tr' ? 'Banka hesabınıza hakedişler' : 'Payouts to your bank account'}</a></p>
      ${section({
        title: t(lang, 'dash_drf_latest'),
        id: 'drafts-heading',
        body: markup`${draftsTable(lang, drafts)}
          ${drafts.length ? markup`<p><a href="${BASE}/payouts/drafts">${t(lang, 'dash_drf_all')}</a></p>` : ''}`,
      })}
      ${section({
        title: t(lang, 'dash_po_list'),
        id: 'payouts-heading',
        body: markup`<form method="get" action="${BASE}/payouts" class="form-stack">
            ${selectField({
              name: 'status',
              label: t(lang, 'dash_col_status'),
              value: status,
              options: [
                { value: '', label: t(lang, 'dash_pay_all_statuses') },
                ...STATUSES.map((s) => ({ value: s, label: t(lang, `dash_po_status_${s}`) })),
              ],
            })}
            <div class="actions">
              <button type="submit" class="button button-primary">${t(lang, 'dash_pay_apply')}</button>
            </div>
          </form>
          ${dataTable({
            caption: t(lang, 'dash_po_list'),
            id: 'payouts-table',
            columns: [
              { label: t(lang, 'dash_col_created') },
              { label: t(lang, 'dash_col_amount'), numeric: true },
              { label: t(lang, 'dash_col_status') },
              { label: t(lang, 'dash_po_holder') },
              { label: t(lang, 'dash_po_dest') },
              { label: t(lang, 'dash_po_rail') },
            ],
            rows: items.map((p) => [
              markup`<a href="${BASE}/payouts/${p.id}">${formatDate(p.createdAt, lang, 'datetime')}</a>`,
              money(p.amountMinor),
              payoutBadge(lang, p.status),
              p.holderName,
              markup`<span class="mono">${p.destMasked}</span>`,
              p.rail.toUpperCase(),
            ]),
            empty: t(lang, 'dash_none'),
          })}
          ${keysetPager(lang, `${BASE}/payouts`, { status }, cursor, nextCursor)}`,
      })}`,
  })
}

async function newDraftPage(
  deps: Deps,
  ctx: PageContext,
  input?: { storeId: string; csv: string },
  problem?: AppError,
) {
  const { lang } = ctx
  const stores = await listStores(deps, ctx.member.merchantId)
  const example = `${DRAFT_CSV_COLUMNS.slice(0, 4).join(',')}\nfast,TR330006100519786457841326,Ayşe Yılmaz,150000`
  return renderPage(ctx, {
    heading: t(lang, 'dash_drf_new'),
    section: 'payouts',
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
    content: markup`<form method="post" action="${BASE}/payouts/drafts" class="panel form-stack" id="draft-form">
      ${csrfInput(csrfToken(ctx.request, ctx.reply))}
      ${selectField({
        name: 'storeId',
        label: t(lang, 'dash_inv_store'),
        value: input?.storeId,
        options: stores.map((s) => ({ value: s.id, label: s.name })),
      })}
      <div class="field">
        <label for="f-csv">${t(lang, 'dash_drf_csv')}</label>
        <textarea id="f-csv" name="csv" rows="10" required spellcheck="false" aria-describedby="f-csv-hint">${input?.csv ?? ''}</textarea>
        <p class="hint" id="f-csv-hint">${t(lang, 'dash_drf_csv_hint', { columns: DRAFT_CSV_COLUMNS.join(', ') })}</p>
      </div>
      <pre class="mono example" aria-label="${t(lang, 'dash_drf_example')}">${example}</pre>
      <div class="actions">
        <button type="submit" class="button button-primary">${t(lang, 'dash_drf_upload')}</button>
        <a class="button button-secondary" href="${BASE}/payouts">${t(lang, 'dash_cancel')}</a>
      </div>
    </form>`,
  })
}

async function draftPage(deps: Deps, ctx: PageContext, id: string, problem?: AppError) {
  const { lang } = ctx
  const { draft, rows } = await getDraft(deps, ctx.member.merchantId, id)
  const money = (m: number) => formatMoney(m, lang)
  const token = csrfToken(ctx.request, ctx.reply)
  const actions =
    draft.status === 'draft' && ctx.can('payouts.manage')
      ? markup`<div class="actions">
          ${
            draft.validCount > 0
              ? postButton({
                  action: `${BASE}/payouts/drafts/${draft.id}/approve`,
                  csrfToken: token,
                  label: t(lang, 'dash_drf_approve', { amount: money(draft.validTotalMinor) }),
                  variant: 'primary',
                })
              : ''
          }
          ${postButton({
            action: `${BASE}/payouts/drafts/${draft.id}/cancel`,
            csrfToken: token,
            label: t(lang, 'dash_drf_cancel'),
            variant: 'danger',
          })}
        </div>
        ${draft.invalidCount > 0 ? markup`<p class="hint">${t(lang, 'dash_drf_invalid_note')}</p>` : ''}`
      : markup`<p class="muted">${t(lang, 'dash_pay_no_actions')}</p>`
  return renderPage(ctx, {
    heading: t(lang, 'dash_drf_title'),
    section: 'payouts',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/payouts">${t(lang, 'dash_po_back')}</a>`,
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
    content: markup`
      ${section({
        title: t(lang, 'dash_drf_summary'),
        id: 'summary-heading',
        body: facts([
          [
            t(lang, 'dash_col_status'),
            markup`<span id="draft-status">${draftBadge(lang, draft.status)}</span>`,
          ],
          [t(lang, 'dash_drf_rows'), formatNumber(draft.rowCount, lang)],
          [
            t(lang, 'dash_drf_valid'),
            markup`<span id="valid-count">${formatNumber(draft.validCount, lang)}</span>`,
          ],
          [
            t(lang, 'dash_drf_invalid'),
            markup`<span id="invalid-count">${formatNumber(draft.invalidCount, lang)}</span>`,
          ],
          [t(lang, 'dash_drf_valid_total'), money(draft.validTotalMinor)],
          [t(lang, 'dash_col_created'), formatDate(draft.createdAt, lang, 'datetime')],
          [t(lang, 'dash_drf_id'), markup`<span class="mono">${draft.id}</span>`],
        ]),
      })}
      ${section({ title: t(lang, 'dash_pay_actions'), id: 'actions-heading', body: actions })}
      ${section({
        title: t(lang, 'dash_drf_report'),
        id: 'report-heading',
        body: dataTable({
          caption: t(lang, 'dash_drf_report'),
          id: 'report-table',
          columns: [
            { label: t(lang, 'dash_drf_line'), numeric: true },
            { label: t(lang, 'dash_col_status') },
            { label: t(lang, 'dash_po_holder') },
            { label: t(lang, 'dash_po_dest') },
            { label: t(lang, 'dash_col_amount'), numeric: true },
            { label: t(lang, 'dash_drf_problems') },
          ],
          rows: rows.map((r) => [
            // The CSV's line: the header is line 1.
            formatNumber(r.index + 2, lang),
            r.valid
              ? badge(t(lang, 'dash_drf_row_ok'), 'success')
              : badge(t(lang, 'dash_drf_row_bad'), 'danger'),
            r.holderName ?? '—',
            markup`<span class="mono">${r.destMasked ?? '—'}</span>`,
            r.amountMinor === null ? '—' : money(r.amountMinor),
            r.errors.length ? r.errors.join('; ') : '—',
          ]),
          empty: t(lang, 'dash_none'),
        }),
      })}`,
  })
}

/** Every draft of the merchant, newest first, in keyset pages. */
async function draftsPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const cursor = queryFields(ctx.request).optional('after', 2048)
  const result = await attempt(() =>
    listDrafts(deps, ctx.member.merchantId, { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
  )
  const { items, nextCursor } = result.ok ? result.value : { items: [], nextCursor: null }
  return renderPage(ctx, {
    heading: t(lang, 'dash_drf_all'),
    section: 'payouts',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/payouts">${t(lang, 'dash_po_back')}</a>`,
    ...(result.ok
      ? {}
      : {
          status: result.error.status,
          flash: { kind: 'error', text: refusalText(lang, result.error) },
        }),
    content: markup`${draftsTable(lang, items)}
      ${keysetPager(lang, `${BASE}/payouts/drafts`, {}, cursor, nextCursor)}`,
  })
}

/** One payout: amounts, where it goes, and its status timeline. */
async function payoutPage(deps: Deps, ctx: PageContext, id: string) {
  const { lang } = ctx
  const { merchantId } = ctx.member
  // Another merchant's (or no) payout is the service's 404: the 404 page.
  const p = await getPayout(deps, { merchantId, submerchantId: null }, id)
  const names = p.submerchantId
    ? await ownerNames(deps, merchantId, [p.submerchantId])
    : new Map<string, string>()
  const when = (d: Date | null) => (d ? formatDate(d, lang, 'datetime') : '—')
  const steps: [string, Date | null][] = [
    [t(lang, 'dash_po_status_pending'), p.createdAt],
    [t(lang, 'dash_po_status_processing'), p.processingAt],
    ...(p.status === 'failed'
      ? ([[t(lang, 'dash_po_status_failed'), p.failedAt]] as [string, Date | null][])
      : ([[t(lang, 'dash_po_status_paid'), p.paidAt]] as [string, Date | null][])),
  ]
  const content = markup`
    ${section({
      title: t(lang, 'dash_po_details'),
      id: 'payout-heading',
      body: facts([
        [
          t(lang, 'dash_col_amount'),
          markup`<span id="payout-amount">${formatMoney(p.amountMinor, lang)}</span>`,
        ],
        [
          t(lang, 'dash_col_status'),
          markup`<span id="payout-status">${payoutBadge(lang, p.status)}</span>`,
        ],
        [
          t(lang, 'dash_col_owner'),
          p.submerchantId
            ? markup`${names.get(p.submerchantId) ?? ''} <span class="mono">${p.submerchantId}</span>`
            : t(lang, 'dash_po_owner_merchant'),
        ],
        [t(lang, 'dash_po_holder'), p.holderName],
        [t(lang, 'dash_po_dest'), markup`<span class="mono">${p.destMasked}</span>`],
        [t(lang, 'dash_po_rail'), p.rail.toUpperCase()],
        [t(lang, 'dash_po_failure'), p.failureCode ?? '—'],
        [t(lang, 'dash_po_reference'), p.clientReference ?? '—'],
        [
          t(lang, 'dash_po_draft'),
          p.draftId
            ? markup`<a class="mono" href="${BASE}/payouts/drafts/${p.draftId}">${p.draftId}</a>`
            : '—',
        ],
        [t(lang, 'dash_po_id'), markup`<span class="mono">${p.id}</span>`],
      ]),
    })}
    ${section({
      title: t(lang, 'dash_pay_timeline'),
      id: 'timeline-heading',
      body: markup`<ol class="timeline" id="payout-timeline">
        ${steps.map(([label, at]) => markup`<li>${label} · ${when(at)}</li>`)}
      </ol>`,
    })}
    ${section({
      title: t(lang, 'dash_pay_metadata'),
      id: 'metadata-heading',
      body: Object.keys(p.metadata).length
        ? facts(Object.entries(p.metadata))
        : markup`<p class="muted">${t(lang, 'dash_none')}</p>`,
    })}`
  return renderPage(ctx, {
    heading: t(lang, 'dash_po_title', { amount: formatMoney(p.amountMinor, lang) }),
    section: 'payouts',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/payouts">${t(lang, 'dash_po_back')}</a>`,
    content,
  })
}

// Each action's rule, as the API's route for it (page-rules.ts): approving sends money out of
// the merchant, so it is KYC-gated as POST /v1/payout-drafts/{id}/approve is.
const ROUTES = {
  create: pageRoute({ permission: 'payouts.manage', schema: CreateDraftBody }),
  approve: pageRoute({ permission: 'payouts.manage', schema: PageActionBody, kyc: true }),
  cancel: pageRoute({ permission: 'payouts.manage', schema: PageActionBody }),
}

export function payoutsPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    // Settlement to the merchant's own bank account (issue 40): settlement.pages.ts.
    settlementRoutes(app, deps)

    app.get('/payouts', async (request, reply) =>
      mainPage(deps, allow(deps, request, reply, 'read')),
    )

    app.get('/payouts/drafts', async (request, reply) =>
      draftsPage(deps, allow(deps, request, reply, 'read')),
    )

    app.get('/payouts/:id', async (request, reply) =>
      payoutPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    app.get('/payouts/drafts/new', async (request, reply) =>
      newDraftPage(deps, allow(deps, request, reply, 'payouts.manage')),
    )

    app.post('/payouts/drafts', ROUTES.create, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { merchantId } = ctx.member
      const form = formFields(request)
      const input = { storeId: form.text('storeId', 64), csv: form.text('csv', 400_001) }
      // A new draft is recorded under its store: its id exists only inside the action.
      const result = await attempt(async () => {
        const rows = parseDraftCsv(input.csv)
        return auditedAction(ctx, 'payout_draft.create', input.storeId, { rows: rows.length }, () =>
          createDraft(deps, merchantId, { storeId: input.storeId, rows }),
        )
      })
      if (!result.ok) {
        // Another merchant's store is the 404 page, as any of its ids.
        if (result.error.status === 404) throw result.error
        return newDraftPage(deps, ctx, input, result.error)
      }
      const draft = result.value
      setFlash(deps, reply, 'success', 'dash_done_drf_create', {
        valid: draft.validCount,
        rows: draft.rowCount,
      })
      return redirect(reply, `${BASE}/payouts/drafts/${draft.id}`)
    })

    app.get('/payouts/drafts/:id', async (request, reply) =>
      draftPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    const act = async (
      ctx: PageContext,
      id: string,
      action: 'approve' | 'cancel',
    ): Promise<FastifyReply> => {
      const { merchantId } = ctx.member
      // Approve's KYC gate is the route's declared rule (page-rules.ts), as the API's.
      const result = await attempt(() =>
        auditedAction(ctx, `payout_draft.${action}`, id, {}, async () => {
          if (action === 'cancel') {
            const d = await cancelDraft(deps, merchantId, id)
            return { status: d.status, payouts: 0 }
          }
          const approved = await approveDraft(deps, merchantId, id)
          return { status: approved.status, payouts: approved.payoutIds.length }
        }),
      )
      if (!result.ok) {
        if (result.error.status === 404) throw result.error
        return draftPage(deps, ctx, id, result.error)
      }
      if (action === 'approve') {
        setFlash(deps, ctx.reply, 'success', 'dash_done_drf_approve', {
          count: result.value.payouts,
        })
      } else {
        setFlash(deps, ctx.reply, 'success', 'dash_done_drf_cancel')
      }
      return redirect(ctx.reply, `${BASE}/payouts/drafts/${id}`)
    }

    for (const action of ['approve', 'cancel'] as const) {
      app.post(`/payouts/drafts/:id/${action}`, ROUTES[action], async (request, reply) =>
        act(permitted(deps, request, reply), idParam(request), action),
      )
    }
  }
}
