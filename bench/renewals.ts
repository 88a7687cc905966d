// Benchmark of the subscription renewal engine: 10,000 due subscriptions renewed by the
// `subscriptions.renew_due` reconciler's code on PostgreSQL, through the real path (the sandbox
// acquirer, payments, ledger legs, outbox events, charge history). It makes a scratch database,
// migrates it, seeds merchants, customers, saved cards and subscriptions through the services,
// then times the reconciler until none is due: round 1 with one worker, round 2 (a month
// later, every subscription due again) with two workers racing over separate pools, as two
// worker processes would. Each round checks exactly one captured payment per subscription and
// cycle. Results are appended to bench/RESULTS.md under "Renewals"; the database is dropped.
// Usage: npx node bench/renewals.ts
// Knobs: BENCH_DATABASE_URL (an admin URL; default postgres://postgres@127.0.0.1:5432/test),
// BENCH_SUBSCRIPTIONS (default 10000), BENCH_NO_APPEND=1.
import { sandboxBank } from '../src/modules/acquirer/index.ts'
import { appendFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { loadConfig } from '../src/config.ts'
import type { Database, Deps } from '../src/database.ts'
import { TestClock } from '../src/platform/clock.ts'
import { connectDatabase, type DatabaseHandle } from '../src/platform/db/connect.ts'
import { migrateToLatest } from '../src/platform/db/migrate.ts'
import { JobQueue } from '../src/platform/jobs/queue.ts'
import { createLogger } from '../src/platform/logger.ts'
import { attachCardToCustomer } from '../src/modules/customers/index.ts'
import { createCustomer } from '../src/modules/customers/customers.service.ts'
import { createMerchant } from '../src/modules/merchants/index.ts'
import { createSubscription, renewDueSubscriptions } from '../src/modules/subscriptions/index.ts'
import { tokenizeCard } from '../src/modules/vault/index.ts'
import { machine } from './lib.ts'

const ADMIN_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const SUBSCRIPTIONS = Number(process.env['BENCH_SUBSCRIPTIONS'] ?? 10_000)
const MERCHANTS = 10
const CUSTOMERS_PER_MERCHANT = 20
const SCRATCH = `kurus_bench_renewals_${process.pid}`
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url))
const DAY_MS = 24 * 60 * 60 * 1000

function urlFor(database: string): string {
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  return url.toString()
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

interface Worker {
  deps: Deps
  handle: DatabaseHandle<Database>
}

/** One "process": its own pool (10 connections, as a server's default) over the scratch DB. */
async function worker(clock: TestClock): Promise<Worker> {
  const handle = await connectDatabase<Database>({ databaseUrl: urlFor(SCRATCH), poolSize: 10 })
  const log = createLogger('warn')
  const config = loadConfig(
    { KURUS_ENV: 'demo', KURUS_DATA_DIR: '/nonexistent-bench-dir', LOG_LEVEL: 'warn' },
    { masterKey: Buffer.alloc(32, 5), operatorToken: 'bench' },
  )
  // Renewals enqueue nothing; the queue only has to exist in Deps.
  const jobs = new JobQueue(handle.raw, log)
  return {
    deps: { db: handle.db, readDb: handle.db, clock, config, log, jobs, acquirer: sandboxBank },
    handle,
  }
}

async function inParallel<T>(items: T[], lanes: number, fn: (item: T) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let i = next++; i < items.length; i = next++) {
        const item = items[i]
        if (item !== undefined) await fn(item)
      }
    }),
  )
}

/** Merchants with customers and saved cards, and SUBSCRIPTIONS monthly subscriptions on them. */
async function seed(deps: Deps): Promise<void> {
  const owners: { merchantId: string; storeId: string; customerId: string }[] = []
  for (let i = 0; i < MERCHANTS; i++) {
    const m = await createMerchant(deps, { name: `Bench ${i}`, kycStatus: 'approved' })
    for (let c = 0; c < CUSTOMERS_PER_MERCHANT; c++) {
      const customer = await createCustomer(deps, m.merchantId, { externalId: `bench-${i}-${c}` })
      const card = await tokenizeCard(deps, m.merchantId, {
        cardNumber: '4155650100416111',
        expMonth: 12,
        expYear: 2035,
        cvc: '123',
        holderName: 'Bench Buyer',
      })
      await attachCardToCustomer(deps, m.merchantId, customer.id, card.cardToken, {
        isDefault: true,
      })
      owners.push({ merchantId: m.merchantId, storeId: m.storeId, customerId: customer.id })
    }
  }
  const indexes = Array.from({ length: SUBSCRIPTIONS }, (_, i) => i)
  await inParallel(indexes, 8, async (i) => {
    const owner = owners[i % owners.length]
    if (!owner) return
    await createSubscription(deps, owner.merchantId, {
      storeId: owner.storeId,
      customerId: owner.customerId,
      amountMinor: 100 + (i % 50_000),
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
    })
  })
  await sql`analyze`.execute(deps.db)
}

async function dueCount(deps: Deps): Promise<number> {
  const row = await deps.db
    .selectFrom('subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', ['trialing', 'active', 'past_due'])
    .where('next_charge_at', '<=', deps.clock.now())
    .executeTakeFirstOrThrow()
  return row.n
}

/** Exactly one captured payment per subscription for `cycle`, and every row paid up to it. */
async function verify(deps: Deps, cycle: number): Promise<void> {
  const payments = await sql<{ n: number; captured: number; distinct_tx: number }>`
    select count(*)::int as n, count(*) filter (where status = 'captured')::int as captured,
      count(distinct transaction_id)::int as distinct_tx
    from payments where transaction_id like '%:' || ${String(cycle)}`.execute(deps.db)
  const p = payments.rows[0]
  const subs = await sql<{ n: number }>`
    select count(*)::int as n from subscriptions
    where cycle_number = ${cycle} and status = 'active'`.execute(deps.db)
  const charges = await sql<{ n: number }>`
    select count(*)::int as n from subscription_charges
    where cycle_number = ${cycle} and status = 'captured'`.execute(deps.db)
  const ok =
    p?.n === SUBSCRIPTIONS &&
    p.captured === SUBSCRIPTIONS &&
    p.distinct_tx === SUBSCRIPTIONS &&
    subs.rows[0]?.n === SUBSCRIPTIONS &&
    charges.rows[0]?.n === SUBSCRIPTIONS
  if (!ok) {
    throw new Error(
      `cycle ${cycle}: payments ${JSON.stringify(p)}, active at cycle ${subs.rows[0]?.n}, charges ${charges.rows[0]?.n}`,
    )
  }
}

interface Round {
  label: string
  workers: number
  seconds: number
  renewed: number
  load: string
}

async function round(label: string, workers: Worker[], cycle: number): Promise<Round> {
  const first = workers[0]
  if (!first) throw new Error('no worker')
  const due = await dueCount(first.deps)
  if (due !== SUBSCRIPTIONS) throw new Error(`${due} due, expected ${SUBSCRIPTIONS}`)
  const load = loadavg()[0]?.toFixed(1) ?? '?'
  const started = performance.now()
  // Each worker runs the reconciler until it finds nothing due, as its cron tick would.
  await Promise.all(workers.map((w) => renewDueSubscriptions(w.deps)))
  const seconds = (performance.now() - started) / 1000
  const left = await dueCount(first.deps)
  if (left !== 0) throw new Error(`${left} still due after the run`)
  await verify(first.deps, cycle)
  const result = { label, workers: workers.length, seconds, renewed: due, load }
  console.log(
    `${label}: ${due} renewals in ${seconds.toFixed(1)} s = ${(due / seconds).toFixed(0)}/s`,
  )
  return result
}

async function main(): Promise<void> {
  await admin(`drop database if exists ${SCRATCH}`)
  await admin(`create database ${SCRATCH}`)
  const clock = new TestClock()
  const workers: Worker[] = []
  try {
    const one = await worker(clock)
    workers.push(one)
    await migrateToLatest(one.handle.db as Kysely<unknown>)
    console.log(`seeding ${SUBSCRIPTIONS} subscriptions…`)
    const seedStart = performance.now()
    await seed(one.deps)
    console.log(`seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`)

    const rounds: Round[] = []
    rounds.push(await round('cycle 1, one worker', [one], 1))
    // A month later every subscription is due again: two workers race for them.
    clock.advance(32 * DAY_MS)
    const two = await worker(clock)
    workers.push(two)
    rounds.push(await round('cycle 2, two workers', [one, two], 2))
    if (process.env['BENCH_NO_APPEND'] !== '1') append(rounds)
  } finally {
    for (const w of workers) await w.handle.close()
    await admin(`drop database if exists ${SCRATCH} with (force)`)
  }
}

function append(rounds: Round[]): void {
  const m = machine()
  const rows = rounds.map(
    (r) =>
      `| ${r.label} | ${r.workers} | ${r.renewed} | ${r.seconds.toFixed(1)} | ${(r.renewed / r.seconds).toFixed(0)} | ${r.load} |`,
  )
  const text = `
## Renewals: 10,000 due subscriptions — ${m['date']?.slice(0, 10) ?? ''}

Numbers from \`npx node bench/renewals.ts\` (PostgreSQL; the script creates and drops a scratch
database). ${SUBSCRIPTIONS} monthly subscriptions of ${MERCHANTS} merchants (KYC approved), all
due, renewed by the \`subscriptions.renew_due\` reconciler's code in this process: claims of 100
rows (\`FOR UPDATE SKIP LOCKED\`), 8 charges side by side per worker, each a merchant-initiated
charge through the sandbox acquirer with its payment, ledger legs, outbox events and charge
history row, then the outcome recorded under the claim. Timed from the first claim until
nothing is due; afterwards the script checks exactly one captured payment per subscription and
cycle. Round 2 moves the clock a month on and runs two workers (separate pools of 10
connections, as two worker processes) at once.

Machine: ${m['cpu']}, ${m['memory']} RAM, Node ${m['node']}, ${m['postgres']}; database on the
same machine (shared with other builds: expect ±40 % between runs).

| round | workers | renewals | seconds | renewals/s | load avg before |
| ----- | ------: | -------: | ------: | ---------: | --------------: |
${rows.join('\n')}
`
  appendFileSync(RESULTS, text)
  console.log(`appended to ${RESULTS}`)
}

await main()
