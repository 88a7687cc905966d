// Goal (issue 37): a `live` process started with another master key than the one the database
// was set up with refuses to start, with a message that says so and names the variable,
// instead of starting and failing every card and signature later. A rotation (new key
// current, old key in KURUS_MASTER_KEY_PREVIOUS, then `kurus rotate-master-key`) is not
// refused, and once it has finished the old key alone is.
// Method: `node src/main.ts migrate` and `rotate-master-key` as real processes in `live` on
// one embedded PGlite data directory (the check is the same SQL on PostgreSQL).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'

const KEY_A = 'a1'.repeat(32)
const KEY_B = 'b2'.repeat(32)

interface Run {
  code: number | null
  output: string
}

function run(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['src/main.ts', ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    child.on('exit', (code) => resolve({ code, output }))
  })
}

test('live refuses a master key that cannot open the database; a rotation moves the check', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kurus-master-key-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const env = (masterKey: string, previous = '') => ({
    KURUS_ENV: 'live',
    KURUS_DATA_DIR: dir,
    KURUS_OPERATOR_TOKEN: 'master-key-test-operator-token',
    KURUS_MASTER_KEY: masterKey,
    KURUS_MASTER_KEY_PREVIOUS: previous,
    LOG_LEVEL: 'warn',
  })

  const first = await run(['migrate'], env(KEY_A))
  assert.equal(first.code, 0, first.output)

  // A fresh key pasted into the start command: refused, and the message says why.
  const wrong = await run(['migrate'], env(KEY_B))
  assert.equal(wrong.code, 1, wrong.output)
  assert.match(wrong.output, /KURUS_MASTER_KEY cannot decrypt what this database holds/)
  assert.doesNotMatch(wrong.output, /\n\s+at /, 'a message, not a stack trace')
  assert.ok(!wrong.output.includes(KEY_B) && !wrong.output.includes(KEY_A), 'no key in the output')

  // The rotation's first step (new key current, old one previous) starts.
  const rotating = await run(['migrate'], env(KEY_B, KEY_A))
  assert.equal(rotating.code, 0, rotating.output)
  const rotated = await run(['rotate-master-key'], env(KEY_B, KEY_A))
  assert.equal(rotated.code, 0, rotated.output)

  // Once rotated, the new key alone starts and the old key alone is refused.
  const after = await run(['migrate'], env(KEY_B))
  assert.equal(after.code, 0, after.output)
  const old = await run(['migrate'], env(KEY_A))
  assert.equal(old.code, 1, old.output)
  assert.match(old.output, /KURUS_MASTER_KEY cannot decrypt/)
})
