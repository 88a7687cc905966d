// `node --import ./bin/stripped-sources.js …` (the image sets it in NODE_OPTIONS): the
// TypeScript sources are loaded as the JavaScript `node bin/strip-types.js` wrote for them at
// build time, so Node's own type stripper (a WebAssembly compiler, ~18 MiB of an API process's
// resident memory: docs/performance.md, "Round 3, part 4") is never loaded. Each source is
// looked up by the hash of its bytes: a file changed since the build has no entry and Node
// strips it as usual, so the cache can be stale but never wrong. The module keeps its file URL,
// so import.meta and stack traces are the source's ("strip" mode keeps every position).
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { registerHooks } from 'node:module'
import { URL, fileURLToPath } from 'node:url'

export const STRIPPED_DIR = fileURLToPath(new URL('../.artifacts/stripped/', import.meta.url))

/** The cache's name for a source: the SHA-1 of its bytes. */
export function sourceKey(source) {
  return createHash('sha1').update(source).digest('hex')
}

registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:') && url.endsWith('.ts')) {
      let source
      try {
        const key = sourceKey(readFileSync(fileURLToPath(url)))
        source = readFileSync(`${STRIPPED_DIR}${key}.js`, 'utf8')
      } catch {
        // No such source (Node reports it below) or no entry for it: Node strips it.
      }
      if (source !== undefined) return { format: 'module', source, shortCircuit: true }
    }
    return nextLoad(url, context)
  },
})
