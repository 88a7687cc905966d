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
