import type { FastifyRequest } from 'fastify'
import type { Lang } from '../../platform/web/i18n.ts'

// Reading an HTML form (application/x-www-form-urlencoded, parsed by @fastify/formbody) and
// a page's query string: every value a string, trimmed to a length, never trusted further
// than that. Each service checks the meaning (amounts, emails, roles) as it does for the API.

export interface FormReader {
  /** The field's text ('' when absent), at most `max` characters. */
  text(name: string, max: number): string
  /** The field as an optional value: undefined when absent or blank. */
  optional(name: string, max: number): string | undefined
}

function reader(source: unknown): FormReader {
  const values = (typeof source === 'object' && source !== null ? source : {}) as Record<
    string,
    unknown
  >
  const text = (name: string, max: number) => {
    const raw = values[name]
    const value: unknown = Array.isArray(raw) ? (raw as unknown[])[0] : raw
    return typeof value === 'string' ? value.slice(0, max) : ''
  }
  return {
    text,
    optional: (name, max) => {
      const value = text(name, max).trim()
      return value === '' ? undefined : value
    },
  }
}

export function formFields(request: FastifyRequest): FormReader {
  return reader(request.body)
}

export function queryFields(request: FastifyRequest): FormReader {
  return reader(request.query)
}

/**
 * "1.234,56" / "1234.56" / "1234" (lira, as a person types it) → kuruş; undefined if it is
 * not an amount. Integer parsing only: no float ever holds the money.
 */
export function parseLira(input: string): number | undefined {
  const text = input.replace(/[\s₺]/g, '')
  // The last comma or dot followed by one or two digits is the decimal separator.
  const match = /^(\d{1,3}(?:[.,]?\d{3})*|\d+)(?:[.,](\d{1,2}))?$/.exec(text)
  if (!match) return undefined
  const lira = (match[1] ?? '').replace(/[.,]/g, '')
  const kurus = (match[2] ?? '').padEnd(2, '0')
  const minor = Number(lira) * 100 + Number(kurus || '0')
  return Number.isSafeInteger(minor) ? minor : undefined
}

/**
 * Kuruş → the amount a form field shows, in the page's notation without grouping ("1234,56"
 * in Turkish, "1234.56" in English): what a person would type, and what parseLira reads back.
 */
export function liraInput(amountMinor: number, lang: Lang): string {
  const separator = lang === 'tr' ? ',' : '.'
  return `${Math.floor(amountMinor / 100)}${separator}${String(amountMinor % 100).padStart(2, '0')}`
}

/** Control characters, which the API's schemas refuse in names, values and notes. */
export function hasControlChars(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}
