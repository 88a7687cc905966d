// Goal: payout drafts — every per-row rule in a 1000-row upload, counts, a report that never
// shows a destination, approval fan-out (all or nothing, idempotent) and cancel.
// Method: signed HTTP against the real app; funds come from real captures settled by
// POST /v1/sandbox/reconcile, which also drives the payouts through the sandbox rail.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'
import {
  assertLedgerOk,
  balanceOf,
  captureAndSettle,
  newSubmerchant,
  reconcile,
  trIban,
} from './_support.ts'

interface DraftBody {
  draftId: string
  storeId: string
  status: string
  rowCount: number
  validCount: number
  invalidCount: number
  validTotalMinor: number
  createdAt: string
  code?: string
}

interface ReportRow {
  index: number
  valid: boolean
  errors: string[]
  rail: string | null
  holderName: string | null
  amountMinor: number | null
  destMasked: string | null
}

interface ApproveBody {
  draftId: string
  status: string
  payoutIds: string[]
  payoutCount: number
  code?: string
}

const EXPECTED_ERROR: Record<number, string> = {
  0: 'dest: IBAN check digits (mod-97) do not match',
  1: 'dest: IBAN must be a Turkish (TR) IBAN',
  2: 'dest: a TR IBAN has 26 characters',
  3: 'dest: is not an active card token of this merchant',
  4: 'amountMinor: must be greater than 0',
  5: 'currency: must be TRY',
  6: 'holderName: is required',
  7: 'rail: must be one of fast, eft, card',
}

test('a 1000-row draft: each row rule, counts, masked report, fan-out on approve', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant({ name: 'Other' })
  const ownCard = await tokenize(m.client, CARDS.frictionless)
  const foreignCard = await tokenize(other.client, CARDS.debit)

  // Row i breaks rule i % 10 (0..7), or is valid (8: an IBAN, 9: the merchant's own card).
  const rows = Array.from({ length: 1000 }, (_, i) => {
    const iban = trIban(String(10_000 + i))
    const base = {
      rail: i % 2 === 0 ? 'fast' : 'eft',
      dest: iban,
      holderName: `Alıcı ${String(i)}`,
      amountMinor: 100 + i,
      currency: 'TRY',
    }
    switch (i % 10) {
      case 0:
        return { ...base, dest: `TR00${iban.slice(4)}` }
      case 1:
        return { ...base, dest: 'DE89370400440532013000' }
      case 2:
        return { ...base, dest: iban.slice(0, 25) }
      case 3:
        return { ...base, rail: 'card', dest: foreignCard }
      case 4:
        return { ...base, amountMinor: 0 }
      case 5:
        return { ...base, currency: 'USD' }
      case 6: {
        const { holderName: _dropped, ...rest } = base
        return rest
      }
      case 7:
        return { ...base, rail: 'swift' }
      case 8:
        return base
      default:
        return { ...base, rail: 'card', dest: ownCard }
    }
  })
  const validTotal = rows
    .filter((_, i) => i % 10 >= 8)
    .reduce((sum, r) => sum + (r.amountMinor ?? 0), 0)

  const created = await m.client.request<DraftBody>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows },
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  assert.match(created.body.draftId, /^drf_/)
  assert.equal(created.body.status, 'draft')
  assert.equal(created.body.rowCount, 1000)
  assert.equal(created.body.validCount, 200)
  assert.equal(created.body.invalidCount, 800)
  assert.equal(created.body.validTotalMinor, validTotal)
  assert.ok(!('rows' in created.body), 'the creation response carries no rows')

  const report = await m.client.request<DraftBody & { rows: ReportRow[] }>(
    'GET',
    `/v1/payout-drafts/${created.body.draftId}`,
  )
  assert.equal(report.status, 200)
  assert.equal(report.body.rows.length, 1000)
  for (const row of report.body.rows) {
    const rule = row.index % 10
    const expected = EXPECTED_ERROR[rule]
    if (expected === undefined) {
      assert.equal(row.valid, true, `row ${String(row.index)}: ${row.errors.join('; ')}`)
      assert.deepEqual(row.errors, [])
    } else {
      assert.equal(row.valid, false, `row ${String(row.index)} should be invalid`)
      assert.deepEqual(row.errors, [expected], `row ${String(row.index)}`)
    }
    if (rule === 8) assert.match(row.destMasked ?? '', /^TR\d{2}\*{18}\d{4}$/)
    if (rule === 9) assert.equal(row.destMasked, '**** **** **** 6111')
  }
  assert.equal(report.body.rows[4]?.amountMinor, 0, 'an invalid amount is reported as given')
  assert.equal(report.body.rows[7]?.rail, null, 'an unknown rail is not echoed as a rail')
  // No destination appears anywhere in the report: not an IBAN, not a card token.
  const text = JSON.stringify(report.body)
  for (const row of rows) assert.ok(!text.includes(row.dest), `dest of a row leaked: ${row.dest}`)

  // Fund the merchant above the valid total, then approve: 200 payouts, one per valid row.
  await captureAndSettle(m, 200_000)
  const before = await balanceOf(m.client, m.merchantId)
  assert.ok(before.availableMinor > validTotal)
  const approved = await m.client.request<ApproveBody>(
    'POST',
    `/v1/payout-drafts/${created.body.draftId}/approve`,
    { body: {} },
  )
  assert.equal(approved.status, 200, JSON.stringify(approved.body))
  assert.equal(approved.body.status, 'approved')
  assert.equal(approved.body.draftId, created.body.draftId)
  assert.equal(approved.body.payoutCount, 200)
  assert.equal(new Set(approved.body.payoutIds).size, 200)
  for (const id of approved.body.payoutIds) assert.match(id, /^[0-9a-f-]{36}$/)

  // Idempotent: a second approval answers the same payouts and creates nothing.
  const again = await m.client.request<ApproveBody>(
    'POST',
    `/v1/payout-drafts/${created.body.draftId}/approve`,
    { body: {} },
  )
  assert.equal(again.status, 200)
  assert.deepEqual(again.body.payoutIds, approved.body.payoutIds)
  const held = await balanceOf(m.client, m.merchantId)
  assert.equal(held.availableMinor, before.availableMinor - validTotal)
  assert.equal(held.payoutPendingMinor, validTotal)

  // A fanned-out payout carries its row's data, from the parent merchant's balance.
  const first = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payouts/${approved.body.payoutIds[0] ?? ''}`,
  )
  assert.equal(first.status, 200)
  assert.equal(first.body['status'], 'pending')
  assert.equal(first.body['draftId'], created.body.draftId)
  assert.equal(first.body['ownerType'], 'merchant')
  assert.equal(first.body['submerchantId'], null)
  assert.equal(first.body['amountMinor'], rows[8]?.amountMinor)
  assert.ok(!JSON.stringify(first.body).includes(rows[8]?.dest ?? '?'))

  const ran = await reconcile(m.client)
  assert.ok((ran['payouts.process_payout'] ?? 0) >= 4, 'the 200 payouts ran in batched jobs')
  const after = await balanceOf(m.client, m.merchantId)
  assert.equal(after.payoutPendingMinor, 0)
  assert.equal(after.availableMinor, before.availableMinor - validTotal)
  let paid = 0
  let cursor: string | null = null
  do {
    const page: {
      status: number
      body: { items: { status: string }[]; nextCursor: string | null }
    } = await m.client.request('GET', '/v1/payouts', {
      query: { status: 'paid', limit: '100', ...(cursor ? { cursor } : {}) },
    })
    assert.equal(page.status, 200)
    paid += page.body.items.length
    cursor = page.body.nextCursor
  } while (cursor)
  assert.equal(paid, 200)
  const state = await m.client.request<DraftBody>(
    'GET',
    `/v1/payout-drafts/${created.body.draftId}`,
  )
  assert.equal(state.body.status, 'approved')
  await assertLedgerOk(h)
})

test('draft shape limits: 1001 rows, no rows, wrong types, another store → 4xx', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant({ name: 'Other' })
  const row = {
    rail: 'fast',
    dest: trIban('42'),
    holderName: 'Ayşe',
    amountMinor: 100,
    currency: 'TRY',
  }
  const tooMany = await m.client.request<{ code: string }>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows: Array.from({ length: 1001 }, () => row) },
  })
  assert.equal(tooMany.status, 400)
  assert.equal(tooMany.body.code, 'SVC-VAL-3001')
  const none = await m.client.request<{ code: string }>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows: [] },
  })
  assert.equal(none.status, 400)
  const badType = await m.client.request<{ code: string }>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows: [{ ...row, amountMinor: '100' }] },
  })
  assert.equal(badType.status, 400)
  assert.equal(badType.body.code, 'SVC-VAL-3001')
  const extra = await m.client.request<{ code: string }>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows: [{ ...row, iban: 'x' }] },
  })
  assert.equal(extra.status, 400)
  const foreignStore = await m.client.request<{ code: string }>('POST', '/v1/payout-drafts', {
    body: { storeId: other.storeId, rows: [row] },
  })
  assert.equal(foreignStore.status, 404)
  assert.equal(foreignStore.body.code, 'SVC-RES-3301')
  // Exactly 1000 is allowed.
  const full = await m.client.request<DraftBody>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows: Array.from({ length: 1000 }, () => row) },
  })
  assert.equal(full.status, 201)
  assert.equal(full.body.validCount, 1000)
})

test('cancel: draft → cancelled (repeatable); no approve after it; no cancel after approve', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant({ name: 'Other' })
  const rows = [
    { rail: 'eft', dest: trIban('7'), holderName: 'Mehmet', amountMinor: 1_000, currency: 'TRY' },
  ]
  const a = await m.client.request<DraftBody>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows },
  })
  const path = `/v1/payout-drafts/${a.body.draftId}`
  assert.equal(
    (await other.client.request('POST', `${path}/cancel`, { body: {} })).status,
    404,
    "another merchant's draft does not exist for it",
  )
  assert.equal((await other.client.request('GET', path)).status, 404)
  const cancelled = await m.client.request<DraftBody & { cancelledAt: string }>(
    'POST',
    `${path}/cancel`,
    { body: {} },
  )
  assert.equal(cancelled.status, 200)
  assert.equal(cancelled.body.status, 'cancelled')
  assert.ok(cancelled.body.cancelledAt)
  const twice = await m.client.request<DraftBody>('POST', `${path}/cancel`, { body: {} })
  assert.equal(twice.status, 200)
  assert.equal(twice.body.status, 'cancelled')
  const approve = await m.client.request<{ code: string }>('POST', `${path}/approve`, {
    body: {},
  })
  assert.equal(approve.status, 409)
  assert.equal(approve.body.code, 'SVC-STATE-3401')

  await captureAndSettle(m, 10_000)
  const b = await m.client.request<DraftBody>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows },
  })
  const ok = await m.client.request<ApproveBody>(
    'POST',
    `/v1/payout-drafts/${b.body.draftId}/approve`,
    { body: {} },
  )
  assert.equal(ok.status, 200)
  const late = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payout-drafts/${b.body.draftId}/cancel`,
    { body: {} },
  )
  assert.equal(late.status, 409)
  assert.equal(late.body.code, 'SVC-STATE-3401')
})

test('approval is all or nothing against the available balance, and needs KYC', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await captureAndSettle(m, 10_000) // net 9,726 available
  const available = (await balanceOf(m.client, m.merchantId)).availableMinor
  const rows = [
    { rail: 'fast', dest: trIban('1'), holderName: 'A', amountMinor: 5_000, currency: 'TRY' },
    { rail: 'fast', dest: trIban('2'), holderName: 'B', amountMinor: 5_000, currency: 'TRY' },
    { rail: 'fast', dest: 'nonsense', holderName: 'C', amountMinor: 5_000, currency: 'TRY' },
  ]
  const d = await m.client.request<DraftBody>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows },
  })
  assert.equal(d.body.validTotalMinor, 10_000)
  const refused = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payout-drafts/${d.body.draftId}/approve`,
    { body: {} },
  )
  assert.equal(refused.status, 409)
  assert.equal(refused.body.code, 'SVC-PAY-3502')
  // Nothing moved and nothing was created: the draft is still a draft.
  const state = await m.client.request<DraftBody>('GET', `/v1/payout-drafts/${d.body.draftId}`)
  assert.equal(state.body.status, 'draft')
  assert.equal((await balanceOf(m.client, m.merchantId)).availableMinor, available)
  const list = await m.client.request<{ items: unknown[] }>('GET', '/v1/payouts')
  assert.equal(list.body.items.length, 0)

  await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status: 'suspended' })
  const kyc = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payout-drafts/${d.body.draftId}/approve`,
    { body: {} },
  )
  assert.equal(kyc.status, 403)
  assert.equal(kyc.body.code, 'SVC-KYC-3101')
  await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status: 'approved' })

  await captureAndSettle(m, 1_000)
  // Approved, the draft fans out; approved again, it answers the same (two approvals at once:
  // races.pg.test.ts).
  const approve = () =>
    m.client.request<ApproveBody>('POST', `/v1/payout-drafts/${d.body.draftId}/approve`, {
      body: {},
    })
  const ok = await approve()
  const twin = await approve()
  assert.equal(ok?.status, 200, JSON.stringify(ok?.body))
  assert.equal(twin?.status, 200, JSON.stringify(twin?.body))
  assert.equal(ok.body.payoutCount, 2)
  assert.deepEqual(twin.body.payoutIds, ok.body.payoutIds)
  assert.equal((await balanceOf(m.client, m.merchantId)).payoutPendingMinor, 10_000)

  const empty = await m.client.request<DraftBody>('POST', '/v1/payout-drafts', {
    body: { storeId: m.storeId, rows: [rows[2]] },
  })
  assert.equal(empty.body.validCount, 0)
  const nothing = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payout-drafts/${empty.body.draftId}/approve`,
    { body: {} },
  )
  assert.equal(nothing.status, 409)
  assert.equal(nothing.body.code, 'SVC-STATE-3401')
  await assertLedgerOk(h)
})

test('drafts are for merchant keys: a submerchant key gets 403 SVC-AUTH-3201', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await newSubmerchant(h, m.merchantId)
  const res = await sub.client.request<{ code: string }>('POST', '/v1/payout-drafts', {
    body: {
      storeId: m.storeId,
      rows: [
        { rail: 'fast', dest: trIban('5'), holderName: 'A', amountMinor: 100, currency: 'TRY' },
      ],
    },
  })
  assert.equal(res.status, 403)
  assert.equal(res.body.code, 'SVC-AUTH-3201')
})
