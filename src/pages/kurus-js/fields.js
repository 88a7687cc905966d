/* global document, fetch, location, window, URLSearchParams */
// Kuruş.js card fields (inside the iframe, on the checkout origin): the card goes from these
// inputs to POST /v1/public/tokens on this origin; the parent page gets only the token.
;(function () {
  'use strict'
  var params = new URLSearchParams(location.search)
  var key = params.get('key') || ''
  var form = document.getElementById('kurus-fields')
  var error = document.getElementById('kurus-error')
  var STYLE_KEYS = {
    color: 'color',
    fontFamily: 'fontFamily',
    fontSize: 'fontSize',
    background: 'background',
  }
  var INPUT_KEYS = { borderColor: 'borderColor', borderRadius: 'borderRadius' }
  try {
    var style = JSON.parse(params.get('style') || '{}')
    Object.keys(STYLE_KEYS).forEach(function (k) {
      if (typeof style[k] === 'string') document.body.style[STYLE_KEYS[k]] = style[k]
    })
    Object.keys(INPUT_KEYS).forEach(function (k) {
      if (typeof style[k] !== 'string') return
      document.querySelectorAll('input').forEach(function (input) {
        input.style[INPUT_KEYS[k]] = style[k]
      })
    })
    if (typeof style.accentColor === 'string') {
      document.documentElement.style.setProperty('--kurus-accent', style.accentColor)
    }
  } catch {
    // a malformed style is ignored: the default look
  }
  function value(name) {
    return form.elements[name].value.trim()
  }
  function height() {
    window.parent.postMessage({ type: 'kurus:height', height: document.body.scrollHeight }, '*')
  }
  form.elements['number'].addEventListener('input', function (e) {
    var digits = e.target.value.replace(/\D/g, '').slice(0, 19)
    e.target.value = digits.replace(/(.{4})/g, '$1 ').trim()
  })
  form.elements['expiry'].addEventListener('input', function (e) {
    var d = e.target.value.replace(/\D/g, '').slice(0, 4)
    e.target.value = d.length > 2 ? d.slice(0, 2) + '/' + d.slice(2) : d
  })
  window.addEventListener('message', function (event) {
    // Only the page that embeds these fields asks for a token; the answer goes to it only.
    if (event.source !== window.parent) return
    var m = event.data || {}
    if (m.type !== 'kurus:tokenize') return
    var expiry = value('expiry').split('/')
    var body = {
      publicKey: key,
      origin: event.origin,
      card: {
        number: value('number').replace(/\s/g, ''),
        expMonth: Number(expiry[0]),
        expYear: 2000 + Number(expiry[1]),
        cvc: value('cvc'),
        holderName: value('name'),
      },
    }
    error.textContent = ''
    fetch('/v1/public/tokens', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
      .then(function (res) {
        return res.json().then(function (json) {
          return { ok: res.ok, json: json }
        })
      })
      .then(function (r) {
        if (r.ok) {
          event.source.postMessage(
            { type: 'kurus:token', id: m.id, token: r.json.token, card: r.json.card },
            event.origin,
          )
        } else {
          error.textContent = r.json.message || 'error'
          height()
          event.source.postMessage(
            {
              type: 'kurus:token',
              id: m.id,
              error: { code: r.json.code, message: r.json.message },
            },
            event.origin,
          )
        }
      })
      .catch(function () {
        event.source.postMessage(
          { type: 'kurus:token', id: m.id, error: { code: 'network', message: 'network error' } },
          event.origin,
        )
      })
  })
  height()
})()
