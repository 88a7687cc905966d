import { assetRegistry, CONTENT_TYPES } from '../platform/web/assets.ts'
import { BASE_STYLESHEET } from '../platform/web/shell.ts'

// The hosted pages' static files, served from /assets/ (see platform/web/assets.ts).
export const hostedAssets = assetRegistry('/assets/', {
  'base.css': BASE_STYLESHEET,
  'checkout.css': {
    file: new URL('checkout.css', import.meta.url),
    contentType: CONTENT_TYPES.css,
  },
  'checkout.js': { file: new URL('checkout.js', import.meta.url), contentType: CONTENT_TYPES.js },
  'favicon.svg': { file: new URL('favicon.svg', import.meta.url), contentType: CONTENT_TYPES.svg },
})
