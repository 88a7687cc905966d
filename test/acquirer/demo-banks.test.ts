// Goal: the demo's bank simulators (`kurus bank-simulators`) are usable as POS accounts as
// printed, and a newcomer's typed fault moves a payment from İşbank to Garanti.
// Method: startDemoBanks on free loopback ports; a demo app over HTTP; the accounts created
// from the printed bodies; faults set with the same commands the CLI reads from stdin.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyDemoBankCommand, startDemoBanks } from '../../src/modules/acquirer/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

test('the three demo banks as POS accounts: İşbank down, the payment fails over to Garanti', async (t) => {
  const banks = await startDemoBanks()
  t.after(() => banks.close())
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const ids: string[] = []
  for (const bank of banks.banks) {
    const res = await m.client.request<{ id: string; bank: string }>('POST', '/v1/pos-accounts', {
      body: bank.account,
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(res.body.bank, bank.code)
    ids.push(res.body.id)
  }
  const put = await m.client.request('PUT', '/v1/routing', { body: { rules: [], default: ids } })
  assert.equal(put.status, 200)

  const status = await applyDemoBankCommand(banks, 'down isbank')
  assert.match(status, /^isbank: down/m)
  assert.match(status, /^garanti: ok/m)
  const { res } = await charge(m.client, CARDS.frictionless, 12_345, { threeDSecure: false })
  assert.equal(res.body.status, 'captured', JSON.stringify(res.body))
  const shown = await m.client.request<{ acquirer: { bank: string; attempts: unknown[] } }>(
    'GET',
    `/v1/payments/${res.body.paymentId}`,
  )
  assert.equal(shown.body.acquirer.bank, 'garanti')
  assert.equal(shown.body.acquirer.attempts.length, 2)

  assert.match(await applyDemoBankCommand(banks, 'ok all'), /^isbank: ok/m)
  const { res: again } = await charge(m.client, CARDS.frictionless, 1_000, { threeDSecure: false })
  const back = await m.client.request<{ acquirer: { bank: string } }>(
    'GET',
    `/v1/payments/${again.body.paymentId}`,
  )
  assert.equal(back.body.acquirer.bank, 'isbank')
  assert.match(await applyDemoBankCommand(banks, 'slow garanti 50'), /garanti: delayMs=50/)
  assert.match(await applyDemoBankCommand(banks, 'down nobank'), /unknown bank/)
  assert.match(await applyDemoBankCommand(banks, 'explode all'), /unknown command/)
})
