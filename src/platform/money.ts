import { assert } from './assert.ts'

// Money is an integer number of kuruş. JS numbers are exact below 2^53 (about 90 trillion TRY),
// far above any amount limit we accept, and every helper here asserts it stays integral.

export function assertMinor(value: number, what = 'amount'): void {
  assert(Number.isSafeInteger(value), `${what} must be a safe integer of kuruş, got ${value}`)
}

/** value × numerator / denominator, rounded half up, all in integers. */
export function mulDivHalfUp(value: number, numerator: number, denominator: number): number {
  assertMinor(value)
  assert(denominator > 0 && Number.isSafeInteger(numerator), 'mulDivHalfUp: bad ratio')
  const n = BigInt(value) * BigInt(numerator)
  const d = BigInt(denominator)
  const q = n / d
  const r = n % d
  return Number(r * 2n >= d ? q + 1n : q)
}

/**
 * Splits `total` over `weights` in proportion, largest remainder first, ties to the lower
 * index (the caller puts the parent merchant first). The parts always sum to `total` exactly.
 */
export function apportion(total: number, weights: readonly number[]): number[] {
  assertMinor(total, 'total')
  const weightSum = weights.reduce((a, b) => a + b, 0)
  assert(weights.length > 0 && weightSum > 0, 'apportion needs positive weights')
  const bigTotal = BigInt(total)
  const bigSum = BigInt(weightSum)
  const parts = weights.map((w) => (bigTotal * BigInt(w)) / bigSum)
  const remainders = weights.map((w, i) => ({ i, r: (bigTotal * BigInt(w)) % bigSum }))
  let left = Number(bigTotal - parts.reduce((a, b) => a + b, 0n))
  remainders.sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1))
  for (const { i } of remainders) {
    if (left <= 0) break
    parts[i] = (parts[i] ?? 0n) + 1n
    left--
  }
  const result = parts.map(Number)
  assert(result.reduce((a, b) => a + b, 0) === total, 'apportion must sum to the total')
  return result
}
