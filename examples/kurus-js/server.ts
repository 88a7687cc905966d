import { createServer, type IncomingMessage, type Server } from 'node:http'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { Kurus } from '../../packages/node/src/index.ts'

// An example merchant page with Kuruş.js card fields (docs/kurus-js.md), on its own origin:
// the page mounts the fields from the checkout origin, gets a single-use token, and this
// server charges it with the secret key; a 3-D Secure challenge opens in Kuruş.js's modal and
// this server completes the payment with the bank's answer. `npm run example` serves it.

export interface MerchantPageOptions {
  /** The Kuruş server (API and checkout), e.g. http://localhost:3000. */
  kurusUrl: string
  publicKey: string
  secretKey: string
  port?: number
  locale?: 'tr' | 'en'
}

function page(o: MerchantPageOptions): string {
  return `<!doctype html>
<html lang="${o.locale ?? 'tr'}">
<head><meta charset="utf-8"><title>Örnek Mağaza — Kuruş.js</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:480px;margin:40px auto;padding:0 16px}
button{padding:10px 18px;font-size:16px;border-radius:8px;border:0;background:#0f766e;color:#fff}</style>
</head>
<body>
<h1>Örnek Mağaza</h1>
<p>Sepet: 150,00 TL</p>
<div id="card"></div>
<button id="pay" type="button">Öde</button>
<p id="result" role="status"></p>
<script src="${o.kurusUrl}/js/v1/kurus.js"></script>
<script>
const kurus = Kurus(${JSON.stringify(o.publicKey)}, { locale: ${JSON.stringify(o.locale ?? 'tr')} })
const fields = kurus.cardFields('#card', { style: { fontSize: '16px', borderRadius: '6px', accentColor: '#0f766e' } })
const post = (path, body) => fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json())
document.getElementById('pay').addEventListener('click', async () => {
  const result = document.getElementById('result')
  const { token, error } = await fields.createToken()
  if (error) { result.textContent = 'error ' + error.code + ': ' + error.message; return }
  let payment = await post('/charge', { token })
  if (payment.status === 'pending_3ds') {
    const answer = await kurus.confirm3ds(payment.challengeUrl)
    payment = await post('/complete', answer)
  }
  result.textContent = 'payment ' + payment.paymentId + ' ' + payment.status
})
</script>
</body>
</html>`
}

async function json(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>
}

/** Starts the example shop; resolves with its URL and a stop function. */
export async function startMerchantPage(
  o: MerchantPageOptions,
): Promise<{ url: string; server: Server }> {
  const kurus = new Kurus({ publicKey: o.publicKey, secretKey: o.secretKey, baseUrl: o.kurusUrl })
  let origin = ''
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    void (async () => {
      try {
        if (req.method === 'GET' && req.url === '/') {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(o))
        } else if (req.method === 'POST' && req.url === '/charge') {
          // The order, then the token the buyer's browser made: the card never came here.
          const { token } = await json(req)
          const transactionId = `order-${randomUUID()}`
          await kurus.sessions.create({
            transactionId,
            amount: 15000,
            currency: 'TRY',
            // The bank returns the buyer here, inside Kuruş.js's modal on this origin.
            returnUrl: `${origin}/return`,
          })
          const payment = await kurus.payments.create({
            transactionId,
            amount: 15000,
            currency: 'TRY',
            cardToken: token ?? '',
          })
          send(200, payment)
        } else if (req.method === 'POST' && req.url === '/complete') {
          const { paymentId, correlationId, pares } = await json(req)
          const done = await kurus.payments.completeThreeDS(paymentId ?? '', {
            correlationId: correlationId ?? '',
            pares: pares ?? '',
          })
          send(200, { paymentId: done.id, status: done.status })
        } else if (req.method === 'GET' && req.url?.startsWith('/return')) {
          res
            .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
            .end('<!doctype html><p>…</p>')
        } else {
          send(404, { error: 'not found' })
        }
      } catch (error) {
        send(500, { error: String(error) })
      }
    })()
  })
  await new Promise<void>((done) => server.listen(o.port ?? 0, '127.0.0.1', done))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url: origin, server }
}
