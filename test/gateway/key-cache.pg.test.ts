// Goal (issue 29): API keys and merchant rows are cached in each API process, and a revoke,
// roll or KYC change made through one process applies in every other one at once: the change
// NOTIFYs at commit and each process LISTENs (src/modules/merchants/merchants.cache.ts). A
// process whose LISTEN connection is lost reconnects and is in step again.
// Method: PostgreSQL — two apps over the same database through two separate connection pools
// (as two processes would be: separate caches), each with DATABASE_URL so that it listens;
// the key and merchant are cached in the second before the first changes them. PGlite is one
// process: the same changes through one app.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { connectDatabase } from '../../src/platform/db/connect.ts'
import type { Database } from '../../src/database.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { testBackend } from '../helpers/db.ts'
import { CARDS, charge, openSession, tokenize } from '../helpers/payments.ts'

/**
 * A NOTIFY reaches the other process moments after the commit, on its own connection: the
 * test waits for it (HEARD_WITHIN_MS), far below the 5 minutes a missed one would leave a
 * cached entry in place — so a change that is never heard still fails the test.
 */
const HEARD_WITHIN_MS = 5_000
async function heard(check: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + HEARD_WITHIN_MS
  while (Date.now() < until) {
    if (await check()) return true
    await delay(50)
  }
  return check()
}

async function twoProcesses(t: Parameters<typeof startTestApp>[0]): Promise<[TestApp, TestApp]> {
  const first = await startTestApp(t, { freshDatabase: true })
  const url = first.database.url
  if (testBackend() === 'pglite' || !url) return [first, first]
  const env = { DATABASE_URL: url }
  const a = await startTestApp(t, { env, database: first.database })
  const handle = await connectDatabase<Database>({ databaseUrl: url, poolSize: 4 })
  t.after(() => handle.close())
  const b = await startTestApp(t, {
    env,
    database: { handle, url, drop: () => handle.close() },
  })
  return [a, b]
}

test('a revoke, a roll and a KYC change made in one process apply at once in another', async (t) => {
  const [a, b] = await twoProcesses(t)
  const m = await a.newMerchant()
  const viaB = b.clientFor(m)
  // Cached in b: the key (whoami) and the merchant (a charge reads its pricing).
  assert.equal((await viaB.whoami()).merchantId, m.merchantId)
  assert.equal((await charge(viaB, CARDS.frictionless, 5_000)).res.status, 201)

  // A session and a card made before the KYC decision, charged after it.
  const { transactionId } = await openSession(viaB, 5_000)
  const cardToken = await tokenize(viaB, CARDS.frictionless)
  const kyc = await a.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, {
    status: 'rejected',
  })
  assert.equal(kyc.status, 200)
  assert.ok(
    await heard(
      async () =>
        (await viaB.request<{ status: string }>('GET', '/v1/kyc/status')).body.status ===
        'rejected',
    ),
    'the KYC change is heard by the other process',
  )
  const refused = await viaB.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId, amount: 5_000, currency: 'TRY', cardToken },
  })
  assert.equal(refused.status, 403)
  assert.equal(refused.body.code, 'SVC-KYC-3101')

  const rolled = await a.operator<{ publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/roll`,
  )
  assert.equal(rolled.status, 201)
  const fresh = b.clientFor(rolled.body)
  assert.equal((await fresh.whoami()).merchantId, m.merchantId)
  const revoked = await a.operator(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/api-keys/${(await fresh.whoami()).apiKeyId}/revoke`,
  )
  assert.equal(revoked.status, 204)
  assert.ok(await heard(async () => (await fresh.request('GET', '/v1/auth/whoami')).status === 401))
  const after = await fresh.request<{ code: string }>('GET', '/v1/auth/whoami')
  assert.equal(after.status, 401)
  assert.equal(after.body.code, 'SVC-GW-1003')
})

test('a process whose LISTEN connection is lost reconnects and hears changes again', async (t) => {
  if (testBackend() === 'pglite') {
    // No LISTEN on PGlite: one process, whose own changes clear its caches.
    const h = await startTestApp(t)
    const m = await h.newMerchant()
    assert.equal((await m.client.whoami()).merchantId, m.merchantId)
    await h.operator('POST', `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/revoke`)
    assert.equal((await m.client.request('GET', '/v1/auth/whoami')).status, 401)
    return
  }
  const [a, b] = await twoProcesses(t)
  const m = await a.newMerchant()
  const viaB = b.clientFor(m)
  assert.equal((await viaB.whoami()).merchantId, m.merchantId)
  // Ended before the test is: the fresh database is dropped (with force) after it.
  const admin = new pg.Client({ connectionString: a.database.url })
  await admin.connect()
  const kill = await admin.query(
    `select pg_terminate_backend(pid) from pg_stat_activity
     where application_name = 'kurus-listen' and datname = current_database()`,
  )
  assert.equal(kill.rowCount, 2)
  // Both listeners come back (the retry is 1 s).
  for (let i = 0; i < 100; i++) {
    const back = await admin.query(
      `select count(*)::int as n from pg_stat_activity
       where application_name = 'kurus-listen' and datname = current_database()`,
    )
    if ((back.rows[0] as { n: number }).n === 2) break
    await delay(100)
  }
  await admin.end()
  // LISTEN is issued right after the connection: wait for it, then check it is heard.
  assert.ok(
    await heard(() => Promise.resolve(b.logs.some((l) => l.includes('LISTEN connection back')))),
  )
  await a.operator('POST', `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/revoke`)
  assert.ok(await heard(async () => (await viaB.request('GET', '/v1/auth/whoami')).status === 401))
})
