import type { RunningSimulator } from './bank-simulator.ts'
import { startEstV3Simulator } from './est-v3.simulator.ts'
import { startGarantiSimulator } from './garanti.simulator.ts'
import { startPosnetSimulator } from './posnet.simulator.ts'

// Three bank simulators for the demo (`kurus bank-simulators`): İşbank on the EST gateway,
// Garanti BBVA and Yapı Kredi PosNet, each with test credentials, on fixed loopback ports so
// the POS accounts made from them keep working across restarts. A newcomer adds the three
// accounts (the bodies printed), charges, takes a bank down and watches the payment fail over.

export interface DemoBank {
  /** isbank, garanti, yapikredi: what a command names. */
  code: string
  sim: RunningSimulator
  /** The body of POST /v1/pos-accounts for this bank (demo only: it carries endpoints). */
  account: Record<string, unknown>
}

export interface DemoBanks {
  banks: DemoBank[]
  close(): Promise<void>
}

/** Starts the three simulators on host:portBase, portBase+1, portBase+2 (0: free ports). */
export async function startDemoBanks(
  at: { host?: string; portBase?: number } = {},
): Promise<DemoBanks> {
  const host = at.host ?? '127.0.0.1'
  const port = (i: number) => (at.portBase ? at.portBase + i : 0)
  const est = {
    clientId: '700655000200',
    username: 'ISBANKAPI',
    password: 'ISBANK07',
    storeKey: 'TRPS0200',
  }
  const garanti = {
    merchantId: '7000679',
    terminalId: '30691298',
    provisionUser: 'PROVAUT',
    provisionPassword: '123qweASD/',
    storeKey: '12345678',
  }
  const posnet = {
    merchantId: '6706598320',
    terminalId: '67005551',
    posnetId: '27426',
    encKey: '10,10,10,10,10,10,10,10',
  }
  const started: DemoBank[] = []
  try {
    const a = await startEstV3Simulator(est, { host, port: port(0) })
    started.push({
      code: 'isbank',
      sim: a,
      account: {
        provider: 'est_v3',
        name: 'İşbank (simulator)',
        environment: 'test',
        credentials: { ...est, bank: 'isbank' },
        endpoints: { api: a.api, threeDGate: a.threeDGate },
      },
    })
    const g = await startGarantiSimulator(garanti, { host, port: port(1) })
    started.push({
      code: 'garanti',
      sim: g,
      account: {
        provider: 'garanti',
        name: 'Garanti BBVA (simulator)',
        environment: 'test',
        credentials: garanti,
        endpoints: { api: g.api, threeDGate: g.threeDGate },
      },
    })
    const y = await startPosnetSimulator(posnet, { host, port: port(2) })
    started.push({
      code: 'yapikredi',
      sim: y,
      account: {
        provider: 'posnet',
        name: 'Yapı Kredi (simulator)',
        environment: 'test',
        credentials: posnet,
        endpoints: { api: y.api, threeDGate: y.threeDGate },
      },
    })
  } catch (error) {
    await Promise.all(started.map((b) => b.sim.close()))
    throw error
  }
  return {
    banks: started,
    close: async () => {
      await Promise.all(started.map((b) => b.sim.close()))
    },
  }
}

export const DEMO_BANK_COMMANDS =
  'down BANK | up BANK | 5xx BANK | hang BANK | slow BANK MS | ok BANK | status ' +
  '(BANK: isbank, garanti, yapikredi or all)'

/** One line typed at the simulators: sets a bank's faults; the answer says what changed. */
export async function applyDemoBankCommand(banks: DemoBanks, line: string): Promise<string> {
  const [verb = '', name = '', arg] = line.trim().split(/\s+/)
  if (verb === 'status' || verb === '') {
    return banks.banks
      .map((b) => {
        const f = b.sim.faults
        const on = Object.entries(f)
          .filter(([, v]) => v !== false && v !== 0)
          .map(([k, v]) => (v === true ? k : `${k}=${String(v)}`))
        return `${b.code}: ${on.length ? on.join(', ') : 'ok'} (${b.sim.base})`
      })
      .join('\n')
  }
  const targets = banks.banks.filter((b) => name === 'all' || b.code === name)
  if (targets.length === 0) return `unknown bank "${name}"; ${DEMO_BANK_COMMANDS}`
  for (const b of targets) {
    switch (verb) {
      case 'down':
        await b.sim.setDown(true)
        break
      case 'up':
        await b.sim.setDown(false)
        break
      case '5xx':
        b.sim.faults = { ...b.sim.faults, http5xx: true }
        break
      case 'hang':
        b.sim.faults = { ...b.sim.faults, hangAfterProcessing: true }
        break
      case 'slow': {
        const ms = Number(arg)
        if (!Number.isInteger(ms) || ms < 0 || ms > 120_000) return 'slow BANK MS (0-120000)'
        b.sim.faults = { ...b.sim.faults, delayMs: ms }
        break
      }
      case 'ok':
        await b.sim.setDown(false)
        b.sim.faults = { ...b.sim.faults, http5xx: false, hangAfterProcessing: false, delayMs: 0 }
        break
      default:
        return `unknown command "${verb}"; ${DEMO_BANK_COMMANDS}`
    }
  }
  return applyDemoBankCommand(banks, 'status')
}
