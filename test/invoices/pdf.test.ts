// Goal: the invoice PDF is a real invoice: it renders (pdftoppm), its text (pdftotext) holds
// the merchant, the buyer, every line, the totals in Turkish format ("1.234,56 ₺"), the dates
// and the pay link, and it embeds the link's QR code as an image; long invoices break pages.
// The formatter is integer-exact. Method: signed and public PDF endpoints, poppler-utils.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { formatTryTr } from '../../src/modules/invoices/money-format.ts'
import { startTestApp } from '../helpers/app.ts'
import {
  activatedInvoice,
  browser,
  createInvoice,
  pdfImages,
  pdfInfo,
  pdfText,
  renderFirstPage,
  storedStatus,
} from './_support.ts'

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

test('formatTryTr: Turkish grouping, decimal comma, the lira sign after', () => {
  assert.equal(formatTryTr(0), '0,00 ₺')
  assert.equal(formatTryTr(5), '0,05 ₺')
  assert.equal(formatTryTr(100), '1,00 ₺')
  assert.equal(formatTryTr(123_456), '1.234,56 ₺')
  assert.equal(formatTryTr(100_000_000), '1.000.000,00 ₺')
  assert.equal(formatTryTr(10_000_000_000), '100.000.000,00 ₺')
  assert.equal(formatTryTr(-123_456), '-1.234,56 ₺')
  assert.throws(() => formatTryTr(1.5))
})

test('formatTryTr agrees with BigInt arithmetic for every safe integer', () => {
  fc.assert(
    fc.property(fc.maxSafeNat(), (minor) => {
      const text = formatTryTr(minor)
      const digits = text.replace(' ₺', '').replaceAll('.', '').replace(',', '')
      assert.equal(BigInt(digits), BigInt(minor))
      assert.match(text, /^\d{1,3}(\.\d{3})*,\d{2} ₺$/)
    }),
  )
})

test('the PDF renders and holds the merchant, buyer, lines, totals, dates and pay link', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Anadolu Kitap Ltd. Şti.' })
  const invoice = await createInvoice(m, {
    dueDate: '2027-02-28T09:00:00Z',
    expiresAt: '2030-01-01T00:00:00Z',
    notes: 'Havale için IBAN: TR33 0006 1005 1978 6457 8413 26',
  })
  const res = await m.client.request<Buffer>('GET', `/v1/invoices/${invoice.id}/pdf`)
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'application/pdf')
  assert.match(res.headers.get('content-disposition') ?? '', new RegExp(`${invoice.id}\\.pdf`))
  const pdf = res.body
  assert.ok(Buffer.isBuffer(pdf))
  assert.equal(pdf.subarray(0, 5).toString(), '%PDF-')

  const png = renderFirstPage(pdf)
  assert.ok(png.subarray(0, 8).equals(PNG_SIGNATURE), 'pdftoppm wrote a PNG')
  assert.ok(png.length > 5_000, `page 1 renders to something (${png.length} bytes)`)

  const info = pdfInfo(pdf)
  assert.equal(info['Pages'], '1')
  assert.equal(info['Title'], `Ödeme talebi ${invoice.id}`)

  const text = pdfText(pdf)
  for (const expected of [
    'Anadolu Kitap Ltd. Şti.',
    // Not a tax invoice, and it says so (decision 0030).
    'ÖDEME TALEBİ',
    'Fatura yerine geçmez (not a tax invoice)',
    invoice.id,
    'Ayşe Yılmaz',
    'ayse@example.com',
    'Kitap: İstanbul Hatırası',
    'Kargo ücreti',
    '450,00 ₺',
    '900,00 ₺',
    '334,56 ₺',
    'Genel toplam (TRY)',
    '1.234,56 ₺',
    'Son ödeme tarihi: 28.02.2027',
    'Bağlantı geçerliliği: 01.01.2030',
    'Durum: Taslak',
    'Havale için IBAN',
    invoice.url,
  ]) {
    assert.ok(text.includes(expected), `PDF text has ${JSON.stringify(expected)}:\n${text}`)
  }
  // The QR code of the pay link is embedded as an image.
  const images = pdfImages(pdf).filter((row) => row[2] === 'image')
  assert.equal(images.length, 1, JSON.stringify(images))
  assert.deepEqual(images[0]?.slice(3, 5), ['336', '336'])
  // Rendering is a read: the invoice is still a draft.
  assert.equal(await storedStatus(h, invoice.id), 'draft')
})

test('the public PDF is the same invoice, and a paid one says so', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Boğaziçi Çiçek' })
  const invoice = await activatedInvoice(m)
  const open = await browser(h, 'GET', `/v1/public/invoices/${invoice.publicHash}/pdf`)
  assert.equal(open.status, 200)
  assert.equal(open.headers.get('content-type'), 'application/pdf')
  assert.equal(open.headers.get('cache-control'), 'no-store')
  const openText = pdfText(open.bytes)
  assert.ok(openText.includes('Boğaziçi Çiçek'))
  assert.ok(openText.includes('1.234,56 ₺'))
  assert.ok(openText.includes('Çevrimiçi ödeme'))
  assert.ok(openText.includes(invoice.url))

  const pay = await browser<{ sessionId: string }>(
    h,
    'POST',
    `/v1/public/invoices/${invoice.publicHash}/pay`,
    {},
  )
  const charged = await browser<{ paymentId: string }>(
    h,
    'POST',
    `/v1/public/sessions/${pay.body.sessionId}/pay`,
    {
      card: {
        number: '4155650100416111',
        expMonth: 12,
        expYear: 2030,
        cvc: '123',
        holderName: 'Ayşe Yılmaz',
      },
    },
  )
  assert.equal(charged.status, 201, charged.text)
  const viewed = await m.client.request<{ status: string }>('GET', `/v1/invoices/${invoice.id}`)
  assert.equal(viewed.body.status, 'paid')
  const paid = await browser(h, 'GET', `/v1/public/invoices/${invoice.publicHash}/pdf`)
  const paidText = pdfText(paid.bytes)
  assert.ok(paidText.includes('ÖDENDİ'), paidText)
  assert.ok(paidText.includes(charged.body.paymentId))
  assert.ok(paidText.includes('Durum: Ödendi'))
})

test('a 100-line invoice breaks across pages and keeps its total', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const lines = Array.from({ length: 100 }, (_, i) => ({
    name: `Kalem ${i + 1}: ${'uzun açıklama '.repeat(i % 7 === 0 ? 8 : 1)}`.trim(),
    qty: (i % 5) + 1,
    unitPriceMinor: 1_234 + i,
    lineTotalMinor: ((i % 5) + 1) * (1_234 + i),
  }))
  const total = lines.reduce((sum, l) => sum + l.lineTotalMinor, 0)
  const invoice = await createInvoice(m, { lineItems: lines, amountMinor: total })
  const res = await m.client.request<Buffer>('GET', `/v1/invoices/${invoice.id}/pdf`)
  assert.equal(res.status, 200)
  const pages = Number(pdfInfo(res.body)['Pages'])
  assert.ok(pages >= 3, `${pages} pages`)
  const text = pdfText(res.body)
  assert.ok(text.includes('Kalem 1:'))
  assert.ok(text.includes('Kalem 100:'))
  assert.ok(text.includes(formatTryTr(total)), formatTryTr(total))
  // The column header repeats on every page with lines.
  const withLines = text.split('\f').filter((page) => page.includes('Kalem '))
  assert.ok(withLines.length >= 2)
  for (const page of withLines) assert.ok(page.includes('Birim fiyat'))
})
