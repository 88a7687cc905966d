// The gateway: request authentication, rate limits, scope and KYC gates, idempotency.
// It holds no domain logic.
export { signedApi } from './gateway.http.ts'
export { purgeExpiredAcceptedSignatures, purgeExpiredIdempotencyKeys } from './gateway.service.ts'
export { authFailureLimit } from './auth-failures.ts'
export { gatewayReconcilers } from './gateway.jobs.ts'
export {
  leasedRateLimiter,
  memoryRateLimiter,
  postgresRateLimiter,
  redisRateLimiter,
} from './rate-limit.ts'
export type { RateLimiter } from './rate-limit.ts'
export { canonicalString, signCanonical } from './signing.ts'
