// Goal: webhooks.verify accepts a delivery signed as Kuruş signs it (Standard Webhooks), over
// the exact bytes, through a secret rotation, from Node or Fetch headers; and refuses a
// tampered body, another secret, a stale timestamp or a missing header.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { Kurus, KurusWebhookError, webhooks } from '../src/index.ts'

const secret = `whsec_${randomBytes(32).toString('base64')}`
const body = JSON.stringify({
  id: 'evt_1',
  type: 'payment.captured',
  createdAt: '2026-11-22T10:00:00.000Z',
  sequence: 2,
  data: { id: 'pay_1', status: 'captured', holderName: 'Ayşe Yılmaz' },
})

function delivery(at = new Date(), secrets = [secret]) {
  return {
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => webhooks.sign(s, 'evt_1', at, body)).join(' '),
  }
}

test('a delivery verifies from a string, a Buffer, Node headers and Fetch Headers', () => {
  const headers = delivery()
  const event = webhooks.verify(body, headers, secret)
  assert.equal(event.type, 'payment.captured')
  assert.equal(event.sequence, 2)
  assert.equal(event.data['holderName'], 'Ayşe Yılmaz')
  assert.equal(webhooks.verify(Buffer.from(body), new Headers(headers), secret).id, 'evt_1')
  const nodeStyle = Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k.toUpperCase(), [v]]),
  )
  assert.equal(webhooks.verify(body, nodeStyle, secret).id, 'evt_1')
  const kurus = new Kurus({ publicKey: 'pk_demo_x', secretKey: 'sk_demo_x' })
  assert.equal(kurus.webhooks.verify(body, headers, secret).id, 'evt_1')
})

test('during a rotation either secret verifies (two v1 signatures)', () => {
  const next = `whsec_${randomBytes(32).toString('base64')}`
  const headers = delivery(new Date(), [next, secret])
  assert.equal(webhooks.verify(body, headers, secret).id, 'evt_1')
  assert.equal(webhooks.verify(body, headers, next).id, 'evt_1')
})

test('tampered body, another secret, a stale timestamp or a missing header are refused', () => {
  const headers = delivery()
  assert.throws(() => webhooks.verify(body.replace('2', '3'), headers, secret), KurusWebhookError)
  const other = `whsec_${randomBytes(32).toString('base64')}`
  assert.throws(() => webhooks.verify(body, headers, other), KurusWebhookError)
  const stale = delivery(new Date(Date.now() - 10 * 60_000))
  assert.throws(() => webhooks.verify(body, stale, secret), /timestamp/i)
  const { ['webhook-signature']: _, ...unsigned } = headers
  assert.throws(() => webhooks.verify(body, unsigned, secret), /missing webhook-signature/)
})
