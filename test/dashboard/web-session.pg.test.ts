// Goal: the dashboard's web sign-in and its server-side session: one generic error for any
// failed sign-in, the operator API's credentials work, the cookie's flags, 30 minutes idle and
// 12 hours absolute (moved by the clock), sign-out ending the session on the server, and the
// audit entries for signing in and out. Method: the real app over HTTP with a cookie jar.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { WebClient, alertOf, h1Count, newDashboardMerchant, signedIn, tableText } from './_web.ts'

const MINUTE = 60_000

test('sign-in: a wrong password and an unknown email get one message in role="alert"; the right one lands on /dashboard', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = new WebClient(h.url)

  const form = await web.get('/dashboard/login')
  assert.equal(form.status, 200)
  assert.match(form.text, /<input[^>]*name="email"[^>]*autocomplete="username"/)
  assert.match(form.text, /<input[^>]*name="password"[^>]*autocomplete="current-password"/)
  assert.equal((form.text.match(/type="submit"/g) ?? []).length, 1)
  assert.match(form.text, /Giriş yap/)
  assert.equal(h1Count(form.text), 1)

  const wrong = await web.signIn(m.email, `${m.password}x`)
  const unknown = await web.signIn(`nobody-${m.email}`, m.password)
  for (const page of [wrong, unknown]) {
    assert.equal(page.status, 401)
    assert.ok(alertOf(page.text), 'an alert')
  }
  assert.equal(alertOf(wrong.text), alertOf(unknown.text))
  assert.doesNotMatch(alertOf(wrong.text) ?? '', /şifreniz|e-posta bulunamadı/i)

  const ok = await web.signIn(m.email, m.password)
  assert.equal(ok.status, 303)
  assert.equal(ok.location, '/dashboard')
  const cookie = ok.setCookies.find((c) => c.startsWith('kurus_dash='))
  assert.ok(cookie, 'a session cookie')
  assert.match(cookie, /HttpOnly/i)
  assert.match(cookie, /SameSite=Lax/i)
  assert.match(cookie, /Path=\/dashboard/)
  assert.doesNotMatch(cookie, /Secure/i, 'no Secure flag on plain http')

  const home = await web.get('/dashboard')
  assert.equal(home.status, 200)
  assert.equal(h1Count(home.text), 1)
  assert.equal((home.text.match(/<nav[\s>]/g) ?? []).length, 1)
  assert.match(home.text, /Genel bakış/)
  assert.match(home.text, /Çıkış/)
})

test('the session cookie is Secure when the public URL is https', async (t) => {
  const h = await startTestApp(t, { env: { PUBLIC_API_URL: 'https://pay.example.com' } })
  const m = await newDashboardMerchant(h)
  const web = new WebClient(h.url)
  const ok = await web.signIn(m.email, m.password)
  assert.equal(ok.status, 303)
  assert.match(ok.setCookies.find((c) => c.startsWith('kurus_dash=')) ?? '', /; Secure/i)
})

test('without a session every page sends the browser to sign in', async (t) => {
  const h = await startTestApp(t)
  const web = new WebClient(h.url)
  for (const path of ['/dashboard', '/dashboard/payments', '/dashboard/settings/audit-log']) {
    const page = await web.get(path)
    assert.equal(page.status, 303, path)
    assert.equal(page.location, '/dashboard/login')
  }
  // A forged session id is no session.
  web.cookies.set('kurus_dash', 'A'.repeat(43))
  assert.equal((await web.get('/dashboard')).location, '/dashboard/login')
})

test('30 minutes without a request end the session; activity keeps it alive', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  h.clock.advance(29 * MINUTE)
  assert.equal((await web.get('/dashboard')).status, 200)
  h.clock.advance(29 * MINUTE)
  assert.equal((await web.get('/dashboard')).status, 200, 'the last request restarted the wait')
  h.clock.advance(30 * MINUTE + 1000)
  const idle = await web.get('/dashboard')
  assert.equal(idle.status, 303)
  assert.equal(idle.location, '/dashboard/login')
  // Ended on the server: going back in time does not bring it back.
  h.clock.advance(-31 * MINUTE)
  assert.equal((await web.get('/dashboard')).status, 303)
})

test('12 hours after sign-in the session ends however active it is', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  for (let i = 0; i < 35; i++) {
    h.clock.advance(20 * MINUTE)
    assert.equal((await web.get('/dashboard/payments')).status, 200, `after ${(i + 1) * 20} min`)
  }
  h.clock.advance(20 * MINUTE)
  const page = await web.get('/dashboard/payments')
  assert.equal(page.status, 303, 'past 12 h')
  assert.equal(page.location, '/dashboard/login')
})

test('sign-out ends the session on the server: the old cookie no longer works', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const stolen = web.cookies.get('kurus_dash')
  assert.ok(stolen)
  const out = await web.submit('/dashboard/logout', {}, '/dashboard')
  assert.equal(out.status, 303)
  assert.equal(out.location, '/dashboard/login')
  assert.equal(web.cookies.get('kurus_dash'), undefined, 'the browser forgets it')
  const after = await web.get('/dashboard/login')
  assert.match(after.text, /Çıkış yaptınız/)

  const replay = new WebClient(h.url)
  replay.cookies.set('kurus_dash', stolen)
  const page = await replay.get('/dashboard')
  assert.equal(page.status, 303)
  assert.equal(page.location, '/dashboard/login')
})

test('signing in and out are in the audit log with the user, the action and the time', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  await web.submit('/dashboard/logout', {}, '/dashboard')
  const again = await signedIn(h, m)
  const log = await again.get('/dashboard/settings/audit-log')
  assert.equal(log.status, 200)
  const rows = tableText(log.text, 'audit-table')
  // The actions in words (not session.sign_in / session.sign_out).
  assert.equal((rows.match(/Oturum açıldı/g) ?? []).length, 2)
  assert.equal((rows.match(/Oturum kapatıldı/g) ?? []).length, 1)
  assert.ok(!rows.includes('session.sign_in'))
  assert.ok(rows.includes(m.email), 'the actor is named')
})

test('the language switch: ?lang=en is kept in a cookie and sets <html lang>', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const en = await web.get('/dashboard?lang=en')
  assert.match(en.text, /<html lang="en"/)
  assert.match(en.text, /Overview/)
  assert.match(en.text, /Sign out/)
  const next = await web.get('/dashboard/payments')
  assert.match(next.text, /<html lang="en"/, 'remembered')
  assert.match(next.text, /Payments/)
  const tr = await web.get('/dashboard?lang=tr')
  assert.match(tr.text, /<html lang="tr"/)
})
