// Goal: configuration is validated once with errors naming the variable, defaults match docs/configuration.md, demo secrets are generated once and reused.
// Method: loadConfig() on hand-made environments and temporary data directories.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'kurus-config-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const MASTER = 'ab'.repeat(32)

test('defaults', (t) => {
  const dir = tempDir(t)
  const c = loadConfig({ KURUS_DATA_DIR: dir })
  assert.equal(c.env, 'demo')
  assert.equal(c.port, 3000)
  assert.equal(c.host, '127.0.0.1')
  assert.equal(c.publicApiUrl, 'http://localhost:3000')
  assert.equal(c.checkoutUrl, 'http://localhost:3000')
  assert.equal(c.dataDir, dir)
  assert.equal(c.databaseUrl, undefined)
  assert.equal(c.databasePoolSize, 10)
  assert.equal(c.rateLimitRps, 100)
  assert.equal(c.rateLimitBurst, 200)
  assert.equal(c.logLevel, 'info')
  assert.equal(c.keyRollGraceSeconds, 86_400)
  assert.equal(c.masterKey.length, 32)
  assert.ok(Object.isFrozen(c))
  const moved = loadConfig({ KURUS_DATA_DIR: dir, PORT: '8080' })
  assert.equal(moved.publicApiUrl, 'http://localhost:8080')
})

test('demo generates the master key and operator token once, 0600, and reuses them', (t) => {
  const dir = tempDir(t)
  const a = loadConfig({ KURUS_DATA_DIR: dir })
  const b = loadConfig({ KURUS_DATA_DIR: dir })
  assert.ok(a.masterKey.equals(b.masterKey))
  assert.equal(a.operatorToken, b.operatorToken)
  assert.equal(readFileSync(join(dir, 'operator-token'), 'utf8').trim(), a.operatorToken)
  for (const file of ['master.key', 'operator-token']) {
    assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600, file)
  }
  // The environment wins over the files.
  const c = loadConfig({
    KURUS_DATA_DIR: dir,
    KURUS_MASTER_KEY: MASTER,
    KURUS_OPERATOR_TOKEN: 'tok',
  })
  assert.equal(c.masterKey.toString('hex'), MASTER)
  assert.equal(c.operatorToken, 'tok')
  // Base64 is accepted too.
  const d = loadConfig({
    KURUS_DATA_DIR: dir,
    KURUS_MASTER_KEY: Buffer.from(MASTER, 'hex').toString('base64'),
  })
  assert.ok(d.masterKey.equals(c.masterKey))
})

test('live never invents secrets', (t) => {
  const dir = tempDir(t)
  assert.throws(
    () => loadConfig({ KURUS_ENV: 'live', KURUS_DATA_DIR: dir, KURUS_OPERATOR_TOKEN: 'x' }),
    (e: unknown) => e instanceof ConfigError && /KURUS_MASTER_KEY is required/.test(e.message),
  )
  assert.throws(
    () => loadConfig({ KURUS_ENV: 'live', KURUS_DATA_DIR: dir, KURUS_MASTER_KEY: MASTER }),
    (e: unknown) => e instanceof ConfigError && /KURUS_OPERATOR_TOKEN is required/.test(e.message),
  )
  const c = loadConfig({
    KURUS_ENV: 'live',
    KURUS_DATA_DIR: dir,
    KURUS_MASTER_KEY: MASTER,
    KURUS_OPERATOR_TOKEN: 'x',
  })
  assert.equal(c.env, 'live')
})

test('bad values are ConfigErrors that name the variable', (t) => {
  const dir = tempDir(t)
  const cases: [Record<string, string>, RegExp][] = [
    [{ KURUS_ENV: 'prod' }, /KURUS_ENV/],
    [{ PORT: 'http' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ KURUS_RATE_LIMIT_RPS: '0' }, /KURUS_RATE_LIMIT_RPS/],
    [{ KURUS_RATE_LIMIT_BURST: '1.5' }, /KURUS_RATE_LIMIT_BURST/],
    [{ DATABASE_POOL_SIZE: '0' }, /DATABASE_POOL_SIZE/],
    [{ KURUS_KEY_ROLL_GRACE_SECONDS: '-1' }, /KURUS_KEY_ROLL_GRACE_SECONDS/],
    [{ KURUS_MASTER_KEY: 'short' }, /KURUS_MASTER_KEY/],
    [{ LOG_LEVEL: 'verbose' }, /LOG_LEVEL/],
    [{ DATABASE_URL: 'notaurl' }, /^DATABASE_URL must be a PostgreSQL URL/],
    [{ DATABASE_URL: 'mysql://kurus:secret@db/kurus' }, /^DATABASE_URL must be a PostgreSQL URL/],
    [
      { DATABASE_URL: 'postgres://db/kurus', DATABASE_READ_URL: 'replica' },
      /^DATABASE_READ_URL must be a PostgreSQL URL/,
    ],
  ]
  for (const [env, message] of cases) {
    assert.throws(
      () => loadConfig({ KURUS_DATA_DIR: dir, ...env }),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
      JSON.stringify(env),
    )
  }
})

/** `node src/main.ts serve` with this environment, until it exits: its code and output. */
function serveExit(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    child.on('exit', (code) => resolve({ code, out }))
  })
}

test('a bad or unreachable DATABASE_URL stops the start with one JSON line naming it, no stack', async (t) => {
  const dir = tempDir(t)
  const cases: [string, RegExp][] = [
    ['notaurl', /^DATABASE_URL must be a PostgreSQL URL/],
    // Nothing listens on port 1 (and the password must not be printed).
    [
      'postgres://kurus:hunter2secret@127.0.0.1:1/kurus',
      /^cannot connect to the database of DATABASE_URL: .*ECONNREFUSED/,
    ],
  ]
  for (const [url, message] of cases) {
    const { code, out } = await serveExit({ KURUS_DATA_DIR: dir, DATABASE_URL: url, PORT: '0' })
    assert.equal(code, 1, out)
    const lines = out.split('\n').filter(Boolean)
    assert.equal(lines.length, 1, out)
    const line = JSON.parse(lines[0] ?? '') as Record<string, unknown>
    assert.equal(line['level'], 60)
    assert.equal(line['service'], 'kurus')
    assert.equal(typeof line['pid'], 'number')
    assert.equal(typeof line['version'], 'string')
    assert.match(String(line['msg']), message)
    assert.ok(!out.includes('hunter2secret'), 'the password is not printed')
    assert.ok(!('err' in line), 'no stack')
  }
})
