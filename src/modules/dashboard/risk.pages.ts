import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import { validationError, type AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  field,
  postButton,
  section,
  selectField,
  textArea,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { recordAuditEntry } from '../audit/index.ts'
import {
  LIST_NAMES,
  RISK_FACTS,
  addListItem,
  backtestRule,
  createRule,
  deleteRule,
  getRule,
  listListItems,
  listNamed,
  listRules,
  removeListItem,
  updateRule,
  type Backtest,
  type RiskAction,
  type RiskListName,
  type Rule,
} from '../risk/index.ts'
import {
  BASE,
  allow,
  attempt,
  csrfToken,
  redirect,
  refusalText,
  renderPage,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { formFields, queryFields } from './forms.ts'
import { idParam, keysetPager } from './list-pages.ts'
import { RULE_ACTIONS, listLabel } from './risk-view.ts'

// Risk settings under the Reviews entry (CONTRACT.md "Risk: rules, lists, reviews"; docs/risk.md):
// /dashboard/risk/rules: the merchant's rules, a form to write one (JSON Logic condition in a
// text area, checked by the risk service as for the API: an unknown operator or fact is shown
// at the field, nothing is saved) and to backtest a condition over the last 30 days;
// /dashboard/risk/rules/{id}: a rule, edit, enable / disable, delete, backtest;
// /dashboard/risk/lists/{list}: a block list's entries, add and remove. Every action is the
// risk module's function the API calls, under `risk.manage` (owners and admins).

const SECTION = 'reviews'
const LIST_PAGE_SIZE = 50
/** A condition's text: far more than any useful rule (the service bounds it to 500 nodes). */
const CONDITION_CHARS_MAX = 10_000
const NAME_CHARS_MAX = 100
/** Control characters, which the API's schemas refuse in names, values and notes. */
function hasControlChars(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}
const EXAMPLE =
  '{"and": [{">=": [{"var": "amount"}, 500000]}, {"!=": [{"var": "card.binCountry"}, "TR"]}]}'

type Tab = 'reviews' | 'rules' | 'lists'

/** The Reviews section's three parts: the queue, the rules, the block lists. */
export function riskTabs(lang: Lang, current: Tab): SafeHtml {
  const tabs: [Tab, string, string][] = [
    ['reviews', `${BASE}/reviews`, t(lang, 'dash_rev_queue')],
    ['rules', `${BASE}/risk/rules`, t(lang, 'dash_risk_rules_title')],
    ['lists', `${BASE}/risk/lists/card_fingerprint`, t(lang, 'dash_risk_lists_title')],
  ]
  return markup`<div class="actions tabs" role="group" aria-label="${t(lang, 'dash_risk_parts')}">
    ${tabs.map(([id, href, label]) =>
      id === current
        ? markup`<a class="button button-primary" href="${href}" aria-current="page">${label}</a>`
        : markup`<a class="button button-secondary" href="${href}">${label}</a>`,
    )}
  </div>`
}

function actionText(lang: Lang, action: RiskAction): string {
  return t(lang, `dash_risk_action_${action}`)
}

function enabledBadge(lang: Lang, enabled: boolean): SafeHtml {
  return enabled
    ? badge(t(lang, 'dash_risk_enabled'), 'success')
    : badge(t(lang, 'dash_risk_disabled'), 'neutral')
}

function conditionText(condition: unknown): string {
  return JSON.stringify(condition)
}

// ---------------------------------------------------------------- reading the forms

interface RuleForm {
  name: string
  action: string
  condition: string
  enabled: boolean
}

function readRuleForm(ctx: PageContext): RuleForm {
  const form = formFields(ctx.request)
  return {
    name: form.text('name', NAME_CHARS_MAX + 1).trim(),
    action: form.text('action', 20),
    condition: form.text('condition', CONDITION_CHARS_MAX + 1).trim(),
    enabled: form.text('enabled', 3) !== '',
  }
}

/** Where a refusal belongs on the form (the field it names), else only the alert. */
type FieldErrors = Partial<Record<'name' | 'action' | 'condition', string>>

function nameIssue(lang: Lang, name: string): string | undefined {
  if (name === '' || name.length > NAME_CHARS_MAX || hasControlChars(name)) {
    return t(lang, 'dash_risk_bad_name')
  }
  return undefined
}

/** The condition text as a JSON object, or the words for why it is not one. */
function parseCondition(
  lang: Lang,
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text === '' || text.length > CONDITION_CHARS_MAX) {
    return { ok: false, error: t(lang, 'dash_risk_bad_json') }
  }
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { ok: false, error: t(lang, 'dash_risk_bad_json') }
    }
    return { ok: true, value }
  } catch {
    return { ok: false, error: t(lang, 'dash_risk_bad_json') }
  }
}

// ---------------------------------------------------------------- rules

function ruleForm(
  ctx: PageContext,
  input: { action: string; values?: RuleForm; errors?: FieldErrors; withAction: boolean },
): SafeHtml {
  const { lang } = ctx
  const v = input.values
  const e = input.errors ?? {}
  const err = (k: keyof FieldErrors) => (e[k] ? { error: e[k] } : {})
  return markup`<form method="post" action="${input.action}" class="form-stack" id="rule-form" novalidate>
    ${csrfInput(csrfToken(ctx.request, ctx.reply))}
    ${field({ name: 'name', label: t(lang, 'dash_risk_rule_name'), value: v?.name, required: true, maxlength: NAME_CHARS_MAX, ...err('name') })}
    ${
      input.withAction
        ? selectField({
            name: 'action',
            label: t(lang, 'dash_risk_rule_action'),
            value: v?.action ?? 'review',
            options: RULE_ACTIONS.map((a) => ({ value: a, label: actionText(lang, a) })),
          })
        : ''
    }
    ${textArea({
      name: 'condition',
      label: t(lang, 'dash_risk_condition'),
      value: v?.condition,
      rows: 6,
      required: true,
      maxlength: CONDITION_CHARS_MAX,
      code: true,
      hint: t(lang, 'dash_risk_condition_hint', { example: EXAMPLE, facts: RISK_FACTS.join(', ') }),
      ...err('condition'),
    })}
    ${
      input.withAction
        ? markup`<div class="field checkbox">
            <input type="checkbox" id="f-enabled" name="enabled" value="1" ${v === undefined || v.enabled ? markup`checked` : ''} />
            <label for="f-enabled">${t(lang, 'dash_risk_enable_now')}</label>
          </div>`
        : ''
    }
    <div class="actions">
      <button type="submit" class="button button-primary">
        ${t(lang, input.withAction ? 'dash_risk_create' : 'dash_risk_save')}
      </button>
      <button type="submit" class="button button-secondary" formaction="${BASE}/risk/rules/backtest">
        ${t(lang, 'dash_risk_backtest')}
      </button>
    </div>
  </form>`
}

function backtestPanel(lang: Lang, b: Backtest): SafeHtml {
  return section({
    title: t(lang, 'dash_risk_backtest_title'),
    id: 'backtest-heading',
    body: markup`<div id="backtest">
      ${facts([
        [t(lang, 'dash_risk_bt_evaluated'), formatNumber(b.evaluated, lang)],
        [
          t(lang, 'dash_risk_bt_matched'),
          markup`<span id="backtest-matched">${formatNumber(b.matched, lang)}</span>`,
        ],
        [t(lang, 'dash_risk_bt_amount'), formatMoney(b.matchedAmount, lang)],
        [
          t(lang, 'dash_risk_bt_sample'),
          b.samplePaymentIds.length
            ? markup`<ul>${b.samplePaymentIds.map((id) => markup`<li><a class="mono" href="${BASE}/payments/${id}">${id}</a></li>`)}</ul>`
            : '—',
        ],
      ])}
      <p class="hint">${t(lang, 'dash_risk_bt_note')}</p>
    </div>`,
  })
}

interface RulesPageExtra {
  values?: RuleForm
  errors?: FieldErrors
  problem?: AppError
  backtest?: Backtest
}

async function rulesPage(deps: Deps, ctx: PageContext, extra: RulesPageExtra = {}) {
  const { lang } = ctx
  const rules = await listRules(deps, ctx.member.merchantId)
  const content = markup`${riskTabs(lang, 'rules')}
    ${section({
      title: t(lang, 'dash_risk_rules_title'),
      id: 'rules-heading',
      body: markup`${dataTable({
        caption: t(lang, 'dash_risk_rules_title'),
        id: 'rules-table',
        columns: [
          { label: t(lang, 'dash_risk_rule_name') },
          { label: t(lang, 'dash_risk_rule_action') },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_risk_condition') },
          { label: t(lang, 'dash_risk_updated') },
        ],
        rows: rules.map((r) => [
          markup`<a href="${BASE}/risk/rules/${r.id}">${r.name}</a>`,
          actionText(lang, r.action),
          enabledBadge(lang, r.enabled),
          markup`<span class="mono">${conditionText(r.condition)}</span>`,
          formatDate(r.updatedAt, lang, 'datetime'),
        ]),
        empty: t(lang, 'dash_risk_no_rules'),
      })}
      <p class="hint">${t(lang, 'dash_risk_order_note')}</p>`,
    })}
    ${extra.backtest ? backtestPanel(lang, extra.backtest) : ''}
    ${
      ctx.can('risk.manage')
        ? section({
            title: t(lang, 'dash_risk_new_rule'),
            id: 'new-rule-heading',
            body: ruleForm(ctx, {
              action: `${BASE}/risk/rules`,
              withAction: true,
              ...(extra.values ? { values: extra.values } : {}),
              ...(extra.errors ? { errors: extra.errors } : {}),
            }),
          })
        : ''
    }`
  return renderPage(ctx, {
    heading: t(lang, 'dash_risk_rules_title'),
    section: SECTION,
    content,
    ...(extra.problem
      ? {
          status: extra.problem.status,
          flash: { kind: 'error', text: refusalText(lang, extra.problem) },
        }
      : {}),
  })
}

interface RulePageExtra {
  values?: RuleForm
  errors?: FieldErrors
  problem?: AppError
  backtest?: Backtest
}

async function rulePage(deps: Deps, ctx: PageContext, id: string, extra: RulePageExtra = {}) {
  const { lang } = ctx
  // Another merchant's (or no) rule is the service's 404: the 404 page.
  const rule = await getRule(deps, ctx.member.merchantId, id)
  const manage = ctx.can('risk.manage')
  const token = csrfToken(ctx.request, ctx.reply)
  const values: RuleForm = extra.values ?? {
    name: rule.name,
    action: rule.action,
    condition: JSON.stringify(rule.condition, null, 2),
    enabled: rule.enabled,
  }
  const content = markup`${riskTabs(lang, 'rules')}
    ${section({
      title: t(lang, 'dash_risk_rule_details'),
      id: 'rule-heading',
      body: markup`${facts([
        [t(lang, 'dash_risk_rule_name'), rule.name],
        [t(lang, 'dash_risk_rule_action'), actionText(lang, rule.action)],
        [
          t(lang, 'dash_col_status'),
          markup`<span id="rule-status">${enabledBadge(lang, rule.enabled)}</span>`,
        ],
        [t(lang, 'dash_risk_created'), formatDate(rule.createdAt, lang, 'datetime')],
        [t(lang, 'dash_risk_updated'), formatDate(rule.updatedAt, lang, 'datetime')],
        [t(lang, 'dash_risk_rule_id'), markup`<span class="mono">${rule.id}</span>`],
      ])}
      <pre class="mono example" id="rule-condition" aria-label="${t(lang, 'dash_risk_condition')}">${JSON.stringify(rule.condition, null, 2)}</pre>`,
    })}
    ${
      manage
        ? section({
            title: t(lang, 'dash_pay_actions'),
            id: 'actions-heading',
            body: markup`<div class="actions">
              ${postButton({
                action: `${BASE}/risk/rules/${rule.id}/${rule.enabled ? 'disable' : 'enable'}`,
                csrfToken: token,
                label: t(lang, rule.enabled ? 'dash_risk_disable' : 'dash_risk_enable'),
              })}
              ${postButton({
                action: `${BASE}/risk/rules/${rule.id}/backtest`,
                csrfToken: token,
                label: t(lang, 'dash_risk_backtest'),
              })}
              ${postButton({
                action: `${BASE}/risk/rules/${rule.id}/delete`,
                csrfToken: token,
                label: t(lang, 'dash_risk_delete'),
                variant: 'danger',
              })}
            </div>`,
          })
        : ''
    }
    ${extra.backtest ? backtestPanel(lang, extra.backtest) : ''}
    ${
      manage
        ? section({
            title: t(lang, 'dash_risk_edit'),
            id: 'edit-heading',
            body: ruleForm(ctx, {
              action: `${BASE}/risk/rules/${rule.id}`,
              withAction: false,
              values,
              ...(extra.errors ? { errors: extra.errors } : {}),
            }),
          })
        : ''
    }`
  return renderPage(ctx, {
    heading: t(lang, 'dash_risk_rule_title', { name: rule.name }),
    section: SECTION,
    headingAside: markup`<a class="button button-secondary" href="${BASE}/risk/rules">${t(lang, 'dash_risk_back_rules')}</a>`,
    content,
    ...(extra.problem
      ? {
          status: extra.problem.status,
          flash: { kind: 'error', text: refusalText(lang, extra.problem) },
        }
      : {}),
  })
}

/** A service refusal of a condition or name, placed at its field. */
function fieldErrorsOf(lang: Lang, error: AppError): FieldErrors {
  const fieldName = error.details?.[0]?.field ?? ''
  const text = `${t(lang, 'dash_err_invalid')} (${error.message})`
  if (fieldName.startsWith('condition') || error.message.startsWith('condition')) {
    return { condition: text }
  }
  if (fieldName === 'name') return { name: text }
  return {}
}

function confirmDeletePage(ctx: PageContext, rule: Rule) {
  const { lang } = ctx
  return renderPage(ctx, {
    heading: t(lang, 'dash_risk_delete_title'),
    section: SECTION,
    content: markup`<div class="panel form-stack">
      <p>${t(lang, 'dash_risk_delete_body', { name: rule.name })}</p>
      <form method="post" action="${BASE}/risk/rules/${rule.id}/delete" class="actions">
        ${csrfInput(csrfToken(ctx.request, ctx.reply))}
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="button button-danger">${t(lang, 'dash_risk_delete')}</button>
        <a class="button button-secondary" href="${BASE}/risk/rules/${rule.id}">${t(lang, 'dash_cancel')}</a>
      </form>
    </div>`,
  })
}

// ---------------------------------------------------------------- lists

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
    section: SECTION,
    content,
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
  })
}

// ---------------------------------------------------------------- routes

export function riskPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    const audit = (
      ctx: PageContext,
      action: string,
      target: string,
      details?: Parameters<typeof recordAuditEntry>[1]['details'],
    ) =>
      recordAuditEntry(deps, {
        merchantId: ctx.member.merchantId,
        actorId: ctx.member.userId,
        action,
        target,
        ...(details ? { details } : {}),
      })

    app.get('/risk', async (request, reply) => {
      allow(deps, request, reply, 'read')
      return redirect(reply, `${BASE}/risk/rules`)
    })

    app.get('/risk/rules', async (request, reply) =>
      rulesPage(deps, allow(deps, request, reply, 'read')),
    )

    app.post('/risk/rules', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'risk.manage')
      const { lang } = ctx
      const values = readRuleForm(ctx)
      const errors: FieldErrors = {}
      const name = nameIssue(lang, values.name)
      if (name) errors.name = name
      const action = RULE_ACTIONS.find((a) => a === values.action)
      if (!action) errors.action = t(lang, 'dash_err_invalid')
      const condition = parseCondition(lang, values.condition)
      if (!condition.ok) errors.condition = condition.error
      if (!action || !condition.ok || name) {
        const first = errors.name ?? errors.condition ?? errors.action ?? ''
        return rulesPage(deps, ctx, {
          values,
          errors,
          problem: validationError(errors.name ? 'name' : 'condition', first),
        })
      }
      const result = await attempt(() =>
        createRule(deps, ctx.member.merchantId, {
          name: values.name,
          action,
          condition: condition.value,
          enabled: values.enabled,
        }),
      )
      if (!result.ok) {
        return rulesPage(deps, ctx, {
          values,
          errors: fieldErrorsOf(lang, result.error),
          problem: result.error,
        })
      }
      const rule = result.value
      await audit(ctx, 'risk.rule_create', rule.id, { action: rule.action, enabled: rule.enabled })
      setFlash(deps, reply, 'success', 'dash_done_rule_create')
      return redirect(reply, `${BASE}/risk/rules/${rule.id}`)
    })

    // A backtest changes nothing, but it is part of writing rules (and a POST for its body).
    app.post('/risk/rules/backtest', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'risk.manage')
      const values = readRuleForm(ctx)
      const condition = parseCondition(ctx.lang, values.condition)
      if (!condition.ok) {
        return rulesPage(deps, ctx, {
          values,
          errors: { condition: condition.error },
          problem: validationError('condition', condition.error),
        })
      }
      const result = await attempt(() => backtestRule(deps, ctx.member.merchantId, condition.value))
      if (!result.ok) {
        return rulesPage(deps, ctx, {
          values,
          errors: fieldErrorsOf(ctx.lang, result.error),
          problem: result.error,
        })
      }
      return rulesPage(deps, ctx, { values, backtest: result.value })
    })

    app.get('/risk/rules/:id', async (request, reply) =>
      rulePage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    app.post('/risk/rules/:id', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'risk.manage')
      const { lang } = ctx
      const id = idParam(request)
      const values = readRuleForm(ctx)
      const name = nameIssue(lang, values.name)
      const condition = parseCondition(lang, values.condition)
      if (name || !condition.ok) {
        const errors: FieldErrors = {
          ...(name ? { name } : {}),
          ...(condition.ok ? {} : { condition: condition.error }),
        }
        return rulePage(deps, ctx, id, {
          values,
          errors,
          problem: validationError(name ? 'name' : 'condition', name ?? errors.condition ?? ''),
        })
      }
      const result = await attempt(() =>
        updateRule(deps, ctx.member.merchantId, id, {
          name: values.name,
          condition: condition.value,
        }),
      )
      if (!result.ok) {
        if (result.error.status === 404) throw result.error
        return rulePage(deps, ctx, id, {
          values,
          errors: fieldErrorsOf(lang, result.error),
          problem: result.error,
        })
      }
      await audit(ctx, 'risk.rule_update', id)
      setFlash(deps, reply, 'success', 'dash_done_rule_update')
      return redirect(reply, `${BASE}/risk/rules/${id}`)
    })

    for (const enabled of [true, false]) {
      app.post(`/risk/rules/:id/${enabled ? 'enable' : 'disable'}`, async (request, reply) => {
        const ctx = allow(deps, request, reply, 'risk.manage')
        const id = idParam(request)
        // Another merchant's (or no) rule: the service's 404, the 404 page.
        await updateRule(deps, ctx.member.merchantId, id, { enabled })
        await audit(ctx, enabled ? 'risk.rule_enable' : 'risk.rule_disable', id)
        setFlash(
          deps,
          reply,
          'success',
          enabled ? 'dash_done_rule_enable' : 'dash_done_rule_disable',
        )
        return redirect(reply, `${BASE}/risk/rules/${id}`)
      })
    }

    app.post('/risk/rules/:id/backtest', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'risk.manage')
      const id = idParam(request)
      const rule = await getRule(deps, ctx.member.merchantId, id)
      const backtest = await backtestRule(deps, ctx.member.merchantId, rule.condition)
      return rulePage(deps, ctx, id, { backtest })
    })

    app.post('/risk/rules/:id/delete', async (request, reply): Promise<FastifyReply> => {
      const ctx = allow(deps, request, reply, 'risk.manage')
      const id = idParam(request)
      const rule = await getRule(deps, ctx.member.merchantId, id)
      if (formFields(request).text('confirm', 3) !== 'yes') return confirmDeletePage(ctx, rule)
      await deleteRule(deps, ctx.member.merchantId, id)
      await audit(ctx, 'risk.rule_delete', id, { name: rule.name })
      setFlash(deps, reply, 'success', 'dash_done_rule_delete')
      return redirect(reply, `${BASE}/risk/rules`)
    })

    app.get('/risk/lists', async (request, reply) => {
      allow(deps, request, reply, 'read')
      return redirect(reply, `${BASE}/risk/lists/card_fingerprint`)
    })

    // An unknown list name is the service's 404 (listNamed), as in the API.
    app.get('/risk/lists/:list', async (request, reply) =>
      listPage(deps, allow(deps, request, reply, 'read'), listNamed(idParam(request, 'list'))),
    )

    app.post('/risk/lists/:list/items', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'risk.manage')
      const list = listNamed(idParam(request, 'list'))
      const form = formFields(request)
      const value = form.text('value', 255).trim()
      const note = form.text('note', 501).trim()
      const shown = { value, note }
      if (value === '' || value.length > 254 || hasControlChars(value)) {
        const text = t(ctx.lang, 'dash_err_invalid')
        return listPage(deps, ctx, list, {
          ...shown,
          error: text,
          problem: validationError('value', text),
        })
      }
      if (note.length > 500 || hasControlChars(note)) {
        return listPage(deps, ctx, list, {
          ...shown,
          problem: validationError('note', t(ctx.lang, 'dash_err_invalid')),
        })
      }
      const result = await attempt(() =>
        addListItem(deps, ctx.member.merchantId, list, {
          value,
          ...(note ? { note } : {}),
        }),
      )
      if (!result.ok) {
        return listPage(deps, ctx, list, {
          ...shown,
          error: `${t(ctx.lang, 'dash_err_invalid')} (${result.error.message})`,
          problem: result.error,
        })
      }
      await audit(ctx, 'risk.list_add', result.value.id, { list, value: result.value.value })
      setFlash(deps, reply, 'success', 'dash_done_list_add')
      return redirect(reply, `${BASE}/risk/lists/${list}`)
    })

    app.post('/risk/lists/:list/items/:id/remove', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'risk.manage')
      const list = listNamed(idParam(request, 'list'))
      const id = idParam(request)
      // Another merchant's (or no) entry: the service's 404, the 404 page.
      await removeListItem(deps, ctx.member.merchantId, list, id)
      await audit(ctx, 'risk.list_remove', id, { list })
      setFlash(deps, reply, 'success', 'dash_done_list_remove')
      return redirect(reply, `${BASE}/risk/lists/${list}`)
    })
  }
}
