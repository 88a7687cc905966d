// Goal (issue 22 §1, against the real process): an overload made of clients that leave —
// after sending their whole charge, on a client timeout, half-way through the body — while
// the database answers slowly, does not leave the process refusing work afterwards. Within a
// second of the overload ending a normal signed charge and a GET succeed on their first try,
// and the in-flight gauge in /metrics returns to 0 at rest.
// Method: `kurus serve` on PostgreSQL with KURUS_INFLIGHT_MAX=6. The test holds a lock on the
// payments table from its own connection, so every charge that gets in waits on the database
// (a slow database, as under a real spike). Waves of real signed charges fill every slot (or,
// while an earlier wave's charges still hold the pool, are shed at once with 503 by the
// bounded connection wait, issue 37) and leave; the lock is released; then the first charge and GET after it must be answered 2xx.
// The in-process variant with a test route is test/platform/load-shedding.test.ts.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { signedHeaders } from '../../sdk/index.ts'
import { createTestDatabase } from '../helpers/db.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import { newMerchant, Service } from './_harness.ts'

const LIMIT = 6

test('an overload of leaving clients on a slow database: the process serves again at once, the gauge returns to 0', async (t) => {
  const db = await createTestDatabase()
  assert.ok(db.url)
  const service = await Service.create({
    databaseUrl: db.url,
    workers: 0,
    env: { KURUS_INFLIGHT_MAX: String(LIMIT) },
  })
  const locker = new pg.Client({ connectionString: db.url })
  t.after(async () => {
    await locker.end().catch(() => undefined)
    await service.stop()
    await db.drop()
  })
  await service.start()
  await locker.connect()
  const m = await newMerchant(service.url, 'Overload')
  const { hostname, port } = new URL(service.url)

  /** A fresh charge body (its own session and token) and its own signature. */
  const chargeRequest = async () => {
    const { transactionId } = await openSession(m.client, 10_000)
    const cardToken = await tokenize(m.client, CARDS.frictionless)
    const body = JSON.stringify({ transactionId, amount: 10_000, currency: 'TRY', cardToken })
    const headers = {
      ...signedHeaders(m, 'POST', '/v1/payments/card', body),
      'content-type': 'application/json',
    }
    return { body, headers }
  }
  const raw = (r: { body: string; headers: Record<string, string> }, sent: string) =>
    `POST /v1/payments/card HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
    `content-length: ${Buffer.byteLength(r.body)}\r\n` +
    Object.entries(r.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    `\r\n${sent}`
  const rawClient = (payload: string) => {
    const socket = connect(Number(port), hostname, () => socket.write(payload))
    socket.on('error', () => undefined)
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    return { leave: () => (socket.destroy(), closed) }
  }
  /** What the aborting clients got, when they got anything before they left. */
  const outcomes: string[] = []
  const abortingClient = (r: { body: string; headers: Record<string, string> }) => {
    const controller = new AbortController()
    const done = fetch(`${service.url}/v1/payments/card`, {
      method: 'POST',
      headers: r.headers,
      body: r.body,
      signal: controller.signal,
    })
      .then(async (res) => void outcomes.push(`${res.status} ${await res.text()}`))
      .catch((e: unknown) => void outcomes.push(String(e)))
    return { leave: () => (controller.abort(), done.then(() => undefined)) }
  }
  const gauge = async () =>
    Number(
      /^kurus_http_inflight_requests (\d+)$/m.exec(
        await (await fetch(`${service.url}/metrics`)).text(),
      )?.[1],
    )
  /**
   * A wave either fills every slot (its charges wait on the slow database) or, when the
   * charges of an earlier wave still hold the pool's connections (they carry on after their
   * clients left), is shed at once by the bounded connection wait: 503 SVC-GW-1005, never a
   * hang. `answered` counts the wave's clients that got an answer before leaving.
   */
  const waitFull = async (name: string, answered: () => string[] = () => []) => {
    for (let i = 0; i < 500; i++) {
      if ((await gauge()) >= LIMIT || answered().length === LIMIT) break
      await delay(10)
    }
    if (answered().length === LIMIT) {
      for (const a of answered()) assert.match(a, /^503 .*SVC-GW-1005/, `${name}: ${a}`)
      return
    }
    assert.equal(
      await gauge(),
      LIMIT,
      `${name}: the wave fills every slot (answers so far: ${outcomes.join(' | ')})`,
    )
    const shed = await m.client.request<{ code: string }>('GET', '/v1/auth/whoami')
    assert.equal(shed.status, 503, `${name}: beyond the limit the process sheds`)
    assert.equal(shed.body.code, 'SVC-GW-1005')
  }

  // Every charge is prepared (session, token, signature) before the database slows down: the
  // charges that get in hold the pool's connections while they wait.
  type Prepared = { body: string; headers: Record<string, string> }
  const prepared: Prepared[][] = []
  for (let w = 0; w < 3; w++) {
    prepared.push(await Promise.all(Array.from({ length: LIMIT }, () => chargeRequest())))
  }
  const fresh = await chargeRequest()

  // The slow database: inserting a payment waits for this lock; reads do not.
  await locker.query('begin')
  await locker.query('lock table payments in share row exclusive mode')
  const waves: [string, (r: Prepared) => { leave(): Promise<void> }][] = [
    ['whole charge sent, then gone', (r) => rawClient(raw(r, r.body))],
    ['client-side timeout', (r) => abortingClient(r)],
    ['half a body, then gone', (r) => rawClient(raw(r, r.body.slice(0, 40)))],
  ]
  for (const [i, [name, make]] of waves.entries()) {
    const before = outcomes.length
    const clients = (prepared[i] ?? []).map(make)
    await waitFull(name, () => outcomes.slice(before))
    await Promise.all(clients.map((c) => c.leave()))
    for (let j = 0; j < 500 && (await gauge()) !== 0; j++) await delay(10)
    assert.equal(await gauge(), 0, `${name}: every slot is back once its client has left`)
  }
  // The overload ends: the database answers again.
  await locker.query('commit')
  const ended = Date.now()
  const paid = await fetch(`${service.url}/v1/payments/card`, {
    method: 'POST',
    headers: fresh.headers,
    body: fresh.body,
  })
  const paidBody = (await paid.json()) as { paymentId: string }
  assert.equal(paid.status, 201, JSON.stringify(paidBody))
  const read = await m.client.request('GET', `/v1/payments/${paidBody.paymentId}`)
  assert.equal(read.status, 200)
  const answeredIn = Date.now() - ended
  t.diagnostic(`first charge and GET after the overload answered in ${answeredIn} ms`)
  // The charges the leaving clients started finish behind them; the gauge is 0 at rest.
  for (let i = 0; i < 500 && (await gauge()) !== 0; i++) await delay(10)
  assert.equal(await gauge(), 0)
})
