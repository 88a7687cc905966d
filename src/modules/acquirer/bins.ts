import { cardFacts } from './bin-table.ts'
import { cardKindOf, type CardBrand, type CardType } from '../vault/index.ts'

// The acquirer's BIN table: issuing bank and the installment plans it offers. Brand and
// card type come from the vault's card table (one source; see vault/cards.ts).

export interface BinInfo {
  bin: string
  brand: CardBrand
  cardType: CardType
  bank: string
  /** The issuer's country (ISO 3166 alpha-2), null for a BIN the table does not know. */
  country: string | null
  installments: number[]
}

const ISSUERS: Readonly<Record<string, { bank: string; installmentsMax: number }>> = {
  '415565': { bank: 'Sandbox Bank', installmentsMax: 12 },
  '552879': { bank: 'Sandbox Bank', installmentsMax: 9 },
  '400000': { bank: 'Sandbox Bank', installmentsMax: 6 },
  '589004': { bank: 'Sandbox Bank', installmentsMax: 1 },
  '979202': { bank: 'Sandbox Bank', installmentsMax: 1 },
}
const DEFAULT_ISSUER = { bank: 'Sandbox Bank', installmentsMax: 1 }

/**
 * Facts about the first 6 digits of a card; an unknown BIN allows a single installment. The
 * sandbox test BINs keep their table; a BIN of a card program (bin-table.ts) allows up to 12
 * installments, which routing then sends only to a POS of that program.
 */
export function binInfo(bin: string): BinInfo {
  const real = cardFacts(bin)
  const programIssuer =
    real.program !== 'none' && real.bank ? { bank: real.bank, installmentsMax: 12 } : undefined
  const issuer = ISSUERS[bin] ?? programIssuer ?? DEFAULT_ISSUER
  return {
    bin,
    ...cardKindOf(bin),
    bank: issuer.bank,
    country: Object.hasOwn(ISSUERS, bin) ? 'TR' : real.country,
    installments: Array.from({ length: issuer.installmentsMax }, (_, i) => i + 1),
  }
}
