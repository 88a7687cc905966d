// Pure card-number facts the vault needs at tokenization: the Luhn check and the card
// scheme (brand) and type of a BIN. The acquirer builds its BIN table (bank, installments)
// on top of cardKindOf, so there is one source for brand and type and the module
// dependency stays one-way (acquirer → vault).

export type CardBrand = 'visa' | 'mastercard' | 'troy' | 'amex' | 'unknown'
export type CardType = 'credit' | 'debit'

export interface CardKind {
  brand: CardBrand
  cardType: CardType
}

// BINs whose type (or brand) the prefix rules below would get wrong: 589004 is a
// Mastercard debit range outside 51–55, and Troy cards are debit.
const KNOWN_BINS: Readonly<Record<string, CardKind>> = {
  '415565': { brand: 'visa', cardType: 'credit' },
  '552879': { brand: 'mastercard', cardType: 'credit' },
  '400000': { brand: 'visa', cardType: 'credit' },
  '589004': { brand: 'mastercard', cardType: 'debit' },
  '979202': { brand: 'troy', cardType: 'debit' },
}

/** Brand from the scheme's prefix ranges (needs at least the first 4 digits). */
export function brandByPrefix(digits: string): CardBrand {
  const two = Number(digits.slice(0, 2))
  const four = Number(digits.slice(0, 4))
  if (digits.startsWith('4')) return 'visa'
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard'
  if (digits.startsWith('9792')) return 'troy'
  if (two === 34 || two === 37) return 'amex'
  return 'unknown'
}

/** Brand and type of a 6-digit BIN; an unlisted BIN is its prefix brand, credit. */
export function cardKindOf(bin: string): CardKind {
  return KNOWN_BINS[bin] ?? { brand: brandByPrefix(bin), cardType: 'credit' }
}

export function luhnValid(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return digits.length > 0 && sum % 10 === 0
}
