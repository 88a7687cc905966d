// Postman pre-request script of the Kuruş collection (scripts/postman.ts puts it in the
// collection): signs every request as docs/api.md says. The canonical string is X-Timestamp,
// the upper-case method, the path without its query (path variables filled in) and the hex
// SHA-256 of the exact body sent, joined by "\n"; X-Signature is its hex HMAC-SHA256 keyed
// with the secret key. Keys come from the variables `publicKey` and `secretKey` (an
// environment's, else the collection's).
/* global pm, require */
// Postman's sandbox defines CryptoJS already; required under a name of our own.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Postman's sandbox has require, not import
const cryptoJs = require('crypto-js')

const publicKey = pm.variables.get('publicKey')
const secretKey = pm.variables.get('secretKey')
if (!publicKey || !secretKey) {
  throw new Error('Set the publicKey and secretKey variables (npm start prints the demo keys)')
}

let path = pm.request.url.getPath()
pm.request.url.variables.each((variable) => {
  path = path.replace(`:${variable.key}`, pm.variables.replaceIn(String(variable.value ?? '')))
})
path = pm.variables.replaceIn(path)

const body =
  pm.request.body && pm.request.body.mode === 'raw'
    ? pm.variables.replaceIn(pm.request.body.raw ?? '')
    : ''
// The body is sent as resolved here: variables in it are replaced before hashing.
if (pm.request.body && pm.request.body.mode === 'raw') pm.request.body.raw = body

const timestamp = new Date().toISOString()
const canonical = [
  timestamp,
  pm.request.method.toUpperCase(),
  path,
  cryptoJs.SHA256(body).toString(cryptoJs.enc.Hex),
].join('\n')
const signature = cryptoJs.HmacSHA256(canonical, secretKey).toString(cryptoJs.enc.Hex)

pm.request.headers.upsert({ key: 'X-Api-Key', value: publicKey })
pm.request.headers.upsert({ key: 'X-Timestamp', value: timestamp })
pm.request.headers.upsert({ key: 'X-Signature', value: signature })
