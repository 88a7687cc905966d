// Goal: master-key rotation (PCI DSS 3.6/3.7 key management): with a new KURUS_MASTER_KEY and the
// old one in KURUS_MASTER_KEY_PREVIOUS, old card tokens still charge; rotateMasterKey re-wraps
// every data key under the new key without touching PAN ciphertexts, is safe to run twice, and
// reports (never loses) rows under a key it does not hold. The other secrets sealed under the
// master key (API key secrets, webhook signing secrets, invoice link bearers) are readable
// during the rotation, re-encrypted by `kurus rotate-master-key` (rotateMasterKeyEverywhere),
// and afterwards the new key alone serves them; a secret rolled during the rotation is kept.
// Method: an app on master key K1 tokenizes; a second app over the same database on K2 (K1 as
// previous) charges the old tokens through the signed API, then the rotation runs and the rows
// are read back; detokenization then works with K2 alone. For the other secrets, a third app on
// K2 alone signs requests with the old API key, delivers webhooks a real receiver verifies with
// the endpoint's secrets, and shows the invoice's unchanged link.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Db } from '../../src/database.ts'
import { detokenize, rotateMasterKey } from '../../src/modules/vault/index.ts'
import { masterKeyId } from '../../src/modules/vault/vault.crypto.ts'
import { rotateMasterKeyEverywhere } from '../../src/rotation.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { createInvoice, getInvoice } from '../invoices/_support.ts'
import {
  addEndpoint,
  authorizedPayment,
  dashboardFetch,
  login,
  newDashboardMerchant,
  reconcile,
  signedWith,
  startReceiver,
  type DashboardMerchant,
} from '../webhooks/_support.ts'
import { CARDS } from '../helpers/payments.ts'
import { tokenize, type World } from './_catalog.ts'
import { clientFor, newActor, signed, type Actor } from './_support.ts'

const K1 = Buffer.alloc(32, 7) // the test apps' default master key
const K2 = Buffer.alloc(32, 11)
const K0 = Buffer.alloc(32, 3)

async function chargeWith(w: World, m: Actor, cardToken: string) {
  const transactionId = `rot-${cardToken}`
  const s = await signed(w.h, m, {
    method: 'POST',
    path: '/v1/payments/sessions',
    body: JSON.stringify({
      transactionId,
      amount: 4_200,
      currency: 'TRY',
      returnUrl: 'https://shop.example/r',
    }),
  })
  assert.equal(s.status, 201, s.text)
  return signed(w.h, m, {
    method: 'POST',
    path: '/v1/payments/card',
    body: JSON.stringify({ transactionId, amount: 4_200, currency: 'TRY', cardToken }),
  })
}

test('master-key rotation: old tokens still charge, data keys are re-wrapped', async (t) => {
  const h1 = await startTestApp(t)
  assert.ok(h1.config.masterKey.equals(K1))
  const m = await newActor(h1, { name: 'Rotating' })
  const w1: World = { h: h1, receiverUrl: 'http://127.0.0.1:9/hooks' }
  const old = [
    await tokenize(w1, m, CARDS.frictionless),
    await tokenize(w1, m, CARDS.debit),
    await tokenize(w1, m, CARDS.troy),
  ]
  const rowsOf = (ids: string[]) =>
    h1.deps.db
      .selectFrom('vault_card_tokens')
      .select(['id', 'kek_id', 'dek_wrapped', 'pan_enc'])
      .where('id', 'in', ids)
      .orderBy('id')
      .execute()
  const before = await rowsOf(old)
  assert.ok(before.every((r) => r.kek_id === masterKeyId(K1)))

  // The new key is deployed; the old one stays readable as "previous".
  const h2 = await startTestApp(t, {
    database: h1.database,
    config: { masterKey: K2, masterKeyPrevious: [K1] },
  })
  const m2: Actor = { ...m, client: clientFor(h2, m) }
  const w2: World = { h: h2, receiverUrl: w1.receiverUrl }
  const first = await chargeWith(w2, m2, old[0] ?? '')
  assert.equal(first.status, 201, first.text)
  assert.equal((first.json as { status: string }).status, 'captured')
  // New tokens are sealed under the new key at once.
  const fresh = await tokenize(w2, m2, CARDS.frictionless)
  assert.equal((await rowsOf([fresh]))[0]?.kek_id, masterKeyId(K2))

  // A row under a key this deployment does not hold (K0): reported, left as it is.
  const h0 = await startTestApp(t, {
    database: h1.database,
    config: { masterKey: K0, masterKeyPrevious: [K1] },
  })
  const stray = await tokenize(
    { h: h0, receiverUrl: w1.receiverUrl },
    { ...m, client: clientFor(h0, m) },
  )
  const strayBefore = (await rowsOf([stray]))[0]

  const report = await rotateMasterKey(h2.deps, 2)
  assert.equal(report.kekId, masterKeyId(K2))
  assert.ok(report.rewrapped >= old.length, JSON.stringify(report))
  assert.deepEqual(report.unknown, { [masterKeyId(K0)]: 1 })
  const after = await rowsOf(old)
  for (const [i, row] of after.entries()) {
    assert.equal(row.kek_id, masterKeyId(K2))
    assert.notEqual(row.dek_wrapped, before[i]?.dek_wrapped, 'the data key was re-wrapped')
    assert.equal(row.pan_enc, before[i]?.pan_enc, 'the PAN ciphertext was not touched')
  }
  assert.deepEqual((await rowsOf([stray]))[0], strayBefore)

  // Idempotent: nothing left to do but the stray row.
  const again = await rotateMasterKey(h2.deps)
  assert.equal(again.rewrapped, 0)
  assert.deepEqual(again.unknown, { [masterKeyId(K0)]: 1 })

  // Old tokens still charge, and the vault no longer needs K1 to open them.
  const second = await chargeWith(w2, m2, old[1] ?? '')
  assert.equal(second.status, 201, second.text)
  const k2Only = { ...h2.deps, config: { ...h2.config, masterKeyPrevious: [] } }
  for (const [i, pan] of [CARDS.frictionless, CARDS.debit, CARDS.troy].entries()) {
    const card = await detokenize(k2Only, {
      merchantId: m.merchantId,
      cardToken: old[i] ?? '',
      callerService: 'acquirer',
    })
    assert.equal(card.pan, pan)
  }
  // Without the key a row is under, detokenization refuses clearly (no partial decrypt).
  await assert.rejects(
    detokenize(k2Only, { merchantId: m.merchantId, cardToken: stray, callerService: 'acquirer' }),
    /wrapped under unknown key/,
  )
})

/** The merchant as another app (another master key) serves it: signed client and dashboard. */
function asOn(h: TestApp, m: DashboardMerchant) {
  let token: string | undefined
  const dash = async <T>(method: string, path: string) => {
    if (token === undefined) {
      const res = await login(h, m.email, m.password)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      token = res.body.token
    }
    return dashboardFetch<T>(h, method, path, { token })
  }
  return { ...m, client: h.clientFor(m), dash }
}

/**
 * The database as the rotation sees it, except that `write` runs (once) just before its first
 * UPDATE of `table` executes: a concurrent writer that commits between the rotation's read of
 * a row and its update. Builders are called on their real targets (they use private fields).
 */
function writeBeforeFirstUpdate(db: Db, table: string, write: () => Promise<void>): Db {
  let pending: (() => Promise<void>) | undefined = write
  const wrap = (builder: object): object =>
    new Proxy(builder, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target)
        if (typeof value !== 'function') return value
        const fn = value as (...args: unknown[]) => unknown
        if (prop === 'execute' || prop === 'executeTakeFirst') {
          return async (...args: unknown[]) => {
            const w = pending
            pending = undefined
            if (w) await w()
            return fn.apply(target, args)
          }
        }
        return (...args: unknown[]) => {
          const out = fn.apply(target, args)
          return typeof out === 'object' && out !== null && 'executeTakeFirst' in out
            ? wrap(out)
            : out
        }
      },
    })
  return new Proxy(db, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target)
      if (prop === 'updateTable') {
        return (name: string) => {
          const builder = target.updateTable(name as 'webhook_endpoints')
          return name === table ? wrap(builder) : builder
        }
      }
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value
    },
  })
}

test('master-key rotation re-encrypts API key, webhook and invoice secrets: afterwards the new key alone serves them', async (t) => {
  const h1 = await startTestApp(t, { freshDatabase: true })
  const m = await newDashboardMerchant(h1)
  const receiver = await startReceiver(t)
  const endpoint = await addEndpoint(m, receiver.url)
  const s1 = endpoint.secret
  const rolled = await m.dash<{ secret: string }>(
    'POST',
    `/v1/stores/${m.storeId}/webhooks/${endpoint.id}/rotate-secret`,
  )
  assert.equal(rolled.status, 200)
  const s2 = rolled.body.secret // s1 still signs for 24 h: both columns hold a secret
  const callback = await m.dash<{ secret: string }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks/callback-secret`,
  )
  assert.equal(callback.status, 200)
  const invoice = await createInvoice(m)
  const sealed = async () => ({
    apiKey: await h1.deps.db
      .selectFrom('api_keys')
      .select('secret_enc')
      .where('id', '=', m.apiKeyId)
      .executeTakeFirstOrThrow(),
    endpoint: await h1.deps.db
      .selectFrom('webhook_endpoints')
      .select(['secret_enc', 'previous_secret_enc'])
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow(),
    store: await h1.deps.db
      .selectFrom('webhook_store_secrets')
      .select('secret_enc')
      .where('store_id', '=', m.storeId)
      .executeTakeFirstOrThrow(),
    invoice: await h1.deps.db
      .selectFrom('invoices')
      .select('public_hash_enc')
      .where('id', '=', invoice.id)
      .executeTakeFirstOrThrow(),
  })
  const before = await sealed()

  // K2 deployed with K1 as previous: every reader works before the rotation has run.
  const h2 = await startTestApp(t, {
    database: h1.database,
    config: { masterKey: K2, masterKeyPrevious: [K1] },
  })
  const m2 = asOn(h2, m)
  const whoami2 = await m2.client.request('GET', '/v1/auth/whoami')
  assert.equal(whoami2.status, 200, JSON.stringify(whoami2.body))
  const during = await authorizedPayment(m2.client)
  await reconcile(m2.client)
  const d1 = receiver.about(during)[0]
  assert.ok(d1, 'delivered during the rotation')
  assert.ok(signedWith(s2, d1) && signedWith(s1, d1), 'signed with both endpoint secrets')
  assert.equal((await getInvoice(m2, invoice.id)).publicHash, invoice.publicHash)
  const callback2 = await m2.dash<{ secret: string }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks/callback-secret`,
  )
  assert.equal(callback2.body.secret, callback.body.secret)

  // The rotation, with the endpoint's secret rolled again between its read and its update:
  // the roll (s3 current, s2 kept, its envelope still under K1) must survive.
  let s3 = ''
  const racing = {
    config: h2.config,
    db: writeBeforeFirstUpdate(h2.deps.db, 'webhook_endpoints', async () => {
      const res = await m2.dash<{ secret: string }>(
        'POST',
        `/v1/stores/${m.storeId}/webhooks/${endpoint.id}/rotate-secret`,
      )
      assert.equal(res.status, 200)
      s3 = res.body.secret
    }),
  }
  const report = await rotateMasterKeyEverywhere(racing, 1)
  assert.match(s3, /^whsec_/, 'the concurrent roll ran')
  const none = { unreadable: 0 }
  const keys = report.secrets.apiKeySecrets
  assert.ok(keys.scanned >= 1 && keys.reencrypted === keys.scanned, JSON.stringify(keys))
  assert.equal(keys.unreadable, 0)
  assert.deepEqual(report.secrets.webhookSecrets, { scanned: 2, reencrypted: 2, ...none })
  assert.deepEqual(report.secrets.invoicePublicHashes, { scanned: 1, reencrypted: 1, ...none })
  assert.equal(report.complete, true)
  const after = await sealed()
  assert.notEqual(after.apiKey.secret_enc, before.apiKey.secret_enc)
  assert.notEqual(after.store.secret_enc, before.store.secret_enc)
  assert.notEqual(after.invoice.public_hash_enc, before.invoice.public_hash_enc)
  assert.notEqual(after.endpoint.previous_secret_enc, before.endpoint.secret_enc)

  // Idempotent: a second run finds nothing to do.
  const again = await rotateMasterKeyEverywhere(h2.deps)
  for (const r of Object.values(again.secrets)) assert.equal(r.reencrypted, 0)
  assert.equal(again.complete, true)

  // K1 dropped from the configuration: the old API key still signs, deliveries verify with the
  // endpoint's secrets (the rolled one and its predecessor), the invoice link is unchanged.
  const h3 = await startTestApp(t, {
    database: h1.database,
    config: { masterKey: K2, masterKeyPrevious: [] },
  })
  const m3 = asOn(h3, m)
  const whoami3 = await m3.client.request<{ merchantId: string }>('GET', '/v1/auth/whoami')
  assert.equal(whoami3.status, 200, JSON.stringify(whoami3.body))
  const afterwards = await authorizedPayment(m3.client)
  await reconcile(m3.client)
  const d2 = receiver.about(afterwards)[0]
  assert.ok(d2, 'delivered with K2 alone')
  assert.ok(signedWith(s3, d2), 'signed with the secret rolled during the rotation')
  assert.ok(signedWith(s2, d2), 'and with its predecessor, for its 24 h')
  assert.ok(!signedWith(s1, d2))
  assert.equal((await getInvoice(m3, invoice.id)).publicHash, invoice.publicHash)
  const callback3 = await m3.dash<{ secret: string }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks/callback-secret`,
  )
  assert.equal(callback3.status, 200)
  assert.equal(callback3.body.secret, callback.body.secret)

  // A secret under a key this deployment does not hold (K0): reported, left as it is.
  const h0 = await startTestApp(t, {
    database: h1.database,
    config: { masterKey: K0, masterKeyPrevious: [] },
  })
  const stray = await h0.newMerchant({ name: 'Stray' })
  const strayBefore = await h0.deps.db
    .selectFrom('api_keys')
    .select('secret_enc')
    .where('id', '=', stray.apiKeyId)
    .executeTakeFirstOrThrow()
  const partial = await rotateMasterKeyEverywhere(h3.deps)
  assert.equal(partial.secrets.apiKeySecrets.unreadable, 1)
  assert.equal(partial.secrets.apiKeySecrets.reencrypted, 0)
  assert.equal(partial.complete, false)
  assert.deepEqual(
    await h0.deps.db
      .selectFrom('api_keys')
      .select('secret_enc')
      .where('id', '=', stray.apiKeyId)
      .executeTakeFirstOrThrow(),
    strayBefore,
  )
})
