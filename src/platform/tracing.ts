import type { IncomingMessage } from 'node:http'
import { redactUrl } from './logger.ts'

// Optional OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT): a span per HTTP request served
// or sent, with the PostgreSQL queries made inside it as children, exported over OTLP/HTTP
// (JSON) to `<endpoint>/v1/traces`. Nothing of OpenTelemetry is imported unless tracing is
// started, and it must start before anything loads `http` or `pg` (its hooks patch them as
// they are required): src/main.ts starts it first and only then imports the program.

/** Load balancer probes and scrapes: frequent, and nothing to learn from their traces. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics'])

let shutdown: (() => Promise<void>) | undefined
let nameSpan: ((method: string, route: string) => void) | undefined

export async function startTracing(endpoint: string): Promise<void> {
  const [{ NodeSDK }, { OTLPTraceExporter }, { HttpInstrumentation }, { PgInstrumentation }, api] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/api'),
    ])
  const sdk = new NodeSDK({
    serviceName: 'kurus',
    traceExporter: new OTLPTraceExporter({ url: endpoint.replace(/\/+$/, '') + '/v1/traces' }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) =>
          UNTRACED_PATHS.has((request.url ?? '').split('?')[0] ?? ''),
        // Card numbers and secret keys never leave in a span, as in the request log: a URL
        // that carries one (a mistake clients make) is exported redacted.
        requestHook: (span, request) => {
          const url = (request as IncomingMessage).url
          if (url === undefined || redactUrl(url) === url) return
          const redacted = redactUrl(url)
          span.setAttribute('http.target', redacted)
          span.setAttribute('url.path', redacted.split('?')[0] ?? '')
          span.setAttribute('url.query', redacted.split('?').slice(1).join('?'))
        },
      }),
      // Only queries inside a traced request: the job queue's polling would drown the rest.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  })
  sdk.start()
  shutdown = () => sdk.shutdown()
  nameSpan = (method, route) => {
    const span = api.trace.getActiveSpan()
    span?.updateName(`${method} ${route}`)
    span?.setAttribute('http.route', route)
  }
}

/** Names the request's span after its route pattern (never the concrete URL); no-op untraced. */
export function nameRequestSpan(method: string, route: string): void {
  nameSpan?.(method, route)
}

/** Sends the spans still buffered; call before the process exits. */
export async function stopTracing(): Promise<void> {
  await shutdown?.()
}
