import { cardKindOf, type CardBrand, type CardType } from '../vault/index.ts'

// The BIN table as data: which bank issued a card and which installment program it is in.
// Rows are added with their evidence (a bank's or a scheme's published range, or a bank's
// own answer naming the issuer); docs/acquiring.md "BIN table" says how to update it.
// Brand and funding come from the vault's card table (one source), so the scheme
// detection and this table never disagree.

export type CardProgram =
  | 'bonus'
  | 'world'
  | 'maximum'
  | 'axess'
  | 'cardfinans'
  | 'paraf'
  | 'advantage'
  | 'bankkart'
  | 'saglam'
  | 'none'

interface BinRow {
  bank: string
  program: CardProgram
  country: string
  /** Where the row comes from. */
  source: string
}

const ROWS: Readonly<Record<string, BinRow>> = {
  // The EST gateway's own callback for card 4355 08** names its issuer "AKBANK T.A.S." and
  // brand VISA (mewebstudio/pos tests/Unit/Crypt/EstV3PosCryptTest.php, a real Ziraat
  // 3D Pay answer); Akbank's credit cards are Axess.
  '435508': { bank: 'akbank', program: 'axess', country: 'TR', source: 'EST callback vector' },
  // Garanti's own GVPS answers for card 4282 20** set GarantiCardInd "Y" (a Garanti-issued
  // card; mewebstudio/pos GarantiPosResponseDataMapperTest, examples/garanti test card);
  // Garanti's credit cards are Bonus.
  '428220': { bank: 'garanti', program: 'bonus', country: 'TR', source: 'GVPS answer vector' },
}

export interface CardFacts {
  bin: string
  brand: CardBrand
  funding: CardType
  /** The issuing bank's code (isbank, garanti, …), null when the table does not know it. */
  bank: string | null
  program: CardProgram
  country: string | null
}

/** What the table knows of a BIN; an unknown one is of no bank and no program. */
export function cardFacts(bin: string): CardFacts {
  const kind = cardKindOf(bin)
  const row = ROWS[bin]
  return {
    bin,
    brand: kind.brand,
    funding: kind.cardType,
    bank: row?.bank ?? null,
    program: row?.program ?? 'none',
    country: row?.country ?? null,
  }
}
