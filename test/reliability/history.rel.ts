// Goal: a history-checked run (after Jepsen's bank workload and TigerBeetle's VOPR): a seeded
// random workload — sessions, charges, captures, voids, refunds, chargebacks, payouts, reads —
// against two API processes and two workers over one database, with seeded faults (fail
// points that throw or SIGKILL inside charges and refunds, kill -9 of an API process, of the
// whole API, of a worker). Every acknowledged operation is present exactly once, nothing
// refused left a trace, reads never go back in time, balances read match some serial order.
// Method: real processes on PostgreSQL; the full client history is recorded and checked
// afterwards. Seeds: KURUS_REL_SEED=N replays one; otherwise KURUS_REL_SEEDS random seeds.
import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { createTestDatabase } from '../helpers/db.ts'
import {
  assertInvariants,
  fastForwardAbandoned,
  knob,
  newMerchant,
  rng,
  Service,
  startReceiver,
  subscribe,
} from './_harness.ts'
import {
  checkHistory,
  finish,
  History,
  newSubmerchant,
  poke,
  runWorkload,
  undelivered,
  type World,
} from './_workload.ts'

const fixed = knob('KURUS_REL_SEED', 0)
const seeds = fixed
  ? [fixed]
  : Array.from({ length: knob('KURUS_REL_SEEDS', 2) }, () => randomInt(1, 2 ** 31))
const seconds = knob('KURUS_REL_SECONDS', 10)
const clients = knob('KURUS_REL_CLIENTS', 4)
// Operation kinds to leave out of the mix, e.g. KURUS_REL_SKIP=payout (comma-separated).
const skip = new Set((process.env['KURUS_REL_SKIP'] ?? '').split(',').filter(Boolean))

/**
 * Fail points in the API processes, seeded: every charge and refund step throws now and then
 * (a 500; the key is released and the retry goes through), and one step, picked by the seed,
 * kills its process (SIGKILL; the cluster's primary forks another).
 */
function failpointsFor(r: ReturnType<typeof rng>): string {
  const steps = [
    'charge.after_intent',
    'charge.after_acquirer',
    'charge.before_commit',
    'refund.after_reserve',
    'refund.after_acquirer',
    'refund.before_commit',
  ]
  const exit = r.pick(steps)
  return steps
    .map((s) =>
      s === exit ? `${s}:exit@0.03` : `${s}:throw@${(0.02 + r.int(4) / 100).toFixed(2)}`,
    )
    .join(',')
}

for (const seed of seeds) {
  test(`history-checked run with seeded faults, seed ${seed} (${seconds} s)`, async (t) => {
    const replay = `replay: KURUS_REL_SEED=${seed} KURUS_REL_SECONDS=${seconds} npm run test:reliability -- test/reliability/history.rel.ts`
    const r = rng(seed)
    const faultEnv = { KURUS_FAILPOINTS: failpointsFor(r), KURUS_FAILPOINTS_SEED: String(seed) }
    const db = await createTestDatabase()
    assert.ok(db.url)
    const service = await Service.create({ databaseUrl: db.url, apiProcesses: 2, workers: 2 })
    const receiver = await startReceiver()
    t.after(async () => {
      await service.stop()
      await receiver.close()
      await db.drop()
    })
    await Promise.all([service.startApi(faultEnv), service.startWorker(0), service.startWorker(1)])
    const merchant = await newMerchant(service.url, `History ${seed}`)
    await subscribe(service.url, merchant, receiver.url)
    const world: World = {
      url: service.url,
      db: db.handle.db,
      merchant,
      sub: await newSubmerchant(service.url, merchant.merchantId),
    }
    const history = new History()
    let stopping = false
    const stop = () => stopping
    const load = runWorkload(
      world,
      history,
      {
        seed,
        clients,
        mix: Object.fromEntries(
          Object.entries({
            charge: 5,
            capture: 2,
            void: 1,
            refund: 3,
            chargeback: 1,
            payout: 1,
            readPayment: 2,
            readBalances: 2,
          }).filter(([kind]) => !skip.has(kind)),
        ),
        opDeadlineMs: 6_000,
      },
      stop,
    )
    const reconciling = poke(merchant.client, stop, 700)

    // Process faults at seeded moments, one every few seconds.
    const started = Date.now()
    for (let at = 1_500 + r.int(2_000); at < seconds * 1_000 - 1_000; at += 2_000 + r.int(3_000)) {
      await delay(Math.max(0, started + at - Date.now()))
      const fault = r.pick(['child', 'child', 'api', 'worker'])
      if (fault === 'child') service.killApiChild(r.int(2))
      else if (fault === 'api') {
        await service.killApi()
        await fastForwardAbandoned(db.handle.db)
        await service.startApi(faultEnv)
      } else {
        const i = r.int(2)
        await service.killWorker(i)
        await delay(300 + r.int(1_000))
        await service.startWorker(i)
      }
    }
    await delay(Math.max(0, started + seconds * 1_000 - Date.now()))
    stopping = true
    await Promise.all([load, reconciling])

    const open = await finish(service, world, history, { webhooks: true })
    const file = history.save(service.dir, `history-${seed}.json`)
    const context = `${replay}\nhistory ${file}; logs ${service.dir}\nfail points ${faultEnv.KURUS_FAILPOINTS}\n${service.events.join('\n')}`
    assert.deepEqual(open, [], `work left open after draining\n${context}`)
    const report = await checkHistory(db.handle.db, world, history)
    assert.deepEqual(report.problems, [], context)
    // A floor against a run where nothing happened, not a throughput target: a seed whose
    // fail points exit processes early (seed 1913499321: 14–18 in 10 s) still checks a history.
    assert.ok(
      report.acknowledged >= seconds,
      `only ${report.acknowledged} operations acknowledged in ${seconds} s`,
    )
    assert.deepEqual(
      await undelivered(db.handle.db, merchant.merchantId, receiver.ids),
      [],
      `events never delivered\n${context}`,
    )
    assert.deepEqual(service.crashes(), [], `a process crashed by itself\n${context}`)
    await assertInvariants(db.handle.db, context)
    const kinds = new Map<string, number>()
    for (const op of history.ops) kinds.set(op.kind, (kinds.get(op.kind) ?? 0) + 1)
    t.diagnostic(
      `seed ${seed}: ${history.ops.length} operations (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}), ` +
        `${report.unacknowledged} retried after the faults, balance reads checked ${report.balanceReadsChecked}` +
        `/${report.balanceReadsChecked + report.balanceReadsUnchecked}; ` +
        `${service.events.filter((e) => e.includes('kill')).length} kills`,
    )
  })
}
