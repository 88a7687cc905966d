// Goal: one merchant cannot hold the export workers (issue 22 §4): at most
// KURUS_EXPORTS_QUEUED_MAX unfinished exports per merchant (then 429 SVC-GW-1004 with
// Retry-After), and build jobs serve merchants in turn, so another merchant's single export is
// built next instead of after every export already queued.
// Method: signed HTTP for requests and status; the worker is driven one job at a time through
// pg-boss itself (fetch in pg-boss's own order → the registered handler → complete), as
// `kurus worker` runs it, so the build order is observed without any timing.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import { BUILD_EXPORT_JOB } from '../../src/modules/transactions/exports.service.ts'
import { transactionsJobs } from '../../src/modules/transactions/transactions.jobs.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { pay } from './_support.ts'

interface ExportBody {
  exportId: string
  status: string
}

async function requestExport(m: TestMerchant, idempotencyKey?: string) {
  return m.client.request<ExportBody & { code?: string }>('POST', '/v1/transactions/exports', {
    body: { format: 'csv' },
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  })
}

async function queued(m: TestMerchant): Promise<string> {
  const res = await requestExport(m)
  assert.equal(res.status, 202, JSON.stringify(res.body))
  return res.body.exportId
}

async function statusOf(m: TestMerchant, id: string): Promise<string> {
  const res = await m.client.request<ExportBody>('GET', `/v1/transactions/exports/${id}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.status
}

/** One turn of the worker loop: the next build job in pg-boss's order, run and completed. */
async function runOneJob(h: TestApp): Promise<boolean> {
  const boss = h.deps.jobs.boss
  const [job] = await boss.fetch<{ exportId: string }>(BUILD_EXPORT_JOB, { batchSize: 1 })
  if (!job) return false
  const definition = transactionsJobs(h.deps).find((j) => j.name === BUILD_EXPORT_JOB)
  assert.ok(definition)
  await definition.handler(job.data)
  await boss.complete(BUILD_EXPORT_JOB, job.id)
  return true
}

async function drain(h: TestApp): Promise<void> {
  for (let guard = 0; guard < 100 && (await runOneJob(h)); guard++);
}

test('at most 5 unfinished exports per merchant: the next is 429 SVC-GW-1004 with Retry-After', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  await pay(a.client, 1_000)
  const key = randomUUID()
  const first = await requestExport(a, key)
  assert.equal(first.status, 202)
  for (let i = 1; i < 5; i++) await queued(a)

  const refused = await requestExport(a)
  assert.equal(refused.status, 429, JSON.stringify(refused.body))
  assert.equal(refused.body.code, 'SVC-GW-1004')
  const retryAfter = Number(refused.headers.get('retry-after'))
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${retryAfter}`)

  // A retry of an export already made is answered, not refused: it adds nothing to the queue.
  const retried = await requestExport(a, key)
  assert.equal(retried.status, 202)
  assert.equal(retried.body.exportId, first.body.exportId)
  // The cap is the merchant's own: another merchant still queues.
  await queued(b)

  // Finished exports leave the queue: once built, the merchant may ask again.
  await drain(h)
  assert.equal(await statusOf(a, first.body.exportId), 'ready')
  await queued(a)
  await drain(h)
})

test('KURUS_EXPORTS_QUEUED_MAX sets the cap', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_EXPORTS_QUEUED_MAX: '1' } })
  const a = await h.newMerchant()
  await queued(a)
  const refused = await requestExport(a)
  assert.equal(refused.status, 429)
  assert.equal(refused.body.code, 'SVC-GW-1004')
  await drain(h)
  await queued(a)
  await drain(h)
})

test("build jobs take merchants in turn: B's one export does not wait for A's queue", async (t) => {
  // A database of its own: jobs claim across every merchant, so no other test's export may wait.
  const h = await startTestApp(t, { freshDatabase: true })
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const c = await h.newMerchant()
  for (const m of [a, b, c]) await pay(m.client, 1_000)
  const aIds: string[] = []
  for (let i = 0; i < 5; i++) aIds.push(await queued(a))
  assert.equal((await requestExport(a)).status, 429, 'A is at its cap')
  const bId = await queued(b)
  const cIds = [await queued(c), await queued(c)]
  const owner = new Map<string, TestMerchant>([
    ...aIds.map((id) => [id, a] as const),
    [bId, b] as const,
    ...cIds.map((id) => [id, c] as const),
  ])

  // Run the worker one job at a time and record which export each run finished.
  const order: string[] = []
  for (let run = 0; run < owner.size; run++) {
    assert.ok(await runOneJob(h), `job ${run + 1} of ${owner.size}`)
    const readyNow: string[] = []
    for (const [id, m] of owner) {
      if (!order.includes(id) && (await statusOf(m, id)) === 'ready') readyNow.push(id)
    }
    assert.equal(readyNow.length, 1, `run ${run + 1} built exactly one export`)
    order.push(readyNow[0]!)
  }
  assert.equal(await runOneJob(h), false, 'one job per export, none left over')
  // Round robin, least recently served merchant first; a tie goes to the oldest request.
  assert.deepEqual(order, [aIds[0], bId, cIds[0], aIds[1], cIds[1], aIds[2], aIds[3], aIds[4]])
  assert.equal(order.indexOf(bId), 1, "B's export was the second built, not the sixth")
})

test('a failed build attempt is retried on the same export, and no export is left behind', async (t) => {
  const h = await startTestApp(t, { freshDatabase: true })
  const a = await h.newMerchant()
  await pay(a.client, 1_000)
  const e1 = await queued(a)
  const e2 = await queued(a)
  // Test-only, deliberately invalid state: a chunk already sitting where attempt 1 of e1 will
  // write its first chunk, so that attempt fails on a unique violation.
  await sql`insert into transaction_export_chunks (export_id, attempt, seq, data)
    values (${e1}, 1, 0, ${Buffer.from('x')})`.execute(h.deps.db)

  const boss = h.deps.jobs.boss
  const [job] = await boss.fetch<{ exportId: string }>(BUILD_EXPORT_JOB, { batchSize: 1 })
  assert.ok(job)
  const definition = transactionsJobs(h.deps).find((j) => j.name === BUILD_EXPORT_JOB)!
  await assert.rejects(definition.handler(job.data), 'attempt 1 fails and is left to pg-boss')
  assert.equal(await statusOf(a, e1), 'processing')
  assert.equal(await statusOf(a, e2), 'queued')
  // pg-boss delivers the same job again after its backoff: it resumes its own export.
  await definition.handler(job.data)
  await boss.complete(BUILD_EXPORT_JOB, job.id)
  assert.equal(await statusOf(a, e1), 'ready')
  assert.equal(await statusOf(a, e2), 'queued')
  await drain(h)
  assert.equal(await statusOf(a, e2), 'ready')
})
