// Goal (issue 37): the container image starts. No Docker engine runs here, so the test builds
// the image the long way: it reads the Dockerfile, lays out in temp directories exactly what
// each stage's COPY lines copy (from the repository or from an earlier stage), runs its RUN
// lines there (`npm ci --omit=dev`), and starts the image's CMD (`serve`) and a `worker` from
// the final stage's directory with the image's ENV, until /readyz answers 200 and the image's
// HEALTHCHECK command exits 0. A file the Dockerfile forgets to copy (packages/, a migration,
// an asset read at start) fails here as it would in the container.
// Method: on the PGlite pass the image's default (embedded PGlite in KURUS_DATA_DIR); on the
// PostgreSQL pass compose.yaml's shape (`serve --processes 2 --no-worker` and a worker with
// its metrics port) against this file's test database. The Node that runs the layout is the
// test's own Node 24, standing in for the base image's: the layout must carry no Node of its
// own (node_modules/node).
import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  globSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { createTestDatabase, testBackend } from '../helpers/db.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const MASTER_KEY = 'c'.repeat(64)
const OPERATOR_TOKEN = 'image-test-operator-token-0123456789'
const METRICS_TOKEN = 'image-test-metrics-token-0123456789'

interface Stage {
  name: string
  /** The stage's filesystem root, a temp directory. */
  root: string
  workdir: string
  env: Record<string, string>
  cmd: string[] | undefined
  healthcheck: string[] | undefined
  user: string | undefined
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
  const joined = text.replace(/\\\n/g, ' ')
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/)
      return { op: op.toUpperCase(), args: rest.join(' ') }
    })
}

/** `["a", "b"]` (exec form) or a shell line. */
function execForm(args: string): string[] {
  const trimmed = args.trim()
  if (trimmed.startsWith('[')) return JSON.parse(trimmed) as string[]
  return ['/bin/sh', '-c', trimmed]
}

// The RUN lines this test knows how to play, and what each does in a temp directory. A new
// RUN line in the Dockerfile fails the test until it is taught here: that is the point.
const RUN_LINES: [RegExp, (stage: Stage, line: string) => void][] = [
  [
    /^npm ci --omit=dev\b/,
    (stage, line) => {
      const result = spawnSync('sh', ['-c', line], {
        cwd: join(stage.root, stage.workdir),
        encoding: 'utf8',
        // From npm's cache when it has the tarballs (the lockfile pins every integrity hash).
        env: { ...process.env, npm_config_prefer_offline: 'true', NODE_OPTIONS: '' },
      })
      assert.equal(result.status, 0, `${line}:\n${result.stdout}\n${result.stderr}`)
    },
  ],
  [
    // The sources' JavaScript (bin/stripped-sources.js), with the Node that runs the image.
    /^node bin\/strip-types\.js$/,
    (stage) => {
      const result = spawnSync(process.execPath, ['bin/strip-types.js'], {
        cwd: join(stage.root, stage.workdir),
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '' },
      })
      assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`)
    },
  ],
  [
    // The image's data directory; the test gives the processes a temp one instead.
    /^mkdir -p \/var\/lib\/kurus && chown node:node \/var\/lib\/kurus$/,
    () => undefined,
  ],
]

/**
 * Whether .dockerignore lets `path` into the build context. The file is an allowlist (`*`,
 * then `!path` for each thing the image needs), which is all this reads: a path is in when an
 * allowed entry is the path or one of its parent directories.
 */
function inBuildContext(path: string): boolean {
  const lines = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')
  const rules = lines.map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
  assert.equal(rules[0], '*', '.dockerignore starts by leaving everything out')
  const wanted = path.replace(/^\.\//, '').replace(/\/$/, '')
  return rules
    .slice(1)
    .map((rule) => {
      assert.ok(rule.startsWith('!') && !/[*?[]/.test(rule), `an allowlist entry: ${rule}`)
      return rule.slice(1).replace(/\/$/, '')
    })
    .some((allowed) => wanted === allowed || wanted.startsWith(`${allowed}/`))
}

/** Builds every stage of the Dockerfile into temp directories (`roots`); returns the last. */
function build(dockerfile: string, roots: string[]): Stage {
  const stages = new Map<string, Stage>()
  let stage: Stage | undefined
  for (const { op, args } of instructions(dockerfile)) {
    if (op === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.size}`
      stage = {
        name,
        root: mkdtempSync(join(tmpdir(), `kurus-image-${name}-`)),
        workdir: '/',
        env: {},
        cmd: undefined,
        healthcheck: undefined,
        user: undefined,
      }
      stages.set(name, stage)
      roots.push(stage.root)
      continue
    }
    assert.ok(stage, `${op} before FROM`)
    const current: Stage = stage
    switch (op) {
      case 'WORKDIR':
        current.workdir = args
        mkdirSync(join(current.root, args), { recursive: true })
        break
      case 'ENV':
        for (const pair of args.split(/\s+/)) {
          const [k = '', ...v] = pair.split('=')
          current.env[k] = v.join('=')
        }
        break
      case 'COPY': {
        const words = args.split(/\s+/)
        const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length)
        const paths = words.filter((w) => !w.startsWith('--'))
        const dest = paths.pop()
        assert.ok(dest && paths.length > 0, `COPY ${args}`)
        const source = from === undefined ? ROOT : (stages.get(from)?.root ?? '')
        assert.ok(from === undefined || stages.has(from), `COPY --from=${from}: no such stage`)
        const target = join(current.root, dest.startsWith('/') ? dest : join(current.workdir, dest))
        for (const p of paths) {
          const src = join(source, p)
          assert.ok(existsSync(src), `COPY ${p}: not in ${from ?? 'the build context'}`)
          // Docker sends only what .dockerignore lets through: a COPY of anything else fails
          // the build (as `COPY docs/testing-cards.md` did while docs/ was left out).
          if (from === undefined)
            assert.ok(inBuildContext(p), `COPY ${p}: .dockerignore leaves it out`)
          // Docker copies a directory's contents into the destination, and a file into the
          // destination directory when it ends with a slash.
          const file =
            !statSync(src).isDirectory() && dest.endsWith('/') ? join(target, basename(p)) : target
          mkdirSync(dirname(file), { recursive: true })
          cpSync(src, file, { recursive: true, verbatimSymlinks: true })
        }
        break
      }
      case 'RUN': {
        const known = RUN_LINES.find(([re]) => re.test(args))
        assert.ok(known, `the test does not know this RUN line: ${args}`)
        known[1](current, args)
        break
      }
      case 'USER':
        current.user = args
        break
      case 'CMD':
        current.cmd = execForm(args)
        break
      case 'HEALTHCHECK':
        current.healthcheck = execForm(args.replace(/^(--\S+\s+)*CMD\s+/, ''))
        break
      case 'EXPOSE':
        break
      default:
        assert.fail(`the test does not know the Dockerfile instruction ${op}`)
    }
  }
  assert.ok(stage, 'the Dockerfile has no stage')
  return stage
}

/** The image's Node is the test's Node 24: `node` in a command line means process.execPath. */
function withNode(argv: string[]): [string, string[]] {
  const [first, ...rest] = argv
  assert.equal(first, 'node', `expected a node command, got ${argv.join(' ')}`)
  return [process.execPath, rest]
}

interface Started {
  child: ChildProcess
  output(): string
}

function start(image: Stage, argv: string[], env: Record<string, string>): Started {
  const [cmd, args] = withNode(argv)
  // Only the image's ENV and what compose.yaml would set: nothing of the test's environment
  // (its NODE_OPTIONS, module cache) reaches the processes.
  const child = spawn(cmd, args, {
    cwd: join(image.root, image.workdir),
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...image.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()))
  return { child, output: () => out }
}

function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
}

async function stop(started: Started): Promise<void> {
  started.child.kill('SIGTERM')
  await stopped(started.child)
}

async function until(what: string, started: Started, check: () => Promise<boolean>) {
  for (let i = 0; i < 1_200; i++) {
    if (started.child.exitCode !== null) {
      assert.fail(`${what}: the process exited (${started.child.exitCode}):\n${started.output()}`)
    }
    if (await check().catch(() => false)) return
    await delay(100)
  }
  assert.fail(`${what} did not happen:\n${started.output()}`)
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  assert.ok(address && typeof address === 'object')
  return address.port
}

function healthcheck(image: Stage, env: Record<string, string>): number | null {
  assert.ok(image.healthcheck, 'the image has a HEALTHCHECK')
  const [cmd, args] = withNode(image.healthcheck)
  return spawnSync(cmd, args, {
    env: { PATH: process.env['PATH'] ?? '', ...image.env, ...env },
    timeout: 10_000,
  }).status
}

test('the image, laid out from the Dockerfile, starts serve and worker', async (t) => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  const roots: string[] = []
  t.after(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true })
  })
  const image = build(dockerfile, roots)
  const app = join(image.root, image.workdir)

  // Only what runs: no second Node, no dev tooling, no tests; the SDK sources the CLI imports.
  assert.equal(image.user, 'node', 'the image runs as a non-root user')
  assert.ok(existsSync(join(app, 'src/main.ts')))
  assert.ok(existsSync(join(app, 'packages/node/src/index.ts')))
  assert.ok(!existsSync(join(app, 'node_modules/node')), 'the image carries a second Node')
  // Of the docs, only the page the server itself serves (/docs/testing).
  assert.deepEqual(readdirSync(join(app, 'docs')), ['testing-cards.md'])
  for (const dev of ['typescript', 'eslint', 'playwright-core', 'test', 'bench']) {
    assert.ok(
      !existsSync(join(app, dev)) && !existsSync(join(app, 'node_modules', dev)),
      `${dev} is in the image`,
    )
  }
  assert.ok(image.cmd, 'the image has a CMD')
  // Every source the processes load has its JavaScript in the image, where the hook in
  // NODE_OPTIONS looks for it (by the hash of its bytes): Node's type stripper stays unloaded.
  assert.equal(image.env['NODE_OPTIONS'], '--import=./bin/stripped-sources.js')
  for (const file of globSync(['src/**/*.ts', 'packages/*/src/**/*.ts'], { cwd: app })) {
    const key = createHash('sha1')
      .update(readFileSync(join(app, file)))
      .digest('hex')
    assert.ok(existsSync(join(app, '.artifacts/stripped', `${key}.js`)), `${file} not stripped`)
  }

  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), 'kurus-image-data-'))
  const env: Record<string, string> = {
    KURUS_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    KURUS_MASTER_KEY: MASTER_KEY,
    KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
    KURUS_METRICS_TOKEN: METRICS_TOKEN,
    LOG_LEVEL: 'info',
  }
  const ready = async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200
  const started: Started[] = []
  t.after(async () => {
    await Promise.all(started.map(stop))
    rmSync(dataDir, { recursive: true, force: true })
  })

  const db = testBackend() === 'postgres' ? await createTestDatabase() : undefined
  if (db) t.after(() => db.drop())
  // PostgreSQL: compose.yaml's API (two processes) and worker, with its metrics port.
  const apiArgv =
    db === undefined
      ? image.cmd
      : ['node', 'src/main.ts', 'serve', '--processes', '2', '--no-worker']
  const dbEnv = db?.url ? { DATABASE_URL: db.url } : {}
  const api = start(image, apiArgv, { ...env, ...dbEnv })
  started.push(api)
  await until('the API answers /readyz 200', api, ready)
  assert.equal(healthcheck(image, { PORT: String(port) }), 0, 'the HEALTHCHECK passes')
  const metrics = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  })
  assert.equal(metrics.status, 200)
  // Every line the process wrote is JSON (one log format).
  for (const line of api.output().split('\n').filter(Boolean)) {
    assert.doesNotThrow(() => JSON.parse(line), `not a JSON log line: ${line}`)
  }

  if (db === undefined) {
    // Embedded PGlite is one process: the worker runs on the same data once the API is gone.
    await stop(api)
    started.pop()
  }
  const workerPort = await freePort()
  const worker = start(image, ['node', 'src/main.ts', 'worker', '--concurrency', '4'], {
    ...env,
    ...dbEnv,
    KURUS_WORKER_METRICS_PORT: String(workerPort),
  })
  started.push(worker)
  await until('the worker serves its /metrics', worker, async () => {
    const res = await fetch(`http://127.0.0.1:${workerPort}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    })
    return res.status === 200 && worker.output().includes('"msg":"worker started"')
  })
})
