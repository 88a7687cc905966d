// Goal: crash under load. Charges and refunds with Idempotency-Keys keep coming while the API
// process and, separately, the worker are killed with SIGKILL at random moments several times
// and restarted; the client retries every unacknowledged request with the same key. Every
// 2xx then exists exactly once, no key made two payments or refunds, the acquirer saw at most
// one authorization per attempt, the books balance and every outbox event reached the
// merchant's webhook endpoint at least once.
// Method: real API and worker processes on PostgreSQL, a seeded client workload and kill
// schedule (KURUS_REL_SEED, KURUS_REL_SECONDS, KURUS_REL_KILLS), the history checker.
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

const seed = knob('KURUS_REL_SEED', 0) || randomInt(1, 2 ** 31)
const seconds = knob('KURUS_REL_SECONDS', 10)
const kills = knob('KURUS_REL_KILLS', 3)

test(`crash under load: kill -9 of the API (${kills}×) and the worker, retries with the same keys (seed ${seed})`, async (t) => {
  const db = await createTestDatabase()
  assert.ok(db.url)
  const service = await Service.create({ databaseUrl: db.url, workers: 1 })
  const receiver = await startReceiver()
  t.after(async () => {
    await service.stop()
    await receiver.close()
    await db.drop()
  })
  await service.start()
  const merchant = await newMerchant(service.url, 'Crash')
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
    { seed, clients: 4, mix: { charge: 6, refund: 3, readPayment: 1 }, opDeadlineMs: 20_000 },
    stop,
  )
  const reconciling = poke(merchant.client, stop)

  // The kill schedule: API kills and worker kills at seeded moments through the run.
  const r = rng(seed)
  const schedule = [
    ...Array.from({ length: kills }, () => ({
      at: 1_000 + r.int(seconds * 1_000 - 2_000),
      what: 'api',
    })),
    ...Array.from({ length: Math.max(1, Math.ceil(kills / 2)) }, () => ({
      at: 1_000 + r.int(seconds * 1_000 - 2_000),
      what: 'worker',
    })),
  ].sort((a, b) => a.at - b.at)
  const started = Date.now()
  for (const step of schedule) {
    await delay(Math.max(0, started + step.at - Date.now()))
    if (step.what === 'api') {
      await service.killApi()
      await fastForwardAbandoned(db.handle.db)
      await service.startApi()
    } else {
      await service.killWorker(0)
      await delay(200 + r.int(1_500))
      await service.startWorker(0)
    }
  }
  await delay(Math.max(0, started + seconds * 1_000 - Date.now()))
  stopping = true
  await Promise.all([load, reconciling])

  const open = await finish(service, world, history, { webhooks: true })
  const file = history.save(service.dir, `history-crash-${seed}.json`)
  const context = `replay: KURUS_REL_SEED=${seed} KURUS_REL_SECONDS=${seconds} KURUS_REL_KILLS=${kills} npm run test:reliability -- test/reliability/crash.rel.ts\nhistory ${file}; logs ${service.dir}\n${service.events.join('\n')}`
  assert.deepEqual(open, [], `work left open after draining (${context})`)
  const report = await checkHistory(db.handle.db, world, history)
  assert.deepEqual(report.problems, [], context)
  assert.ok(report.acknowledged > 20, `only ${report.acknowledged} operations acknowledged`)
  assert.deepEqual(
    await undelivered(db.handle.db, merchant.merchantId, receiver.ids),
    [],
    `events never delivered (${context})`,
  )
  assert.deepEqual(service.crashes(), [], 'a process crashed by itself')
  assert.equal(service.events.filter((e) => e.includes('api kill -9')).length, kills + 1)
  await assertInvariants(db.handle.db, context)
  t.diagnostic(
    `seed ${seed}: ${history.ops.length} operations, ${report.acknowledged} acknowledged at once, ` +
      `${report.unacknowledged} retried after the faults; ${receiver.ids.length} webhooks received`,
  )
})
