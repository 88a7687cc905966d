import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import { validationError, type AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  postButton,
  section,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import {
  CreateRuleBody,
  backtestRule,
  createRule,
  deleteRule,
  getRule,
  listRules,
  updateRule,
  type Backtest,
  type Rule,
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
import { BacktestBody, UpdateRuleBody } from '../risk/index.ts'
import { PageActionBody } from './dashboard.schemas.ts'
import { formFields } from './forms.ts'
import { pageInput, pageRoute } from './page-rules.ts'
import { idParam } from './list-pages.ts'
import { RISK_SECTION, RULE_ACTIONS, actionText, riskTabs } from './risk-view.ts'
import { riskListRoutes } from './risk-lists.pages.ts'
import {
  fieldErrorsOf,
  nameIssue,
  parseCondition,
  readRuleForm,
  ruleForm,
  type FieldErrors,
  type RuleForm,
} from './risk-rule-form.ts'

// Risk settings under the Reviews entry (CONTRACT.md "Risk: rules, lists, reviews"; docs/risk.md):
// /dashboard/risk/rules: the merchant's rules, a form to write one (JSON Logic condition in a
// text area, checked by the risk service as for the API: an unknown operator or fact is shown
// at the field, nothing is saved) and to backtest a condition over the last 30 days;
// /dashboard/risk/rules/{id}: a rule, edit, enable / disable, delete, backtest;
// /dashboard/risk/lists/{list}: a block list's entries, add and remove (risk-lists.pages.ts,
// registered here). The rule form is risk-rule-form.ts. Every action is the risk module's
// function the API calls, under `risk.manage` (owners and admins).

function enabledBadge(lang: Lang, enabled: boolean): SafeHtml {
  return enabled
    ? badge(t(lang, 'dash_risk_enabled'), 'success')
    : badge(t(lang, 'dash_risk_disabled'), 'neutral')
}

function conditionText(condition: unknown): string {
  return JSON.stringify(condition)
}

// ---------------------------------------------------------------- rules

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
    section: RISK_SECTION,
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
    section: RISK_SECTION,
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

function confirmDeletePage(ctx: PageContext, rule: Rule) {
  const { lang } = ctx
  return renderPage(ctx, {
    heading: t(lang, 'dash_risk_delete_title'),
    section: RISK_SECTION,
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

// ---------------------------------------------------------------- routes

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  backtest: pageRoute({ permission: 'risk.manage', schema: BacktestBody }),
  update: pageRoute({ permission: 'risk.manage', schema: UpdateRuleBody }),
  toggle: pageRoute({ permission: 'risk.manage', schema: PageActionBody }),
  backtestRule: pageRoute({ permission: 'risk.manage', schema: PageActionBody }),
  delete: pageRoute({ permission: 'risk.manage', schema: PageActionBody }),
}

const DELETE_RULE = '/risk/rules/:id/delete'
export function riskPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/risk', async (request, reply) => {
      allow(deps, request, reply, 'read')
      return redirect(reply, `${BASE}/risk/rules`)
    })

    app.get('/risk/rules', async (request, reply) =>
      rulesPage(deps, allow(deps, request, reply, 'read')),
    )

    app.post(
      '/risk/rules',
      { config: { page: { permission: 'risk.manage', schema: CreateRuleBody } } },
      async (request, reply) => {
        const ctx = allow(deps, request, reply, 'risk.manage')
        const { lang } = ctx
        const values = readRuleForm(ctx)
        // The condition is typed as JSON text: reading it is the form's own job.
        const condition = parseCondition(lang, values.condition)
        if (!condition.ok) {
          return rulesPage(deps, ctx, {
            values,
            errors: { condition: condition.error },
            problem: validationError('condition', condition.error),
          })
        }
        // Every rule of the API's body (name, action, condition's shape) from its own schema.
        const invalid = pageInput(request, {
          name: values.name,
          action: values.action,
          condition: condition.value,
          enabled: values.enabled,
        })
        const action = RULE_ACTIONS.find((a) => a === values.action)
        if (invalid || !action) {
          const problem = invalid ?? validationError('action', t(lang, 'dash_err_invalid'))
          return rulesPage(deps, ctx, { values, errors: fieldErrorsOf(lang, problem), problem })
        }
        // A new rule is recorded under its merchant: its id exists only inside the action.
        const result = await attempt(() =>
          auditedAction(
            ctx,
            'risk.rule_create',
            null,
            { name: values.name, action, enabled: values.enabled },
            () =>
              createRule(deps, ctx.member.merchantId, {
                name: values.name,
                action,
                condition: condition.value,
                enabled: values.enabled,
              }),
          ),
        )
        if (!result.ok) {
          return rulesPage(deps, ctx, {
            values,
            errors: fieldErrorsOf(lang, result.error),
            problem: result.error,
          })
        }
        const rule = result.value
        setFlash(deps, reply, 'success', 'dash_done_rule_create')
        return redirect(reply, `${BASE}/risk/rules/${rule.id}`)
      },
    )

    // A backtest changes nothing, but it is part of writing rules (and a POST for its body).
    app.post('/risk/rules/backtest', ROUTES.backtest, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
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

    app.post('/risk/rules/:id', ROUTES.update, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
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
        auditedAction(ctx, 'risk.rule_update', id, undefined, () =>
          updateRule(deps, ctx.member.merchantId, id, {
            name: values.name,
            condition: condition.value,
          }),
        ),
      )
      if (!result.ok) {
        if (result.error.status === 404) throw result.error
        return rulePage(deps, ctx, id, {
          values,
          errors: fieldErrorsOf(lang, result.error),
          problem: result.error,
        })
      }
      setFlash(deps, reply, 'success', 'dash_done_rule_update')
      return redirect(reply, `${BASE}/risk/rules/${id}`)
    })

    for (const enabled of [true, false]) {
      const url = `/risk/rules/:id/${enabled ? 'enable' : 'disable'}`
      app.post(url, ROUTES.toggle, async (request, reply) => {
        const ctx = permitted(deps, request, reply)
        const id = idParam(request)
        // Another merchant's (or no) rule: the service's 404, the 404 page.
        await auditedAction(ctx, enabled ? 'risk.rule_enable' : 'risk.rule_disable', id, {}, () =>
          updateRule(deps, ctx.member.merchantId, id, { enabled }),
        )
        setFlash(
          deps,
          reply,
          'success',
          enabled ? 'dash_done_rule_enable' : 'dash_done_rule_disable',
        )
        return redirect(reply, `${BASE}/risk/rules/${id}`)
      })
    }

    app.post('/risk/rules/:id/backtest', ROUTES.backtestRule, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const id = idParam(request)
      const rule = await getRule(deps, ctx.member.merchantId, id)
      const backtest = await backtestRule(deps, ctx.member.merchantId, rule.condition)
      return rulePage(deps, ctx, id, { backtest })
    })

    app.post(DELETE_RULE, ROUTES.delete, async (request, reply): Promise<FastifyReply> => {
      const ctx = permitted(deps, request, reply)
      const id = idParam(request)
      const rule = await getRule(deps, ctx.member.merchantId, id)
      if (formFields(request).text('confirm', 3) !== 'yes') return confirmDeletePage(ctx, rule)
      await auditedAction(ctx, 'risk.rule_delete', id, { name: rule.name }, () =>
        deleteRule(deps, ctx.member.merchantId, id),
      )
      setFlash(deps, reply, 'success', 'dash_done_rule_delete')
      return redirect(reply, `${BASE}/risk/rules`)
    })

    riskListRoutes(deps, app)
  }
}
