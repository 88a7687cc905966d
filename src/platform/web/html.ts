// HTML building with escaping by default: every value interpolated into `markup`...`` is
// escaped unless it is already SafeHtml (the result of another `markup` call, or `raw` for
// markup we wrote ourselves). Nothing a merchant or buyer typed can become markup.

export class SafeHtml {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString(): string {
    return this.value
  }
}

export type Interpolation =
  SafeHtml | string | number | boolean | null | undefined | Interpolation[]

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => ESCAPES[ch] ?? ch)
}

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

export function markup(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? ''
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '')
  return new SafeHtml(out)
}

/** Markup we wrote ourselves (icons): never pass anything user-supplied. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup)
}

/**
 * JSON for a `<script type="application/json">` data block: `<`, `>`, `&` and the JS line
 * separators are escaped so the text can neither close the element nor be read as markup.
 */
export function jsonForScript(value: unknown): SafeHtml {
  const text = JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
  return new SafeHtml(text)
}
