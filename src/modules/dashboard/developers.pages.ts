import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  field,
  pager,
  postButton,
  section,
  type Flash,
} from '../../platform/web/components.ts'
import { formatDate } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t } from '../../platform/web/i18n.ts'
import { listEvents } from '../events/index.ts'
import { listApiKeys, listStores } from '../merchants/index.ts'
import { listCardAccess } from '../vault/index.ts'
import {
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  rotateEndpointSecret,
} from '../webhooks/index.ts'
import { issueStoreKey, revokeStoreKey, rollStoreKey } from './dashboard.service.ts'
import {
  BASE,
  allow,
  auditedAction,
  attempt,
  permitted,
  csrfToken,
  redirect,
  refusalText,
  renderPage,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { CreateEndpointBody } from '../webhooks/index.ts'
import { StoreActionBody } from './dashboard.schemas.ts'
import { pageRoute } from './page-rules.ts'
import { formFields, queryFields } from './forms.ts'

// /dashboard/developers: API keys (create, roll, revoke; a new secret is shown once, on the
// page that made it, never stored in a cookie or shown again), webhook endpoints (add,
// delete, rotate the signing secret) and their deliveries with Redeliver, and the events
// log. The actions call the same functions as the dashboard API (dashboard.service.ts) and
// the webhooks module, and each writes an audit entry.

const PAGE_SIZE = 25

/** A secret the member must copy now: it is never shown again. */
function secretBox(ctx: PageContext, label: string, secret: string): SafeHtml {
  return markup`<section class="panel" aria-labelledby="secret-heading">
    <h2 id="secret-heading">${label}</h2>
    <p>${t(ctx.lang, 'dash_dev_secret_once')}</p>
    <code class="secret" id="new-secret">${secret}</code>
  </section>`
}

async function developersPage(
  deps: Deps,
  ctx: PageContext,
  extra: { top?: SafeHtml; flash?: Flash; status?: number } = {},
): Promise<FastifyReply> {
  const { lang } = ctx
  const merchantId = ctx.member.merchantId
  const [stores, keys] = await Promise.all([
    listStores(deps, merchantId),
    listApiKeys(deps, merchantId),
  ])
  const token = csrfToken(ctx.request, ctx.reply)
  const storeName = new Map(stores.map((s) => [s.id, s.name]))
  const keyRows = keys.map((k) => [
    markup`<span class="mono">${k.publicKey}</span>`,
    k.storeId ? (storeName.get(k.storeId) ?? k.storeId) : (k.submerchantId ?? '—'),
    badge(t(lang, `dash_key_status_${k.status}`), k.status === 'active' ? 'success' : 'neutral'),
    k.expiresAt ? formatDate(k.expiresAt, lang, 'datetime') : '—',
    formatDate(k.createdAt, lang, 'date'),
    k.status === 'active' && k.storeId && ctx.can('developers.keys')
      ? markup`<div class="actions">
          ${
            k.expiresAt
              ? ''
              : postButton({
                  action: `${BASE}/developers/keys/${k.apiKeyId}/roll`,
                  csrfToken: token,
                  label: t(lang, 'dash_key_roll'),
                  fields: { storeId: k.storeId },
                  ariaLabel: `${t(lang, 'dash_key_roll')} ${k.publicKey}`,
                })
          }
          ${postButton({
            action: `${BASE}/developers/keys/${k.apiKeyId}/revoke`,
            csrfToken: token,
            label: t(lang, 'dash_key_revoke'),
            variant: 'danger',
            fields: { storeId: k.storeId },
            ariaLabel: `${t(lang, 'dash_key_revoke')} ${k.publicKey}`,
          })}
        </div>`
      : '',
  ])
  const createKey = ctx.can('developers.keys')
    ? markup`<div class="actions">
        ${stores.map((s) =>
          postButton({
            action: `${BASE}/developers/keys`,
            csrfToken: token,
            label:
              stores.length > 1
                ? t(lang, 'dash_key_create_for', { store: s.name })
                : t(lang, 'dash_key_create'),
            variant: 'primary',
            fields: { storeId: s.id },
          }),
        )}
      </div>`
    : ''
  const endpointsPerStore = await Promise.all(
    stores.map(async (s) => ({ store: s, endpoints: await listEndpoints(deps, merchantId, s.id) })),
  )
  const webhooks = endpointsPerStore.map(
    ({ store, endpoints }) => markup`<h3>${store.name}</h3>
      ${dataTable({
        caption: t(lang, 'dash_wh_table', { store: store.name }),
        columns: [
          { label: t(lang, 'dash_wh_url') },
          { label: t(lang, 'dash_wh_events') },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_col_actions') },
        ],
        rows: endpoints.map((e) => [
          markup`<span class="mono">${e.url}</span>`,
          e.events ? e.events.join(', ') : t(lang, 'dash_wh_all_events'),
          t(lang, `dash_wh_status_${e.status}`),
          ctx.can('developers.webhooks')
            ? markup`<div class="actions">
                ${postButton({
                  action: `${BASE}/developers/webhooks/${e.id}/rotate`,
                  csrfToken: token,
                  label: t(lang, 'dash_wh_rotate'),
                  fields: { storeId: store.id },
                  ariaLabel: `${t(lang, 'dash_wh_rotate')} ${e.url}`,
                })}
                ${postButton({
                  action: `${BASE}/developers/webhooks/${e.id}/delete`,
                  csrfToken: token,
                  label: t(lang, 'dash_wh_delete'),
                  variant: 'danger',
                  fields: { storeId: store.id },
                  ariaLabel: `${t(lang, 'dash_wh_delete')} ${e.url}`,
                })}
              </div>`
            : '',
        ]),
        empty: t(lang, 'dash_wh_none'),
      })}
      <p><a href="${BASE}/developers/webhooks/deliveries?store=${store.id}">${t(lang, 'dash_wh_deliveries_of', { store: store.name })}</a></p>
      ${
        ctx.can('developers.webhooks')
          ? markup`<form method="post" action="${BASE}/developers/webhooks" class="form-stack">
              ${csrfInput(token)}
              <input type="hidden" name="storeId" value="${store.id}" />
              ${field({
                name: 'url',
                id: `wh-url-${store.id}`,
                label: t(lang, 'dash_wh_url'),
                type: 'url',
                required: true,
                maxlength: 2000,
              })}
              ${field({
                name: 'events',
                id: `wh-events-${store.id}`,
                label: t(lang, 'dash_wh_events'),
                hint: t(lang, 'dash_wh_events_hint'),
                maxlength: 2000,
              })}
              <button type="submit" class="button button-primary">${t(lang, 'dash_wh_add')}</button>
            </form>`
          : ''
      }`,
  )
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_developers'),
    section: 'developers',
    ...(extra.flash ? { flash: extra.flash } : {}),
    ...(extra.status ? { status: extra.status } : {}),
    headingAside: markup`<div class="actions">
      <a class="button button-secondary" href="${BASE}/developers/events">${t(lang, 'dash_ev_title')}</a>
      <a class="button button-secondary" href="${BASE}/developers/card-access">${t(lang, 'dash_ca_title')}</a>
    </div>`,
    content: markup`${extra.top ?? ''}
      ${section({
        title: t(lang, 'dash_key_title'),
        id: 'keys-heading',
        body: markup`${dataTable({
          caption: t(lang, 'dash_key_title'),
          id: 'keys-table',
          columns: [
            { label: t(lang, 'dash_key_public') },
            { label: t(lang, 'dash_key_store'), wrap: true },
            { label: t(lang, 'dash_col_status') },
            { label: t(lang, 'dash_key_expires') },
            { label: t(lang, 'dash_col_date') },
            { label: t(lang, 'dash_col_actions') },
          ],
          rows: keyRows,
          empty: t(lang, 'dash_none'),
        })}
        ${createKey}`,
      })}
      ${section({ title: t(lang, 'dash_wh_title'), id: 'webhooks-heading', body: webhooks })}`,
  })
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  createKey: pageRoute({ permission: 'developers.keys', schema: StoreActionBody }),
  rollKey: pageRoute({ permission: 'developers.keys', schema: StoreActionBody }),
  revokeKey: pageRoute({ permission: 'developers.keys', schema: StoreActionBody }),
  createWebhook: pageRoute({ permission: 'developers.webhooks', schema: CreateEndpointBody }),
  rotateWebhook: pageRoute({ permission: 'developers.webhooks', schema: StoreActionBody }),
  deleteWebhook: pageRoute({ permission: 'developers.webhooks', schema: StoreActionBody }),
  redeliver: pageRoute({ permission: 'developers.webhooks', schema: StoreActionBody }),
}
const REDELIVER = '/developers/webhooks/deliveries/:id/redeliver'

export function developersPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/developers', async (request, reply) =>
      developersPage(deps, allow(deps, request, reply, 'read')),
    )

    /** Runs a developers action; a refusal shows on the page in role="alert". */
    const perform = async <T>(
      ctx: PageContext,
      run: () => Promise<T>,
      done: (value: T) => Promise<FastifyReply>,
    ): Promise<FastifyReply> => {
      const result = await attempt(run)
      if (!result.ok) return refused(ctx, result.error)
      return done(result.value)
    }
    const refused = (ctx: PageContext, error: AppError) => {
      if (error.status === 404) throw error
      return developersPage(deps, ctx, {
        status: error.status,
        flash: { kind: 'error', text: refusalText(ctx.lang, error) },
      })
    }

    app.post('/developers/keys', ROUTES.createKey, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const storeId = formFields(request).text('storeId', 64)
      return perform(
        ctx,
        () =>
          auditedAction(ctx, 'api_key.create', storeId, { storeId }, () =>
            issueStoreKey(deps, ctx.member.merchantId, storeId),
          ),
        async (key) => {
          return developersPage(deps, ctx, {
            top: markup`${secretBox(ctx, t(ctx.lang, 'dash_key_new'), key.secretKey)}
              ${facts([[t(ctx.lang, 'dash_key_public'), markup`<span class="mono" id="new-public-key">${key.publicKey}</span>`]])}`,
            flash: { kind: 'success', text: t(ctx.lang, 'dash_done_key_create') },
          })
        },
      )
    })

    app.post('/developers/keys/:keyId/roll', ROUTES.rollKey, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { keyId } = request.params as { keyId: string }
      const storeId = formFields(request).text('storeId', 64)
      return perform(
        ctx,
        () =>
          auditedAction(ctx, 'api_key.roll', keyId, { storeId }, () =>
            rollStoreKey(deps, ctx.member.merchantId, storeId, keyId.slice(0, 64)),
          ),
        async (rolled) => {
          return developersPage(deps, ctx, {
            top: secretBox(ctx, t(ctx.lang, 'dash_key_new'), rolled.secretKey),
            flash: {
              kind: 'success',
              text: t(ctx.lang, 'dash_done_key_roll', {
                until: formatDate(rolled.previousExpiresAt, ctx.lang, 'datetime'),
              }),
            },
          })
        },
      )
    })

    app.post('/developers/keys/:keyId/revoke', ROUTES.revokeKey, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { keyId } = request.params as { keyId: string }
      const storeId = formFields(request).text('storeId', 64)
      return perform(
        ctx,
        () =>
          auditedAction(ctx, 'api_key.revoke', keyId, { storeId }, () =>
            revokeStoreKey(deps, ctx.member.merchantId, storeId, keyId.slice(0, 64)),
          ),
        async () => {
          setFlash(deps, reply, 'success', 'dash_done_key_revoke')
          return redirect(reply, `${BASE}/developers`)
        },
      )
    })

    app.post('/developers/webhooks', ROUTES.createWebhook, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const form = formFields(request)
      const storeId = form.text('storeId', 64)
      const events = form
        .text('events', 2000)
        .split(/[\s,]+/)
        .filter(Boolean)
      return perform(
        ctx,
        () =>
          auditedAction(ctx, 'webhook.create', storeId, { url: form.text('url', 2000) }, () =>
            createEndpoint(deps, ctx.member.merchantId, storeId, {
              url: form.text('url', 2000).trim(),
              ...(events.length ? { events } : {}),
            }),
          ),
        async (endpoint) => {
          return developersPage(deps, ctx, {
            top: secretBox(ctx, t(ctx.lang, 'dash_wh_new_secret'), endpoint.secret),
            flash: { kind: 'success', text: t(ctx.lang, 'dash_done_wh_create') },
          })
        },
      )
    })

    app.post('/developers/webhooks/:id/rotate', ROUTES.rotateWebhook, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { id } = request.params as { id: string }
      const storeId = formFields(request).text('storeId', 64)
      return perform(
        ctx,
        () =>
          auditedAction(ctx, 'webhook.rotate_secret', id, {}, () =>
            rotateEndpointSecret(deps, ctx.member.merchantId, storeId, id.slice(0, 64)),
          ),
        async (rotated) => {
          return developersPage(deps, ctx, {
            top: secretBox(ctx, t(ctx.lang, 'dash_wh_new_secret'), rotated.secret),
            flash: { kind: 'success', text: t(ctx.lang, 'dash_done_wh_rotate') },
          })
        },
      )
    })

    app.post('/developers/webhooks/:id/delete', ROUTES.deleteWebhook, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { id } = request.params as { id: string }
      const storeId = formFields(request).text('storeId', 64)
      return perform(
        ctx,
        () =>
          auditedAction(ctx, 'webhook.delete', id, {}, () =>
            deleteEndpoint(deps, ctx.member.merchantId, storeId, id.slice(0, 64)),
          ),
        async () => {
          setFlash(deps, reply, 'success', 'dash_done_wh_delete')
          return redirect(reply, `${BASE}/developers`)
        },
      )
    })

    app.get('/developers/webhooks/deliveries', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { lang } = ctx
      const query = queryFields(request)
      const stores = await listStores(deps, ctx.member.merchantId)
      const storeId = query.optional('store', 64) ?? stores[0]?.id ?? ''
      const cursor = query.optional('after', 2048)
      const page = await listDeliveries(deps, ctx.member.merchantId, storeId, {
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      })
      const token = csrfToken(request, reply)
      return renderPage(ctx, {
        heading: t(lang, 'dash_wh_deliveries'),
        section: 'developers',
        headingAside: markup`<a class="button button-secondary" href="${BASE}/developers">${t(lang, 'dash_nav_developers')}</a>`,
        content: markup`${dataTable({
          caption: t(lang, 'dash_wh_deliveries'),
          id: 'deliveries-table',
          columns: [
            { label: t(lang, 'dash_col_date') },
            { label: t(lang, 'dash_ev_type') },
            { label: t(lang, 'dash_wh_url') },
            { label: t(lang, 'dash_col_status') },
            { label: t(lang, 'dash_wh_attempts'), numeric: true },
            { label: t(lang, 'dash_wh_last') },
            { label: t(lang, 'dash_col_actions') },
          ],
          rows: page.items.map((d) => [
            formatDate(d.createdAt, lang, 'datetime'),
            markup`<span class="mono">${d.eventType}</span>`,
            markup`<span class="mono">${d.url}</span>`,
            badge(
              t(lang, `dash_dlv_status_${d.status}`),
              d.status === 'delivered' ? 'success' : d.status === 'failed' ? 'danger' : 'warning',
            ),
            String(d.attemptCount),
            d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '—'),
            ctx.can('developers.webhooks')
              ? postButton({
                  action: `${BASE}/developers/webhooks/deliveries/${d.id}/redeliver`,
                  csrfToken: token,
                  label: t(lang, 'dash_wh_redeliver'),
                  fields: { storeId },
                  ariaLabel: `${t(lang, 'dash_wh_redeliver')} ${d.eventType} ${d.id}`,
                })
              : '',
          ]),
          empty: t(lang, 'dash_none'),
        })}
        ${pager({
          lang,
          ...(cursor
            ? { firstHref: `${BASE}/developers/webhooks/deliveries?store=${storeId}` }
            : {}),
          ...(page.nextCursor
            ? {
                nextHref: `${BASE}/developers/webhooks/deliveries?store=${storeId}&after=${encodeURIComponent(page.nextCursor)}`,
              }
            : {}),
        })}`,
      })
    })

    app.post(REDELIVER, ROUTES.redeliver, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { id } = request.params as { id: string }
      const storeId = formFields(request).text('storeId', 64)
      const result = await attempt(() =>
        auditedAction(ctx, 'webhook.redeliver', id, {}, () =>
          redeliver(deps, ctx.member.merchantId, storeId, id.slice(0, 64)),
        ),
      )
      if (!result.ok) {
        if (result.error.status === 404) throw result.error
        setFlash(deps, reply, 'error', 'dash_err_redeliver')
      } else {
        setFlash(deps, reply, 'success', 'dash_done_redeliver')
      }
      return redirect(reply, `${BASE}/developers/webhooks/deliveries?store=${storeId}`)
    })

    // Every time a card number was read back out of the vault (the vault's own audit).
    app.get('/developers/card-access', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { lang } = ctx
      const cursor = queryFields(request).optional('after', 2048)
      const page = await listCardAccess(deps, ctx.member.merchantId, {
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      })
      return renderPage(ctx, {
        heading: t(lang, 'dash_ca_title'),
        section: 'developers',
        content: markup`<p class="muted">${t(lang, 'dash_ca_intro')}</p>
          ${dataTable({
            caption: t(lang, 'dash_ca_title'),
            id: 'card-access-table',
            columns: [
              { label: t(lang, 'dash_col_date') },
              { label: t(lang, 'dash_ca_op') },
              { label: t(lang, 'dash_ca_token') },
              { label: t(lang, 'dash_ca_caller') },
              { label: t(lang, 'dash_ca_result') },
            ],
            rows: page.items.map((r) => [
              formatDate(r.createdAt, lang, 'datetime'),
              markup`<span class="mono">${r.op}</span>`,
              markup`<span class="mono">${r.cardToken}</span>`,
              r.callerService,
              r.result,
            ]),
            empty: t(lang, 'dash_none'),
          })}
          ${pager({
            lang,
            ...(cursor ? { firstHref: `${BASE}/developers/card-access` } : {}),
            ...(page.nextCursor
              ? {
                  nextHref: `${BASE}/developers/card-access?after=${encodeURIComponent(page.nextCursor)}`,
                }
              : {}),
          })}`,
      })
    })

    app.get('/developers/events', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { lang } = ctx
      const cursor = queryFields(request).optional('after', 2048)
      const page = await listEvents(deps, ctx.member.merchantId, {
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      })
      return renderPage(ctx, {
        heading: t(lang, 'dash_ev_title'),
        section: 'developers',
        content: markup`${dataTable({
          caption: t(lang, 'dash_ev_title'),
          id: 'events-table',
          columns: [
            { label: t(lang, 'dash_col_date') },
            { label: t(lang, 'dash_ev_type') },
            { label: t(lang, 'dash_ev_resource') },
            { label: t(lang, 'dash_ev_id') },
          ],
          rows: page.items.map((e) => [
            formatDate(e.createdAt, lang, 'datetime'),
            markup`<span class="mono">${e.type}</span>`,
            e.resourceType === 'payment'
              ? markup`<a class="mono" href="${BASE}/payments/${e.resourceId}">${e.resourceId}</a>`
              : markup`<span class="mono">${e.resourceId}</span>`,
            markup`<span class="mono">${e.id}</span>`,
          ]),
          empty: t(lang, 'dash_none'),
        })}
        ${pager({
          lang,
          ...(cursor ? { firstHref: `${BASE}/developers/events` } : {}),
          ...(page.nextCursor
            ? { nextHref: `${BASE}/developers/events?after=${encodeURIComponent(page.nextCursor)}` }
            : {}),
        })}`,
      })
    })
  }
}
