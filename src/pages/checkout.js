/* global document, fetch, location, setTimeout */
// Kuruş hosted pages: the buyer-side behaviour. Plain browser JavaScript served from our own
// origin (no build step, no framework, no third-party code). Card data goes only to our own
// /v1/public/sessions API, as JSON over fetch; nothing here stores or logs it.

const page = document.body.dataset.page
const data = readData()

function readData() {
  const el = document.getElementById('page-data')
  if (!el) return {}
  try {
    return JSON.parse(el.textContent || '{}')
  } catch {
    return {}
  }
}

function msg(key, vars) {
  let text = (data.messages && data.messages[key]) || ''
  for (const [name, value] of Object.entries(vars || {})) {
    text = text.split('{' + name + '}').join(String(value))
  }
  return text
}

/** ₺1.234,56 (tr) or ₺1,234.56 (en), by integer maths on kuruş, as the server does. */
function formatTry(minor) {
  const tr = data.lang !== 'en'
  const lira = String(Math.floor(minor / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, tr ? '.' : ',')
  const kurus = String(minor % 100).padStart(2, '0')
  return '₺' + lira + (tr ? ',' : '.') + kurus
}

const SVG_NS = 'http://www.w3.org/2000/svg'

function icon(pathD, viewBox) {
  const svg = document.createElementNS(SVG_NS, 'svg')
  svg.setAttribute('viewBox', viewBox || '0 0 24 24')
  svg.setAttribute('class', 'icon')
  svg.setAttribute('aria-hidden', 'true')
  svg.setAttribute('focusable', 'false')
  const path = document.createElementNS(SVG_NS, 'path')
  path.setAttribute('d', pathD)
  path.setAttribute('fill', 'none')
  path.setAttribute('stroke', 'currentColor')
  path.setAttribute('stroke-width', '2.5')
  path.setAttribute('stroke-linecap', 'round')
  path.setAttribute('stroke-linejoin', 'round')
  svg.append(path)
  return svg
}

function el(tag, className, text) {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

// Card rules ----------------------------------------------------------------

function digitsOf(value) {
  return value.replace(/\D/g, '')
}

/** The scheme from its prefix ranges, as the server's vault decides it. */
function brandOf(d) {
  const two = Number(d.slice(0, 2))
  const four = Number(d.slice(0, 4))
  if (d.startsWith('4')) return 'visa'
  if ((d.length >= 2 && two >= 51 && two <= 55) || (d.length >= 4 && four >= 2221 && four <= 2720))
    return 'mastercard'
  if (d.startsWith('9792')) return 'troy'
  if (d.length >= 2 && (two === 34 || two === 37)) return 'amex'
  return 'unknown'
}

const BRAND_NAMES = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  troy: 'Troy',
  amex: 'American Express',
}

function lengthsOf(brand) {
  if (brand === 'amex') return [15]
  if (brand === 'visa') return [13, 16, 19]
  if (brand === 'mastercard' || brand === 'troy') return [16]
  return [12, 13, 14, 15, 16, 17, 18, 19]
}

function luhn(d) {
  let sum = 0
  for (let i = 0; i < d.length; i++) {
    let n = d.charCodeAt(d.length - 1 - i) - 48
    if (i % 2 === 1) {
      n *= 2
      if (n > 9) n -= 9
    }
    sum += n
  }
  return d.length > 0 && sum % 10 === 0
}

function formatNumber(d, brand) {
  if (brand === 'amex') {
    return [d.slice(0, 4), d.slice(4, 10), d.slice(10, 15)].filter(Boolean).join(' ')
  }
  return (d.match(/.{1,4}/g) || []).join(' ')
}

function parseExpiry(value) {
  const d = digitsOf(value)
  if (d.length !== 4 && d.length !== 6) return null
  const month = Number(d.slice(0, 2))
  const year = d.length === 4 ? 2000 + Number(d.slice(2)) : Number(d.slice(2))
  if (month < 1 || month > 12) return null
  return { month, year }
}

function isPast(exp) {
  const now = new Date()
  const y = now.getFullYear()
  const m = now.getMonth() + 1
  return exp.year < y || (exp.year === y && exp.month < m)
}

// The card form (payment and card update) ------------------------------------

function cardForm() {
  const form = document.getElementById('card-form')
  if (!form) return
  const alertBox = document.getElementById('form-alert')
  const button = document.getElementById('submit-button')
  const buttonLabel = button.querySelector('.button-label')
  const idleLabel = buttonLabel.textContent
  const number = document.getElementById('cc-number')
  const exp = document.getElementById('cc-exp')
  const cvc = document.getElementById('cc-csc')
  const name = document.getElementById('cc-name')
  const brandName = document.getElementById('cc-brand-name')
  const validMark = document.querySelector('#cc-brand .valid-mark')
  const cvcHint = document.getElementById('cc-csc-hint')
  const touched = new Set()
  let brand = 'unknown'
  let busy = false

  function setError(input, message) {
    const box = document.getElementById(input.id + '-error')
    input.setAttribute('aria-invalid', message ? 'true' : 'false')
    if (box) box.textContent = message || ''
  }

  function showAlert(title, text) {
    alertBox.replaceChildren()
    const body = el('div')
    if (title) body.append(el('strong', '', title))
    body.append(el('span', '', text))
    alertBox.append(body)
  }

  function clearAlert() {
    alertBox.replaceChildren()
  }

  function updateBrand(next) {
    if (next === brand) return
    brand = next
    // SVG elements have no `hidden` property: toggle the attribute itself.
    for (const mark of document.querySelectorAll('#cc-brand .brand-mark')) {
      mark.toggleAttribute('hidden', mark.dataset.brand !== brand)
    }
    brandName.textContent = BRAND_NAMES[brand] || ''
    const cvcDigits = brand === 'amex' ? 4 : 3
    cvc.maxLength = cvcDigits
    cvc.placeholder = cvcDigits === 4 ? '1234' : '123'
    if (cvcHint) cvcHint.textContent = msg(brand === 'amex' ? 'cvc_hint_amex' : 'cvc_hint')
    if (cvc.value.length > cvcDigits) cvc.value = cvc.value.slice(0, cvcDigits)
  }

  // Each check returns the message to show, or '' when the field is fine.
  function checkNumber() {
    const d = digitsOf(number.value)
    const lengths = lengthsOf(brand)
    if (d.length < lengths[0]) return msg('err_number_incomplete')
    if (!lengths.includes(d.length) || !luhn(d)) return msg('err_number_invalid')
    return ''
  }
  function checkExpiry() {
    const parsed = parseExpiry(exp.value)
    if (!parsed) return msg('err_expiry_format')
    if (isPast(parsed)) return msg('err_expiry_past')
    return ''
  }
  function checkCvc() {
    const n = brand === 'amex' ? 4 : 3
    return new RegExp('^\\d{' + n + '}$').test(cvc.value) ? '' : msg('err_cvc', { n })
  }
  function checkName() {
    return name.value.trim().length > 0 ? '' : msg('err_holder')
  }
  const checks = new Map([
    [number, checkNumber],
    [exp, checkExpiry],
    [cvc, checkCvc],
    [name, checkName],
  ])

  function validate(input) {
    const message = checks.get(input)()
    setError(input, message)
    return message === ''
  }

  function numberComplete() {
    const n = digitsOf(number.value).length
    return brand === 'amex' ? n === 15 : n === 16 || n === 19
  }

  number.addEventListener('input', (event) => {
    const caretDigits = digitsOf(
      number.value.slice(0, number.selectionStart ?? number.value.length),
    ).length
    let d = digitsOf(number.value)
    updateBrand(brandOf(d))
    d = d.slice(0, Math.max(...lengthsOf(brand)))
    const formatted = formatNumber(d, brand)
    number.value = formatted
    let pos = 0
    for (let seen = 0; pos < formatted.length && seen < caretDigits; pos++) {
      if (/\d/.test(formatted[pos])) seen++
    }
    if (document.activeElement === number) number.setSelectionRange(pos, pos)
    const ok = checkNumber() === ''
    validMark.hidden = !ok
    if (touched.has(number) && number.getAttribute('aria-invalid') === 'true') validate(number)
    updateInstallments(d)
    // Typing the last digit of a valid number moves on; autofill and pasting do not.
    if (ok && numberComplete() && event.inputType === 'insertText') exp.focus()
  })

  exp.addEventListener('input', (event) => {
    let d = digitsOf(exp.value)
    if (d.length === 1 && d > '1') d = '0' + d
    d = d.slice(0, 6)
    let out = d
    if (d.length > 2) out = d.slice(0, 2) + ' / ' + d.slice(2)
    else if (d.length === 2 && event.inputType && event.inputType.startsWith('insert'))
      out = d + ' / '
    exp.value = out
    if (touched.has(exp) && exp.getAttribute('aria-invalid') === 'true') validate(exp)
    if (d.length === 4 && checkExpiry() === '' && event.inputType === 'insertText') cvc.focus()
  })

  cvc.addEventListener('input', () => {
    cvc.value = digitsOf(cvc.value).slice(0, brand === 'amex' ? 4 : 3)
    if (touched.has(cvc) && cvc.getAttribute('aria-invalid') === 'true') validate(cvc)
  })

  name.addEventListener('input', () => {
    if (touched.has(name) && name.getAttribute('aria-invalid') === 'true') validate(name)
  })

  for (const input of checks.keys()) {
    input.addEventListener('blur', () => {
      // An untouched empty field is not an error yet; it is once the buyer has left it.
      if (input.value === '' && !touched.has(input)) return
      touched.add(input)
      validate(input)
    })
  }

  // Installments (payment page with installmentEnabled) -------------------

  const optionsBox = document.getElementById('installment-options')
  const installmentsHint = document.getElementById('installments-hint')
  let lastBin = ''

  function selectedInstallments() {
    const checked = form.querySelector('input[name="installmentCount"]:checked')
    return checked ? Number(checked.value) : 1
  }

  function optionLabel(o, checked) {
    const label = el('label', 'option')
    const radio = el('input')
    radio.type = 'radio'
    radio.name = 'installmentCount'
    radio.value = String(o.installmentCount)
    radio.checked = checked
    const main = el('span', 'option-main')
    const single = o.installmentCount === 1
    main.append(
      el(
        'span',
        'option-title',
        single ? msg('single_payment') : msg('n_installments', { n: o.installmentCount }),
      ),
      el(
        'span',
        'option-amount',
        single
          ? formatTry(o.totalAmount)
          : msg('per_installment', {
              n: o.installmentCount,
              amount: formatTry(o.installmentAmount),
            }),
      ),
    )
    if (!single)
      main.append(el('span', 'option-sub', msg('total', { amount: formatTry(o.totalAmount) })))
    label.append(radio, main)
    return label
  }

  function renderOptions(options) {
    const list =
      options && options.length > 0
        ? options
        : [{ installmentCount: 1, installmentAmount: data.amount, totalAmount: data.amount }]
    const current = selectedInstallments()
    const keep = list.some((o) => o.installmentCount === current) ? current : 1
    optionsBox.replaceChildren(...list.map((o) => optionLabel(o, o.installmentCount === keep)))
    installmentsHint.textContent = !options
      ? msg('installments_hint')
      : options.length === 1
        ? msg('installments_none')
        : ''
  }

  function updateInstallments(d) {
    if (!optionsBox || !data.installmentEnabled) return
    const bin = d.length >= 6 ? d.slice(0, 6) : ''
    if (bin === lastBin) return
    lastBin = bin
    if (!bin) {
      renderOptions(null)
      return
    }
    installmentsHint.textContent = msg('installments_loading')
    const url =
      '/v1/public/sessions/' + encodeURIComponent(data.sessionId) + '/installments?bin=' + bin
    fetch(url, {
      headers: { accept: 'application/json' },
      credentials: 'same-origin',
      cache: 'no-store',
    })
      .then((res) => (res.ok ? res.json() : null))
      .then((quote) => {
        if (lastBin === bin) renderOptions(quote ? quote.options : null)
      })
      .catch(() => {
        if (lastBin === bin) renderOptions(null)
      })
  }

  // Submit ---------------------------------------------------------------------

  function setBusy(on) {
    busy = on
    button.disabled = on
    form.setAttribute('aria-busy', on ? 'true' : 'false')
    buttonLabel.textContent = on ? msg('processing') : idleLabel
    const spinner = button.querySelector('.spinner')
    if (on && !spinner) button.prepend(el('span', 'spinner'))
    if (!on && spinner) spinner.remove()
    for (const input of form.querySelectorAll('input')) input.readOnly = on
  }

  function showDone(title, redirectUrl) {
    const panel = form.closest('.panel')
    const done = el('div', 'done')
    done.setAttribute('role', 'status')
    done.tabIndex = -1
    const badge = el('div', 'done-icon')
    badge.append(icon('m5 12.5 4.5 4.5L19 7.5'))
    const link = el('a', 'primary-button', msg('return_now'))
    link.href = redirectUrl
    done.append(
      badge,
      el('h3', '', title),
      el('p', '', msg('redirecting', { merchant: data.merchantName })),
      link,
    )
    form.replaceWith(done)
    alertBox.replaceChildren()
    for (const hint of panel.querySelectorAll('.sandbox-hint')) hint.remove()
    done.focus()
  }

  const FIELD_INPUTS = {
    'card.number': number,
    'card.expMonth': exp,
    'card.expYear': exp,
    'card.cvc': cvc,
    'card.holderName': name,
  }

  function fieldMessage(input, reason) {
    if (input === number) return msg('err_number_invalid')
    if (input === exp)
      return /expired/.test(reason) ? msg('err_expiry_past') : msg('err_expiry_format')
    if (input === cvc) return msg('err_cvc', { n: brand === 'amex' ? 4 : 3 })
    return msg('err_holder')
  }

  function handleFailure(status, body) {
    const code = body && body.code
    if (status === 402) {
      const key = 'decline_' + (body.declineCode || '')
      showAlert(msg('decline_title'), msg(key) || msg('decline_generic'))
      cvc.value = ''
      number.focus()
      number.select()
      return
    }
    if (status === 400 && Array.isArray(body.details)) {
      let first = null
      for (const issue of body.details) {
        const input = FIELD_INPUTS[issue.field]
        if (!input) continue
        setError(input, fieldMessage(input, issue.reason || ''))
        touched.add(input)
        first = first || input
      }
      showAlert('', msg(first ? 'err_fix_fields' : 'err_generic'))
      if (first) first.focus()
      return
    }
    if (status === 409 && code === 'SVC-STATE-3401') {
      showAlert('', msg('err_session_over'))
      setTimeout(() => location.reload(), 1500)
      return
    }
    if (status === 429) return showAlert('', msg('err_too_many'))
    if (status === 403) return showAlert('', msg('err_unavailable'))
    showAlert('', msg('err_generic'))
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (busy) return
    clearAlert()
    let firstInvalid = null
    for (const input of checks.keys()) {
      touched.add(input)
      if (!validate(input) && !firstInvalid) firstInvalid = input
    }
    if (firstInvalid) {
      showAlert('', msg('err_fix_fields'))
      firstInvalid.focus()
      return
    }
    const parsed = parseExpiry(exp.value)
    const card = {
      number: digitsOf(number.value),
      expMonth: parsed.month,
      expYear: parsed.year,
      cvc: cvc.value,
      holderName: name.value.trim(),
    }
    const body = { card }
    if (page === 'pay') {
      body.installmentCount = selectedInstallments()
      const save = document.getElementById('save-card')
      if (save && save.checked) body.saveCard = true
    }
    const path = page === 'pay' ? '/pay' : '/card'
    setBusy(true)
    let res
    let json = {}
    try {
      res = await fetch('/v1/public/sessions/' + encodeURIComponent(data.sessionId) + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        credentials: 'same-origin',
        cache: 'no-store',
      })
      json = await res.json().catch(() => ({}))
    } catch {
      setBusy(false)
      showAlert('', msg('err_network'))
      return
    }
    if (res.ok && json.challengeUrl) {
      location.assign(json.challengeUrl)
      return
    }
    if (res.ok && json.redirectUrl) {
      showDone(msg(page === 'pay' ? 'success_title' : 'card_updated_title'), json.redirectUrl)
      setTimeout(() => location.assign(json.redirectUrl), 900)
      return
    }
    setBusy(false)
    handleFailure(res.status, json)
  })
}

// QR: wait for the buyer's bank ----------------------------------------------

function qrPage() {
  const status = document.getElementById('qr-status')
  const text = document.getElementById('qr-status-text')
  const url = '/v1/public/sessions/' + encodeURIComponent(data.sessionId)
  async function poll() {
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' })
      if (res.ok) {
        const session = await res.json()
        if (session.status === 'completed' && session.redirectUrl) {
          status.classList.add('is-paid')
          status.querySelector('.spinner')?.remove()
          text.textContent = msg('qr_paid')
          setTimeout(() => location.assign(session.redirectUrl), 900)
          return
        }
        if (session.status !== 'active') {
          location.reload()
          return
        }
      }
    } catch {
      // A lost poll is retried on the next tick.
    }
    setTimeout(poll, 2000)
  }
  setTimeout(poll, 1500)
}

// ACS: one submit only -----------------------------------------------------

function acsPage() {
  const form = document.getElementById('otp-form')
  const otp = document.getElementById('otp')
  const button = document.getElementById('submit-button')
  otp.addEventListener('input', () => {
    otp.value = digitsOf(otp.value).slice(0, 6)
  })
  form.addEventListener('submit', (event) => {
    if (button.disabled) {
      event.preventDefault()
      return
    }
    // Disabled after this tick, so the form still submits once.
    setTimeout(() => {
      button.disabled = true
      button.querySelector('.button-label').textContent = msg('processing')
      button.prepend(el('span', 'spinner'))
    }, 0)
  })
}

// Outcome pages send the buyer on to the merchant by themselves -----------------

function noticePage() {
  const link = document.querySelector('[data-auto-redirect]')
  if (!link) return
  const delay = Number(link.dataset.autoRedirect) || 0
  setTimeout(() => location.replace(link.href), delay)
}

// The bank's 3-D Secure form goes to its gate at once; the button stays for no-script ------

function bankGatePage() {
  const form = document.getElementById('bank-gate-form')
  if (form) form.submit()
}

if (page === 'pay' || page === 'card') cardForm()
else if (page === 'qr') qrPage()
else if (page === 'acs') acsPage()
else if (page === 'notice') noticePage()
else if (page === 'bank-gate') bankGatePage()
