// `npx node bench/drivers.ts`: issue 43's driver question with numbers — node-postgres (`pg`,
// what Kysely runs on today) against postgres.js (`postgres`) for the card charge's database
// work, outside the API so only the driver differs. One "charge" is today's statement shape
// (bench/profile.ts, KURUS_QUERY_TRACE=1): three lookups; the claim transaction (Idempotency-Key
// insert, payment insert, advisory lock, velocity counts, risk update; committed
// asynchronously); the outcome transaction (payment update, three ledger legs, outbox event,
// recorded answer; committed synchronously) — 17 statements, 2 transactions. Variants:
//   pg sequential        each statement awaited, as Kysely over pg sends them today
//   postgres sequential  the same with postgres.js
//   postgres pipelined   postgres.js sending the statements that do not depend on each other's
//                        answers without waiting (three lookups together; inside each
//                        transaction everything that does not need an answer first together): 9 round trips, not 17
// Per variant: charges/s, p50/p99 and the client's CPU per charge (process.cpuUsage), which is
// what counts on the API's CPU-bound 2 cores. Variants alternate for BENCH_ROUNDS rounds on a
// scratch database and the median round is reported (the machine is shared: ratios only).
// Knobs: BENCH_DATABASE_URL (server, default the local test DB's), BENCH_SECONDS (per variant
// and round, default 8), BENCH_ROUNDS (default 3), BENCH_CLIENTS (connections, default 8).
import { randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import pg from 'pg'
import postgres from 'postgres'
import { machine } from './lib.ts'

const BASE_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8)
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3)
const CLIENTS = Number(process.env['BENCH_CLIENTS'] ?? 8)
// The scratch database, set by main() before any runner connects.
let target = BASE_URL

const SCHEMA = `
  create table idem (key text primary key, state text not null, payment_id text, response text);
  create table sessions (id text primary key, merchant_id text not null, amount bigint not null);
  create table tokens (id text primary key, merchant_id text not null, bin text not null);
  create table payments (id text primary key, merchant_id text not null, amount bigint not null,
    status text not null, card text not null, risk jsonb, created_at timestamptz not null default now());
  create index payments_card on payments (merchant_id, card, created_at);
  create table legs (id bigserial primary key, payment_id text not null, account text not null,
    direction text not null, amount bigint not null);
  create table outbox (id bigserial primary key, payment_id text not null, data jsonb not null);
  insert into sessions select 'ses_' || i, 'mrc_' || (i % 100), 10000 from generate_series(1, 1000) i;
  insert into tokens select 'tok_' || i, 'mrc_' || (i % 100), '454360' from generate_series(1, 1000) i;`

const LOCK = `select pg_advisory_xact_lock(hashtextextended($1, 0))`
const COUNTS = `select (select count(*) from payments where merchant_id = $1 and card = $2
  and created_at > now() - interval '1 hour') as card_1h,
  (select count(*) from payments where merchant_id = $1 and created_at > now() - interval '1 day') as all_24h`
const LEGS = `insert into legs (payment_id, account, direction, amount) values
  ($1,'buyer_pending','DEBIT',10000),($1,'merchant_reserve','CREDIT',9726),($1,'platform_commission','CREDIT',274)`

interface Charge {
  id: string
  key: string
  merchant: string
  n: number
}

function nextCharge(i: number): Charge {
  const n = (i % 1000) + 1
  return { id: `pay_${randomUUID()}`, key: randomUUID(), merchant: `mrc_${n % 100}`, n }
}

type Runner = () => Promise<{ charge: (c: Charge) => Promise<void>; close: () => Promise<void> }>

const pgSequential: Runner = async () => {
  const c = new pg.Client({ connectionString: target })
  await c.connect()
  return {
    async charge(x) {
      await c.query('select * from idem where key = $1', [x.key])
      await c.query('select * from sessions where merchant_id = $1 and id = $2', [
        x.merchant,
        `ses_${x.n}`,
      ])
      await c.query('select * from tokens where merchant_id = $1 and id = $2', [
        x.merchant,
        `tok_${x.n}`,
      ])
      await c.query('begin')
      await c.query('set local synchronous_commit = off')
      await c.query(`insert into idem (key, state, payment_id) values ($1, 'claimed', $2)`, [
        x.key,
        x.id,
      ])
      await c.query(
        `insert into payments (id, merchant_id, amount, status, card) values ($1, $2, 10000, 'pending', $3) returning *`,
        [x.id, x.merchant, `card_${x.n}`],
      )
      await c.query(LOCK, [`${x.merchant}:card_${x.n}`])
      await c.query(COUNTS, [x.merchant, `card_${x.n}`])
      await c.query('update payments set risk = $1 where id = $2 returning *', [
        { decision: 'allow' },
        x.id,
      ])
      await c.query('commit')
      await c.query('begin')
      await c.query(`update payments set status = 'captured' where id = $1 returning *`, [x.id])
      await c.query(LEGS, [x.id])
      await c.query('insert into outbox (payment_id, data) values ($1, $2)', [x.id, { id: x.id }])
      await c.query(`update idem set state = 'done', response = $2 where key = $1`, [x.key, '{}'])
      await c.query('commit')
    },
    close: () => c.end(),
  }
}

function postgresRunner(pipelined: boolean): Runner {
  return async () => {
    const sql = postgres(target, { max: 1, onnotice: () => undefined })
    return {
      async charge(x) {
        const lookups = [
          () => sql`select * from idem where key = ${x.key}`,
          () =>
            sql`select * from sessions where merchant_id = ${x.merchant} and id = ${`ses_${x.n}`}`,
          () =>
            sql`select * from tokens where merchant_id = ${x.merchant} and id = ${`tok_${x.n}`}`,
        ]
        if (pipelined) await Promise.all(lookups.map((q) => q()))
        else for (const q of lookups) await q()
        await sql.begin(async (tx) => {
          const first = [
            () => tx`set local synchronous_commit = off`,
            () =>
              tx`insert into idem (key, state, payment_id) values (${x.key}, 'claimed', ${x.id})`,
            () =>
              tx`insert into payments (id, merchant_id, amount, status, card) values (${x.id}, ${x.merchant}, 10000, 'pending', ${`card_${x.n}`}) returning *`,
            () => tx.unsafe(LOCK, [`${x.merchant}:card_${x.n}`]),
          ]
          if (pipelined) await Promise.all(first.map((q) => q()))
          else for (const q of first) await q()
          // The counts read after the lock (READ COMMITTED), then the decision they make.
          await tx.unsafe(COUNTS, [x.merchant, `card_${x.n}`])
          await tx`update payments set risk = ${tx.json({ decision: 'allow' })} where id = ${x.id} returning *`
        })
        await sql.begin(async (tx) => {
          const outcome = [
            () => tx`update payments set status = 'captured' where id = ${x.id} returning *`,
            () => tx.unsafe(LEGS, [x.id]),
            () =>
              tx`insert into outbox (payment_id, data) values (${x.id}, ${tx.json({ id: x.id })})`,
            () => tx`update idem set state = 'done', response = '{}' where key = ${x.key}`,
          ]
          if (pipelined) await Promise.all(outcome.map((q) => q()))
          else for (const q of outcome) await q()
        })
      },
      close: () => sql.end(),
    }
  }
}

const VARIANTS: [string, Runner][] = [
  ['pg sequential', pgSequential],
  ['postgres sequential', postgresRunner(false)],
  ['postgres pipelined', postgresRunner(true)],
]

interface Round {
  perS: number
  p50: number
  p99: number
  cpuUs: number
}

async function measure(runner: Runner): Promise<Round> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => runner()))
  // Warm: JIT, prepared statements.
  await Promise.all(clients.map(async (c, i) => c.charge(nextCharge(i))))
  const latencies: number[] = []
  const cpu0 = process.cpuUsage()
  const until = Date.now() + SECONDS * 1000
  let i = 0
  await Promise.all(
    clients.map(async (c) => {
      while (Date.now() < until) {
        const t0 = performance.now()
        await c.charge(nextCharge(i++))
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const cpu = process.cpuUsage(cpu0)
  await Promise.all(clients.map((c) => c.close()))
  latencies.sort((a, b) => a - b)
  const q = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0
  return {
    perS: latencies.length / SECONDS,
    p50: q(0.5),
    p99: q(0.99),
    cpuUs: (cpu.user + cpu.system) / latencies.length,
  }
}

async function main(): Promise<void> {
  const dbName = `kurus_drivers_${process.pid}`
  const admin = new pg.Client({ connectionString: BASE_URL })
  await admin.connect()
  await admin.query(`create database ${dbName}`)
  const url = new URL(BASE_URL)
  url.pathname = `/${dbName}`
  target = url.toString()
  const results = new Map<string, Round[]>()
  try {
    const setup = new pg.Client({ connectionString: target })
    await setup.connect()
    await setup.query(SCHEMA)
    await setup.end()
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, runner] of VARIANTS) {
        const r = await measure(runner)
        results.set(name, [...(results.get(name) ?? []), r])
        process.stderr.write(
          `round ${round + 1} ${name}: ${r.perS.toFixed(0)}/s p50 ${r.p50.toFixed(1)} ms cpu ${r.cpuUs.toFixed(0)} µs\n`,
        )
      }
    }
  } finally {
    await admin.query(`drop database if exists ${dbName} with (force)`)
    await admin.end()
  }
  const m = machine()
  process.stdout.write(
    `Machine: ${m['cpu']}, Node ${m['node']}, ${m['postgres']}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${CLIENTS} connections, ` +
      `${SECONDS} s per variant and round, median of ${ROUNDS} rounds (variants alternate).\n\n` +
      '| driver, shape | charges/s | ÷ pg | p50 ms | p99 ms | client CPU µs / charge | round trips |\n' +
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n',
  )
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
  const base = median((results.get('pg sequential') ?? []).map((r) => r.perS))
  for (const [name] of VARIANTS) {
    const rs = results.get(name) ?? []
    const perS = median(rs.map((r) => r.perS))
    process.stdout.write(
      `| ${name} | ${perS.toFixed(0)} | ${(perS / base).toFixed(2)} | ${median(rs.map((r) => r.p50)).toFixed(1)} | ` +
        `${median(rs.map((r) => r.p99)).toFixed(1)} | ${median(rs.map((r) => r.cpuUs)).toFixed(0)} | ${name.includes('pipelined') ? 9 : 17} |\n`,
    )
  }
}

await main()
