// The vault's public surface. Other modules import only this file.
// detokenize is for the acquirer module alone (README.md).
export {
  bindCardToCustomer,
  detokenize,
  getCardToken,
  listCardAccess,
  revokeCardToken,
  rotateMasterKey,
  tokenizeCard,
} from './vault.service.ts'
export type {
  AuditRow,
  CardTokenInfo,
  CardTokenView,
  DetokenizeCaller,
  DetokenizedCard,
  RotationReport,
  TokenizeCardInput,
} from './vault.service.ts'
export { brandByPrefix, cardKindOf, luhnValid } from './cards.ts'
export type { CardBrand, CardKind, CardType } from './cards.ts'
export { vaultRoutes } from './vault.http.ts'
