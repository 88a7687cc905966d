// The acquirer's public surface: the port, the BIN table and the configured acquirer.
// Other modules import only this file and code against the Acquirer interface.
export type { AuthorizeResult } from './acquirer.port.ts'
export { binInfo } from './bins.ts'
/** The sandbox bank: the acquirer the app is built with (Deps.acquirer) until a real one is. */
export { sandboxBank } from './sandbox-bank.ts'
export { decimalToKurus, kurusToDecimal } from './bank-wire.ts'
export {
  estV3Authorize,
  estV3Authorize3d,
  estV3Credit,
  estV3Hash,
  estV3OrderStatus,
  estV3PostAuth,
  estV3ThreeDForm,
  estV3VerifyCallback,
  estV3Void,
  naturalCaseCompare,
} from './est-v3.ts'
export { fieldsOfAutoPostPage } from './bank-simulator.ts'
export { startEstV3Simulator, type EstV3Simulator } from './est-v3.simulator.ts'
/** The acquirer the app runs on: bank POS routing, the sandbox bank in demo without one. */
export {
  acquirerFacts,
  acquirerOfPayment,
  acquirerOfPaymentColumn,
  bankAcquirer,
} from './pos-router.ts'
export { acquirerRoutes, operatorPosAccountRoutes } from './acquirer.http.ts'
export {
  garanti3dHash,
  garantiAuthorize,
  garantiAuthorize3d,
  garantiCallbackHashValid,
  garantiOrderInquiry,
  garantiPostAuth,
  garantiRefund,
  garantiRequestHash,
  garantiThreeDForm,
  garantiVerifyCallback,
  garantiVoid,
} from './garanti.ts'
export { startGarantiSimulator } from './garanti.simulator.ts'
/** Demo only: the three bank simulators behind `kurus bank-simulators`. */
export { applyDemoBankCommand, DEMO_BANK_COMMANDS, startDemoBanks } from './demo-banks.ts'
export {
  posnetAuthorize,
  posnetAuthorize3d,
  posnetCapture,
  posnetOrderId,
  posnetOrderStatus,
  posnetRequestMac,
  posnetResponseMacValid,
  posnetReturn,
  posnetReverse,
  posnetThreeDForm,
  posnetVerifyCallback,
  posnetXid,
} from './posnet.ts'
export { startPosnetSimulator } from './posnet.simulator.ts'
/** POS accounts for the dashboard's "Banka POS" pages: the API's service functions. */
export {
  createPosAccount,
  getPosAccount,
  listPosAccounts,
  updatePosAccount,
  type PosAccount,
} from './pos-accounts.service.ts'
export { posAccountNames, testPosAccount } from './pos-test.service.ts'
export {
  CreatePosAccountBody,
  ReconciliationBody,
  UpdatePosAccountBody,
} from './acquirer.schemas.ts'
/** The dashboard's reconciliation page: the same functions as /v1/acquirer-reconciliation. */
export {
  getReconciliation,
  runReconciliation,
  type Reconciliation,
  type ReconciliationItem,
} from './reconciliation.service.ts'
export { EST_V3_BANKS } from './est-v3.ts'
/** The daily POS reconciliation (src/jobs.ts registers it). */
export { acquirerReconcilers } from './acquirer.jobs.ts'
export { garantiListDate, garantiOrderListRequest } from './garanti.ts'
