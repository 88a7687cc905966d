// Goal (issue 37): a healthy process logs no errors. pg-boss's supervision pass (every minute
// in each API and worker process) sends multi-statement scripts (BEGIN; …; COMMIT) through
// our SQL executor and reads `rows` of the answer; on PostgreSQL the driver answers such a
// script with one result per statement, so `rows` was undefined and pg-boss logged a level-50
// `TypeError: Cannot read properties of undefined (reading 'reduce')` once a minute.
// Method: the job queue on this file's database, a job defined and sent, then pg-boss's
// supervision pass run now (what its timer runs) while every log line is captured.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { JobQueue } from '../../src/platform/jobs/queue.ts'
import { createLogger } from '../../src/platform/logger.ts'
import { createTestDatabase } from '../helpers/db.ts'

test("pg-boss's supervision pass runs without an error line", async (t) => {
  const db = await createTestDatabase()
  t.after(() => db.drop())
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        lines.push(JSON.parse(line) as Record<string, unknown>)
      }
      done()
    },
  })
  const queue = new JobQueue(db.handle.raw, createLogger('info', sink))
  queue.define({ name: 'test.supervised', handler: async () => undefined })
  await queue.start()
  t.after(() => queue.stop())
  await queue.boss.send('test.supervised', {})
  for (let pass = 0; pass < 2; pass++) await queue.boss.supervise()
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(
    lines.filter((l) => Number(l['level']) >= 50),
    [],
    'no error lines from the job queue',
  )
  // The pass stored the queue's counts: the statement's rows were read.
  const { rows } = await db.handle.raw.executeSql(
    `select queued_count from pgboss.queue where name = 'test.supervised'`,
  )
  assert.equal((rows[0] as { queued_count: number } | undefined)?.queued_count, 1)
})
