import type { TestMerchant } from '../helpers/app.ts'

// Shortcuts for chargeback tests: the sandbox plays the bank through the signed API.

export interface Cb {
  id: string
  paymentId: string
  amount: number
  status: string
  reasonCode: string
  bankChargebackId: string
  receivedAt: string
  resolvedAt: string | null
}

/** The bank reports a chargeback on a captured payment (sandbox). */
export async function raise(
  m: TestMerchant,
  paymentId: string,
  body: Record<string, unknown> = {},
) {
  return m.client.request<Cb & { code?: string }>(
    'POST',
    `/v1/sandbox/payments/${paymentId}/chargebacks`,
    { body },
  )
}
