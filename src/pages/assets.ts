import { assetRegistry, CONTENT_TYPES, type Asset } from '../platform/web/assets.ts'

// The hosted pages' static files, served from /assets/ (see platform/web/assets.ts).
const ASSETS = assetRegistry('/assets/', {
  'checkout.css': {
    file: new URL('checkout.css', import.meta.url),
    contentType: CONTENT_TYPES.css,
  },
  'checkout.js': { file: new URL('checkout.js', import.meta.url), contentType: CONTENT_TYPES.js },
  'favicon.svg': { file: new URL('favicon.svg', import.meta.url), contentType: CONTENT_TYPES.svg },
})

export function getAsset(name: string): Asset | undefined {
  return ASSETS.get(name)
}

/** `/assets/<name>?v=<hash>`: the URL pages link to. */
export function assetUrl(name: string): string {
  return ASSETS.url(name)
}
