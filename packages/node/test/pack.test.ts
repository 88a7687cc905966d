// Goal: `npm pack` makes a tarball of compiled JavaScript and .d.ts files (prepack runs tsc),
// and the package installed from it works under node_modules, where Node strips no types.
// Method: pack into a temp directory, unpack as node_modules/@kurus/node next to a script that
// imports it by name, and run that script.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'node:test'

const packageDir = resolve(import.meta.dirname, '..')
const repoRoot = resolve(packageDir, '../..')

test('npm pack ships dist/*.js and dist/*.d.ts, and the installed package runs', (t) => {
  const work = mkdtempSync(join(tmpdir(), 'kurus-node-pack-'))
  t.after(() => {
    rmSync(work, { recursive: true, force: true })
    rmSync(join(packageDir, 'dist'), { recursive: true, force: true })
  })
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: packageDir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const [packed] = JSON.parse(output.slice(output.indexOf('['))) as {
    filename: string
    files: { path: string }[]
  }[]
  assert.ok(packed)
  const files = packed.files.map((f) => f.path).sort()
  for (const wanted of ['dist/index.js', 'dist/index.d.ts', 'dist/openapi.d.ts', 'package.json']) {
    assert.ok(files.includes(wanted), `${wanted} in ${files.join(', ')}`)
  }
  assert.ok(!files.some((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), 'no TypeScript source')
  assert.ok(!files.some((f) => f.startsWith('test/')), 'no tests')

  const installed = join(work, 'app/node_modules/@kurus/node')
  mkdirSync(installed, { recursive: true })
  execFileSync('tar', [
    '-xzf',
    join(work, packed.filename),
    '-C',
    installed,
    '--strip-components=1',
  ])
  symlinkSync(
    join(repoRoot, 'node_modules/standardwebhooks'),
    join(work, 'app/node_modules/standardwebhooks'),
  )
  writeFileSync(
    join(work, 'app/check.mjs'),
    `import { Kurus, canonicalString, sign, webhooks } from '@kurus/node'
const canonical = canonicalString('2026-11-22T10:00:00Z', 'GET', '/v1/auth/whoami', '')
const secret = 'whsec_' + Buffer.alloc(32, 1).toString('base64')
const now = new Date()
const headers = {
  'webhook-id': 'evt_1',
  'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
  'webhook-signature': webhooks.sign(secret, 'evt_1', now, '{"id":"evt_1"}'),
}
const kurus = new Kurus({ publicKey: 'pk_demo_x', secretKey: 'sk_demo_x' })
console.log(JSON.stringify({
  signature: sign('sk_demo_vectorSecret0123456789abcdefghijklmnopqrstu', canonical),
  verified: kurus.webhooks.verify('{"id":"evt_1"}', headers, secret).id,
  resources: typeof kurus.payments.create,
}))
`,
  )
  const result = JSON.parse(
    execFileSync(process.execPath, ['check.mjs'], { cwd: join(work, 'app'), encoding: 'utf8' }),
  ) as Record<string, string>
  assert.deepEqual(result, {
    // test/vectors/signing.json, "GET without a body hashes the empty string"
    signature: '8c42deb241be1e99cacd4d2f194459f570d6274e4683c6d3edafa88b4b3d540c',
    verified: 'evt_1',
    resources: 'function',
  })
})
