/* global document, fetch, location */
// Kuruş subscription page: the buyer-side behaviour of /subscription/{publicHash}. Plain
// browser JavaScript from our own origin (no build step, no third-party code). It calls only
// our public API, /v1/public/subscriptions/{hash}/…, as JSON over fetch.

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

function msg(key) {
  return (data.messages && data.messages[key]) || ''
}

const alertBox = document.getElementById('portal-alert')
const statusLine = document.getElementById('portal-status')

function showError(text) {
  alertBox.textContent = text
}

function clearError() {
  alertBox.textContent = ''
}

function errorText(status, body) {
  if (status === 0) return msg('err_network')
  if (status === 429) return msg('err_rate')
  if (status === 409 && body && body.code === 'SVC-STATE-3401')
    return body.message || msg('err_busy')
  return msg('err_generic')
}

async function post(path, body) {
  let response
  try {
    response = await fetch(
      '/v1/public/subscriptions/' + encodeURIComponent(data.publicHash) + path,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
      },
    )
  } catch {
    return { status: 0, body: null }
  }
  let json
  try {
    json = await response.json()
  } catch {
    json = null
  }
  return { status: response.status, body: json }
}

/** Disables a button while its request runs; gives back a function that restores it. */
function busy(button) {
  const label = button.querySelector('.button-label')
  const before = label ? label.textContent : ''
  button.disabled = true
  button.setAttribute('aria-busy', 'true')
  if (label) label.textContent = msg('processing')
  return () => {
    button.disabled = false
    button.removeAttribute('aria-busy')
    if (label) label.textContent = before
  }
}

function setText(id, text) {
  const el = document.getElementById(id)
  if (el) el.textContent = text
}

const cancelButton = document.getElementById('cancel-button')
if (cancelButton) {
  cancelButton.addEventListener('click', async () => {
    clearError()
    const restore = busy(cancelButton)
    const { status, body } = await post('/cancel', { atPeriodEnd: true })
    if (status !== 200 || !body) {
      restore()
      showError(errorText(status, body))
      return
    }
    cancelButton.remove()
    if (body.status === 'cancelled') {
      setText('status-value', msg('status_cancelled'))
      statusLine.textContent = msg('cancelled_now')
      const actions = document.querySelector('.portal-actions')
      if (actions) actions.remove()
    } else {
      setText('status-value', msg('status_ending'))
      setText('next-charge-label', msg('ends_on'))
      statusLine.textContent = msg('ending_note')
    }
  })
}

const updateButton = document.getElementById('update-card-button')
if (updateButton) {
  updateButton.addEventListener('click', async () => {
    clearError()
    const restore = busy(updateButton)
    const { status, body } = await post('/update-card-session', {})
    if (status !== 200 || !body || typeof body.checkoutUrl !== 'string') {
      restore()
      showError(errorText(status, body))
      return
    }
    location.assign(body.checkoutUrl)
  })
}
