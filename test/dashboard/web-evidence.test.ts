// Goal: the chargeback page's evidence form acts through the disputes and files modules as the
// API does: the deadline shown is the chargeback's evidenceDueBy; saved texts are the API's
// draft; a file uploaded as a browser does (multipart/form-data, the CSRF token a form field)
// is attached, one whose content is not a PDF, PNG or JPEG is refused with its reason and
// nothing is attached, one without the CSRF token changes nothing; Submit saves, asks for a
// confirmation, then sends (under_review) and offers the evidence PDF; the sandbox bank's
// outcome (won) then shows; too long a text or empty evidence is refused with nothing changed;
// the roles that may accept a chargeback (finance, support) may answer it, viewer and
// developer see no form and get 403; another merchant's chargeback or file is the 404 page.
// Method: the real app over HTTP, a cookie-jar client (plus a multipart POST built as a browser
// builds it), the signed API to make and check data.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatDate } from '../../src/platform/web/format.ts'
import type { TestApp } from '../helpers/app.ts'
import { startTestApp } from '../helpers/app.ts'
import { PDF, PNG, upload } from '../files/_support.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import {
  alertOf,
  csrfOf,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  tableText,
  textOf,
  type DashboardMerchant,
  type WebClient,
} from './_web.ts'

interface Cb {
  id: string
  status: string
  receivedAt: string
  evidenceDueBy: string
  resolution: string | null
}

async function raise(m: DashboardMerchant, paymentId: string) {
  const res = await m.client.request<Cb>('POST', `/v1/sandbox/payments/${paymentId}/chargebacks`, {
    body: { reasonCode: '4853' },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

async function apiChargeback(m: DashboardMerchant, paymentId: string, id: string) {
  const res = await m.client.request<{ items: Cb[] }>(
    'GET',
    `/v1/payments/${paymentId}/chargebacks`,
  )
  const cb = res.body.items.find((c) => c.id === id)
  assert.ok(cb)
  return cb
}

/** The API's draft (an evidence call that gives no field changes nothing and returns it). */
async function apiDraft(m: DashboardMerchant, paymentId: string, id: string) {
  const res = await m.client.request<{ evidence: Record<string, unknown> }>(
    'POST',
    `/v1/payments/${paymentId}/chargebacks/${id}/evidence`,
    { body: {} },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.evidence
}

/** A file posted as a browser posts the page's upload form (token from `fromPath`, or none). */
async function uploadForm(
  h: TestApp,
  web: WebClient,
  path: string,
  file: { bytes: Uint8Array; name: string; type: string },
  fromPath?: string,
) {
  const token = fromPath ? csrfOf((await web.get(fromPath)).text) : undefined
  const form = new FormData()
  if (token) form.set('_csrf', token)
  form.set('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name)
  const res = await fetch(h.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'accept-language': 'tr',
    },
    body: form,
  })
  return { status: res.status, text: await res.text(), location: res.headers.get('location') }
}

test('draft texts, files, submission with a confirmation, the PDF, and the bank’s outcome', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 40_000)
  const cb = await raise(m, paymentId)
  const path = `/dashboard/chargebacks/${cb.id}`
  const web = await signedIn(h, m)

  const page = await web.get(path)
  assert.equal(page.status, 200)
  assert.equal(
    textOf(page.text, 'evidence-due'),
    formatDate(new Date(cb.evidenceDueBy), 'tr', 'datetime'),
  )
  assert.match(page.text, /id="evidence-form"/)
  assert.match(page.text, /enctype="multipart\/form-data"/)
  assert.match(page.text, /Kabul et/, 'accept stays')

  const saved = await web.submit(
    `${path}/evidence`,
    {
      productDescription: 'Roman, 2 adet',
      shippingTrackingNumber: 'YK-123456',
      customerCommunication: '',
      refundPolicy: '',
      uncategorizedText: 'Teslim edildi. winning_evidence',
    },
    page,
  )
  assert.equal(saved.status, 303)
  assert.deepEqual(await apiDraft(m, paymentId, cb.id), {
    productDescription: 'Roman, 2 adet',
    shippingTrackingNumber: 'YK-123456',
    uncategorizedText: 'Teslim edildi. winning_evidence',
  })

  // A file as the browser sends it.
  const up = await uploadForm(
    h,
    web,
    `${path}/evidence/files`,
    {
      bytes: PDF,
      name: 'teslimat.pdf',
      type: 'application/pdf',
    },
    path,
  )
  assert.equal(up.status, 303, up.text.slice(0, 300))
  const png = await uploadForm(
    h,
    web,
    `${path}/evidence/files`,
    {
      bytes: PNG,
      name: 'ekran.png',
      type: 'image/png',
    },
    path,
  )
  assert.equal(png.status, 303)
  const fileIds = (await apiDraft(m, paymentId, cb.id))['fileIds'] as string[]
  assert.equal(fileIds.length, 2)
  const withFiles = await web.get(path)
  const files = tableText(withFiles.text, 'evidence-files')
  assert.ok(files.includes('PDF') && files.includes('PNG'), files)
  // Each file by the name it was uploaded with, not its id.
  assert.ok(files.includes('teslimat.pdf') && files.includes('ekran.png'), files)
  assert.doesNotMatch(files, /file_/)
  const download = await web.get(`${path}/files/${fileIds[0] ?? ''}`)
  assert.equal(download.status, 200)
  assert.ok(download.text.startsWith('%PDF'))

  // Content decides the type: a text file named .pdf is refused, and nothing is attached.
  const fake = await uploadForm(
    h,
    web,
    `${path}/evidence/files`,
    {
      bytes: Buffer.from('hello, not a pdf'),
      name: 'kanit.pdf',
      type: 'application/pdf',
    },
    path,
  )
  assert.equal(fake.status, 400)
  assert.match(alertOf(fake.text) ?? '', /PDF, PNG ya da JPEG/)
  // Without the CSRF token: 403, nothing attached.
  const noToken = await uploadForm(h, web, `${path}/evidence/files`, {
    bytes: PDF,
    name: 'a.pdf',
    type: 'application/pdf',
  })
  assert.equal(noToken.status, 403)
  assert.equal(((await apiDraft(m, paymentId, cb.id))['fileIds'] as string[]).length, 2)

  const removed = await web.submit(`${path}/evidence/files/${fileIds[1] ?? ''}/remove`, {}, path)
  assert.equal(removed.status, 303)
  assert.deepEqual((await apiDraft(m, paymentId, cb.id))['fileIds'], [fileIds[0]])

  // Submit: the texts are saved, the page asks; nothing is sent until confirmed.
  const ask = await web.submit(
    `${path}/evidence/submit`,
    {
      productDescription: 'Roman, 2 adet (ciltli)',
      shippingTrackingNumber: 'YK-123456',
      uncategorizedText: 'Teslim edildi. winning_evidence',
    },
    path,
  )
  assert.equal(ask.status, 200)
  assert.match(textOf(ask.text, 'confirm-text') ?? '', /₺400,00/)
  assert.equal((await apiChargeback(m, paymentId, cb.id)).status, 'received')
  assert.equal(
    (await apiDraft(m, paymentId, cb.id))['productDescription'],
    'Roman, 2 adet (ciltli)',
  )
  const sent = await web.submit(`${path}/evidence/submit`, { confirm: 'yes' }, ask)
  assert.equal(sent.status, 303)
  assert.equal((await apiChargeback(m, paymentId, cb.id)).status, 'under_review')
  const review = await web.get(path)
  assert.match(review.text, /role="status"[\s\S]*Kanıtlar gönderildi/)
  assert.equal(textOf(review.text, 'evidence-status'), 'İncelemede')
  assert.doesNotMatch(review.text, /id="evidence-form"/)
  const pdfHref = /id="evidence-pdf"/.test(review.text)
    ? /href="([^"]+)" id="evidence-pdf"/.exec(review.text)?.[1]
    : undefined
  assert.ok(pdfHref, 'a link to the evidence PDF')
  const pdf = await web.get(pdfHref)
  assert.equal(pdf.status, 200)
  assert.ok(pdf.text.startsWith('%PDF-'))
  // Under review: saving again is refused with its reason.
  const late = await web.submit(`${path}/evidence`, { productDescription: 'x' }, review)
  assert.equal(late.status, 409)
  assert.ok(alertOf(late.text))

  const ran = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(ran.status, 200)
  assert.equal((await apiChargeback(m, paymentId, cb.id)).resolution, 'won')
  const won = await web.get(path)
  assert.match(textOf(won.text, 'evidence-outcome') ?? '', /Kazanıldı/)

  const log = await auditText(web)
  for (const action of [
    'evidence_save',
    'evidence_file',
    'evidence_file_remove',
    'evidence_submit',
  ]) {
    assert.ok(log.includes(actionWords(`chargeback.${action}`)), action)
  }
})

test('refusals change nothing: too long a text, empty evidence, a resolved chargeback', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 10_000)
  const cb = await raise(m, paymentId)
  const path = `/dashboard/chargebacks/${cb.id}`
  const web = await signedIn(h, m)

  const long = await web.submit(
    `${path}/evidence`,
    { productDescription: 'ok', shippingTrackingNumber: 'x'.repeat(201) },
    path,
  )
  assert.equal(long.status, 400)
  assert.ok(textOf(long.text, 'f-shippingTrackingNumber-error'))
  assert.ok(alertOf(long.text))
  assert.deepEqual(await apiDraft(m, paymentId, cb.id), {})

  const ask = await web.submit(`${path}/evidence/submit`, {}, path)
  assert.equal(ask.status, 200, 'an empty draft is saved and the page asks')
  const empty = await web.submit(`${path}/evidence/submit`, { confirm: 'yes' }, ask)
  assert.equal(empty.status, 400)
  assert.match(alertOf(empty.text) ?? '', /Kanıt boş/)
  assert.equal((await apiChargeback(m, paymentId, cb.id)).status, 'received')

  assert.equal((await web.submit(`${path}/accept`, {}, path)).status, 303)
  const page = await web.get(path)
  assert.doesNotMatch(page.text, /id="evidence-form"|id="upload-form"/)
  const upload = await uploadForm(
    h,
    web,
    `${path}/evidence/files`,
    {
      bytes: PDF,
      name: 'a.pdf',
      type: 'application/pdf',
    },
    path,
  )
  assert.equal(upload.status, 409)
  assert.equal((await apiChargeback(m, paymentId, cb.id)).status, 'accepted')
})

test('roles and tenancy: finance answers, viewer and developer cannot; another merchant’s is 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const mine = await paidPayment(m, 10_000)
  const cb = await raise(m, mine.paymentId)
  const theirPayment = await paidPayment(other, 10_000)
  const theirs = await raise(other, theirPayment.paymentId)
  const path = `/dashboard/chargebacks/${cb.id}`

  for (const role of ['viewer', 'developer']) {
    const member = await memberWeb(h, m, role)
    const page = await member.get(path)
    assert.equal(page.status, 200)
    assert.doesNotMatch(page.text, /id="evidence-form"|id="upload-form"/, role)
    assert.equal(
      (await member.submit(`${path}/evidence`, { productDescription: 'x' }, page)).status,
      403,
    )
    const up = await uploadForm(
      h,
      member,
      `${path}/evidence/files`,
      {
        bytes: PDF,
        name: 'a.pdf',
        type: 'application/pdf',
      },
      path,
    )
    assert.equal(up.status, 403, role)
  }
  const finance = await memberWeb(h, m, 'finance')
  assert.equal((await forged(finance, `${path}/evidence`, { productDescription: 'x' })).status, 403)
  assert.deepEqual(await apiDraft(m, mine.paymentId, cb.id), {})

  const foreignPath = `/dashboard/chargebacks/${theirs.id}`
  assert.equal(
    (await finance.submit(`${foreignPath}/evidence`, { productDescription: 'x' }, path)).status,
    404,
  )
  const foreignUp = await uploadForm(
    h,
    finance,
    `${foreignPath}/evidence/files`,
    {
      bytes: PDF,
      name: 'a.pdf',
      type: 'application/pdf',
    },
    path,
  )
  assert.equal(foreignUp.status, 404)
  assert.deepEqual(await apiDraft(other, theirPayment.paymentId, theirs.id), {})

  // Their file, through my chargeback's URL: 404 as well.
  const theirFile = await upload(other, PDF)
  assert.equal(theirFile.status, 201)
  assert.equal((await finance.get(`${path}/files/${theirFile.body.id}`)).status, 404)
  const ok = await finance.submit(`${path}/evidence`, { productDescription: 'Kitap' }, path)
  assert.equal(ok.status, 303)
  assert.equal((await apiDraft(m, mine.paymentId, cb.id))['productDescription'], 'Kitap')
})
