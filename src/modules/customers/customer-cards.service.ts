import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { newId } from '../../platform/ids.ts'
import { recordEvent } from '../events/index.ts'
import { bindCardToCustomer, getCardToken, revokeCardToken } from '../vault/index.ts'
import { customersError } from './customers.errors.ts'
import * as repo from './customers.repository.ts'
import { getCustomer, lockCustomer } from './customers.service.ts'
import type { CustomerCardRow } from './customers.table.ts'

// Saved cards. Every change takes the customer's row lock first (lockCustomer), then the
// vault token's: one lock order everywhere, so two writers queue and never deadlock. The
// invariant kept under that lock: a customer with at least one attached card has exactly one
// default card (the partial unique index customer_cards_one_default backs the "at most").

export interface CustomerCard {
  id: string
  customerId: string
  cardToken: string
  last4: string
  bin: string
  brand: string
  expMonth: number
  expYear: number
  isDefault: boolean
  fingerprint: string | null
  /** Past the last day of its expiry month (UTC) by the service clock. */
  expired: boolean
  createdAt: Date
}

/** Cards per customer: bounds the unpaginated card list. */
export const CARDS_PER_CUSTOMER_MAX = 50

/** A card is valid through the last day of its expiry month, as the vault checks it. */
export function isCardExpired(expMonth: number, expYear: number, now: Date): boolean {
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth() + 1
  return expYear < year || (expYear === year && expMonth < month)
}

function cardRowToCard(row: CustomerCardRow, now: Date): CustomerCard {
  return {
    id: row.id,
    customerId: row.customer_id,
    cardToken: row.card_token,
    last4: row.last4,
    bin: row.bin,
    brand: row.brand,
    expMonth: row.exp_month,
    expYear: row.exp_year,
    isDefault: row.is_default,
    fingerprint: row.card_fingerprint,
    expired: isCardExpired(row.exp_month, row.exp_year, now),
    createdAt: row.created_at,
  }
}

function cardEvent(merchantId: string, type: string, customerId: string, at: Date) {
  return { merchantId, storeId: null, type, resourceType: 'customer', resourceId: customerId, at }
}

/** Makes `cardId` the default; the caller holds the customer lock. */
async function switchDefault(tx: Tx, customerId: string, cardId: string) {
  // Clear first: the partial unique index allows one default at any instant.
  await repo.clearDefaultCard(tx, customerId)
  return repo.setDefaultCard(tx, cardId)
}

export interface AttachOutcome {
  card: CustomerCard
  /** false when the token was already this customer's card (a repeat). */
  created: boolean
}

/**
 * Saves a vault token as the customer's card, binding the token to the customer in the
 * vault inside the same transaction. The first card becomes the default; `isDefault: true`
 * makes this card the default (also when it is already attached: that is how a merchant
 * switches the default). Repeating with the same token returns the existing card.
 * Errors: customer or token missing / another merchant's → 404 SVC-RES-3301; token bound to
 * another customer → 409 SVC-RES-3302; token revoked (its card was detached) → 409
 * SVC-STATE-3401; more than CARDS_PER_CUSTOMER_MAX cards → 400 SVC-VAL-3001.
 */
export async function attachCard(
  deps: Deps,
  merchantId: string,
  customerId: string,
  cardToken: string,
  options: { isDefault?: boolean | undefined } = {},
  record?: RecordAnswer<Tx, AttachOutcome>,
): Promise<AttachOutcome> {
  // Both reads sit outside the transaction (on PGlite a read on deps.db inside it would wait
  // for the transaction's own connection). The token's details never change; the customer
  // is checked again under its lock.
  await getCustomer(deps, merchantId, customerId)
  const token = await getCardToken(deps, merchantId, cardToken)
  const outcome = await transact(deps.db, async (tx) => {
    const made = await attachInTx(tx)
    await record?.(tx, { card: cardRowToCard(made.row, deps.clock.now()), created: made.created })
    return made
  })
  return { card: cardRowToCard(outcome.row, deps.clock.now()), created: outcome.created }

  async function attachInTx(tx: Tx) {
    await lockCustomer(tx, merchantId, customerId)
    const now = deps.clock.now()
    const existing = await repo.findCardByToken(tx, merchantId, token.cardToken)
    if (existing && existing.detached_at !== null) throw customersError('card_token_revoked')
    if (existing && existing.customer_id === customerId) {
      const row =
        options.isDefault === true && !existing.is_default
          ? await switchDefault(tx, customerId, existing.id)
          : existing
      if (row !== existing) {
        await recordEvent(tx, {
          ...cardEvent(merchantId, 'customer.default_card_changed', customerId, now),
          data: { customerId, cardId: row.id },
        })
      }
      return { row, created: false }
    }
    // Another customer's card: the vault refuses the binding below (409 SVC-RES-3302).
    await bindCardToCustomer(tx, merchantId, token.cardToken, customerId)
    if (token.status !== 'active') throw customersError('card_token_revoked')
    if ((await repo.countAttachedCards(tx, customerId)) >= CARDS_PER_CUSTOMER_MAX) {
      throw customersError('too_many_cards')
    }
    const currentDefault = await repo.findDefaultCard(tx, merchantId, customerId)
    const isDefault = !currentDefault || options.isDefault === true
    if (isDefault && currentDefault) await repo.clearDefaultCard(tx, customerId)
    const id = newId('cuc')
    await repo.insertCard(tx, {
      id,
      merchant_id: merchantId,
      customer_id: customerId,
      card_token: token.cardToken,
      last4: token.last4,
      bin: token.bin,
      brand: token.brand,
      exp_month: token.expMonth,
      exp_year: token.expYear,
      is_default: isDefault,
      card_fingerprint: token.fingerprint,
      created_at: now,
      detached_at: null,
    })
    await recordEvent(tx, {
      ...cardEvent(merchantId, 'customer.card_attached', customerId, now),
      data: { customerId, cardId: id, isDefault },
    })
    const row = await repo.findAttachedCardById(tx, merchantId, customerId, id)
    assert(row !== undefined, 'inserted card is readable')
    return { row, created: true }
  }
}

/** attachCard for other modules (save-card after capture): the card, new or existing. */
export async function attachCardToCustomer(
  deps: Deps,
  merchantId: string,
  customerId: string,
  cardToken: string,
  options: { isDefault?: boolean | undefined } = {},
): Promise<CustomerCard> {
  return (await attachCard(deps, merchantId, customerId, cardToken, options)).card
}

/** The customer's attached cards, newest first; 404 when the customer is not live. */
export async function listCards(
  deps: Deps,
  merchantId: string,
  customerId: string,
): Promise<CustomerCard[]> {
  await getCustomer(deps, merchantId, customerId)
  const now = deps.clock.now()
  const rows = await repo.findAttachedCards(deps.db, merchantId, customerId)
  return rows.map((row) => cardRowToCard(row, now))
}

/** The default card, or undefined when the customer has none; 404 when the customer is not live. */
export async function getDefaultCard(
  deps: Deps,
  merchantId: string,
  customerId: string,
): Promise<CustomerCard | undefined> {
  await getCustomer(deps, merchantId, customerId)
  const row = await repo.findDefaultCard(deps.db, merchantId, customerId)
  return row ? cardRowToCard(row, deps.clock.now()) : undefined
}

/** getDefaultCard for the HTTP route, where "none" is a 404. */
export async function requireDefaultCard(
  deps: Deps,
  merchantId: string,
  customerId: string,
): Promise<CustomerCard> {
  const card = await getDefaultCard(deps, merchantId, customerId)
  if (!card) throw customersError('no_default_card')
  return card
}

/**
 * The remaining card to become the default after the default is detached: the most recently
 * attached one that is not expired, else the most recently attached one, else none.
 */
function successorOf(rows: CustomerCardRow[], now: Date): CustomerCardRow | undefined {
  return rows.find((r) => !isCardExpired(r.exp_month, r.exp_year, now)) ?? rows[0]
}

/**
 * Detaches a card and revokes its token in the vault in the same transaction, so the token
 * can never be charged again. When it was the default, the successor (successorOf) becomes
 * the default. A card already detached is 404.
 */
export async function detachCard(
  deps: Deps,
  merchantId: string,
  customerId: string,
  cardId: string,
  record?: RecordAnswer<Tx, null>,
): Promise<void> {
  await transact(deps.db, async (tx) => {
    await lockCustomer(tx, merchantId, customerId)
    const card = await repo.findAttachedCardById(tx, merchantId, customerId, cardId)
    if (!card) throw customersError('card_not_found')
    const now = deps.clock.now()
    const detached = await repo.detachCard(tx, card.id, now)
    assert(detached, 'card detached under the customer lock')
    await revokeCardToken(tx, merchantId, card.card_token)
    let newDefaultId: string | null = null
    if (card.is_default) {
      const successor = successorOf(await repo.findAttachedCards(tx, merchantId, customerId), now)
      if (successor) newDefaultId = (await repo.setDefaultCard(tx, successor.id)).id
    }
    await recordEvent(tx, {
      ...cardEvent(merchantId, 'customer.card_detached', customerId, now),
      data: { customerId, cardId: card.id, wasDefault: card.is_default, newDefaultId },
    })
    await record?.(tx, null)
  })
}
