/* global document, window, ResizeObserver */
// Kuruş app pages: small enhancements on top of pages that work without JavaScript.
// Loaded from our own origin with `defer` (the CSP allows no inline script). The page's data
// comes from a JSON block (<script type="application/json" id="page-data">), never from
// script text.
;(function () {
  'use strict'

  function pageData() {
    var el = document.getElementById('page-data')
    if (!el) return {}
    try {
      return JSON.parse(el.textContent || '{}')
    } catch {
      return {}
    }
  }

  // The overview's daily volume chart (uPlot): the period and, dashed, the period before it
  // (day i of one beside day i of the other). Turkish (or English) dates on the axis, and a
  // tooltip with the day's figures where the pointer is. The same numbers are in the table
  // below it, which is what screen readers read; the chart itself is one labelled image.
  function drawVolumeChart(chart) {
    var host = document.getElementById('volume-chart')
    if (!chart || !host || typeof window.uPlot !== 'function') return
    var uPlot = window.uPlot
    var axisMoney = new Intl.NumberFormat(chart.locale, {
      style: 'currency',
      currency: 'TRY',
      currencyDisplay: 'narrowSymbol',
      maximumFractionDigits: 0,
    })
    var money = new Intl.NumberFormat(chart.locale, {
      style: 'currency',
      currency: 'TRY',
      currencyDisplay: 'narrowSymbol',
    })
    var shortDay = new Intl.DateTimeFormat(chart.locale, {
      day: 'numeric',
      month: 'short',
      timeZone: 'Europe/Istanbul',
    })
    var longDay = new Intl.DateTimeFormat(chart.locale, {
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      weekday: 'short',
      timeZone: 'Europe/Istanbul',
    })
    function noon(d) {
      return new Date(d + 'T12:00:00Z')
    }
    // Noon UTC of each Turkish day: the point sits in the middle of its day.
    var xs = chart.days.map(function (d) {
      return noon(d).getTime() / 1000
    })
    // Display only: the chart scales lira; the table and tooltip show exact amounts.
    function lira(list) {
      return list.map(function (v) {
        return v / 100
      })
    }
    var tip = document.createElement('div')
    tip.className = 'chart-tip'
    tip.hidden = true
    host.appendChild(tip)
    function showTip(u) {
      var i = u.cursor.idx
      if (i === null || i === undefined || u.cursor.left < 0) {
        tip.hidden = true
        return
      }
      tip.textContent = ''
      var lines = [
        [longDay.format(noon(chart.days[i])), 'chart-tip-day'],
        [chart.label + ': ' + money.format(chart.volumeMinor[i] / 100), ''],
        [
          chart.previousLabel +
            ' (' +
            shortDay.format(noon(chart.previousDays[i])) +
            '): ' +
            money.format(chart.previousMinor[i] / 100),
          'chart-tip-prev',
        ],
      ]
      lines.forEach(function (line) {
        var p = document.createElement('p')
        p.textContent = line[0]
        if (line[1]) p.className = line[1]
        tip.appendChild(p)
      })
      tip.hidden = false
      // CSSOM, not a style attribute: allowed under the CSP.
      var left = u.valToPos(xs[i], 'x') + u.over.offsetLeft
      var maxLeft = host.clientWidth - tip.offsetWidth - 4
      tip.style.left = Math.max(0, Math.min(left + 12, maxLeft)) + 'px'
      tip.style.top = '8px'
    }
    function size() {
      return { width: Math.max(260, host.clientWidth), height: 260 }
    }
    var s = size()
    var plot = new uPlot(
      {
        width: s.width,
        height: s.height,
        tzDate: function (ts) {
          return uPlot.tzDate(new Date(ts * 1000), 'Europe/Istanbul')
        },
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        hooks: { setCursor: [showTip] },
        scales: {
          x: { time: true },
          y: {
            range: function (u, min, max) {
              // An empty period still gets a readable scale (₺0 … ₺100), not ₺0, ₺0, ₺1.
              return [0, Math.max(100, max * 1.1)]
            },
          },
        },
        series: [
          {},
          {
            label: chart.label,
            stroke: '#4338ca',
            fill: 'rgba(67, 56, 202, 0.12)',
            width: 2,
            points: { show: xs.length <= 31, size: 5 },
          },
          {
            label: chart.previousLabel,
            stroke: '#94a3b8',
            dash: [6, 4],
            width: 1.5,
            points: { show: false },
          },
        ],
        axes: [
          {
            stroke: '#334155',
            grid: { stroke: '#e2e8f0' },
            // Whole days (1, 2, 7, 14, 30 of them) between ticks: never two ticks in one day.
            incrs: [86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400],
            values: function (u, vals) {
              return vals.map(function (v) {
                return shortDay.format(new Date(v * 1000))
              })
            },
          },
          {
            stroke: '#334155',
            grid: { stroke: '#e2e8f0' },
            size: 84,
            values: function (u, vals) {
              return vals.map(function (v) {
                return axisMoney.format(v)
              })
            },
          },
        ],
      },
      [xs, lira(chart.volumeMinor), lira(chart.previousMinor)],
      host,
    )
    host.addEventListener('mouseleave', function () {
      tip.hidden = true
    })
    if (typeof ResizeObserver === 'function') {
      new ResizeObserver(function () {
        plot.setSize(size())
      }).observe(host)
    }
  }

  // The menu button (narrow screens): opens and closes the menu below the header.
  function menuButton() {
    var button = document.querySelector('.menu-button')
    var menu = document.getElementById('app-menu')
    if (!button || !menu) return
    button.addEventListener('click', function () {
      var open = button.getAttribute('aria-expanded') !== 'true'
      button.setAttribute('aria-expanded', open ? 'true' : 'false')
      menu.classList.toggle('open', open)
    })
  }

  function start() {
    menuButton()
    var data = pageData()
    drawVolumeChart(data.chart)
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start)
  else start()
})()
