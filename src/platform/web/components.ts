import { markup, type Interpolation, type SafeHtml } from './html.ts'
import { t, type Lang } from './i18n.ts'

// Building blocks of the server-rendered app pages (the merchant dashboard): tables that
// scroll inside their own container, labelled form controls, POST buttons that carry the
// CSRF token, flash messages, keyset pagination links. Every one escapes what it is given
// (platform/web/html.ts) and works without JavaScript.

/** The form field every state-changing form carries (see the dashboard's CSRF check). */
export const CSRF_FIELD = '_csrf'

export function csrfInput(token: string): SafeHtml {
  return markup`<input type="hidden" name="${CSRF_FIELD}" value="${token}" />`
}

export interface Column {
  label: string
  /** Right-aligned figures (amounts, counts). */
  numeric?: boolean
  /** Free text that may be long (names, emails): wraps on wide screens. */
  wrap?: boolean
}

function cellClass(c: Column | undefined): SafeHtml | '' {
  const names = [c?.numeric ? 'num' : '', c?.wrap ? 'wrap' : ''].filter(Boolean).join(' ')
  return names ? markup`class="${names}"` : ''
}

export interface TableInput {
  /** Names the table and its scroll region for screen readers. */
  caption: string
  columns: readonly Column[]
  rows: readonly (readonly Interpolation[])[]
  /** Shown instead of the table when there are no rows. */
  empty: string
  id?: string
  /** Keep the caption visible (default: for screen readers only). */
  showCaption?: boolean
}

/**
 * A data table inside its own horizontally scrolling region: at 360 px a wide table scrolls
 * there, never the page. The region is focusable so keyboard users can scroll it too.
 */
export function dataTable(input: TableInput): SafeHtml {
  if (input.rows.length === 0) {
    return markup`<p class="empty" ${input.id ? markup`id="${input.id}"` : ''}>${input.empty}</p>`
  }
  const head = input.columns.map((c) => markup`<th scope="col" ${cellClass(c)}>${c.label}</th>`)
  const body = input.rows.map(
    (row) =>
      markup`<tr>
        ${row.map((cell, i) => markup`<td ${cellClass(input.columns[i])}>${cell}</td>`)}
      </tr>`,
  )
  return markup`<div
    class="table-wrap"
    role="region"
    aria-label="${input.caption}"
    tabindex="0"
    ${input.id ? markup`id="${input.id}"` : ''}
  >
    <table>
      <caption class="${input.showCaption ? 'caption' : 'sr-only'}">${input.caption}</caption>
      <thead>
        <tr>
          ${head}
        </tr>
      </thead>
      <tbody>
        ${body}
      </tbody>
    </table>
  </div>`
}

export interface FieldInput {
  name: string
  label: string
  type?: 'text' | 'email' | 'password' | 'number' | 'date' | 'search' | 'url'
  value?: string | number | undefined
  id?: string
  autocomplete?: string
  required?: boolean
  hint?: string
  error?: string
  inputmode?: 'numeric' | 'decimal' | 'email' | 'text' | 'search'
  min?: string | number
  max?: string | number
  step?: string | number
  pattern?: string
  maxlength?: number
  autofocus?: boolean
}

/** A labelled input, its hint and its error tied to it with aria-describedby. */
export function field(f: FieldInput): SafeHtml {
  const id = f.id ?? `f-${f.name}`
  const described = [f.hint ? `${id}-hint` : '', f.error ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ')
  const attr = (name: string, value: string | number | undefined) =>
    value === undefined || value === '' ? '' : markup` ${name}="${value}"`
  return markup`<div class="field">
    <label for="${id}">${f.label}</label>
    <input
      id="${id}"
      name="${f.name}"
      type="${f.type ?? 'text'}"
      ${attr('value', f.value)}${attr('autocomplete', f.autocomplete)}${attr('inputmode', f.inputmode)}${attr('min', f.min)}${attr('max', f.max)}${attr('step', f.step)}${attr('pattern', f.pattern)}${attr('maxlength', f.maxlength)}${attr('aria-describedby', described)}
      ${f.required ? markup`required` : ''}
      ${f.error ? markup`aria-invalid="true"` : ''}
      ${f.autofocus ? markup`autofocus` : ''}
    />
    ${f.hint ? markup`<p class="hint" id="${id}-hint">${f.hint}</p>` : ''}
    ${f.error ? markup`<p class="field-error" id="${id}-error">${f.error}</p>` : ''}
  </div>`
}

export interface SelectInput {
  name: string
  label: string
  options: readonly { value: string; label: string }[]
  value?: string | undefined
  id?: string
}

export function selectField(s: SelectInput): SafeHtml {
  const id = s.id ?? `f-${s.name}`
  return markup`<div class="field">
    <label for="${id}">${s.label}</label>
    <select id="${id}" name="${s.name}">
      ${s.options.map(
        (o) =>
          markup`<option value="${o.value}" ${o.value === (s.value ?? '') ? markup`selected` : ''}>${o.label}</option>`,
      )}
    </select>
  </div>`
}

export interface PostButtonInput {
  action: string
  csrfToken: string
  label: string
  variant?: 'primary' | 'secondary' | 'danger'
  /** More hidden fields the action needs. */
  fields?: Readonly<Record<string, string>>
  /** An accessible name more specific than the visible label (e.g. which key it revokes). */
  ariaLabel?: string
}

/** A one-button form that POSTs (with the CSRF token): how every action is made. */
export function postButton(p: PostButtonInput): SafeHtml {
  const hidden = Object.entries(p.fields ?? {}).map(
    ([name, value]) => markup`<input type="hidden" name="${name}" value="${value}" />`,
  )
  return markup`<form method="post" action="${p.action}" class="inline-form">
    ${csrfInput(p.csrfToken)}${hidden}
    <button
      type="submit"
      class="button button-${p.variant ?? 'secondary'}"
      ${p.ariaLabel ? markup`aria-label="${p.ariaLabel}"` : ''}
    >
      ${p.label}
    </button>
  </form>`
}

export type FlashKind = 'success' | 'info' | 'error'

export interface Flash {
  kind: FlashKind
  text: string
}

/** A message about what just happened; errors are announced at once (role="alert"). */
export function flashMessage(flash: Flash | undefined): SafeHtml {
  if (!flash) return markup``
  const role = flash.kind === 'error' ? 'alert' : 'status'
  return markup`<div class="flash flash-${flash.kind}" role="${role}">
    <p>${flash.text}</p>
  </div>`
}

/**
 * Keyset pagination: a link back to the first page and one to the next (a keyset cursor
 * moves forward only). Not a `nav`: the page has exactly one navigation landmark.
 */
export function pager(p: { lang: Lang; firstHref?: string; nextHref?: string }): SafeHtml {
  if (!p.firstHref && !p.nextHref) return markup``
  return markup`<div class="pager" role="group" aria-label="${t(p.lang, 'web_pages')}">
    ${p.firstHref ? markup`<a class="button button-secondary" href="${p.firstHref}">${t(p.lang, 'web_first_page')}</a>` : ''}
    ${p.nextHref ? markup`<a class="button button-secondary" href="${p.nextHref}" rel="next">${t(p.lang, 'web_next_page')}</a>` : ''}
  </div>`
}

/** Label/value pairs (a payment's amounts, a key's details). */
export function facts(items: readonly (readonly [string, Interpolation])[]): SafeHtml {
  return markup`<dl class="facts">
    ${items.map(([label, value]) => markup`<div><dt>${label}</dt><dd>${value}</dd></div>`)}
  </dl>`
}

export type BadgeTone = 'neutral' | 'success' | 'warning' | 'danger' | 'info'

export function badge(text: string, tone: BadgeTone = 'neutral'): SafeHtml {
  return markup`<span class="badge badge-${tone}">${text}</span>`
}

/** A titled block of the page (`h2`); the page's one `h1` is the shell's. */
export function section(p: { title: string; id: string; body: Interpolation }): SafeHtml {
  return markup`<section class="panel" aria-labelledby="${p.id}">
    <h2 id="${p.id}">${p.title}</h2>
    ${p.body}
  </section>`
}

export interface TextAreaInput {
  name: string
  label: string
  value?: string | undefined
  id?: string
  rows?: number
  maxlength?: number
  required?: boolean
  hint?: string
  error?: string
  /** Code-like content (a JSON condition): monospace, no spell checking. */
  code?: boolean
}

/** A labelled text area, its hint and its error tied to it with aria-describedby. */
export function textArea(f: TextAreaInput): SafeHtml {
  const id = f.id ?? `f-${f.name}`
  const described = [f.hint ? `${id}-hint` : '', f.error ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ')
  return markup`<div class="field">
    <label for="${id}">${f.label}</label>
    <textarea
      id="${id}"
      name="${f.name}"
      rows="${f.rows ?? 4}"
      ${f.maxlength === undefined ? '' : markup`maxlength="${f.maxlength}"`}
      ${described ? markup`aria-describedby="${described}"` : ''}
      ${f.required ? markup`required` : ''}
      ${f.error ? markup`aria-invalid="true"` : ''}
      ${f.code ? markup`spellcheck="false" class="mono"` : ''}
    >${f.value ?? ''}</textarea>
    ${f.hint ? markup`<p class="hint" id="${id}-hint">${f.hint}</p>` : ''}
    ${f.error ? markup`<p class="field-error" id="${id}-error">${f.error}</p>` : ''}
  </div>`
}

/**
 * Internals (raw event codes, ledger legs, risk facts) folded away under "Teknik ayrıntılar":
 * the pages show them only to roles that build on the API; finance and support staff read
 * the page without them.
 */
export function technicalDetails(lang: Lang, body: Interpolation, id?: string): SafeHtml {
  return markup`<details class="tech-details" ${id ? markup`id="${id}"` : ''}>
    <summary>${t(lang, 'web_technical_details')}</summary>
    ${body}
  </details>`
}
