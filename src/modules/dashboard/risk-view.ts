import {
  badge,
  dataTable,
  facts,
  technicalDetails,
  type BadgeTone,
} from '../../platform/web/components.ts'
import { formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import type { RiskAssessment, RiskDecision, RiskFacts } from '../payments/index.ts'
import { LIST_NAMES, type RiskAction, type Rule } from '../risk/index.ts'
import { BASE } from './dashboard.web.ts'

// How a payment's risk check reads on a page (the payment's detail and a review's): the
// decision and its 0–99 score, what fired (block lists, rules by name, the score's signals
// with their points, docs/risk.md) and the facts the rules were evaluated over, as they were
// stored with the payment. Shared by payments.pages.ts and reviews.pages.ts; and the Reviews
// section's tabs, shared by its three parts (reviews, rules, lists).

const DECISION_TONES: Readonly<Record<RiskDecision, BadgeTone>> = {
  allow: 'success',
  review: 'warning',
  require_3ds: 'info',
  block: 'danger',
}

/** The Reviews entry of the dashboard's navigation: the queue, the rules and the lists. */
export const RISK_SECTION = 'reviews'

export const RULE_ACTIONS: readonly RiskAction[] = ['block', 'require_3ds', 'review']

/** A rule action in the member's language. */
export function actionText(lang: Lang, action: RiskAction): string {
  return t(lang, `dash_risk_action_${action}`)
}

export function decisionBadge(lang: Lang, decision: RiskDecision): SafeHtml {
  return badge(t(lang, `dash_risk_decision_${decision}`), DECISION_TONES[decision])
}

interface ParsedReasons {
  lists: string[]
  rules: { id: string; action: string }[]
  signals: { name: string; points: number }[]
}

/** `list:<name>`, `rule:<id>:<action>`, `signal:<name>:<points>` (risk.service screenCharge). */
function parseReasons(reasons: readonly string[]): ParsedReasons {
  const out: ParsedReasons = { lists: [], rules: [], signals: [] }
  for (const reason of reasons) {
    const [kind, a = '', b = ''] = reason.split(':')
    if (kind === 'list') out.lists.push(a)
    else if (kind === 'rule') out.rules.push({ id: a, action: b })
    else if (kind === 'signal') out.signals.push({ name: a, points: Number(b) })
  }
  return out
}

function factRows(lang: Lang, f: RiskFacts): [string, string][] {
  const money = (m: number) => formatMoney(m, lang)
  const text = (v: string | null) => v ?? '—'
  return [
    ['amount', money(f.amount)],
    ['installmentCount', formatNumber(f.installmentCount, lang)],
    ['card.brand', text(f.card.brand)],
    ['card.bin', text(f.card.bin)],
    ['card.binCountry', text(f.card.binCountry)],
    ['card.funding', text(f.card.funding)],
    ['card.fingerprint', text(f.card.fingerprint)],
    ['customer.id', text(f.customer.id)],
    ['customer.email', text(f.customer.email)],
    ['ip', text(f.ip)],
    ['velocity.cardAttempts1h', formatNumber(f.velocity.cardAttempts1h, lang)],
    ['velocity.cardDeclines24h', formatNumber(f.velocity.cardDeclines24h, lang)],
    ['velocity.ipAttempts1h', formatNumber(f.velocity.ipAttempts1h, lang)],
    ['velocity.customerAmount24h', money(f.velocity.customerAmount24h)],
  ]
}

/**
 * The risk panel's body. `rules` are the merchant's current rules (a rule deleted since shows
 * its id only); `facts` null for payments made before risk checks or without a card.
 */
export function riskDetails(
  lang: Lang,
  risk: RiskAssessment | null,
  riskFacts: RiskFacts | null,
  rules: readonly Rule[],
  /** Show the facts (under "Teknik ayrıntılar"): for roles that build on the API. */
  technical = true,
): SafeHtml {
  if (!risk) return markup`<p class="muted" id="risk-none">${t(lang, 'dash_risk_none')}</p>`
  const reasons = parseReasons(risk.reasons)
  const names = new Map(rules.map((r) => [r.id, r.name]))
  const ruleLinks = reasons.rules.length
    ? markup`<ul>
        ${reasons.rules.map((r) => {
          const name = names.get(r.id)
          const action = actionLabel(lang, r.action)
          return name
            ? markup`<li><a href="${BASE}/risk/rules/${r.id}">${name}</a> · ${action}</li>`
            : markup`<li><span class="mono">${r.id}</span> · ${action}</li>`
        })}
      </ul>`
    : '—'
  return markup`
    ${facts([
      [
        t(lang, 'dash_risk_decision'),
        markup`<span id="risk-decision">${decisionBadge(lang, risk.decision)}</span>`,
      ],
      [
        t(lang, 'dash_risk_score'),
        markup`<span id="risk-score">${formatNumber(risk.score, lang)}</span>`,
      ],
      [
        t(lang, 'dash_risk_lists'),
        reasons.lists.length ? reasons.lists.map((l) => listLabel(lang, l)).join(', ') : '—',
      ],
      [t(lang, 'dash_risk_rules'), markup`<div id="risk-rules">${ruleLinks}</div>`],
    ])}
    ${dataTable({
      caption: t(lang, 'dash_risk_signals'),
      showCaption: true,
      id: 'risk-signals',
      columns: [
        { label: t(lang, 'dash_risk_signal') },
        { label: t(lang, 'dash_risk_points'), numeric: true },
      ],
      rows: reasons.signals.map((s) => [
        markup`<span class="mono">${s.name}</span>`,
        formatNumber(s.points, lang),
      ]),
      empty: t(lang, 'dash_risk_no_signals'),
    })}
    ${
      riskFacts && technical
        ? technicalDetails(
            lang,
            dataTable({
              caption: t(lang, 'dash_risk_facts'),
              showCaption: true,
              id: 'risk-facts',
              columns: [
                { label: t(lang, 'dash_risk_fact') },
                { label: t(lang, 'dash_risk_value') },
              ],
              rows: factRows(lang, riskFacts).map(([k, v]) => [
                markup`<span class="mono">${k}</span>`,
                markup`<span class="mono">${v}</span>`,
              ]),
              empty: t(lang, 'dash_none'),
            }),
          )
        : ''
    }`
}

/** A block list's name in the reader's language (the raw name if it is none of ours). */
export function listLabel(lang: Lang, name: string): string {
  const list = LIST_NAMES.find((l) => l === name)
  return list ? t(lang, `dash_risk_list_${list}`) : name
}

function actionLabel(lang: Lang, name: string): string {
  const action = RULE_ACTIONS.find((a) => a === name)
  return action ? t(lang, `dash_risk_action_${action}`) : name
}

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
