// Goal: after tokenizing, charging, refunding and failing with every test card, no card number
// is in any table, any response or any log line.
// Method: drive the vault over HTTP and the acquirer through h.deps, then dump every table of
// the database as JSON text and scan it and h.logs for each number.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { sandboxBank } from '../../src/modules/acquirer/index.ts'
import { detokenize } from '../../src/modules/vault/index.ts'
import { newId } from '../../src/platform/ids.ts'
import { startTestApp } from '../helpers/app.ts'
import { ALL_CARDS, cardBody } from './_cards.ts'

test('no PAN in any table, response or log', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const acquirer = sandboxBank
  const responses: string[] = []

  for (const card of ALL_CARDS) {
    // Twice: plain digits and the spaced form people type.
    for (const number of [card.number, card.number.replace(/(\d{4})/g, '$1 ').trim()]) {
      const res = await m.client.request<{ cardToken: string }>('POST', '/v1/cards/tokens', {
        body: cardBody(h, number),
      })
      assert.equal(res.status, 201)
      responses.push(JSON.stringify(res.body))
      const cardToken = res.body.cardToken
      const paymentId = newId('pay')
      const start = await acquirer.start3ds(h.deps, {
        paymentId,
        merchantId: m.merchantId,
        cardToken,
        amount: 10_000,
      })
      if (start.kind === 'challenge') {
        await acquirer.completeChallenge(h.deps, {
          paymentId,
          merchantId: m.merchantId,
          correlationId: start.correlationId,
          otp: '123456',
        })
      }
      const result = await acquirer.authorize(h.deps, {
        paymentId,
        merchantId: m.merchantId,
        cardToken,
        amount: 10_000,
        installmentCount: 1,
        capture: true,
      })
      const settled =
        result.status === 'unknown' ? await acquirer.inquire(h.deps, { paymentId }) : result
      if (settled.status === 'approved') {
        const refundId = newId('rfn')
        await acquirer.refund(h.deps, {
          paymentId,
          refundId,
          reference: settled.reference,
          amount: 500,
        })
        await acquirer.refundStatus(h.deps, { refundId })
      }
      await detokenize(h.deps, { merchantId: m.merchantId, cardToken, callerService: 'acquirer' })
    }
  }
  // Rejected cards must not leave their number behind either.
  for (const bad of [
    { cardNumber: '4155650100416112' },
    { cardNumber: 4155650100416111 },
    { cvc: '12', cardNumber: '5528790000000008' },
    { holderName: '4155650100416111' },
  ]) {
    const res = await m.client.request('POST', '/v1/cards/tokens', {
      body: cardBody(h, '4155650100416111', bad),
    })
    assert.equal(res.status, 400)
    responses.push(JSON.stringify(res.body))
  }

  const tables = await sql<{ table_schema: string; table_name: string }>`
    select table_schema, table_name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
  `.execute(h.deps.db)
  assert.ok(tables.rows.some((r) => r.table_name === 'vault_card_tokens'))
  assert.ok(tables.rows.some((r) => r.table_name === 'acquirer_sandbox_operations'))
  const dumps: string[] = []
  for (const { table_schema, table_name } of tables.rows) {
    const dump = await sql<{ j: string }>`
      select coalesce(json_agg(t)::text, '[]') as j from ${sql.id(table_schema, table_name)} t
    `.execute(h.deps.db)
    dumps.push(`${table_schema}.${table_name}: ${dump.rows[0]?.j ?? ''}`)
  }
  assert.ok(dumps.join('\n').includes('415565'), 'the dump holds the bins, so it was read')
  assert.ok(h.logs.length > 0, 'the app logged something')

  const numbers = [...ALL_CARDS.map((c) => c.number), '4155650100416112']
  for (const pan of numbers) {
    for (const dump of dumps) {
      assert.ok(!dump.includes(pan), `${pan} found in ${dump.slice(0, 60)}`)
    }
    for (const line of h.logs) assert.ok(!line.includes(pan), `${pan} found in a log line`)
    for (const body of responses) assert.ok(!body.includes(pan), `${pan} in a response`)
    // The spaced form too.
    const spaced = pan.replace(/(\d{4})/g, '$1 ').trim()
    for (const line of h.logs) assert.ok(!line.includes(spaced), `${spaced} found in a log line`)
  }
})
