// Goal: the checkers that end the reliability tests — the books' invariants (`kurus
// check-ledger`) and the history checker — pass what is right and report planted damage, so a
// green suite means something. Method: real payments on PostgreSQL, then damage written with
// raw SQL behind the service's back (the CLI runs as operators run it), and a real recorded
// history with forged operations added.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { sql } from 'kysely'
import { auditBooks } from '../../src/modules/audit/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { MASTER_KEY } from './_harness.ts'
import { checkHistory, History, poke, runWorkload, type Op, type World } from './_workload.ts'

function checkLedgerCli(databaseUrl: string) {
  const result = spawnSync(process.execPath, ['src/main.ts', 'check-ledger'], {
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'] ?? '',
      DATABASE_URL: databaseUrl,
      KURUS_DATA_DIR: mkdtempSync(join(tmpdir(), 'kurus-check-')),
      KURUS_MASTER_KEY: MASTER_KEY,
      KURUS_OPERATOR_TOKEN: 'check-ledger-operator-token',
    },
  })
  return { code: result.status, out: result.stdout + result.stderr }
}

test('the checker passes clean books and reports planted damage; kurus check-ledger exits 1', async (t) => {
  const h = await startTestApp(t, { freshDatabase: true })
  const url = h.database.url
  assert.ok(url, 'PostgreSQL only')
  const m = await h.newMerchant()
  const a = await charge(m.client, CARDS.frictionless, 10_000)
  const b = await charge(m.client, CARDS.frictionless, 8_000)
  const refund = await m.client.request<{ lastRefund: { refundId: string } }>(
    'POST',
    `/v1/payments/${b.res.body.paymentId}/refund`,
    { body: { amount: 3_000 } },
  )
  assert.equal(refund.status, 200)

  const clean = await auditBooks(h.deps.db)
  assert.deepEqual(clean.problems, [])
  assert.equal(clean.payments, 2)
  assert.equal(clean.refunds, 1)
  const cli = checkLedgerCli(url)
  assert.equal(cli.code, 0, cli.out)
  assert.match(cli.out, /checked 2 payment\(s\), 1 refund\(s\) and the ledger: ok/)

  // A second payment.captured for one payment (a duplicated outbox write).
  await sql`insert into events (id, merchant_id, store_id, type, resource_type, resource_id,
              sequence, data, callback_url, created_at)
            select 'evt_planted', merchant_id, store_id, type, resource_type, resource_id,
              sequence + 100, data, callback_url, created_at
            from events where resource_id = ${a.res.body.paymentId} and type = 'payment.captured'`.execute(
    h.deps.db,
  )
  // A refund reservation the refund records don't explain.
  await sql`update payments set refund_reserved_minor = refund_reserved_minor + 100
            where id = ${b.res.body.paymentId}`.execute(h.deps.db)
  // A refund whose refund.completed event was lost.
  await sql`delete from events where resource_id = ${refund.body.lastRefund.refundId}
            and type = 'refund.completed'`.execute(h.deps.db)

  const damaged = await auditBooks(h.deps.db)
  const text = damaged.problems.join('\n')
  assert.equal(damaged.ok, false)
  assert.match(text, new RegExp(`payment ${a.res.body.paymentId} .*payment.captured events is 2`))
  assert.match(
    text,
    new RegExp(`payment ${b.res.body.paymentId} .*refundAmount \\(reserved\\) is 3100`),
  )
  assert.match(text, new RegExp(`payment ${b.res.body.paymentId} .*refundableAmount vs ledger`))
  assert.match(
    text,
    new RegExp(`refund ${refund.body.lastRefund.refundId} \\(completed\\): refund.completed`),
  )
  const failed = checkLedgerCli(url)
  assert.equal(failed.code, 1, failed.out)
  assert.match(failed.out, /problem: payment /)
})

test('the history checker accepts a real history and flags a lost write, a stale read and an impossible balance', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await h.operator<{ submerchantId: string; publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Seller', iban: 'TR330006100519786457841326', holderName: 'Seller Ltd' },
  )
  assert.equal(sub.status, 201)
  const world: World = {
    url: h.url,
    db: h.deps.db,
    merchant: { ...m, dashboard: { email: '', password: '' } },
    sub: { submerchantId: sub.body.submerchantId, client: h.clientFor(sub.body) },
  }
  const history = new History()
  let stopping = false
  const stop = () => stopping
  const load = runWorkload(
    world,
    history,
    {
      seed: 7,
      clients: 3,
      mix: {
        charge: 4,
        capture: 2,
        void: 1,
        refund: 2,
        chargeback: 1,
        readPayment: 3,
        readBalances: 3,
      },
      opDeadlineMs: 5_000,
    },
    stop,
  )
  const reconciling = poke(m.client, stop, 300)
  await delay(4_000)
  stopping = true
  await Promise.all([load, reconciling])
  const clean = await checkHistory(h.deps.db, world, history)
  assert.deepEqual(clean.problems, [])
  assert.ok(clean.balanceReadsChecked > 0, 'some balance reads were checked')

  // A refund acknowledged with an id the books do not have (a lost write).
  const refund = history.ops.find((o) => o.kind === 'refund' && o.outcome === 'ok')
  assert.ok(refund?.response, 'the workload made a refund')
  const lost = structuredClone(refund)
  lost.id = 1_000_000
  lost.response = { ...refund.response, lastRefund: { refundId: 'rfn_lost', status: 'completed' } }
  // Reads that go back in time: `authorized` after the charge was acknowledged captured and
  // after a read already saw it captured.
  const charged = history.ops.find(
    (o) => o.kind === 'charge' && o.outcome === 'ok' && o.response?.['status'] === 'captured',
  )
  assert.ok(charged?.response, 'the workload captured a payment')
  const paymentId = charged.response['paymentId'] as string
  const readOf = (id: number, at: number, status: string): Op => ({
    ...structuredClone(charged),
    id,
    kind: 'readPayment',
    key: null,
    method: 'GET',
    path: `/v1/payments/${paymentId}`,
    body: undefined,
    target: paymentId,
    invokedAt: at,
    completedAt: at + 1,
    response: { id: paymentId, status },
  })
  const seen = readOf(1_000_001, charged.completedAt + 10, 'captured')
  const stale = readOf(1_000_003, charged.completedAt + 20, 'authorized')
  // A balance no serial order of the ledger explains.
  const balance = history.ops.findLast((o) => o.kind === 'readBalances' && o.outcome === 'ok')
  assert.ok(balance?.response)
  const wrong = structuredClone(balance)
  wrong.id = 1_000_002
  const items = wrong.response?.['items'] as { ownerId: string; reserveMinor: number }[]
  const mine = items.find((i) => i.ownerId === m.merchantId)
  assert.ok(mine)
  mine.reserveMinor += 1
  history.ops.push(lost, seen, stale, wrong)

  const text = (await checkHistory(h.deps.db, world, history)).problems.join('\n')
  assert.match(text, /op 1000000 refund .*acknowledged refund does not exist/)
  assert.match(text, /op 1000003 readPayment .*read authorized after an earlier read saw captured/)
  assert.match(
    text,
    /op 1000003 readPayment .*read authorized after charge op \d+ acknowledged captured/,
  )
  assert.match(text, /op 1000002 readBalances .*matches no serial order/)
})
