// Goal: PCI DSS 3.x on the running app: after every card flow, no Luhn-valid 13–19 digit number
// and no CVC is in any log line, table (outside the vault's ciphertext), outbox event, webhook
// body or HTTP response; responses show at most BIN + last4; fingerprints (the vault's and the
// idempotency store's) are keyed HMACs; the detokenization audit is append-only and a failed
// audit write fails the detokenization.
// Method: one merchant drives every CONTRACT test card through the signed API, the hosted
// checkout's public API, the ACS page, customers, subscriptions and refunds with a webhook
// receiver listening; then every table is dumped and everything collected is scanned.
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import { detokenize } from '../../src/modules/vault/index.ts'
import { cardFingerprint } from '../../src/modules/vault/vault.crypto.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import {
  customerWithCard,
  pay,
  reconcile,
  session,
  subscription,
  tokenize,
  type World,
} from './_catalog.ts'
import { startReceiver } from './_receiver.ts'
import {
  dumpAllTables,
  luhnHits,
  newActor,
  rawRequest,
  scanForCardData,
  seen,
  signed,
  withoutCiphertext,
} from './_support.ts'

const ALL_TEST_CARDS = [...Object.values(CARDS), '4111111111111111', '378282246310005']

/** Plain hashes an attacker would try against a fingerprint column. */
function unkeyedHashes(value: string): string[] {
  return ['sha256', 'sha1', 'md5', 'sha512'].flatMap((alg) => {
    const digest = createHash(alg).update(value).digest()
    return [digest.toString('hex'), digest.toString('base64'), digest.toString('base64url')]
  })
}

/**
 * The demo checkout lists the public sandbox test cards under the form (`sandbox-hint`; never
 * in live, see pages.test.ts): published numbers, not a buyer's, so they are not a finding.
 */
function withoutSandboxHint(text: string): string {
  return text.replace(/<p class="sandbox-hint">[\s\S]*?<\/p>/g, '')
}

/** Windows of `length` digits of a PAN that are distinctive enough to search for. */
function windows(pan: string, length: number): string[] {
  const out: string[] = []
  for (let i = 0; i + length <= pan.length; i++) {
    const w = pan.slice(i, i + length)
    if (new Set(w).size >= 3) out.push(w)
  }
  return out
}

test('card data never leaves the vault', async (t) => {
  const h = await startTestApp(t)
  const receiver = await startReceiver(t)
  const w: World = { h, receiverUrl: receiver.url }
  const m = await newActor(h, { name: 'Card Flows' })
  const hook = await m.dash('POST', `/v1/stores/${m.storeId}/webhooks`, {
    body: { url: receiver.url },
  })
  assert.equal(hook.status, 201, hook.text)
  const year = h.clock.now().getUTCFullYear() + 3
  const card = (number: string, cvc = '123') => ({
    number,
    expMonth: 12,
    expYear: year,
    cvc,
    holderName: 'Ayşe Yılmaz',
  })

  // 1. Tokenization of every test card, as typed: plain, spaced, dashed; and refusals.
  for (const pan of ALL_TEST_CARDS) {
    for (const typed of [
      pan,
      pan.replace(/(\d{4})/g, '$1 ').trim(),
      pan.replace(/(\d{4})(?=\d)/g, '$1-'),
    ]) {
      const res = await signed(h, m, {
        method: 'POST',
        path: '/v1/cards/tokens',
        body: JSON.stringify({
          cardNumber: typed,
          expMonth: 12,
          expYear: year,
          cvc: pan.startsWith('37') ? '1234' : '123',
          holderName: 'Ayşe Yılmaz',
        }),
        headers: { 'idempotency-key': randomUUID() },
      })
      assert.equal(res.status, 201, res.text)
    }
  }
  for (const bad of [
    { cardNumber: '4155650100416112' },
    { cardNumber: 4155650100416111 },
    { cvc: '12' },
    { cvc: '12345' },
    { holderName: '4155650100416111' },
    { holderName: 'Ayşe 4155 6501 0041 6111' },
    { expYear: 2001 },
  ]) {
    const res = await signed(h, m, {
      method: 'POST',
      path: '/v1/cards/tokens',
      body: JSON.stringify({
        cardNumber: CARDS.frictionless,
        expMonth: 12,
        expYear: year,
        cvc: '123',
        holderName: 'Ayşe Yılmaz',
        ...bad,
      }),
    })
    assert.equal(res.status, 400, res.text)
  }

  // 2. Charges through the signed API: every acquirer behaviour.
  const captured: string[] = []
  for (const pan of [
    CARDS.frictionless,
    CARDS.debit,
    CARDS.troy,
    CARDS.asyncRefund,
    CARDS.asyncRefundFails,
  ]) {
    const { res } = await pay(w, m, { card: pan, amount: 25_000 })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    captured.push(res.body.paymentId)
  }
  for (const pan of [CARDS.declined, CARDS.insufficientFunds]) {
    const { res } = await pay(w, m, { card: pan })
    assert.equal(res.status, 402, JSON.stringify(res.body))
  }
  const timeout = await pay(w, m, { card: CARDS.timeout })
  assert.equal(timeout.res.status, 202, JSON.stringify(timeout.res.body))
  const auth = await pay(w, m, { capture: false })
  assert.equal(
    (
      await signed(h, m, {
        method: 'POST',
        path: `/v1/payments/${auth.res.body.paymentId}/capture`,
        body: '{}',
      })
    ).status,
    200,
  )
  for (const pan of [CARDS.challenge, CARDS.challengeFails]) {
    const { res } = await pay(w, m, { card: pan })
    assert.equal(res.body.status, 'pending_3ds')
    const id = res.body.paymentId
    const ch = await signed(h, m, {
      method: 'POST',
      path: `/v1/sandbox/payments/${id}/3ds-challenge`,
      body: JSON.stringify({ otp: '123456' }),
    })
    const { pares, correlationId } = ch.json as { pares: string; correlationId: string }
    const acs = await rawRequest(h, {
      method: 'GET',
      path: `/3ds/${id}?correlationId=${encodeURIComponent(correlationId)}`,
    })
    assert.ok(acs.status < 500)
    await signed(h, m, {
      method: 'POST',
      path: `/v1/payments/${id}/3ds-callback`,
      body: JSON.stringify({ pares, correlationId }),
    })
  }
  // Refunds: partial, full, async and failing.
  for (const id of captured) {
    const res = await signed(h, m, {
      method: 'POST',
      path: `/v1/payments/${id}/refund`,
      body: JSON.stringify({ amount: 1_000, reason: 'iade' }),
    })
    assert.ok([200, 202].includes(res.status), res.text)
  }
  await signed(h, m, {
    method: 'POST',
    path: `/v1/payments/${captured[0] ?? ''}/refund`,
    body: '{}',
  })
  await signed(h, m, {
    method: 'POST',
    path: `/v1/sandbox/payments/${captured[1] ?? ''}/chargebacks`,
    body: JSON.stringify({ amount: 500 }),
  })

  // 3. The buyer's side: hosted checkout pay and card update, card-testing refusals included.
  for (const pan of [CARDS.frictionless, CARDS.declined, CARDS.challenge, '4155650100416112']) {
    const s = await session(m, 7_500)
    const res = await rawRequest(h, {
      method: 'POST',
      path: `/v1/public/sessions/${s.sessionId}/pay`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ card: card(pan) }),
    })
    assert.ok(res.status < 500, res.text)
    const page = await rawRequest(h, { method: 'GET', path: `/s/${s.sessionId}` })
    assert.ok(page.status < 500)
  }
  const customer = await customerWithCard(w, m)
  const update = await session(m, 0, {
    mode: 'card_update_only',
    customerId: customer.customerId,
    amount: undefined,
  })
  const updated = await rawRequest(h, {
    method: 'POST',
    path: `/v1/public/sessions/${update.sessionId}/card`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ card: card(CARDS.debit) }),
  })
  assert.equal(updated.status, 201, updated.text)

  // 4. Saved cards and renewals.
  const sub = await subscription(w, m)
  await signed(h, m, {
    method: 'POST',
    path: `/v1/sandbox/subscriptions/${sub.id}/advance`,
    body: '{}',
  })
  await signed(h, m, { method: 'GET', path: `/v1/customers/${customer.customerId}/cards` })
  await rawRequest(h, { method: 'GET', path: `/subscription/${sub.publicHash}` })
  await rawRequest(h, { method: 'GET', path: `/v1/public/subscriptions/${sub.publicHash}` })

  // 5. Everything settles: async refunds, the timeout, webhook deliveries.
  await reconcile(m)
  await reconcile(m)

  // 6. Reads that show card details: payments, transactions, events, exports, audit.
  for (const id of [...captured, timeout.res.body.paymentId]) {
    await signed(h, m, { method: 'GET', path: `/v1/payments/${id}` })
    await signed(h, m, { method: 'GET', path: `/v1/transactions/${id}` })
    await rawRequest(h, { method: 'GET', path: `/v1/payments/${id}/public-status` })
  }
  await signed(h, m, { method: 'GET', path: '/v1/transactions?limit=100' })
  await signed(h, m, { method: 'GET', path: '/v1/transactions/card-access?limit=100' })
  const events: string[] = []
  let cursor: string | null = null
  do {
    const page = await signed(h, m, {
      method: 'GET',
      path: `/v1/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    })
    assert.equal(page.status, 200)
    events.push(page.text)
    cursor = (page.json as { nextCursor: string | null }).nextCursor
  } while (cursor)
  const exp = await signed(h, m, {
    method: 'POST',
    path: '/v1/transactions/exports',
    body: JSON.stringify({ format: 'csv' }),
  })
  const exportId = (exp.json as { exportId: string }).exportId
  await reconcile(m)
  const csv = await signed(h, m, {
    method: 'GET',
    path: `/v1/transactions/exports/${exportId}/download`,
  })
  assert.equal(csv.status, 200, csv.text)
  await m.dash('GET', `/v1/stores/${m.storeId}/webhooks/deliveries`, { query: { limit: '100' } })

  assert.ok(receiver.bodies.length >= 10, `${receiver.bodies.length} webhook deliveries`)
  assert.ok(events.join('').includes('payment.captured'))

  // ------------------------------------------------------------ the scans
  const tables = await dumpAllTables(h.deps.db)
  assert.ok(tables.some((x) => x.table.endsWith('vault_card_tokens') && x.json.includes('415565')))
  const texts = [
    ...h.logs.map((text, i) => ({ where: `log line ${i}`, text })),
    ...tables.map((x) => ({ where: `table ${x.table}`, text: withoutCiphertext(x.json) })),
    ...events.map((text, i) => ({ where: `events page ${i}`, text })),
    ...receiver.bodies.map((text, i) => ({ where: `webhook body ${i}`, text })),
    ...seen.map((r) => ({
      where: `response ${r.what} → ${r.status}`,
      text: withoutSandboxHint(r.text),
    })),
  ]
  assert.ok(texts.length > 200)

  await t.test('no Luhn-valid number and no CVC anywhere', () => {
    const findings = scanForCardData(texts)
    assert.deepEqual(findings.slice(0, 10), [])
  })

  await t.test('no test card number, in any form, anywhere', () => {
    for (const pan of [...ALL_TEST_CARDS, '4155650100416112']) {
      const forms = [
        pan,
        pan.replace(/(\d{4})/g, '$1 ').trim(),
        pan.replace(/(\d{4})(?=\d)/g, '$1-'),
      ]
      for (const { where, text } of texts) {
        for (const f of forms) assert.ok(!text.includes(f), `${f} in ${where}`)
      }
    }
  })

  await t.test('responses show at most BIN and last 4', () => {
    const responses = seen.map((r) => ({
      where: `${r.what} → ${r.status}`,
      // A Prometheus sample value is a measurement (0.0100416… seconds once matched a test
      // card's middle digits); the names and labels around it are still scanned.
      text: withoutSandboxHint(
        r.what.includes('/metrics') ? r.text.replace(/ [-+0-9.eE]+$/gm, '') : r.text,
      ),
    }))
    for (const pan of ALL_TEST_CARDS) {
      const middle = windows(pan.slice(6, -4), Math.min(6, pan.length - 10))
      for (const { where, text } of responses) {
        for (const w9 of windows(pan, 9))
          assert.ok(!text.includes(w9), `${w9} of ${pan} in ${where}`)
        for (const mid of middle)
          assert.ok(!text.includes(mid), `middle digits ${mid} of ${pan} in ${where}`)
      }
    }
    // Fields that describe a card carry only their part of the number.
    const checkFields = (value: unknown, where: string): void => {
      if (Array.isArray(value)) {
        for (const v of value) checkFields(v, where)
        return
      }
      if (!value || typeof value !== 'object') return
      for (const [k, v] of Object.entries(value)) {
        if (/^(bin|cardBin)$/.test(k) && typeof v === 'string')
          assert.match(v, /^\d{6,8}$/, `${k} in ${where}`)
        if (/last4$/i.test(k) && typeof v === 'string')
          assert.match(v, /^\d{4}$/, `${k} in ${where}`)
        if (typeof v === 'string') assert.deepEqual(luhnHits(v), [], `${k} in ${where}`)
        checkFields(v, where)
      }
    }
    let parsed = 0
    for (const r of seen) {
      if (!r.text.startsWith('{') && !r.text.startsWith('[')) continue
      checkFields(JSON.parse(r.text), r.what)
      parsed += 1
    }
    assert.ok(parsed > 100)
  })

  await t.test('fingerprints are keyed HMACs, per merchant', async () => {
    const columns = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where column_name like '%fingerprint%' and table_schema not in ('pg_catalog', 'information_schema')
    `.execute(h.deps.db)
    assert.ok(columns.rows.some((c) => c.table_name === 'vault_card_tokens'))
    assert.ok(columns.rows.some((c) => c.table_name === 'idempotency_keys'))
    const forbidden = new Set<string>()
    for (const pan of ALL_TEST_CARDS) {
      for (const v of [pan, `${m.merchantId}:${pan}`])
        for (const x of unkeyedHashes(v)) forbidden.add(x)
    }
    for (const { table_name, column_name } of columns.rows) {
      const rows = await sql<{
        v: string | null
      }>`select ${sql.ref(column_name)}::text as v from ${sql.table(table_name)}`.execute(h.deps.db)
      for (const { v } of rows.rows)
        assert.ok(
          v === null || !forbidden.has(v),
          `${table_name}.${column_name} is a plain hash of a card`,
        )
    }
    // The vault's: HMAC under a key derived from the master key, different per merchant.
    const other = await newActor(h)
    const a = await tokenize(w, m, CARDS.frictionless)
    const b = await tokenize(w, other, CARDS.frictionless)
    const rows = await h.deps.db
      .selectFrom('vault_card_tokens')
      .select(['id', 'fingerprint'])
      .where('id', 'in', [a, b])
      .execute()
    const fa = rows.find((r) => r.id === a)?.fingerprint
    const fb = rows.find((r) => r.id === b)?.fingerprint
    assert.equal(fa, cardFingerprint(h.config.masterKey, m.merchantId, CARDS.frictionless))
    assert.notEqual(fa, cardFingerprint(Buffer.alloc(32, 9), m.merchantId, CARDS.frictionless))
    assert.notEqual(fa, fb, 'the same card at two merchants is not linkable')
  })

  await t.test(
    'the Idempotency-Key fingerprint of a tokenization is keyed, and still works',
    async () => {
      const key = randomUUID()
      const body = JSON.stringify({
        cardNumber: CARDS.debit,
        expMonth: 12,
        expYear: year,
        cvc: '123',
        holderName: 'Ayşe Yılmaz',
      })
      const first = await signed(h, m, {
        method: 'POST',
        path: '/v1/cards/tokens',
        body,
        headers: { 'idempotency-key': key },
      })
      assert.equal(first.status, 201)
      const row = await h.deps.db
        .selectFrom('idempotency_keys')
        .select('fingerprint')
        .where('idempotency_key', '=', key)
        .executeTakeFirstOrThrow()
      assert.ok(
        !unkeyedHashes(body).includes(row.fingerprint),
        'a plain hash of a body with a PAN and CVC',
      )
      assert.match(row.fingerprint, /^[0-9a-f]{64}$/)
      const replay = await signed(h, m, {
        method: 'POST',
        path: '/v1/cards/tokens',
        body,
        headers: { 'idempotency-key': key },
      })
      assert.equal(replay.status, 201)
      assert.equal(replay.text, first.text)
      const changed = await signed(h, m, {
        method: 'POST',
        path: '/v1/cards/tokens',
        body: body.replace('"123"', '"124"'),
        headers: { 'idempotency-key': key },
      })
      assert.equal(changed.status, 409)
      assert.equal((changed.json as { code: string }).code, 'SVC-GW-2001')
    },
  )

  await t.test(
    'the detokenization audit is append-only (no UPDATE, DELETE or TRUNCATE) and a failed audit write fails the detokenization',
    async () => {
      const token = await tokenize(w, m, CARDS.frictionless)
      const card = await detokenize(h.deps, {
        merchantId: m.merchantId,
        cardToken: token,
        callerService: 'acquirer',
      })
      assert.equal(card.pan, CARDS.frictionless)
      const audit = await signed(h, m, {
        method: 'GET',
        path: '/v1/transactions/card-access?limit=100',
      })
      assert.ok(audit.text.includes(token))
      await assert.rejects(
        sql`update vault_card_access set result = 'denied'`.execute(h.deps.db),
        /append-only/,
      )
      await assert.rejects(
        sql`delete from vault_card_access where card_token = ${token}`.execute(h.deps.db),
        /append-only/,
      )
      // TRUNCATE fires no row trigger: a statement-level trigger refuses it (migration 0140).
      await assert.rejects(sql`truncate vault_card_access`.execute(h.deps.db), (error: unknown) => {
        assert.match(String(error), /append-only \(TRUNCATE refused\)/)
        assert.equal((error as { code?: string }).code, '42501') // insufficient_privilege
        return true
      })
      assert.ok(
        (
          await signed(h, m, { method: 'GET', path: '/v1/transactions/card-access?limit=100' })
        ).text.includes(token),
        'the audit rows are still there',
      )
      await sql`create function sec_fail_audit() returns trigger language plpgsql as $$
      begin raise exception 'audit store unavailable'; end $$`.execute(h.deps.db)
      await sql`create trigger sec_fail_audit before insert on vault_card_access
      for each row execute function sec_fail_audit()`.execute(h.deps.db)
      try {
        await assert.rejects(
          detokenize(h.deps, {
            merchantId: m.merchantId,
            cardToken: token,
            callerService: 'acquirer',
          }),
          /audit store unavailable/,
        )
        // Through the API: the charge fails without a card number reaching the acquirer.
        const s = await session(m, 5_000)
        const res = await signed(h, m, {
          method: 'POST',
          path: '/v1/payments/card',
          body: JSON.stringify({
            transactionId: s.transactionId,
            amount: 5_000,
            currency: 'TRY',
            cardToken: token,
          }),
        })
        assert.ok(res.status >= 400, res.text)
        assert.ok(!res.text.includes(CARDS.frictionless))
      } finally {
        await sql`drop trigger sec_fail_audit on vault_card_access`.execute(h.deps.db)
        await sql`drop function sec_fail_audit()`.execute(h.deps.db)
      }
    },
  )
})
