// The acquirer's public surface: the port, the BIN table and the configured acquirer.
// Other modules import only this file and code against the Acquirer interface.
import type { Acquirer } from './acquirer.port.ts'
import { sandboxBank } from './sandbox-bank.ts'

export type { Acquirer, AuthorizeResult } from './acquirer.port.ts'
export { binInfo } from './bins.ts'

/** The acquirer this deployment charges cards through. */
export function getAcquirer(): Acquirer {
  return sandboxBank
}
