import assert from 'node:assert/strict'
import type { PaymentLink } from '../../sdk/index.ts'
import type { TestApp, TestMerchant } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'

export async function createLink(
  m: TestMerchant,
  extra: Record<string, unknown> = {},
): Promise<PaymentLink> {
  const res = await m.client.request<PaymentLink>('POST', '/v1/payment-links', {
    body: { storeId: m.storeId, amount: 14_990, description: 'El yapımı kupa', ...extra },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

export function hashOf(link: PaymentLink): string {
  return new URL(link.url).pathname.split('/').at(-1) ?? ''
}

export async function page(h: TestApp, path: string, init: RequestInit = {}) {
  const response = await fetch(h.url + path, { redirect: 'manual', ...init })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

/** The Pay button as a plain HTML form submits it. */
export function pressPay(h: TestApp, hash: string, form: Record<string, string> = {}) {
  return page(h, `/l/${hash}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  })
}

/** Presses Pay and returns the checkout session id it redirected to. */
export async function sessionFromPay(
  h: TestApp,
  hash: string,
  form: Record<string, string> = {},
): Promise<string> {
  const res = await pressPay(h, hash, form)
  assert.equal(res.status, 303, res.text.slice(0, 300))
  const location = res.headers.get('location') ?? ''
  assert.match(location, /^\/s\/[0-9a-f-]{36}$/)
  return location.slice(3)
}

/** The hosted checkout's own API, as its page script calls it. */
export async function payByCard(
  h: TestApp,
  sessionId: string,
  number: string = CARDS.frictionless,
) {
  const response = await fetch(`${h.url}/v1/public/sessions/${sessionId}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      card: { number, expMonth: 12, expYear: 2030, cvc: '123', holderName: 'Ayşe Yılmaz' },
    }),
  })
  return {
    status: response.status,
    body: (await response.json()) as { paymentId: string; status: string },
  }
}
