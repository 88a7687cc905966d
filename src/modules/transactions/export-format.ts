import { assertMinor } from '../../platform/money.ts'

// Pure formatting for statement files. Money is formatted from integer kuruş with integer
// arithmetic only (no division into floats), so 10,000,000,000 kuruş is "100000000,00".

/** "1234,56": TRY with a decimal comma, as Turkish Excel reads a number; no grouping. */
export function formatTry(minor: number): string {
  assertMinor(minor)
  const sign = minor < 0 ? '-' : ''
  const abs = Math.abs(minor)
  const kurus = abs % 100
  const lira = (abs - kurus) / 100
  return `${sign}${lira},${String(kurus).padStart(2, '0')}`
}

/** "1.234,56": the same with Turkish thousands grouping, for people reading a PDF. */
export function formatTryGrouped(minor: number): string {
  const plain = formatTry(minor)
  const [whole = '', fraction = ''] = plain.split(',')
  const sign = whole.startsWith('-') ? '-' : ''
  const digits = sign ? whole.slice(1) : whole
  return `${sign}${digits.replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${fraction}`
}

// Turkey has kept UTC+03:00 all year since 2016; Intl still looks it up by zone name so a
// future rule change needs no code change.
const ISTANBUL = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Europe/Istanbul',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
})

const HOUR_MS = 3_600_000
// Intl formatting costs tens of microseconds a call, a lot at 100,000 rows. Zone offsets only
// change on whole hours (UTC), so the offset is looked up once per UTC hour and reused.
const offsetByHour = new Map<number, number>()

function istanbulOffsetMs(date: Date): number {
  const hour = Math.floor(date.getTime() / HOUR_MS)
  let offset = offsetByHour.get(hour)
  if (offset === undefined) {
    const p: Record<string, string> = {}
    for (const part of ISTANBUL.formatToParts(new Date(hour * HOUR_MS))) p[part.type] = part.value
    const wall = Date.UTC(
      Number(p['year']),
      Number(p['month']) - 1,
      Number(p['day']),
      Number(p['hour']),
      Number(p['minute']),
    )
    offset = wall - hour * HOUR_MS
    if (offsetByHour.size > 10_000) offsetByHour.clear()
    offsetByHour.set(hour, offset)
  }
  return offset
}

/** "2026-01-15 14:03:22" in Istanbul time: a value Excel recognises as a date and time. */
export function formatIstanbul(date: Date): string {
  const wall = new Date(date.getTime() + istanbulOffsetMs(date)).toISOString()
  return `${wall.slice(0, 10)} ${wall.slice(11, 19)}`
}

// Characters a spreadsheet skips or shows as blank before it looks for a formula: every
// Unicode white space (space, tab, NBSP, ideographic space, …) and the invisible format
// characters (zero-width space and joiners, BOM, bidi controls).
const INVISIBLE_LEAD = /^[\s\p{Cf}]+/u
// OWASP's triggers. NFKC folds the full-width, small and superscript forms (＝ ﹦ ⁼, ＋ ﹢,
// － ﹣, ＠ ﹫) into these, and Excel with an East Asian IME treats ＝ as =.
const TRIGGER = /^[=+\-@]/
const CONTROL_LEAD = /^[\t\r\n]/

/** Whether a spreadsheet could take `text` for a formula (see neutraliseFormula). */
export function startsFormula(text: string): boolean {
  const c = text.charCodeAt(0)
  // Printable ASCII other than a space decides at once: nearly every cell (ids, dates,
  // amounts) takes this path, and a 100,000-row export asks about 1.5 million cells.
  if (c > 0x20 && c < 0x7f) return c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40
  if (CONTROL_LEAD.test(text)) return true
  const rest = text.replace(INVISIBLE_LEAD, '')
  const first = rest.codePointAt(0)
  return first !== undefined && TRIGGER.test(String.fromCodePoint(first).normalize('NFKC'))
}

/**
 * Spreadsheet formula injection: a cell that begins with = + - @ (or a tab, carriage return or
 * line feed) is run as a formula by Excel and LibreOffice, and so is one whose trigger sits
 * behind leading white space (" =", NBSP, ideographic space, zero-width characters) or is
 * written in a full-width or small form (＝ ＋ － ＠ ﹦ …). Such a cell gets a leading
 * apostrophe, as OWASP advises, and keeps its text. The CSV writer passes every string cell
 * through this (export-csv.ts), so a new column cannot miss it.
 */
export function neutraliseFormula(text: string | null): string {
  if (text === null) return ''
  return startsFormula(text) && !NEGATIVE_NUMBER.test(text) ? `'${text}` : text
}

// A negative amount ("-40,00", "-1.234,56") is a number, not a formula: a minus, then digits
// and separators only (no operator, letter or exponent), so a spreadsheet reads it as the
// number and can sum it (issue 36, finding 9). "-2+3", "-1,5E+3" and "-A1" stay guarded.
const NEGATIVE_NUMBER = /^-\d[\d.,]*$/
