// Goal: dispute evidence (CONTRACT.md "Dispute evidence"): the deadline (`evidenceDueBy`,
// KURUS_EVIDENCE_DAYS), its expiry by the reconciler, evidence drafts and submission (one
// rendered PDF, `under_review`), the sandbox bank's won and lost outcomes with their ledger
// effects, reverse from under_review, and the owners' reminder email.
// Method: signed HTTP against the real app (the sandbox helper plays the bank);
// POST /v1/sandbox/reconcile runs the reconcilers; the test clock is moved to the due times
// the API reports.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32, deflateSync } from 'node:zlib'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { listDashboardMembers } from '../../src/modules/merchants/index.ts'
import { PDF, PNG, upload, type FileBody } from '../files/_support.ts'
import { startTestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { raise, type Cb } from './_support.ts'

const DAY_MS = 86_400_000

type Chargeback = Cb & {
  evidenceDueBy: string
  resolution: string | null
  evidenceSubmittedAt: string | null
}

async function reconcile(m: TestMerchant): Promise<Record<string, number>> {
  const res = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.ran
}

async function chargebackOf(m: TestMerchant, paymentId: string, id: string): Promise<Chargeback> {
  const list = await m.client.request<{ items: Chargeback[] }>(
    'GET',
    `/v1/payments/${paymentId}/chargebacks`,
  )
  const cb = list.body.items.find((c) => c.id === id)
  assert.ok(cb, `chargeback ${id} listed`)
  return cb
}

test('evidenceDueBy is received + 7 days; unanswered past it, the chargeback expires', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const id = res.body.paymentId
  const raised = await raise(m, id, { amount: 3_000 })
  assert.equal(raised.status, 201, JSON.stringify(raised.body))
  const cb = raised.body as Chargeback
  assert.equal(new Date(cb.evidenceDueBy).getTime() - new Date(cb.receivedAt).getTime(), 7 * DAY_MS)
  assert.equal(cb.resolution, null)

  // A minute before the deadline: still open.
  h.clock.set(new Date(new Date(cb.evidenceDueBy).getTime() - 60_000))
  await reconcile(m)
  assert.equal((await chargebackOf(m, id, cb.id)).status, 'received')

  h.clock.set(new Date(new Date(cb.evidenceDueBy).getTime() + 1_000))
  const ran = await reconcile(m)
  assert.equal(ran['disputes.expire_chargebacks'], 1)
  const closed = await chargebackOf(m, id, cb.id)
  assert.equal(closed.status, 'accepted')
  assert.equal(closed.resolution, 'expired')
  assert.ok(closed.resolvedAt)
  const types = (await eventsForResource(h.deps.db, m.merchantId, cb.id)).map((e) => e.type)
  assert.deepEqual(types, ['chargeback.received', 'chargeback.closed'])
  // Closed: neither accept nor reverse moves it again; the amount stays set aside.
  const again = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payments/${id}/chargebacks/${cb.id}/reverse`,
    { body: {} },
  )
  assert.equal(again.status, 409)
  assert.equal(again.body.code, 'SVC-STATE-3401')
  const payment = await m.client.request<{ refundableAmount: number }>('GET', `/v1/payments/${id}`)
  assert.equal(payment.body.refundableAmount, 7_000)
  assert.equal((await reconcile(m))['disputes.expire_chargebacks'], 0)
})

test('KURUS_EVIDENCE_DAYS sets the deadline', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_EVIDENCE_DAYS: '10' } })
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 5_000)
  const raised = await raise(m, res.body.paymentId)
  const cb = raised.body as Chargeback
  assert.equal(
    new Date(cb.evidenceDueBy).getTime() - new Date(cb.receivedAt).getTime(),
    10 * DAY_MS,
  )
})

interface Evidence {
  chargebackId: string
  paymentId: string
  status: string
  evidenceDueBy: string
  evidence: Record<string, unknown>
  evidenceFileId: string | null
  submittedAt: string | null
  code?: string
  message?: string
}

/** The merchant's own balance: reserve + available (GET /v1/balances). */
async function balanceOf(m: TestMerchant): Promise<number> {
  const res = await m.client.request<{
    items: { ownerId: string; reserveMinor: number; availableMinor: number }[]
  }>('GET', '/v1/balances')
  assert.equal(res.status, 200)
  const own = res.body.items.find((b) => b.ownerId === m.merchantId)
  return own ? own.reserveMinor + own.availableMinor : 0
}

function evidence(m: TestMerchant, paymentId: string, cbid: string, body: object) {
  return m.client.request<Evidence>(
    'POST',
    `/v1/payments/${paymentId}/chargebacks/${cbid}/evidence`,
    { body },
  )
}

async function disputed(m: TestMerchant, amount = 10_000, cbAmount = 4_000) {
  const { res } = await charge(m.client, CARDS.frictionless, amount)
  const paymentId = res.body.paymentId
  const cb = await raise(m, paymentId, { amount: cbAmount })
  assert.equal(cb.status, 201, JSON.stringify(cb.body))
  return { paymentId, cbid: cb.body.id }
}

test('drafts are saved and merged; submit renders one PDF and moves to under_review', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { paymentId, cbid } = await disputed(m)
  const file = await upload(m, PNG, { filename: 'receipt.png' })
  assert.equal(file.status, 201)

  const first = await evidence(m, paymentId, cbid, {
    productDescription: 'Seramik kupa, 2 adet',
    shippingTrackingNumber: 'YK-123456',
  })
  assert.equal(first.status, 200, JSON.stringify(first.body))
  assert.equal(first.body.status, 'received')
  assert.equal(first.body.submittedAt, null)
  assert.equal(first.body.evidenceFileId, null)
  const second = await evidence(m, paymentId, cbid, {
    refundPolicy: '14 gün içinde iade',
    shippingTrackingNumber: '',
    fileIds: [file.body.id],
  })
  assert.equal(second.status, 200)
  assert.deepEqual(second.body.evidence, {
    productDescription: 'Seramik kupa, 2 adet',
    refundPolicy: '14 gün içinde iade',
    fileIds: [file.body.id],
  })

  // Another merchant's file, or one that does not exist: 400 naming it.
  const other = await h.newMerchant()
  const foreign = await upload(other, PDF)
  const bad = await evidence(m, paymentId, cbid, { fileIds: [foreign.body.id] })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.code, 'SVC-VAL-3001')
  assert.match(bad.body.message ?? '', new RegExp(foreign.body.id))
  const unknown = await evidence(m, paymentId, cbid, { zzz: 1 })
  assert.equal(unknown.status, 400)

  const submitted = await evidence(m, paymentId, cbid, {
    customerCommunication: 'Alıcı teslim aldığını yazdı.',
    submit: true,
  })
  assert.equal(submitted.status, 200, JSON.stringify(submitted.body))
  assert.equal(submitted.body.status, 'under_review')
  assert.match(String(submitted.body.submittedAt), /Z$/)
  const pdfId = submitted.body.evidenceFileId
  assert.ok(pdfId?.startsWith('file_'))
  const facts = await m.client.request<FileBody>('GET', `/v1/files/${pdfId}`)
  assert.equal(facts.body.type, 'pdf')
  assert.equal(facts.body.purpose, 'dispute_evidence_submission')
  const pdf = await m.client.request<Buffer>('GET', `/v1/files/${pdfId}/contents`)
  assert.equal(pdf.status, 200)
  assert.equal(Buffer.from(pdf.body).subarray(0, 5).toString(), '%PDF-')
  // The other merchant cannot read it.
  assert.equal((await other.client.request('GET', `/v1/files/${pdfId}`)).status, 404)

  const cb = await chargebackOf(m, paymentId, cbid)
  assert.equal(cb.status, 'under_review')
  assert.equal(cb.evidenceSubmittedAt, submitted.body.submittedAt)
  // Submitted: no more drafts, no second submission, no accept; reverse is still allowed.
  const late = await evidence(m, paymentId, cbid, { uncategorizedText: 'x' })
  assert.equal(late.status, 409)
  assert.equal(late.body.code, 'SVC-STATE-3401')
  const accept = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payments/${paymentId}/chargebacks/${cbid}/accept`,
    { body: {} },
  )
  assert.equal(accept.status, 409)
  const types = (await eventsForResource(h.deps.db, m.merchantId, cbid)).map((e) => e.type)
  assert.deepEqual(types, ['chargeback.received', 'chargeback.evidence_submitted'])
  // Under review, the deadline no longer applies.
  h.clock.set(new Date(new Date(cb.evidenceDueBy).getTime() + DAY_MS))
  assert.equal((await reconcile(m))['disputes.expire_chargebacks'], 0)
  assert.equal((await chargebackOf(m, paymentId, cbid)).status, 'under_review')
})

test('an empty submission is 400; another merchant cannot draft on the chargeback', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const { paymentId, cbid } = await disputed(m)
  const empty = await evidence(m, paymentId, cbid, { submit: true })
  assert.equal(empty.status, 400)
  assert.equal(empty.body.code, 'SVC-VAL-3001')
  const foreign = await evidence(other, paymentId, cbid, { productDescription: 'x' })
  assert.equal(foreign.status, 404)
  assert.equal((await chargebackOf(m, paymentId, cbid)).status, 'received')
})

test('the sandbox bank: winning evidence reverses, losing evidence accepts', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const start = await balanceOf(m)
  const win = await disputed(m, 10_000, 4_000)
  const lose = await disputed(m, 8_000, 3_000)
  const afterCharges = await balanceOf(m)
  assert.ok(afterCharges > start)
  const pending = await disputed(m, 6_000, 1_000)
  const held = await balanceOf(m)
  const refundable = async (id: string) =>
    (await m.client.request<{ refundableAmount: number }>('GET', `/v1/payments/${id}`)).body
      .refundableAmount
  assert.equal(await refundable(win.paymentId), 6_000)

  for (const [d, text] of [
    [win, 'Teslimat kanıtı ektedir. winning_evidence'],
    [lose, 'losing_evidence'],
    [pending, 'no decision yet'],
  ] as const) {
    const res = await evidence(m, d.paymentId, d.cbid, { uncategorizedText: text, submit: true })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  const ran = await reconcile(m)
  assert.equal(ran['disputes.decide_evidence'], 2)

  const won = await chargebackOf(m, win.paymentId, win.cbid)
  assert.equal(won.status, 'reversed')
  assert.equal(won.resolution, 'won')
  const lost = await chargebackOf(m, lose.paymentId, lose.cbid)
  assert.equal(lost.status, 'accepted')
  assert.equal(lost.resolution, 'lost')
  assert.equal((await chargebackOf(m, pending.paymentId, pending.cbid)).status, 'under_review')
  // Won: the 4,000 comes back to the merchant and is refundable again; lost: it stays gone.
  assert.equal(await balanceOf(m), held + 4_000)
  assert.equal(await refundable(win.paymentId), 10_000)
  assert.equal(await refundable(lose.paymentId), 5_000)
  const legs = await legsForPayment(h.deps.db, m.merchantId, win.paymentId)
  assert.equal(
    legs.filter((l) => l.accountType === 'buyer_pending' && l.direction === 'DEBIT').length,
    2,
    'the capture and the mirror of the chargeback',
  )
  for (const d of [win, lose]) {
    const types = (await eventsForResource(h.deps.db, m.merchantId, d.cbid)).map((e) => e.type)
    assert.deepEqual(types, [
      'chargeback.received',
      'chargeback.evidence_submitted',
      'chargeback.closed',
    ])
  }
  assert.equal((await reconcile(m))['disputes.decide_evidence'], 0)

  // The merchant may still reverse a chargeback under review (won outside the sandbox).
  const rev = await m.client.request<{ status: string; resolution: string }>(
    'POST',
    `/v1/payments/${pending.paymentId}/chargebacks/${pending.cbid}/reverse`,
    { body: {} },
  )
  assert.equal(rev.status, 200)
  assert.equal(rev.body.status, 'reversed')
  assert.equal(rev.body.resolution, 'reversed')
  assert.equal(await balanceOf(m), held + 4_000 + 1_000)
})

test('the owners are emailed once, 2 days before the deadline', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Kupa Dükkânı' })
  const owners = (await listDashboardMembers(h.deps, m.merchantId)).filter(
    (u) => u.role === 'owner',
  )
  assert.ok(owners.length >= 1)
  const owner = owners[0]?.email ?? ''
  const { paymentId, cbid } = await disputed(m, 10_000, 2_500)
  const cb = await chargebackOf(m, paymentId, cbid)
  const reminderAt = new Date(cb.evidenceDueBy).getTime() - 2 * DAY_MS
  const mails = async () =>
    (await listMailbox(h.deps, { to: owner })).filter((x) => x.subject.includes(cbid))

  // The file's tests share one database: counts are of this chargeback's mails.
  h.clock.set(new Date(reminderAt - 60_000))
  await reconcile(m)
  assert.equal((await mails()).length, 0)

  h.clock.set(new Date(reminderAt + 60_000))
  assert.ok(((await reconcile(m))['disputes.send_reminders'] ?? 0) >= 1)
  const sent = await mails()
  assert.equal(sent.length, 1)
  assert.match(sent[0]?.text ?? '', new RegExp(cb.evidenceDueBy.replace(/\./g, '\\.')))
  assert.match(sent[0]?.subject ?? '', /25,00 ₺/)

  h.clock.set(new Date(reminderAt + DAY_MS))
  await reconcile(m)
  assert.equal((await mails()).length, 1, 'once')

  // A chargeback answered in time is not reminded.
  const answered = await disputed(m, 5_000, 500)
  const info = await chargebackOf(m, answered.paymentId, answered.cbid)
  const sub = await evidence(m, answered.paymentId, answered.cbid, {
    productDescription: 'Kupa',
    submit: true,
  })
  assert.equal(sub.status, 200)
  h.clock.set(new Date(new Date(info.evidenceDueBy).getTime() - DAY_MS))
  await reconcile(m)
  assert.equal(
    (await listMailbox(h.deps, { to: owner })).filter((x) => x.subject.includes(answered.cbid))
      .length,
    0,
  )
})

test('a reminder whose email failed is tried again at the next run', async (t) => {
  // SMTP on a closed port: every send fails at once.
  const h = await startTestApp(t, { env: { SMTP_URL: 'smtp://127.0.0.1:9' } })
  const m = await h.newMerchant()
  const { paymentId, cbid } = await disputed(m, 6_000, 600)
  const cb = await chargebackOf(m, paymentId, cbid)
  h.clock.set(new Date(new Date(cb.evidenceDueBy).getTime() - DAY_MS))
  const failures = () =>
    h.logs.filter((l) => l.includes('evidence reminder not sent') && l.includes(cbid)).length
  assert.equal((await reconcile(m))['disputes.send_reminders'], 0)
  assert.equal(failures(), 1)
  await reconcile(m)
  assert.equal(failures(), 2, 'released and tried again, once per run')
})

/** A real PNG of `width`×`height` pixels, RGBA (colour type 6), every pixel one colour. */
function rgbaPng(width: number, height: number): Buffer {
  const chunk = (kind: string, body: Buffer) => {
    const head = Buffer.alloc(4)
    head.writeUInt32BE(body.length)
    const typed = Buffer.concat([Buffer.from(kind, 'latin1'), body])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(typed))
    return Buffer.concat([head, typed, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 6, 0, 0, 0], 8)
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 4, 0)])
  for (let x = 0; x < width; x++) row.set([200, 30, 30, 255], 1 + x * 4)
  const pixels = Buffer.concat(Array.from({ length: height }, () => row))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** Runs a poppler tool on the PDF (written to a temp file) and returns its output. */
function poppler(tool: 'pdftotext' | 'pdfimages', args: string[], pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'evidence-pdf-'))
  try {
    const file = join(dir, 'evidence.pdf')
    writeFileSync(file, pdf)
    return execFileSync(tool, [...args, file, ...(tool === 'pdftotext' ? ['-'] : [])], {
      encoding: 'utf8',
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('the evidence PDF contains the uploaded image itself, and says what the reason code means', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const paymentId = res.body.paymentId
  const cb = await raise(m, paymentId, { amount: 4_000, reasonCode: '4837' })
  assert.equal(cb.status, 201, JSON.stringify(cb.body))
  const photo = await upload(m, rgbaPng(40, 30), { filename: 'kargo-teslim.png' })
  // Bytes that only look like a PNG: listed, not drawn, and the PDF is still made.
  const broken = await upload(m, PNG, { filename: 'broken.png' })
  const pdfFile = await upload(m, PDF, { filename: 'fatura.pdf' })
  assert.equal(photo.status, 201)
  const submitted = await evidence(m, paymentId, cb.body.id, {
    productDescription: 'Seramik kupa',
    fileIds: [photo.body.id, broken.body.id, pdfFile.body.id],
    submit: true,
  })
  assert.equal(submitted.status, 200, JSON.stringify(submitted.body))
  const pdf = await m.client.request<Buffer>(
    'GET',
    `/v1/files/${submitted.body.evidenceFileId}/contents`,
  )
  const bytes = Buffer.from(pdf.body)

  // pdfimages -list: the 40×30 image (and its alpha mask) are in the document.
  const images = poppler('pdfimages', ['-list'], bytes)
    .split('\n')
    .slice(2)
    .filter((l) => l.trim() !== '')
    .map((l) => l.trim().split(/\s+/))
  const drawn = images.filter((cols) => cols[2] === 'image')
  assert.equal(drawn.length, 1, images.join('\n'))
  assert.deepEqual([drawn[0]?.[3], drawn[0]?.[4]], ['40', '30'])

  const text = poppler('pdftotext', ['-layout', '-enc', 'UTF-8'], bytes).replace(/\s+/g, ' ')
  assert.match(
    text,
    /4837 · Kart sahibi işlemi onaylamadığını söylüyor \(No cardholder authorization\)/,
  )
  assert.match(text, /1\. PNG · görsel ekte \(image below\)/)
  assert.match(text, /Ek 1 \(Attachment 1\) · PNG/)
  assert.match(text, /2\. PNG · \d+ bytes/)
  assert.match(text, /3\. PDF · \d+ bytes/)
  // No file ids or hashes for the bank to look up.
  assert.doesNotMatch(text, /sha256|file_/)
})
