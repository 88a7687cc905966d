// Goal: with DATABASE_READ_URL set, list, search and export queries read from the replica while
// reads by id, authentication and money paths stay on the primary; the replica's pool is
// read-only and named; PGlite refuses the setting.
// Method: the "replica" is a second, freshly migrated database that lacks the primary's rows,
// so a list that reads from it comes back empty while the same list on an app without a
// replica, over the same primary, shows the rows.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { loadConfig } from '../../src/config.ts'
import { startTestApp, type TestMerchant } from '../helpers/app.ts'
import { adminUrl, createTestDatabase, testBackend } from '../helpers/db.ts'
import { CARDS, charge } from '../helpers/payments.ts'

interface Page {
  items: unknown[]
  nextCursor: string | null
}

const LISTS = [
  '/v1/transactions',
  '/v1/customers',
  '/v1/events',
  '/v1/transactions/card-access',
  '/v1/payouts',
  '/v1/subscriptions',
  '/v1/invoices',
] as const

async function listSizes(m: TestMerchant): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {}
  for (const path of LISTS) {
    const res = await m.client.request<Page>('GET', path)
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`)
    sizes[path] = res.body.items.length
  }
  return sizes
}

async function exportRowCount(m: TestMerchant): Promise<number> {
  const created = await m.client.request<{ exportId: string }>('POST', '/v1/transactions/exports', {
    body: { format: 'csv' },
  })
  assert.equal(created.status, 202, JSON.stringify(created.body))
  // The build job runs with the deps of the app that reconciles: its replica, if it has one.
  const ran = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(ran.status, 200)
  const done = await m.client.request<{ status: string; rowCount: number }>(
    'GET',
    `/v1/transactions/exports/${created.body.exportId}`,
  )
  assert.equal(done.body.status, 'ready', JSON.stringify(done.body))
  return done.body.rowCount
}

test('PGlite has no read replicas: DATABASE_READ_URL without DATABASE_URL is refused', () => {
  assert.throws(
    () => loadConfig({ DATABASE_READ_URL: 'postgres://replica/kurus' }),
    /DATABASE_READ_URL needs DATABASE_URL/,
  )
  const config = loadConfig({
    DATABASE_URL: 'postgres://primary/kurus',
    DATABASE_READ_URL: 'postgres://replica/kurus',
    KURUS_DATA_DIR: '/nonexistent-test-data-dir',
    KURUS_MASTER_KEY: '07'.repeat(32),
    KURUS_OPERATOR_TOKEN: 'x'.repeat(24),
  })
  assert.equal(config.databaseReadUrl, 'postgres://replica/kurus')
})

test('lists and exports read from DATABASE_READ_URL; reads by id and payments use the primary', async (t) => {
  if (testBackend() === 'pglite') {
    // The app refuses the setting on PGlite rather than silently ignoring it.
    await assert.rejects(
      startTestApp(t, { env: { DATABASE_READ_URL: 'postgres://127.0.0.1:1/replica' } }),
      /DATABASE_READ_URL needs DATABASE_URL/,
    )
    return
  }
  const replica = await createTestDatabase()
  t.after(() => replica.drop())
  const base = await startTestApp(t)
  const m = await base.newMerchant()
  const paid = await charge(m.client, CARDS.frictionless, 12_345)
  assert.equal(paid.res.status, 201, JSON.stringify(paid.res.body))
  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${crypto.randomUUID()}`, name: 'Deniz Kaya' },
  })
  assert.equal(customer.status, 201)

  const withReplica = await startTestApp(t, {
    database: base.database,
    env: { DATABASE_URL: base.database.url ?? '', DATABASE_READ_URL: replica.url ?? '' },
  })
  const viaReplica = { ...m, client: withReplica.clientFor(m) }

  // Without a replica the lists show the primary's rows.
  const onPrimary = await listSizes(m)
  assert.equal(onPrimary['/v1/transactions'], 1)
  assert.equal(onPrimary['/v1/customers'], 1)
  assert.ok((onPrimary['/v1/events'] ?? 0) >= 1)
  assert.ok((onPrimary['/v1/transactions/card-access'] ?? 0) >= 1)
  // Through the app with a replica they read the replica, which has none of them.
  assert.deepEqual(await listSizes(viaReplica), Object.fromEntries(LISTS.map((path) => [path, 0])))
  // Authentication, reads by id and the money path stay on the primary.
  const payment = await viaReplica.client.request<{ status: string }>(
    'GET',
    `/v1/payments/${paid.res.body.paymentId}`,
  )
  assert.equal(payment.status, 200)
  assert.equal(payment.body.status, 'captured')
  const detail = await viaReplica.client.request(
    'GET',
    `/v1/transactions/${paid.res.body.paymentId}`,
  )
  assert.equal(detail.status, 200)
  assert.equal(
    (await viaReplica.client.request('GET', `/v1/customers/${customer.body.id}`)).status,
    200,
  )
  const second = await charge(viaReplica.client, CARDS.frictionless, 5_000)
  assert.equal(second.res.status, 201, JSON.stringify(second.res.body))
  assert.equal((await listSizes(m))['/v1/transactions'], 2)
  assert.equal((await listSizes(viaReplica))['/v1/transactions'], 0)
  // The export's build job searches the replica when its app has one.
  assert.equal(await exportRowCount(viaReplica), 0)
  assert.equal(await exportRowCount(m), 2)

  // The replica's sessions are named and read-only.
  const admin = new pg.Client({ connectionString: adminUrl() })
  await admin.connect()
  try {
    const sessions = await admin.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity
       where application_name = 'kurus-read' and datname = $1`,
      [new URL(replica.url ?? '').pathname.slice(1)],
    )
    assert.ok((sessions.rows[0]?.n ?? 0) >= 1, 'a kurus-read session on the replica')
  } finally {
    await admin.end()
  }
  await assert.rejects(
    withReplica.deps.readDb
      .insertInto('rate_limit_buckets')
      .values({ bucket: 'write-probe', tokens: 1, refilled_at: new Date() })
      .execute(),
    /read-only transaction/,
  )
})
