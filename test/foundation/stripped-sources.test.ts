// Goal: with bin/stripped-sources.js preloaded (the image's NODE_OPTIONS) the TypeScript
// sources run as the JavaScript bin/strip-types.js wrote for them, and Node's own type stripper
// is never loaded (~18 MiB of an API process's memory, issue 43); a source changed since that
// build is stripped by Node as usual, never run from a stale entry.
// Method: child Nodes that import a source and report process.moduleLoadList's amaro entry
// (Node's stripper) next to what the source computed.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const ROOT = join(import.meta.dirname, '../..')
// Where bin/stripped-sources.js looks, and its name for a source (the SHA-1 of its bytes).
const STRIPPED_DIR = join(ROOT, '.artifacts/stripped')
const sourceKey = (bytes: string) => createHash('sha1').update(bytes).digest('hex')

function node(args: string[]): string {
  const result = spawnSync(process.execPath, args, {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  })
  assert.equal(result.status, 0, result.stderr)
  return result.stdout
}

/** What importing `url` with the hook preloaded gives: its export `probe`, and amaro's load. */
function load(url: string): { probe: unknown; stripper: boolean } {
  const script = `const { probe } = await import(${JSON.stringify(url)});
    const stripper = process.moduleLoadList.some((m) => m.includes('amaro'));
    console.log(JSON.stringify({ probe, stripper }))`
  const out = node(['--import', './bin/stripped-sources.js', '--input-type=module', '-e', script])
  return JSON.parse(out) as { probe: unknown; stripper: boolean }
}

test('the sources load from what bin/strip-types.js wrote; Node’s stripper stays unloaded', () => {
  assert.match(node(['bin/strip-types.js']), /^stripped \d+ sources/)
  const dir = mkdtempSync(join(tmpdir(), 'kurus-stripped-'))
  try {
    // A module of the app's (and everything it imports), then the same without the hook.
    const probe = join(dir, 'probe.mjs')
    writeFileSync(
      probe,
      `const { StatementNames } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'src/platform/db/prepared.ts')).href)})
       export const probe = new StatementNames(1).nameFor('select 1')`,
    )
    const hooked = load(pathToFileURL(probe).href)
    assert.match(String(hooked.probe), /^k[\w-]{27}$/)
    assert.equal(hooked.stripper, false)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a source changed since the build is stripped by Node, not run from the old entry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kurus-stripped-'))
  const before = 'export const probe: number = 1\n'
  const stale = join(STRIPPED_DIR, `${sourceKey(before)}.js`)
  try {
    node(['bin/strip-types.js'])
    // The entry the build would have written for the old text…
    writeFileSync(stale, 'export const probe = 1\n')
    const source = join(dir, 'changed.ts')
    writeFileSync(source, before)
    assert.deepEqual(load(pathToFileURL(source).href), { probe: 1, stripper: false })
    // …and the file edited since: the new text runs, stripped by Node.
    writeFileSync(source, 'export const probe: number = 2\n')
    assert.deepEqual(load(pathToFileURL(source).href), { probe: 2, stripper: true })
  } finally {
    rmSync(dir, { recursive: true, force: true })
    rmSync(stale, { force: true })
  }
})
