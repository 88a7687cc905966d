// Goal: the TR Karekod / EMVCo merchant-presented payload is well formed and its CRC right.
// Method: a worked example checked TLV by TLV, its CRC against a value computed elsewhere
// (Python's binascii.crc_hqx with init 0xFFFF), and the CRC-16/CCITT-FALSE check value.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  buildEmvPayload,
  crc16CcittFalse,
  emvAmount,
  emvCrcValid,
  parseTlv,
} from '../../src/modules/payments/index.ts'

const EXAMPLE = {
  merchantId: 'mrc_0123456789abcdefghjkmnpq',
  sessionId: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  merchantName: 'Anadolu Kitapçısı',
  merchantCity: 'ISTANBUL',
  amountMinor: 12_345,
  reference: 'ORDER-1001',
}

test('CRC-16/CCITT-FALSE gives the catalogue check value 0x29B1 for "123456789"', () => {
  assert.equal(crc16CcittFalse('123456789'), 0x29b1)
  assert.equal(crc16CcittFalse(''), 0xffff)
})

test('the worked example is exactly the expected TLV string with CRC 137F', () => {
  const payload = buildEmvPayload(EXAMPLE)
  assert.equal(
    payload,
    '000201' +
      '010212' +
      '2688' +
      '0012tr.com.kurus' +
      '0128mrc_0123456789abcdefghjkmnpq' +
      '02361b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b' +
      '52045999' +
      '5303949' +
      '5406123.45' +
      '5802TR' +
      '5917Anadolu Kitapcisi' +
      '6008ISTANBUL' +
      '62140510ORDER-1001' +
      '6304137F',
  )
  assert.ok(emvCrcValid(payload))
})

test('the payload parses into the EMV objects in order, ending with the CRC', () => {
  const payload = buildEmvPayload(EXAMPLE)
  const objects = parseTlv(payload)
  assert.deepEqual(
    objects.map((o) => o.id),
    ['00', '01', '26', '52', '53', '54', '58', '59', '60', '62', '63'],
  )
  const byId = new Map(objects.map((o) => [o.id, o.value]))
  assert.equal(byId.get('00'), '01')
  assert.equal(byId.get('01'), '12')
  assert.equal(byId.get('53'), '949')
  assert.equal(byId.get('54'), '123.45')
  assert.equal(byId.get('58'), 'TR')
  assert.equal(byId.get('59'), 'Anadolu Kitapcisi')
  assert.equal(byId.get('60'), 'ISTANBUL')
  const account = parseTlv(byId.get('26') ?? '')
  assert.deepEqual(account, [
    { id: '00', value: 'tr.com.kurus' },
    { id: '01', value: EXAMPLE.merchantId },
    { id: '02', value: EXAMPLE.sessionId },
  ])
  assert.deepEqual(parseTlv(byId.get('62') ?? ''), [{ id: '05', value: 'ORDER-1001' }])
  assert.equal(byId.get('63')?.length, 4)
})

test('a changed character breaks the CRC', () => {
  const payload = buildEmvPayload(EXAMPLE)
  const tampered = payload.replace('123.45', '923.45')
  assert.equal(emvCrcValid(tampered), false)
})

test('amounts are decimal strings with a dot, computed with integers', () => {
  assert.equal(emvAmount(100), '1.00')
  assert.equal(emvAmount(105), '1.05')
  assert.equal(emvAmount(12_345), '123.45')
  assert.equal(emvAmount(10_000_000_000), '100000000.00')
  // 0.1 + 0.2 style float error cannot happen: 29 kuruş stays "0.29".
  assert.equal(emvAmount(29), '0.29')
  assert.throws(() => emvAmount(0))
  assert.throws(() => emvAmount(1.5))
})

test('names are folded to ASCII and cut to 25 characters, the city to 15', () => {
  const payload = buildEmvPayload({
    ...EXAMPLE,
    merchantName: 'Çiğköfteci Şükrü ve Oğulları Gıda Ticaret',
    merchantCity: 'Kahramanmaraş Merkez',
  })
  const byId = new Map(parseTlv(payload).map((o) => [o.id, o.value]))
  assert.equal(byId.get('59'), 'Cigkofteci Sukru ve Ogull')
  assert.equal(byId.get('60'), 'Kahramanmaras M')
  assert.ok(emvCrcValid(payload))
})
