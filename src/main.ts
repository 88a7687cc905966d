// First: it may replace the process (V8 heap flags) before anything else is loaded.
import './heap-flags.ts'
import { ConfigError, loadConfig } from './config.ts'
import { writeLogLine } from './platform/logger.ts'

// Entry point (`node src/main.ts <command>`, `npx kurus …`). It imports only the configuration
// before deciding about tracing: OpenTelemetry's hooks must be in place before anything loads
// `http` or `pg`, so the program itself (src/commands.ts) is imported after them.

// The service's commands log JSON lines only (one format, docs/operations.md); the merchant
// CLI's commands talk to a person and say their errors in plain text.
const SERVICE_COMMANDS = new Set(['serve', 'worker', 'migrate', 'rotate-master-key'])
const service = SERVICE_COMMANDS.has(process.argv[2] ?? '')

// PostgreSQL could not be reached or refused us at start: the message names the setting.
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  '28P01', // invalid_password
  '28000', // invalid_authorization_specification
  '3D000', // invalid_catalog_name: no such database
])

function connectFailure(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  const timedOut = /connection timeout|timeout expired/i.test(message)
  if (!(typeof code === 'string' && CONNECT_CODES.has(code)) && !timedOut) return undefined
  return `cannot connect to the database of DATABASE_URL: ${message}`
}

function fail(error: unknown): never {
  const known =
    error instanceof ConfigError ? error.message : service ? connectFailure(error) : undefined
  if (service) {
    writeLogLine(
      process.stderr,
      'fatal',
      known ?? 'the process could not start',
      known === undefined ? { err: serialize(error) } : {},
    )
  } else {
    process.stderr.write(
      (known ?? (error instanceof Error ? (error.stack ?? error.message) : String(error))) + '\n',
    )
  }
  process.exit(1)
}

function serialize(error: unknown): Record<string, unknown> {
  return error instanceof Error
    ? { type: error.name, message: error.message, stack: error.stack }
    : { message: String(error) }
}

if (service) {
  // A crash is one JSON line too. `uncaughtException` stays in it: it is what the
  // reliability suite's crash detector looks for.
  process.on('uncaughtException', (error) => {
    writeLogLine(process.stderr, 'fatal', 'uncaughtException: the process stops', {
      err: serialize(error),
    })
    process.exit(1)
  })
}

try {
  const config = loadConfig()
  if (config.otelExporterOtlpEndpoint !== undefined) {
    const { startTracing } = await import('./platform/tracing.ts')
    await startTracing(config.otelExporterOtlpEndpoint)
  }
  const { runCommand } = await import('./commands.ts')
  await runCommand(config, process.argv.slice(2))
} catch (error) {
  fail(error)
}
