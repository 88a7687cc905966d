import type { Deps } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import { newUuid } from '../../platform/ids.ts'
import { detokenize } from '../vault/index.ts'
import { acquirerError } from './acquirer.errors.ts'
import type { ThreeDsGateForm, ThreeDsStart } from './acquirer.port.ts'
import { readPares, signPares } from './acs.ts'
import type { BankOutcome, ThreeDCallback } from './bank-wire.ts'
import { estV3Authorize3d, estV3ThreeDForm, estV3VerifyCallback } from './est-v3.ts'
import { garantiAuthorize3d, garantiThreeDForm, garantiVerifyCallback } from './garanti.ts'
import { posnetAuthorize3d, posnetThreeDForm, posnetVerifyCallback } from './posnet.ts'
import { connectorConfigOf } from './pos-accounts.service.ts'
import { est, gvps, ykb, type ConnectorConfig } from './pos-connectors.ts'
import * as repo from './pos-3ds.repository.ts'
import { findPosAccount } from './pos.repository.ts'
import type { Pos3dsRow, ThreeDModel } from './pos-3ds.table.ts'
import type { PosAccountRow } from './pos.table.ts'

// 3-D Secure at the bank POS a charge is routed to (docs/acquiring.md, decision 0039): the
// buyer's browser posts the bank's signed form to the POS's 3D gate, the bank posts back to
// us, the callback is verified with the connector's check and what the authorization needs
// is kept. The POS is chosen before the challenge and the authorization goes to it alone:
// the authentication belongs to that bank's order, so failing over would need a new
// challenge. The buyer then returns to the merchant's flow with a pares, as after the
// sandbox ACS, so POST /v1/payments/{id}/3ds-callback keeps its contract.

/** How the bank set the store up: EST stores may be 3D Pay; Garanti and PosNet here are 3D. */
function modelOf(deps: Deps, account: PosAccountRow): ThreeDModel {
  if (account.provider !== 'est_v3') return '3d'
  return connectorConfigOf(deps, account).credentials['storeType'] === '3d_pay' ? '3d_pay' : '3d'
}

/** Records the challenge at the routed POS (once per payment) and hands out its correlation. */
export async function startGate3ds(
  deps: Deps,
  account: PosAccountRow,
  p: {
    paymentId: string
    merchantId: string
    cardToken: string
    amount: number
    installmentCount: number
    capture: boolean
  },
): Promise<ThreeDsStart> {
  const now = deps.clock.now()
  const inserted = await repo.insertPos3ds(deps.db, {
    payment_id: p.paymentId,
    merchant_id: p.merchantId,
    pos_account_id: account.id,
    model: modelOf(deps, account),
    correlation_id: newUuid(),
    card_token: p.cardToken,
    amount: p.amount,
    installment_count: p.installmentCount,
    pre_auth: !p.capture,
    state: 'waiting',
    md_status: null,
    authentication: null,
    gate_payment: null,
    created_at: now,
    updated_at: now,
  })
  const row = inserted ?? (await repo.findPos3ds(deps.db, p.paymentId))
  if (!row) throw new Error(`3-D Secure record of ${p.paymentId} vanished`)
  return { kind: 'challenge', correlationId: row.correlation_id }
}

async function gateOf(
  deps: Deps,
  paymentId: string,
  correlationId: string,
): Promise<{ row: Pos3dsRow; account: PosAccountRow; config: ConnectorConfig } | null> {
  const row = await repo.findPos3ds(deps.db, paymentId)
  if (!row) return null
  if (row.correlation_id !== correlationId) throw acquirerError('correlation_invalid')
  const account = await findPosAccount(deps.db, row.pos_account_id)
  if (!account) throw acquirerError('correlation_invalid')
  return { row, account, config: connectorConfigOf(deps, account) }
}

/** The bank's signed 3D form for this challenge; null when the challenge is the sandbox ACS's. */
export async function gateForm(
  deps: Deps,
  p: { paymentId: string; correlationId: string; okUrl: string; failUrl: string },
): Promise<ThreeDsGateForm | null> {
  const gate = await gateOf(deps, p.paymentId, p.correlationId)
  if (!gate) return null
  const { row, account, config } = gate
  // Read from the vault for this form only; the browser posts it to the bank, we keep nothing.
  const stored = await detokenize(deps, {
    merchantId: row.merchant_id,
    cardToken: row.card_token,
    callerService: 'acquirer',
  })
  const card = { pan: stored.pan, expMonth: stored.expMonth, expYear: stored.expYear, cvc: '' }
  const order = {
    orderId: row.payment_id,
    amount: row.amount,
    installmentCount: row.installment_count,
    preAuth: row.pre_auth,
    card,
  }
  switch (account.provider) {
    case 'est_v3':
      return estV3ThreeDForm(est(config), {
        ...order,
        model: row.model,
        okUrl: p.okUrl,
        failUrl: p.failUrl,
      })
    case 'garanti':
      return garantiThreeDForm(gvps(config), {
        ...order,
        successUrl: p.okUrl,
        errorUrl: p.failUrl,
      })
    case 'posnet': {
      // PosNet encrypts the card and order first (its XML API), then the browser posts.
      const made = await posnetThreeDForm(ykb(config), { ...order, returnUrl: p.okUrl })
      if (made.ok) return made.form
      throw new AppError('SVC-INT-9001', 503, 'the bank did not prepare the 3-D Secure form')
    }
  }
}

function verify(
  account: PosAccountRow,
  config: ConnectorConfig,
  fields: Record<string, string>,
  expected: { orderId: string; amount: number },
): Promise<ThreeDCallback> | ThreeDCallback {
  switch (account.provider) {
    case 'est_v3':
      return estV3VerifyCallback(est(config), fields, expected)
    case 'garanti':
      return garantiVerifyCallback(gvps(config), fields, expected)
    case 'posnet':
      return posnetVerifyCallback(ykb(config), fields, expected)
  }
}

/**
 * The bank's post back: checked (hash, order id = payment id, amount, currency) before
 * anything is kept; only the bank's full authentication (mdStatus 1) counts. The first
 * verified callback decides; a duplicate (the bank's, or the buyer's back button) is checked
 * the same way and answered as the first was. A refused one changes nothing.
 */
export async function completeGate(
  deps: Deps,
  p: { paymentId: string; correlationId: string; fields: Record<string, string> },
): Promise<{ pares: string; correlationId: string }> {
  const gate = await gateOf(deps, p.paymentId, p.correlationId)
  if (!gate) throw acquirerError('correlation_invalid')
  const { row, account, config } = gate
  const checked = await verify(account, config, p.fields, {
    orderId: row.payment_id,
    amount: row.amount,
  })
  if (!checked.ok) {
    if (checked.reason === 'unavailable') {
      throw new AppError('SVC-INT-9001', 503, 'the bank did not answer; post the callback again')
    }
    deps.log.warn(
      { paymentId: row.payment_id, posAccountId: account.id, reason: checked.reason },
      '3-D Secure callback refused',
    )
    throw acquirerError('gate_callback_refused')
  }
  const now = deps.clock.now()
  const settled = await repo.settlePos3ds(deps.db, row.payment_id, {
    state: checked.authenticated ? 'authenticated' : 'failed',
    md_status: checked.mdStatus,
    authentication: JSON.stringify(checked.authentication),
    gate_payment: JSON.stringify(checked.payment ?? null),
    updated_at: now,
  })
  const decided = settled ?? (await repo.findPos3ds(deps.db, row.payment_id)) ?? row
  const result = decided.state === 'authenticated' ? 'Y' : 'N'
  const claims = { paymentId: row.payment_id, correlationId: row.correlation_id, result } as const
  return {
    pares: await signPares(deps.config.masterKey, claims, now),
    correlationId: row.correlation_id,
  }
}

/** A pares of a bank-gate challenge: ours, unexpired, and what the verified callback said. */
export async function verifyGatePares(
  deps: Deps,
  row: Pos3dsRow,
  p: { paymentId: string; correlationId: string; pares: string },
): Promise<{ authenticated: boolean }> {
  const claims = await readPares(deps.config.masterKey, p.pares, deps.clock.now())
  if (
    !claims ||
    claims.paymentId !== p.paymentId ||
    claims.correlationId !== p.correlationId ||
    row.correlation_id !== p.correlationId ||
    row.state === 'waiting'
  ) {
    throw acquirerError('pares_invalid')
  }
  return { authenticated: claims.result === 'Y' && row.state === 'authenticated' }
}

/** The 3D model's authorization at the gate's POS, with what its callback carried. */
export function authorizeAfterGate(
  account: PosAccountRow,
  config: ConnectorConfig,
  row: Pos3dsRow,
): Promise<BankOutcome> {
  const p = {
    orderId: row.payment_id,
    amount: row.amount,
    installmentCount: row.installment_count,
    preAuth: row.pre_auth,
    authentication: row.authentication ?? {},
  }
  switch (account.provider) {
    case 'est_v3':
      return estV3Authorize3d(est(config), p)
    case 'garanti':
      return garantiAuthorize3d(gvps(config), p)
    case 'posnet':
      return posnetAuthorize3d(ykb(config), p)
  }
}

export { findPos3ds } from './pos-3ds.repository.ts'
