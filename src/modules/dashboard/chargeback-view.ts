import { badge, type BadgeTone } from '../../platform/web/components.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { reasonCodeInfo, type Chargeback } from '../disputes/index.ts'

// A chargeback's status as a badge, and its reason code in words: the list, its page and its
// evidence panel.

type Status = Chargeback['status']

const TONES: Readonly<Record<Status, BadgeTone>> = {
  received: 'warning',
  under_review: 'info',
  accepted: 'neutral',
  reversed: 'success',
}

export function statusBadge(lang: Lang, status: Status): SafeHtml {
  return badge(t(lang, `dash_cb_status_${status}`), TONES[status])
}

/** "4837 · No cardholder authorization": the code, with its meaning when we know it. */
export function reasonText(lang: Lang, code: string): string {
  const info = reasonCodeInfo(code)
  return info ? `${code} · ${info[lang].title}` : code
}

/** What the bank wants for this reason code, or nothing for a code we do not know. */
export function reasonEvidence(lang: Lang, code: string): SafeHtml | string {
  const info = reasonCodeInfo(code)
  return info ? markup`<p class="hint" id="reason-evidence">${info[lang].evidence}</p>` : ''
}
