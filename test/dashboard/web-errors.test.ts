// Goal: every error a dashboard form shows is in the page's language: in Turkish no English
// service text ("must not exceed the refundableAmount of 10000") and no amount in kuruş, but
// the sentence in Turkish with lira in Turkish notation (₺100,00); an impossible refund is
// refused at its field before the confirmation step; the refund field is prefilled as a
// Turkish reader writes an amount (900,00).
// Method: the forms posted with bad input over real HTTP (the WebClient of _web.ts, with the
// page's CSRF token); the alert and the field errors read from the returned page.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { startTestApp } from '../helpers/app.ts'
import {
  WebClient,
  alertOf,
  apiPayment,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  type Page,
} from './_web.ts'

/** The alert and every field error of a page, tags stripped. */
function errorsOf(page: Page): string[] {
  const fieldErrors = [...page.text.matchAll(/class="field-error"[^>]*>([\s\S]*?)<\/p>/g)].map(
    (m) => m[1] ?? '',
  )
  return [alertOf(page.text) ?? '', ...fieldErrors]
    .map((s) =>
      s
        .replace(/<[^>]+>/g, '')
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"')
        .replace(/&gt;/g, '>')
        .replace(/&lt;/g, '<')
        .replace(/&amp;/g, '&')
        .trim(),
    )
    .filter(Boolean)
}

const ENGLISH =
  /\b(must|should|not|the|is|are|of|be|required|invalid|exceeds?|characters?|missing|allowed|unknown|refundableAmount|amount|password|email)\b/i

/** A Turkish error: shown, no English word, no bare integer of kuruş. */
function assertTurkish(page: Page, label: string): string {
  const errors = errorsOf(page)
  assert.ok(errors.length > 0, `${label}: an error is shown (status ${page.status})`)
  for (const shown of errors) {
    // A sample of code to type (a JSON condition) is code, not words.
    const text = shown.replace(/\{.*\}/g, '{…}')
    assert.doesNotMatch(text, ENGLISH, `${label}: English in "${text}"`)
    assert.doesNotMatch(text, /(?<![₺\d.,])\d{4,}(?![\d,])/, `${label}: kuruş in "${text}"`)
  }
  return errors.join(' | ')
}

test('refund errors: at the field, in Turkish lira, before the confirmation step', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 10_000)
  const web = await signedIn(h, m)
  const detail = await web.get(`/dashboard/payments/${paymentId}`)
  // Prefilled as a Turkish reader writes it.
  assert.match(detail.text, /id="f-amount"[^>]*value="100,00"/)
  const key = /name="idempotencyKey" value="([^"]+)"/.exec(detail.text)?.[1] ?? ''

  // More than the refundable amount: refused at the field, no confirmation page.
  const tooMuch = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: '200', idempotencyKey: key },
    detail,
  )
  assert.equal(tooMuch.status, 400)
  assert.doesNotMatch(tooMuch.text, /İadeyi onaylayın/)
  const said = assertTurkish(tooMuch, 'refund over the refundable amount')
  assert.match(said, /iade edilebilir tutarı \(₺100,00\) aşamaz/)
  assert.match(
    tooMuch.text,
    /id="f-amount"[^>]*value="200"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*/,
  )

  // The same refused by the service (sent as if confirmed): the same words.
  const confirmed = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: '200', idempotencyKey: key, confirm: 'yes' },
    detail,
  )
  assert.equal(confirmed.status, 400)
  assert.match(assertTurkish(confirmed, 'refund refused by the service'), /₺100,00/)

  // Not an amount.
  const junk = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: 'yüz lira', idempotencyKey: key },
    detail,
  )
  assert.equal(junk.status, 400)
  assertTurkish(junk, 'refund of no amount')
  assert.equal((await apiPayment(m, paymentId))['refundAmount'], 0)

  // English pages keep English, in lira too.
  web.lang = 'en'
  const en = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: '200', idempotencyKey: key, confirm: 'yes' },
    `/dashboard/payments/${paymentId}?lang=en`,
  )
  assert.match(alertOf(en.text) ?? '', /refundable amount \(₺100\.00\)/)
  assert.doesNotMatch(alertOf(en.text) ?? '', /10000/)
})

test('the other forms with bad input: every error in Turkish, no kuruş', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)

  const cases: { label: string; path: string; from: string; fields: Record<string, string> }[] = [
    {
      label: 'payment link of no amount',
      path: '/dashboard/payment-links',
      from: '/dashboard/payment-links/new',
      fields: { storeId: m.storeId, amount: 'abc', description: 'Kupa' },
    },
    {
      label: 'invoice line of no price',
      path: '/dashboard/invoices',
      from: '/dashboard/invoices/new',
      fields: {
        storeId: m.storeId,
        line0Name: 'Roman',
        line0Qty: '1',
        line0Price: 'on lira',
      },
    },
    {
      label: 'team invitation to no email',
      path: '/dashboard/settings/team/invite',
      from: '/dashboard/settings',
      fields: { email: 'not-an-email', role: 'viewer' },
    },
    {
      label: 'block list: not an IP address',
      path: '/dashboard/risk/lists/ip/items',
      from: '/dashboard/risk/lists/ip',
      fields: { value: 'no-such-ip' },
    },
    {
      label: 'report of a reversed period',
      path: '/dashboard/reports',
      from: '/dashboard/reports',
      fields: { type: 'balance_summary', format: 'csv', from: '2026-11-20', to: '2026-11-01' },
    },
    {
      label: 'webhook to no URL',
      path: '/dashboard/developers/webhooks',
      from: '/dashboard/developers',
      fields: { storeId: m.storeId, url: 'not a url' },
    },
    {
      label: 'payout CSV without rows',
      path: '/dashboard/payouts/drafts',
      from: '/dashboard/payouts/drafts/new',
      fields: { storeId: m.storeId, csv: 'rail,dest,holderName,amountMinor' },
    },
    {
      label: 'risk rule with a condition that is not JSON',
      path: '/dashboard/risk/rules',
      from: '/dashboard/risk/rules',
      fields: { name: 'Kural', action: 'review', condition: '{ nope' },
    },
  ]
  for (const c of cases) {
    const page = await web.submit(c.path, c.fields, c.from)
    assert.notEqual(page.status, 303, `${c.label}: accepted (${page.location ?? ''})`)
    assertTurkish(page, c.label)
  }

  // A short password on an invitation (a page before sign-in).
  const email = `yeni-${crypto.randomUUID()}@example.com`
  const invited = await web.submit(
    '/dashboard/settings/team/invite',
    { email, role: 'viewer' },
    '/dashboard/settings',
  )
  assert.equal(invited.status, 303)
  const [mail] = await listMailbox(h.deps, { to: email, limit: 1 })
  const link = /\/dashboard\/invite\/[\w-]+/.exec(mail?.text ?? '')?.[0] ?? ''
  const guest = new WebClient(h.url)
  const short = await guest.submit(link, { password: 'kısa', passwordConfirm: 'kısa' }, link)
  assert.equal(short.status, 400)
  assert.match(assertTurkish(short, 'a short password'), /Şifre en az \d+ karakter olmalı/)
})

test('the POS account form with bad input: in Turkish, next to its field, nothing created', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const form = await web.get('/dashboard/pos/new?provider=garanti')
  assert.equal(form.status, 200)
  const cases: { label: string; field: string; fields: Record<string, string> }[] = [
    {
      label: 'POS without its provision password',
      field: 'cred_provisionPassword',
      fields: { name: 'Garanti', cred_provisionPassword: '' },
    },
    {
      label: 'POS of a name too long',
      field: 'name',
      fields: { name: 'G'.repeat(150) },
    },
    {
      label: 'POS without its store key',
      field: 'cred_storeKey',
      fields: { name: 'Garanti', cred_storeKey: '' },
    },
  ]
  for (const c of cases) {
    const page = await web.submit(
      '/dashboard/pos',
      {
        provider: 'garanti',
        environment: 'test',
        cred_merchantId: '7000679',
        cred_terminalId: '30691298',
        cred_provisionUser: 'PROVAUT',
        cred_provisionPassword: '123qweASD/',
        cred_storeKey: '12345678',
        ...c.fields,
      },
      form,
    )
    assert.equal(page.status, 400, `${c.label}: ${page.status} ${page.location ?? ''}`)
    assertTurkish(page, c.label)
    // The error sits in the field's own block, the field marked invalid.
    const block = new RegExp(
      `<input\\s+id="f-${c.field}"[^>]*aria-invalid="true"[\\s\\S]*?class="field-error" id="f-${c.field}-error"`,
    )
    assert.match(page.text.replace(/\n\s*/g, ' '), block, c.label)
  }
  const none = await m.client.request<{ items: unknown[] }>('GET', '/v1/pos-accounts')
  assert.equal(none.body.items.length, 0)
})
