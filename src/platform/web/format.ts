import { assertMinor } from '../money.ts'
import type { Lang } from './i18n.ts'

// The one place pages format money, numbers and dates (issue 23 §3: four formatters used to
// disagree). Money is integer kuruş handed to Intl as a decimal *string*, so no float ever
// holds an amount; Turkish is tr-TR (`₺1.234,56`), English is en-TR (`₺1,234.56`). Dates and
// times are shown in Turkey's time, by zone name (Intl keeps the zone rules, nothing here
// hard-codes +03:00).

export const TIME_ZONE = 'Europe/Istanbul'

const LOCALES: Readonly<Record<Lang, string>> = { tr: 'tr-TR', en: 'en-TR' }

export function localeOf(lang: Lang): string {
  return LOCALES[lang]
}

// Intl formatters are costly to build and safe to share: one per language and style.
const moneyFormats = new Map<Lang, Intl.NumberFormat>()
function moneyFormat(lang: Lang): Intl.NumberFormat {
  let f = moneyFormats.get(lang)
  if (!f) {
    // narrowSymbol: `₺` in both languages (plain en-TR data would print `TRY`).
    f = new Intl.NumberFormat(LOCALES[lang], {
      style: 'currency',
      currency: 'TRY',
      currencyDisplay: 'narrowSymbol',
    })
    moneyFormats.set(lang, f)
  }
  return f
}

/** `₺1.234,56` (tr) or `₺1,234.56` (en) for an integer number of kuruş. */
export function formatMoney(amountMinor: number, lang: Lang): string {
  assertMinor(amountMinor)
  const abs = Math.abs(amountMinor)
  const decimal = `${amountMinor < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`
  // Intl accepts a decimal string exactly (ECMA-402 "Intl.NumberFormat v3").
  return moneyFormat(lang).format(decimal as unknown as number)
}

/** A whole number with the language's grouping: `1.234` / `1,234`. */
export function formatNumber(value: number, lang: Lang): string {
  return new Intl.NumberFormat(LOCALES[lang], { maximumFractionDigits: 2 }).format(value)
}

/** A ratio 0..1 as a percentage with one decimal: `%98,8` / `98.8%`. */
export function formatPercent(ratio: number, lang: Lang): string {
  return new Intl.NumberFormat(LOCALES[lang], {
    style: 'percent',
    maximumFractionDigits: 1,
  }).format(ratio)
}

export type DateStyle = 'date' | 'long' | 'datetime' | 'time'

const DATE_OPTIONS: Readonly<Record<DateStyle, Intl.DateTimeFormatOptions>> = {
  date: { dateStyle: 'medium' },
  long: { dateStyle: 'long' },
  datetime: { dateStyle: 'medium', timeStyle: 'short', hourCycle: 'h23' },
  time: { timeStyle: 'short', hourCycle: 'h23' },
}

const dateFormats = new Map<string, Intl.DateTimeFormat>()

/** A date (or date and time) in Turkey's time, in the reader's language. */
export function formatDate(date: Date, lang: Lang, style: DateStyle = 'date'): string {
  const key = `${lang}:${style}`
  let f = dateFormats.get(key)
  if (!f) {
    f = new Intl.DateTimeFormat(LOCALES[lang], { timeZone: TIME_ZONE, ...DATE_OPTIONS[style] })
    dateFormats.set(key, f)
  }
  return f.format(date)
}

const dayKeyFormat = new Intl.DateTimeFormat('en-CA', {
  timeZone: TIME_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
})

/** The calendar day in Turkey as `YYYY-MM-DD` (for grouping figures by day). */
export function istanbulDayKey(date: Date): string {
  return dayKeyFormat.format(date)
}

/** The instant the Turkish calendar day containing `date` began. */
export function startOfIstanbulDay(date: Date): Date {
  // The zone's offset at that moment, read from Intl rather than assumed.
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: TIME_ZONE,
    hourCycle: 'h23',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(date)
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0)
  const sinceMidnightMs = ((get('hour') * 60 + get('minute')) * 60 + get('second')) * 1000
  return new Date(date.getTime() - (date.getTime() % 1000) - sinceMidnightMs)
}

/** `YYYY-MM-DD` (a day in Turkey) → the instant it begins; undefined if not a date. */
export function istanbulDayStart(day: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined
  const noonUtc = new Date(`${day}T12:00:00Z`)
  if (Number.isNaN(noonUtc.getTime()) || istanbulDayKey(noonUtc) !== day) return undefined
  return startOfIstanbulDay(noonUtc)
}
