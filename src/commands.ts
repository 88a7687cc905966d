import cluster from 'node:cluster'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError, DEMO_SEED_FILE, assertDemo, type Config } from './config.ts'
import type { Database, Deps } from './database.ts'
import type { DashboardLogin } from './merchant-cli.ts'
import { canonicalString, sign as signCanonical } from '../packages/node/src/signing.ts'

// The commands behind src/main.ts: `serve` (API, pages and, embedded, the worker), `worker`,
// `migrate`, and the `kurus` CLI, which is a thin client of the operator API.
// Each command imports what it needs when it runs (`await import`): the server, the database
// drivers and the modules take seconds to load, and `--help`, `sign` or `payments list` need
// none of them (docs/decisions/0038). `sign` uses the SDK's signer (held to the same vectors
// as the gateway's verifier).

/** The trigger names, for the usage text (src/merchant-cli.ts TRIGGERS, checked by a test). */
const TRIGGER_NAMES =
  'payment.captured, payment.authorized, payment.voided, payment.failed, payment.refunded, ' +
  'refund.failed, customer.created, chargeback.received'

export const USAGE = `usage: kurus <command>
  serve [--processes N] [--no-worker] run the API (npm start); N > 1 needs DATABASE_URL
  worker [--concurrency N]            run background jobs and reconcilers
  migrate                             apply database migrations
  rotate-master-key                   bring card data keys, API key and webhook secrets and
                                      invoice links under KURUS_MASTER_KEY (the old key(s) in
                                      KURUS_MASTER_KEY_PREVIOUS); safe to re-run
  check-ledger [--json]               verify the books (ledger, payments, refunds, events);
                                      exit 1 on any problem
  merchant create --name X [--kyc approved] [--json]
  store create --merchant mrc_… [--json]
  submerchant create --merchant mrc_… --name X --iban TR… --holder "Name" [--json]
  kyc set --merchant mrc_… --status approved|pending|rejected|suspended|expired|none
  bank-simulators [--port-base N]     demo only: İşbank (EST), Garanti and Yapı Kredi (PosNet)
                                      simulators on ports N..N+2 (4510); prints the POS account
                                      bodies; type down/up/5xx/hang/slow/ok BANK to fail one
  sign METHOD PATH [BODY]             print a signed curl (keys from KURUS_PUBLIC_KEY /
                                      KURUS_SECRET_KEY or the demo merchant); the signature
                                      covers the path without its ?query

Merchant commands (the API through @kurus/node; keys as for sign; server KURUS_URL):
  listen --forward-to URL [--events a,b] [--store sto_…] [--email E --password P]
         [--code C] [--new-secret] [--json]
                                      a webhook endpoint on this machine (dashboard login:
                                      KURUS_DASHBOARD_EMAIL / KURUS_DASHBOARD_PASSWORD or the
                                      demo merchant's; --code: the two-factor code or a
                                      recovery code); forwards and prints each delivery.
                                      One whsec_ per machine, server and store, kept in
                                      ~/.config/kurus/listen.json; --new-secret makes another
  trigger EVENT [--json]              make sandbox objects that record EVENT (sandbox
                                      only): ${TRIGGER_NAMES}
                                      (also payment.succeeded, refund.completed…)
  payments get pay_… [--json]
  payments list [--status S] [--limit N] [--json]
  events tail [--json]                print the merchant's events as they happen
  logs tail [--status 4xx] [--json]   print the merchant's API requests as they happen
                                      (GET /v1/logs; --status a class or one status)`

interface DemoFile {
  merchantId: string
  storeId: string
  publicKey: string
  dashboard: { email: string; password: string }
}

/** The sandbox's demo merchant, created on the first start (demo only). */
export async function seedDemo(deps: Deps, config: Config): Promise<void> {
  assertDemo(config, 'the demo seed')
  const file = join(config.dataDir, DEMO_SEED_FILE)
  const { countMerchants, createMerchant } = await import('./modules/merchants/index.ts')
  if ((await countMerchants(deps)) === 0) {
    const created = await createMerchant(deps, { name: 'Demo Merchant', kycStatus: 'approved' })
    const demo: DemoFile = {
      merchantId: created.merchantId,
      storeId: created.storeId,
      publicKey: created.key.publicKey,
      dashboard: created.dashboard,
    }
    writeFileSync(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 })
  }
}

function signedCurl(
  baseUrl: string,
  keys: { publicKey: string; secretKey: string },
  method: string,
  path: string,
  body?: string,
): string {
  const timestamp = new Date().toISOString()
  // The signature covers the path only: the query string is not part of it (docs/api.md).
  const signedPath = path.split('?')[0] ?? path
  const signature = signCanonical(
    keys.secretKey,
    canonicalString(timestamp, method, signedPath, body ?? ''),
  )
  const parts = [
    `curl -sS -X ${method} '${baseUrl}${path}'`,
    `-H 'X-Api-Key: ${keys.publicKey}'`,
    `-H 'X-Timestamp: ${timestamp}'`,
    `-H 'X-Signature: ${signature}'`,
  ]
  if (body !== undefined) {
    parts.push(`-H 'Content-Type: application/json'`, `--data-raw '${body.replace(/'/g, "'\\''")}'`)
  }
  return parts.join(' \\\n  ')
}

/** The start banner with the demo merchant's keys and the operator token (demo only). */
export async function printDemoBanner(deps: Deps, config: Config, url: string): Promise<void> {
  assertDemo(config, 'the start banner (it prints keys)')
  const { revealDemoCredentials } = await import('./modules/merchants/index.ts')
  const creds = await revealDemoCredentials(deps)
  if (!creds) return
  const demoFile = join(config.dataDir, DEMO_SEED_FILE)
  const demo = existsSync(demoFile)
    ? (JSON.parse(readFileSync(demoFile, 'utf8')) as DemoFile)
    : undefined
  const lines = [
    '',
    `Kuruş sandbox is running at ${url}  (API reference: ${url}/docs)`,
    `  merchant     ${creds.merchantId}   store ${creds.storeId}`,
    `  public key   ${creds.publicKey}`,
    `  secret key   ${creds.secretKey}`,
    ...(demo
      ? [`  dashboard    ${url}/dashboard  ${demo.dashboard.email} / ${demo.dashboard.password}`]
      : []),
    `  operator     Bearer ${config.operatorToken}`,
    '',
    'Try it (the signature is valid for 5 minutes; `npx kurus sign GET /v1/auth/whoami` makes a fresh one):',
    signedCurl(url, creds, 'GET', '/v1/auth/whoami'),
    '',
  ]
  process.stdout.write(lines.join('\n') + '\n')
}

function onShutdown(log: { info: (o: object, m: string) => void }, close: () => Promise<void>) {
  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    log.info({ signal }, 'shutting down: finishing in-flight requests and jobs')
    // Spans still buffered leave before the process does (a no-op without tracing).
    close()
      .then(async () => (await import('./platform/tracing.ts')).stopTracing())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      )
  }
  process.once('SIGINT', () => shutdown('SIGINT'))
  process.once('SIGTERM', () => shutdown('SIGTERM'))
}

interface ServeOptions {
  processes: number
  worker: boolean
}

async function serve(config: Config, options: ServeOptions): Promise<void> {
  if (options.processes > 1) {
    if (!config.databaseUrl) {
      throw new ConfigError(
        '--processes needs PostgreSQL (DATABASE_URL): embedded PGlite is one process by construction',
      )
    }
    if (cluster.isPrimary) return servePrimary(config, options)
  }
  // In a cluster the API processes leave background work to `kurus worker` processes;
  // a single process (the sandbox) runs its own worker unless told not to.
  const runWorker = options.worker && options.processes <= 1
  const { startRuntime } = await import('./server.ts')
  const runtime = await startRuntime(config, { runWorker, migrate: !cluster.isWorker })
  const { fastify, deps } = runtime.app
  const demo = config.env === 'demo' && !cluster.isWorker
  if (demo) await seedDemo(deps, config)
  const address = await fastify.listen({ port: config.port, host: config.host })
  if (demo) await printDemoBanner(deps, config, config.publicApiUrl || address)
  onShutdown(fastify.log, runtime.close)
}

/** The cluster's primary: migrates once, then forks the API processes and keeps them up. */
async function servePrimary(config: Config, options: ServeOptions): Promise<void> {
  await migrate(config)
  const { aggregateClusterMetrics } = await import('./platform/metrics.ts')
  const { createLogger } = await import('./platform/logger.ts')
  aggregateClusterMetrics()
  for (let i = 0; i < options.processes; i++) cluster.fork()
  let stopping = false
  const log = createLogger(config.logLevel)
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return
    log.error(
      { exitedPid: worker.process.pid, code, signal },
      'an API process exited; starting another',
    )
    cluster.fork()
  })
  const stop = () => {
    stopping = true
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

async function worker(config: Config, concurrency: number): Promise<void> {
  const { startWorker } = await import('./server.ts')
  const runtime = await startWorker(config, { concurrency })
  onShutdown({ info: () => undefined }, runtime.close)
}

async function migrate(config: Config): Promise<void> {
  const { connectDatabase } = await import('./platform/db/connect.ts')
  const { prepareDatabase } = await import('./server.ts')
  const { createLogger } = await import('./platform/logger.ts')
  const database = await connectDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir + '/pglite',
  })
  const log = createLogger(config.logLevel)
  const applied = await prepareDatabase(database.db, config, log)
  log.info({ applied }, `applied ${applied.length} migration(s)`)
  await database.close()
  // Lines are written asynchronously; `migrate` is a short process that must not lose them.
  log.flush()
}

/** `kurus check-ledger`: the books' invariants (src/modules/audit), read-only; exit 1 on problems. */
async function checkLedgerCommand(config: Config, json: boolean): Promise<void> {
  const { connectDatabase } = await import('./platform/db/connect.ts')
  const { auditBooks } = await import('./modules/audit/index.ts')
  const database = await connectDatabase<Database>({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir + '/pglite',
  })
  try {
    const report = await auditBooks(database.db)
    if (json) process.stdout.write(JSON.stringify(report, null, 2) + '\n')
    else {
      for (const problem of report.problems) process.stdout.write(`problem: ${problem}\n`)
      process.stdout.write(
        `checked ${report.payments} payment(s), ${report.refunds} refund(s) and the ledger: ` +
          `${report.ok ? 'ok' : `${report.problems.length} problem(s)`}\n`,
      )
    }
    if (!report.ok) process.exitCode = 1
  } finally {
    await database.close()
  }
}

/**
 * `kurus rotate-master-key`: re-wraps every card data key and re-encrypts every secret sealed
 * under the master key (src/rotation.ts). Exit 1 while something is left that no held key opens.
 */
async function rotateMasterKeyCommand(config: Config): Promise<void> {
  const { connectDatabase } = await import('./platform/db/connect.ts')
  const { rotateMasterKeyEverywhere } = await import('./rotation.ts')
  const database = await connectDatabase<Database>({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir + '/pglite',
  })
  try {
    const report = await rotateMasterKeyEverywhere({ db: database.db, config })
    const { vault } = report
    process.stdout.write(`re-wrapped ${vault.rewrapped} card data key(s) under ${vault.kekId}\n`)
    for (const [kekId, n] of Object.entries(vault.unknown)) {
      process.stderr.write(
        `${n} card(s) under ${kekId}: add that key to KURUS_MASTER_KEY_PREVIOUS\n`,
      )
    }
    for (const [what, r] of Object.entries(report.secrets)) {
      process.stdout.write(`${what}: re-encrypted ${r.reencrypted} of ${r.scanned} row(s)\n`)
      if (r.unreadable > 0) {
        process.stderr.write(
          `${what}: ${r.unreadable} row(s) no held key opens: add that key to KURUS_MASTER_KEY_PREVIOUS\n`,
        )
      }
    }
    if (!report.complete) process.exitCode = 1
  } finally {
    await database.close()
  }
}

/** The server the CLI talks to: KURUS_URL, else this config's PUBLIC_API_URL. */
function cliBaseUrl(config: Config): string {
  return process.env['KURUS_URL'] ?? config.publicApiUrl
}

async function operatorCall(config: Config, method: string, path: string, body?: unknown) {
  const response = await fetch(cliBaseUrl(config) + path, {
    method,
    headers: {
      authorization: `Bearer ${config.operatorToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${response.status} ${text}`)
  return text ? (JSON.parse(text) as Record<string, unknown>) : {}
}

function print(result: Record<string, unknown>, json: boolean | undefined): void {
  if (json) process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  else
    for (const [k, v] of Object.entries(result))
      process.stdout.write(`${k}: ${JSON.stringify(v)}\n`)
}

async function cli(config: Config, argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      kyc: { type: 'string' },
      merchant: { type: 'string' },
      status: { type: 'string' },
      iban: { type: 'string' },
      holder: { type: 'string' },
      json: { type: 'boolean' },
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      store: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      code: { type: 'string' },
      port: { type: 'string' },
      limit: { type: 'string' },
      'new-secret': { type: 'boolean' },
    },
  })
  const [noun, verb, ...rest] = positionals
  const need = (v: string | undefined, flag: string): string => {
    if (!v) throw new ConfigError(`--${flag} is required\n${USAGE}`)
    return v
  }
  switch (`${noun} ${verb}`) {
    case 'merchant create':
      return print(
        await operatorCall(config, 'POST', '/operator/v1/merchants', {
          name: need(values.name, 'name'),
          ...(values.kyc ? { kycStatus: values.kyc } : {}),
        }),
        values.json,
      )
    case 'store create':
      return print(
        await operatorCall(
          config,
          'POST',
          `/operator/v1/merchants/${need(values.merchant, 'merchant')}/stores`,
          {},
        ),
        values.json,
      )
    case 'submerchant create':
      return print(
        await operatorCall(
          config,
          'POST',
          `/operator/v1/merchants/${need(values.merchant, 'merchant')}/submerchants`,
          {
            name: need(values.name, 'name'),
            iban: need(values.iban, 'iban'),
            holderName: need(values.holder, 'holder'),
          },
        ),
        values.json,
      )
    case 'kyc set':
      return print(
        await operatorCall(
          config,
          'PUT',
          `/operator/v1/merchants/${need(values.merchant, 'merchant')}/kyc`,
          { status: need(values.status, 'status') },
        ),
        values.json,
      )
    default:
      break
  }
  if (noun !== undefined && MERCHANT_COMMANDS.has(noun)) {
    return merchantCommand(config, noun, verb, rest, values)
  }
  if (noun === 'sign' && verb) {
    const [path, body] = rest
    const keys = await signingKeys(config)
    process.stdout.write(
      signedCurl(cliBaseUrl(config), keys, verb.toUpperCase(), need(path, 'PATH'), body) + '\n',
    )
    return
  }
  throw new ConfigError(USAGE)
}

const MERCHANT_COMMANDS = new Set(['listen', 'trigger', 'payments', 'events', 'logs'])

interface MerchantFlags {
  json?: boolean | undefined
  status?: string | undefined
  'forward-to'?: string | undefined
  events?: string | undefined
  store?: string | undefined
  email?: string | undefined
  password?: string | undefined
  code?: string | undefined
  port?: string | undefined
  limit?: string | undefined
  'new-secret'?: boolean | undefined
}

const out = (line: string): void => {
  process.stdout.write(line + '\n')
}

/** The demo merchant's seed file (demo only; written by the first `npm start`). */
function demoFile(config: Config): DemoFile | undefined {
  const file = join(config.dataDir, DEMO_SEED_FILE)
  if (config.env !== 'demo' || !existsSync(file)) return undefined
  return JSON.parse(readFileSync(file, 'utf8')) as DemoFile
}

/** The dashboard user `listen` signs in as: flags, then the environment, then the demo's. */
function dashboardLogin(config: Config, flags: MerchantFlags): DashboardLogin {
  const email = flags.email ?? process.env['KURUS_DASHBOARD_EMAIL']
  const password = flags.password ?? process.env['KURUS_DASHBOARD_PASSWORD']
  if (email !== undefined && password !== undefined) {
    return { email, password, ...(flags.code === undefined ? {} : { code: flags.code }) }
  }
  const demo = demoFile(config)
  if (demo) return demo.dashboard
  throw new ConfigError(
    'listen signs in as a dashboard user: --email and --password, or KURUS_DASHBOARD_EMAIL and KURUS_DASHBOARD_PASSWORD',
  )
}

async function merchantCommand(
  config: Config,
  noun: string,
  verb: string | undefined,
  rest: string[],
  flags: MerchantFlags,
): Promise<void> {
  const [cli, sdk] = await Promise.all([
    import('./merchant-cli.ts'),
    import('../packages/node/src/index.ts'),
  ])
  try {
    await runMerchantCommand(cli, sdk.Kurus, config, noun, verb, rest, flags)
  } catch (error) {
    // What the server or the network said, as one line: a stack trace tells an integrator
    // nothing they can act on.
    if (error instanceof sdk.KurusError) {
      throw new ConfigError(`${error.message} (request ${error.requestId})`)
    }
    if (error instanceof sdk.KurusConnectionError || error instanceof cli.CliError) {
      throw new ConfigError(error.message)
    }
    throw error
  }
}

async function runMerchantCommand(
  cli: typeof import('./merchant-cli.ts'),
  Kurus: typeof import('../packages/node/src/index.ts').Kurus,
  config: Config,
  noun: string,
  verb: string | undefined,
  rest: string[],
  flags: MerchantFlags,
): Promise<void> {
  const json = flags.json === true
  const baseUrl = cliBaseUrl(config)
  const client = async () => new Kurus({ ...(await signingKeys(config)), baseUrl })
  if (noun === 'listen') {
    const forwardTo = flags['forward-to']
    if (!forwardTo) throw new ConfigError(`--forward-to is required\n${USAGE}`)
    const storeId =
      flags.store ?? demoFile(config)?.storeId ?? (await (await client()).whoami()).storeId
    if (!storeId) throw new ConfigError('--store sto_… is required (a store key has one)')
    const handle = await cli.listen({
      baseUrl,
      login: dashboardLogin(config, flags),
      storeId,
      forwardTo,
      events: flags.events?.split(',').filter(Boolean),
      port: flags.port === undefined ? undefined : Number(flags.port),
      json,
      out,
      secrets: cli.listenSecretStore(listenConfigFile()),
      newSecret: flags['new-secret'] === true,
    })
    const stop = () => {
      handle.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`could not stop listening: ${String(error)}\n`)
          process.exit(1)
        },
      )
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    return
  }
  if (noun === 'trigger') {
    if (!verb) throw new ConfigError(`trigger needs an event type\n${USAGE}`)
    const keys = await signingKeys(config)
    // The sandbox's test cards, chargebacks and reconciler exist in demo only.
    if (!keys.publicKey.startsWith('pk_demo_')) {
      throw new ConfigError(
        `kurus trigger works in the sandbox only (a pk_demo_… key): in live, events come from ` +
          `real payments. Use a sandbox key, or kurus events tail to watch live events.`,
      )
    }
    const result = await cli.trigger(new Kurus({ ...keys, baseUrl }), verb)
    if (json) return out(JSON.stringify(result, null, 2))
    out(`Triggered ${result.trigger}: ${cli.TRIGGERS[result.trigger]?.about ?? ''}`)
    for (const [k, v] of Object.entries(result)) if (k !== 'trigger') out(`  ${k}: ${String(v)}`)
    return
  }
  if (noun === 'payments' && verb === 'get') {
    const [id] = rest
    if (!id) throw new ConfigError(`payments get needs a payment id\n${USAGE}`)
    return cli.paymentsGet(await client(), id, json, out)
  }
  if (noun === 'payments' && verb === 'list') {
    return cli.paymentsList(
      await client(),
      { status: flags.status, limit: Number(flags.limit ?? '20') || 20 },
      json,
      out,
    )
  }
  if (noun === 'events' && verb === 'tail') {
    const controller = new AbortController()
    process.once('SIGINT', () => controller.abort())
    return cli.eventsTail(
      await client(),
      { json, intervalMs: 2000, signal: controller.signal },
      out,
    )
  }
  if (noun === 'logs' && verb === 'tail') {
    const controller = new AbortController()
    process.once('SIGINT', () => controller.abort())
    return cli.logsTail(
      await client(),
      {
        status: flags.status,
        json,
        intervalMs: 1000,
        signal: controller.signal,
        // On stderr, so --json output stays one JSON object per line.
        onReady: () => process.stderr.write('Tailing the API request log (Ctrl-C to stop)\n'),
      },
      out,
    )
  }
  throw new ConfigError(USAGE)
}

/** Where `listen` keeps its endpoint and secret: KURUS_CONFIG_DIR, else ~/.config/kurus. */
function listenConfigFile(): string {
  const dir =
    process.env['KURUS_CONFIG_DIR'] ??
    join(process.env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'kurus')
  return join(dir, 'listen.json')
}

async function signingKeys(config: Config): Promise<{ publicKey: string; secretKey: string }> {
  const publicKey = process.env['KURUS_PUBLIC_KEY']
  const secretKey = process.env['KURUS_SECRET_KEY']
  if (publicKey && secretKey) return { publicKey, secretKey }
  if (config.env !== 'demo') throw new ConfigError('set KURUS_PUBLIC_KEY and KURUS_SECRET_KEY')
  // Ask the running server first: opening its embedded PGlite from a second process would
  // share one data directory between two database instances.
  let fromServer: Record<string, unknown> | undefined
  try {
    fromServer = await operatorCall(config, 'GET', '/operator/v1/demo/credentials')
  } catch (error) {
    // Only "nothing is listening" falls back to opening the database ourselves.
    if (!(error instanceof TypeError)) throw error
  }
  if (fromServer) {
    const { publicKey: pk, secretKey: sk } = fromServer
    if (typeof pk === 'string' && typeof sk === 'string') return { publicKey: pk, secretKey: sk }
  }
  const { startRuntime } = await import('./server.ts')
  const { revealDemoCredentials } = await import('./modules/merchants/index.ts')
  const runtime = await startRuntime(config, { migrate: false })
  try {
    const creds = await revealDemoCredentials(runtime.app.deps)
    if (!creds) throw new ConfigError('set KURUS_PUBLIC_KEY and KURUS_SECRET_KEY')
    return creds
  } finally {
    await runtime.close()
  }
}

/** Demo only: three bank simulators to add as POS accounts, with faults typed on stdin. */
async function bankSimulators(config: Config, portBase: number): Promise<void> {
  assertDemo(config, 'the bank simulators')
  if (!Number.isInteger(portBase) || portBase < 1 || portBase > 65_533) {
    throw new ConfigError('--port-base must be a port number')
  }
  const { applyDemoBankCommand, DEMO_BANK_COMMANDS, startDemoBanks } =
    await import('./modules/acquirer/index.ts')
  const { createInterface } = await import('node:readline')
  const banks = await startDemoBanks({ portBase })
  const out = (line: string) => process.stdout.write(line + '\n')
  out('Bank simulators (docs/acquiring.md). Add each as a POS account, e.g.:')
  for (const bank of banks.banks) {
    out(`  kurus sign POST /v1/pos-accounts '${JSON.stringify(bank.account)}'`)
  }
  out('then PUT /v1/routing {"rules": [], "default": [the three ids]} and charge.')
  out(DEMO_BANK_COMMANDS)
  const input = createInterface({ input: process.stdin })
  input.on('line', (line) => {
    void applyDemoBankCommand(banks, line).then(out)
  })
  await new Promise<void>((resolve) => {
    const stop = () => resolve()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  input.close()
  await banks.close()
}

/** Runs one command line (without `node src/main.ts`) under a loaded configuration. */
export async function runCommand(config: Config, argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({
        args: rest,
        options: { processes: { type: 'string' }, 'no-worker': { type: 'boolean' } },
      })
      return serve(config, {
        processes: Number(values.processes ?? '1') || 1,
        worker: !values['no-worker'],
      })
    }
    case 'worker': {
      const { values } = parseArgs({ args: rest, options: { concurrency: { type: 'string' } } })
      return worker(config, Number(values.concurrency ?? '2') || 2)
    }
    case 'migrate':
      return migrate(config)
    case 'rotate-master-key':
      return rotateMasterKeyCommand(config)
    case 'check-ledger':
      return checkLedgerCommand(config, rest.includes('--json'))
    case 'bank-simulators': {
      const { values } = parseArgs({ args: rest, options: { 'port-base': { type: 'string' } } })
      return bankSimulators(config, Number(values['port-base'] ?? '4510'))
    }
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE + '\n')
      return
    default:
      return cli(config, [command, ...rest])
  }
}
