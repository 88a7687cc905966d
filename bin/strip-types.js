// `node bin/strip-types.js`: writes the JavaScript of every TypeScript source the image runs
// (src/, packages/*/src/) for bin/stripped-sources.js, under .artifacts/stripped/, named by
// the hash of the source. The image runs it at build time (Dockerfile); so does the bench
// before it starts the server as the image does.
import { globSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { stripTypeScriptTypes } from 'node:module'
import { join } from 'node:path'
import process from 'node:process'
import { URL, fileURLToPath } from 'node:url'
import { STRIPPED_DIR, sourceKey } from './stripped-sources.js'

// stripTypeScriptTypes is the stripper Node runs on a .ts import; it still warns that it is
// experimental, once per process, which says nothing to whoever builds the image.
process.removeAllListeners('warning')
const root = fileURLToPath(new URL('..', import.meta.url))
mkdirSync(STRIPPED_DIR, { recursive: true })
const files = globSync(['src/**/*.ts', 'packages/*/src/**/*.ts'], { cwd: root })
for (const file of files) {
  const bytes = readFileSync(join(root, file))
  const js = stripTypeScriptTypes(bytes.toString('utf8'), { mode: 'strip' })
  // Written aside and renamed: a process loading meanwhile never reads half a file.
  const target = join(STRIPPED_DIR, `${sourceKey(bytes)}.js`)
  writeFileSync(`${target}.${process.pid}.tmp`, js)
  renameSync(`${target}.${process.pid}.tmp`, target)
}
process.stdout.write(`stripped ${files.length} sources into ${STRIPPED_DIR}\n`)
