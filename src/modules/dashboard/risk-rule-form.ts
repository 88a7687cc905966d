import { refusalText } from './refusals.ts'
import type { AppError } from '../../platform/errors.ts'
import { csrfInput, field, selectField, textArea } from '../../platform/web/components.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { RISK_FACTS } from '../risk/index.ts'
import { BASE, csrfToken, type PageContext } from './dashboard.web.ts'
import { formFields, hasControlChars } from './forms.ts'
import { RULE_ACTIONS, actionText } from './risk-view.ts'

// The rule form of /dashboard/risk/rules (new) and /{id} (edit): reading it, checking the
// name and the condition's JSON before the risk service checks the rule itself, drawing it
// with each refusal at its field.

/** A condition's text: far more than any useful rule (the service bounds it to 500 nodes). */
const CONDITION_CHARS_MAX = 10_000
const NAME_CHARS_MAX = 100
export const EXAMPLE =
  '{"and": [{">=": [{"var": "amount"}, 500000]}, {"!=": [{"var": "card.binCountry"}, "TR"]}]}'

export interface RuleForm {
  name: string
  action: string
  condition: string
  enabled: boolean
}

export function readRuleForm(ctx: PageContext): RuleForm {
  const form = formFields(ctx.request)
  return {
    name: form.text('name', NAME_CHARS_MAX + 1).trim(),
    action: form.text('action', 20),
    condition: form.text('condition', CONDITION_CHARS_MAX + 1).trim(),
    enabled: form.text('enabled', 3) !== '',
  }
}

/** Where a refusal belongs on the form (the field it names), else only the alert. */
export type FieldErrors = Partial<Record<'name' | 'action' | 'condition', string>>

export function nameIssue(lang: Lang, name: string): string | undefined {
  if (name === '' || name.length > NAME_CHARS_MAX || hasControlChars(name)) {
    return t(lang, 'dash_risk_bad_name')
  }
  return undefined
}

/** The condition text as a JSON object, or the words for why it is not one. */
export function parseCondition(
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

export function ruleForm(
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

/** A service refusal of a condition or name, placed at its field. */
export function fieldErrorsOf(lang: Lang, error: AppError): FieldErrors {
  const fieldName = error.details?.[0]?.field ?? ''
  const text = refusalText(lang, error)
  if (fieldName.startsWith('condition') || error.message.startsWith('condition')) {
    return { condition: text }
  }
  if (fieldName === 'name') return { name: text }
  return {}
}
