import { assertMinor } from '../../platform/money.ts'

// Amounts as a Turkish invoice prints them: "1.234,56 ₺" (dot thousands, decimal comma,
// the lira sign after a space). Integer maths on kuruş only: no float ever holds money.

export function formatTryTr(minor: number): string {
  assertMinor(minor)
  const sign = minor < 0 ? '-' : ''
  const abs = Math.abs(minor)
  const kurus = abs % 100
  const lira = String((abs - kurus) / 100).replace(/\B(?=(\d{3})+(?!\d))/g, '.')
  return `${sign}${lira},${String(kurus).padStart(2, '0')} ₺`
}

/** A date as a Turkish reader expects it, in Turkey's time: "28.02.2027". */
export function formatDateTr(date: Date): string {
  return new Intl.DateTimeFormat('tr-TR', {
    timeZone: 'Europe/Istanbul',
    day: '2-digit',
    month: '2-digit',
    year: 'numeric',
  }).format(date)
}
