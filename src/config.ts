import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { isIP } from 'node:net'
import { join, resolve } from 'node:path'

// The only module that reads process.env. Everything else receives a frozen Config.

export type KurusEnv = 'demo' | 'live'

export interface Config {
  readonly env: KurusEnv
  readonly port: number
  readonly host: string
  readonly publicApiUrl: string
  readonly checkoutUrl: string
  readonly dataDir: string
  /** PostgreSQL URL; undefined selects embedded PGlite in dataDir. */
  readonly databaseUrl: string | undefined
  /** A read replica for list, search and export queries (Deps.readDb); needs databaseUrl. */
  readonly databaseReadUrl: string | undefined
  readonly databasePoolSize: number
  /**
   * How many distinct statements a process prepares by name on PostgreSQL (0: none; behind a
   * pooler that cannot keep prepared statements, e.g. PgBouncer before 1.21 in transaction
   * mode). platform/db/prepared.ts.
   */
  readonly databasePreparedStatements: number
  readonly masterKey: Buffer
  /**
   * Earlier master keys (KURUS_MASTER_KEY_PREVIOUS, comma-separated), still able to decrypt
   * what was sealed under them until `kurus rotate-master-key` has re-wrapped it.
   */
  readonly masterKeyPrevious: readonly Buffer[]
  readonly operatorToken: string
  readonly rateLimitRps: number
  readonly rateLimitBurst: number
  /**
   * Failed authentications (any 401) one client address may make at once on the signed,
   * dashboard and operator APIs, and how many more it earns per minute; past them it gets
   * 429 before its headers are looked at.
   */
  readonly authFailureBurst: number
  readonly authFailurePerMinute: number
  /**
   * log2 of scrypt's N for dashboard passwords (15: N=32768, about 0.1 s of CPU per hash).
   * Stored with each hash; a sign-in upgrades a hash made with a lower cost.
   */
  readonly passwordHashCost: number
  /**
   * Which proxies in front of the API may name the client in X-Forwarded-For: false (none,
   * the default: the socket's address is the client), a hop count, or their addresses/CIDRs.
   */
  readonly trustProxy: false | number | readonly string[]
  readonly logLevel: string
  /** Redis for the shared rate limiter; unset keeps the buckets in PostgreSQL. */
  readonly redisUrl: string | undefined
  /** Prepended to every Redis key, so deployments can share one Redis. */
  readonly redisKeyPrefix: string
  readonly smtpUrl: string | undefined
  /** Requests in flight in this process beyond which new ones are shed with 503. */
  readonly inflightMax: number
  /**
   * How long a bank POS has to answer once a request is sent (KURUS_BANK_ANSWER_TIMEOUT_MS);
   * past it the outcome is unknown and the bank's order inquiry decides (docs/acquiring.md).
   */
  readonly bankAnswerTimeoutMs: number
  /**
   * Tests only, never read from the environment: a provider's built-in bank URLs replaced,
   * keyed `provider:bank` (a bank simulator standing in for the bank, so live-mode suites
   * charge through a POS as live does; docs/acquiring.md "Live").
   */
  readonly bankEndpointOverrides?: Readonly<Record<string, { api: string; threeDGate: string }>>
  /** Grace period during which a rolled API key keeps working. */
  readonly keyRollGraceSeconds: number
  /** `kurus worker` serves /metrics on this port (0: any free port); undefined: none. */
  readonly workerMetricsPort: number | undefined
  /**
   * Bearer token /metrics requires (API and worker). Unset: open in demo, not served in live,
   * so the series are never readable by anyone on the public port.
   */
  readonly metricsToken: string | undefined
  /** OTLP/HTTP collector base URL: traces go to `<url>/v1/traces`; undefined: no tracing. */
  readonly otelExporterOtlpEndpoint: string | undefined
  /** Exports one merchant may have queued or building at once; one more is 429. */
  readonly exportsQueuedMax: number
  /** An authorization not finished (captured in full, or voided) within this is released. */
  readonly authorizationTtlMs: number
  /** Days a request stays in the merchant's API request log (GET /v1/logs). */
  readonly requestLogRetentionDays: number
  /** Days a merchant has to answer a chargeback with evidence (CONTRACT.md "Dispute evidence"). */
  readonly evidenceDays: number
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * The first call of every demo-only convenience (the seeded demo merchant, the banner that
 * prints its keys, /dev/mailbox): in live it refuses to run, so a wiring mistake stops the
 * start instead of exposing keys or mail.
 */
export function assertDemo(config: Pick<Config, 'env'>, what: string): void {
  if (config.env !== 'demo') {
    throw new ConfigError(`${what} is demo-only: it refuses to run with KURUS_ENV=${config.env}`)
  }
}

type Env = Readonly<Record<string, string | undefined>>

/** What the demo's seeding writes into KURUS_DATA_DIR (src/commands.ts). */
export const DEMO_SEED_FILE = 'demo.json'

function intFrom(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer in ${min}..${max}, got "${raw}"`)
  }
  return value
}

/** Reads a secret from the environment, or in demo creates it once in the data dir. */
function secretFrom(
  env: Env,
  name: string,
  kurusEnv: KurusEnv,
  dataDir: string,
  file: string,
  make: () => string,
): string {
  const fromEnv = env[name]
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv
  const path = join(dataDir, file)
  if (existsSync(path)) return readFileSync(path, 'utf8').trim()
  if (kurusEnv === 'live') throw new ConfigError(`${name} is required when KURUS_ENV=live`)
  mkdirSync(dataDir, { recursive: true })
  const value = make()
  writeFileSync(path, value + '\n', { mode: 0o600 })
  return value
}

function parseMasterKey(raw: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64')
  if (key.length !== 32) {
    throw new ConfigError('KURUS_MASTER_KEY must be 32 bytes, as 64 hex characters or base64')
  }
  return key
}

const PROXY_PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * KURUS_TRUST_PROXY: unset (trust no proxy), a hop count (1..10), or a comma-separated list of
 * proxy addresses, CIDR ranges or the presets loopback / linklocal / uniquelocal. `true` is
 * refused: trusting every hop lets any client pick its own address in X-Forwarded-For and so
 * walk out of every per-IP limit.
 */
function trustProxyFrom(env: Env): Config['trustProxy'] {
  const raw = (env['KURUS_TRUST_PROXY'] ?? '').trim()
  if (raw === '' || raw === 'false') return false
  if (/^\d+$/.test(raw)) return intFrom(env, 'KURUS_TRUST_PROXY', 0, 1, 10)
  const entries = raw.split(',').map((e) => e.trim())
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/')
    const family = isIP(address)
    const prefixOk =
      bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32))
    if (!(PROXY_PRESETS.has(entry) || (family !== 0 && prefixOk && extra === undefined))) {
      throw new ConfigError(
        `KURUS_TRUST_PROXY must be a hop count (1..10) or a comma-separated list of proxy ` +
          `addresses, CIDR ranges or loopback/linklocal/uniquelocal (never "true": any client ` +
          `could then choose its own address), got "${raw}"`,
      )
    }
  }
  return Object.freeze(entries)
}

const DURATION_UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
}

/** A whole number of seconds, minutes, hours or days: `90s`, `30m`, `12h`, `7d`. */
function durationMs(
  raw: string | undefined,
  name: string,
  fallbackMs: number,
  minMs: number,
  maxMs: number,
): number {
  if (raw === undefined || raw === '') return fallbackMs
  const match = /^(\d{1,9})([smhd])$/.exec(raw.trim())
  const ms = match ? Number(match[1]) * (DURATION_UNIT_MS[match[2] ?? ''] ?? 0) : Number.NaN
  if (!(ms >= minMs && ms <= maxMs)) {
    throw new ConfigError(
      `${name} must be a duration like 90s, 30m, 12h or 7d between ${minMs / 1000}s and ${maxMs / 86_400_000}d, got "${raw}"`,
    )
  }
  return ms
}

/**
 * A PostgreSQL URL, or unset. Anything else would reach the driver, whose error names neither
 * the variable nor the problem (`notaurl` was read as a socket of host "base"). The value is
 * not repeated in the message: it may hold a password.
 */
function postgresUrlFrom(env: Env, name: string): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  let url: URL | undefined
  try {
    url = new URL(raw)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    throw new ConfigError(
      `${name} must be a PostgreSQL URL like postgres://user:password@host:5432/database ` +
        '(the value given is not one)',
    )
  }
  return raw
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

// Long enough not to be guessed through the per-IP limit; `openssl rand -base64 24` gives 32.
const METRICS_TOKEN_LENGTH_MIN = 24

function metricsTokenFrom(env: Env): string | undefined {
  const token = env['KURUS_METRICS_TOKEN'] || undefined
  if (token !== undefined && token.length < METRICS_TOKEN_LENGTH_MIN) {
    throw new ConfigError(
      `KURUS_METRICS_TOKEN must be at least ${METRICS_TOKEN_LENGTH_MIN} characters (e.g. openssl rand -base64 24)`,
    )
  }
  return token
}

function logLevelFrom(env: Env): string {
  const level = env['LOG_LEVEL'] || 'info'
  if (!LOG_LEVELS.includes(level)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`)
  }
  return level
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const kurusEnv = env['KURUS_ENV'] ?? 'demo'
  if (kurusEnv !== 'demo' && kurusEnv !== 'live') {
    throw new ConfigError(`KURUS_ENV must be demo or live, got "${kurusEnv}"`)
  }
  const port = intFrom(env, 'PORT', 3000, 0, 65535)
  const dataDir = resolve(env['KURUS_DATA_DIR'] ?? './.kurus')
  // A directory the demo has used holds its seed (demo.json: the demo merchant's dashboard
  // password in clear) and may hold the master key and operator token the demo generated and
  // printed on its banner. Live must not quietly take those over.
  if (kurusEnv === 'live' && existsSync(join(dataDir, DEMO_SEED_FILE))) {
    throw new ConfigError(
      `KURUS_DATA_DIR ${dataDir} was used by the demo (${DEMO_SEED_FILE}): its secrets were printed ` +
        'and its demo merchant has a known password. Use another directory with KURUS_ENV=live',
    )
  }
  const base = `http://localhost:${port}`
  const masterKey =
    overrides.masterKey ??
    parseMasterKey(
      secretFrom(env, 'KURUS_MASTER_KEY', kurusEnv, dataDir, 'master.key', () =>
        randomBytes(32).toString('hex'),
      ),
    )
  const operatorToken =
    overrides.operatorToken ??
    secretFrom(env, 'KURUS_OPERATOR_TOKEN', kurusEnv, dataDir, 'operator-token', () =>
      randomBytes(24).toString('base64url'),
    )
  const masterKeyPrevious =
    overrides.masterKeyPrevious ??
    (env['KURUS_MASTER_KEY_PREVIOUS'] ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== '')
      .map(parseMasterKey)
  const databaseUrl = postgresUrlFrom(env, 'DATABASE_URL')
  const databaseReadUrl = postgresUrlFrom(env, 'DATABASE_READ_URL')
  // A replica is of a PostgreSQL primary; embedded PGlite is one database in this process.
  if (databaseReadUrl !== undefined && databaseUrl === undefined) {
    throw new ConfigError(
      'DATABASE_READ_URL needs DATABASE_URL: embedded PGlite has no read replicas',
    )
  }
  const config: Config = {
    env: kurusEnv,
    port,
    host: env['HOST'] ?? '127.0.0.1',
    publicApiUrl: env['PUBLIC_API_URL'] ?? base,
    checkoutUrl: env['CHECKOUT_URL'] ?? base,
    dataDir,
    databaseUrl,
    databaseReadUrl,
    databasePoolSize: intFrom(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    databasePreparedStatements: intFrom(env, 'DATABASE_PREPARED_STATEMENTS', 500, 0, 10_000),
    masterKey,
    masterKeyPrevious,
    operatorToken,
    rateLimitRps: intFrom(env, 'KURUS_RATE_LIMIT_RPS', 100, 1, 10_000_000),
    rateLimitBurst: intFrom(env, 'KURUS_RATE_LIMIT_BURST', 200, 1, 10_000_000),
    authFailureBurst: intFrom(env, 'KURUS_AUTH_FAILURE_BURST', 20, 1, 10_000_000),
    authFailurePerMinute: intFrom(env, 'KURUS_AUTH_FAILURE_PER_MINUTE', 20, 1, 10_000_000),
    passwordHashCost: intFrom(env, 'KURUS_PASSWORD_HASH_COST', 15, 10, 20),
    trustProxy: trustProxyFrom(env),
    logLevel: logLevelFrom(env),
    redisUrl: env['REDIS_URL'] || undefined,
    redisKeyPrefix: env['REDIS_KEY_PREFIX'] ?? 'kurus:',
    smtpUrl: env['SMTP_URL'] || undefined,
    inflightMax: intFrom(env, 'KURUS_INFLIGHT_MAX', 512, 1, 1_000_000),
    bankAnswerTimeoutMs: intFrom(env, 'KURUS_BANK_ANSWER_TIMEOUT_MS', 30_000, 100, 120_000),
    keyRollGraceSeconds: intFrom(env, 'KURUS_KEY_ROLL_GRACE_SECONDS', 86_400, 0, 30 * 86_400),
    workerMetricsPort: env['KURUS_WORKER_METRICS_PORT']
      ? intFrom(env, 'KURUS_WORKER_METRICS_PORT', 0, 0, 65535)
      : undefined,
    metricsToken: metricsTokenFrom(env),
    otelExporterOtlpEndpoint: env['OTEL_EXPORTER_OTLP_ENDPOINT'] || undefined,
    exportsQueuedMax: intFrom(env, 'KURUS_EXPORTS_QUEUED_MAX', 5, 1, 1000),
    requestLogRetentionDays: intFrom(env, 'KURUS_REQUEST_LOG_RETENTION_DAYS', 7, 1, 90),
    // Card schemes give the acquirer a few weeks; the merchant gets the first week of it.
    evidenceDays: intFrom(env, 'KURUS_EVIDENCE_DAYS', 7, 3, 60),
    // Card schemes let an issuer drop an authorization after about a week; we release first.
    authorizationTtlMs: durationMs(
      env['KURUS_AUTHORIZATION_TTL'],
      'KURUS_AUTHORIZATION_TTL',
      7 * 86_400_000,
      60_000,
      30 * 86_400_000,
    ),
    ...overrides,
  }
  return Object.freeze(config)
}
