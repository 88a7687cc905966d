import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import {
  badge,
  dataTable,
  facts,
  field,
  flashMessage,
  postButton,
  section,
  type Flash,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney } from '../../platform/web/format.ts'
import { markup } from '../../platform/web/html.ts'
import { t } from '../../platform/web/i18n.ts'
import {
  detachCard,
  getCustomer,
  listCards,
  listCustomers,
  type Customer,
} from '../customers/index.ts'
import { listSubscriptions } from '../subscriptions/index.ts'
import { listTransactions } from '../transactions/index.ts'
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
import { PageActionBody } from './dashboard.schemas.ts'
import { pageRoute } from './page-rules.ts'
import { queryFields } from './forms.ts'
import { hrefWith, idParam, keysetPager } from './list-pages.ts'
import { subscriptionStatusBadge } from './subscriptions.pages.ts'

// /dashboard/customers: the list (one search box: a customer id, an email or a phone number;
// keyset pages) and /dashboard/customers/{id}: the customer's details, saved cards (with
// Remove for roles that manage customers), recent payments and subscriptions. Reads and the
// card removal go through the customers, transactions and subscriptions modules, as the API.

const PAGE_SIZE = 25
const RECENT = 10

/** The search box → the customers list's filter: an id, an email, else a phone number. */
async function search(
  deps: Deps,
  merchantId: string,
  q: string | undefined,
  cursor: string | undefined,
): Promise<{ items: Customer[]; nextCursor: string | null }> {
  if (q?.startsWith('cus_')) {
    const one = await attempt(() => getCustomer(deps, merchantId, q))
    return { items: one.ok ? [one.value] : [], nextCursor: null }
  }
  return listCustomers(deps, merchantId, {
    limit: PAGE_SIZE,
    ...(q === undefined ? {} : q.includes('@') ? { email: q } : { phone: q }),
    ...(cursor ? { cursor } : {}),
  })
}

async function listPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const query = queryFields(ctx.request)
  const q = query.optional('q', 200)
  const cursor = query.optional('after', 2048)
  const result = await attempt(() => search(deps, ctx.member.merchantId, q, cursor))
  const flash: Flash | undefined = result.ok
    ? undefined
    : { kind: 'error', text: refusalText(lang, result.error) }
  const { items, nextCursor } = result.ok ? result.value : { items: [], nextCursor: null }
  const table = dataTable({
    caption: t(lang, 'dash_cus_table'),
    id: 'customers-table',
    columns: [
      { label: t(lang, 'dash_cus_name'), wrap: true },
      { label: t(lang, 'dash_cus_email'), wrap: true },
      { label: t(lang, 'dash_cus_phone') },
      { label: t(lang, 'dash_cus_external_id') },
      { label: t(lang, 'dash_col_created') },
    ],
    rows: items.map((c) => [
      markup`<a href="${BASE}/customers/${c.id}">${c.name ?? c.email ?? c.id}</a>`,
      c.email ?? '—',
      c.phone ?? '—',
      markup`<span class="mono">${c.externalId}</span>`,
      formatDate(c.createdAt, lang, 'datetime'),
    ]),
    empty: t(lang, q ? 'dash_cus_none_match' : 'dash_cus_none'),
  })
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_customers'),
    section: 'customers',
    status: result.ok ? 200 : result.error.status,
    content: markup`<form method="get" action="${BASE}/customers" class="panel" role="search">
        ${field({
          name: 'q',
          label: t(lang, 'dash_pay_search'),
          type: 'search',
          value: q,
          hint: t(lang, 'dash_cus_search_hint'),
          maxlength: 200,
        })}
        <div class="actions">
          <button type="submit" class="button button-primary">${t(lang, 'dash_pay_apply')}</button>
          <a class="button button-secondary" href="${BASE}/customers">${t(lang, 'dash_pay_clear')}</a>
        </div>
      </form>
      ${flashMessage(flash)}
      ${table}
      ${keysetPager(lang, `${BASE}/customers`, { q }, cursor, nextCursor)}`,
  })
}

async function detailPage(deps: Deps, ctx: PageContext, id: string, problem?: AppError) {
  const { lang } = ctx
  const { merchantId } = ctx.member
  // getCustomer is the API's read: another merchant's id is its 404.
  const customer = await getCustomer(deps, merchantId, id)
  const [cards, payments, subscriptions] = await Promise.all([
    listCards(deps, merchantId, id),
    listTransactions(deps, merchantId, { customerId: id }, { limit: RECENT }),
    listSubscriptions(deps, merchantId, { customerId: id, limit: RECENT }),
  ])
  const token = csrfToken(ctx.request, ctx.reply)
  const mayManage = ctx.can('customers.manage')
  const money = (m: number) => formatMoney(m, lang)
  const content = markup`
    ${section({
      title: t(lang, 'dash_cus_details'),
      id: 'customer-heading',
      body: facts([
        [t(lang, 'dash_cus_id'), markup`<span class="mono">${customer.id}</span>`],
        [t(lang, 'dash_cus_name'), customer.name ?? '—'],
        [t(lang, 'dash_cus_email'), customer.email ?? '—'],
        [t(lang, 'dash_cus_phone'), customer.phone ?? '—'],
        [t(lang, 'dash_cus_external_id'), markup`<span class="mono">${customer.externalId}</span>`],
        [t(lang, 'dash_col_created'), formatDate(customer.createdAt, lang, 'datetime')],
      ]),
    })}
    ${section({
      title: t(lang, 'dash_cus_cards'),
      id: 'cards-heading',
      body: dataTable({
        caption: t(lang, 'dash_cus_cards'),
        id: 'cards-table',
        columns: [
          { label: t(lang, 'dash_col_card') },
          { label: t(lang, 'dash_cus_expiry') },
          { label: t(lang, 'dash_cus_default') },
          ...(mayManage ? [{ label: t(lang, 'dash_col_actions') }] : []),
        ],
        rows: cards.map((c) => [
          `${c.brand} •••• ${c.last4}`,
          markup`${String(c.expMonth).padStart(2, '0')}/${String(c.expYear)}${
            c.expired ? markup` ${badge(t(lang, 'dash_cus_expired'), 'warning')}` : ''
          }`,
          t(lang, c.isDefault ? 'dash_yes' : 'dash_no'),
          ...(mayManage
            ? [
                postButton({
                  action: `${BASE}/customers/${customer.id}/cards/${c.id}/remove`,
                  csrfToken: token,
                  label: t(lang, 'dash_cus_remove_card'),
                  variant: 'danger',
                  ariaLabel: t(lang, 'dash_cus_remove_card_named', { card: c.last4 }),
                }),
              ]
            : []),
        ]),
        empty: t(lang, 'dash_none'),
      }),
    })}
    ${section({
      title: t(lang, 'dash_nav_payments'),
      id: 'payments-heading',
      body: markup`${dataTable({
        caption: t(lang, 'dash_nav_payments'),
        id: 'customer-payments-table',
        columns: [
          { label: t(lang, 'dash_col_date') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_col_transaction') },
        ],
        rows: payments.items.map((p) => [
          markup`<a href="${BASE}/payments/${p.id}">${formatDate(p.createdAt, lang, 'datetime')}</a>`,
          money(p.amount),
          t(lang, `dash_pay_status_${p.status}`),
          markup`<span class="mono">${p.transactionId}</span>`,
        ]),
        empty: t(lang, 'dash_none'),
      })}${
        customer.email && payments.nextCursor
          ? markup`<p><a href="${hrefWith(`${BASE}/payments`, { q: customer.email })}">${t(lang, 'dash_cus_all_payments')}</a></p>`
          : ''
      }`,
    })}
    ${section({
      title: t(lang, 'dash_nav_subscriptions'),
      id: 'subscriptions-heading',
      body: dataTable({
        caption: t(lang, 'dash_nav_subscriptions'),
        id: 'customer-subscriptions-table',
        columns: [
          { label: t(lang, 'dash_col_created') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_sub_next') },
        ],
        rows: subscriptions.items.map((s) => [
          markup`<a href="${BASE}/subscriptions/${s.id}">${formatDate(s.createdAt, lang, 'date')}</a>`,
          money(s.amountMinor),
          subscriptionStatusBadge(lang, s.status),
          s.nextChargeAt ? formatDate(s.nextChargeAt, lang, 'datetime') : '—',
        ]),
        empty: t(lang, 'dash_none'),
      }),
    })}`
  return renderPage(ctx, {
    heading: customer.name ?? customer.email ?? customer.id,
    section: 'customers',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/customers">${t(lang, 'dash_cus_back')}</a>`,
    content,
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
  })
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  removeCard: pageRoute({ permission: 'customers.manage', schema: PageActionBody }),
}

export function customersPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/customers', async (request, reply) =>
      listPage(deps, allow(deps, request, reply, 'read')),
    )

    app.get('/customers/:id', async (request, reply) =>
      detailPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    app.post('/customers/:id/cards/:cardId/remove', ROUTES.removeCard, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const id = idParam(request)
      const cardId = idParam(request, 'cardId')
      // Another merchant's (or no) customer is the 404 page, as in the API.
      await getCustomer(deps, ctx.member.merchantId, id)
      // The API's DELETE /v1/customers/{id}/cards/{cardId}: the token is revoked in the vault.
      const removed = await attempt(() =>
        auditedAction(ctx, 'customer.card_remove', id, { cardId }, () =>
          detachCard(deps, ctx.member.merchantId, id, cardId),
        ),
      )
      // A card removed already (a second click) or not this customer's: said on the page.
      if (!removed.ok) return detailPage(deps, ctx, id, removed.error)
      setFlash(deps, reply, 'success', 'dash_done_card_removed')
      return redirect(reply, `${BASE}/customers/${id}`)
    })
  }
}
