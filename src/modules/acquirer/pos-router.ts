import jsonLogic, { type RulesLogic } from 'json-logic-js'
import type { Deps } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import { detokenize, getCardToken } from '../vault/index.ts'
import { acquirerError } from './acquirer.errors.ts'
import type { Acquirer, AuthorizeResult } from './acquirer.port.ts'
import type { BankOutcome, InquiryOutcome } from './bank-wire.ts'
import { cardFacts, type CardFacts } from './bin-table.ts'
import { connectorConfigOf, usable } from './pos-accounts.service.ts'
import { CONNECTORS, type ConnectorConfig, type PosConnector } from './pos-connectors.ts'
import * as repo from './pos.repository.ts'
import type { PosAccountRow, PosPaymentRow } from './pos.table.ts'
import { sandboxBank } from './sandbox-bank.ts'
import {
  authorizeAfterGate,
  completeGate,
  findPos3ds,
  gateForm,
  startGate3ds,
  verifyGatePares,
} from './pos-3ds.ts'
import type { Pos3dsRow } from './pos-3ds.table.ts'

// The acquirer the app runs on (decision 0039): the port the payments module calls, routing
// each payment to a bank POS and keeping to that POS for its captures, voids and refunds.
// In demo, with no usable POS account, the sandbox bank answers as before; in live it never
// does. The bank order id is our payment id, so a retry can never authorize twice.

/** 402 SVC-PAY-3504: no enabled POS can take this charge (live, or demo with accounts). */
export function noPosError(): AppError {
  return new AppError('SVC-PAY-3504', 402, 'no enabled bank POS can take this charge')
}

export interface RoutingFacts {
  card: CardFacts
  installmentCount: number
  amount: number
}

/** Which accounts a charge may go to, in order. Empty: none can take it. */
export async function routeCharge(
  deps: Deps,
  merchantId: string,
  all: readonly PosAccountRow[],
  facts: RoutingFacts,
): Promise<PosAccountRow[]> {
  const byId = new Map(all.map((a) => [a.id, a]))
  const routing = await repo.findRouting(deps.db, merchantId)
  let ordered: PosAccountRow[] = [...all]
  if (routing) {
    const rule = routing.rules.find((r) => conditionHolds(r.condition, facts))
    const ids = rule ? rule.posAccountIds : routing.default_order
    ordered = ids.flatMap((id) => byId.get(id) ?? [])
  }
  if (facts.installmentCount > 1) {
    // Installments of a card program work only through a POS of a bank in that program;
    // the issuer's own POS (on-us) first, cheapest for the merchant.
    const program = facts.card.program
    ordered = ordered.filter((a) => program !== 'none' && a.installment_programs.includes(program))
    const onUs = ordered.filter((a) => a.bank === facts.card.bank)
    ordered = [...onUs, ...ordered.filter((a) => a.bank !== facts.card.bank)]
  }
  return ordered
}

/** The merchant's and the platform's accounts routing may use now. */
export async function usableAccounts(deps: Deps, merchantId: string): Promise<PosAccountRow[]> {
  return (await repo.findPosAccounts(deps.db, merchantId)).filter((a) => usable(deps, a))
}

/** JSON Logic over the card facts; a condition that cannot run on them does not match. */
export function conditionHolds(condition: unknown, facts: RoutingFacts): boolean {
  try {
    return jsonLogic.truthy(jsonLogic.apply(condition as RulesLogic, facts))
  } catch {
    return false
  }
}

const DECLINE_CODES: Readonly<Record<string, string>> = {
  '51': 'insufficient_funds',
  '54': 'expired_card',
  '05': 'card_declined',
}

function declineCodeOf(bankCode: string): string {
  const iso = /(?:ISO8583-)?(\d{2})$/.exec(bankCode)?.[1]
  return (iso && DECLINE_CODES[iso]) ?? 'card_declined'
}

/** The bank answered "this order already exists": what it holds decides. */
function isDuplicateOrder(outcome: BankOutcome): boolean {
  return (
    outcome.kind === 'declined' &&
    (outcome.duplicateOrder === true || outcome.bankCode === 'CORE-2008')
  )
}

function connectorOf(row: { provider: PosAccountRow['provider'] }): PosConnector {
  const connector = CONNECTORS[row.provider]
  if (!connector) throw new Error(`no connector for ${row.provider}`)
  return connector
}

async function accountOf(deps: Deps, pos: PosPaymentRow): Promise<PosAccountRow> {
  const account = pos.pos_account_id
    ? await repo.findPosAccount(deps.db, pos.pos_account_id)
    : undefined
  if (!account) throw acquirerError('authorization_not_found')
  return account
}

function approvedAnswer(pos: PosPaymentRow): AuthorizeResult {
  return {
    status: 'approved',
    authCode: pos.auth_code ?? '',
    reference: pos.host_reference ?? pos.payment_id,
  }
}

/** Records an inquiry's verdict on the payment's POS row, and what the caller hears. */
async function settleByInquiry(
  deps: Deps,
  pos: PosPaymentRow,
  account: PosAccountRow,
  found: InquiryOutcome,
): Promise<AuthorizeResult | 'not_found'> {
  const now = deps.clock.now()
  if (found.kind === 'approved' && !found.voided) {
    const row = await repo.recordAttempt(
      deps.db,
      pos.payment_id,
      { posAccountId: account.id, outcome: 'approved', bankCode: '00' },
      {
        state: 'approved',
        auth_code: found.authCode,
        host_reference: found.hostReference,
        captured: pos.pre_auth ? 0 : pos.amount,
        updated_at: now,
      },
    )
    return approvedAnswer(row ?? pos)
  }
  if (found.kind === 'declined' || (found.kind === 'approved' && found.voided)) {
    const code = found.kind === 'declined' ? found.bankCode : 'voided'
    await repo.recordAttempt(
      deps.db,
      pos.payment_id,
      { posAccountId: account.id, outcome: 'declined', bankCode: code },
      { state: 'declined', decline_code: declineCodeOf(code), updated_at: now },
    )
    return { status: 'declined', declineCode: declineCodeOf(code) }
  }
  if (found.kind === 'not_found') {
    await repo.recordAttempt(
      deps.db,
      pos.payment_id,
      { posAccountId: account.id, outcome: 'not_found', bankCode: null },
      { updated_at: now },
    )
    return 'not_found'
  }
  return { status: 'unknown' }
}

/**
 * Sends the authorization down the route, one POS after another only while each surely did
 * not authorize (not sent, or an inquiry found no order). A timeout is asked about before
 * anything else; an inquiry that cannot answer stops here as `unknown` (the reconciler asks
 * again). Declines are final: another bank would see the same card.
 */
async function runRoute(
  deps: Deps,
  pos: PosPaymentRow,
  route: PosAccountRow[],
  p: Parameters<Acquirer<Deps>['authorize']>[1],
  /** The authorization itself; by default the card's, read from the vault once. */
  send?: (account: PosAccountRow, config: ConnectorConfig) => Promise<BankOutcome>,
): Promise<AuthorizeResult> {
  const sendCard = async (account: PosAccountRow, config: ConnectorConfig) => {
    card ??= await detokenize(deps, {
      merchantId: p.merchantId,
      cardToken: p.cardToken,
      callerService: 'acquirer',
    })
    return connectorOf(account).authorize(config, {
      orderId: pos.payment_id,
      amount: p.amount,
      installmentCount: p.installmentCount,
      preAuth: !p.capture,
      card: { pan: card.pan, expMonth: card.expMonth, expYear: card.expYear, cvc: '' },
    })
  }
  let card: Awaited<ReturnType<typeof detokenize>> | undefined
  for (const account of route) {
    const connector = connectorOf(account)
    const config = connectorConfigOf(deps, account)
    // Written before sending: a crash mid-call leaves which POS to ask.
    await repo.updatePosPayment(deps.db, pos.payment_id, {
      pos_account_id: account.id,
      provider: account.provider,
      bank: account.bank,
      state: 'sending',
      updated_at: deps.clock.now(),
    })
    const outcome = await (send ?? sendCard)(account, config)
    const now = deps.clock.now()
    if (outcome.kind === 'approved') {
      const row = await repo.recordAttempt(
        deps.db,
        pos.payment_id,
        { posAccountId: account.id, outcome: 'approved', bankCode: '00' },
        {
          state: 'approved',
          auth_code: outcome.authCode,
          host_reference: outcome.hostReference,
          captured: p.capture ? p.amount : 0,
          updated_at: now,
        },
      )
      return approvedAnswer(row ?? pos)
    }
    if (outcome.kind === 'declined' && !isDuplicateOrder(outcome)) {
      const declineCode = declineCodeOf(outcome.bankCode)
      await repo.recordAttempt(
        deps.db,
        pos.payment_id,
        { posAccountId: account.id, outcome: 'declined', bankCode: outcome.bankCode },
        { state: 'declined', decline_code: declineCode, updated_at: now },
      )
      return { status: 'declined', declineCode }
    }
    if (outcome.kind === 'not_sent') {
      await repo.recordAttempt(
        deps.db,
        pos.payment_id,
        { posAccountId: account.id, outcome: 'not_sent', bankCode: null },
        { state: 'sending', updated_at: now },
      )
      continue
    }
    // Sent, no answer (or "order exists"): the bank's order inquiry decides.
    await repo.recordAttempt(
      deps.db,
      pos.payment_id,
      { posAccountId: account.id, outcome: 'unknown', bankCode: null },
      { state: 'unknown', updated_at: now },
    )
    const current = (await repo.findPosPayment(deps.db, pos.payment_id)) ?? pos
    const verdict = await settleByInquiry(
      deps,
      current,
      account,
      await connector.status(config, { orderId: pos.payment_id, threeD: pos.three_d }),
    )
    if (verdict !== 'not_found') return verdict
  }
  // Every POS surely refused to hear it: nothing was authorized anywhere.
  await repo.updatePosPayment(deps.db, pos.payment_id, {
    state: 'failed',
    decline_code: 'acquirer_unavailable',
    updated_at: deps.clock.now(),
  })
  return { status: 'declined', declineCode: 'acquirer_unavailable' }
}

/** The answer already recorded for a payment (a retry), asking the bank when in doubt. */
async function answerOfRecorded(deps: Deps, pos: PosPaymentRow): Promise<AuthorizeResult> {
  switch (pos.state) {
    case 'approved':
      return approvedAnswer(pos)
    case 'declined':
    case 'failed':
      return { status: 'declined', declineCode: pos.decline_code ?? 'card_declined' }
    default: {
      const account = await accountOf(deps, pos)
      const found = await connectorOf(account).status(connectorConfigOf(deps, account), {
        orderId: pos.payment_id,
        threeD: pos.three_d,
      })
      const verdict = await settleByInquiry(deps, pos, account, found)
      if (verdict !== 'not_found') return verdict
      // The last POS never got it; earlier ones were not_sent or not_found: nothing anywhere.
      await repo.updatePosPayment(deps.db, pos.payment_id, {
        state: 'failed',
        decline_code: 'acquirer_unavailable',
        updated_at: deps.clock.now(),
      })
      return { status: 'declined', declineCode: 'acquirer_unavailable' }
    }
  }
}

/**
 * The authorization after a bank-gate challenge, at the gate's POS only (no failover: another
 * bank would need its own challenge). 3D: the XML authorization with the callback's data;
 * 3D Pay: the gate already authorized, and the bank's order inquiry confirms what it holds.
 */
async function authorizeGated(
  deps: Deps,
  gate: Pos3dsRow,
  p: Parameters<Acquirer<Deps>['authorize']>[1],
): Promise<AuthorizeResult> {
  if (gate.state !== 'authenticated') {
    return { status: 'declined', declineCode: 'authentication_failed' }
  }
  const account = await repo.findPosAccount(deps.db, gate.pos_account_id)
  if (!account) throw acquirerError('authorization_not_found')
  const now = deps.clock.now()
  const inserted = await repo.insertPosPayment(deps.db, {
    payment_id: gate.payment_id,
    merchant_id: gate.merchant_id,
    pos_account_id: null,
    provider: null,
    bank: null,
    state: 'sending',
    amount: gate.amount,
    pre_auth: gate.pre_auth,
    installment_count: gate.installment_count,
    auth_code: null,
    host_reference: null,
    decline_code: null,
    attempts: '[]',
    three_d: true,
    created_at: now,
    updated_at: now,
  })
  if (!inserted) {
    const other = await posOf(deps, gate.payment_id)
    return other ? answerOfRecorded(deps, other) : { status: 'unknown' }
  }
  const authorization = { ...p, amount: gate.amount, capture: !gate.pre_auth }
  if (gate.model === '3d') {
    return runRoute(deps, inserted, [account], authorization, (a, config) =>
      authorizeAfterGate(a, config, gate),
    )
  }
  // 3D Pay: nothing is sent to authorize; the gate's answer, confirmed by the bank's books.
  await repo.updatePosPayment(deps.db, gate.payment_id, {
    pos_account_id: account.id,
    provider: account.provider,
    bank: account.bank,
    updated_at: now,
  })
  const current = (await posOf(deps, gate.payment_id)) ?? inserted
  const found = await connectorOf(account).status(connectorConfigOf(deps, account), {
    orderId: gate.payment_id,
    threeD: true,
  })
  const verdict = await settleByInquiry(deps, current, account, found)
  if (verdict !== 'not_found') return verdict
  // No order at the bank: the gate did not authorize (its answer says why).
  const code = gate.gate_payment?.kind === 'declined' ? gate.gate_payment.bankCode : 'md'
  await repo.updatePosPayment(deps.db, gate.payment_id, {
    state: 'declined',
    decline_code: declineCodeOf(code),
    updated_at: deps.clock.now(),
  })
  return { status: 'declined', declineCode: declineCodeOf(code) }
}

async function posOf(deps: Deps, paymentId: string): Promise<PosPaymentRow | undefined> {
  return repo.findPosPayment(deps.db, paymentId)
}

/** Same Istanbul calendar day: before the bank's end of day a refund is a Void. */
function sameBankDay(a: Date, b: Date): boolean {
  const day = (d: Date) => new Date(d.getTime() + 3 * 3600_000).toISOString().slice(0, 10)
  return day(a) === day(b)
}

function assertDone(outcome: BankOutcome, onRefusal: () => AppError): void {
  if (outcome.kind === 'approved') return
  if (outcome.kind === 'declined') throw onRefusal()
  // Not sent or no answer: the caller's retry (same id) asks again.
  throw new AppError('SVC-INT-9001', 503, 'the bank did not answer; retry with the same id')
}

export const bankAcquirer: Acquirer<Deps> = {
  // Live never reaches the sandbox bank: without a usable POS a charge is 402 before
  // anything is recorded.
  async assertCanCharge(deps, p) {
    if (deps.config.env !== 'live') return
    if ((await usableAccounts(deps, p.merchantId)).length === 0) throw noPosError()
  },

  // 3-D Secure at a bank POS is its own 3D gate (pos-3ds.ts), at the POS routing picks now:
  // the authorization goes there after the challenge. The sandbox ACS only in demo without
  // a POS, never in live.
  async start3ds(deps, p) {
    // The gate's record (a repeat) and the accounts in one statement.
    const first = await repo.findPosAccountsAnd3dsGate(deps.db, p.paymentId, p.merchantId)
    if (first.gateCorrelationId !== null) {
      return { kind: 'challenge', correlationId: first.gateCorrelationId }
    }
    const all = first.accounts.filter((a) => usable(deps, a))
    if (all.length === 0) {
      if (deps.config.env === 'demo') return sandboxBank.start3ds(deps, p)
      throw noPosError()
    }
    const installmentCount = p.installmentCount ?? 1
    const token = await getCardToken(deps, p.merchantId, p.cardToken)
    const [account] = await routeCharge(deps, p.merchantId, all, {
      card: cardFacts(token.bin),
      installmentCount,
      amount: p.amount,
    })
    if (!account) throw noPosError()
    return startGate3ds(deps, account, {
      ...p,
      installmentCount,
      capture: p.capture ?? true,
    })
  },
  completeChallenge: (deps, p) => sandboxBank.completeChallenge(deps, p),
  async verifyPares(deps, p) {
    const gate = await findPos3ds(deps.db, p.paymentId)
    if (gate) return verifyGatePares(deps, gate, p)
    return sandboxBank.verifyPares(deps, p)
  },
  threeDsGateForm: (deps, p) => gateForm(deps, p),
  completeGateCallback: (deps, p) => completeGate(deps, p),

  async authorize(deps, p) {
    // The usual charge has no POS row and no bank 3D gate record yet: that check and the
    // accounts in one statement.
    const first = await repo.findPosAccountsUnlessRecorded(deps.db, p.paymentId, p.merchantId)
    if (first.recorded) {
      const recorded = await posOf(deps, p.paymentId)
      if (recorded) return answerOfRecorded(deps, recorded)
      const gate = await findPos3ds(deps.db, p.paymentId)
      if (gate) return authorizeGated(deps, gate, p)
    }
    const all = first.accounts.filter((a) => usable(deps, a))
    if (all.length === 0) {
      if (deps.config.env === 'demo') return sandboxBank.authorize(deps, p)
      throw noPosError()
    }
    const token = await getCardToken(deps, p.merchantId, p.cardToken)
    const facts: RoutingFacts = {
      card: cardFacts(token.bin),
      installmentCount: p.installmentCount,
      amount: p.amount,
    }
    const accounts = await routeCharge(deps, p.merchantId, all, facts)
    if (accounts.length === 0) throw noPosError()
    const now = deps.clock.now()
    const inserted = await repo.insertPosPayment(deps.db, {
      payment_id: p.paymentId,
      merchant_id: p.merchantId,
      pos_account_id: null,
      provider: null,
      bank: null,
      state: 'sending',
      amount: p.amount,
      pre_auth: !p.capture,
      installment_count: p.installmentCount,
      auth_code: null,
      host_reference: null,
      decline_code: null,
      attempts: '[]',
      created_at: now,
      updated_at: now,
    })
    // A concurrent call for the same payment got there first: its record answers.
    if (!inserted) {
      const other = await posOf(deps, p.paymentId)
      return other ? answerOfRecorded(deps, other) : { status: 'unknown' }
    }
    return runRoute(deps, inserted, accounts, p)
  },

  async inquire(deps, p) {
    const pos = await posOf(deps, p.paymentId)
    if (!pos) {
      const gate = await findPos3ds(deps.db, p.paymentId)
      // 3D Pay: the gate itself may have authorized; only the bank's books can say.
      if (gate?.model === '3d_pay' && gate.state === 'authenticated') {
        return authorizeGated(deps, gate, {
          paymentId: gate.payment_id,
          merchantId: gate.merchant_id,
          cardToken: gate.card_token,
          amount: gate.amount,
          installmentCount: gate.installment_count,
          capture: !gate.pre_auth,
        })
      }
      // 3D: the authorization's row is written before it is sent, so none was sent.
      if (gate) return { status: 'declined', declineCode: 'authorization_not_found' }
      if (deps.config.env === 'demo') return sandboxBank.inquire(deps, p)
      return { status: 'declined', declineCode: 'authorization_not_found' }
    }
    return answerOfRecorded(deps, pos)
  },

  async capture(deps, p) {
    const pos = await posOf(deps, p.paymentId)
    if (!pos) return sandboxBank.capture(deps, p)
    if (pos.state !== 'approved') throw acquirerError('authorization_not_found')
    // Captured at authorization (Auth): capturing it all again is a no-op.
    if (!pos.pre_auth) {
      if (p.amount === pos.amount) return
      throw acquirerError('not_capturable')
    }
    if (pos.captured > 0) {
      if (pos.captured === p.amount) return // the same PostAuth again
      throw acquirerError('not_capturable') // a bank takes one PostAuth per PreAuth
    }
    if (pos.voided || p.amount > pos.amount) throw acquirerError('not_capturable')
    const account = await accountOf(deps, pos)
    const outcome = await connectorOf(account).postAuth(connectorConfigOf(deps, account), {
      orderId: p.paymentId,
      hostReference: pos.host_reference ?? undefined,
      amount: p.amount,
      installmentCount: pos.installment_count,
      threeD: pos.three_d,
    })
    assertDone(outcome, () => acquirerError('not_capturable'))
    await repo.updatePosPayment(deps.db, p.paymentId, {
      captured: p.amount,
      updated_at: deps.clock.now(),
    })
  },

  async void(deps, p) {
    const pos = await posOf(deps, p.paymentId)
    if (!pos) return sandboxBank.void(deps, p)
    if (pos.state !== 'approved') throw acquirerError('authorization_not_found')
    if (pos.voided) return
    if (pos.captured > 0) throw acquirerError('not_voidable')
    const account = await accountOf(deps, pos)
    const outcome = await connectorOf(account).void(connectorConfigOf(deps, account), {
      orderId: p.paymentId,
      hostReference: pos.host_reference ?? undefined,
      threeD: pos.three_d,
    })
    assertDone(outcome, () => acquirerError('not_voidable'))
    await repo.updatePosPayment(deps.db, p.paymentId, {
      voided: true,
      updated_at: deps.clock.now(),
    })
  },

  async refund(deps, p) {
    const pos = await posOf(deps, p.paymentId)
    if (!pos) return sandboxBank.refund(deps, p)
    const prior = await repo.findPosRefund(deps.db, p.refundId)
    if (prior?.state === 'completed') return { status: 'completed', bankRefundId: p.refundId }
    if (prior?.state === 'failed') return { status: 'pending', bankRefundId: p.refundId }
    if (pos.state !== 'approved') throw acquirerError('authorization_not_found')
    if (pos.captured === 0) throw acquirerError('not_refundable')
    const refunds = await repo.findPosRefunds(deps.db, p.paymentId)
    const refunded = refunds
      .filter((r) => r.state !== 'failed' && r.refund_id !== p.refundId)
      .reduce((sum, r) => sum + r.amount, 0)
    if (refunded + p.amount > pos.captured) throw acquirerError('refund_exceeds_captured')
    const now = deps.clock.now()
    // Before the bank's end of day a whole refund cancels the sale (Void); after it, or for
    // part of it, the bank wants a Credit.
    const kind =
      prior?.kind ??
      (refunded === 0 && p.amount === pos.captured && sameBankDay(pos.created_at, now)
        ? 'void'
        : 'credit')
    if (prior?.state === 'unknown' && kind === 'credit') {
      // A Credit is not idempotent at the bank: never sent twice; the reconciler's status
      // check (or an operator) settles it.
      return { status: 'pending', bankRefundId: p.refundId }
    }
    if (!prior) {
      await repo.insertPosRefund(deps.db, {
        refund_id: p.refundId,
        payment_id: p.paymentId,
        kind,
        amount: p.amount,
        state: 'sending',
        bank_code: null,
        created_at: now,
        updated_at: now,
      })
    }
    const account = await accountOf(deps, pos)
    const connector = connectorOf(account)
    const config = connectorConfigOf(deps, account)
    const original = {
      orderId: p.paymentId,
      hostReference: pos.host_reference ?? undefined,
      threeD: pos.three_d,
    }
    const outcome =
      kind === 'void'
        ? await connector.void(config, original)
        : await connector.credit(config, { ...original, amount: p.amount })
    const at = deps.clock.now()
    if (outcome.kind === 'approved') {
      await repo.updatePosRefund(deps.db, p.refundId, {
        state: 'completed',
        bank_code: '00',
        updated_at: at,
      })
      if (kind === 'void')
        await repo.updatePosPayment(deps.db, p.paymentId, { voided: true, updated_at: at })
      return { status: 'completed', bankRefundId: p.refundId }
    }
    if (outcome.kind === 'declined') {
      await repo.updatePosRefund(deps.db, p.refundId, {
        state: 'failed',
        bank_code: outcome.bankCode,
        updated_at: at,
      })
      return { status: 'pending', bankRefundId: p.refundId }
    }
    await repo.updatePosRefund(deps.db, p.refundId, {
      state: outcome.kind === 'not_sent' ? 'sending' : 'unknown',
      bank_code: null,
      updated_at: at,
    })
    return { status: 'pending', bankRefundId: p.refundId }
  },

  async refundStatus(deps, p) {
    const row = await repo.findPosRefund(deps.db, p.refundId)
    if (!row) return sandboxBank.refundStatus(deps, p)
    const status =
      row.state === 'completed' ? 'completed' : row.state === 'failed' ? 'failed' : 'pending'
    return { status, bankRefundId: row.refund_id }
  },
}

/** What the payment's answer shows of the bank POS that took it; undefined on the sandbox. */
export async function acquirerOfPayment(deps: Deps, paymentId: string) {
  return acquirerFacts(await repo.findPosPayment(deps.db, paymentId))
}

/**
 * For another module's statement on a payment: `acquirerOfPaymentColumn(eb, ref)` selects
 * the POS facts as one JSON column, `acquirerFacts(column)` turns it into what
 * acquirerOfPayment answers (one round trip instead of two).
 */
export const acquirerOfPaymentColumn = repo.posPaymentJsonOf

export function acquirerFacts(
  pos:
    | Pick<
        PosPaymentRow,
        'pos_account_id' | 'provider' | 'bank' | 'auth_code' | 'host_reference' | 'attempts'
      >
    | null
    | undefined,
) {
  if (!pos) return undefined
  return {
    posAccountId: pos.pos_account_id,
    provider: pos.provider,
    bank: pos.bank,
    authCode: pos.auth_code,
    hostReference: pos.host_reference,
    attempts: pos.attempts,
  }
}
