// Goal: when PostgreSQL goes away (stopped with -m immediate, and restarted with -m immediate
// under load) the service fails fast instead of hanging, /readyz says 503 for the outage and
// 200 after, and the same API and worker processes carry on once it is back, with every
// acknowledged request intact and the books balanced.
// Method: a private cluster of the test's own (initdb into a temp dir, pg_ctl on a spare
// port; never the shared server), the service as real processes, a client under load.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import type { Database } from '../../src/database.ts'
import { connectDatabase } from '../../src/platform/db/connect.ts'
import { PrivateCluster } from '../helpers/pg-cluster.ts'
import {
  assertInvariants,
  CARDS,
  drain,
  fastForwardAbandoned,
  hung,
  newKey,
  newMerchant,
  readyz,
  send,
  Service,
  type Merchant,
  type Outcome,
} from './_harness.ts'
import { freePort } from '../helpers/ports.ts'

interface Charge {
  key: string
  body: Record<string, unknown>
  outcome?: Outcome
  ms?: number
}

/** One charge attempt (no retry): how it ended and how long it took. */
async function chargeOnce(m: Merchant, charge: Charge): Promise<void> {
  const started = Date.now()
  charge.outcome = await send(m.client, 'POST', '/v1/payments/card', charge, { deadlineMs: 0 })
  charge.ms = Date.now() - started
}

test('PostgreSQL stopped and restarted with -m immediate: fail fast, /readyz follows, no process restart', async (t) => {
  const cluster = new PrivateCluster(await freePort())
  t.after(() => cluster.remove())
  await cluster.init()
  const service = await Service.create({ databaseUrl: cluster.url, workers: 1 })
  t.after(() => service.stop())
  await service.start()
  const apiPid = service.api?.pid
  const workerPid = service.workers[0]?.pid
  const m = await newMerchant(service.url)

  // Sessions and tokens for everything the load will charge, made while the database is up.
  const charges: Charge[] = []
  const token = await send<{ cardToken: string }>(m.client, 'POST', '/v1/cards/tokens', {
    body: {
      cardNumber: CARDS.frictionless,
      expMonth: 12,
      expYear: 2030,
      cvc: '123',
      holderName: 'Ali Veli',
    },
  })
  assert.equal(token.kind, 'ok')
  for (let i = 0; i < 60; i++) {
    const transactionId = `pg-restart-${i}-${newKey()}`
    const session = await send(m.client, 'POST', '/v1/payments/sessions', {
      body: {
        transactionId,
        amount: 1_000 + i,
        currency: 'TRY',
        returnUrl: 'https://shop.example/r',
      },
    })
    assert.equal(session.kind, 'ok', JSON.stringify(session))
    charges.push({
      key: newKey(),
      body: { transactionId, amount: 1_000 + i, currency: 'TRY', cardToken: token.body.cardToken },
    })
  }
  const hungBefore = hung.count
  let next = 0
  const load = async (until: () => boolean) => {
    while (!until() && next < charges.length) {
      const c = charges[next++]
      if (c) await chargeOnce(m, c)
    }
  }

  // 1. Under load, stop the server the hard way and keep it down for a few seconds.
  let phase = 1
  const loaders = [1, 2, 3].map(() => load(() => phase > 1))
  await delay(300)
  cluster.stop('immediate')
  const outage: Charge[] = []
  let sawNotReady = false
  for (let i = 0; i < 40 && !sawNotReady; i++) {
    sawNotReady = (await readyz(service.port)) === 503
    if (!sawNotReady) await delay(250)
  }
  assert.ok(sawNotReady, '/readyz must answer 503 while the database is down')
  for (let i = 0; i < 3; i++) {
    const c = charges[next++]
    assert.ok(c)
    await chargeOnce(m, c)
    outage.push(c)
  }
  for (const c of outage) {
    assert.equal(c.outcome?.kind, 'info', `during the outage: ${JSON.stringify(c.outcome)}`)
    // A 5xx (fast failure), never a hang: the client aborts at REQUEST_TIMEOUT_MS.
    assert.ok((c.outcome?.status ?? 0) >= 500, JSON.stringify(c.outcome))
  }
  cluster.start()
  let ready = false
  for (let i = 0; i < 120 && !ready; i++) {
    ready = (await readyz(service.port)) === 200
    if (!ready) await delay(250)
  }
  assert.ok(ready, '/readyz must answer 200 again once the database is back')
  phase = 2
  await Promise.all(loaders)

  // 2. An immediate restart in the middle of load: in-flight transactions die with it.
  phase = 2
  const more = [1, 2, 3].map(() => load(() => phase > 2))
  await delay(300)
  cluster.restart()
  phase = 3
  await Promise.all(more)

  // The same processes, reconnected: nobody restarted the service.
  assert.deepEqual(service.crashes(), [], 'a service process crashed')
  assert.equal(service.api?.exitCode, null)
  assert.equal(service.api?.pid, apiPid)
  assert.equal(service.workers[0]?.exitCode, null)
  assert.equal(service.workers[0]?.pid, workerPid)
  assert.equal(hung.count, hungBefore, 'no request may hang past its timeout')

  // Every attempted charge retried with its key: exactly one answer each, and all captured.
  const db = await connectDatabase<Database>({ databaseUrl: cluster.url, poolSize: 2 })
  t.after(() => db.close())
  // The client is quiescent: what a dead transaction left behind is abandoned for certain.
  await fastForwardAbandoned(db.db)
  const attempted = charges.filter((c) => c.outcome)
  assert.ok(attempted.length >= 10, `only ${attempted.length} charges ran`)
  for (const c of attempted) {
    let res = await send(m.client, 'POST', '/v1/payments/card', c, {
      untilFinal: true,
      deadlineMs: 3_000,
    })
    for (let i = 0; i < 5 && res.kind === 'info'; i++) {
      // Pending from a dead transaction: the reconciler settles it once it is abandoned.
      await drain(db.db, m.client, { rounds: 1 })
      res = await send(m.client, 'POST', '/v1/payments/card', c, {
        untilFinal: true,
        deadlineMs: 3_000,
      })
    }
    assert.equal(res.kind, 'ok', JSON.stringify(res))
    if (c.outcome?.kind === 'ok') {
      assert.equal(
        res.body['paymentId'],
        c.outcome.body['paymentId'],
        'an acknowledged charge stays the same',
      )
    }
  }
  await assertInvariants(db.db, service.events.join('\n'))
})
