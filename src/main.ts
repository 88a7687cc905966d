import { ConfigError, loadConfig } from './config.ts'

// Entry point (`node src/main.ts <command>`, `npx kurus …`). It imports only the configuration
// before deciding about tracing: OpenTelemetry's hooks must be in place before anything loads
// `http` or `pg`, so the program itself (src/commands.ts) is imported after them.

function fail(error: unknown): never {
  process.stderr.write(
    (error instanceof ConfigError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error)) + '\n',
  )
  process.exit(1)
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
