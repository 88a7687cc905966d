// Goal: the committed Postman collection (docs/kurus.postman_collection.json, issue 38) is
// what `npm run postman` makes of the served OpenAPI document, and its pre-request script
// signs requests the gateway accepts — a GET, a POST with the example body, a path variable.
// Method: the file compared with a fresh build (like the SDK types check); then newman,
// Postman's own runner (its sandbox, its crypto-js), runs requests of the collection against
// the real app with the keys and the path variable set as environment variables.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import * as newman from 'newman'
import type { Summary } from 'newman'
import { POSTMAN_FILE, postmanFile } from '../../scripts/postman.ts'
import { startTestApp } from '../helpers/app.ts'

const root = new URL('../../', import.meta.url)

test('the committed collection is what npm run postman writes', async () => {
  assert.equal(readFileSync(new URL(POSTMAN_FILE, root), 'utf8'), await postmanFile())
})

test('newman runs the collection’s requests, each signed by its pre-request script', async (t) => {
  const h = await startTestApp(t)
  const merchant = await h.newMerchant({ name: 'Postman Shop' })
  const customer = await merchant.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: 'postman-1' },
  })
  assert.equal(customer.status, 201)
  const collection: unknown = JSON.parse(readFileSync(new URL(POSTMAN_FILE, root), 'utf8'))
  const names = ['Who the verified API key belongs to', 'Create a customer', 'Retrieve a customer']
  const summary = await new Promise<Summary>((done, fail) => {
    newman.run(
      {
        collection,
        envVar: [
          { key: 'baseUrl', value: h.url },
          { key: 'publicKey', value: merchant.publicKey },
          { key: 'secretKey', value: merchant.secretKey },
          { key: 'id', value: customer.body.id },
        ],
        folder: names,
        reporters: [],
      },
      (error, result) => (error ? fail(error) : done(result)),
    )
  })
  // A script that throws still lets the request go (unsigned): its error is a failure here.
  assert.deepEqual(
    summary.run.failures.map((f) => f.error?.message),
    [],
  )
  const answers = new Map(
    summary.run.executions.map((e) => [
      e.item.name,
      { code: e.response?.code, body: e.response?.text() },
    ]),
  )
  assert.deepEqual([...answers.keys()].sort(), [...names].sort())
  assert.equal(answers.get(names[0]!)?.code, 200, answers.get(names[0]!)?.body)
  assert.equal(answers.get(names[1]!)?.code, 201, answers.get(names[1]!)?.body)
  const fetched = answers.get(names[2]!)
  assert.equal(fetched?.code, 200, fetched?.body)
  assert.equal((JSON.parse(fetched?.body ?? '{}') as { id: string }).id, customer.body.id)
})
