// Goal: risk rules (CONTRACT.md "Risk"): JSON Logic conditions over the documented facts,
// checked at creation (unknown operator or fact → 400), each action applied to a charge
// (block → 402 SVC-RISK-3701; require_3ds → the challenge even when threeDSecure was false
// or the card is frictionless; review → authorized, not captured), the decision order
// block > require_3ds > review, velocity facts, the score, the facts stored with the payment,
// CRUD and the 100-rule limit. Method: signed HTTP requests against the real app.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { assertBlocked, createRule, getPayment } from './_support.ts'

test('an unknown operator, an unknown fact or a malformed condition is 400 at creation and on PATCH', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (const condition of [
    { method: [{ var: 'ip' }, 'toString'] },
    { '>': [{ var: 'velocity.cardAttempts24h' }, 3] },
    { '>': [{ var: 'amount' }, 3], '<': [{ var: 'amount' }, 5] },
    { and: [{ '==': [{ var: 'card.brand' }, 'visa'] }, { regex: ['x'] }] },
    { var: ['amount', 0, 1] },
    { '==': [{ var: 1 }, 1] },
  ]) {
    const res = await m.client.request<{ code: string; message: string }>(
      'POST',
      '/v1/risk/rules',
      {
        body: { name: 'bad', action: 'block', condition },
      },
    )
    assert.equal(res.status, 400, JSON.stringify(condition))
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  const notObject = await m.client.request('POST', '/v1/risk/rules', {
    body: { name: 'bad', action: 'block', condition: true },
  })
  assert.equal(notObject.status, 400)
  const badAction = await m.client.request('POST', '/v1/risk/rules', {
    body: { name: 'bad', action: 'allow', condition: { '>': [{ var: 'amount' }, 1] } },
  })
  assert.equal(badAction.status, 400)
  const id = await createRule(m.client, 'block', { '>': [{ var: 'amount' }, 1_000_000] })
  const patch = await m.client.request<{ code: string }>('PATCH', `/v1/risk/rules/${id}`, {
    body: { condition: { '>': [{ var: 'cvc' }, 1] } },
  })
  assert.equal(patch.status, 400)
  const rules = await m.client.request<{ items: { id: string }[] }>('GET', '/v1/risk/rules')
  assert.equal(rules.body.items.length, 1)
})

test('block: a matching rule blocks with its id in ruleIds; a non-matching charge passes', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = await createRule(m.client, 'block', { '>=': [{ var: 'amount' }, 100_000] })
  const p = await assertBlocked(
    m.client,
    await charge(m.client, CARDS.frictionless, 150_000),
    `rule:${id}:block`,
  )
  assert.deepEqual(p.risk?.ruleIds, [id])
  const ok = await charge(m.client, CARDS.frictionless, 99_999)
  assert.equal(ok.res.status, 201, JSON.stringify(ok.res.body))
  const okp = await getPayment(m.client, ok.res.body.paymentId)
  assert.equal(okp.status, 'captured')
  assert.equal(okp.risk?.decision, 'allow')
  assert.deepEqual(okp.risk.ruleIds, [])
  assert.equal(okp.failureCode, null)
})

test('require_3ds: the challenge is forced even for a frictionless card charged with threeDSecure false', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = await createRule(m.client, 'require_3ds', { '==': [{ var: 'card.brand' }, 'visa'] })
  const { res } = await charge(m.client, CARDS.frictionless, 5000, { threeDSecure: false })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'pending_3ds')
  assert.ok(res.body.challengeUrl)
  assert.deepEqual(res.body['risk'], {
    decision: 'require_3ds',
    score: 3,
    reasons: [`rule:${id}:require_3ds`, 'signal:no_customer:3'],
    ruleIds: [id],
  })
  const solved = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/sandbox/payments/${res.body.paymentId}/3ds-challenge`,
    { body: { otp: '123456' } },
  )
  assert.equal(solved.status, 200, JSON.stringify(solved.body))
  const cb = await m.client.request<{ status: string }>(
    'POST',
    `/v1/payments/${res.body.paymentId}/3ds-callback`,
    { body: solved.body },
  )
  assert.equal(cb.status, 200, JSON.stringify(cb.body))
  assert.equal(cb.body.status, 'captured')
  // Without the rule the same charge is not challenged.
  const other = await charge(m.client, CARDS.debit, 5000, { threeDSecure: false })
  assert.equal(other.res.body.status, 'captured')
})

test('review: the payment stops at authorized although capture was asked, and a review opens', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = await createRule(m.client, 'review', { '>': [{ var: 'amount' }, 10_000] })
  const { res } = await charge(m.client, CARDS.frictionless, 20_000)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'authorized')
  const p = await getPayment(m.client, res.body.paymentId)
  assert.equal(p.capturedAmount, 0)
  assert.equal(p.risk?.decision, 'review')
  assert.deepEqual(p.risk.ruleIds, [id])
  const reviews = await m.client.request<{ items: { paymentId: string; status: string }[] }>(
    'GET',
    '/v1/reviews?status=open',
  )
  assert.deepEqual(
    reviews.body.items.map((r) => [r.paymentId, r.status]),
    [[p.id, 'open']],
  )
})

test('the strongest action wins: block > require_3ds > review; disabled rules do not count', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const always = { '>': [{ var: 'amount' }, 0] }
  const review = await createRule(m.client, 'review', always)
  const threeDs = await createRule(m.client, 'require_3ds', always)
  const first = await charge(m.client, CARDS.frictionless, 5000, { threeDSecure: false })
  assert.equal(first.res.body.status, 'pending_3ds')
  assert.deepEqual((first.res.body['risk'] as { ruleIds: string[] }).ruleIds, [review, threeDs])
  const block = await createRule(m.client, 'block', always)
  await assertBlocked(
    m.client,
    await charge(m.client, CARDS.frictionless, 5000),
    `rule:${block}:block`,
  )
  const off = await m.client.request<{ enabled: boolean }>('PATCH', `/v1/risk/rules/${block}`, {
    body: { enabled: false },
  })
  assert.equal(off.status, 200)
  assert.equal(off.body.enabled, false)
  const del = await m.client.request('DELETE', `/v1/risk/rules/${threeDs}`)
  assert.equal(del.status, 204)
  const last = await charge(m.client, CARDS.frictionless, 5000, { threeDSecure: false })
  assert.equal(last.res.body.status, 'authorized')
  assert.equal((last.res.body['risk'] as { decision: string }).decision, 'review')
})

test('velocity facts count the card, the IP and the customer; the facts are stored with the payment', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const rule = await createRule(m.client, 'block', {
    '>': [{ var: 'velocity.cardAttempts1h' }, 3],
  })
  for (let i = 0; i < 3; i++) {
    const ok = await charge(m.client, CARDS.frictionless, 5000, { ip: '192.0.2.7' })
    assert.equal(ok.res.status, 201, JSON.stringify(ok.res.body))
  }
  const fourth = await charge(m.client, CARDS.frictionless, 5000, { ip: '192.0.2.7' })
  const p = await assertBlocked(m.client, fourth, `rule:${rule}:block`)
  const { rows } = await sql<{ risk_facts: Record<string, unknown> }>`
    select risk_facts from payments where id = ${p.id}`.execute(h.deps.db)
  const facts = rows[0]?.risk_facts as {
    amount: number
    card: Record<string, unknown>
    ip: string
    velocity: Record<string, number>
  }
  assert.equal(facts.amount, 5000)
  assert.equal(facts.ip, '192.0.2.7')
  assert.deepEqual(facts.card, {
    brand: 'visa',
    bin: '415565',
    binCountry: 'TR',
    funding: 'credit',
    fingerprint: p.card?.fingerprint,
  })
  assert.deepEqual(facts.velocity, {
    cardAttempts1h: 4,
    cardDeclines24h: 0,
    ipAttempts1h: 4,
    customerAmount24h: 0,
  })
  // The blocked attempt counts as a decline of that card; an hour later the attempts are gone.
  h.clock.advance(3_600_001)
  const later = await charge(m.client, CARDS.frictionless, 5000, { ip: '192.0.2.7' })
  assert.equal(later.res.status, 201, JSON.stringify(later.res.body))
  const lp = await getPayment(m.client, later.res.body.paymentId)
  assert.equal(lp.risk?.score, 12 + 3) // one decline in 24h, no customer
  assert.deepEqual(lp.risk.reasons, ['signal:card_declines_24h:12', 'signal:no_customer:3'])
})

test('rules: retrieve, rename, list oldest first, 404 for another merchant, at most 100', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const cond = { in: [{ var: 'card.bin' }, ['415565', '552879']] }
  const id = await createRule(m.client, 'review', cond, 'bins')
  const got = await m.client.request<Record<string, unknown>>('GET', `/v1/risk/rules/${id}`)
  assert.equal(got.status, 200)
  assert.equal(got.body['name'], 'bins')
  assert.equal(got.body['action'], 'review')
  assert.equal(got.body['enabled'], true)
  assert.deepEqual(got.body['condition'], cond)
  const renamed = await m.client.request<{ name: string }>('PATCH', `/v1/risk/rules/${id}`, {
    body: { name: 'two bins' },
  })
  assert.equal(renamed.body.name, 'two bins')
  for (const [method, path] of [
    ['GET', `/v1/risk/rules/${id}`],
    ['PATCH', `/v1/risk/rules/${id}`],
    ['DELETE', `/v1/risk/rules/${id}`],
  ] as const) {
    const res = await other.client.request(
      method,
      path,
      method === 'PATCH' ? { body: { enabled: false } } : {},
    )
    assert.equal(res.status, 404, `${method} ${path}`)
  }
  for (let i = 1; i < 100; i++) await createRule(m.client, 'review', cond, `r${i}`)
  const full = await m.client.request<{ code: string }>('POST', '/v1/risk/rules', {
    body: { name: 'one too many', action: 'block', condition: cond },
  })
  assert.equal(full.status, 400)
  assert.equal(full.body.code, 'SVC-VAL-3001')
  const list = await m.client.request<{ items: { name: string }[] }>('GET', '/v1/risk/rules')
  assert.equal(list.body.items.length, 100)
  assert.equal(list.body.items[0]?.name, 'two bins')
})
