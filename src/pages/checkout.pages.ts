import { markup, type SafeHtml } from '../platform/web/html.ts'
import { clientMessages, t, type Lang, type MessageKey } from '../platform/web/i18n.ts'
import { formatMoney } from '../platform/web/format.ts'
import { acceptedBrands, brandMarks, icons, layout } from './layout.ts'

// The buyer's pages of a checkout session: card payment, card update and QR. The forms are
// driven by /assets/checkout.js, which posts JSON to our own /v1/public/sessions API.

export interface SessionPageBase {
  lang: Lang
  langHrefs: Record<Lang, string>
  sandbox: boolean
  sessionId: string
  merchantName: string
}

export interface PayPageInput extends SessionPageBase {
  amount: number
  description: string | null
  installmentEnabled: boolean
  saveCardAvailable: boolean
}

export interface QrPageInput extends SessionPageBase {
  amount: number
  description: string | null
  qrImageUrl: string
  qrPayload: string
}

const CARD_FORM_MESSAGES: readonly MessageKey[] = [
  'err_number_incomplete',
  'err_number_invalid',
  'err_expiry_format',
  'err_expiry_past',
  'err_cvc',
  'err_holder',
  'err_fix_fields',
  'decline_card_declined',
  'decline_insufficient_funds',
  'decline_authentication_failed',
  'decline_generic',
  'decline_title',
  'err_too_many',
  'err_network',
  'err_session_over',
  'err_unavailable',
  'err_generic',
  'processing',
  'single_payment',
  'n_installments',
  'per_installment',
  'total',
  'installments_hint',
  'installments_loading',
  'installments_none',
  'cvc_hint',
  'cvc_hint_amex',
  'success_title',
  'card_updated_title',
  'redirecting',
  'return_now',
  'qr_paid',
]

function initial(name: string): string {
  const first = name.trim().codePointAt(0)
  return first === undefined ? '•' : String.fromCodePoint(first).toLocaleUpperCase('tr')
}

function summary(
  lang: Lang,
  p: {
    merchantName: string
    amount: number | null
    description: string | null
    label: string
    kind?: 'pay' | 'card' | 'qr'
  },
): SafeHtml {
  const trust =
    p.kind === 'qr'
      ? [t(lang, 'trust_qr_instant'), t(lang, 'trust_qr_bank')]
      : p.kind === 'card'
        ? [t(lang, 'trust_vault'), t(lang, 'trust_encrypted')]
        : [t(lang, 'trust_3ds'), t(lang, 'trust_encrypted')]
  return markup`<section class="summary" aria-labelledby="summary-heading">
    <div class="merchant">
      <span class="merchant-mark" aria-hidden="true">${initial(p.merchantName)}</span>
      <div class="merchant-text">
        <p class="eyebrow">${t(lang, 'paying_to')}</p>
        <p class="merchant-name">${p.merchantName}</p>
      </div>
    </div>
    <h1
      id="summary-heading"
      class="amount-block${p.amount === null ? ' amount-block-title' : ''}"
    >
      <span class="amount-label">${p.label}</span
      >${p.amount === null ? '' : markup`<span class="amount">${formatMoney(p.amount, lang)}</span>`}
    </h1>
    ${p.description ? markup`<p class="description">${p.description}</p>` : ''}
    <ul class="trust">
      <li>${icons.shield}<span>${trust[0]}</span></li>
      <li>${icons.lock}<span>${trust[1]}</span></li>
    </ul>
    ${
      p.kind === 'qr'
        ? ''
        : markup`<div class="brands">
            <p class="brands-label">${t(lang, 'accepted_cards')}</p>
            <div class="brands-row">${acceptedBrands}</div>
          </div>`
    }
  </section>`
}

function field(p: {
  id: string
  label: string
  input: SafeHtml
  hint?: string
  hintId?: string
  extra?: SafeHtml
  className?: string
}): SafeHtml {
  return markup`<div class="field${p.className ? ` ${p.className}` : ''}">
    <label for="${p.id}">${p.label}</label>
    <div class="input-wrap">${p.input}${p.extra ?? ''}</div>
    <p class="field-error" id="${p.id}-error"></p>
    ${p.hint ? markup`<p class="hint" id="${p.hintId ?? `${p.id}-hint`}">${p.hint}</p>` : ''}
  </div>`
}

/** The card fields shared by the payment and card-update forms, with autofill tokens. */
function cardFields(lang: Lang): SafeHtml {
  const number = field({
    id: 'cc-number',
    label: t(lang, 'card_number'),
    input: markup`<input
      id="cc-number"
      name="cardnumber"
      type="text"
      autocomplete="cc-number"
      inputmode="numeric"
      autocorrect="off"
      autocapitalize="off"
      spellcheck="false"
      maxlength="23"
      placeholder="1234 5678 9012 3456"
      aria-describedby="cc-number-error cc-brand-name"
      aria-invalid="false"
      required
    />`,
    extra: markup`<span class="brand-badge" id="cc-brand"
      >${brandMarks}<span class="sr-only" id="cc-brand-name" aria-live="polite"></span
      ><span class="valid-mark" hidden>${icons.check}</span></span
    >`,
    className: 'field-number',
  })
  const expiry = field({
    id: 'cc-exp',
    label: t(lang, 'expiry'),
    input: markup`<input
      id="cc-exp"
      name="cc-exp"
      type="text"
      autocomplete="cc-exp"
      inputmode="numeric"
      autocorrect="off"
      spellcheck="false"
      maxlength="9"
      placeholder="${t(lang, 'expiry_hint')}"
      aria-describedby="cc-exp-error"
      aria-invalid="false"
      required
    />`,
  })
  const cvc = field({
    id: 'cc-csc',
    label: t(lang, 'cvc'),
    input: markup`<input
      id="cc-csc"
      name="cvc"
      type="text"
      autocomplete="cc-csc"
      inputmode="numeric"
      autocorrect="off"
      spellcheck="false"
      maxlength="4"
      placeholder="123"
      aria-describedby="cc-csc-hint cc-csc-error"
      aria-invalid="false"
      required
    />`,
    hint: t(lang, 'cvc_hint'),
  })
  const holder = field({
    id: 'cc-name',
    label: t(lang, 'holder'),
    input: markup`<input
      id="cc-name"
      name="ccname"
      type="text"
      autocomplete="cc-name"
      autocapitalize="characters"
      spellcheck="false"
      maxlength="100"
      aria-describedby="cc-name-error"
      aria-invalid="false"
      required
    />`,
  })
  return markup`${number}
    <div class="field-row">${expiry}${cvc}</div>
    ${holder}`
}

function noscript(lang: Lang): SafeHtml {
  return markup`<noscript
    ><p class="alert alert-static">${icons.alert}<span>${t(lang, 'noscript')}</span></p></noscript
  >`
}

function sandboxCards(p: SessionPageBase): SafeHtml {
  return p.sandbox ? markup`<p class="sandbox-hint">${t(p.lang, 'sandbox_cards')}</p>` : markup``
}

export function payPage(p: PayPageInput): string {
  const { lang } = p
  const amount = formatMoney(p.amount, lang)
  const installments = p.installmentEnabled
    ? markup`<fieldset class="installments" id="installments">
        <legend>${t(lang, 'installments')}</legend>
        <p class="hint" id="installments-hint" aria-live="polite">
          ${t(lang, 'installments_hint')}
        </p>
        <div class="options" id="installment-options">
          <label class="option">
            <input type="radio" name="installmentCount" value="1" checked />
            <span class="option-main">
              <span class="option-title">${t(lang, 'single_payment')}</span>
              <span class="option-amount">${amount}</span>
            </span>
          </label>
        </div>
      </fieldset>`
    : ''
  const saveCard = p.saveCardAvailable
    ? markup`<div class="check">
        <input
          type="checkbox"
          id="save-card"
          name="saveCard"
          value="1"
          aria-describedby="save-card-hint"
        />
        <label for="save-card">${t(lang, 'save_card')}</label>
        <p class="hint" id="save-card-hint">
          ${t(lang, 'save_card_hint', { merchant: p.merchantName })}
        </p>
      </div>`
    : ''
  const content = markup`<div class="checkout">
    ${summary(lang, { merchantName: p.merchantName, amount: p.amount, description: p.description, label: t(lang, 'amount_due') })}
    <section class="panel" aria-labelledby="form-heading">
      <h2 id="form-heading" class="panel-title">
        ${icons.card}<span>${t(lang, 'pay_with_card')}</span>
      </h2>
      ${noscript(lang)}
      <div class="alert" id="form-alert" role="alert"></div>
      <form id="card-form" class="card-form" novalidate>
        ${cardFields(lang)} ${installments} ${saveCard}
        <button type="submit" class="primary-button" id="submit-button">
          ${icons.lock}<span class="button-label">${t(lang, 'pay_button', { amount })}</span>
        </button>
      </form>
      ${sandboxCards(p)}
    </section>
  </div>`
  return layout({
    lang,
    title: t(lang, 'html_title_pay', { merchant: p.merchantName }),
    page: 'pay',
    langHrefs: p.langHrefs,
    sandbox: p.sandbox,
    content,
    data: {
      sessionId: p.sessionId,
      lang,
      amount: p.amount,
      merchantName: p.merchantName,
      installmentEnabled: p.installmentEnabled,
      messages: clientMessages(lang, CARD_FORM_MESSAGES),
    },
  })
}

export function cardUpdatePage(p: SessionPageBase): string {
  const { lang } = p
  const content = markup`<div class="checkout">
    ${summary(lang, { merchantName: p.merchantName, amount: null, description: t(lang, 'card_intro', { merchant: p.merchantName }), label: t(lang, 'card_title'), kind: 'card' })}
    <section class="panel" aria-labelledby="form-heading">
      <h2 id="form-heading" class="panel-title">
        ${icons.card}<span>${t(lang, 'card_details')}</span>
      </h2>
      ${noscript(lang)}
      <div class="alert" id="form-alert" role="alert"></div>
      <form id="card-form" class="card-form" novalidate>
        ${cardFields(lang)}
        <button type="submit" class="primary-button" id="submit-button">
          ${icons.lock}<span class="button-label">${t(lang, 'card_button')}</span>
        </button>
      </form>
      ${sandboxCards(p)}
    </section>
  </div>`
  return layout({
    lang,
    title: t(lang, 'html_title_card', { merchant: p.merchantName }),
    page: 'card',
    langHrefs: p.langHrefs,
    sandbox: p.sandbox,
    content,
    data: {
      sessionId: p.sessionId,
      lang,
      merchantName: p.merchantName,
      messages: clientMessages(lang, CARD_FORM_MESSAGES),
    },
  })
}

export function qrPage(p: QrPageInput): string {
  const { lang } = p
  const amount = formatMoney(p.amount, lang)
  const content = markup`<div class="checkout">
    ${summary(lang, { merchantName: p.merchantName, amount: p.amount, description: p.description, label: t(lang, 'amount_due'), kind: 'qr' })}
    <section class="panel panel-qr" aria-labelledby="form-heading">
      <h2 id="form-heading" class="panel-title">${t(lang, 'qr_title')}</h2>
      <figure class="qr-figure">
        <img
          class="qr-image"
          src="${p.qrImageUrl}"
          width="232"
          height="232"
          alt="${t(lang, 'qr_alt', { merchant: p.merchantName, amount })}"
        />
      </figure>
      <ol class="steps">
        <li>${t(lang, 'qr_step1')}</li>
        <li>${t(lang, 'qr_step2')}</li>
        <li>${t(lang, 'qr_step3')}</li>
      </ol>
      <p class="qr-status" id="qr-status" role="status">
        <span class="spinner" aria-hidden="true"></span
        ><span id="qr-status-text">${t(lang, 'qr_waiting')}</span>
      </p>
      ${
        p.sandbox
          ? markup`<details class="payload">
              <summary>${t(lang, 'qr_payload')}</summary>
              <code>${p.qrPayload}</code>
              <p class="hint">POST /v1/sandbox/sessions/${p.sessionId}/qr-pay</p>
            </details>`
          : ''
      }
    </section>
  </div>`
  return layout({
    lang,
    title: t(lang, 'html_title_qr', { merchant: p.merchantName }),
    page: 'qr',
    langHrefs: p.langHrefs,
    sandbox: p.sandbox,
    content,
    data: {
      sessionId: p.sessionId,
      lang,
      merchantName: p.merchantName,
      messages: clientMessages(lang, CARD_FORM_MESSAGES),
    },
  })
}
