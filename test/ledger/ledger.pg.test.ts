// Goal: the ledger on a real database (PGlite and PostgreSQL): postings write balanced legs
// that read back per payment and per owner, are idempotent on their reference, and the
// database itself refuses an unbalanced entry (at COMMIT) and any change to a posted row.
// Method: the real app's deps over this file's fresh database; postings run inside
// transact() exactly as the payments and payouts use cases call them.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import fc from 'fast-check'
import { sql } from 'kysely'
import type { Deps, Tx } from '../../src/database.ts'
import {
  apportionCapture,
  balancesFor,
  checkLedger,
  commissionRefundFor,
  legsForPayment,
  ownerBalance,
  postCapture,
  postChargeback,
  postChargebackReversal,
  postPayoutCreated,
  postPayoutFailed,
  postPayoutPaid,
  postRefund,
  postSettlement,
  type Share,
} from '../../src/modules/ledger/index.ts'
import { transact } from '../../src/platform/db/transaction.ts'
import { AppError } from '../../src/platform/errors.ts'
import { startTestApp } from '../helpers/app.ts'

const AT = new Date('2025-01-02T10:00:00Z')

async function setup(t: TestContext, options: { freshDatabase?: boolean } = {}) {
  const h = await startTestApp(t, options)
  const m = await h.newMerchant()
  const sub = await h.operator<{ submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Seller', iban: 'TR330006100519786457841326', holderName: 'Seller Ltd' },
  )
  assert.equal(sub.status, 201)
  /** Another tenant in the same database. */
  const otherMerchant = async () => (await h.newMerchant({ name: 'Other' })).merchantId
  return { h, deps: h.deps, merchantId: m.merchantId, subId: sub.body.submerchantId, otherMerchant }
}

function run<T>(deps: Deps, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return transact(deps.db, fn)
}

async function countEntries(deps: Deps, reference: string): Promise<number> {
  const row = await deps.db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow()
  return row.n
}

/** A 10,000 kuruş payment, commission 274, 3,000 of it split to a submerchant. */
function splitPayment(merchantId: string, subId: string, paymentId: string) {
  const shares: Share[] = [
    { ownerType: 'merchant', ownerId: merchantId, grossMinor: 7000 },
    { ownerType: 'submerchant', ownerId: subId, grossMinor: 3000 },
  ]
  return { merchantId, paymentId, amount: 10_000, commission: 274, shares, at: AT }
}

test('a capture posts balanced legs that read back for the payment', async (t) => {
  const { deps, merchantId, subId, otherMerchant } = await setup(t)
  await run(deps, (tx) => postCapture(tx, splitPayment(merchantId, subId, 'pay_cap1')))
  const legs = await legsForPayment(deps.db, merchantId, 'pay_cap1')
  // 274 apportioned 7:3 is 191.8 / 82.2 → 192 / 82 (largest remainder).
  assert.deepEqual(legs, [
    leg('platform', 'platform', 'buyer_pending', 'DEBIT', 10_000),
    leg('merchant', merchantId, 'merchant_reserve', 'CREDIT', 7000 - 192),
    leg('submerchant', subId, 'merchant_reserve', 'CREDIT', 3000 - 82),
    leg('platform', 'platform', 'platform_commission', 'CREDIT', 274),
  ])
  // Tenancy: another merchant sees nothing of it.
  const other = await otherMerchant()
  assert.deepEqual(await legsForPayment(deps.db, other, 'pay_cap1'), [])
  assert.deepEqual(await balancesFor(deps.db, other), [balance('merchant', other, 0, 0, 0)])
  assert.deepEqual(await checkLedger(deps.db), { ok: true, problems: [] })
})

test('posting the same capture twice, or concurrently, is one entry', async (t) => {
  const { deps, merchantId, subId } = await setup(t)
  const capture = splitPayment(merchantId, subId, 'pay_twice')
  await run(deps, (tx) => postCapture(tx, capture))
  await run(deps, (tx) => postCapture(tx, capture))
  const concurrent = splitPayment(merchantId, subId, 'pay_race')
  await Promise.all(Array.from({ length: 4 }, () => run(deps, (tx) => postCapture(tx, concurrent))))
  assert.equal(await countEntries(deps, 'capture:pay_twice'), 1)
  assert.equal(await countEntries(deps, 'capture:pay_race'), 1)
  assert.equal((await legsForPayment(deps.db, merchantId, 'pay_race')).length, 4)
  const [parent] = await balancesFor(deps.db, merchantId)
  assert.equal(parent?.reserveMinor, 2 * (7000 - 192))
})

test('the database refuses an unbalanced entry at COMMIT, not before', async (t) => {
  const { deps, merchantId } = await setup(t)
  // The one allowed raw insert (STYLE.md 4.8): a deliberately unbalanced entry, as a buggy
  // caller bypassing the service would write it. Each statement succeeds; COMMIT must fail.
  const unbalanced = run(deps, async (tx) => {
    await sql`insert into ledger_entries (id, merchant_id, kind, reference, payment_id, created_at)
      values ('jrn_bad', ${merchantId}, 'capture', 'capture:pay_bad', 'pay_bad', now())`.execute(tx)
    await sql`insert into ledger_legs (entry_id, merchant_id, payment_id, account_id, owner_type,
        owner_id, account_type, direction, amount, currency, created_at)
      values ('jrn_bad', ${merchantId}, 'pay_bad', 'platform:platform:buyer_pending', 'platform',
        'platform', 'buyer_pending', 'DEBIT', 500, 'TRY', now()),
       ('jrn_bad', ${merchantId}, 'pay_bad', 'platform:platform:platform_commission', 'platform',
        'platform', 'platform_commission', 'CREDIT', 499, 'TRY', now())`.execute(tx)
    const inside = await legsForPayment(tx, merchantId, 'pay_bad')
    assert.equal(inside.length, 2, 'the statements themselves were accepted')
  })
  await assert.rejects(unbalanced, /unbalanced: debits 500, credits 499/)
  assert.equal(await countEntries(deps, 'capture:pay_bad'), 0)

  // An entry with no legs at all.
  await assert.rejects(
    run(deps, async (tx) => {
      await sql`insert into ledger_entries (id, merchant_id, kind, reference, payment_id, created_at)
        values ('jrn_empty', ${merchantId}, 'settlement', 'settlement:empty', null, now())`.execute(
        tx,
      )
    }),
    /has 0 legs/,
  )

  // A leg appended later to an entry that was committed balanced.
  await run(deps, (tx) =>
    postCapture(tx, {
      merchantId,
      paymentId: 'pay_ok',
      amount: 1000,
      commission: 0,
      shares: [{ ownerType: 'merchant', ownerId: merchantId, grossMinor: 1000 }],
      at: AT,
    }),
  )
  const entry = await deps.db
    .selectFrom('ledger_entries')
    .select('id')
    .where('reference', '=', 'capture:pay_ok')
    .executeTakeFirstOrThrow()
  await assert.rejects(
    run(deps, async (tx) => {
      await sql`insert into ledger_legs (entry_id, merchant_id, payment_id, account_id,
          owner_type, owner_id, account_type, direction, amount, currency, created_at)
        values (${entry.id}, ${merchantId}, 'pay_ok', 'platform:platform:buyer_pending',
          'platform', 'platform', 'buyer_pending', 'DEBIT', 1, 'TRY', now())`.execute(tx)
    }),
    /unbalanced: debits 1001, credits 1000/,
  )
  assert.deepEqual(await checkLedger(deps.db), { ok: true, problems: [] })
})

test('a posting cannot land on another merchant’s account', async (t) => {
  const { deps, merchantId, subId, otherMerchant } = await setup(t)
  const other = await otherMerchant()
  // The submerchant's reserve account now belongs to `merchantId`'s tenancy.
  await run(deps, (tx) => postCapture(tx, splitPayment(merchantId, subId, 'pay_a')))
  const capture = (tenant: string, share: Share) =>
    run(deps, (tx) =>
      postCapture(tx, {
        merchantId: tenant,
        paymentId: 'pay_b',
        amount: 1000,
        commission: 0,
        shares: [share],
        at: AT,
      }),
    )
  // Caught by the deferred trigger at COMMIT (the account exists under another tenant).
  await assert.rejects(
    capture(other, { ownerType: 'submerchant', ownerId: subId, grossMinor: 1000 }),
    /posts to another merchant's account/,
  )
  // Caught before writing: a merchant owner is its own tenant.
  await assert.rejects(
    capture(merchantId, { ownerType: 'merchant', ownerId: other, grossMinor: 1000 }),
    /posted under tenant/,
  )
  assert.equal(await countEntries(deps, 'capture:pay_b'), 0)
})

test('posted legs and entries cannot be updated or deleted', async (t) => {
  const { deps, merchantId, subId } = await setup(t)
  await run(deps, (tx) => postCapture(tx, splitPayment(merchantId, subId, 'pay_imm')))
  const attempts = [
    sql`update ledger_legs set amount = amount + 1 where payment_id = 'pay_imm'`,
    sql`delete from ledger_legs where payment_id = 'pay_imm'`,
    sql`update ledger_entries set reference = 'x' where payment_id = 'pay_imm'`,
    sql`delete from ledger_entries where payment_id = 'pay_imm'`,
    sql`update ledger_accounts set merchant_id = null where owner_id = ${subId}`,
    sql`truncate ledger_legs`,
  ]
  for (const statement of attempts) {
    await assert.rejects(
      run(deps, (tx) => statement.execute(tx)),
      /append-only/,
    )
  }
  assert.equal((await legsForPayment(deps.db, merchantId, 'pay_imm')).length, 4)
})

test('balances after capture, settlement, refunds, chargeback and its reversal', async (t) => {
  const { deps, merchantId, subId } = await setup(t)
  const payment = splitPayment(merchantId, subId, 'pay_flow')
  await run(deps, (tx) => postCapture(tx, payment))
  // Nets: parent 6808, sub 2918. The parent's reserve settles in part.
  await run(deps, (tx) =>
    postSettlement(tx, {
      merchantId,
      ownerType: 'merchant',
      ownerId: merchantId,
      amount: 6000,
      reference: `${merchantId}:2025-01-02`,
      at: AT,
    }),
  )
  // Refund 5000: commission back halfUp(274 × 5000 / 10000) = 137; owners give back 4863
  // apportioned over nets 6808:2918 → 3404.2 / 1458.8 → 3404 / 1459.
  const c1 = commissionRefundFor(10_000, 274, 0, 5000, 0)
  assert.equal(c1, 137)
  const refund = {
    merchantId,
    paymentId: 'pay_flow',
    paymentAmount: 10_000,
    paymentCommission: 274,
    shares: payment.shares,
    at: AT,
  }
  await run(deps, (tx) =>
    postRefund(tx, {
      ...refund,
      refundId: 'rfn_1',
      amount: 5000,
      commissionRefund: c1,
      previousRefundedMinor: 0,
      previousCommissionRefundedMinor: 0,
    }),
  )
  const refundLegs = (await legsForPayment(deps.db, merchantId, 'pay_flow')).slice(4)
  // The parent's reserve holds 808, so the rest of its 3404 comes from available.
  assert.deepEqual(refundLegs, [
    leg('merchant', merchantId, 'merchant_reserve', 'DEBIT', 808),
    leg('merchant', merchantId, 'merchant_available', 'DEBIT', 3404 - 808),
    leg('submerchant', subId, 'merchant_reserve', 'DEBIT', 1459),
    leg('platform', 'platform', 'platform_commission', 'DEBIT', 137),
    leg('platform', 'platform', 'buyer_pending', 'CREDIT', 5000),
  ])
  // A retry of the same refund posts nothing.
  await run(deps, (tx) =>
    postRefund(tx, {
      ...refund,
      refundId: 'rfn_1',
      amount: 5000,
      commissionRefund: c1,
      previousRefundedMinor: 0,
      previousCommissionRefundedMinor: 0,
    }),
  )
  assert.equal(await countEntries(deps, 'refund:rfn_1'), 1)

  // Chargeback 2000 by gross 7:3 → 1400 / 600.
  await run(deps, (tx) =>
    postChargeback(tx, {
      merchantId,
      paymentId: 'pay_flow',
      chargebackId: 'cbk_1',
      amount: 2000,
      previousChargedBackMinor: 0,
      paymentAmount: 10_000,
      shares: payment.shares,
      at: AT,
    }),
  )
  assert.deepEqual(await balancesFor(deps.db, merchantId), [
    balance('merchant', merchantId, 0, 6000 - 2596 - 1400, 0),
    balance('submerchant', subId, 2918 - 1459 - 600, 0, 0),
  ])
  await run(deps, (tx) => postChargebackReversal(tx, { merchantId, chargebackId: 'cbk_1', at: AT }))
  await run(deps, (tx) => postChargebackReversal(tx, { merchantId, chargebackId: 'cbk_1', at: AT }))
  assert.equal(await countEntries(deps, 'chargeback_reversal:cbk_1'), 1)
  const afterReversal = [
    balance('merchant', merchantId, 0, 6000 - 2596, 0),
    balance('submerchant', subId, 2918 - 1459, 0, 0),
  ]
  assert.deepEqual(await balancesFor(deps.db, merchantId), afterReversal)

  // Refund the rest: the whole commission and every net credit come back exactly.
  const c2 = commissionRefundFor(10_000, 274, 5000, 5000, c1)
  assert.equal(c1 + c2, 274)
  await run(deps, (tx) =>
    postRefund(tx, {
      ...refund,
      refundId: 'rfn_2',
      amount: 5000,
      commissionRefund: c2,
      previousRefundedMinor: 5000,
      previousCommissionRefundedMinor: c1,
    }),
  )
  const final = await balancesFor(deps.db, merchantId)
  for (const b of final) assert.equal(b.reserveMinor + b.availableMinor, 0)
  const legs = await legsForPayment(deps.db, merchantId, 'pay_flow')
  const net = (accountType: string) =>
    legs
      .filter((l) => l.accountType === accountType)
      .reduce((s, l) => s + (l.direction === 'CREDIT' ? l.amount : -l.amount), 0)
  assert.equal(net('platform_commission'), 0)
  assert.equal(net('buyer_pending'), 0)
  assert.deepEqual(await checkLedger(deps.db), { ok: true, problems: [] })
})

test('payouts: available → clearing → bank, or back to available; never below zero', async (t) => {
  const { deps, merchantId, subId } = await setup(t)
  await run(deps, (tx) => postCapture(tx, splitPayment(merchantId, subId, 'pay_po')))
  await run(deps, (tx) =>
    postSettlement(tx, {
      merchantId,
      ownerType: 'submerchant',
      ownerId: subId,
      amount: 2918,
      reference: `${subId}:2025-01-02`,
      at: AT,
    }),
  )
  const payout = (payoutId: string, amount: number) =>
    run(deps, (tx) =>
      postPayoutCreated(tx, {
        merchantId,
        ownerType: 'submerchant',
        ownerId: subId,
        payoutId,
        amount,
        at: AT,
      }),
    )
  await assert.rejects(payout('po_big', 2919), (e: unknown) => {
    return e instanceof AppError && e.code === 'SVC-PAY-3502' && e.status === 409
  })
  await payout('po_1', 2000)
  await payout('po_1', 2000) // a retry after creation is a no-op, not a second debit
  assert.deepEqual(
    await ownerBalance(deps.db, merchantId, 'submerchant', subId),
    balance('submerchant', subId, 0, 918, 2000),
  )
  await assert.rejects(payout('po_2', 919), /available balance/)
  await payout('po_2', 918)
  await run(deps, (tx) => postPayoutPaid(tx, { merchantId, payoutId: 'po_1', at: AT }))
  await run(deps, (tx) => postPayoutFailed(tx, { merchantId, payoutId: 'po_2', at: AT }))
  await run(deps, (tx) => postPayoutFailed(tx, { merchantId, payoutId: 'po_2', at: AT }))
  await assert.rejects(
    run(deps, (tx) => postPayoutPaid(tx, { merchantId, payoutId: 'po_2', at: AT })),
    /already payout_failed/,
  )
  assert.deepEqual(
    await ownerBalance(deps.db, merchantId, 'submerchant', subId),
    balance('submerchant', subId, 0, 918, 0),
  )
  assert.deepEqual(await checkLedger(deps.db), { ok: true, problems: [] })
})

test('concurrent refunds of one owner never both spend its reserve', async (t) => {
  const { deps, merchantId } = await setup(t)
  const shares: Share[] = [{ ownerType: 'merchant', ownerId: merchantId, grossMinor: 1000 }]
  for (const paymentId of ['pay_r1', 'pay_r2']) {
    await run(deps, (tx) =>
      postCapture(tx, { merchantId, paymentId, amount: 1000, commission: 0, shares, at: AT }),
    )
  }
  await run(deps, (tx) =>
    postSettlement(tx, {
      merchantId,
      ownerType: 'merchant',
      ownerId: merchantId,
      amount: 1500,
      reference: 'r',
      at: AT,
    }),
  )
  // Reserve 500, available 1500. Each full refund wants 1000; the owner lock makes the second
  // one see what the first took, so the reserve ends at exactly zero, never below.
  await Promise.all(
    ['pay_r1', 'pay_r2'].map((paymentId) =>
      run(deps, (tx) =>
        postRefund(tx, {
          merchantId,
          paymentId,
          refundId: `rfn_${paymentId}`,
          amount: 1000,
          commissionRefund: 0,
          previousRefundedMinor: 0,
          previousCommissionRefundedMinor: 0,
          paymentAmount: 1000,
          paymentCommission: 0,
          shares,
          at: AT,
        }),
      ),
    ),
  )
  assert.deepEqual(await balancesFor(deps.db, merchantId), [
    balance('merchant', merchantId, 0, 0, 0),
  ])
})

test('random payments through the database keep every owner balance exact', async (t) => {
  const { deps, merchantId } = await setup(t)
  let n = 0
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 100, max: 10_000_000_000 }).chain((amount) =>
        fc.record({
          amount: fc.constant(amount),
          commission: fc.integer({ min: 0, max: amount }),
          splitPpm: fc.array(fc.integer({ min: 0, max: 200_000 }), { maxLength: 5 }),
          refundPpm: fc.array(fc.integer({ min: 1, max: 600_000 }), { maxLength: 4 }),
          full: fc.boolean(),
        }),
      ),
      async ({ amount, commission, splitPpm, refundPpm, full }) => {
        n++
        const paymentId = `pay_prop_${n}`
        const subs = splitPpm.map((ppm, i) => ({
          ownerType: 'submerchant' as const,
          ownerId: `sub_prop_${n}_${i}`,
          grossMinor: Math.floor((amount * ppm) / 1_000_000),
        }))
        const parentGross = amount - subs.reduce((a, s) => a + s.grossMinor, 0)
        const shares: Share[] = [
          { ownerType: 'merchant', ownerId: merchantId, grossMinor: parentGross },
          ...subs,
        ]
        const before = await balancesFor(deps.db, merchantId)
        await run(deps, (tx) =>
          postCapture(tx, { merchantId, paymentId, amount, commission, shares, at: AT }),
        )
        const refunds: number[] = []
        let left = amount
        for (const ppm of refundPpm) {
          const r = Math.min(left, Math.max(1, Math.floor((amount * ppm) / 1_000_000)))
          if (r > 0) refunds.push(r)
          left -= r
        }
        if (full && left > 0) refunds.push(left)
        let refunded = 0
        let commissionRefunded = 0
        for (const [i, r] of refunds.entries()) {
          const c = commissionRefundFor(amount, commission, refunded, r, commissionRefunded)
          await run(deps, (tx) =>
            postRefund(tx, {
              merchantId,
              paymentId,
              refundId: `rfn_prop_${n}_${i}`,
              amount: r,
              commissionRefund: c,
              previousRefundedMinor: refunded,
              previousCommissionRefundedMinor: commissionRefunded,
              paymentAmount: amount,
              paymentCommission: commission,
              shares,
              at: AT,
            }),
          )
          refunded += r
          commissionRefunded += c
        }
        const after = await balancesFor(deps.db, merchantId)
        const held = (list: typeof after, ownerId: string) => {
          const b = list.find((x) => x.ownerId === ownerId)
          return b ? b.reserveMinor + b.availableMinor : 0
        }
        for (const owner of apportionCapture(amount, commission, shares)) {
          const gained = held(after, owner.ownerId) - held(before, owner.ownerId)
          assert.ok(gained >= 0 && gained <= owner.netMinor)
          if (refunded === amount) assert.equal(gained, 0)
        }
        const legs = await legsForPayment(deps.db, merchantId, paymentId)
        const debits = legs.filter((l) => l.direction === 'DEBIT').reduce((a, l) => a + l.amount, 0)
        const credits = legs
          .filter((l) => l.direction === 'CREDIT')
          .reduce((a, l) => a + l.amount, 0)
        assert.equal(debits, credits)
      },
    ),
    { numRuns: 12 },
  )
  assert.deepEqual(await checkLedger(deps.db), { ok: true, problems: [] })
})

test('checkLedger reports entries and legs that bypassed the database checks', async (t) => {
  // Its own database: the damage it injects must not leak into other tests' ledger checks.
  const { deps, merchantId } = await setup(t, { freshDatabase: true })
  assert.deepEqual(await checkLedger(deps.db), { ok: true, problems: [] })
  await run(deps, async (tx) => {
    // Test-only damage: `session_replication_role = replica` (superuser) switches off
    // triggers and foreign keys for this transaction alone, standing in for a restored
    // backup or a hand edit that bypassed them. These raw inserts are deliberately invalid.
    await sql`set local session_replication_role = replica`.execute(tx)
    await sql`insert into ledger_entries (id, merchant_id, kind, reference, payment_id, created_at)
      values ('jrn_broken', ${merchantId}, 'capture', 'capture:pay_broken', 'pay_broken', now())`.execute(
      tx,
    )
    await sql`insert into ledger_legs (entry_id, merchant_id, payment_id, account_id, owner_type,
        owner_id, account_type, direction, amount, currency, created_at)
      values ('jrn_broken', ${merchantId}, 'pay_broken', 'platform:platform:buyer_pending',
        'platform', 'platform', 'buyer_pending', 'DEBIT', 700, 'TRY', now()),
       ('jrn_missing', ${merchantId}, null, 'merchant:nobody:merchant_reserve', 'merchant',
        'nobody', 'merchant_reserve', 'CREDIT', 5, 'TRY', now())`.execute(tx)
  })
  const report = await checkLedger(deps.db)
  assert.equal(report.ok, false)
  assert.deepEqual(report.problems.slice(0, 2), [
    'entry jrn_broken (capture): 1 legs, debits 700, credits 0',
    'ledger total TRY: debits 700 ≠ credits 5',
  ])
  assert.match(
    report.problems[2] ?? '',
    /entry jrn_missing: its entry does not exist; its account does not exist/,
  )
  assert.equal(report.problems.length, 3)
})

function leg(
  ownerType: 'platform' | 'merchant' | 'submerchant',
  ownerId: string,
  accountType: string,
  direction: 'DEBIT' | 'CREDIT',
  amount: number,
) {
  return { accountType, direction, amount, currency: 'TRY', ownerType, ownerId }
}

function balance(
  ownerType: 'merchant' | 'submerchant',
  ownerId: string,
  reserveMinor: number,
  availableMinor: number,
  payoutPendingMinor: number,
) {
  return { ownerType, ownerId, reserveMinor, availableMinor, payoutPendingMinor }
}
