// Goal: risk rules cannot escape the allow-list or run away (issue 36, finding 4): every
// argument of every operator is checked, `var`'s default included, so `{"var": ["amount",
// {"log": "x"}]}` and a nested `map` bomb are 400 naming the problem, through the signed API
// (create, PATCH, backtest) and the dashboard's rule form; size, depth and array lengths are
// bounded at creation; a condition stored before the bounds (written straight into the table)
// is never run: it matches nothing and prints nothing.
// Method: signed HTTP requests and the web form against the real app; the rule table written
// directly for the stored-before case; console.log watched during a charge.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { newDashboardMerchant, signedIn } from '../dashboard/_web.ts'
import { createRule } from './_support.ts'

const LOG_IN_DEFAULT = { var: ['amount', { log: 'x' }] }

function mapBomb(levels: number): unknown {
  let inner: unknown = { var: 'amount' }
  for (let i = 0; i < levels; i++) inner = { map: [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], inner] }
  return { '>': [{ var: ['amount', inner] }, 0] }
}

const REFUSED: [string, unknown, RegExp][] = [
  ['log in a var default', LOG_IN_DEFAULT, /condition\.var\[1\].*unknown operator "log"/],
  ['a map bomb in a var default', mapBomb(3), /unknown operator "map"/],
  ['a map bomb', { '>': [mapBomb(2), 0] }, /unknown operator "map"/],
  [
    'an array of 101 items',
    { in: [{ var: 'card.bin' }, Array.from({ length: 101 }, (_, i) => String(400000 + i))] },
    /more than 100 items/,
  ],
  ['a long string', { '==': [{ var: 'customer.email' }, 'x'.repeat(300)] }, /longer than 256/],
  [
    'deep nesting',
    JSON.parse(`${'{"!":'.repeat(25)}{"var":"amount"}${'}'.repeat(25)}`) as unknown,
    /deeper than 20/,
  ],
]

test('every operator argument, var defaults included, is checked: 400 naming the problem', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = await createRule(m.client, 'block', { '>': [{ var: 'amount' }, 1_000_000] })
  for (const [what, condition, reason] of REFUSED) {
    for (const [method, path, body] of [
      ['POST', '/v1/risk/rules', { name: 'bad', action: 'block', condition }],
      ['PATCH', `/v1/risk/rules/${id}`, { condition }],
      ['POST', '/v1/risk/rules/backtest', { condition }],
    ] as const) {
      const res = await m.client.request<{ code: string; message: string }>(method, path, { body })
      assert.equal(res.status, 400, `${what}: ${method} ${path}`)
      assert.equal(res.body.code, 'SVC-VAL-3001')
      assert.match(res.body.message, reason, what)
    }
  }
  const rules = await m.client.request<{ items: unknown[] }>('GET', '/v1/risk/rules')
  assert.equal(rules.body.items.length, 1)
})

test('the dashboard’s rule form refuses the same conditions', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  for (const [what, condition] of REFUSED.slice(0, 2)) {
    const res = await web.submit(
      '/dashboard/risk/rules',
      { name: 'bad', action: 'block', condition: JSON.stringify(condition), enabled: 'yes' },
      '/dashboard/risk/rules/new',
    )
    assert.equal(res.status, 400, what)
  }
  const rules = await m.client.request<{ items: unknown[] }>('GET', '/v1/risk/rules')
  assert.equal(rules.body.items.length, 0)
})

test('a condition stored before the bounds is never run: it matches nothing and logs nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = await createRule(m.client, 'block', { '>': [{ var: 'amount' }, 1] })
  await sql`update risk_rules set condition = ${JSON.stringify({
    '>': [{ var: ['amount', { log: 'leak' }] }, 1],
  })}::jsonb where id = ${id}`.execute(h.deps.db)
  const printed: unknown[] = []
  const original = console.log
  console.log = (...args: unknown[]) => void printed.push(args)
  try {
    const res = await charge(m.client, CARDS.frictionless, 5_000, { threeDSecure: false })
    assert.equal(res.res.status, 201, JSON.stringify(res.res.body))
  } finally {
    console.log = original
  }
  assert.deepEqual(printed, [])
})
