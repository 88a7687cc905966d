import { Webhook, WebhookVerificationError } from 'standardwebhooks'

// Deliveries follow Standard Webhooks (docs/webhooks.md): `webhook-id`, `webhook-timestamp`
// (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>` over
// `<id>.<timestamp>.<raw body>`, keyed with the base64 part of `whsec_…`; two during a secret
// rotation). Verification is the `standardwebhooks` library's, which also refuses a timestamp
// more than 5 minutes from now.

/** An event as delivered (and as `GET /v1/events` lists it, without resourceType/Id). */
export interface WebhookEvent<D = Record<string, unknown>> {
  id: string
  type: string
  createdAt: string
  /** 1, 2, 3… per resource: apply an event only if newer than the last one applied. */
  sequence: number
  data: D
}

/** Headers as Node (`req.headers`), Fetch (`Headers`) or a plain record gives them. */
export type WebhookHeaders =
  Headers | Record<string, string | string[] | undefined> | { get(name: string): string | null }

export class KurusWebhookError extends Error {
  override name = 'KurusWebhookError'
}

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name) ?? undefined
  }
  const record = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value.join(' ') : value
}

export const webhooks = {
  /**
   * Checks a delivery's signature over the exact bytes received and its timestamp (±5 min),
   * and returns the parsed event. Throws KurusWebhookError when either fails: answer 400.
   */
  verify<D = Record<string, unknown>>(
    rawBody: string | Buffer | Uint8Array,
    headers: WebhookHeaders,
    secret: string,
  ): WebhookEvent<D> {
    const wanted: Record<string, string> = {}
    for (const name of NAMES) {
      const value = header(headers, name)
      if (value === undefined) throw new KurusWebhookError(`missing ${name} header`)
      wanted[name] = value
    }
    const payload = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody)
    try {
      return new Webhook(secret).verify(payload, wanted) as WebhookEvent<D>
    } catch (error) {
      if (error instanceof WebhookVerificationError) throw new KurusWebhookError(error.message)
      throw error
    }
  },

  /** The `webhook-signature` value Kuruş would send (to test your receiver). */
  sign(secret: string, messageId: string, timestamp: Date, rawBody: string): string {
    return new Webhook(secret).sign(messageId, timestamp, rawBody)
  },
}
