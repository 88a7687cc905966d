import type { Db, Deps, Tx } from '../../database.ts'
import { hmacSha256Hex, safeEqual } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import { isUuidV4 } from '../../platform/ids.ts'
import type { AuthContext, RefusedAuth } from '../../platform/http/auth.ts'
import { findUsableKey, type AuthKey } from '../merchants/index.ts'
import { gatewayError } from './gateway.errors.ts'
import * as repo from './gateway.repository.ts'
import type { IdempotencyIdentity } from './gateway.repository.ts'
import type { IdempotencyRow } from './gateway.table.ts'
export type { IdempotencyIdentity }
import type { ReplayStore } from './replay.ts'
import { TIMESTAMP_SKEW_MS_MAX, canonicalString, parseTimestamp, signCanonical } from './signing.ts'

export interface SignedHeaders {
  apiKey: string | undefined
  signature: string | undefined
  timestamp: string | undefined
}

/** A request whose headers passed: its key is known, its timestamp fresh. */
export interface PendingSignedRequest {
  key: AuthKey
  timestamp: string
  timestampMs: number
  signature: string
}

const PUBLIC_KEY = /^pk_(demo|live)_[A-Za-z0-9_-]{8,128}$/

/**
 * The checks that need only the headers, made before a byte of the body is read: key format
 * (1003), timestamp window (1001), signature present and well formed (1002), then the key
 * lookup (1003, cached per process). What fails here costs no body read, hash or parse.
 */
export async function checkSignedHeaders(
  deps: Deps,
  headers: SignedHeaders,
): Promise<PendingSignedRequest> {
  const { apiKey, timestamp, signature } = headers
  const match = apiKey ? PUBLIC_KEY.exec(apiKey) : null
  // A key of the other environment is the same answer as an unknown one (CONTRACT.md).
  if (!apiKey || !match || match[1] !== deps.config.env) throw gatewayError('api_key_invalid')
  const ts = timestamp ? parseTimestamp(timestamp) : undefined
  if (!timestamp) throw refused('timestamp_invalid', 'the X-Timestamp header is missing')
  if (ts === undefined) {
    throw refused(
      'timestamp_invalid',
      `X-Timestamp ${JSON.stringify(timestamp.slice(0, 40))} is not ISO 8601 UTC ending in Z`,
    )
  }
  const skew = deps.clock.now().getTime() - ts
  if (Math.abs(skew) > TIMESTAMP_SKEW_MS_MAX) {
    throw refused(
      'timestamp_invalid',
      `X-Timestamp is ${duration(Math.abs(skew))} ${skew > 0 ? 'behind' : 'ahead of'} the ` +
        "server's clock (at most 5 min either way): check the client's clock",
    )
  }
  if (!signature) throw refused('signature_invalid', 'the X-Signature header is missing')
  if (!/^[0-9a-f]{64}$/.test(signature)) {
    throw refused('signature_invalid', 'X-Signature is not 64 lower-case hex characters')
  }
  const key = await findUsableKey(deps, apiKey)
  if (!key || key.env !== deps.config.env) throw gatewayError('api_key_invalid')
  return { key, timestamp, timestampMs: ts, signature }
}

/** Why a request with a known key was refused, for the merchant's request log: no secret. */
const refusalReasons = new WeakMap<Error, string>()

function refused(code: 'timestamp_invalid' | 'signature_invalid', reason: string) {
  const error = gatewayError(code)
  refusalReasons.set(error, reason)
  return error
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000)
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`
}

/**
 * Whose request a refusal was, when its X-Api-Key names a usable key of this environment, and
 * why it was refused: the merchant reads it in GET /v1/logs (`kurus logs tail`). A refusal for
 * an unknown key belongs to no merchant and stays in the server's own log only.
 */
export async function refusalOf(
  deps: Deps,
  apiKey: string | undefined,
  error: unknown,
): Promise<RefusedAuth | null> {
  if (!(error instanceof Error)) return null
  const reason = refusalReasons.get(error)
  if (reason === undefined || !apiKey) return null
  const key = await findUsableKey(deps, apiKey)
  if (!key || key.env !== deps.config.env) return null
  return {
    apiKeyId: key.apiKeyId,
    merchantId: key.merchantId,
    submerchantId: key.submerchantId,
    reason,
  }
}

/** The constant-time HMAC comparison over the exact body bytes (1002), before any parse. */
export function verifySignature(
  pending: PendingSignedRequest,
  method: string,
  /** Path only: no scheme, host or query string. */
  path: string,
  rawBody: Buffer | undefined,
): AuthContext {
  const { key } = pending
  const expected = signCanonical(
    key.secretKey,
    canonicalString(pending.timestamp, method, path, rawBody),
  )
  if (!safeEqual(expected, pending.signature)) {
    // What the server signed, so the client can compare: never the body or its hash (a hash
    // of a small card body could be brute-forced back to the card number).
    throw refused(
      'signature_invalid',
      `X-Signature does not match HMAC-SHA256(secret key, X-Timestamp + "\\n" + ${method} + ` +
        `"\\n" + ${JSON.stringify(path)} + "\\n" + hex SHA-256 of the ${rawBody?.length ?? 0}-byte body)` +
        ': sign the path without its query string, and the exact body bytes sent',
    )
  }
  return {
    apiKeyId: key.apiKeyId,
    merchantId: key.merchantId,
    storeId: key.storeId,
    submerchantId: key.submerchantId,
    scope: key.scope,
    kycStatus: key.kycStatus,
  }
}

// A signature stays acceptable until its timestamp is 5 minutes old by the server's clock;
// the margin covers API processes whose clocks differ by up to a minute.
const ACCEPTED_SIGNATURE_MARGIN_MS = 60 * 1000

/**
 * Refuses a byte-identical replay of an accepted state-changing request (401 SVC-GW-1006).
 * A replay that carries the Idempotency-Key its original carried goes on, to the idempotency
 * record, which answers it (stored response, 409 while running, or a re-run after a released
 * key): that is how a client retries, and it can never act twice. The key is not covered by
 * the signature, so a replay with another key, or one added, is refused like any other.
 */
export async function rejectReplay(
  store: ReplayStore,
  pending: PendingSignedRequest,
  idempotencyKey: string | undefined,
): Promise<void> {
  const key = idempotencyKey?.toLowerCase() ?? null
  const seen = await store.remember({
    signature: pending.signature,
    idempotencyKey: key,
    expiresAt: new Date(pending.timestampMs + TIMESTAMP_SKEW_MS_MAX + ACCEPTED_SIGNATURE_MARGIN_MS),
  })
  if (seen.first) return
  if (key !== null && seen.idempotencyKey === key) return
  throw gatewayError('request_replayed')
}

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
// A claim of no known owner (written before owners were recorded) is taken over after this.
const IDEMPOTENCY_STALE_MS = 60 * 1000

/**
 * This API process as the holder of idempotency claims (decision 0035): its id, written on
 * every claim it takes, and the requests of this process that hold one right now. A claim
 * whose owner is this process but whose request is no longer running here, or whose owner's
 * lease lapsed (the process died), is taken over at once by a retry: no 60 s wall.
 */
export interface ClaimOwner {
  readonly id: string
  readonly inFlight: Set<string>
}

export type IdempotencyStart =
  | {
      kind: 'proceed'
      /** Written by the use case's own claim transaction (routes that opt in). */
      deferred: boolean
      /** What the earlier, unfinished attempt's claim made: the retry resumes it. */
      resourceId: string | null
      claim: repo.ClaimFields
    }
  | { kind: 'replay'; status: number; body: string; contentType: string; requestId: string }

/**
 * What identifies a request's payload for idempotency: a keyed HMAC, never a plain hash. The
 * body may hold a card number and CVC (POST /v1/cards/tokens), and a plain hash of a body of
 * known shape could be brute-forced back to them.
 */
export function idempotencyFingerprint(masterKey: Buffer, rawBody: Buffer | undefined): string {
  const key = hmacSha256Hex(masterKey, 'kurus/gateway/idempotency-fingerprint')
  return hmacSha256Hex(key, rawBody ?? '')
}

export function validateIdempotencyKey(key: string): void {
  if (!isUuidV4(key)) throw gatewayError('idempotency_key_invalid')
}

/** Whether the request holding `row`'s claim is gone (its process died or it ended here). */
async function claimAbandoned(tx: Tx, owner: ClaimOwner, row: IdempotencyRow, now: Date) {
  if (row.owner === owner.id) return !owner.inFlight.has(row.request_id)
  if (row.owner !== null) {
    const live = await repo.processLeaseLive(tx, row.owner)
    if (live !== undefined) return !live
  }
  return row.locked_at === null || now.getTime() - row.locked_at.getTime() > IDEMPOTENCY_STALE_MS
}

/**
 * Claims (API key, endpoint, Idempotency-Key) for this request, or tells it to replay the
 * stored response, or refuses it (2001 another payload, 2002 still running). A `deferred`
 * claim is only checked here: the use case writes the record in its own claim transaction
 * (one commit fewer on the hot path), and a request that fails before it leaves nothing.
 */
export async function beginIdempotentRequest(
  deps: Deps,
  id: IdempotencyIdentity,
  rawBody: Buffer | undefined,
  requestId: string,
  owner: ClaimOwner,
  deferred = false,
): Promise<IdempotencyStart> {
  const fingerprint = idempotencyFingerprint(deps.config.masterKey, rawBody)
  const now = deps.clock.now()
  const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_MS)
  const claim = { fingerprint, requestId, now, expiresAt, owner: owner.id }
  const fresh: IdempotencyStart = { kind: 'proceed', deferred, resourceId: null, claim }
  if (deferred) {
    const row = await repo.findIdempotencyKey(deps.db, id)
    if (!row) return fresh
  } else if (
    await repo.insertIdempotencyKey(deps.db, id, fingerprint, requestId, now, expiresAt, owner.id)
  ) {
    return fresh
  }
  const decided = await transact(deps.db, async (tx): Promise<IdempotencyStart | 'absent'> => {
    const row = await repo.lockIdempotencyKey(tx, id)
    // Deleted between our look and this read (a 5xx released it): claim it afresh.
    if (!row) return 'absent'
    if (row.expires_at.getTime() <= now.getTime()) {
      await repo.updateIdempotencyReclaimed(
        tx,
        id,
        fingerprint,
        requestId,
        now,
        expiresAt,
        owner.id,
        false,
      )
      return { ...fresh, deferred: false }
    }
    if (row.fingerprint !== fingerprint) throw gatewayError('idempotency_mismatch')
    if (row.state === 'done' && row.response_status !== null && row.response_body !== null) {
      return {
        kind: 'replay',
        status: row.response_status,
        body: row.response_body,
        contentType: row.response_content_type ?? 'application/json; charset=utf-8',
        requestId: row.request_id,
      }
    }
    if (row.state === 'retryable' || (await claimAbandoned(tx, owner, row, now))) {
      await repo.updateIdempotencyReclaimed(
        tx,
        id,
        fingerprint,
        requestId,
        now,
        undefined,
        owner.id,
        true,
      )
      return { ...fresh, deferred: false, resourceId: row.resource_id }
    }
    throw gatewayError('idempotency_in_progress')
  })
  if (decided !== 'absent') return decided
  if (deferred) return fresh
  await repo.insertIdempotencyKey(deps.db, id, fingerprint, requestId, now, expiresAt, owner.id)
  return fresh
}

/**
 * Records how a claimed request ended, when its use case did not record it in its own
 * outcome transaction. Final answers are kept for verbatim replay; a 202 (work still in
 * flight) is re-evaluated on retry; a 5xx or a shed request gives the claim back.
 */
export async function finishIdempotentRequest(
  deps: Deps,
  id: IdempotencyIdentity,
  claim: repo.ClaimFields,
  response: { status: number; body: string; contentType: string; errorCode?: string },
): Promise<void> {
  const { status } = response
  if (status >= 500 || status === 429 || response.errorCode === 'SVC-GW-2002') {
    await repo.releaseIdempotencyKey(deps.db, id, claim.requestId)
  } else if (status === 202) {
    await repo.updateIdempotencyRetryable(deps.db, id, claim.requestId)
  } else {
    await repo.recordIdempotencyAnswer(deps.db, id, claim, response)
  }
}

export type ClaimFields = repo.ClaimFields

/** In the use case's claim transaction: false when the key is no longer this request's. */
export function claimIdempotentResource(
  db: Db,
  id: IdempotencyIdentity,
  claim: ClaimFields,
  resourceId: string,
): Promise<boolean> {
  return repo.claimIdempotencyResource(db, id, claim, resourceId)
}

/** In the use case's outcome transaction: false when the key is no longer this request's. */
export function recordIdempotentAnswer(
  db: Db,
  id: IdempotencyIdentity,
  claim: ClaimFields,
  answer: { status: number; body: string; contentType: string },
): Promise<boolean> {
  return repo.recordIdempotencyAnswer(db, id, claim, answer)
}

/** Whether this request's answer is the committed one. */
export async function idempotentAnswerCommitted(
  deps: Deps,
  id: IdempotencyIdentity,
  requestId: string,
): Promise<boolean> {
  const row = await repo.findIdempotencyKey(deps.db, id)
  return row?.state === 'done' && row.request_id === requestId
}

const LEASE_TTL_SECONDS = 5
const LEASE_RENEW_MS = 1_000

/**
 * Keeps this process's lease alive (every second; it lapses 5 s after the last renewal) and
 * gives back the claims of requests that ended while their release could not be written (the
 * database was away): a retry may then resume them without waiting for anything.
 */
export function holdProcessLease(
  deps: Deps,
  owner: ClaimOwner,
  orphans: Map<string, { id: IdempotencyIdentity; requestId: string }>,
): { stop(): void } {
  let running = false
  const tick = async () => {
    if (running) return
    running = true
    try {
      await repo.renewProcessLease(deps.db, owner.id, LEASE_TTL_SECONDS)
      for (const [k, orphan] of orphans) {
        await repo.releaseIdempotencyKey(deps.db, orphan.id, orphan.requestId)
        orphans.delete(k)
      }
    } catch (error) {
      deps.log.debug({ err: error }, 'process lease not renewed')
    } finally {
      running = false
    }
  }
  void tick()
  const timer = setInterval(() => void tick(), LEASE_RENEW_MS)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}

const PURGE_BATCH = 5000
const PURGE_BATCHES_MAX = 200

/** Deletes records past their 24 hours, in short batches so no statement holds locks long. */
export async function purgeExpiredIdempotencyKeys(deps: Deps): Promise<number> {
  await repo.deleteLapsedProcessLeases(deps.db)
  const now = deps.clock.now()
  let total = 0
  for (let i = 0; i < PURGE_BATCHES_MAX; i++) {
    const deleted = await repo.deleteExpiredIdempotencyKeys(deps.db, now, PURGE_BATCH)
    total += deleted
    if (deleted < PURGE_BATCH) break
  }
  return total
}

/** Deletes accepted signatures past their window (the database store; Redis expires its own). */
export async function purgeExpiredAcceptedSignatures(deps: Deps): Promise<number> {
  const now = deps.clock.now()
  let total = 0
  for (let i = 0; i < PURGE_BATCHES_MAX; i++) {
    const deleted = await repo.deleteExpiredAcceptedSignatures(deps.db, now, PURGE_BATCH)
    total += deleted
    if (deleted < PURGE_BATCH) break
  }
  return total
}
