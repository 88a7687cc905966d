import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { startEstV3Simulator, type EstV3Simulator } from '../../src/modules/acquirer/index.ts'
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts'

// Live never reaches the sandbox bank (docs/acquiring.md): a live-mode test charges through a
// bank POS as live does. This starts an EST bank simulator, an app in KURUS_ENV=live whose
// built-in İşbank URLs are the simulator's (Config.bankEndpointOverrides, which only code can
// set), and a platform POS account (production, the bank's own URLs) every merchant routes to.
// The simulator treats the CONTRACT test cards as the sandbox does where a bank can: …0002
// declined, …9995 insufficient funds; the others are approved.

const CREDENTIALS = {
  clientId: '700655000200',
  username: 'KURUSLIVE',
  password: 'live-sim-password',
  storeKey: 'live-sim-storekey',
}

export interface LiveTestApp extends TestApp {
  /** The bank behind the platform POS: its books, its faults. */
  bank: EstV3Simulator
  posAccountId: string
}

export async function startLiveTestApp(
  t: TestContext,
  options: TestAppOptions = {},
): Promise<LiveTestApp> {
  const bank = await startEstV3Simulator(CREDENTIALS)
  t.after(() => bank.close())
  const h = await startTestApp(t, {
    ...options,
    env: { ...options.env, KURUS_ENV: 'live' },
    config: {
      ...options.config,
      bankEndpointOverrides: {
        'est_v3:isbank': { api: bank.api, threeDGate: bank.threeDGate },
      },
    },
  })
  const pos = await h.operator<{ id: string }>('POST', '/operator/v1/pos-accounts', {
    provider: 'est_v3',
    name: 'İşbank (simulator)',
    environment: 'production',
    credentials: { ...CREDENTIALS, bank: 'isbank' },
  })
  assert.equal(pos.status, 201, JSON.stringify(pos.body))
  return Object.assign(h, { bank, posAccountId: pos.body.id })
}
