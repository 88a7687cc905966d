// Goal: the Garanti hashes match what Garanti's gateway computes.
// Method: the published vectors of mewebstudio/pos (tests/Unit/Crypt/GarantiPosCryptTest.php,
// MIT): terminal 30691298, store key 12345678, provision password 123qweASD/.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  garanti3dHash,
  garantiAuthorize,
  garantiCallbackHashValid,
  garantiRequestHash,
  garantiThreeDForm,
  startGarantiSimulator,
} from '../../src/modules/acquirer/index.ts'

const ACCOUNT = {
  merchantId: '7000679',
  terminalId: '30691298',
  provisionUser: 'PROVAUT',
  provisionPassword: '123qweASD/',
  storeKey: '12345678',
  refundPassword: '123qweASD/',
}

test('the 3D form hash matches the published vector', () => {
  assert.equal(
    garanti3dHash(ACCOUNT, {
      orderId: 'order222',
      amount: 10025,
      currency: '949',
      successUrl: 'https://domain.com/success',
      errorUrl: 'https://domain.com/fail_url',
      txnType: 'sales',
      installmentCount: '',
    }),
    '372D6CB20B2B699D0A6667DFF46E3AA8CF3F9D8C2BB69A7C411895151FFCFAAB5277CCFE3B3A06035FEEFBFBFD40C79DBE51DBF867D0A24B37335A28F0CEFDE2',
  )
})

test('the XML HashData matches the published vectors (sales, preauth, void, refund)', () => {
  const sale =
    '0CFE09F107274C6A07292DA061A4EECAB0F5F0CF87F831F2D3626A3346A941126C52D1D95A3B77ADF5AC348B3D25C76BA5D8D98A29557D087D3367BFFACCD25C'
  for (const txnType of ['sales', 'preauth']) {
    assert.equal(
      garantiRequestHash(ACCOUNT, { orderId: 'order222', amount: 10025, currency: '949', txnType }),
      sale,
    )
  }
  assert.equal(
    garantiRequestHash(ACCOUNT, {
      orderId: '4499996',
      amount: 100,
      currency: '949',
      txnType: 'void',
    }),
    'C0C88761726D1844AF49FBE756DBE4586F7339169994CF700AE50AA8EAD0C8E81F5828C3392CE39CFC3F8C976FC3E24B576F4DB55DAF2E7D3A6F6B6E5E89B189',
  )
  assert.equal(
    garantiRequestHash(ACCOUNT, {
      orderId: '4499996',
      amount: 202,
      currency: '949',
      txnType: 'refund',
    }),
    '0F97D922001221B9C90AA692CF5D4082FF6D3EB38BE863A47F9C08E63CD87312270D6F298E5FBBC320654861DA1C6EE826E0C83E904916351A9D3032FA426BAA',
  )
})

const CALLBACK: Record<string, string> = {
  xid: 'f3ec4783-f48c-475c-a59c-ab25f3170ec5',
  mdstatus: '1',
  eci: '02',
  cavv: 'xgRlQDz4AAAAAAAAAAAAAAAAAAA=',
  md: 'aW5kZXg6MDJ6LjAI5iAcKf/ilXjYIOnTh4t+deHrtwO8ze7tPTL1YCDcBe8KEpuq6HDLYbqQSluL7p3kGcpFzX9s9XcegNhHMsDszxqGd33+p+p5sULGrDF3J2GGfiJDwan4ku7+eiTyS8x2xS9pUy7PTgMGc6jw94aLfXLHskhvY7FYWrymzQ==',
  terminalid: '30691298',
  oid: '2023100354BB',
  authcode: '',
  response: '',
  procreturncode: '',
  rnd: 'kW094tPzNEhqORzzCsLB',
  hash: '416B6253425E73184F118CC02E3BAA393622059BF6B0865D83F501E55A61339B9EC659CBCF7297EDECC1B17BF6281D90CC0AD8EDF3E1EFE94432ACCEAF79B26E',
  hashparams: 'clientid:oid:authcode:procreturncode:response:mdstatus:cavv:eci:md:rnd:',
  clientid: '30691298',
  txnamount: '101',
}

test('a real Garanti 3D callback verifies; an edited one does not', () => {
  assert.equal(garantiCallbackHashValid(ACCOUNT, CALLBACK), true)
  assert.equal(garantiCallbackHashValid(ACCOUNT, { ...CALLBACK, mdstatus: '' }), false)
  assert.equal(garantiCallbackHashValid(ACCOUNT, { ...CALLBACK, hashparams: '' }), false)
  assert.equal(garantiCallbackHashValid({ ...ACCOUNT, storeKey: 'other' }, CALLBACK), false)
})

test('the 3D form and the XML sales request carry the published fields and hashes', async (t) => {
  const form = garantiThreeDForm(
    {
      credentials: ACCOUNT,
      endpoints: { api: 'https://x/VPServlet', threeDGate: 'https://x/gt3dengine' },
      mode: 'TEST',
    },
    {
      orderId: 'order222',
      amount: 10_025,
      installmentCount: 1,
      preAuth: false,
      successUrl: 'https://domain.com/success',
      errorUrl: 'https://domain.com/fail_url',
      ip: '156.155.154.153',
      card: { pan: '5555444433332222', expMonth: 1, expYear: 2022, cvc: '123' },
    },
  )
  // GarantiPosRequestDataMapperTest::threeDFormDataProvider, "with_card".
  assert.deepEqual(form.fields, {
    secure3dsecuritylevel: '3D',
    mode: 'TEST',
    apiversion: '512',
    terminalprovuserid: 'PROVAUT',
    terminaluserid: 'PROVAUT',
    terminalmerchantid: '7000679',
    terminalid: '30691298',
    txntype: 'sales',
    txnamount: '10025',
    txncurrencycode: '949',
    txninstallmentcount: '',
    orderid: 'order222',
    successurl: 'https://domain.com/success',
    errorurl: 'https://domain.com/fail_url',
    customeripaddress: '156.155.154.153',
    cardnumber: '5555444433332222',
    cardexpiredatemonth: '01',
    cardexpiredateyear: '22',
    cardcvv2: '123',
    secure3dhash:
      '372D6CB20B2B699D0A6667DFF46E3AA8CF3F9D8C2BB69A7C411895151FFCFAAB5277CCFE3B3A06035FEEFBFBFD40C79DBE51DBF867D0A24B37335A28F0CEFDE2',
  })
  // nonSecurePaymentRequestDataDataProvider "basic": what reaches the bank.
  const sim = await startGarantiSimulator(ACCOUNT)
  t.after(() => sim.close())
  await garantiAuthorize(
    {
      credentials: ACCOUNT,
      endpoints: { api: sim.api, threeDGate: sim.threeDGate },
      mode: 'TEST',
    },
    {
      orderId: 'order222',
      amount: 10_025,
      installmentCount: 1,
      preAuth: false,
      ip: '127.0.0.1',
      card: { pan: '5555444433332222', expMonth: 1, expYear: 2022, cvc: '123' },
    },
  )
  const body = sim.processed[0]?.body ?? ''
  for (const part of [
    '<GVPSRequest><Mode>TEST</Mode><Version>512</Version>',
    '<Terminal><ProvUserID>PROVAUT</ProvUserID><UserID>PROVAUT</UserID><HashData>2005F771B622399C0EC7B8BBBE9B5F7989B9587175239F0695C1E5D3BFAA0CF6D747A9CEE64D78B7081CB5193541AD9D129B929653E2B68BCAE6939E281D752E</HashData><ID>30691298</ID><MerchantID>7000679</MerchantID></Terminal>',
    '<Customer><IPAddress>127.0.0.1</IPAddress></Customer>',
    '<Card><Number>5555444433332222</Number><ExpireDate>0122</ExpireDate><CVV2>123</CVV2></Card>',
    '<Order><OrderID>order222</OrderID></Order>',
    '<Transaction><Type>sales</Type><InstallmentCnt></InstallmentCnt><Amount>10025</Amount><CurrencyCode>949</CurrencyCode><CardholderPresentCode>0</CardholderPresentCode><MotoInd>N</MotoInd></Transaction>',
  ]) {
    assert.ok(body.includes(part), `${part} not in ${body}`)
  }
})
