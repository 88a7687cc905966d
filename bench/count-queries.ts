// Preloaded into the server by bench/profile.ts (`node --import ./bench/count-queries.ts …`):
// counts what each request costs the database from the driver's side — statements (each a
// round trip with node-postgres), transactions begun, commits, and single statements that
// write outside a transaction (each an implicit commit). On SIGUSR2 it writes the totals as
// JSON to KURUS_QUERY_COUNT_FILE. Nothing in src/ knows about it.
import { writeFileSync } from 'node:fs'
import pg from 'pg'

const totals = { statements: 0, begins: 0, commits: 0, autocommitWrites: 0, asyncCommits: 0 }
const inTransaction = new WeakSet<object>()
// KURUS_QUERY_TRACE=1: every statement's start on stderr (what a request sends, in order).
const trace = process.env['KURUS_QUERY_TRACE'] === '1'
const WRITE = /^\s*(insert|update|delete|with)\b/i

type Query = (this: pg.Client, ...args: unknown[]) => unknown
const proto = pg.Client.prototype as unknown as { query: Query }
const original = proto.query
proto.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0]
  const text = typeof first === 'string' ? first : ((first as { text?: string })?.text ?? '')
  totals.statements++
  if (trace) process.stderr.write(`sql ${text.replace(/\s+/g, ' ').slice(0, 160)}\n`)
  const head = text.trimStart().slice(0, 12).toLowerCase()
  if (head.startsWith('begin') || head.startsWith('start')) {
    totals.begins++
    inTransaction.add(this)
  } else if (head.startsWith('commit')) {
    totals.commits++
    inTransaction.delete(this)
  } else if (head.startsWith('rollback')) {
    inTransaction.delete(this)
  } else if (!inTransaction.has(this) && WRITE.test(text)) {
    totals.autocommitWrites++
    if (text.includes("'synchronous_commit', 'off'")) totals.asyncCommits++
  }
  return original.apply(this, args)
}

const file = process.env['KURUS_QUERY_COUNT_FILE']
if (file) {
  process.on('SIGUSR2', () => {
    writeFileSync(file, JSON.stringify(totals))
    if (trace) process.stderr.write('sql --- counted\n')
  })
}
