import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { FastifyReply } from 'fastify'

// Static files of the pages, served by us from our own origin (no CDN): read once at start,
// versioned by content hash so a page always loads the script and styles it was built with,
// and browsers may cache them for good.

export interface Asset {
  name: string
  body: Buffer
  contentType: string
  hash: string
}

export interface AssetSource {
  /** Where the file is: a file URL (e.g. `new URL('x.css', import.meta.url)`). */
  file: URL
  contentType: string
}

export interface AssetRegistry {
  /** The path the files are served under (`/assets/`). */
  prefix: string
  get(name: string): Asset | undefined
  /** `<prefix><name>?v=<hash>`: the URL pages link to. Throws for an unknown name. */
  url(name: string): string
}

export const CONTENT_TYPES = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
} as const

export function assetRegistry(
  prefix: string,
  sources: Readonly<Record<string, AssetSource>>,
): AssetRegistry {
  const assets = new Map<string, Asset>(
    Object.entries(sources).map(([name, source]) => {
      const body = readFileSync(source.file)
      const hash = createHash('sha256').update(body).digest('hex').slice(0, 16)
      return [name, { name, body, contentType: source.contentType, hash }]
    }),
  )
  return {
    prefix,
    get: (name) => assets.get(name),
    url: (name) => {
      const asset = assets.get(name)
      if (!asset) throw new Error(`unknown asset ${name}`)
      return `${prefix}${name}?v=${asset.hash}`
    },
  }
}

/** Sends an asset; immutable caching when the request names its current version. */
export function sendAsset(reply: FastifyReply, asset: Asset, version: unknown): FastifyReply {
  return reply
    .header(
      'cache-control',
      version === asset.hash ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
    )
    .header('etag', `"${asset.hash}"`)
    .type(asset.contentType)
    .send(asset.body)
}
