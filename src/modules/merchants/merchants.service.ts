import { isValidIBAN, electronicFormatIBAN } from 'ibantools'
import type { Deps } from '../../database.ts'
import { hashPassword, randomToken } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import { newId, newUuid } from '../../platform/ids.ts'
import { merchantsError } from './merchants.errors.ts'
import * as repo from './merchants.repository.ts'
import type { KycStatus, MerchantRow, Pricing } from './merchants.table.ts'
import { issueKey, type IssuedKey } from './api-keys.service.ts'
import { dashboardEmailExists } from './dashboard-users.repository.ts'
import { announceMerchantChange, cached, forgetMerchant } from './merchants.cache.ts'

// Merchants, stores and submerchants: creation with their first key pair, pricing, payout
// limits, and the KYC status that gates taking money in.

export interface CommissionInput {
  rateBps?: number
  fixedMinor?: number
  perExtraInstallmentBps?: number
}

export function pricingFrom(input: CommissionInput | undefined): Pricing {
  const base = input?.rateBps ?? 249
  const step = input?.perExtraInstallmentBps ?? 100
  return {
    rateBpsByInstallment: Array.from({ length: 12 }, (_, i) => base + step * i),
    fixedMinor: input?.fixedMinor ?? 25,
  }
}

export interface CreatedMerchant {
  merchantId: string
  storeId: string
  key: IssuedKey
  dashboard: { email: string; password: string }
}

export async function createMerchant(
  deps: Deps,
  input: {
    name: string
    kycStatus?: KycStatus
    commission?: CommissionInput
    /** The owner's sign-in email; without it, a synthetic address of the merchant's id. */
    ownerEmail?: string
  },
  /** Chosen by a caller that records the creation under it first (the operator's audit). */
  merchantId: string = newId('mrc'),
): Promise<CreatedMerchant> {
  const storeId = newId('sto')
  const now = deps.clock.now()
  const kycStatus = input.kycStatus ?? 'none'
  const password = randomToken(12)
  const passwordHash = await hashPassword(password, deps.config.passwordHashCost)
  const email = input.ownerEmail?.trim().toLowerCase() ?? `${merchantId}@merchants.kurus.local`
  const key = await transact(deps.db, async (tx) => {
    // An email is one dashboard account, as for an invitation; the unique index backs this up.
    if (await dashboardEmailExists(tx, email)) throw merchantsError('dashboard_email_taken')
    await repo.insertMerchant(tx, {
      id: merchantId,
      name: input.name,
      kyc_status: kycStatus,
      kyc_decided_at: kycStatus === 'none' || kycStatus === 'pending' ? null : now,
      kyc_subject_id: newId('sbj'),
      kyc_session_id: newUuid(),
      pricing: JSON.stringify(pricingFrom(input.commission)),
      settlement_delay_seconds: deps.config.env === 'live' ? 86_400 : 0,
      created_at: now,
    })
    await repo.insertStore(tx, {
      id: storeId,
      merchant_id: merchantId,
      name: `${input.name} store`,
      webhook_url: null,
      created_at: now,
    })
    await repo.insertDashboardUser(tx, {
      id: newId('usr'),
      merchant_id: merchantId,
      email,
      password_hash: passwordHash,
      created_at: now,
    })
    return issueKey(deps, tx, { merchantId, storeId, submerchantId: null, scope: 'merchant' })
  })
  return { merchantId, storeId, key, dashboard: { email, password } }
}

export async function createStore(
  deps: Deps,
  merchantId: string,
  input: { name?: string },
): Promise<{ storeId: string; key: IssuedKey }> {
  const merchant = await repo.findMerchantById(deps.db, merchantId)
  if (!merchant) throw merchantsError('merchant_not_found')
  const storeId = newId('sto')
  const key = await transact(deps.db, async (tx) => {
    await repo.insertStore(tx, {
      id: storeId,
      merchant_id: merchantId,
      name: input.name ?? `${merchant.name} store`,
      webhook_url: null,
      created_at: deps.clock.now(),
    })
    return issueKey(deps, tx, { merchantId, storeId, submerchantId: null, scope: 'merchant' })
  })
  return { storeId, key }
}

export interface PayoutLimits {
  minMinor: number
  maxMinor: number
  dailyMaxMinor: number
}

export const DEFAULT_PAYOUT_LIMITS: PayoutLimits = {
  minMinor: 100,
  maxMinor: 50_000_000,
  dailyMaxMinor: 200_000_000,
}

export function normalizeIban(raw: string): string | undefined {
  const iban = electronicFormatIBAN(raw) ?? ''
  return iban.startsWith('TR') && iban.length === 26 && isValidIBAN(iban) ? iban : undefined
}

export async function createSubmerchant(
  deps: Deps,
  merchantId: string,
  input: { name: string; iban: string; holderName: string; payoutLimits?: Partial<PayoutLimits> },
): Promise<{ submerchantId: string; key: IssuedKey }> {
  const merchant = await repo.findMerchantById(deps.db, merchantId)
  if (!merchant) throw merchantsError('merchant_not_found')
  const iban = normalizeIban(input.iban)
  if (!iban) throw merchantsError('invalid_iban')
  const limits = { ...DEFAULT_PAYOUT_LIMITS, ...input.payoutLimits }
  const submerchantId = newId('sub')
  const key = await transact(deps.db, async (tx) => {
    await repo.insertSubmerchant(tx, {
      id: submerchantId,
      merchant_id: merchantId,
      name: input.name,
      iban,
      holder_name: input.holderName,
      payout_min_minor: limits.minMinor,
      payout_max_minor: limits.maxMinor,
      payout_daily_max_minor: limits.dailyMaxMinor,
      settlement_delay_seconds: merchant.settlement_delay_seconds,
      created_at: deps.clock.now(),
    })
    return issueKey(deps, tx, { merchantId, storeId: null, submerchantId, scope: 'submerchant' })
  })
  return { submerchantId, key }
}

export interface Merchant {
  id: string
  name: string
  kycStatus: KycStatus
  kycDecidedAt: Date | null
  kycSubjectId: string
  kycSessionId: string | null
  pricing: Pricing
  settlementDelaySeconds: number
  createdAt: Date
}

function merchantRowToMerchant(row: MerchantRow): Merchant {
  return {
    id: row.id,
    name: row.name,
    kycStatus: row.kyc_status,
    kycDecidedAt: row.kyc_decided_at,
    kycSubjectId: row.kyc_subject_id,
    kycSessionId: row.kyc_session_id,
    pricing: row.pricing,
    settlementDelaySeconds: row.settlement_delay_seconds,
    createdAt: row.created_at,
  }
}

/** The merchant, cached in process (merchants.cache.ts: a KYC change reaches every process). */
export async function getMerchant(deps: Deps, merchantId: string): Promise<Merchant> {
  const merchant = await cached(deps, 'merchants', merchantId, async () => {
    const row = await repo.findMerchantById(deps.db, merchantId)
    return row ? { value: merchantRowToMerchant(row), merchantId } : undefined
  })
  if (!merchant) throw merchantsError('merchant_not_found')
  return merchant
}

export async function setKycStatus(
  deps: Deps,
  merchantId: string,
  status: KycStatus,
): Promise<Merchant> {
  const merchant = await transact(deps.db, async (tx) => {
    const row = await repo.lockMerchantById(tx, merchantId)
    if (!row) throw merchantsError('merchant_not_found')
    // A decision is a move into a settled status; pending and none have no decision time.
    const decidedAt = status === 'none' || status === 'pending' ? null : deps.clock.now()
    await repo.updateMerchantKyc(tx, merchantId, status, decidedAt)
    await announceMerchantChange(tx, merchantId)
    return merchantRowToMerchant({ ...row, kyc_status: status, kyc_decided_at: decidedAt })
  })
  forgetMerchant(deps, merchantId)
  return merchant
}

/** Throws 403 SVC-KYC-3101 unless the merchant may take money in. */
export async function assertKycApproved(deps: Deps, merchantId: string): Promise<void> {
  const row = await repo.findMerchantById(deps.db, merchantId)
  if (!row) throw merchantsError('merchant_not_found')
  if (row.kyc_status !== 'approved') throw merchantsError('kyc_not_approved')
}

export async function countMerchants(deps: Deps): Promise<number> {
  return (await repo.countMerchants(deps.db)).n
}

export async function getStore(deps: Deps, merchantId: string, storeId: string) {
  const row = await repo.findStoreById(deps.db, merchantId, storeId)
  if (!row) throw merchantsError('store_not_found')
  return { id: row.id, merchantId: row.merchant_id, name: row.name, webhookUrl: row.webhook_url }
}

export async function getSubmerchant(deps: Deps, merchantId: string, submerchantId: string) {
  const row = await repo.findSubmerchantById(deps.db, merchantId, submerchantId)
  if (!row) throw merchantsError('submerchant_not_found')
  return {
    id: row.id,
    merchantId: row.merchant_id,
    name: row.name,
    iban: row.iban,
    holderName: row.holder_name,
    payoutLimits: {
      minMinor: row.payout_min_minor,
      maxMinor: row.payout_max_minor,
      dailyMaxMinor: row.payout_daily_max_minor,
    },
    settlementDelaySeconds: row.settlement_delay_seconds,
  }
}

export async function findSubmerchantIds(
  deps: Deps,
  merchantId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const rows = await repo.findSubmerchantsByIds(deps.db, merchantId, ids)
  return new Set(rows.map((r) => r.id))
}
