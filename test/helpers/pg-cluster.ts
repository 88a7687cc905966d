import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

// A throwaway PostgreSQL cluster of a test's own (initdb into a temp dir, pg_ctl on a spare
// port) for tests that stop and start the server: never the shared one.

function pgBin(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  const version = versions[0]
  assert.ok(
    version,
    'PostgreSQL server binaries (initdb, pg_ctl) are needed under /usr/lib/postgresql',
  )
  return join(root, version, 'bin')
}

/** initdb refuses root, so as root the cluster runs as the postgres user. */
export class PrivateCluster {
  readonly dir: string
  readonly port: number
  private readonly bin = pgBin()
  private readonly asRoot = process.getuid?.() === 0

  constructor(port: number) {
    this.port = port
    this.dir = mkdtempSync(join(tmpdir(), 'kurus-pg-'))
    if (this.asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
      chownSync(this.dir, uid, gid)
    }
  }

  private run(tool: string, args: string[]): void {
    const [cmd, argv] = this.asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(this.bin, tool), ...args]]
      : [join(this.bin, tool), args]
    const result = spawnSync(cmd, argv, { cwd: this.dir, encoding: 'utf8' })
    if (result.status !== 0) {
      throw new Error(`${tool} ${args.join(' ')}: ${result.stdout}${result.stderr}`)
    }
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/kurus`
  }

  async init(): Promise<void> {
    this.run('initdb', ['-D', join(this.dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'])
    this.start()
    const admin = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${this.port}/postgres`,
    })
    await admin.connect()
    await admin.query('create database kurus')
    await admin.end()
  }

  /** fsync off: a throwaway cluster; -m immediate stops lose nothing the OS already has. */
  private get options(): string {
    return `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`
  }

  private ctl(...args: string[]): void {
    const data = join(this.dir, 'data')
    this.run('pg_ctl', ['-D', data, '-l', join(this.dir, 'log'), '-o', this.options, ...args])
  }

  start(): void {
    this.ctl('-w', 'start')
  }

  /** A crash and a start in one: `pg_ctl restart -m immediate`. */
  restart(): void {
    this.ctl('-m', 'immediate', '-w', 'restart')
  }

  stop(mode: 'immediate' | 'fast'): void {
    this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', mode, '-w', 'stop'])
  }

  remove(): void {
    try {
      this.stop('fast')
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true })
  }
}
