// Goal: every detokenization leaves an append-only audit row that only its merchant can list,
// page by page with a tamper-evident cursor; no audit row, no card number.
// Method: detokenize through h.deps, read GET /v1/transactions/card-access over HTTP, and
// poke the audit table with raw SQL to prove the trigger and the same-transaction rule.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { AssertionError } from '../../src/platform/assert.ts'
import { transact } from '../../src/platform/db/transaction.ts'
import { AppError } from '../../src/platform/errors.ts'
import {
  detokenize,
  revokeCardToken,
  type DetokenizeCaller,
} from '../../src/modules/vault/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { tokenize } from './_cards.ts'

interface AccessItem {
  op: string
  cardToken: string
  callerService: string
  result: string
  createdAt: string
}
interface AccessPage {
  items: AccessItem[]
  nextCursor: string | null
}
interface ErrorBody {
  code: string
  details?: { field: string; reason: string }[]
}

const isAppError = (code: string, status: number) => (e: unknown) =>
  e instanceof AppError && e.code === code && e.status === status

function list(m: TestMerchant, query: Record<string, string | number | undefined> = {}) {
  return m.client.request<AccessPage & ErrorBody>('GET', '/v1/transactions/card-access', { query })
}

async function detokenizeOk(h: TestApp, m: TestMerchant, cardToken: string) {
  return detokenize(h.deps, { merchantId: m.merchantId, cardToken, callerService: 'acquirer' })
}

test('detokenize returns the card and writes an audit row only its merchant sees', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const token = await tokenize(h, a, '4155650100416111')

  const card = await detokenizeOk(h, a, token)
  assert.deepEqual(card, {
    pan: '4155650100416111',
    expMonth: 12,
    expYear: h.clock.now().getUTCFullYear() + 3,
    holderName: 'Ayşe Yılmaz',
  })

  const mine = await list(a)
  assert.equal(mine.status, 200)
  assert.equal(mine.body.nextCursor, null)
  assert.equal(mine.body.items.length, 1)
  const [item] = mine.body.items
  assert.deepEqual(
    { ...item, createdAt: undefined },
    {
      op: 'detokenize',
      cardToken: token,
      callerService: 'acquirer',
      result: 'ok',
      createdAt: undefined,
    },
  )
  assert.ok(!Number.isNaN(Date.parse(item!.createdAt)))

  const theirs = await list(b)
  assert.equal(theirs.status, 200)
  assert.deepEqual(theirs.body, { items: [], nextCursor: null })
})

test('refused detokenizations are audited as denied: missing, another merchant’s, revoked, wrong caller', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const token = await tokenize(h, a, '4155650100416111')

  await assert.rejects(detokenizeOk(h, b, token), isAppError('SVC-RES-3301', 404))
  await assert.rejects(detokenizeOk(h, a, 'tok_nosuchtoken'), isAppError('SVC-RES-3301', 404))
  // Something that is not a token id (a card number by mistake) is not written to the audit.
  await assert.rejects(detokenizeOk(h, a, '4155650100416111'), isAppError('SVC-RES-3301', 404))
  await assert.rejects(
    detokenize(h.deps, {
      merchantId: a.merchantId,
      cardToken: token,
      callerService: 'payments' as DetokenizeCaller,
    }),
    AssertionError,
  )
  await transact(h.deps.db, (tx) => revokeCardToken(tx, a.merchantId, token))
  await assert.rejects(detokenizeOk(h, a, token), isAppError('SVC-STATE-3401', 409))

  const seenByA = (await list(a)).body.items
  assert.deepEqual(
    seenByA.map((i) => [i.cardToken, i.callerService, i.result]),
    [
      [token, 'acquirer', 'denied'],
      [token, 'payments', 'denied'],
      ['tok_invalid', 'acquirer', 'denied'],
      ['tok_nosuchtoken', 'acquirer', 'denied'],
    ],
  )
  const seenByB = (await list(b)).body.items
  assert.deepEqual(
    seenByB.map((i) => [i.cardToken, i.result]),
    [[token, 'denied']],
  )
})

test('pages newest first with limit and cursor; from/to filter; bad cursors are 400', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const tokens = [
    await tokenize(h, a, '4155650100416111'),
    await tokenize(h, a, '5528790000000008'),
    await tokenize(h, a, '9792020000000001'),
  ]
  const start = h.clock.now()
  // Five accesses a minute apart, then two in the same millisecond range.
  for (let i = 0; i < 5; i++) {
    h.clock.advance(60_000)
    await detokenizeOk(h, a, tokens[i % 3]!)
  }
  await Promise.all([detokenizeOk(h, a, tokens[0]!), detokenizeOk(h, a, tokens[1]!)])

  const all = (await list(a, { limit: 100 })).body.items
  assert.equal(all.length, 7)
  const times = all.map((i) => Date.parse(i.createdAt))
  assert.deepEqual(
    times,
    [...times].sort((x, y) => y - x),
  )

  const seen: AccessItem[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await list(a, { limit: 3, cursor })
    assert.equal(page.status, 200, JSON.stringify(page.body))
    seen.push(...page.body.items)
    cursor = page.body.nextCursor ?? undefined
    pages++
  } while (cursor)
  assert.equal(pages, 3)
  assert.deepEqual(seen, all)

  const first = await list(a, { limit: 2 })
  assert.equal(first.body.items.length, 2)
  assert.equal(first.body.items[0]!.createdAt, all[0]!.createdAt)
  const good = first.body.nextCursor
  assert.ok(good)

  // Edit one character of the payload: the signature no longer matches.
  const [payload, mac] = good.split('.')
  const flipped = payload!.slice(0, -2) + (payload!.at(-2) === 'A' ? 'B' : 'A') + payload!.slice(-1)
  for (const bad of [`${flipped}.${mac}`, `${payload}.${mac!.slice(1)}`, 'garbage', `${good}.x`]) {
    const res = await list(a, { limit: 2, cursor: bad })
    assert.equal(res.status, 400, bad)
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.deepEqual(res.body.details, [{ field: 'cursor', reason: 'is not a valid cursor' }])
  }
  // A genuine cursor of another merchant's list is refused too.
  const stolen = await list(b, { limit: 2, cursor: good })
  assert.equal(stolen.status, 400)

  for (const limit of [0, 101, 'x']) {
    const res = await list(a, { limit })
    assert.equal(res.status, 400, String(limit))
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  assert.equal((await list(a, { from: 'yesterday' })).status, 400)
  assert.equal((await list(a, { foo: '1' })).status, 400)
  const inverted = await list(a, {
    from: new Date(start.getTime() + 10 * 60_000).toISOString(),
    to: start.toISOString(),
  })
  assert.equal(inverted.status, 400)

  // Default limit is 20; from is inclusive and to exclusive.
  assert.equal((await list(a)).body.items.length, 7)
  const window = await list(a, {
    from: new Date(start.getTime() + 2 * 60_000).toISOString(),
    to: new Date(start.getTime() + 4 * 60_000).toISOString(),
  })
  assert.equal(window.body.items.length, 2)
})

test('audit rows cannot be updated, deleted or truncated', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const token = await tokenize(h, a, '4155650100416111')
  await detokenizeOk(h, a, token)
  await assert.rejects(
    sql`update vault_card_access set result = 'denied'`.execute(h.deps.db),
    /append-only/,
  )
  await assert.rejects(sql`delete from vault_card_access`.execute(h.deps.db), /append-only/)
  await assert.rejects(sql`truncate vault_card_access`.execute(h.deps.db), /TRUNCATE refused/)
  assert.equal((await list(a)).body.items.length, 1)
})

test('if the audit row cannot be written, no card number comes out', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const token = await tokenize(h, a, '4155650100416111')
  // Deliberately broken state for this test only: every audit insert fails.
  await sql`create function fail_audit() returns trigger language plpgsql as $$
    begin raise exception 'audit store unavailable'; end $$`.execute(h.deps.db)
  await sql`create trigger fail_audit before insert on vault_card_access
    for each row execute function fail_audit()`.execute(h.deps.db)
  await assert.rejects(detokenizeOk(h, a, token), /audit store unavailable/)
  await sql`drop trigger fail_audit on vault_card_access`.execute(h.deps.db)
  assert.equal((await list(a)).body.items.length, 0)
  assert.equal((await detokenizeOk(h, a, token)).pan, '4155650100416111')
})

// Issue 29: the sandbox ACS hands the card it read to the bank in the same request, so a
// frictionless charge reads the vault once; a challenge (answered later) reads it again.
test('a frictionless charge detokenizes once; a 3-D Secure challenge reads the card again to authorize', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const frictionless = await charge(m.client, CARDS.frictionless, 5_000)
  assert.equal(frictionless.res.status, 201)
  assert.equal(frictionless.res.body.status, 'captured')
  const reads = async (cardToken: string) =>
    (await list(m)).body.items.filter((i) => i.cardToken === cardToken && i.op === 'detokenize')
      .length
  assert.equal(await reads(frictionless.cardToken), 1)

  const challenged = await charge(m.client, CARDS.challenge, 5_000)
  assert.equal(challenged.res.body.status, 'pending_3ds')
  assert.equal(await reads(challenged.cardToken), 1)
})
