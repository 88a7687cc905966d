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

  // The overview's 30-day volume chart (uPlot). The same numbers are in the table below it,
  // which is what screen readers read; the chart itself is one labelled image.
  function drawVolumeChart(chart) {
    var host = document.getElementById('volume-chart')
    if (!chart || !host || typeof window.uPlot !== 'function') return
    var uPlot = window.uPlot
    var money = new Intl.NumberFormat(chart.locale, {
      style: 'currency',
      currency: 'TRY',
      currencyDisplay: 'narrowSymbol',
      maximumFractionDigits: 0,
    })
    // Noon UTC of each Turkish day: the point sits in the middle of its day.
    var xs = chart.days.map(function (d) {
      return Date.parse(d + 'T12:00:00Z') / 1000
    })
    // Display only: the chart scales lira; the table shows the exact kuruş amounts.
    var ys = chart.volumeMinor.map(function (v) {
      return v / 100
    })
    function size() {
      return { width: Math.max(260, host.clientWidth), height: 240 }
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
        scales: {
          y: {
            range: function (u, min, max) {
              return [0, Math.max(1, max * 1.1)]
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
            points: { show: true, size: 5 },
          },
        ],
        axes: [
          { stroke: '#334155', grid: { stroke: '#e2e8f0' } },
          {
            stroke: '#334155',
            grid: { stroke: '#e2e8f0' },
            size: 84,
            values: function (u, vals) {
              return vals.map(function (v) {
                return money.format(v)
              })
            },
          },
        ],
      },
      [xs, ys],
      host,
    )
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
