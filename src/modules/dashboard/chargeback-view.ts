import { badge, type BadgeTone } from '../../platform/web/components.ts'
import type { SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import type { Chargeback } from '../disputes/index.ts'

// A chargeback's status as a badge: the list, its page and its evidence panel.

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
