// The high-availability test environment (`npm run test:ha`, docs/operations.md "High
// availability"): one network namespace per host on this machine, joined by a bridge that
// lives in a namespace of its own (the machine's own network, its PostgreSQL on
// 127.0.0.1:5432 and its Redis are never touched):
//
//   kha-etcd  10.242.0.10  etcd (one member: the DCS Patroni elects through)
//   kha-db1   10.242.0.11  PostgreSQL + Patroni (REST on :8008)
//   kha-db2   10.242.0.12  PostgreSQL + Patroni, the synchronous standby
//   kha-lb    10.242.0.20  HAProxy: :5432 → the node whose Patroni says /primary,
//                          :8080 → the two API hosts
//   kha-api1  10.242.0.31  `kurus serve --no-worker` on :3000
//   kha-api2  10.242.0.32  `kurus serve --no-worker` on :3000
//   kha-wrk   10.242.0.33  `kurus worker`
//   kha-cli   10.242.0.40  the client (test/ha/client.ts)
//
// Every process runs inside its host's namespace, so teardown is "kill -9 whatever runs in a
// kha-* namespace, delete the namespaces, remove the temp dir" and works after any failure.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'

const PREFIX = 'kha-'
const SWITCH = `${PREFIX}sw`
const NET = '10.242.0'
export const HOSTS = {
  etcd: 10,
  db1: 11,
  db2: 12,
  lb: 20,
  api1: 31,
  api2: 32,
  wrk: 33,
  cli: 40,
} as const
export type Host = keyof typeof HOSTS
export type DbHost = 'db1' | 'db2'

export function addr(host: Host): string {
  return `${NET}.${HOSTS[host]}`
}
const ns = (host: Host) => `${PREFIX}${host}`

export const LB_PG_URL = `postgres://postgres@${addr('lb')}:5432/kurus`
export const LB_API_URL = `http://${addr('lb')}:8080`
export const OPERATOR_TOKEN = 'ha-operator-token-0123456789abcdef'
const MASTER_KEY = 'a'.repeat(64)

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** Runs a command inside a host's namespace and returns its output (throws on failure). */
export function inHost(host: Host, cmd: string, args: string[]): string {
  return run('ip', ['netns', 'exec', ns(host), cmd, ...args])
}

/** curl from inside a namespace: the HTTP status (0 when nothing answers) and the body. */
export function curl(from: Host, url: string, timeoutS = 2): { status: number; body: string } {
  const r = spawnSync(
    'ip',
    ['netns', 'exec', ns(from), 'curl', '-s', '-m', String(timeoutS), '-w', '\n%{http_code}', url],
    { encoding: 'utf8' },
  )
  const lines = (r.stdout ?? '').split('\n')
  const status = Number(lines.pop() ?? '0') || 0
  return { status, body: lines.join('\n') }
}

// ---------------------------------------------------------------------------------------
// Packages

const PACKAGES = ['patroni', 'etcd-server', 'etcd-client', 'haproxy', 'curl'] as const

/** Debian's packages, installed when missing (as .ci/run does for chromium). */
export function ensurePackages(): void {
  const missing = PACKAGES.filter(
    (p) => spawnSync('dpkg', ['-s', p], { stdio: 'ignore' }).status !== 0,
  )
  if (missing.length === 0) return
  process.stdout.write(`installing ${missing.join(' ')} (apt-get)\n`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  let r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], {
    stdio: 'inherit',
    env,
  })
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env })
    r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], {
      stdio: 'inherit',
      env,
    })
  }
  if (r.status !== 0) throw new Error(`apt-get install ${missing.join(' ')} failed`)
}

function pgBinDir(): string {
  const root = '/usr/lib/postgresql'
  const version = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))[0]
    : undefined
  if (!version) throw new Error('PostgreSQL server binaries are needed under /usr/lib/postgresql')
  return join(root, version, 'bin')
}

// ---------------------------------------------------------------------------------------
// Teardown (also of a previous run that died without one)

function namespaces(): string[] {
  return run('ip', ['netns', 'list'])
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith(PREFIX))
}

function pidsIn(name: string): number[] {
  try {
    return run('ip', ['netns', 'pids', name]).split('\n').filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/** kill -9 of every process in a kha-* namespace, then the namespaces themselves. */
export function teardownNetwork(): void {
  for (let round = 0; round < 20; round++) {
    const pids = namespaces().flatMap(pidsIn)
    if (pids.length === 0) break
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone already
      }
    }
    spawnSync('sleep', ['0.2'])
  }
  for (const name of namespaces()) spawnSync('ip', ['netns', 'del', name])
}

// ---------------------------------------------------------------------------------------
// The environment

export interface EnvOptions {
  /** Where the repository is (the service runs from its sources). */
  repo: string
}

export class HaEnv {
  readonly dir: string
  readonly children = new Map<string, ChildProcess>()
  readonly events: string[] = []
  private readonly repo: string
  private readonly pgBin = pgBinDir()
  private readonly pgUid: number
  private readonly pgGid: number

  constructor(options: EnvOptions) {
    this.repo = options.repo
    this.dir = mkdtempSync(join(tmpdir(), 'kurus-ha-'))
    // The postgres user (Patroni) must reach its own directory inside.
    chmodSync(this.dir, 0o755)
    this.pgUid = Number(run('id', ['-u', 'postgres']).trim())
    this.pgGid = Number(run('id', ['-g', 'postgres']).trim())
  }

  note(what: string): void {
    this.events.push(`${new Date().toISOString()} ${what}`)
  }

  /** Starts `cmd` inside `host`'s namespace, its output in <dir>/<name>.log. */
  spawnIn(
    host: Host,
    name: string,
    cmd: string,
    args: string[],
    options: { env?: Record<string, string>; asPostgres?: boolean; cwd?: string } = {},
  ): ChildProcess {
    const log = join(this.dir, `${name}.log`)
    const fd = openSync(log, 'a')
    try {
      const argv = options.asPostgres
        ? ['netns', 'exec', ns(host), 'runuser', '-u', 'postgres', '--', cmd, ...args]
        : ['netns', 'exec', ns(host), cmd, ...args]
      const child = spawn('ip', argv, {
        stdio: ['ignore', fd, fd],
        cwd: options.cwd ?? this.dir,
        env: { ...process.env, ...options.env },
      })
      this.children.set(name, child)
      this.note(`${name} started in ${ns(host)} (pid ${child.pid})`)
      return child
    } finally {
      closeSync(fd)
    }
  }

  log(name: string): string {
    const file = join(this.dir, `${name}.log`)
    return existsSync(file) ? readFileSync(file, 'utf8') : ''
  }

  tail(names: string[], lines = 20): string {
    return names
      .map((n) => `--- ${n}\n${this.log(n).split('\n').slice(-lines).join('\n')}`)
      .join('\n')
  }

  /** The namespaces, the bridge and one veth per host (eth0 inside, kha-<host> on the bridge). */
  network(): void {
    teardownNetwork()
    run('ip', ['netns', 'add', SWITCH])
    run('ip', ['-n', SWITCH, 'link', 'add', 'br0', 'type', 'bridge'])
    run('ip', ['-n', SWITCH, 'link', 'set', 'br0', 'up'])
    for (const host of Object.keys(HOSTS) as Host[]) {
      run('ip', ['netns', 'add', ns(host)])
      run('ip', ['-n', ns(host), 'link', 'set', 'lo', 'up'])
      run('ip', [
        '-n',
        SWITCH,
        'link',
        'add',
        ns(host),
        'type',
        'veth',
        'peer',
        'name',
        'eth0',
        'netns',
        ns(host),
      ])
      run('ip', ['-n', SWITCH, 'link', 'set', ns(host), 'master', 'br0'])
      run('ip', ['-n', SWITCH, 'link', 'set', ns(host), 'up'])
      run('ip', ['-n', ns(host), 'addr', 'add', `${addr(host)}/24`, 'dev', 'eth0'])
      run('ip', ['-n', ns(host), 'link', 'set', 'eth0', 'up'])
    }
    this.note('network up')
  }

  /** Pulls a host's cable: its switch port goes down, packets vanish (no RST, as a dead host). */
  cutLink(host: Host): void {
    run('ip', ['-n', SWITCH, 'link', 'set', ns(host), 'down'])
    this.note(`link of ${ns(host)} cut`)
  }

  async etcd(): Promise<void> {
    const a = addr('etcd')
    this.spawnIn('etcd', 'etcd', 'etcd', [
      '--name',
      'etcd',
      '--data-dir',
      join(this.dir, 'etcd'),
      '--listen-client-urls',
      `http://${a}:2379`,
      '--advertise-client-urls',
      `http://${a}:2379`,
      '--listen-peer-urls',
      `http://${a}:2380`,
      '--initial-advertise-peer-urls',
      `http://${a}:2380`,
      '--initial-cluster',
      `etcd=http://${a}:2380`,
      '--heartbeat-interval',
      '100',
      '--election-timeout',
      '1000',
    ])
    await this.until(
      'etcd healthy',
      30_000,
      () => curl('lb', `http://${a}:2379/health`).status === 200,
    )
  }

  private patroniConfig(host: DbHost): string {
    const a = addr(host)
    const home = join(this.dir, host)
    // Patroni's YAML is a superset of JSON: the configuration is written as JSON.
    const config = {
      scope: 'kurus',
      name: host,
      log: { level: 'INFO' },
      restapi: { listen: `${a}:8008`, connect_address: `${a}:8008` },
      etcd3: { hosts: `${addr('etcd')}:2379` },
      bootstrap: {
        dcs: {
          // A dead leader's key expires after ttl seconds; the standby takes over on its next
          // loop. loop_wait + 2 × retry_timeout ≤ ttl keeps a live leader from losing its key.
          ttl: 10,
          loop_wait: 1,
          retry_timeout: 3,
          // Only the synchronous standby may be promoted: it has every acknowledged commit.
          synchronous_mode: true,
          postgresql: {
            use_pg_rewind: true,
            parameters: {
              synchronous_commit: 'on',
              wal_level: 'replica',
              hot_standby: 'on',
              wal_log_hints: 'on',
              max_wal_senders: 5,
              max_replication_slots: 5,
              wal_keep_size: '128MB',
              max_connections: 80,
              shared_buffers: '16MB',
            },
          },
        },
        initdb: [{ encoding: 'UTF8' }, { locale: 'C' }, { 'auth-local': 'trust' }],
      },
      postgresql: {
        listen: `${a},127.0.0.1:5432`,
        connect_address: `${a}:5432`,
        data_dir: join(home, 'data'),
        bin_dir: this.pgBin,
        pgpass: join(home, 'pgpass'),
        authentication: {
          superuser: { username: 'postgres', password: 'postgres' },
          replication: { username: 'replicator', password: 'replicator' },
        },
        parameters: { unix_socket_directories: home },
        // A closed test network: trust inside it (production uses scram and TLS).
        pg_hba: [
          'local all all trust',
          `host all all ${NET}.0/24 trust`,
          `host replication all ${NET}.0/24 trust`,
          'host all all 127.0.0.1/32 trust',
        ],
      },
      tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
    }
    const file = join(home, 'patroni.yml')
    writeFileSync(file, JSON.stringify(config, null, 2))
    return file
  }

  startPatroni(host: DbHost): void {
    const home = join(this.dir, host)
    mkdirSync(home, { recursive: true })
    chownSync(home, this.pgUid, this.pgGid)
    const file = this.patroniConfig(host)
    chownSync(file, this.pgUid, this.pgGid)
    this.spawnIn(host, host, 'patroni', [file], { asPostgres: true, cwd: home })
  }

  /** The Patroni view of the cluster (GET /cluster on any reachable node). */
  cluster(): { members: { name: string; role: string; state: string; lag?: unknown }[] } | null {
    for (const host of ['db1', 'db2'] as const) {
      const r = curl('lb', `http://${addr(host)}:8008/cluster`, 1)
      if (r.status === 200) return JSON.parse(r.body) as never
    }
    return null
  }

  /** Which node Patroni's REST API calls primary (answers 200 on /primary), if any. */
  primary(): DbHost | undefined {
    for (const host of ['db1', 'db2'] as const) {
      if (curl('lb', `http://${addr(host)}:8008/primary`, 1).status === 200) return host
    }
    return undefined
  }

  async patroni(): Promise<void> {
    // db1 first, so it bootstraps (initdb) and db2 clones it (pg_basebackup).
    this.startPatroni('db1')
    await this.until('db1 primary', 90_000, () => this.primary() === 'db1', ['db1'])
    this.startPatroni('db2')
    await this.until(
      'db2 the synchronous standby, streaming',
      120_000,
      () => {
        const c = this.cluster()
        return (
          c?.members.some(
            (m) =>
              m.name === 'db2' &&
              m.role === 'sync_standby' &&
              (m.state === 'running' || m.state === 'streaming'),
          ) ?? false
        )
      },
      ['db1', 'db2'],
    )
  }

  haproxy(): void {
    const cfg = `global
  maxconn 1000
  log stdout format raw local0 info

defaults
  log global
  retries 3
  timeout connect 2s
  timeout check 1s

# PostgreSQL: only the node whose Patroni answers 200 on /primary gets connections. A node
# marked down has its sessions shut, so no client keeps talking to a deposed or dead primary.
listen postgres
  mode tcp
  bind ${addr('lb')}:5432
  # Long: the service's LISTEN connection stays open and idle for hours.
  timeout client 24h
  timeout server 24h
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 1s fastinter 500ms downinter 1s fall 2 rise 1 on-marked-down shutdown-sessions
  server db1 ${addr('db1')}:5432 check port 8008
  server db2 ${addr('db2')}:5432 check port 8008

# The API: both hosts, /healthz (the process is alive); a refused connection is tried on the
# other host (retry-on conn-failure: nothing reached the dead host, so re-sending is safe).
listen api
  mode http
  bind ${addr('lb')}:8080
  timeout client 60s
  timeout server 60s
  option httpchk GET /healthz
  http-check expect status 200
  retry-on conn-failure
  option redispatch 1
  balance roundrobin
  default-server inter 1s fastinter 500ms downinter 1s fall 2 rise 2 on-marked-down shutdown-sessions
  server api1 ${addr('api1')}:3000 check
  server api2 ${addr('api2')}:3000 check
`
    const file = join(this.dir, 'haproxy.cfg')
    writeFileSync(file, cfg)
    this.spawnIn('lb', 'haproxy', 'haproxy', ['-db', '-f', file])
  }

  serviceEnv(host: Host): Record<string, string> {
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !k.startsWith('KURUS_') && !k.startsWith('NODE_TEST')) env[k] = v
    }
    const data = join(this.dir, `data-${host}`)
    mkdirSync(data, { recursive: true })
    return {
      ...env,
      DATABASE_URL: LB_PG_URL,
      DATABASE_POOL_SIZE: '8',
      HOST: addr(host),
      PORT: '3000',
      KURUS_ENV: 'demo',
      KURUS_DATA_DIR: data,
      KURUS_MASTER_KEY: MASTER_KEY,
      KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
      KURUS_RATE_LIMIT_RPS: '1000000',
      KURUS_RATE_LIMIT_BURST: '1000000',
      LOG_LEVEL: 'info',
    }
  }

  startApi(host: 'api1' | 'api2'): void {
    this.spawnIn(host, host, process.execPath, ['src/main.ts', 'serve', '--no-worker'], {
      env: this.serviceEnv(host),
      cwd: this.repo,
    })
  }

  startWorker(): void {
    this.spawnIn('wrk', 'wrk', process.execPath, ['src/main.ts', 'worker'], {
      env: this.serviceEnv('wrk'),
      cwd: this.repo,
    })
  }

  async service(): Promise<void> {
    // One API host first: it migrates the empty database; the others then find it migrated.
    this.startApi('api1')
    await this.until(
      'api1 ready',
      180_000,
      () => curl('lb', `http://${addr('api1')}:3000/readyz`, 5).status === 200,
      ['api1'],
    )
    this.startApi('api2')
    this.startWorker()
    await this.until(
      'api2 ready',
      180_000,
      () => curl('lb', `http://${addr('api2')}:3000/readyz`, 5).status === 200,
      ['api2'],
    )
    await this.until(
      'worker started',
      180_000,
      () => this.log('wrk').includes('"msg":"worker started"'),
      ['wrk'],
    )
    await this.until(
      'HAProxy sees both API hosts',
      30_000,
      () => curl('cli', `${LB_API_URL}/readyz`, 5).status === 200,
      ['haproxy'],
    )
  }

  /** createdb through HAProxy, from the client's host: the first proof that the path works. */
  createDatabase(): void {
    inHost('cli', 'psql', [
      `postgres://postgres@${addr('lb')}:5432/postgres`,
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      'create database kurus',
    ])
  }

  /** kill -9 of a host's PostgreSQL postmaster (its children die with it). */
  killPostmaster(host: DbHost): number {
    const pidFile = join(this.dir, host, 'data', 'postmaster.pid')
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
    process.kill(pid, 'SIGKILL')
    this.note(`postmaster of ${host} (pid ${pid}) kill -9`)
    return pid
  }

  /** kill -9 of every process of a host: the machine is gone. */
  killHost(host: Host): void {
    const pids = pidsIn(ns(host))
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone already
      }
    }
    this.note(`every process of ${ns(host)} kill -9 (${pids.join(',')})`)
  }

  async until(
    what: string,
    timeoutMs: number,
    check: () => boolean,
    logs: string[] = [],
  ): Promise<void> {
    const until = Date.now() + timeoutMs
    while (Date.now() < until) {
      if (check()) return
      const dead = logs.filter((n) => {
        const c = this.children.get(n)
        return c !== undefined && (c.exitCode !== null || c.signalCode !== null)
      })
      if (dead.length > 0) {
        throw new Error(`${dead.join(', ')} exited while waiting for: ${what}\n${this.tail(logs)}`)
      }
      await delay(250)
    }
    throw new Error(`timed out waiting for: ${what} (logs in ${this.dir})\n${this.tail(logs)}`)
  }

  /** Everything gone: processes, namespaces and (unless kept for a post-mortem) the files. */
  teardown(keepFiles: boolean): void {
    teardownNetwork()
    this.children.clear()
    if (!keepFiles) rmSync(this.dir, { recursive: true, force: true })
  }
}
