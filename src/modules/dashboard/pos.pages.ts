import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  field,
  postButton,
  section,
  selectField,
} from '../../platform/web/components.ts'
import { formatDate } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang, type MessageKey } from '../../platform/web/i18n.ts'
import {
  CreatePosAccountBody,
  EST_V3_BANKS,
  UpdatePosAccountBody,
  createPosAccount,
  getPosAccount,
  listPosAccounts,
  testPosAccount,
  updatePosAccount,
  type PosAccount,
} from '../acquirer/index.ts'
import { PageActionBody } from './dashboard.schemas.ts'
import {
  BASE,
  allow,
  attempt,
  auditedAction,
  csrfToken,
  permitted,
  redirect,
  refusalText,
  renderPage,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { formFields, queryFields } from './forms.ts'
import { idParam } from './list-pages.ts'
import { pageInput, pageRoute } from './page-rules.ts'
import { posReconciliationRoutes } from './pos-reconciliation.pages.ts'
import { fieldErrorText } from './refusals.ts'

// /dashboard/pos ("Banka POS"): the merchant's bank virtual POS accounts and the platform's
// it may route to; /new?provider=… the form of one provider's credentials; /{id} the account,
// with rename, enable/disable and "test" (1 TRY auth+void at the bank, pos-test.service.ts).
// The same service functions as /v1/pos-accounts; credentials are write-only: never shown
// back (not even in a refused form), never logged, never in an audit entry.

const SECTION = 'pos'

type Provider = 'est_v3' | 'garanti' | 'posnet'
const PROVIDERS: readonly Provider[] = ['est_v3', 'garanti', 'posnet']

interface CredentialField {
  name: string
  secret: boolean
  optional?: boolean
}

/** Each provider's credentials as its bank issues them (pos-connectors.ts checks them). */
const CREDENTIALS: Readonly<Record<Provider, readonly CredentialField[]>> = {
  est_v3: [
    { name: 'clientId', secret: false },
    { name: 'username', secret: false },
    { name: 'password', secret: true },
    { name: 'storeKey', secret: true },
  ],
  garanti: [
    { name: 'merchantId', secret: false },
    { name: 'terminalId', secret: false },
    { name: 'provisionUser', secret: false },
    { name: 'provisionPassword', secret: true },
    { name: 'storeKey', secret: true },
    { name: 'refundUser', secret: false, optional: true },
    { name: 'refundPassword', secret: true, optional: true },
  ],
  posnet: [
    { name: 'merchantId', secret: false },
    { name: 'terminalId', secret: false },
    { name: 'posnetId', secret: false },
    { name: 'encKey', secret: true },
  ],
}

function isProvider(value: string): value is Provider {
  return (PROVIDERS as readonly string[]).includes(value)
}

function providerLabel(lang: Lang, provider: string): string {
  return isProvider(provider) ? t(lang, `dash_pos_provider_${provider}`) : provider
}

function bankLabel(bank: string): string {
  if (bank === 'garanti') return 'Garanti BBVA'
  if (bank === 'yapikredi') return 'Yapı Kredi'
  return EST_V3_BANKS[bank]?.name ?? bank
}

/** The card programs as their banks write them on the card ("Bonus", "CardFinans"). */
const PROGRAM_NAMES: Readonly<Record<string, string>> = {
  bonus: 'Bonus',
  world: 'World',
  maximum: 'Maximum',
  axess: 'Axess',
  cardfinans: 'CardFinans',
  paraf: 'Paraf',
  advantage: 'Advantage',
  bankkart: 'Bankkart',
  saglam: 'Sağlam Kart',
}

function programsText(programs: readonly string[]): string {
  const named = programs.filter((p) => p !== 'none').map((p) => PROGRAM_NAMES[p] ?? p)
  return named.join(', ') || '—'
}

function enabledBadge(lang: Lang, a: PosAccount): SafeHtml {
  return a.enabled
    ? badge(t(lang, 'dash_pos_enabled'), 'success')
    : badge(t(lang, 'dash_pos_disabled'), 'neutral')
}

function envText(lang: Lang, environment: string): string {
  return t(lang, environment === 'production' ? 'dash_pos_env_production' : 'dash_pos_env_test')
}

async function listPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const accounts = await listPosAccounts(deps, { merchantId: ctx.member.merchantId })
  const rows = accounts.map((a) => [
    markup`<a href="${BASE}/pos/${a.id}">${a.name}</a>`,
    t(lang, a.owner === 'platform' ? 'dash_pos_owner_platform' : 'dash_pos_owner_merchant'),
    providerLabel(lang, a.provider),
    bankLabel(a.bank),
    envText(lang, a.environment),
    programsText(a.installmentPrograms),
    enabledBadge(lang, a),
  ])
  const table = dataTable({
    caption: t(lang, 'dash_pos_list_caption'),
    columns: [
      { label: t(lang, 'dash_pos_name'), wrap: true },
      { label: t(lang, 'dash_pos_owner'), wrap: true },
      { label: t(lang, 'dash_pos_provider'), wrap: true },
      { label: t(lang, 'dash_pos_bank') },
      { label: t(lang, 'dash_pos_environment') },
      { label: t(lang, 'dash_pos_programs'), wrap: true },
      { label: t(lang, 'dash_col_status') },
    ],
    rows,
    empty: t(lang, 'dash_pos_empty'),
    id: 'pos-table',
  })
  const add = ctx.can('pos.manage')
    ? PROVIDERS.map(
        (p) =>
          markup`<a class="button button-secondary" id="new-${p}" href="${BASE}/pos/new?provider=${p}">${t(lang, 'dash_pos_add', { provider: providerLabel(lang, p) })}</a>`,
      )
    : ''
  const actions = add ? markup`<p class="actions">${add}</p>` : ''
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_pos'),
    section: SECTION,
    headingAside: markup`<a class="button button-secondary" id="reconciliation" href="${BASE}/pos/reconciliation">${t(lang, 'dash_rec_link')}</a>`,
    content: markup`<p>${t(lang, 'dash_pos_intro')}</p>${actions}${table}`,
  })
}

interface NewForm {
  provider: Provider
  name: string
  environment: string
  bank: string
  api: string
  threeDGate: string
}

async function newPage(
  deps: Deps,
  ctx: PageContext,
  form: NewForm,
  problem?: { error: AppError; fields: ReadonlySet<string> },
) {
  const { lang } = ctx
  // The field's own words when the refusal says what is wrong with it, else "check this field".
  const err = (name: string) =>
    problem?.fields.has(name)
      ? {
          error: fieldErrorText(lang, problem.error, name) ?? t(lang, 'dash_pos_field_error'),
        }
      : {}
  // Credentials are never written back into the page, even after a refusal.
  const credentialFields = CREDENTIALS[form.provider].map((c) =>
    field({
      name: `cred_${c.name}`,
      label: t(lang, `dash_pos_cred_${c.name}` as MessageKey),
      type: c.secret ? 'password' : 'text',
      autocomplete: 'off',
      maxlength: 128,
      required: !c.optional,
      ...(c.optional ? { hint: t(lang, 'dash_pos_optional') } : {}),
      ...err(`credentials.${c.name}`),
    }),
  )
  const bankSelect =
    form.provider === 'est_v3'
      ? selectField({
          name: 'bank',
          label: t(lang, 'dash_pos_bank'),
          options: Object.entries(EST_V3_BANKS).map(([code, b]) => ({
            value: code,
            label: b.name,
          })),
          value: form.bank,
        })
      : ''
  // Only the demo may point an account at a bank simulator (the service refuses it in live).
  const endpoints =
    deps.config.env === 'demo'
      ? markup`<fieldset class="field-group">
          <legend>${t(lang, 'dash_pos_endpoints')}</legend>
          ${field({ name: 'api', label: t(lang, 'dash_pos_endpoint_api'), value: form.api, maxlength: 2048, hint: t(lang, 'dash_pos_optional'), ...err('endpoints.api') })}
          ${field({ name: 'threeDGate', label: t(lang, 'dash_pos_endpoint_3d'), value: form.threeDGate, maxlength: 2048, hint: t(lang, 'dash_pos_optional'), ...err('endpoints.threeDGate') })}
        </fieldset>`
      : ''
  const content = markup`<form method="post" action="${BASE}/pos" class="form-stack" id="pos-form" autocomplete="off">
    ${csrfInput(csrfToken(ctx.request, ctx.reply))}
    <input type="hidden" name="provider" value="${form.provider}" />
    ${field({ name: 'name', label: t(lang, 'dash_pos_name'), value: form.name, required: true, maxlength: 100, ...err('name') })}
    ${selectField({
      name: 'environment',
      label: t(lang, 'dash_pos_environment'),
      options: [
        { value: 'test', label: t(lang, 'dash_pos_env_test') },
        { value: 'production', label: t(lang, 'dash_pos_env_production') },
      ],
      value: form.environment,
    })}
    ${bankSelect}
    <fieldset class="field-group">
      <legend>${t(lang, 'dash_pos_credentials')}</legend>
      <p class="muted">${t(lang, 'dash_pos_credentials_hint')}</p>
      ${credentialFields}
    </fieldset>
    ${endpoints}
    <button type="submit" class="button button-primary">${t(lang, 'dash_pos_create')}</button>
  </form>`
  return renderPage(ctx, {
    heading: t(lang, 'dash_pos_add', { provider: providerLabel(lang, form.provider) }),
    section: SECTION,
    content,
    ...(problem
      ? {
          status: problem.error.status,
          flash: { kind: 'error' as const, text: refusalText(lang, problem.error) },
        }
      : {}),
  })
}

async function detailPage(deps: Deps, ctx: PageContext, id: string) {
  const { lang } = ctx
  const a = await getPosAccount(deps, { merchantId: ctx.member.merchantId }, id)
  const about = facts([
    [t(lang, 'dash_col_status'), markup`<span id="pos-status">${enabledBadge(lang, a)}</span>`],
    [
      t(lang, 'dash_pos_owner'),
      t(lang, a.owner === 'platform' ? 'dash_pos_owner_platform' : 'dash_pos_owner_merchant'),
    ],
    [t(lang, 'dash_pos_provider'), providerLabel(lang, a.provider)],
    [t(lang, 'dash_pos_bank'), bankLabel(a.bank)],
    [t(lang, 'dash_pos_environment'), envText(lang, a.environment)],
    [t(lang, 'dash_pos_programs'), programsText(a.installmentPrograms)],
    [t(lang, 'dash_pos_id'), markup`<span class="mono">${a.id}</span>`],
    [t(lang, 'dash_pos_created'), formatDate(a.createdAt, lang, 'datetime')],
  ])
  // Platform accounts are the operator's: a merchant sees them, changes nothing.
  const manage = a.owner === 'merchant' && ctx.can('pos.manage')
  const token = manage ? csrfToken(ctx.request, ctx.reply) : ''
  const actions = manage
    ? section({
        title: t(lang, 'dash_pay_actions'),
        id: 'actions-heading',
        body: markup`<div class="actions">
            ${postButton({ action: `${BASE}/pos/${a.id}/test`, csrfToken: token, label: t(lang, a.environment === 'production' ? 'dash_pos_test_production' : 'dash_pos_test'), variant: 'primary' })}
            ${postButton({ action: `${BASE}/pos/${a.id}/${a.enabled ? 'disable' : 'enable'}`, csrfToken: token, label: t(lang, a.enabled ? 'dash_pos_disable' : 'dash_pos_enable'), variant: a.enabled ? 'danger' : 'secondary' })}
          </div>
          <p class="muted">${t(lang, a.environment === 'production' ? 'dash_pos_test_production_hint' : 'dash_pos_test_hint')}</p>
          <form method="post" action="${BASE}/pos/${a.id}/rename" class="form-stack" id="rename-form">
            ${csrfInput(token)}
            ${field({ name: 'name', label: t(lang, 'dash_pos_rename'), value: a.name, required: true, maxlength: 100 })}
            <button type="submit" class="button button-secondary">${t(lang, 'dash_pos_rename_button')}</button>
          </form>`,
      })
    : ''
  return renderPage(ctx, {
    heading: a.name,
    section: SECTION,
    headingAside: markup`<a class="button button-secondary" href="${BASE}/pos">${t(lang, 'dash_pos_back')}</a>`,
    content: markup`${section({ title: t(lang, 'dash_pos_detail'), id: 'pos-heading', body: about })}${actions}`,
  })
}

function readNewForm(request: Parameters<typeof formFields>[0], provider: Provider): NewForm {
  const f = formFields(request)
  return {
    provider,
    // Room to spare: the API's schema (pageInput), not a silent cut, refuses what is too long.
    name: f.text('name', 400),
    environment: f.text('environment', 20),
    bank: f.text('bank', 20),
    api: f.text('api', 4096),
    threeDGate: f.text('threeDGate', 4096),
  }
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts):
// POS accounts decide where the merchant's money is taken, as payment links and risk rules
// decide how: owners and admins (docs/dashboard.md, roles).
const ROUTES = {
  create: pageRoute({ permission: 'pos.manage', schema: CreatePosAccountBody }),
  update: pageRoute({ permission: 'pos.manage', schema: UpdatePosAccountBody }),
  test: pageRoute({ permission: 'pos.manage', schema: PageActionBody }),
}

const TEST_FLASH: Readonly<Record<string, MessageKey>> = {
  approved_voided: 'dash_pos_test_approved_voided',
  approved_not_voided: 'dash_pos_test_approved_not_voided',
  declined: 'dash_pos_test_declined',
  reachable: 'dash_pos_test_reachable',
  not_sent: 'dash_pos_test_not_sent',
  unknown: 'dash_pos_test_unknown',
}

export function posPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    posReconciliationRoutes(app, deps)
    app.get('/pos', async (request, reply) => listPage(deps, allow(deps, request, reply, 'read')))

    app.get('/pos/new', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'pos.manage')
      const provider = queryFields(request).text('provider', 20)
      if (!isProvider(provider)) return redirect(reply, `${BASE}/pos`)
      return newPage(deps, ctx, {
        provider,
        name: '',
        environment: 'test',
        bank: '',
        api: '',
        threeDGate: '',
      })
    })

    app.post('/pos', ROUTES.create, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const f = formFields(request)
      const raw = f.text('provider', 20)
      if (!isProvider(raw)) return redirect(reply, `${BASE}/pos`)
      const form = readNewForm(request, raw)
      const credentials: Record<string, string> = {}
      for (const c of CREDENTIALS[form.provider]) {
        const value = f.text(`cred_${c.name}`, 256)
        if (value !== '' || !c.optional) credentials[c.name] = value
      }
      if (form.provider === 'est_v3') credentials['bank'] = form.bank
      const input = {
        provider: form.provider,
        name: form.name.trim(),
        environment: form.environment,
        credentials,
        ...(form.api || form.threeDGate
          ? { endpoints: { api: form.api.trim(), threeDGate: form.threeDGate.trim() } }
          : {}),
      }
      const result = await attempt(async () => {
        const invalid = pageInput(request, input)
        if (invalid) throw invalid
        // A new account is recorded under no target: its id exists only inside the action.
        return auditedAction(
          ctx,
          'pos_accounts.create',
          null,
          { provider: form.provider, environment: form.environment },
          () => createPosAccount(deps, { merchantId: ctx.member.merchantId }, input),
        )
      })
      if (!result.ok) {
        const fields = new Set((result.error.details ?? []).map((d) => d.field))
        return newPage(deps, ctx, form, { error: result.error, fields })
      }
      setFlash(deps, reply, 'success', 'dash_pos_done_create')
      return redirect(reply, `${BASE}/pos/${result.value.id}`)
    })

    app.get('/pos/:id', async (request, reply) =>
      detailPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    const change = (
      url: string,
      action: string,
      patch: (request: Parameters<typeof formFields>[0]) => { name?: string; enabled?: boolean },
      done: MessageKey,
    ) =>
      app.post(url, ROUTES.update, async (request, reply) => {
        const ctx = permitted(deps, request, reply)
        const id = idParam(request)
        const body = patch(request)
        const result = await attempt(async () => {
          const invalid = pageInput(request, body)
          if (invalid) throw invalid
          return auditedAction(ctx, action, id, body.name ? { name: body.name } : undefined, () =>
            updatePosAccount(deps, { merchantId: ctx.member.merchantId }, id, body),
          )
        })
        if (!result.ok) {
          if (result.error.status === 404) throw result.error
          setFlash(deps, reply, 'error', 'dash_pos_field_error')
          return redirect(reply, `${BASE}/pos/${id}`)
        }
        setFlash(deps, reply, 'success', done)
        return redirect(reply, `${BASE}/pos/${id}`)
      })

    change(
      '/pos/:id/enable',
      'pos_accounts.enable',
      () => ({ enabled: true }),
      'dash_pos_done_enable',
    )
    change(
      '/pos/:id/disable',
      'pos_accounts.disable',
      () => ({ enabled: false }),
      'dash_pos_done_disable',
    )
    change(
      '/pos/:id/rename',
      'pos_accounts.rename',
      (request) => ({ name: formFields(request).text('name', 400).trim() }),
      'dash_pos_done_rename',
    )

    app.post('/pos/:id/test', ROUTES.test, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const id = idParam(request)
      // The bank is asked first; its answer is then the audit entry, the only record of the
      // test (no payment, no ledger leg): who sent it, when, the order id and what the bank said.
      const tested = await testPosAccount(deps, { merchantId: ctx.member.merchantId }, id)
      const result = await auditedAction(
        ctx,
        'pos_accounts.test',
        id,
        {
          outcome: tested.outcome,
          orderId: tested.orderId,
          ...('bankCode' in tested && tested.bankCode ? { bankCode: tested.bankCode } : {}),
        },
        () => Promise.resolve(tested),
      )
      setFlash(
        deps,
        reply,
        result.outcome === 'approved_voided' || result.outcome === 'reachable'
          ? 'success'
          : 'error',
        TEST_FLASH[result.outcome] ?? 'dash_pos_test_unknown',
        {
          authCode: 'authCode' in result ? result.authCode : '',
          bankCode: 'bankCode' in result ? (result.bankCode ?? '—') : '—',
          orderId: result.orderId,
        },
      )
      return redirect(reply, `${BASE}/pos/${id}`)
    })
  }
}
