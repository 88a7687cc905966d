import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import { dataTable, section } from '../../platform/web/components.ts'
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
import { allow, renderPage } from './dashboard.web.ts'
import { merchantOverview, type PeriodFigures } from './overview.service.ts'

// /dashboard: today's and the last 30 days' figures, refunds, open chargebacks and reviews,
// balances, and a 30-day volume chart (uPlot, from our origin) with the same numbers in a table.

function figure(label: string, value: string, sub?: string, id?: string): SafeHtml {
  return markup`<li class="figure" ${id ? markup`id="${id}"` : ''}>
    <p class="figure-label">${label}</p>
    <p class="figure-value">${value}</p>
    ${sub ? markup`<p class="figure-sub">${sub}</p>` : ''}
  </li>`
}

function periodFigures(lang: Lang, p: PeriodFigures, prefix: string, title: string): SafeHtml {
  const rate = p.successRate === null ? '—' : formatPercent(p.successRate, lang)
  return section({
    title,
    id: `${prefix}-heading`,
    body: markup`<ul class="figures">
      ${figure(t(lang, 'dash_fig_gross'), formatMoney(p.grossMinor, lang), undefined, `${prefix}-gross`)}
      ${figure(t(lang, 'dash_fig_count'), formatNumber(p.capturedCount, lang), undefined, `${prefix}-count`)}
      ${figure(t(lang, 'dash_fig_success'), rate, undefined, `${prefix}-success`)}
    </ul>`,
  })
}

export function overviewPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { lang } = ctx
      const o = await merchantOverview(deps, ctx.member.merchantId)
      const dayLabel = (day: string) => formatDate(istanbulDayStart(day) ?? new Date(0), lang)
      const content = markup`
        ${periodFigures(lang, o.today, 'today', t(lang, 'dash_ov_today'))}
        ${periodFigures(lang, o.last30, 'last30', t(lang, 'dash_ov_last30'))}
        ${section({
          title: t(lang, 'dash_ov_money'),
          id: 'money-heading',
          body: markup`<ul class="figures">
            ${figure(
              t(lang, 'dash_fig_refunds'),
              formatMoney(o.refunds30.amountMinor, lang),
              t(lang, 'dash_fig_refunds_sub', { n: formatNumber(o.refunds30.count, lang) }),
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
          title: t(lang, 'dash_ov_chart'),
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
                ],
                rows: [...o.days]
                  .reverse()
                  .map((d) => [
                    dayLabel(d.day),
                    formatMoney(d.grossMinor, lang),
                    formatNumber(d.capturedCount, lang),
                  ]),
                empty: '',
              })}
            </details>`,
        })}`
      return renderPage(ctx, {
        heading: t(lang, 'dash_nav_overview'),
        section: 'overview',
        content,
        chart: true,
        data: {
          chart: {
            locale: localeOf(lang),
            label: t(lang, 'dash_fig_gross'),
            days: o.days.map((d) => d.day),
            volumeMinor: o.days.map((d) => d.grossMinor),
          },
        },
      })
    })
  }
}
