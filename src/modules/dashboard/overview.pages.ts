import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import { dataTable, field, section } from '../../platform/web/components.ts'
import {
  formatDate,
  formatMoney,
  formatNumber,
  formatPercent,
  istanbulDayStart,
  localeOf,
} from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { BASE, allow, redirect, renderPage } from './dashboard.web.ts'
import { parseLira, queryFields } from './forms.ts'
import {
  RANGE_KEYS,
  merchantOverview,
  resolveRange,
  type OverviewRange,
  type PeriodFigures,
} from './overview.service.ts'

// /dashboard: today's figures and those of a chosen period (today, 7/30/90 days or two dates)
// beside the period before it, refunds, open chargebacks and reviews, balances, and the
// period's daily volume chart (uPlot, from our origin; Turkish dates, tooltips, the previous
// period as a second line) with the same numbers in a table.

function figure(label: string, value: string, sub?: string, id?: string): SafeHtml {
  return markup`<li class="figure" ${id ? markup`id="${id}"` : ''}>
    <p class="figure-label">${label}</p>
    <p class="figure-value">${value}</p>
    ${sub ? markup`<p class="figure-sub">${sub}</p>` : ''}
  </li>`
}

/** "+12,5% önceki döneme göre", or the previous value alone when there is nothing to divide. */
function comparison(lang: Lang, current: number, previous: number, shown: string): string {
  if (previous === 0) return t(lang, 'dash_ov_prev', { value: shown })
  const change = (current - previous) / previous
  const text = new Intl.NumberFormat(localeOf(lang), {
    style: 'percent',
    maximumFractionDigits: 1,
    signDisplay: 'exceptZero',
  }).format(change)
  return t(lang, 'dash_ov_change', { change: text, value: shown })
}

function periodFigures(
  lang: Lang,
  p: PeriodFigures,
  prefix: string,
  title: string,
  previous?: PeriodFigures,
): SafeHtml {
  const rate = (r: number | null) => (r === null ? '—' : formatPercent(r, lang))
  const vs = (current: number, before: number, shown: string) =>
    previous ? comparison(lang, current, before, shown) : undefined
  return section({
    title,
    id: `${prefix}-heading`,
    body: markup`<ul class="figures">
      ${figure(
        t(lang, 'dash_fig_gross'),
        formatMoney(p.grossMinor, lang),
        vs(p.grossMinor, previous?.grossMinor ?? 0, formatMoney(previous?.grossMinor ?? 0, lang)),
        `${prefix}-gross`,
      )}
      ${figure(
        t(lang, 'dash_fig_count'),
        formatNumber(p.capturedCount, lang),
        vs(
          p.capturedCount,
          previous?.capturedCount ?? 0,
          formatNumber(previous?.capturedCount ?? 0, lang),
        ),
        `${prefix}-count`,
      )}
      ${figure(
        t(lang, 'dash_fig_success'),
        rate(p.successRate),
        previous ? t(lang, 'dash_ov_prev', { value: rate(previous.successRate) }) : undefined,
        `${prefix}-success`,
      )}
    </ul>`,
  })
}

/** The period chooser: the usual periods as links, any other as two dates. */
function rangeChooser(lang: Lang, range: OverviewRange, invalid: boolean): SafeHtml {
  const presets = RANGE_KEYS.filter((k) => k !== 'custom')
  return markup`<div class="panel range-chooser">
    <div class="range-presets" role="group" aria-label="${t(lang, 'dash_ov_range_label')}">
      ${presets.map(
        (k) =>
          markup`<a class="button button-secondary" href="${BASE}?range=${k}" ${
            range.key === k ? markup`aria-current="true"` : ''
          }>${t(lang, `dash_ov_range_${k}`)}</a>`,
      )}
    </div>
    <form method="get" action="${BASE}" class="form-grid range-custom">
      <input type="hidden" name="range" value="custom" />
      ${field({ name: 'from', type: 'date', label: t(lang, 'dash_ov_from'), value: range.fromDay, required: true, ...(invalid ? { error: t(lang, 'dash_ov_bad_range') } : {}) })}
      ${field({ name: 'to', type: 'date', label: t(lang, 'dash_ov_to'), value: range.toDay, required: true })}
      <div class="actions">
        <button type="submit" class="button button-primary">${t(lang, 'dash_ov_apply')}</button>
      </div>
    </form>
  </div>`
}

/**
 * Where the header's search box sends a query: an id to its page, an amount to the payments
 * of that amount, anything else (transactionId, last 4 digits, email) to the payments search,
 * which finds those (and an email's customer).
 */
export function searchTarget(q: string): string {
  const text = q.trim()
  if (/^pay_\w+$/.test(text)) return `${BASE}/payments/${text}`
  if (/^cus_\w+$/.test(text)) return `${BASE}/customers/${text}`
  if (/^sub_\w+$/.test(text)) return `${BASE}/subscriptions/${text}`
  if (/^inv_\w+$/.test(text)) return `${BASE}/invoices/${text}`
  // "₺1.234,56", "150,00": an amount (a bare number is a transactionId or last 4 digits).
  if (/^₺\s*[\d.,]+$|^\d[\d.]*,\d{1,2}$/.test(text) && parseLira(text) !== undefined) {
    const amount = encodeURIComponent(text.replace(/^₺\s*/, ''))
    return `${BASE}/payments?min=${amount}&max=${amount}`
  }
  if (text === '') return `${BASE}/payments`
  if (text.includes('@')) return `${BASE}/customers?q=${encodeURIComponent(text)}`
  return `${BASE}/payments?q=${encodeURIComponent(text)}`
}

export function overviewPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/search', async (request, reply) => {
      allow(deps, request, reply, 'read')
      return redirect(reply, searchTarget(queryFields(request).text('q', 200)))
    })

    app.get('/', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { lang } = ctx
      const query = queryFields(request)
      const asked = resolveRange(deps.clock.now(), {
        range: query.text('range', 10),
        from: query.text('from', 10),
        to: query.text('to', 10),
      })
      const range = asked ?? resolveRange(deps.clock.now(), {}) ?? asked
      if (!range) throw new Error('the default range always resolves')
      const o = await merchantOverview(deps, ctx.member.merchantId, range)
      const day = (key: string, style: 'date' | 'long' = 'date') =>
        formatDate(istanbulDayStart(key) ?? new Date(0), lang, style)
      const periodName = t(lang, 'dash_ov_period', {
        from: day(o.range.fromDay),
        to: day(o.range.toDay),
      })
      const content = markup`
        ${rangeChooser(lang, o.range, asked === undefined)}
        ${periodFigures(lang, o.today, 'today', t(lang, 'dash_ov_today'))}
        ${periodFigures(
          lang,
          o.period,
          'period',
          t(lang, 'dash_ov_period_title', { period: periodName }),
          o.previous,
        )}
        ${section({
          title: t(lang, 'dash_ov_money'),
          id: 'money-heading',
          body: markup`<ul class="figures">
            ${figure(
              t(lang, 'dash_fig_refunds'),
              formatMoney(o.refunds.amountMinor, lang),
              t(lang, 'dash_fig_refunds_sub', { n: formatNumber(o.refunds.count, lang) }),
              'refunds',
            )}
            ${figure(
              t(lang, 'dash_fig_chargebacks'),
              formatNumber(o.openChargebacks.count, lang),
              formatMoney(o.openChargebacks.amountMinor, lang),
              'chargebacks',
            )}
            ${figure(t(lang, 'dash_fig_reviews'), formatNumber(o.openReviews, lang), undefined, 'reviews')}
            ${figure(t(lang, 'dash_fig_available'), formatMoney(o.availableMinor, lang), undefined, 'available')}
            ${figure(t(lang, 'dash_fig_reserved'), formatMoney(o.reservedMinor, lang), undefined, 'reserved')}
          </ul>`,
        })}
        ${section({
          title: t(lang, 'dash_ov_chart', { period: periodName }),
          id: 'chart-heading',
          body: markup`<figure class="chart-figure">
              <div
                id="volume-chart"
                class="chart"
                role="img"
                aria-label="${t(lang, 'dash_ov_chart_alt')}"
              ></div>
              <figcaption class="muted">${t(lang, 'dash_ov_chart_caption')}</figcaption>
            </figure>
            <details class="table-details">
              <summary>${t(lang, 'dash_ov_show_table')}</summary>
              ${dataTable({
                caption: t(lang, 'dash_ov_table'),
                id: 'volume-table',
                columns: [
                  { label: t(lang, 'dash_col_day') },
                  { label: t(lang, 'dash_fig_gross'), numeric: true },
                  { label: t(lang, 'dash_fig_count'), numeric: true },
                  { label: t(lang, 'dash_col_prev_day') },
                  { label: t(lang, 'dash_col_prev_gross'), numeric: true },
                ],
                rows: o.days
                  .map((d, i) => {
                    const before = o.previousDays[i]
                    return [
                      day(d.day),
                      formatMoney(d.grossMinor, lang),
                      formatNumber(d.capturedCount, lang),
                      before ? day(before.day) : '—',
                      before ? formatMoney(before.grossMinor, lang) : '—',
                    ]
                  })
                  .reverse(),
                empty: '',
              })}
            </details>`,
        })}`
      return renderPage(ctx, {
        heading: t(lang, 'dash_nav_overview'),
        section: 'overview',
        content,
        chart: true,
        ...(asked === undefined ? { status: 400 } : {}),
        data: {
          chart: {
            locale: localeOf(lang),
            label: t(lang, 'dash_fig_gross'),
            previousLabel: t(lang, 'dash_ov_series_prev'),
            days: o.days.map((d) => d.day),
            previousDays: o.previousDays.map((d) => d.day),
            volumeMinor: o.days.map((d) => d.grossMinor),
            previousMinor: o.previousDays.map((d) => d.grossMinor),
          },
        },
      })
    })
  }
}
