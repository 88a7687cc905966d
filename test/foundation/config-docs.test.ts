// Goal: the configuration reference stays true: every variable src/config.ts reads is listed
// in docs/operations.md and docs/configuration.md, and neither lists one it does not read.
// Method: the variable names are read from config.ts's source (env['X'], intFrom(env, 'X', …),
// secretFrom(env, 'X', …)) and from the first column of the docs' tables.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

const source = readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8')
const read = new Set(
  [
    ...source.matchAll(
      /env\['([A-Z0-9_]+)'\]|(?:intFrom|secretFrom|postgresUrlFrom)\(\s*env,\s*'([A-Z0-9_]+)'/g,
    ),
  ].map((m) => m[1] ?? m[2] ?? ''),
)

/** Variables named in the first column of a markdown table in the doc's section. */
function documented(path: string, section: string, end: RegExp): Set<string> {
  const text = readFileSync(new URL(`../../docs/${path}`, import.meta.url), 'utf8')
  const start = text.indexOf(section)
  assert.ok(start >= 0, `${path} has ${section}`)
  const rest = text.slice(start + section.length)
  const stop = rest.search(end)
  const names = new Set<string>()
  for (const line of (stop < 0 ? rest : rest.slice(0, stop)).split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1] ?? ''
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(m[1] ?? '')
  }
  return names
}

test('config.ts reads the variables it is known to read', () => {
  for (const name of ['KURUS_ENV', 'DATABASE_READ_URL', 'REDIS_URL', 'KURUS_MASTER_KEY']) {
    assert.ok(read.has(name), name)
  }
})

for (const [path, section] of [
  ['operations.md', '## Configuration'],
  ['configuration.md', '# Configuration'],
] as const) {
  test(`docs/${path} lists exactly the variables config.ts reads`, () => {
    const listed = documented(path, section, /\n## /)
    assert.deepEqual([...read].filter((n) => !listed.has(n)).sort(), [], 'read but not listed')
    assert.deepEqual([...listed].filter((n) => !read.has(n)).sort(), [], 'listed but not read')
  })
}
