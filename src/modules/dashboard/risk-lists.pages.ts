import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import { csrfInput, dataTable, field, postButton, section } from '../../platform/web/components.ts'
import { formatDate } from '../../platform/web/format.ts'
import { markup } from '../../platform/web/html.ts'
import { t } from '../../platform/web/i18n.ts'
import {
  AddListItemBody,
  LIST_NAMES,
  addListItem,
  listListItems,
  listNamed,
  removeListItem,
  type RiskListName,
} from '../risk/index.ts'
import {
  BASE,
  allow,
  attempt,
  permitted,
  csrfToken,
  redirect,
  refusalText,
  renderPage,
  setFlash,
  type PageContext,
  auditedAction,
} from './dashboard.web.ts'
import { PageActionBody } from './dashboard.schemas.ts'
import { pageInput, pageRoute } from './page-rules.ts'
import { formFields, queryFields } from './forms.ts'
import { idParam, keysetPager } from './list-pages.ts'
import { RISK_SECTION, listLabel, riskTabs } from './risk-view.ts'

// /dashboard/risk/lists/{list}: a block list's entries, add and remove, under `risk.manage`
// (owners and admins), each the risk module's function the API calls. Registered by
// `riskPages` (risk.pages.ts), with its audit entry writer.

const LIST_PAGE_SIZE = 50

async function listPage(
  deps: Deps,
  ctx: PageContext,
  list: RiskListName,
  extra: { value?: string; note?: string; error?: string; problem?: AppError } = {},
) {
  const { lang } = ctx
  const cursor = queryFields(ctx.request).optional('after', 2048)
  const page = await attempt(() =>
    listListItems(deps, ctx.member.merchantId, list, {
      limit: LIST_PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    }),
  )
  const { items, nextCursor } = page.ok ? page.value : { items: [], nextCursor: null }
  const problem = extra.problem ?? (page.ok ? undefined : page.error)
  const manage = ctx.can('risk.manage')
  const token = csrfToken(ctx.request, ctx.reply)
  const content = markup`${riskTabs(lang, 'lists')}
    <div class="actions tabs" role="group" aria-label="${t(lang, 'dash_risk_lists_title')}">
      ${LIST_NAMES.map((l) =>
        l === list
          ? markup`<a class="button button-primary" href="${BASE}/risk/lists/${l}" aria-current="page">${listLabel(lang, l)}</a>`
          : markup`<a class="button button-secondary" href="${BASE}/risk/lists/${l}">${listLabel(lang, l)}</a>`,
      )}
    </div>
    <p class="hint">${t(lang, 'dash_risk_lists_note')}</p>
    ${
      manage
        ? section({
            title: t(lang, 'dash_risk_add_entry'),
            id: 'add-heading',
            body: markup`<form method="post" action="${BASE}/risk/lists/${list}/items" class="form-stack" id="add-entry">
              ${csrfInput(token)}
              ${field({
                name: 'value',
                label: t(lang, 'dash_risk_entry_value'),
                value: extra.value,
                required: true,
                maxlength: 254,
                hint: t(lang, `dash_risk_value_hint_${list}`),
                ...(extra.error ? { error: extra.error } : {}),
              })}
              ${field({ name: 'note', label: t(lang, 'dash_risk_entry_note'), value: extra.note, maxlength: 500 })}
              <div class="actions">
                <button type="submit" class="button button-primary">${t(lang, 'dash_risk_add')}</button>
              </div>
            </form>`,
          })
        : ''
    }
    ${dataTable({
      caption: listLabel(lang, list),
      id: 'list-table',
      columns: [
        { label: t(lang, 'dash_risk_entry_value') },
        { label: t(lang, 'dash_risk_entry_note') },
        { label: t(lang, 'dash_risk_created') },
        ...(manage ? [{ label: t(lang, 'dash_pay_actions') }] : []),
      ],
      rows: items.map((i) => [
        markup`<span class="mono">${i.value}</span>`,
        i.note ?? '—',
        formatDate(i.createdAt, lang, 'datetime'),
        ...(manage
          ? [
              postButton({
                action: `${BASE}/risk/lists/${list}/items/${i.id}/remove`,
                csrfToken: token,
                label: t(lang, 'dash_risk_remove'),
                ariaLabel: t(lang, 'dash_risk_remove_named', { value: i.value }),
                variant: 'danger',
              }),
            ]
          : []),
      ]),
      empty: t(lang, 'dash_risk_list_empty'),
    })}
    ${keysetPager(lang, `${BASE}/risk/lists/${list}`, {}, cursor, nextCursor)}`
  return renderPage(ctx, {
    heading: t(lang, 'dash_risk_list_title', { list: listLabel(lang, list) }),
    section: RISK_SECTION,
    content,
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
  })
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  remove: pageRoute({ permission: 'risk.manage', schema: PageActionBody }),
}

/** The block lists' routes; each change commits with the member's audit entry. */
export function riskListRoutes(deps: Deps, app: FastifyInstance): void {
  app.get('/risk/lists', async (request, reply) => {
    allow(deps, request, reply, 'read')
    return redirect(reply, `${BASE}/risk/lists/card_fingerprint`)
  })

  // An unknown list name is the service's 404 (listNamed), as in the API.
  app.get('/risk/lists/:list', async (request, reply) =>
    listPage(deps, allow(deps, request, reply, 'read'), listNamed(idParam(request, 'list'))),
  )

  app.post(
    '/risk/lists/:list/items',
    { config: { page: { permission: 'risk.manage', schema: AddListItemBody } } },
    async (request, reply) => {
      const ctx = allow(deps, request, reply, 'risk.manage')
      const list = listNamed(idParam(request, 'list'))
      const form = formFields(request)
      // Read with room to spare: the API's schema (pageInput), not a silent cut, refuses what is
      // too long; no rule of the API is restated here.
      const value = form.text('value', 4000).trim()
      const note = form.text('note', 4000).trim()
      const shown = { value, note }
      const input = { value, ...(note ? { note } : {}) }
      const invalid = pageInput(request, input)
      if (invalid) {
        return listPage(deps, ctx, list, {
          ...shown,
          error: refusalText(ctx.lang, invalid),
          problem: invalid,
        })
      }
      // A new item is recorded under its list: its id exists only inside the action.
      const result = await attempt(() =>
        auditedAction(ctx, 'risk.list_add', list, { list, value }, () =>
          addListItem(deps, ctx.member.merchantId, list, input),
        ),
      )
      if (!result.ok) {
        return listPage(deps, ctx, list, {
          ...shown,
          error: refusalText(ctx.lang, result.error),
          problem: result.error,
        })
      }
      setFlash(deps, reply, 'success', 'dash_done_list_add')
      return redirect(reply, `${BASE}/risk/lists/${list}`)
    },
  )

  app.post('/risk/lists/:list/items/:id/remove', ROUTES.remove, async (request, reply) => {
    const ctx = permitted(deps, request, reply)
    const list = listNamed(idParam(request, 'list'))
    const id = idParam(request)
    // Another merchant's (or no) entry: the service's 404, the 404 page.
    await auditedAction(ctx, 'risk.list_remove', id, { list }, () =>
      removeListItem(deps, ctx.member.merchantId, list, id),
    )
    setFlash(deps, reply, 'success', 'dash_done_list_remove')
    return redirect(reply, `${BASE}/risk/lists/${list}`)
  })
}
