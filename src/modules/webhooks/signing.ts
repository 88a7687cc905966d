import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

// Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` +
// base64 of random bytes; the signature is `v1,` + base64 HMAC-SHA256 over
// `<webhook-id>.<webhook-timestamp>.<body>`. Several signatures separated by spaces let a
// receiver keep verifying through a secret rotation.

const SECRET_BYTES = 32

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`
}

/** The `webhook-signature` header value: one `v1,<base64>` per secret, space-separated. */
export function signatureHeader(
  secrets: readonly string[],
  messageId: string,
  timestamp: Date,
  body: string,
): string {
  return secrets.map((s) => new Webhook(s).sign(messageId, timestamp, body)).join(' ')
}
