import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventsForResource } from '../../src/modules/events/index.ts'
import type { TestApp, TestMerchant } from '../helpers/app.ts'

// Shortcuts for the invoices tests: signed calls as the merchant's server makes them,
// unsigned ones as the buyer's browser does, and the PDF tools of poppler-utils.

export interface LineItem {
  name: string
  qty: number
  unitPriceMinor: number
  lineTotalMinor: number
}

export interface InvoiceBody {
  id: string
  merchantId: string
  storeId: string
  customerId: string | null
  publicHash: string
  url: string
  status: string
  amountMinor: number
  currency: string
  lineItems: LineItem[]
  buyerEmail: string | null
  buyerName: string | null
  dueDate: string | null
  expiresAt: string | null
  notes: string | null
  paymentId: string | null
  subscriptionId: string | null
  cycleNumber: number | null
  createdAt: string
  sentAt: string | null
  activatedAt: string | null
  viewedAt: string | null
  paidAt: string | null
  expiredAt: string | null
  cancelledAt: string | null
}

export interface ErrorBody {
  code: string
  message: string
  details?: { field: string; reason: string }[]
}

/** Two lines: 2 × 450,00 + 1 × 334,56 = 1.234,56 TRY. */
export const LINES: LineItem[] = [
  { name: 'Kitap: İstanbul Hatırası', qty: 2, unitPriceMinor: 45_000, lineTotalMinor: 90_000 },
  { name: 'Kargo ücreti', qty: 1, unitPriceMinor: 33_456, lineTotalMinor: 33_456 },
]
export const TOTAL = 123_456

export function invoiceBody(m: TestMerchant, extra: Record<string, unknown> = {}) {
  return {
    storeId: m.storeId,
    amountMinor: TOTAL,
    currency: 'TRY',
    lineItems: LINES,
    buyerEmail: 'ayse@example.com',
    buyerName: 'Ayşe Yılmaz',
    ...extra,
  }
}

export async function createInvoice(
  m: TestMerchant,
  extra: Record<string, unknown> = {},
): Promise<InvoiceBody> {
  const res = await m.client.request<InvoiceBody>('POST', '/v1/invoices', {
    body: invoiceBody(m, extra),
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

export async function getInvoice(m: TestMerchant, id: string): Promise<InvoiceBody> {
  const res = await m.client.request<InvoiceBody>('GET', `/v1/invoices/${id}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

export async function action<T = Record<string, unknown>>(
  m: TestMerchant,
  id: string,
  verb: 'send' | 'activate' | 'cancel',
) {
  return m.client.request<T & ErrorBody>('POST', `/v1/invoices/${id}/${verb}`, { body: {} })
}

/** An invoice activated (its link open) without email. */
export async function activatedInvoice(
  m: TestMerchant,
  extra: Record<string, unknown> = {},
): Promise<InvoiceBody> {
  const invoice = await createInvoice(m, extra)
  const res = await action(m, invoice.id, 'activate')
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return invoice
}

/** The invoice's status as stored, without the lazy look-up a GET by id does. */
export async function storedStatus(h: TestApp, id: string): Promise<string> {
  const row = await h.deps.db
    .selectFrom('invoices')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  return row.status
}

export interface PlainResponse<T> {
  status: number
  body: T
  text: string
  headers: Headers
  bytes: Buffer
}

/** An unsigned request, as the buyer's browser makes it. */
export async function browser<T = Record<string, unknown>>(
  h: TestApp,
  method: string,
  path: string,
  json?: unknown,
): Promise<PlainResponse<T>> {
  const response = await fetch(h.url + path, {
    method,
    redirect: 'manual',
    ...(json === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) }),
  })
  const bytes = Buffer.from(await response.arrayBuffer())
  const text = bytes.toString('utf8')
  const type = response.headers.get('content-type') ?? ''
  const body = (type.includes('json') && text ? JSON.parse(text) : null) as T
  return { status: response.status, body, text, headers: response.headers, bytes }
}

export interface PaySessionBody {
  sessionId: string
  checkoutUrl: string
  expiresAt: string
}

export async function publicPay(h: TestApp, hash: string): Promise<PlainResponse<PaySessionBody>> {
  return browser<PaySessionBody>(h, 'POST', `/v1/public/invoices/${hash}/pay`, {})
}

/** The buyer pays the session through the hosted checkout's own API (no browser). */
export async function payByCard(h: TestApp, sessionId: string, number: string) {
  return browser<{ paymentId: string; status: string; code?: string }>(
    h,
    'POST',
    `/v1/public/sessions/${sessionId}/pay`,
    { card: { number, expMonth: 12, expYear: 2030, cvc: '123', holderName: 'Ayşe Yılmaz' } },
  )
}

/** POST /v1/sandbox/reconcile: every reconciler once, then every job queue drained. */
export async function reconcile(m: TestMerchant): Promise<Record<string, number>> {
  const res = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.ran
}

/** A timestamp the service wrote between two readings of the test clock. */
export function assertWrittenBetween(iso: string | null, before: Date, after: Date): void {
  assert.ok(iso !== null, 'timestamp is set')
  const at = Date.parse(iso)
  assert.ok(
    at >= before.getTime() && at <= after.getTime(),
    `${iso} is not within ${before.toISOString()} … ${after.toISOString()}`,
  )
}

export async function eventTypes(h: TestApp, merchantId: string, id: string): Promise<string[]> {
  return (await eventsForResource(h.deps.db, merchantId, id)).map((e) => e.type)
}

export async function sessionStatus(h: TestApp, sessionId: string): Promise<string> {
  const row = await h.deps.db
    .selectFrom('payment_sessions')
    .select('status')
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow()
  return row.status
}

/**
 * pdftotext (poppler-utils) of a PDF in layout order, pages split by \f, with each run of
 * spaces (column gaps) made one space.
 */
export function pdfText(pdf: Buffer): string {
  const text = withTempFile(pdf, (file) =>
    execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' }),
  )
  return text.replace(/[ \t]+/g, ' ')
}

/** pdftoppm renders page 1 to PNG; returns the PNG's bytes. */
export function renderFirstPage(pdf: Buffer): Buffer {
  return withTempFile(pdf, (file, dir) => {
    execFileSync('pdftoppm', [
      '-png',
      '-r',
      '60',
      '-f',
      '1',
      '-l',
      '1',
      '-singlefile',
      file,
      join(dir, 'page'),
    ])
    return readFileSync(join(dir, 'page.png'))
  })
}

/** pdfinfo's fields (Pages, Title …). */
export function pdfInfo(pdf: Buffer): Record<string, string> {
  const out = withTempFile(pdf, (file) => execFileSync('pdfinfo', [file], { encoding: 'utf8' }))
  return Object.fromEntries(
    out
      .split('\n')
      .map((line) => /^([^:]+):\s*(.*)$/.exec(line))
      .filter((x): x is RegExpExecArray => x !== null)
      .map((x) => [x[1] ?? '', x[2] ?? '']),
  )
}

/** The images pdfimages lists: one row per image (type, width, height …). */
export function pdfImages(pdf: Buffer): string[][] {
  const out = withTempFile(pdf, (file) =>
    execFileSync('pdfimages', ['-list', file], { encoding: 'utf8' }),
  )
  return out
    .split('\n')
    .slice(2)
    .filter((line) => line.trim() !== '')
    .map((line) => line.trim().split(/\s+/))
}

function withTempFile<T>(bytes: Buffer, fn: (file: string, dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'kurus-invoice-'))
  try {
    const file = join(dir, 'invoice.pdf')
    writeFileSync(file, bytes)
    return fn(file, dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
