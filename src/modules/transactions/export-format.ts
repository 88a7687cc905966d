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

/** "2026-01-15 14:03:22" in Istanbul time: a value Excel recognises as a date and time. */
export function formatIstanbul(date: Date): string {
  const parts: Record<string, string> = {}
  for (const p of ISTANBUL.formatToParts(date)) parts[p.type] = p.value
  return `${parts['year']}-${parts['month']}-${parts['day']} ${parts['hour']}:${parts['minute']}:${parts['second']}`
}

/**
 * Spreadsheet formula injection: a cell that begins with = + - @ (or a tab or carriage
 * return) is run as a formula by Excel and LibreOffice. Text the merchant or its buyers
 * chose (transactionId, customerId) gets a leading apostrophe there, as OWASP advises;
 * our own values (ids, statuses, numbers) never start with those characters.
 */
export function neutraliseFormula(text: string | null): string {
  if (text === null) return ''
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
}
