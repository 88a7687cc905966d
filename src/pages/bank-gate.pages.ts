import { markup } from '../platform/web/html.ts'
import { t, type Lang } from '../platform/web/i18n.ts'
import { formatMoney } from '../platform/web/format.ts'
import { icons, layout } from './layout.ts'

// The step before a bank's own 3-D Secure page: the bank's signed form, posted to its 3D gate
// by checkout.js at once (the CSP forbids inline script), with a visible button for a browser
// without script. The card fields are the bank's to read; the page is never cached.

export interface BankGatePageInput {
  lang: Lang
  langHrefs: Record<Lang, string>
  sandbox: boolean
  action: string
  fields: Record<string, string>
  merchantName: string
  amount: number
}

export function bankGatePage(p: BankGatePageInput): string {
  const { lang } = p
  const inputs = Object.entries(p.fields).map(
    ([name, value]) => markup`<input type="hidden" name="${name}" value="${value}" />`,
  )
  const content = markup`<section class="bank-card" aria-labelledby="gate-heading">
    <h1 id="gate-heading" class="bank-title">${icons.shield}<span>${t(lang, 'gate_title')}</span></h1>
    <p class="bank-intro">
      ${t(lang, 'gate_intro', { merchant: p.merchantName, amount: formatMoney(p.amount, lang) })}
    </p>
    <form id="bank-gate-form" method="post" action="${p.action}">
      ${inputs}
      <button type="submit" class="primary-button bank-button" id="gate-button">
        <span class="button-label">${t(lang, 'gate_continue')}</span>
      </button>
    </form>
  </section>`
  return layout({
    lang,
    title: t(lang, 'gate_title'),
    page: 'bank-gate',
    langHrefs: p.langHrefs,
    sandbox: p.sandbox,
    content,
    variant: 'bank',
  })
}
