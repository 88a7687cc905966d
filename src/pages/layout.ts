import { buyerShell, type BuyerShellInput } from '../platform/web/shell.ts'
import { hostedAssets } from './assets.ts'

// The hosted pages' shell is the buyer variant of the one shell (platform/web/shell.ts),
// served with the files under /assets/.

export { acceptedBrands, brandMarks, icons } from '../platform/web/icons.ts'

export type LayoutInput = Omit<BuyerShellInput, 'assets'>

export function layout(input: LayoutInput): string {
  return buyerShell({ ...input, assets: hostedAssets })
}
