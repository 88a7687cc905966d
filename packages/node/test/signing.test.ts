// Goal: @kurus/node signs exactly as test/vectors/signing.json says (computed with openssl,
// outside the project's code), and never signs two requests of a process alike.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { canonicalString, sign, signedHeaders, timestampFor } from '../src/index.ts'

interface Vector {
  name: string
  input: { secretKey: string; timestamp: string; method: string; path: string; body: string }
  expected: { bodySha256: string; canonicalString: string; signature: string }
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../../../test/vectors/signing.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] }

test('the vector file is there to test against', () => {
  assert.ok(vectors.length >= 5)
})

for (const v of vectors) {
  test(`signing vector: ${v.name}`, () => {
    const { secretKey, timestamp, method, path, body } = v.input
    assert.equal(canonicalString(timestamp, method, path, body), v.expected.canonicalString)
    // The same bytes given as a Uint8Array hash the same.
    assert.equal(
      canonicalString(timestamp, method, path, new TextEncoder().encode(body)),
      v.expected.canonicalString,
    )
    assert.equal(sign(secretKey, v.expected.canonicalString), v.expected.signature)
    const headers = signedHeaders(
      { publicKey: 'pk_demo_x', secretKey },
      method,
      path,
      body,
      timestamp,
    )
    assert.deepEqual(headers, {
      'X-Api-Key': 'pk_demo_x',
      'X-Timestamp': timestamp,
      'X-Signature': v.expected.signature,
    })
  })
}

test('two timestamps of the same instant differ, nine fractional digits, UTC', () => {
  const at = new Date('2026-11-22T10:00:00.123Z')
  const a = timestampFor(at)
  const b = timestampFor(at)
  assert.notEqual(a, b)
  assert.match(a, /^2026-11-22T10:00:00\.123\d{6}Z$/)
})
