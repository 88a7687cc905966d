import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Kurus } from '../../sdk/index.ts'
import type { TestApp } from '../helpers/app.ts'

// Shortcuts for checkout tests: the browser's unsigned calls and the merchant's setup.

export const RETURN_URL = 'https://shop.example/return?order=42'

export interface PlainResponse<T = Record<string, unknown>> {
  status: number
  body: T
  text: string
  headers: Headers
}

/** An unsigned request, as the buyer's browser makes it. */
export async function browser<T = Record<string, unknown>>(
  h: TestApp,
  method: string,
  path: string,
  options: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<PlainResponse<T>> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | undefined
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(options.json)
  } else if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    body = new URLSearchParams(options.form).toString()
  }
  const response = await fetch(h.url + path, {
    method,
    headers,
    redirect: 'manual',
    ...(body === undefined ? {} : { body }),
  })
  const text = await response.text()
  let parsed: unknown = null
  if ((response.headers.get('content-type') ?? '').includes('json') && text)
    parsed = JSON.parse(text)
  return { status: response.status, body: parsed as T, text, headers: response.headers }
}

export async function createSession(
  client: Kurus,
  body: Record<string, unknown>,
): Promise<{ sessionId: string; transactionId: string }> {
  const transactionId = `ord-${randomUUID()}`
  const res = await client.request<{ sessionId: string }>('POST', '/v1/payments/sessions', {
    body: { transactionId, currency: 'TRY', returnUrl: RETURN_URL, ...body },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { sessionId: res.body.sessionId, transactionId }
}

export async function createCustomer(client: Kurus): Promise<string> {
  const res = await client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${randomUUID()}`, name: 'Ayşe Yılmaz' },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id
}

export function buyerCard(number: string) {
  return { number, expMonth: 12, expYear: 2030, cvc: '123', holderName: 'Ayşe Yılmaz' }
}

/** The query of a returnUrl we redirected to, as an object. */
export function returnQuery(url: string): Record<string, string> {
  const parsed = new URL(url)
  assert.equal(parsed.origin + parsed.pathname, 'https://shop.example/return')
  return Object.fromEntries(parsed.searchParams)
}
