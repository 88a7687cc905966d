// Goal: the PosNet MACs match what Yapı Kredi's gateway computes.
// Method: the published vectors of mewebstudio/pos (tests/Unit/Crypt/PosNetCryptTest.php,
// MIT): merchant 6706598320, terminal 67005551, posnet id 27426, key 10,10,10,10,10,10,10,10.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  posnetRequestMac,
  posnetResponseMacValid,
  posnetXid,
} from '../../src/modules/acquirer/index.ts'

const ACCOUNT = {
  merchantId: '6706598320',
  terminalId: '67005551',
  posnetId: '27426',
  encKey: '10,10,10,10,10,10,10,10',
}

test('the request MAC matches the published vector', () => {
  assert.equal(
    posnetRequestMac(ACCOUNT, { orderId: 'TST_190620093100_024', amount: 175, currency: 'TL' }),
    'nyeFSQ4J9NZVeCcEGCDomM8e2YIvoeIa/IDh2D3qaL4=',
  )
})

test("the bank's 3D answer MAC verifies; a changed amount does not", () => {
  const answer = {
    xid: '00000000000000000895',
    amount: '100',
    currency: 'TL',
    installment: '00',
    mdStatus: '9',
    mac: '7I9ojRm7yzvZZTFNOYWocGIGSTv2Vmq23STR6X6X+c0=',
  }
  assert.equal(posnetResponseMacValid(ACCOUNT, answer), true)
  assert.equal(posnetResponseMacValid(ACCOUNT, { ...answer, amount: '' }), false)
  assert.equal(posnetResponseMacValid(ACCOUNT, { ...answer, amount: '1000' }), false)
  assert.equal(posnetResponseMacValid({ ...ACCOUNT, encKey: '1,1' }, answer), false)
})

test('the 3D transaction MAC over the padded XID matches the published request', () => {
  // PosNetRequestDataMapperTest::create3DPaymentRequestDataDataProvider: order 2020110828BC,
  // 100.01 TL → XID 000000002020110828BC, 10001, TL.
  assert.equal(
    posnetRequestMac(ACCOUNT, {
      orderId: posnetXid('2020110828BC'),
      amount: 10001,
      currency: 'TL',
    }),
    'oE7zwV87uOc2DFpGPlr4jQRQ0z9LsxGw56c7vaiZkTo=',
  )
})
