// Goal: the team-invite form says nothing about whether an email has an account (issue 36,
// finding 8): inviting an email that has an account at another merchant answers exactly as
// inviting a new one; that person is told by email instead (no link), and nothing lets the
// invitation make a second account.
// Method: the real app over HTTP; the demo mailbox read.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { alertOf, newDashboardMerchant, signedIn } from './_web.ts'

test('inviting an email with an account answers as for a new one; the mail tells them instead', async (t) => {
  const h = await startTestApp(t)
  const a = await newDashboardMerchant(h, 'Birinci')
  const b = await newDashboardMerchant(h, 'İkinci')
  const owner = await signedIn(h, a)
  const fresh = `new-${crypto.randomUUID()}@example.com`
  const answers = []
  for (const email of [fresh, b.email]) {
    const res = await owner.submit(
      '/dashboard/settings/team/invite',
      { email, role: 'viewer' },
      '/dashboard/settings',
    )
    answers.push({ status: res.status, location: res.location, alert: alertOf(res.text) })
  }
  assert.deepEqual(answers[1], answers[0])
  assert.equal(answers[0]?.status, 303)

  const [toExisting] = await listMailbox(h.deps, { to: b.email, limit: 1 })
  assert.ok(toExisting, 'the existing account is told by email')
  assert.doesNotMatch(toExisting.text, /\/dashboard\/invite\//)
  assert.match(toExisting.text, /already have a Kuruş dashboard account/)
  const [toNew] = await listMailbox(h.deps, { to: fresh, limit: 1 })
  assert.match(toNew?.text ?? '', /\/dashboard\/invite\//)
})
