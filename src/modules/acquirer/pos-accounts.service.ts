import type { Deps, Tx } from '../../database.ts'
import { decryptWithAny, encrypt } from '../../platform/crypto.ts'
import { AppError, notFound, type FieldIssue } from '../../platform/errors.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { newId } from '../../platform/ids.ts'
import { keyRing, ringKeys } from '../../platform/key-rotation.ts'
import type { BankEndpoints } from './est-v3.ts'
import { BANK_PROGRAMS, CONNECTORS, PROVIDERS, type ConnectorConfig } from './pos-connectors.ts'
import * as repo from './pos.repository.ts'
import type { PosAccountRow, PosEnvironment, PosProvider } from './pos.table.ts'

// Bank virtual POS accounts (CONTRACT "Bank virtual POS accounts"): the merchant's own
// ("bring your own POS") and the platform's (merchant null, offered to all). Credentials are
// sealed under the master key at once and opened only to talk to the bank.

export const PROGRAMS = [
  'bonus',
  'world',
  'maximum',
  'axess',
  'cardfinans',
  'paraf',
  'advantage',
  'bankkart',
  'saglam',
  'none',
] as const

/** Whose account: a merchant's, or the platform's (operator API). */
export type PosOwner = { merchantId: string } | { platform: true }

export interface PosAccount {
  id: string
  owner: 'merchant' | 'platform'
  provider: PosProvider
  bank: string
  name: string
  environment: PosEnvironment
  installmentPrograms: string[]
  enabled: boolean
  createdAt: Date
}

export interface PosAccountInput {
  provider: string
  name: string
  environment: string
  credentials: unknown
  bank?: string | undefined
  installmentPrograms?: string[] | undefined
  enabled?: boolean | undefined
  endpoints?: BankEndpoints | undefined
}

function invalid(issues: FieldIssue[]): AppError {
  const first = issues[0]
  return new AppError(
    'SVC-VAL-3001',
    400,
    first ? `${first.field}: ${first.reason}` : 'invalid',
    issues,
  )
}

function aad(id: string): string {
  return `pos-account:${id}`
}

function seal(deps: Pick<Deps, 'config'>, id: string, credentials: Record<string, string>) {
  return encrypt(deps.config.masterKey, JSON.stringify(credentials), aad(id))
}

function open(deps: Pick<Deps, 'config'>, row: PosAccountRow): Record<string, string> {
  const clear = decryptWithAny(ringKeys(keyRing(deps.config)), row.credentials_enc, aad(row.id))
  return JSON.parse(clear.toString('utf8')) as Record<string, string>
}

function toView(row: PosAccountRow): PosAccount {
  return {
    id: row.id,
    owner: row.merchant_id === null ? 'platform' : 'merchant',
    provider: row.provider,
    bank: row.bank,
    name: row.name,
    environment: row.environment,
    installmentPrograms: row.installment_programs,
    enabled: row.enabled && row.deleted_at === null,
    createdAt: row.created_at,
  }
}

function checkPrograms(programs: readonly string[]): FieldIssue[] {
  const known: readonly string[] = PROGRAMS
  return programs.flatMap((p, i) =>
    known.includes(p)
      ? []
      : [{ field: `installmentPrograms[${i}]`, reason: `one of ${PROGRAMS.join(', ')}` }],
  )
}

function checkEndpoints(deps: Deps, endpoints: BankEndpoints | undefined): FieldIssue[] {
  if (endpoints === undefined) return []
  if (deps.config.env !== 'demo') {
    return [{ field: 'endpoints', reason: 'only in demo (a bank simulator); live uses the bank' }]
  }
  return (['api', 'threeDGate'] as const).flatMap((k) => {
    try {
      const url = new URL(endpoints[k])
      return url.protocol === 'http:' || url.protocol === 'https:'
        ? []
        : [{ field: `endpoints.${k}`, reason: 'an http(s) URL' }]
    } catch {
      return [{ field: `endpoints.${k}`, reason: 'an http(s) URL' }]
    }
  })
}

function credentialsBank(credentials: unknown): string | undefined {
  if (typeof credentials !== 'object' || credentials === null) return undefined
  const bank = (credentials as Record<string, unknown>)['bank']
  return typeof bank === 'string' ? bank : undefined
}

function credentialsRecord(credentials: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(credentials as Record<string, unknown>)) {
    if (k !== 'bank' && typeof v === 'string') out[k] = v
  }
  return out
}

export async function createPosAccount(
  deps: Deps,
  owner: PosOwner,
  input: PosAccountInput,
  record?: RecordAnswer<Tx, PosAccount>,
): Promise<PosAccount> {
  const issues: FieldIssue[] = []
  const provider = input.provider as PosProvider
  if (!PROVIDERS.includes(provider)) {
    throw invalid([{ field: 'provider', reason: `one of ${PROVIDERS.join(', ')}` }])
  }
  const connector = CONNECTORS[provider]
  if (!connector) {
    throw invalid([{ field: 'provider', reason: `${provider}: its connector is not built yet` }])
  }
  if (input.environment !== 'test' && input.environment !== 'production') {
    issues.push({ field: 'environment', reason: 'test or production' })
  }
  const bankName = input.bank ?? credentialsBank(input.credentials)
  issues.push(...connector.checkCredentials(input.credentials, bankName))
  issues.push(...checkPrograms(input.installmentPrograms ?? []))
  issues.push(...checkEndpoints(deps, input.endpoints))
  if (issues.length > 0) throw invalid(issues)
  const bank = connector.bankOf(bankName)
  const id = newId('pos')
  const now = deps.clock.now()
  const programs = input.installmentPrograms ?? (BANK_PROGRAMS[bank] ? [BANK_PROGRAMS[bank]] : [])
  // Each change in a transaction of its own, for a door's audit entry and the recorded
  // answer to commit in (decisions 0036, 0035).
  return transact(deps.db, async (tx) => {
    const account = toView(
      await repo.insertPosAccount(tx, {
        id,
        merchant_id: 'merchantId' in owner ? owner.merchantId : null,
        provider,
        bank,
        name: input.name,
        environment: input.environment as PosEnvironment,
        credentials_enc: seal(deps, id, credentialsRecord(input.credentials)),
        endpoints: input.endpoints ? JSON.stringify(input.endpoints) : null,
        installment_programs: JSON.stringify(programs),
        enabled: input.enabled ?? true,
        deleted_at: null,
        created_at: now,
        updated_at: now,
      }),
    )
    await record?.(tx, account)
    return account
  })
}

function ownedBy(row: PosAccountRow | undefined, owner: PosOwner): row is PosAccountRow {
  if (!row) return false
  return 'merchantId' in owner ? row.merchant_id === owner.merchantId : row.merchant_id === null
}

export async function listPosAccounts(deps: Deps, owner: PosOwner): Promise<PosAccount[]> {
  const rows = await repo.findPosAccounts(deps.db, 'merchantId' in owner ? owner.merchantId : null)
  return rows.map(toView)
}

export async function getPosAccount(deps: Deps, owner: PosOwner, id: string): Promise<PosAccount> {
  const row = await repo.findPosAccount(deps.db, id)
  // A merchant sees the platform's accounts too (it may route to them), never another's.
  if (!row || row.deleted_at !== null) throw notFound('pos account')
  const platformOffered = 'merchantId' in owner && row.merchant_id === null
  if (!ownedBy(row, owner) && !platformOffered) throw notFound('pos account')
  return toView(row)
}

export async function updatePosAccount(
  deps: Deps,
  owner: PosOwner,
  id: string,
  patch: {
    name?: string | undefined
    enabled?: boolean | undefined
    installmentPrograms?: string[] | undefined
    credentials?: unknown
  },
  record?: RecordAnswer<Tx, PosAccount>,
): Promise<PosAccount> {
  const row = await repo.findPosAccount(deps.db, id)
  if (!ownedBy(row, owner) || row.deleted_at !== null) throw notFound('pos account')
  const issues = checkPrograms(patch.installmentPrograms ?? [])
  const connector = CONNECTORS[row.provider]
  if (patch.credentials !== undefined && connector) {
    issues.push(...connector.checkCredentials(patch.credentials, row.bank))
  }
  if (issues.length > 0) throw invalid(issues)
  return transact(deps.db, async (tx) => {
    const updated = await repo.updatePosAccount(tx, id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      ...(patch.installmentPrograms !== undefined
        ? { installment_programs: JSON.stringify(patch.installmentPrograms) }
        : {}),
      ...(patch.credentials !== undefined
        ? { credentials_enc: seal(deps, id, credentialsRecord(patch.credentials)) }
        : {}),
      updated_at: deps.clock.now(),
    })
    if (!updated) throw notFound('pos account')
    const account = toView(updated)
    await record?.(tx, account)
    return account
  })
}

/** Disables for good (payments keep their reference); a second delete is a no-op. */
export async function deletePosAccount(
  deps: Deps,
  owner: PosOwner,
  id: string,
  record?: RecordAnswer<Tx, null>,
): Promise<void> {
  const row = await repo.findPosAccount(deps.db, id)
  if (!ownedBy(row, owner)) throw notFound('pos account')
  // A second delete changes nothing; its answer (204) is recorded all the same.
  if (row.deleted_at !== null && !record) return
  const now = deps.clock.now()
  await transact(deps.db, async (tx) => {
    if (row.deleted_at === null) {
      await repo.updatePosAccount(tx, id, { enabled: false, deleted_at: now, updated_at: now })
    }
    await record?.(tx, null)
  })
}

/** An account routing may use now: enabled, and of the environment the deployment runs in. */
export function usable(deps: Pick<Deps, 'config'>, row: PosAccountRow): boolean {
  if (!row.enabled || row.deleted_at !== null || !CONNECTORS[row.provider]) return false
  // live charges real cards only through production contracts; demo never does.
  return deps.config.env === 'live'
    ? row.environment === 'production' && row.endpoints === null
    : row.environment === 'test'
}

/** What a connector needs to talk to this account's bank (credentials opened here only). */
export function connectorConfigOf(deps: Deps, row: PosAccountRow): ConnectorConfig {
  const connector = CONNECTORS[row.provider]
  if (!connector) throw new Error(`no connector for ${row.provider}`)
  const endpoints =
    deps.config.env === 'demo' && row.endpoints
      ? row.endpoints
      : (deps.config.bankEndpointOverrides?.[`${row.provider}:${row.bank}`] ??
        connector.endpoints(row.bank, row.environment))
  return {
    credentials: open(deps, row),
    endpoints,
    environment: row.environment,
    timeouts: { connectMs: 5_000, answerMs: deps.config.bankAnswerTimeoutMs },
  }
}
