// Goal: master-key rotation (PCI DSS 3.6/3.7 key management): with a new KURUS_MASTER_KEY and the
// old one in KURUS_MASTER_KEY_PREVIOUS, old card tokens still charge; rotateMasterKey re-wraps
// every data key under the new key without touching PAN ciphertexts, is safe to run twice, and
// reports (never loses) rows under a key it does not hold.
// Method: an app on master key K1 tokenizes; a second app over the same database on K2 (K1 as
// previous) charges the old tokens through the signed API, then the rotation runs and the rows
// are read back; detokenization then works with K2 alone.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { detokenize, rotateMasterKey } from '../../src/modules/vault/index.ts'
import { masterKeyId } from '../../src/modules/vault/vault.crypto.ts'
import { startTestApp } from '../helpers/app.ts'
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
