// The API reference at /docs: Swagger UI over the served /openapi.json, in Kuruş's page. No
// inline script (the page's CSP forbids it): this file is the page's only code besides
// Swagger UI's bundle. In the sandbox (`<body data-try-it="demo">`) "Try it out" signs each
// request in the browser with the demo merchant's keys (signing.js, WebCrypto); in live the
// page offers no Try it at all, and neither the keys nor signing.js are served.
/* global SwaggerUIBundle, document, window, fetch, FormData, Blob */

const tryIt = document.body.dataset.tryIt === 'demo'
const status = document.getElementById('kr-try-it')

let multipartBody

async function demoSigner() {
  const [{ signedHeaders, multipartBody: writeMultipart }, answer] = await Promise.all([
    import('./signing.js'),
    fetch('/docs/try-it/keys', { cache: 'no-store' }),
  ])
  if (!answer.ok) {
    if (status)
      status.textContent = 'Try it: no demo merchant yet (start the sandbox with npm start)'
    return undefined
  }
  multipartBody = writeMultipart
  const keys = await answer.json()
  if (status) status.textContent = `Try it signs as the demo merchant (${keys.publicKey})`
  return (method, url, body) => signedHeaders(keys, method, url, body)
}

async function main() {
  const spec = await (await fetch('/openapi.json')).json()
  // Try it calls this very server, whatever address the page was opened at.
  spec.servers = [{ url: window.location.origin, description: 'this server' }]
  // Try it leaves Idempotency-Key empty: the documented example, sent twice, would replay.
  const idempotencyKey = spec.components?.parameters?.IdempotencyKey
  if (idempotencyKey) delete idempotencyKey.example
  const sign = tryIt ? await demoSigner() : undefined
  SwaggerUIBundle({
    spec,
    dom_id: '#swagger-ui',
    layout: 'BaseLayout',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    defaultModelExpandDepth: 2,
    displayRequestDuration: true,
    filter: true,
    tryItOutEnabled: false,
    supportedSubmitMethods: sign ? ['get', 'put', 'post', 'delete', 'patch'] : [],
    validatorUrl: null,
    async requestInterceptor(request) {
      if (!sign || request.loadSpec) return request
      // The exact bytes sent are signed: Swagger UI sends a JSON body as the editor's text;
      // a multipart upload (POST /v1/files) is written out as bytes here (multipartBody) and
      // sent as a Blob of them, whose type carries our boundary (Swagger's client drops a
      // multipart Content-Type header so that the browser sets one).
      if (request.body instanceof FormData) {
        const { bytes, contentType } = await multipartBody(request.body)
        request.body = new Blob([bytes], { type: contentType })
        request.headers = Object.fromEntries(
          Object.entries(request.headers).filter(([name]) => name.toLowerCase() !== 'content-type'),
        )
        request.headers['Content-Type'] = contentType
        Object.assign(request.headers, await sign(request.method, request.url, bytes))
        return request
      }
      const body = typeof request.body === 'string' ? request.body : ''
      Object.assign(request.headers, await sign(request.method, request.url, body))
      return request
    },
  })
}

main().catch((error) => {
  if (status) status.textContent = `The reference could not load: ${error}`
})
