import { readFileSync } from 'node:fs'
import { startMerchantPage } from './server.ts'

// `npm run example`: the Kuruş.js example shop on http://127.0.0.1:4243, against the sandbox of
// `npm start` (KURUS_URL, default http://localhost:3000). Keys: KURUS_PUBLIC_KEY and
// KURUS_SECRET_KEY, else the demo merchant's (asked of the running sandbox). The shop's origin
// is added to the store's allowed origins as the demo's dashboard user.

const kurusUrl = process.env['KURUS_URL'] ?? 'http://localhost:3000'
const port = Number(process.env['PORT'] ?? 4243)
const operatorToken = process.env['KURUS_OPERATOR_TOKEN']

async function demoKeys(): Promise<{ publicKey: string; secretKey: string }> {
  const { KURUS_PUBLIC_KEY: publicKey, KURUS_SECRET_KEY: secretKey } = process.env
  if (publicKey && secretKey) return { publicKey, secretKey }
  const res = await fetch(`${kurusUrl}/operator/v1/demo/credentials`, {
    headers: operatorToken ? { authorization: `Bearer ${operatorToken}` } : {},
  })
  if (!res.ok)
    throw new Error('set KURUS_PUBLIC_KEY and KURUS_SECRET_KEY (or KURUS_OPERATOR_TOKEN)')
  return (await res.json()) as { publicKey: string; secretKey: string }
}

const keys = await demoKeys()
const shop = await startMerchantPage({ kurusUrl, ...keys, port })
const demo = JSON.parse(readFileSync('.kurus/demo.json', 'utf8')) as {
  storeId: string
  dashboard: { email: string; password: string }
}
const login = await fetch(`${kurusUrl}/v1/dashboard/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(demo.dashboard),
})
const { token } = (await login.json()) as { token: string }
await fetch(`${kurusUrl}/v1/stores/${demo.storeId}/allowed-origins`, {
  method: 'PUT',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify({ origins: [shop.url] }),
})
process.stdout.write(`Example shop with Kuruş.js card fields: ${shop.url}\n`)
