import assert from 'node:assert/strict'
import { composeIBAN } from 'ibantools'
import type { Kurus } from '../../sdk/index.ts'
import { checkLedger } from '../../src/modules/ledger/index.ts'
import type { TestApp, TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

// Shared steps of the payout tests; every one goes through the signed HTTP API.

/** A mod-97-valid Turkish IBAN ending in the given account digits (16 at most). */
export function trIban(account: string, bank = '00061'): string {
  const iban = composeIBAN({ countryCode: 'TR', bban: `${bank}0${account.padStart(16, '0')}` })
  assert.ok(iban, `cannot compose a TR IBAN for ${account}`)
  return iban
}

export interface Balance {
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
  reserveMinor: number
  availableMinor: number
  payoutPendingMinor: number
  currency: string
}

export async function balances(client: Kurus): Promise<Balance[]> {
  const res = await client.request<{ items: Balance[] }>('GET', '/v1/balances')
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items
}

export async function balanceOf(client: Kurus, ownerId: string): Promise<Balance> {
  const found = (await balances(client)).find((b) => b.ownerId === ownerId)
  assert.ok(found, `no balance row for ${ownerId}`)
  return found
}

/** Runs every reconciler and drains every job queue (settlement, payout rail, …). */
export async function reconcile(client: Kurus): Promise<Record<string, number>> {
  const res = await client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.ran
}

export async function newSubmerchant(
  h: TestApp,
  merchantId: string,
  input: {
    iban?: string
    holderName?: string
    payoutLimits?: { minMinor?: number; maxMinor?: number; dailyMaxMinor?: number }
  } = {},
): Promise<{ submerchantId: string; client: Kurus }> {
  const res = await h.operator<{ submerchantId: string; publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${merchantId}/submerchants`,
    {
      name: 'Seller',
      iban: input.iban ?? trIban('1234567890123456'),
      holderName: input.holderName ?? 'Seller Ltd',
      ...(input.payoutLimits ? { payoutLimits: input.payoutLimits } : {}),
    },
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { submerchantId: res.body.submerchantId, client: h.clientFor(res.body) }
}

/**
 * Captures a payment (optionally split) and settles it: demo's settlement delay is 0, so
 * one reconcile moves every owner's net share to available. Returns the charge body.
 */
export async function captureAndSettle(
  m: TestMerchant,
  amount: number,
  splits: { submerchantId: string; amountMinor: number }[] = [],
) {
  const { res } = await charge(
    m.client,
    CARDS.frictionless,
    amount,
    {},
    splits.length > 0 ? { splits } : {},
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  await reconcile(m.client)
  return res.body
}

export async function assertLedgerOk(h: TestApp): Promise<void> {
  assert.deepEqual(await checkLedger(h.deps.db), { ok: true, problems: [] })
}

export interface PayoutBody {
  payoutId: string
  status: string
  submerchantId: string | null
  ownerType: string
  ownerId: string
  rail: string
  amountMinor: number
  currency: string
  holderName: string
  destMasked: string
  clientReference: string | null
  failureCode: string | null
  createdAt: string
  processingAt: string | null
  paidAt: string | null
  failedAt: string | null
  code?: string
}

/** A merchant with one submerchant whose settled share is about `shareMinor`. */
export async function fundedSubmerchant(
  h: TestApp,
  shareMinor: number,
  input: Parameters<typeof newSubmerchant>[2] = {},
): Promise<{ m: TestMerchant; sub: Awaited<ReturnType<typeof newSubmerchant>> }> {
  const m = await h.newMerchant()
  const sub = await newSubmerchant(h, m.merchantId, input)
  await captureAndSettle(m, shareMinor * 2, [
    { submerchantId: sub.submerchantId, amountMinor: shareMinor },
  ])
  return { m, sub }
}

/** POST /v1/payouts to a submerchant on the FAST rail. */
export function pay(
  client: TestMerchant['client'],
  submerchantId: string,
  amountMinor: number,
  extra: Record<string, unknown> = {},
) {
  return client.request<PayoutBody>('POST', '/v1/payouts', {
    body: { submerchantId, rail: 'fast', amountMinor, currency: 'TRY', ...extra },
  })
}
