import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Kurus } from '../../sdk/index.ts'

// Shortcuts for the customers tests; every call goes through the signed HTTP API.

export interface CustomerBody {
  id: string
  merchantId: string
  externalId: string
  email: string | null
  phone: string | null
  name: string | null
  extraData: Record<string, unknown>
  createdAt: string
  updatedAt: string
}

export interface CardBody {
  id: string
  customerId: string
  cardToken: string
  last4: string
  bin?: string
  brand: string
  expMonth: number
  expYear: number
  isDefault: boolean
  expired: boolean
  createdAt: string
}

export interface ErrorBody {
  code: string
  message: string
  requestId: string
  details?: { field: string; reason: string }[]
}

export async function createCustomer(
  client: Kurus,
  body: Record<string, unknown> = {},
): Promise<CustomerBody> {
  const res = await client.request<CustomerBody>('POST', '/v1/customers', {
    body: { externalId: `ext-${randomUUID()}`, ...body },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

export async function attach(
  client: Kurus,
  customerId: string,
  cardToken: string,
  isDefault?: boolean,
) {
  return client.request<CardBody & ErrorBody>('POST', `/v1/customers/${customerId}/cards`, {
    body: { cardToken, ...(isDefault === undefined ? {} : { isDefault }) },
  })
}

export async function listCards(client: Kurus, customerId: string): Promise<CardBody[]> {
  const res = await client.request<{ items: CardBody[] }>(
    'GET',
    `/v1/customers/${customerId}/cards`,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items
}
