// Goal: file uploads (CONTRACT.md "Dispute evidence"): the type is read from the content (never
// the name or the declared Content-Type), 5 MiB is the limit (413 beyond), another type is 400,
// the multipart body is signed like any other, and another merchant's file is 404.
// Method: signed multipart requests built by the SDK against the real app.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { multipartForm } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { JPEG, PDF, PNG, upload, type FileBody } from './_support.ts'

const MiB = 1024 * 1024

test('the type comes from the content, not the name or the declared type', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const cases: [Buffer, string, string, string][] = [
    [PDF, 'pdf', 'photo.png', 'image/png'],
    [PNG, 'png', 'letter.pdf', 'application/pdf'],
    [JPEG, 'jpeg', 'scan.png', 'image/png'],
  ]
  for (const [bytes, type, filename, contentType] of cases) {
    const res = await upload(m, bytes, { filename, contentType })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.match(res.body.id, /^file_/)
    assert.equal(res.body.type, type)
    assert.equal(res.body.purpose, 'dispute_evidence')
    assert.equal(res.body.size, bytes.length)
    assert.equal(res.body.sha256, createHash('sha256').update(bytes).digest('hex'))
    assert.match(res.body.createdAt, /Z$/)

    const facts = await m.client.request<FileBody>('GET', `/v1/files/${res.body.id}`)
    assert.equal(facts.status, 200)
    assert.deepEqual(facts.body, res.body)
    const contents = await m.client.request<Buffer>('GET', `/v1/files/${res.body.id}/contents`)
    assert.equal(contents.status, 200)
    assert.equal(
      contents.headers.get('content-type'),
      { pdf: 'application/pdf', png: 'image/png', jpeg: 'image/jpeg' }[type],
    )
    assert.ok(Buffer.from(contents.body).equals(bytes), `${type} round-trips byte for byte`)
  }

  // Text dressed up as a PDF, a GIF, an empty file: 400.
  for (const [bytes, filename] of [
    [Buffer.from('just some text, not a PDF'), 'contract.pdf'],
    [Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), 'x.png'],
    [Buffer.alloc(0), 'empty.pdf'],
    [Buffer.from(' %PDF-1.4'), 'late-header.pdf'],
  ] as const) {
    const res = await upload(m, bytes, { filename, contentType: 'application/pdf' })
    assert.equal(res.status, 400, `${filename}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
})

test('5 MiB is accepted, one byte more is 413, far more is 413 before it is read', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const at = Buffer.concat([PDF, Buffer.alloc(5 * MiB - PDF.length, 0x20)])
  const ok = await upload(m, at)
  assert.equal(ok.status, 201, JSON.stringify(ok.body))
  assert.equal(ok.body.size, 5 * MiB)
  const contents = await m.client.request<Buffer>('GET', `/v1/files/${ok.body.id}/contents`)
  assert.equal(createHash('sha256').update(contents.body).digest('hex'), ok.body.sha256)

  const over = await upload(m, Buffer.concat([at, Buffer.from(' ')]))
  assert.equal(over.status, 413, JSON.stringify(over.body))
  assert.equal(over.body.code, 'SVC-VAL-3003')
  const far = await upload(m, Buffer.concat([PDF, Buffer.alloc(8 * MiB, 0x20)]))
  assert.equal(far.status, 413)
  assert.equal(far.body.code, 'SVC-VAL-3003')
})

test('the form: purpose is required and checked, unknown fields and JSON are refused', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const noPurpose = await upload(m, PDF, { fields: {} })
  assert.equal(noPurpose.status, 400)
  assert.equal(noPurpose.body.code, 'SVC-VAL-3001')
  const wrong = await upload(m, PDF, { fields: { purpose: 'identity_document' } })
  assert.equal(wrong.status, 400)
  const extra = await upload(m, PDF, { fields: { purpose: 'dispute_evidence', note: 'x' } })
  assert.equal(extra.status, 400)
  assert.match(extra.body.message ?? '', /note/)
  const json = await m.client.request<FileBody>('POST', '/v1/files', {
    body: { purpose: 'dispute_evidence', file: 'JVBERi0=' },
  })
  assert.equal(json.status, 415)
  assert.equal(json.body.code, 'SVC-VAL-3004')
  const broken = await m.client.request<FileBody>('POST', '/v1/files', {
    rawBody: Buffer.from(
      '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\n%PDF',
    ),
    contentType: 'multipart/form-data; boundary=x',
  })
  assert.equal(broken.status, 400)
  // Other routes still take JSON only.
  const elsewhere = await m.client.request<FileBody>('POST', '/v1/payment-links', {
    rawBody: multipartForm(
      { purpose: 'dispute_evidence' },
      { field: 'file', filename: 'a', bytes: PDF },
    ).body,
    contentType: 'multipart/form-data; boundary=x',
  })
  assert.equal(elsewhere.status, 415)
})

test('the signature covers the multipart bytes', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const form = multipartForm(
    { purpose: 'dispute_evidence' },
    { field: 'file', filename: 'a.pdf', bytes: PDF },
  )
  // Sign the form, then send it with one byte of the file changed.
  let signedBody: Uint8Array | undefined
  const tampering = h.clientFor({ publicKey: m.publicKey, secretKey: m.secretKey })
  const fetchTampered: typeof fetch = (url, init) => {
    const sent = Buffer.from(init?.body as Uint8Array)
    signedBody = sent
    const copy = Buffer.from(sent)
    const at = copy.indexOf('%PDF')
    copy[at + 5] = 0x39
    return fetch(url, { ...init, body: copy })
  }
  Object.assign(tampering, {
    options: { ...(tampering as unknown as { options: object }).options, fetch: fetchTampered },
  })
  const res = await tampering.request<FileBody>('POST', '/v1/files', {
    rawBody: form.body,
    contentType: form.contentType,
  })
  assert.ok(signedBody)
  assert.equal(res.status, 401, JSON.stringify(res.body))
  assert.equal(res.body.code, 'SVC-GW-1002')
})

test("another merchant's file is 404, like one that does not exist", async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const file = await upload(a, PDF)
  assert.equal(file.status, 201)
  for (const path of [`/v1/files/${file.body.id}`, `/v1/files/${file.body.id}/contents`]) {
    const theirs = await b.client.request<FileBody>('GET', path)
    assert.equal(theirs.status, 404, path)
    assert.equal(theirs.body.code, 'SVC-RES-3301')
    const none = await b.client.request<FileBody>('GET', path.replace(file.body.id, 'file_nope'))
    assert.equal(none.status, 404)
    assert.equal(theirs.body.message, none.body.message)
  }
})
