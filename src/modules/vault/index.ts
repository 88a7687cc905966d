// The vault's public surface. Other modules import only this file.
// detokenize is for the acquirer module alone (README.md).
export {
  bindCardToCustomer,
  cardTokenColumn,
  cardTokenFromColumn,
  claimCardToken,
  detokenize,
  getCardToken,
  listCardAccess,
  revokeCardToken,
  rotateMasterKey,
  tokenizeCard,
} from './vault.service.ts'
export type {
  CardTokenView,
  DetokenizeCaller,
  DetokenizedCard,
  RotationReport,
} from './vault.service.ts'
export { cardKindOf, luhnValid } from './cards.ts'
export type { CardBrand, CardType } from './cards.ts'
export { vaultRoutes } from './vault.http.ts'
