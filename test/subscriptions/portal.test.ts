// Goal: the buyer portal — the public view by publicHash, the buyer's cancel (at period end by
// default), update-card sessions and how the subscription picks up the new card, and the hosted
// page /subscription/{hash} (HTML, CSP, tr/en button names, no inline script). Method: unsigned
// HTTP exactly as a buyer's browser sends it; the hosted checkout's completion of a card-update
// session is played by attaching the card as default and completing the session, as it does.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { completeSession, getSessionById } from '../../src/modules/payments/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'
import { action, eventTypes, getSub, reconcile, subscribed } from './_support.ts'

async function publicCall<T = Record<string, unknown>>(
  h: TestApp,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await fetch(`${h.url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T, headers: res.headers }
}

test('public view: the buyer-facing fields only, by publicHash, never cached', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h)
  await reconcile(m)
  const hash = sub.publicHash ?? ''
  const res = await publicCall(h, 'GET', `/v1/public/subscriptions/${hash}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.headers.get('cache-control'), 'no-store')
  const paid = await getSub(m, sub.id)
  assert.deepEqual(res.body, {
    publicHash: hash,
    merchantName: 'Test Merchant',
    status: 'active',
    amountMinor: 14_900,
    currency: 'TRY',
    intervalCount: 1,
    intervalUnit: 'month',
    cardLast4: '6111',
    cardBrand: 'visa',
    nextChargeAt: paid.nextChargeAt,
    cancelAtPeriodEnd: false,
  })
  const unknown = await publicCall<{ code: string }>(
    h,
    'GET',
    '/v1/public/subscriptions/AAAAAAAAAAAAAAAAAAAAAA',
  )
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.code, 'SVC-RES-3301')
  const malformed = await publicCall(h, 'GET', '/v1/public/subscriptions/not%20a%20hash')
  assert.equal(malformed.status, 400)
})

test('public cancel: at period end by default, recorded as the buyer’s; now when asked', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h)
  await reconcile(m)
  const hash = sub.publicHash ?? ''
  const res = await publicCall(h, 'POST', `/v1/public/subscriptions/${hash}/cancel`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body, { publicHash: hash, status: 'active', cancelAtPeriodEnd: true })
  const again = await publicCall(h, 'POST', `/v1/public/subscriptions/${hash}/cancel`, {})
  assert.deepEqual(again.body, res.body, 'a repeat changes nothing')
  const merchantView = await getSub(m, sub.id)
  assert.equal(merchantView.cancelAtPeriodEnd, true)
  assert.equal(merchantView.status, 'active')

  const now = await publicCall(h, 'POST', `/v1/public/subscriptions/${hash}/cancel`, {
    atPeriodEnd: false,
  })
  assert.deepEqual(now.body, { publicHash: hash, status: 'cancelled', cancelAtPeriodEnd: false })
  assert.deepEqual((await eventTypes(h, m.merchantId, sub.id)).slice(-2), [
    'subscription.cancel_scheduled',
    'subscription.cancelled',
  ])
  const bad = await publicCall(h, 'POST', `/v1/public/subscriptions/${hash}/cancel`, {
    atPeriodEnd: 'yes',
  })
  assert.equal(bad.status, 400)
  // A form post from another site is not JSON: refused before anything happens.
  const form = await fetch(`${h.url}/v1/public/subscriptions/${hash}/cancel`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'atPeriodEnd=false',
  })
  assert.equal(form.status, 415)
})

test('update-card session: card_update_only for the customer; the completed card becomes the subscription’s', async (t) => {
  const h = await startTestApp(t)
  const { m, customerId, sub } = await subscribed(h)
  await reconcile(m)
  const hash = sub.publicHash ?? ''
  type Minted = { sessionId: string; checkoutUrl: string; expiresAt: string }
  const minted = await publicCall<Minted>(
    h,
    'POST',
    `/v1/public/subscriptions/${hash}/update-card-session`,
    {},
  )
  assert.equal(minted.status, 200, JSON.stringify(minted.body))
  assert.deepEqual(Object.keys(minted.body).sort(), ['checkoutUrl', 'expiresAt', 'sessionId'])
  assert.equal(minted.body.checkoutUrl, `${h.config.checkoutUrl}/s/${minted.body.sessionId}`)
  const session = await getSessionById(h.deps, minted.body.sessionId)
  assert.ok(session)
  assert.equal(session.mode, 'card_update_only')
  assert.equal(session.customerId, customerId)
  assert.equal(session.transactionId, `${sub.id}:card:1`)
  assert.equal(session.returnUrl, `${h.config.checkoutUrl}/subscription/${hash}`)
  assert.equal(session.metadata['subscriptionId'], sub.id)

  // While it is open, asking again hands out the same session.
  const repeat = await publicCall<Minted>(
    h,
    'POST',
    `/v1/public/subscriptions/${hash}/update-card-session`,
    {},
  )
  assert.equal(repeat.body.sessionId, minted.body.sessionId)

  // The buyer enters a new card: the checkout attaches it as default and completes.
  const token = await tokenize(m.client, CARDS.debit)
  await m.client.request('POST', `/v1/customers/${customerId}/cards`, {
    body: { cardToken: token, isDefault: true },
  })
  await completeSession(h.deps, minted.body.sessionId)
  const view = await publicCall<{ cardLast4: string; cardBrand: string }>(
    h,
    'GET',
    `/v1/public/subscriptions/${hash}`,
  )
  assert.equal(view.body.cardLast4, '0016')
  assert.equal(view.body.cardBrand, 'mastercard')
  assert.equal((await getSub(m, sub.id)).cardLast4, '0016')
  assert.equal((await eventTypes(h, m.merchantId, sub.id)).at(-1), 'subscription.card_updated')

  // The next renewal charges the new card.
  await m.client.request('POST', `/v1/sandbox/subscriptions/${sub.id}/advance`, { body: {} })
  const renewal = await h.deps.db
    .selectFrom('payments')
    .select(['card_token', 'status'])
    .where('transaction_id', '=', `${sub.id}:2`)
    .executeTakeFirstOrThrow()
  assert.deepEqual(renewal, { card_token: token, status: 'captured' })

  // A new request makes session 2; one left to expire changes nothing.
  const second = await publicCall<Minted>(
    h,
    'POST',
    `/v1/public/subscriptions/${hash}/update-card-session`,
    {},
  )
  assert.notEqual(second.body.sessionId, minted.body.sessionId)
  assert.equal(
    (await getSessionById(h.deps, second.body.sessionId))?.transactionId,
    `${sub.id}:card:2`,
  )
  h.clock.advance(31 * 60 * 1000)
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).cardLast4, '0016')
  const third = await publicCall<Minted>(
    h,
    'POST',
    `/v1/public/subscriptions/${hash}/update-card-session`,
    {},
  )
  assert.equal(
    (await getSessionById(h.deps, third.body.sessionId))?.transactionId,
    `${sub.id}:card:3`,
  )
})

test('the renewal reconciler takes in a completed card update nobody looked at', async (t) => {
  const h = await startTestApp(t)
  const { m, customerId, sub } = await subscribed(h)
  await reconcile(m)
  const minted = await publicCall<{ sessionId: string }>(
    h,
    'POST',
    `/v1/public/subscriptions/${sub.publicHash ?? ''}/update-card-session`,
    {},
  )
  const token = await tokenize(m.client, CARDS.troy)
  await m.client.request('POST', `/v1/customers/${customerId}/cards`, {
    body: { cardToken: token, isDefault: true },
  })
  await completeSession(h.deps, minted.body.sessionId)
  await reconcile(m)
  const row = await h.deps.db
    .selectFrom('subscriptions')
    .select(['card_token', 'card_synced_seq'])
    .where('id', '=', sub.id)
    .executeTakeFirstOrThrow()
  assert.deepEqual(row, { card_token: token, card_synced_seq: 1 })
})

test('an ended subscription mints no update-card session (409)', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h)
  await action(m, sub.id, 'cancel', { atPeriodEnd: false })
  const res = await publicCall<{ code: string }>(
    h,
    'POST',
    `/v1/public/subscriptions/${sub.publicHash ?? ''}/update-card-session`,
    {},
  )
  assert.equal(res.status, 409)
  assert.equal(res.body.code, 'SVC-STATE-3401')
})

test('the hosted page: plan, next charge, card, İptal/Kartı güncelle; English; CSP; no inline script', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h, { extra: { description: 'Altın <üyelik>' } })
  await reconcile(m)
  const hash = sub.publicHash ?? ''
  const res = await fetch(`${h.url}/subscription/${hash}`)
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  const csp = res.headers.get('content-security-policy') ?? ''
  assert.match(csp, /default-src 'self'/)
  assert.match(csp, /frame-ancestors 'none'/)
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer')
  const page = await res.text()
  assert.match(page, /<html lang="tr">/)
  assert.match(page, /Test Merchant/)
  assert.match(page, /₺149,00/)
  assert.match(page, /Her ay/)
  assert.match(page, /VISA •••• 6111/)
  assert.match(page, /Altın &lt;üyelik&gt;/, 'merchant text is escaped')
  assert.match(
    page,
    /<button[^>]*id="cancel-button"[^>]*>\s*<span class="button-label">İptal<\/span>/,
  )
  assert.match(page, /<button[^>]*id="update-card-button"[^>]*>[\s\S]*?Kartı güncelle/)
  // Every script is a file of ours or a JSON data block: no inline code (the CSP forbids it).
  for (const tag of page.match(/<script[^>]*>/g) ?? []) {
    assert.ok(/ src="\/[^"]+"/.test(tag) || /type="application\/json"/.test(tag), tag)
  }
  const script = /src="(\/subscription-assets\/portal\.js\?v=[0-9a-f]+)"/.exec(page)?.[1]
  assert.ok(script)
  const js = await fetch(`${h.url}${script}`)
  assert.equal(js.status, 200)
  assert.match(js.headers.get('content-type') ?? '', /javascript/)
  assert.match(js.headers.get('cache-control') ?? '', /immutable/)

  const english = await (await fetch(`${h.url}/subscription/${hash}?lang=en`)).text()
  assert.match(english, /<html lang="en">/)
  assert.match(english, /Every month/)
  assert.match(english, />Cancel</)
  assert.match(english, />Update card</)

  const missing = await fetch(`${h.url}/subscription/AAAAAAAAAAAAAAAAAAAAAA`)
  assert.equal(missing.status, 404)
  assert.match(await missing.text(), /Abonelik bulunamadı/)

  await action(m, sub.id, 'cancel', { atPeriodEnd: false })
  const ended = await (await fetch(`${h.url}/subscription/${hash}`)).text()
  assert.match(ended, /İptal edildi/)
  assert.doesNotMatch(ended, /id="cancel-button"/)
  assert.doesNotMatch(ended, /id="update-card-button"/)
})
