// Goal: the est_v3 connector's hash and amounts match what the EST gateway computes.
// Method: the published vectors of mewebstudio/pos (tests/Unit/Crypt/EstV3PosCryptTest.php,
// MIT): two 3D form hashes under store key 123456 and a real Ziraat 3D Pay callback.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  decimalToKurus,
  estV3Hash,
  estV3VerifyCallback,
  kurusToDecimal,
  naturalCaseCompare,
} from '../../src/modules/acquirer/index.ts'

const STORE_KEY = '123456'

test('ver3 hash of a 3D Pay form matches the published vector', () => {
  const fields = {
    clientid: '190100000',
    storetype: '3d_pay',
    amount: '100.25',
    oid: 'order222',
    okUrl: 'https://domain.com/success',
    failUrl: 'https://domain.com/fail_url',
    rnd: 'rand',
    lang: 'tr',
    currency: '949',
    taksit: '',
    islemtipi: 'Auth',
    firmaadi: 'siparis veren',
    Email: 'test@test.com',
    hashAlgorithm: 'ver3',
  }
  assert.equal(
    estV3Hash(fields, STORE_KEY),
    '/uPxhEKWCEGi3NsDOOQ4u8Hu5g71v5GWspOid70WehTWEz97PqxG3IN1Jv5jsbOXOw3Z3Rr/0UtywzEgbqFfdA==',
  )
})

test('ver3 hash of a 3D form matches the published vector', () => {
  const fields = {
    clientid: '190100000',
    storetype: '3d',
    amount: '100.25',
    oid: 'order222',
    okUrl: 'https://domain.com/success',
    failUrl: 'https://domain.com/fail_url',
    rnd: '12345',
    hashAlgorithm: 'ver3',
    lang: 'tr',
    currency: '949',
    islemtipi: 'Auth',
    taksit: '',
  }
  assert.equal(
    estV3Hash(fields, STORE_KEY),
    '4aUsG5hqlIFLc9s8PKc5rWb2OLhmxDDewNgKa2XrwoYCIxlyVq8Fjl4IVaZzoqL983CfTseicmnTA0PjZr74xg==',
  )
})

// The Ziraat 3D Pay callback of the vector (empty where the bank posted nothing).
const ZIRAAT_CALLBACK: Record<string, string> = {
  ReturnOid: '202210308C0F',
  TRANID: '',
  hashAlgorithm: 'ver3',
  PAResSyntaxOK: 'true',
  firmaadi: 'John Doe',
  islemtipi: 'Auth',
  lang: 'tr',
  merchantID: '190200000',
  maskedCreditCard: '4355 08** **** 4358',
  amount: '1.01',
  sID: '1',
  ACQBIN: '454672',
  Ecom_Payment_Card_ExpDate_Year: '26',
  EXTRA_CARDBRAND: 'VISA',
  Email: 'mail@customer.com',
  MaskedPan: '435508***4358',
  acqStan: '184784',
  merchantName: 'Ziraat 3D_Pay',
  clientIp: '89.244.149.137',
  EXTRA_KAZANILANPUAN: '000000010.00',
  okUrl: 'http://localhost/akbank/3d-pay/response.php',
  md: '435508:51104213993AC8DFE8839C7F7E391B461115D09A1D88948C8ACE421D7D7EAA5A:3545:##190200000',
  ProcReturnCode: '00',
  payResults_dsId: '1',
  taksit: '',
  TransId: '22303RqiC11252',
  EXTRA_TRXDATE: '20221030 17:42:33',
  Ecom_Payment_Card_ExpDate_Month: '12',
  storetype: '3d_pay',
  Response: 'Approved',
  SettleId: '2383',
  mdErrorMsg:
    'Y-status/Challenge authentication via ACS: https://3ds-acs.test.modirum.com/mdpayacs/creq?token=214711321.1667140951.Ud_jQl3B2l1',
  ErrMsg: '',
  PAResVerified: 'true',
  cavv: 'ABABBCgghAAAAABllJMDdZdTdic=',
  digest: 'digest',
  HostRefNum: '230317184784',
  callbackCall: 'true',
  AuthCode: '216981',
  failUrl: 'http://localhost/akbank/3d-pay/response.php',
  xid: 'N1An1iS5iN4u/1VWS6CgzSGRtN0=',
  encoding: 'ISO-8859-9',
  currency: '949',
  oid: '202210308C0F',
  mdStatus: '1',
  dsId: '1',
  eci: '05',
  version: '2.0',
  EXTRA_CARDISSUER: 'AKBANK T.A.S.',
  clientid: '190200000',
  txstatus: 'Y',
  HASH: 'jVgcwtx4vxxAcX8+ajsrrzp77k9uaGu1pjDQfCpoUG95y2MwwGipc6cF3kESiTphjV8/1ESSc6zg9KyTSxUnzA==',
  rnd: 'J/jGATA5LLVaMfpU+Yyu',
}

const ziraat = {
  credentials: { clientId: '190200000', username: 'u', password: 'p', storeKey: STORE_KEY },
  endpoints: { api: 'http://127.0.0.1:9/api', threeDGate: 'http://127.0.0.1:9/gate' },
}

test('a real Ziraat 3D Pay callback verifies, and is approved with its auth code', () => {
  const checked = estV3VerifyCallback(ziraat, ZIRAAT_CALLBACK, {
    orderId: '202210308C0F',
    amount: 101,
  })
  assert.deepEqual(checked, {
    ok: true,
    authenticated: true,
    mdStatus: '1',
    authentication: {
      md: ZIRAAT_CALLBACK['md'],
      xid: ZIRAAT_CALLBACK['xid'],
      eci: '05',
      cavv: 'ABABBCgghAAAAABllJMDdZdTdic=',
    },
    payment: {
      kind: 'approved',
      authCode: '216981',
      hostReference: '230317184784',
      transId: '22303RqiC11252',
    },
  })
})

test('the callback is refused when a field, the amount or the order is not ours', () => {
  const expected = { orderId: '202210308C0F', amount: 101 }
  assert.deepEqual(estV3VerifyCallback(ziraat, { ...ZIRAAT_CALLBACK, mdStatus: '' }, expected), {
    ok: false,
    reason: 'hash_mismatch',
  })
  assert.deepEqual(
    estV3VerifyCallback(ziraat, { ...ZIRAAT_CALLBACK, amount: '100.01' }, expected),
    { ok: false, reason: 'hash_mismatch' },
  )
  assert.deepEqual(
    estV3VerifyCallback(
      { ...ziraat, credentials: { ...ziraat.credentials, storeKey: 'x' } },
      ZIRAAT_CALLBACK,
      expected,
    ),
    { ok: false, reason: 'hash_mismatch' },
  )
  // Correctly signed, but for another amount or order than the payment's.
  assert.deepEqual(estV3VerifyCallback(ziraat, ZIRAAT_CALLBACK, { ...expected, amount: 100 }), {
    ok: false,
    reason: 'amount_mismatch',
  })
  assert.deepEqual(estV3VerifyCallback(ziraat, ZIRAAT_CALLBACK, { ...expected, orderId: 'x' }), {
    ok: false,
    reason: 'order_mismatch',
  })
  const { HASH: _dropped, ...unsigned } = ZIRAAT_CALLBACK
  assert.deepEqual(estV3VerifyCallback(ziraat, unsigned, expected), {
    ok: false,
    reason: 'malformed',
  })
})

test("kuruş convert exactly to and from the banks' decimal lira", () => {
  assert.equal(kurusToDecimal(10025), '100.25')
  assert.equal(kurusToDecimal(101), '1.01')
  assert.equal(kurusToDecimal(5), '0.05')
  assert.equal(kurusToDecimal(999_999_999_999_99), '999999999999.99')
  assert.equal(decimalToKurus('1.01'), 101)
  assert.equal(decimalToKurus('100.1'), 10010)
  assert.equal(decimalToKurus('100'), 10000)
  assert.equal(decimalToKurus('0.29'), 29)
  assert.equal(decimalToKurus('1.001'), undefined)
  assert.equal(decimalToKurus('-1.00'), undefined)
  assert.throws(() => kurusToDecimal(1.5), RangeError)
})

test("fields sort as PHP's natural case-insensitive ksort", () => {
  const keys = ['taksit', 'TransId', 'TRANID', 'ORD_ID_10', 'ORD_ID_2', 'Email', 'EXTRA_X', 'ecom']
  assert.deepEqual(keys.sort(naturalCaseCompare), [
    'ecom',
    'Email',
    'EXTRA_X',
    'ORD_ID_2',
    'ORD_ID_10',
    'taksit',
    'TRANID',
    'TransId',
  ])
})
