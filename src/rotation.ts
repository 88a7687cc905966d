import type { Kysely } from 'kysely'
import type { Deps } from './database.ts'
import { resealMasterKeyCheck } from './platform/master-key-check.ts'
import type { ReencryptionReport } from './platform/key-rotation.ts'
import { reencryptInvoicePublicHashes } from './modules/invoices/index.ts'
import { reencryptApiKeySecrets, reencryptDashboardTotpSecrets } from './modules/merchants/index.ts'
import { rotateMasterKey, type RotationReport } from './modules/vault/index.ts'
import { reencryptWebhookSecrets } from './modules/webhooks/index.ts'

// `kurus rotate-master-key`: everything sealed under the master key is brought under the
// current KURUS_MASTER_KEY, each module re-encrypting its own columns. Every step is
// idempotent and restartable; once a run reports nothing left under an old key (no unknown
// vault keys, no unreadable rows), KURUS_MASTER_KEY_PREVIOUS can be emptied.

export interface MasterKeyRotationReport {
  vault: RotationReport
  /** Per sealed secret: merchants' API key secrets, webhook signing secrets, invoice bearers,
   * dashboard users' TOTP secrets. */
  secrets: {
    apiKeySecrets: ReencryptionReport
    webhookSecrets: ReencryptionReport
    invoicePublicHashes: ReencryptionReport
    dashboardTotpSecrets: ReencryptionReport
  }
  /** True when nothing is left that only an old key, or no key held, opens. */
  complete: boolean
}

export async function rotateMasterKeyEverywhere(
  deps: Pick<Deps, 'db' | 'config'>,
  batchSize?: number,
): Promise<MasterKeyRotationReport> {
  const vault = await rotateMasterKey(deps, batchSize)
  const secrets = {
    apiKeySecrets: await reencryptApiKeySecrets(deps, batchSize),
    webhookSecrets: await reencryptWebhookSecrets(deps, batchSize),
    invoicePublicHashes: await reencryptInvoicePublicHashes(deps, batchSize),
    dashboardTotpSecrets: await reencryptDashboardTotpSecrets(deps, batchSize),
  }
  const complete =
    Object.keys(vault.unknown).length === 0 &&
    Object.values(secrets).every((r) => r.unreadable === 0)
  // Only once nothing is left under an old key: from then on the old key is not needed to
  // start, and a start with it alone is refused.
  if (complete) await resealMasterKeyCheck(deps.db as Kysely<unknown>, deps.config.masterKey)
  return { vault, secrets, complete }
}
