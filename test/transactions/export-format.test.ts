// Goal: statement money and text formatting is exact for every kuruş amount and safe in Excel.
// Method: fast-check properties over integers (parse the text back with integer maths), plus
// fixed examples for grouping, Istanbul time and formula neutralisation.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import {
  formatIstanbul,
  formatTry,
  formatTryGrouped,
  neutraliseFormula,
} from '../../src/modules/transactions/export-format.ts'

function parseTry(text: string): number {
  const m = /^(-?)(\d+),(\d{2})$/.exec(text)
  assert.ok(m, `not a TRY amount: ${text}`)
  const value = Number(m[2]) * 100 + Number(m[3])
  return m[1] === '-' ? -value : value
}

test('formatTry round-trips every safe kuruş amount exactly', () => {
  fc.assert(
    fc.property(fc.maxSafeInteger(), (k) => {
      const text = formatTry(k)
      assert.equal(BigInt(parseTry(text)), BigInt(k))
    }),
    { numRuns: 2000 },
  )
  assert.equal(formatTry(0), '0,00')
  assert.equal(formatTry(5), '0,05')
  assert.equal(formatTry(100), '1,00')
  assert.equal(formatTry(123_456), '1234,56')
  assert.equal(formatTry(-150), '-1,50')
  assert.equal(formatTry(10_000_000_000), '100000000,00')
})

test('formatTryGrouped groups thousands with dots and keeps the same value', () => {
  fc.assert(
    fc.property(fc.integer({ min: -1e15, max: 1e15 }), (k) => {
      const grouped = formatTryGrouped(k)
      assert.equal(grouped.replaceAll('.', ''), formatTry(k))
      assert.match(grouped, /^-?\d{1,3}(\.\d{3})*,\d{2}$/)
    }),
  )
  assert.equal(formatTryGrouped(123_456_789), '1.234.567,89')
  assert.equal(formatTryGrouped(99_999), '999,99')
})

test('formatTry refuses fractions of a kuruş', () => {
  assert.throws(() => formatTry(1.5))
})

test('Istanbul time is UTC+03:00 in a form Excel reads as a date', () => {
  assert.equal(formatIstanbul(new Date('2026-01-15T21:30:05.123Z')), '2026-01-16 00:30:05')
  assert.equal(formatIstanbul(new Date('2026-07-01T00:00:00Z')), '2026-07-01 03:00:00')
})

test('cells that a spreadsheet would run as a formula get a leading apostrophe', () => {
  for (const bad of [
    '=HYPERLINK("x")',
    '+1',
    '-2+3',
    '-1,5E+3',
    '-1-1',
    '-A1',
    '@SUM(A1)',
    '\tx',
    '\rx',
    '\nx',
  ]) {
    assert.equal(neutraliseFormula(bad), `'${bad}`)
  }
  // Behind leading white space or invisible characters, and in full-width or small forms.
  for (const bad of [
    ' =1+1',
    '\u00a0=1+1',
    '\u3000+1',
    '\u2007-1',
    '\u200b@x',
    '\u2060=1',
    '\ufeff=1',
    '\u202e=1',
    '＝1+1',
    '＋1',
    '－1',
    '＠x',
    '﹦1',
    '﹢1',
    '﹣1',
    '﹫x',
    '⁼1',
    ' \u00a0 ＝1',
  ]) {
    assert.equal(neutraliseFormula(bad), `'${bad}`, JSON.stringify(bad))
  }
  // A negative amount is a number, not a formula: a spreadsheet must be able to sum it.
  for (const fine of ['-40,00', '-1.234,56', '-5', '-0,01', '-1234.56']) {
    assert.equal(neutraliseFormula(fine), fine, JSON.stringify(fine))
  }
  for (const fine of ['sipariş-ğüşiöçİ-1', 'a=b', '1-2', ' x=1', '\u00a0ş', '', 'İ=1']) {
    assert.equal(neutraliseFormula(fine), fine, JSON.stringify(fine))
  }
  assert.equal(neutraliseFormula(null), '')
})

test('any run of white space or format characters before any form of a trigger is caught', () => {
  const blanks = fc.constantFrom(
    ' ',
    '\t',
    '\u00a0',
    '\u1680',
    '\u2000',
    '\u200a',
    '\u2028',
    '\u202f',
    '\u205f',
    '\u3000',
    '\u200b',
    '\u200c',
    '\u200d',
    '\u2060',
    '\ufeff',
    '\u00ad',
  )
  const triggers = fc.constantFrom(
    '=',
    '+',
    '-',
    '@',
    '＝',
    '＋',
    '－',
    '＠',
    '﹦',
    '﹢',
    '﹣',
    '﹫',
  )
  fc.assert(
    fc.property(fc.array(blanks, { maxLength: 6 }), triggers, fc.string(), (lead, t, rest) => {
      const text = lead.join('') + t + rest
      // A negative number ("-5", "-1.234,56") is not a formula and stays a number.
      if (/^-\d[\d.,]*$/.test(text)) assert.equal(neutraliseFormula(text), text)
      else assert.equal(neutraliseFormula(text), `'${text}`)
    }),
    { numRuns: 2000 },
  )
})
