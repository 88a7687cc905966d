// Goal (issue 35, decision 0035): the signed endpoints that are one transaction — invoices,
// payment links, customers and their cards, risk lists and rules, subscriptions (create,
// pause, resume, cancel), payout drafts (create, approve: the fan-out into payouts, cancel),
// payment sessions and metadata, card tokens, bank account, payout schedule, files, exports,
// reports, routing and POS accounts — commit their effect and their recorded answer together. The API process is SIGKILLed once the business transaction
// committed and before the gateway's after-commit store (`answer.before_record`, the point
// where an answer recorded in `onSend` would be lost): the retry with the same
// Idempotency-Key is the recorded answer (replayed), never a second execution (a second
// invoice, link, customer, rule, subscription or draft; payouts fanned out twice; a 409 for a change that
// was made). One case also dies
// after the answer left (`answer.after_flush`): the retry is that answer byte for byte.
// Method: the service as a real process on PostgreSQL, fail points armed through
// KURUS_FAILPOINTS. Every route with the fail point throwing (one process, no restart: the
// claim is left as a crash leaves it); three routes with it SIGKILLing the process (started
// armed, so each case costs one start) — restarts are what make this suite slow.
// KURUS_REL_ONCE_ROUTES=<a>,<b> runs the cases whose names contain one of them.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import { setTimeout as delay } from 'node:timers/promises'
import { Kurus, multipartForm } from '../../sdk/index.ts'
import { createTestDatabase } from '../helpers/db.ts'
import { composeIBAN } from 'ibantools'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import { PDF } from '../files/_support.ts'
import { exited, newKey, newMerchant, Service, type Merchant, type RawAnswer } from './_harness.ts'

/** A retry must be answered within this long of the API being back. */
const RESUME_WITHIN_MS = 10_000
const only = process.env['KURUS_REL_ONCE_ROUTES'] ?? ''

/** A multipart body (an upload), sent as its bytes. */
function isForm(body: unknown): body is ReturnType<typeof multipartForm> {
  return (
    typeof body === 'object' && body !== null && Buffer.isBuffer((body as { body?: unknown }).body)
  )
}

/** A signed request of any method that keeps the raw bytes of its answer (null: it died). */
function rawSender(baseUrl: string, m: Merchant) {
  let last = ''
  const client = new Kurus({
    publicKey: m.publicKey,
    secretKey: m.secretKey,
    baseUrl,
    fetch: async (input, init) => {
      const res = await fetch(input, { ...init, signal: AbortSignal.timeout(20_000) })
      last = await res.clone().text()
      return res
    },
  })
  return async (
    method: string,
    path: string,
    body: unknown,
    key: string,
  ): Promise<RawAnswer | null> => {
    try {
      const res = await client.request(method, path, {
        ...(isForm(body)
          ? { rawBody: body.body, contentType: body.contentType }
          : body === undefined
            ? {}
            : { body }),
        idempotencyKey: key,
      })
      return {
        status: res.status,
        text: last,
        requestId: res.requestId,
        replayed: res.headers.get('idempotent-replayed') === 'true',
      }
    } catch {
      return null
    }
  }
}

interface Case {
  name: string
  status: number
  /** Makes what the call acts on (without a key); the call itself. */
  prepare(): Promise<{ method: string; path: string; body?: unknown }>
  /** How many times the effect happened (rows made, events emitted). */
  effects(): Promise<number>
}

test('SIGKILL after the business commit of every signed state-changing route: the retry is the recorded answer, exactly once', async (t) => {
  const db = await createTestDatabase()
  assert.ok(db.url)
  const service = await Service.create({ databaseUrl: db.url, workers: 0 })
  t.after(async () => {
    await service.stop()
    await db.drop()
  })
  await service.startApi()
  const m = await newMerchant(service.url)
  const call = rawSender(service.url, m)
  const api = async <T>(method: string, path: string, body?: unknown) => {
    const res = await m.client.request<T>(method, path, body === undefined ? {} : { body })
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }
  const count = async (query: ReturnType<typeof sql<{ n: number }>>) =>
    Number((await query.execute(db.handle.db)).rows[0]?.n)
  const events = (type: string, id: () => string) => () =>
    count(sql<{ n: number }>`select count(*)::int as n from events
      where type = ${type} and merchant_id = ${m.merchantId}
        and (resource_id = ${id()} or data::text like ${`%${id()}%`})`)
  const invoiceBody = () => ({
    storeId: m.storeId,
    amountMinor: 10_000,
    currency: 'TRY',
    lineItems: [{ name: 'Kupa', qty: 2, unitPriceMinor: 5_000, lineTotalMinor: 10_000 }],
    buyerEmail: 'ayse@example.com',
    buyerName: 'Ayşe Yılmaz',
  })
  let invoice = ''
  let link = ''
  let customer = ''
  let card = ''
  let item = ''
  let rule = ''
  let draft = ''
  let subscription = ''
  /** Names what one case makes (a fresh one per case). */
  let marker = ''
  const newInvoice = async () => {
    invoice = (await api<{ id: string }>('POST', '/v1/invoices', invoiceBody())).id
    return invoice
  }
  const newCustomer = async () => {
    customer = (
      await api<{ id: string }>('POST', '/v1/customers', { externalId: `ext-${randomUUID()}` })
    ).id
    return customer
  }
  const newRule = async () => {
    rule = (
      await api<{ id: string }>('POST', '/v1/risk/rules', {
        name: 'inert',
        action: 'review',
        condition: { '==': [{ var: 'amount' }, 1] },
      })
    ).id
    return rule
  }
  const subscriptionBody = async (description: string) => {
    const cardToken = await tokenize(m.client, CARDS.frictionless)
    await api('POST', `/v1/customers/${await newCustomer()}/cards`, { cardToken, isDefault: true })
    return {
      storeId: m.storeId,
      customerId: customer,
      amountMinor: 14_900,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
      description,
    }
  }
  const newSubscription = async () => {
    subscription = (
      await api<{ id: string }>('POST', '/v1/subscriptions', await subscriptionBody('plan'))
    ).id
    return subscription
  }
  const iban = composeIBAN({ countryCode: 'TR', bban: '0006101234567890123456' })
  assert.ok(iban)
  const draftBody = (holderName: string) => ({
    storeId: m.storeId,
    rows: [
      { rail: 'fast', dest: iban, holderName, amountMinor: 1_500, currency: 'TRY' },
      { rail: 'eft', dest: iban, holderName, amountMinor: 2_500, currency: 'TRY' },
    ],
  })
  const newDraft = async () => {
    draft = (await api<{ draftId: string }>('POST', '/v1/payout-drafts', draftBody('Alıcı')))
      .draftId
    return draft
  }
  let payment = ''
  let pos = ''
  const posBody = (name: string) => ({
    provider: 'garanti',
    name,
    environment: 'test',
    enabled: false,
    credentials: {
      merchantId: '7000679',
      terminalId: '30691298',
      provisionUser: 'PROVAUT',
      provisionPassword: '123qweASD/',
      storeKey: '12345678',
    },
  })
  const newPos = async () => {
    pos = (await api<{ id: string }>('POST', '/v1/pos-accounts', posBody('Garanti'))).id
    return pos
  }
  /** Approving pays from the merchant's available balance: a captured charge, settled. */
  let funded = false
  const fund = async () => {
    if (funded) return
    funded = true
    const { transactionId } = await openSession(m.client, 100_000)
    const cardToken = await tokenize(m.client, CARDS.frictionless)
    await api('POST', '/v1/payments/card', {
      transactionId,
      amount: 100_000,
      currency: 'TRY',
      cardToken,
    })
    await api('POST', '/v1/sandbox/reconcile', {})
  }
  const cases: Case[] = [
    {
      name: 'invoice create',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/invoices',
        body: { ...invoiceBody(), notes: marker },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from invoices
          where merchant_id = ${m.merchantId} and notes = ${marker}`),
    },
    {
      name: 'invoice send',
      status: 200,
      prepare: async () => ({ method: 'POST', path: `/v1/invoices/${await newInvoice()}/send` }),
      effects: events('invoice.sent', () => invoice),
    },
    {
      name: 'invoice activate',
      status: 200,
      prepare: async () => ({
        method: 'POST',
        path: `/v1/invoices/${await newInvoice()}/activate`,
      }),
      effects: events('invoice.activated', () => invoice),
    },
    {
      name: 'invoice cancel',
      status: 200,
      prepare: async () => ({ method: 'POST', path: `/v1/invoices/${await newInvoice()}/cancel` }),
      effects: events('invoice.cancelled', () => invoice),
    },
    {
      name: 'payment link create',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/payment-links',
        body: { storeId: m.storeId, amount: 14_990, description: marker },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from payment_links
          where merchant_id = ${m.merchantId} and description = ${marker}`),
    },
    {
      name: 'payment link deactivate',
      status: 200,
      prepare: async () => {
        link = (
          await api<{ id: string }>('POST', '/v1/payment-links', {
            storeId: m.storeId,
            amount: 9_990,
            description: 'Kupa',
          })
        ).id
        return { method: 'POST', path: `/v1/payment-links/${link}/deactivate` }
      },
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from payment_links
          where id = ${link} and not active`),
    },
    {
      name: 'customer create',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/customers',
        body: { externalId: `ext-${marker}` },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from customers
          where merchant_id = ${m.merchantId} and external_id = ${`ext-${marker}`}`),
    },
    {
      name: 'customer update',
      status: 200,
      prepare: async () => ({
        method: 'PUT',
        path: `/v1/customers/${await newCustomer()}`,
        body: { name: 'Ayşe Yılmaz' },
      }),
      effects: events('customer.updated', () => customer),
    },
    {
      name: 'customer delete',
      status: 204,
      prepare: async () => ({ method: 'DELETE', path: `/v1/customers/${await newCustomer()}` }),
      effects: events('customer.deleted', () => customer),
    },
    {
      name: 'card attach',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: `/v1/customers/${await newCustomer()}/cards`,
        body: { cardToken: await tokenize(m.client, CARDS.frictionless) },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from customer_cards
          where customer_id = ${customer}`),
    },
    {
      name: 'card detach',
      status: 204,
      prepare: async () => {
        const cardToken = await tokenize(m.client, CARDS.frictionless)
        card = (
          await api<{ id: string }>('POST', `/v1/customers/${await newCustomer()}/cards`, {
            cardToken,
          })
        ).id
        return { method: 'DELETE', path: `/v1/customers/${customer}/cards/${card}` }
      },
      effects: events('customer.card_detached', () => card),
    },
    {
      name: 'risk list item add',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/risk/lists/email/items',
        body: { value: `${marker}@example.com` },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from risk_list_items
          where merchant_id = ${m.merchantId} and value = ${`${marker}@example.com`}`),
    },
    {
      name: 'risk list item remove',
      status: 204,
      prepare: async () => {
        item = (
          await api<{ id: string }>('POST', '/v1/risk/lists/email/items', {
            value: `${randomUUID()}@example.com`,
          })
        ).id
        return { method: 'DELETE', path: `/v1/risk/lists/email/items/${item}` }
      },
      effects: async () =>
        1 -
        (await count(sql<{ n: number }>`select count(*)::int as n from risk_list_items
          where id = ${item}`)),
    },
    {
      name: 'risk rule create',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/risk/rules',
        body: { name: marker.slice(0, 20), action: 'review', condition: { '==': [1, 2] } },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from risk_rules
          where merchant_id = ${m.merchantId} and name = ${marker.slice(0, 20)}`),
    },
    {
      name: 'risk rule update',
      status: 200,
      prepare: async () => ({
        method: 'PATCH',
        path: `/v1/risk/rules/${await newRule()}`,
        body: { enabled: false },
      }),
      effects: async () =>
        (await count(sql<{ n: number }>`select count(*)::int as n from risk_rules
          where id = ${rule} and not enabled`)) === 1
          ? 1
          : 0,
    },
    {
      name: 'risk rule delete',
      status: 204,
      prepare: async () => ({ method: 'DELETE', path: `/v1/risk/rules/${await newRule()}` }),
      effects: async () =>
        1 -
        (await count(sql<{ n: number }>`select count(*)::int as n from risk_rules
          where id = ${rule}`)),
    },
    {
      name: 'subscription create',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/subscriptions',
        body: await subscriptionBody(marker),
      }),
      // A second subscription would charge the card twice a month.
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from subscriptions
          where merchant_id = ${m.merchantId} and description = ${marker}`),
    },
    {
      name: 'subscription pause',
      status: 200,
      prepare: async () => ({
        method: 'POST',
        path: `/v1/subscriptions/${await newSubscription()}/pause`,
      }),
      effects: events('subscription.paused', () => subscription),
    },
    {
      name: 'subscription resume',
      status: 200,
      prepare: async () => {
        await api('POST', `/v1/subscriptions/${await newSubscription()}/pause`)
        return { method: 'POST', path: `/v1/subscriptions/${subscription}/resume` }
      },
      // A re-run was 409 "not resumable" for the resume it made.
      effects: events('subscription.resumed', () => subscription),
    },
    {
      name: 'subscription cancel',
      status: 200,
      prepare: async () => ({
        method: 'POST',
        path: `/v1/subscriptions/${await newSubscription()}/cancel`,
        body: { atPeriodEnd: false },
      }),
      effects: events('subscription.cancelled', () => subscription),
    },
    {
      name: 'payout draft create',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/payout-drafts',
        body: draftBody(marker),
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(distinct draft_id)::int as n
          from payout_draft_rows where merchant_id = ${m.merchantId} and holder_name = ${marker}`),
    },
    {
      name: 'payout draft approve',
      status: 200,
      prepare: async () => {
        await fund()
        return { method: 'POST', path: `/v1/payout-drafts/${await newDraft()}/approve` }
      },
      // Both rows made a payout, once: two payouts and one fan-out's events.
      effects: async () =>
        (await count(sql<{ n: number }>`select count(*)::int as n from payouts
          where draft_id = ${draft}`)) / 2,
    },
    {
      name: 'payout draft cancel',
      status: 200,
      prepare: async () => ({
        method: 'POST',
        path: `/v1/payout-drafts/${await newDraft()}/cancel`,
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from payout_drafts
          where id = ${draft} and status = 'cancelled'`),
    },
    // h-once2: the last signed state-changing routes. A put that a re-run repeats to the same
    // effect (bank account, schedule, routing, a second delete) is told apart by its answer:
    // replayed, not run again.
    {
      name: 'payment session create',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/payments/sessions',
        body: {
          transactionId: `ord-${marker}`,
          amount: 12_500,
          currency: 'TRY',
          returnUrl: 'https://shop.example/return',
        },
      }),
      // A re-run found its own session and answered 200.
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from payment_sessions
          where merchant_id = ${m.merchantId} and transaction_id = ${`ord-${marker}`}`),
    },
    {
      name: 'payment update',
      status: 200,
      prepare: async () => {
        const { transactionId } = await openSession(m.client, 4_500)
        const cardToken = await tokenize(m.client, CARDS.frictionless)
        payment = (
          await api<{ paymentId: string }>('POST', '/v1/payments/card', {
            transactionId,
            amount: 4_500,
            currency: 'TRY',
            cardToken,
          })
        ).paymentId
        return {
          method: 'PATCH',
          path: `/v1/payments/${payment}`,
          body: { metadata: { order: marker } },
        }
      },
      effects: events('payment.updated', () => payment),
    },
    {
      name: 'card token create',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/cards/tokens',
        body: {
          cardNumber: CARDS.troy,
          expMonth: 12,
          expYear: 2030,
          cvc: '123',
          holderName: 'Ayşe Yılmaz',
        },
      }),
      // The only case that stores this card: a re-run made a second token of it.
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from vault_card_tokens
          where merchant_id = ${m.merchantId} and bin = ${CARDS.troy.slice(0, 6)}`),
    },
    {
      name: 'bank account put',
      status: 200,
      prepare: async () => ({
        method: 'PUT',
        path: '/v1/bank-account',
        body: { iban, holderName: 'Ayşe Yılmaz' },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from merchant_bank_accounts
          where merchant_id = ${m.merchantId}`),
    },
    {
      name: 'payout schedule put',
      status: 200,
      prepare: async () => ({
        method: 'PUT',
        path: '/v1/payout-schedule',
        body: { interval: 'weekly', anchor: 'friday' },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from payout_schedules
          where merchant_id = ${m.merchantId} and anchor = 'friday'`),
    },
    {
      name: 'file upload',
      status: 201,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/files',
        body: multipartForm(
          { purpose: 'dispute_evidence' },
          { field: 'file', filename: `${marker}.pdf`, bytes: PDF },
        ),
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from files
          where merchant_id = ${m.merchantId} and name = ${`${marker}.pdf`}`),
    },
    {
      name: 'statement export create',
      status: 202,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/transactions/exports',
        body: { format: 'csv' },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from transaction_exports
          where merchant_id = ${m.merchantId} and kind = 'statement'`),
    },
    {
      name: 'report create',
      status: 202,
      prepare: async () => ({
        method: 'POST',
        path: '/v1/reports',
        body: {
          type: 'balance_summary',
          format: 'csv',
          from: '2026-01-01T00:00:00Z',
          to: '2026-02-01T00:00:00Z',
        },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from transaction_exports
          where merchant_id = ${m.merchantId} and kind = 'balance_summary'`),
    },
    {
      name: 'routing put',
      status: 200,
      prepare: async () => ({
        method: 'PUT',
        path: '/v1/routing',
        body: { rules: [], default: [] },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from acquirer_routing
          where merchant_id = ${m.merchantId}`),
    },
    // Disabled: no charge after these may be routed to the account.
    {
      name: 'POS account create',
      status: 201,
      prepare: async () => ({ method: 'POST', path: '/v1/pos-accounts', body: posBody(marker) }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from acquirer_pos_accounts
          where merchant_id = ${m.merchantId} and name = ${marker}`),
    },
    {
      name: 'POS account update',
      status: 200,
      prepare: async () => ({
        method: 'PATCH',
        path: `/v1/pos-accounts/${await newPos()}`,
        body: { name: marker },
      }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from acquirer_pos_accounts
          where id = ${pos} and name = ${marker}`),
    },
    {
      name: 'POS account delete',
      status: 204,
      prepare: async () => ({ method: 'DELETE', path: `/v1/pos-accounts/${await newPos()}` }),
      effects: () =>
        count(sql<{ n: number }>`select count(*)::int as n from acquirer_pos_accounts
          where id = ${pos} and deleted_at is not null`),
    },
  ]

  /** Retries (409 in progress, 5xx, no answer) until an answer; how long it took. */
  const retry = async (method: string, path: string, body: unknown, key: string) => {
    const started = Date.now()
    for (;;) {
      const res = await call(method, path, body, key)
      const code = res ? (JSON.parse(res.text || '{}') as { code?: string }).code : undefined
      if (res && res.status < 500 && code !== 'SVC-GW-2002') {
        return { res, ms: Date.now() - started }
      }
      assert.ok(Date.now() - started < 60_000, `no answer: ${JSON.stringify(res)}`)
      await delay(100)
    }
  }

  /** Starts the API armed with `spec`; the armed call's fail point kills it. */
  const armed = async (spec: string) => {
    await service.killApi()
    await service.startApi({ KURUS_FAILPOINTS: spec })
  }
  const died = async (label: string) => {
    const api = service.api
    assert.ok(api)
    const timer = delay(30_000, 'alive')
    assert.notEqual(await Promise.race([exited(api), timer]), 'alive', `${label}: still alive`)
    assert.equal(api.signalCode, 'SIGKILL', `${label}: the fail point did not fire`)
    service.api = undefined
  }

  const selected = (names: string) =>
    cases.filter((c) => names.split(',').some((o) => c.name.includes(o)))
  const check = async (
    c: Case,
    label: string,
    request: { method: string; path: string; body?: unknown },
    key: string,
  ) => {
    const { res, ms } = await retry(request.method, request.path, request.body, key)
    assert.ok(ms < RESUME_WITHIN_MS, `${label}: answered after ${ms} ms`)
    assert.equal(res.status, c.status, `${label}: ${res.text}`)
    assert.equal(res.replayed, true, `${label}: the recorded answer, not a second run`)
    assert.equal(await c.effects(), 1, `${label}: one execution`)
    return res
  }

  // Every route, in one process: the fail point throws where the after-commit store would
  // run (the request fails with a 500, its claim is left unanswered as a crash leaves it), and
  // the same-key retry, taken over at once, must find the answer the business transaction
  // recorded. A route still answering from `onSend` runs again and meets the fail point again.
  await armed('answer.before_record:throw')
  for (const c of selected(only)) {
    marker = randomUUID()
    const request = await c.prepare()
    const key = newKey()
    const first = await call(request.method, request.path, request.body, key)
    assert.equal(first?.status, 500, `${c.name}: the fail point did not fire: ${first?.text}`)
    await check(c, `${c.name} (throw)`, request, key)
  }

  // SIGKILL, one route of each kind (a create, a change, a 204), the process started armed
  // so each costs one start; and once after the answer left: that answer byte for byte.
  const killed = selected(only === '' ? 'invoice create,risk rule update,customer delete' : only)
  for (const spec of ['answer.before_record:exit*1', 'answer.after_flush:exit*1']) {
    const round = spec.startsWith('answer.after_flush') ? killed.slice(0, 1) : killed
    await armed(spec)
    for (const [i, c] of round.entries()) {
      const label = `${c.name} at ${spec}`
      marker = randomUUID()
      const request = await c.prepare()
      const key = newKey()
      const first = await call(request.method, request.path, request.body, key)
      await died(`${label} (answered ${first?.status} ${first?.text.slice(0, 300)})`)
      // The next case's process is armed already: a retry that ran the use case again would
      // meet the fail point a second time and die.
      if (i < round.length - 1) await service.startApi({ KURUS_FAILPOINTS: spec })
      else await service.startApi()
      const res = await check(c, label, request, key)
      if (first) {
        assert.equal(spec, 'answer.after_flush:exit*1', `${label}: an answer left`)
        assert.equal(res.text, first.text, label)
        assert.equal(res.requestId, first.requestId, label)
        assert.equal(res.status, first.status, label)
      }
    }
  }
})
