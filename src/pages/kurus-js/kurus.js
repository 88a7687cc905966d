/* global document, window, URL, URLSearchParams */
// Kuruş.js v1: card fields on the merchant's own page. The fields live in an iframe served
// from the checkout origin (this script's origin), so the card number never reaches the
// merchant's page or server: the page gets a single-use tok_… to charge from its server.
// 3-D Secure opens in a modal over the page. docs/kurus-js.md.
;(function () {
  'use strict'
  var base = new URL(document.currentScript.src).origin
  var TEXT = {
    tr: { fields: 'Kart bilgileri', challenge: '3-D Secure doğrulaması', close: 'Kapat' },
    en: { fields: 'Card details', challenge: '3-D Secure verification', close: 'Close' },
  }

  function Kurus(publicKey, options) {
    options = options || {}
    var locale = options.locale === 'en' ? 'en' : 'tr'
    var text = TEXT[locale]

    function cardFields(target, fieldOptions) {
      fieldOptions = fieldOptions || {}
      var host = typeof target === 'string' ? document.querySelector(target) : target
      if (!host) throw new Error('Kuruş.js: no element ' + String(target))
      var iframe = document.createElement('iframe')
      var query = new URLSearchParams({
        key: publicKey,
        lang: locale,
        style: JSON.stringify(fieldOptions.style || options.style || {}),
      })
      iframe.src = base + '/js/v1/fields?' + query.toString()
      iframe.title = text.fields
      iframe.setAttribute('allowtransparency', 'true')
      iframe.style.border = '0'
      iframe.style.width = '100%'
      iframe.style.height = '230px'
      host.appendChild(iframe)
      var waiting = new Map()
      var next = 0
      window.addEventListener('message', function (event) {
        if (event.origin !== base || event.source !== iframe.contentWindow) return
        var m = event.data || {}
        var resolve = m.type === 'kurus:token' ? waiting.get(m.id) : undefined
        if (resolve) {
          waiting.delete(m.id)
          resolve(m)
        }
        if (m.type === 'kurus:height' && typeof m.height === 'number') {
          iframe.style.height = Math.ceil(m.height) + 'px'
        }
      })
      return {
        /** Resolves {token, card: {brand, last4, expMonth, expYear}} or {error: {code, message}}. */
        createToken: function () {
          return new Promise(function (resolve) {
            var id = ++next
            waiting.set(id, function (m) {
              resolve(m.error ? { error: m.error } : { token: m.token, card: m.card })
            })
            iframe.contentWindow.postMessage({ type: 'kurus:tokenize', id: id }, base)
          })
        },
      }
    }

    /**
     * Opens the bank's 3-D Secure page (a payment's challengeUrl) in a modal. The bank returns
     * the buyer to the session's returnUrl, on this page's origin: the modal reads its
     * paymentId, correlationId and pares there and resolves with them, for the merchant's
     * server to complete the payment (POST /v1/payments/{id}/3ds-callback).
     */
    function confirm3ds(challengeUrl) {
      return new Promise(function (resolve, reject) {
        var overlay = document.createElement('div')
        overlay.setAttribute('role', 'dialog')
        overlay.setAttribute('aria-modal', 'true')
        overlay.setAttribute('aria-label', text.challenge)
        overlay.className = 'kurus-3ds-modal'
        var s = overlay.style
        s.position = 'fixed'
        s.inset = '0'
        s.background = 'rgba(15, 23, 42, 0.55)'
        s.display = 'flex'
        s.alignItems = 'center'
        s.justifyContent = 'center'
        s.zIndex = '2147483647'
        var box = document.createElement('div')
        box.style.background = '#fff'
        box.style.borderRadius = '12px'
        box.style.width = 'min(440px, 94vw)'
        box.style.height = 'min(600px, 90vh)'
        box.style.overflow = 'hidden'
        box.style.position = 'relative'
        var close = document.createElement('button')
        close.type = 'button'
        close.textContent = '×'
        close.setAttribute('aria-label', text.close)
        close.style.position = 'absolute'
        close.style.top = '4px'
        close.style.right = '8px'
        close.style.border = '0'
        close.style.background = 'transparent'
        close.style.fontSize = '24px'
        close.style.cursor = 'pointer'
        var frame = document.createElement('iframe')
        // The bank's page is served by the checkout, this script's origin.
        var given = new URL(challengeUrl, base)
        var url = new URL(given.pathname + given.search, base)
        url.searchParams.set('lang', locale)
        frame.src = url.toString()
        frame.title = text.challenge
        frame.style.border = '0'
        frame.style.width = '100%'
        frame.style.height = '100%'
        box.appendChild(frame)
        box.appendChild(close)
        overlay.appendChild(box)
        document.body.appendChild(overlay)
        function done() {
          overlay.remove()
        }
        close.addEventListener('click', function () {
          done()
          reject(new Error('3-D Secure was closed'))
        })
        frame.addEventListener('load', function () {
          var params
          try {
            // Readable only once the bank has sent the buyer back to this page's origin.
            params = new URLSearchParams(frame.contentWindow.location.search)
          } catch {
            return
          }
          if (!params.get('pares')) return
          done()
          resolve({
            paymentId: params.get('paymentId'),
            correlationId: params.get('correlationId'),
            pares: params.get('pares'),
          })
        })
      })
    }

    return { cardFields: cardFields, confirm3ds: confirm3ds }
  }

  window.Kurus = Kurus
})()
