import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

// The pages' static files, served by us from our own origin (no CDN): read once at start,
// versioned by content hash so a page always loads the script and styles it was built with,
// and browsers may cache them for good.

export interface Asset {
  name: string
  body: Buffer
  contentType: string
  hash: string
}

const FILES: Readonly<Record<string, string>> = {
  'checkout.css': 'text/css; charset=utf-8',
  'checkout.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
}

function load(name: string, contentType: string): Asset {
  const body = readFileSync(fileURLToPath(new URL(name, import.meta.url)))
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16)
  return { name, body, contentType, hash }
}

const ASSETS: ReadonlyMap<string, Asset> = new Map(
  Object.entries(FILES).map(([name, type]) => [name, load(name, type)]),
)

export function getAsset(name: string): Asset | undefined {
  return ASSETS.get(name)
}

/** `/assets/<name>?v=<hash>`: the URL pages link to. */
export function assetUrl(name: string): string {
  const asset = ASSETS.get(name)
  if (!asset) throw new Error(`unknown asset ${name}`)
  return `/assets/${name}?v=${asset.hash}`
}
