import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { signedHeaders, type Kurus } from '../../sdk/index.ts'
import type { TestApp, TestMerchant } from '../helpers/app.ts'

// Shared by the reports tests: balance transactions and report files through the signed API.

export interface Btx {
  id: string
  type: string
  amount: number
  fee: number
  net: number
  currency: string
  status: 'pending' | 'available'
  availableOn: string
  sourceId: string
  payoutId?: string
  createdAt: string
}

/** Every balance transaction the client's key sees, following nextCursor. */
export async function allBalanceTransactions(
  client: Kurus,
  query: Record<string, string> = {},
  limit = 7,
): Promise<Btx[]> {
  const out: Btx[] = []
  let cursor: string | null = null
  for (let page = 0; page < 1000; page++) {
    const qs: URLSearchParams = new URLSearchParams({
      ...query,
      limit: String(limit),
      ...(cursor !== null ? { cursor } : {}),
    })
    const res: { status: number; body: { items: Btx[]; nextCursor: string | null } } =
      await client.request<{ items: Btx[]; nextCursor: string | null }>(
        'GET',
        `/v1/balance-transactions?${qs.toString()}`,
      )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    out.push(...res.body.items)
    cursor = res.body.nextCursor
    if (cursor === null) return out
  }
  throw new Error('too many pages')
}

export const sumNet = (xs: readonly Btx[]) => xs.reduce((s, x) => s + x.net, 0)

/** Requests a report, runs the jobs, downloads the file. */
export async function reportFile(
  h: TestApp,
  m: TestMerchant,
  body: { type: string; from: string; to: string; format: 'csv' | 'pdf' },
): Promise<Buffer> {
  const created = await m.client.request<{ reportId: string; status: string }>(
    'POST',
    '/v1/reports',
    { body },
  )
  assert.equal(created.status, 202, JSON.stringify(created.body))
  assert.match(created.body.reportId, /^rpt_/)
  assert.equal(created.body.status, 'queued')
  const ran = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(ran.status, 200)
  const status = await m.client.request<{ status: string }>(
    'GET',
    `/v1/reports/${created.body.reportId}`,
  )
  assert.equal(status.body.status, 'ready', JSON.stringify(status.body))
  const path = `/v1/reports/${created.body.reportId}/download`
  const headers = signedHeaders(m, 'GET', path, '', h.clock.now().toISOString())
  const res = await fetch(h.url + path, { headers: { ...headers } })
  assert.equal(res.status, 200)
  return Buffer.from(await res.arrayBuffer())
}

export function parseCsv(file: Buffer): Record<string, string>[] {
  return parse<Record<string, string>>(file, { bom: true, delimiter: ';', columns: true })
}

/** The text of a PDF, as poppler's pdftotext reads it. */
export function pdfText(file: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'kurus-report-'))
  try {
    const path = join(dir, 'report.pdf')
    writeFileSync(path, file)
    return execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface SummaryLines {
  opening: number
  activity: Map<string, { count: number; amount: number; fee: number; net: number }>
  closing: number
}

export function summaryOf(rows: Record<string, string>[]): SummaryLines {
  let opening = NaN
  let closing = NaN
  const activity = new Map<string, { count: number; amount: number; fee: number; net: number }>()
  for (const r of rows) {
    if (r['line'] === 'opening_balance') opening = Number(r['netMinor'])
    else if (r['line'] === 'closing_balance') closing = Number(r['netMinor'])
    else {
      activity.set(String(r['type']), {
        count: Number(r['count']),
        amount: Number(r['amountMinor']),
        fee: Number(r['feeMinor']),
        net: Number(r['netMinor']),
      })
    }
  }
  return { opening, activity, closing }
}
