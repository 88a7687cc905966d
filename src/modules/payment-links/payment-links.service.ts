import { randomBytes } from 'node:crypto'
import type { Config } from '../../config.ts'
import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { transact } from '../../platform/db/transaction.ts'
import { AppError, validationError } from '../../platform/errors.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { newId } from '../../platform/ids.ts'
import { checkMetadata, METADATA_KEYS_MAX } from '../../platform/metadata.ts'
import { assertKycApproved, getMerchant, getStore } from '../merchants/index.ts'
import {
  createLinkSession,
  paymentLinkUsage,
  type LinkUsage,
  type Session,
} from '../payments/index.ts'
import { paymentLinksError } from './payment-links.errors.ts'
import * as repo from './payment-links.repository.ts'
import type { Collect, PaymentLinkRow } from './payment-links.table.ts'

// Payment links (CONTRACT.md "Payment links"): a merchant's reusable pay page. The link
// holds no payments itself: each press of its Pay button makes a checkout session
// `<linkId>:<n>` (payments' createLinkSession) and the payment made there carries
// `paymentLinkId`. maxPayments is kept under the link's row lock: a session is made only
// while captured payments plus live ones plus open sessions stay below it.

export const AMOUNT_MIN_MINOR = 100
export const AMOUNT_MAX_MINOR = 10_000_000_000
export const LINKS_LIMIT_MAX = 100

const LINKS_CURSOR = keysetCursor('payment_links', 'kurus/payment-links/list')

/** Why a link takes no more payments, or `active`. */
export type LinkStatus = 'active' | 'deactivated' | 'expired' | 'completed'

export interface PaymentLink {
  id: string
  merchantId: string
  storeId: string
  publicHash: string
  url: string
  status: LinkStatus
  active: boolean
  amount: number
  currency: 'TRY'
  description: string
  maxPayments: number | null
  /** Payments made through the link that captured money. */
  paymentsCount: number
  expiresAt: Date | null
  metadata: Record<string, string>
  installments: boolean
  collect: Collect
  returnUrl: string | null
  createdAt: Date
  deactivatedAt: Date | null
}

export function linkUrl(config: Config, publicHash: string): string {
  return `${config.checkoutUrl}/l/${publicHash}`
}

function statusOf(row: PaymentLinkRow, usage: LinkUsage | undefined, now: Date): LinkStatus {
  if (!row.active) return 'deactivated'
  if (row.max_payments !== null && (usage?.captured ?? 0) >= row.max_payments) return 'completed'
  if (row.expires_at !== null && row.expires_at.getTime() <= now.getTime()) return 'expired'
  return 'active'
}

function rowToLink(
  config: Config,
  row: PaymentLinkRow,
  usage: LinkUsage | undefined,
  now: Date,
): PaymentLink {
  const status = statusOf(row, usage, now)
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    publicHash: row.public_hash,
    url: linkUrl(config, row.public_hash),
    status,
    active: status === 'active',
    amount: row.amount,
    currency: row.currency,
    description: row.description,
    maxPayments: row.max_payments,
    paymentsCount: usage?.captured ?? 0,
    expiresAt: row.expires_at,
    metadata: row.metadata,
    installments: row.installments,
    collect: row.collect,
    returnUrl: row.return_url,
    createdAt: row.created_at,
    deactivatedAt: row.deactivated_at,
  }
}

async function withUsage(deps: Deps, merchantId: string, rows: PaymentLinkRow[]) {
  const now = deps.clock.now()
  const usage = await paymentLinkUsage(
    deps.db,
    now,
    merchantId,
    rows.map((r) => r.id),
  )
  return rows.map((r) => rowToLink(deps.config, r, usage.get(r.id), now))
}

export interface CreateLinkInput {
  storeId: string
  amount: number
  description: string
  maxPayments?: number | undefined
  expiresAt?: Date | undefined
  metadata?: Record<string, string> | undefined
  installments?: boolean | undefined
  collect?: Collect | undefined
  returnUrl?: string | undefined
}

/** Creates an active link. The store must be the merchant's; expiresAt in the future. */
export async function createPaymentLink(
  deps: Deps,
  merchantId: string,
  input: CreateLinkInput,
  record?: RecordAnswer<Tx, PaymentLink>,
): Promise<PaymentLink> {
  const now = deps.clock.now()
  if (input.amount < AMOUNT_MIN_MINOR || input.amount > AMOUNT_MAX_MINOR) {
    throw validationError('amount', `must be between ${AMOUNT_MIN_MINOR} and ${AMOUNT_MAX_MINOR}`)
  }
  if (input.expiresAt !== undefined && input.expiresAt.getTime() <= now.getTime()) {
    throw validationError('expiresAt', 'must be in the future')
  }
  const metadata = input.metadata ?? {}
  checkMetadata(metadata)
  // What the buyer types is added to the session's metadata (customerName, customerEmail,
  // customerPhone): room for it is kept within the 50 keys.
  const asked = ['email', 'phone', 'name'].filter((k) => input.collect?.[k as keyof Collect])
  if (Object.keys(metadata).length + asked.length > METADATA_KEYS_MAX) {
    throw validationError(
      'metadata',
      `at most ${METADATA_KEYS_MAX - asked.length} keys when the link collects ${asked.join(', ')}`,
    )
  }
  try {
    await getStore(deps, merchantId, input.storeId)
  } catch {
    throw validationError('storeId', 'is not a store of this merchant')
  }
  const collect: Collect = {
    ...(input.collect?.email ? { email: true } : {}),
    ...(input.collect?.phone ? { phone: true } : {}),
    ...(input.collect?.name ? { name: true } : {}),
  }
  const row = {
    id: newId('plink'),
    merchant_id: merchantId,
    store_id: input.storeId,
    public_hash: randomBytes(16).toString('base64url'),
    amount: input.amount,
    description: input.description,
    max_payments: input.maxPayments ?? null,
    expires_at: input.expiresAt ?? null,
    metadata: JSON.stringify(metadata),
    installments: input.installments ?? false,
    collect: JSON.stringify(collect),
    return_url: input.returnUrl ?? null,
    active: true,
    deactivated_at: null,
    created_at: now,
    updated_at: now,
  }
  // The link and the request's recorded answer commit together (decision 0035).
  return transact(deps.db, async (tx) => {
    const link = rowToLink(deps.config, await repo.insertLink(tx, row), undefined, now)
    await record?.(tx, link)
    return link
  })
}

export async function getPaymentLink(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<PaymentLink> {
  const row = await repo.findLinkById(deps.db, merchantId, id)
  if (!row) throw paymentLinksError('link_not_found')
  const [link] = await withUsage(deps, merchantId, [row])
  assert(link, 'one link in, one out')
  return link
}

/** The merchant's links, newest first (keyset, signed cursor). */
export async function listPaymentLinks(
  deps: Deps,
  merchantId: string,
  q: { limit: number; cursor?: string | undefined },
): Promise<{ items: PaymentLink[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= LINKS_LIMIT_MAX, 'limit')
  return LINKS_CURSOR.page(deps.config.masterKey, merchantId, q, {
    fetch: (before, limit) => repo.findLinkPage(deps.db, { merchantId, before, limit }),
    view: (rows) => withUsage(deps, merchantId, rows),
    position: byCreatedAt,
  })
}

/** Deactivates a link (idempotent): its page answers 410 from now on. */
export async function deactivatePaymentLink(
  deps: Deps,
  merchantId: string,
  id: string,
  record?: RecordAnswer<Tx, PaymentLink>,
): Promise<PaymentLink> {
  return transact(deps.db, async (tx) => {
    const row = await repo.lockLinkById(tx, id)
    if (row?.merchant_id !== merchantId) throw paymentLinksError('link_not_found')
    const now = deps.clock.now()
    if (row.active) {
      await repo.updateLink(tx, id, { active: false, deactivated_at: now, updated_at: now })
    }
    const current = await repo.findLinkById(tx, merchantId, id)
    assert(current, `payment link ${id} not found in its own transaction`)
    const usage = (await paymentLinkUsage(tx, now, merchantId, [id])).get(id)
    const link = rowToLink(deps.config, current, usage, now)
    await record?.(tx, link)
    return link
  })
}

// The buyer's side: the hash in the path is the bearer.

export interface PublicLink {
  link: PaymentLink
  merchantName: string
}

/** What the public page shows. A read: it makes nothing (link previews fetch it too). */
export async function viewPublicLink(deps: Deps, publicHash: string): Promise<PublicLink> {
  const row = await repo.findLinkByHash(deps.db, publicHash)
  if (!row) throw paymentLinksError('link_not_found')
  const [link] = await withUsage(deps, row.merchant_id, [row])
  assert(link, 'one link in, one out')
  const merchant = await getMerchant(deps, row.merchant_id)
  return { link, merchantName: merchant.name }
}

/** What the buyer typed on the link's page, when the link asks for it. */
export interface Buyer {
  email?: string | undefined
  phone?: string | undefined
  name?: string | undefined
}

export type PayOutcome =
  | { kind: 'session'; session: Session }
  /** The link takes no payments any more (410 page). */
  | { kind: 'gone'; status: Exclude<LinkStatus, 'active'>; link: PublicLink }
  /** Every payment left is being made in an open session right now (409 page). */
  | { kind: 'busy'; link: PublicLink }

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/
const PHONE = /^\+?[0-9 ()-]{7,20}$/

/** The fields the link asks for, checked; every problem at once. */
export function checkBuyer(collect: Collect, buyer: Buyer): Record<string, string> {
  const issues: { field: string; reason: string }[] = []
  const out: Record<string, string> = {}
  const name = buyer.name?.trim() ?? ''
  const email = buyer.email?.trim() ?? ''
  const phone = buyer.phone?.trim() ?? ''
  if (collect.name) {
    if (name.length < 2 || name.length > 100) issues.push({ field: 'name', reason: 'required' })
    else out['customerName'] = name
  }
  if (collect.email) {
    if (!EMAIL.test(email)) issues.push({ field: 'email', reason: 'invalid' })
    else out['customerEmail'] = email
  }
  if (collect.phone) {
    if (!PHONE.test(phone)) issues.push({ field: 'phone', reason: 'invalid' })
    else out['customerPhone'] = phone
  }
  if (issues.length > 0) {
    const first = issues[0] ?? { field: 'buyer', reason: 'invalid' }
    throw new AppError('SVC-VAL-3001', 400, `${first.field}: ${first.reason}`, issues)
  }
  return out
}

/**
 * The Pay button: one transaction under the link's row lock checks that the link is active
 * and that captured payments plus live ones plus open sessions stay below maxPayments, takes
 * the next session number n and makes checkout session `<linkId>:<n>` — so concurrent
 * presses are counted one after another and never hand out more sessions than payments are
 * left. The session carries the link's metadata plus what the buyer typed and our
 * `paymentLinkId`, and returns to the link's returnUrl (default: its own page).
 */
export async function payLink(deps: Deps, publicHash: string, buyer: Buyer): Promise<PayOutcome> {
  const found = await repo.findLinkByHash(deps.db, publicHash)
  if (!found) throw paymentLinksError('link_not_found')
  const view = await viewPublicLink(deps, publicHash)
  if (view.link.status !== 'active') return { kind: 'gone', status: view.link.status, link: view }
  const buyerMetadata = checkBuyer(found.collect, buyer)
  await assertKycApproved(deps, found.merchant_id)
  const outcome = await transact(deps.db, async (tx) => {
    const row = await repo.lockLinkById(tx, found.id)
    assert(row, `payment link ${found.id} vanished`)
    const now = deps.clock.now()
    const usage = (await paymentLinkUsage(tx, now, row.merchant_id, [row.id])).get(row.id)
    const status = statusOf(row, usage, now)
    if (status !== 'active') return { kind: 'gone' as const, status }
    if (row.max_payments !== null && (usage?.taken ?? 0) >= row.max_payments) {
      return { kind: 'busy' as const }
    }
    const n = row.session_seq + 1
    await repo.updateLink(tx, row.id, { session_seq: n, updated_at: now })
    const metadata = { ...row.metadata, ...buyerMetadata }
    const session = await createLinkSession(tx, deps, {
      merchantId: row.merchant_id,
      storeId: row.store_id,
      paymentLinkId: row.id,
      transactionId: `${row.id}:${n}`,
      amount: row.amount,
      description: row.description,
      returnUrl: row.return_url ?? linkUrl(deps.config, row.public_hash),
      installmentEnabled: row.installments,
      metadata,
    })
    return { kind: 'session' as const, session }
  })
  if (outcome.kind === 'session') return outcome
  if (outcome.kind === 'busy') return { kind: 'busy', link: view }
  return { kind: 'gone', status: outcome.status, link: await viewPublicLink(deps, publicHash) }
}
