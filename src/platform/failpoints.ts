// Test-only fail points: named places inside a use case where a reliability test makes the
// process fail the way a crash or a broken dependency would, to prove that a retry with the
// same Idempotency-Key completes exactly once (test/reliability/, docs/reliability.md).
//
//   failpoint('charge.after_acquirer')   // in the code: a no-op unless armed
//
// Armed in-process (armFailpoint) or for a whole process through the environment:
//
//   KURUS_FAILPOINTS=charge.after_intent:throw,charge.after_acquirer:exit@0.25*2
//   KURUS_FAILPOINTS_SEED=42
//
// `throw` fails the request (or reconciler run) with a FailpointError, a 500, and the process
// lives on; `exit` sends SIGKILL to this process at that point: no response, no finally
// block, no graceful close, exactly what `kill -9` does; `pause` sends SIGSTOP to this
// process at that point and carries on from that line when the test sends SIGCONT — so a
// test can restart PostgreSQL (or do anything else) while a request or job is held between
// two phases (test/reliability/exactly-once-pg-restart.rel.ts). The whole process stops, as a
// stalled one does; it says so on stderr first (`fail point <name>: SIGSTOP pid <pid>`). `@p` fires with probability p from a
// PRNG seeded by KURUS_FAILPOINTS_SEED (so a seed replays), `*n` at most n times in this
// process. The environment is read here, not in config.ts, on purpose: fail points are not
// configuration and no Deps carries them; KURUS_ENV=live ignores KURUS_FAILPOINTS entirely.
// KURUS_FAILPOINTS_FILE=<path> (also ignored when live) lets a test re-arm a running process
// without restarting it: on SIGUSR2 the process replaces its armed fail points with the spec
// in that file and says `fail points armed: <spec>` on stderr.
// Unarmed, failpoint() is one Map size check.

import { readFileSync } from 'node:fs'

export const FAILPOINT_NAMES = [
  'charge.after_intent',
  'charge.after_acquirer',
  'charge.before_commit',
  'charge.after_commit',
  'capture.after_claim',
  'capture.after_acquirer',
  'capture.before_commit',
  'capture.after_commit',
  'answer.before_record',
  'answer.before_flush',
  'answer.after_flush',
  'refund.after_reserve',
  'refund.after_acquirer',
  'refund.before_commit',
  'refund.after_commit',
  '3ds.after_claim',
  'chargeback.after_commit',
  'review.after_action',
  'payout.before_commit',
  'payout.after_commit',
  'payout.before_rail',
  'payout.after_rail',
] as const

export type FailpointName = (typeof FAILPOINT_NAMES)[number]
export type FailpointAction = 'throw' | 'exit' | 'pause'

export interface FailpointArm {
  action: FailpointAction
  /** 0..1; 1 (the default) fires at every hit. */
  probability?: number
  /** Fire at most this many times; unlimited by default. */
  times?: number
}

interface Armed {
  action: FailpointAction
  probability: number
  remaining: number
}

export class FailpointError extends Error {
  override name = 'FailpointError'
  readonly failpoint: FailpointName
  constructor(name: FailpointName) {
    super(`fail point ${name} fired`)
    this.failpoint = name
  }
}

const armed = new Map<FailpointName, Armed>()
const fired = new Map<FailpointName, number>()

/** mulberry32: a tiny seedable PRNG, so `@p` fail points replay with their seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

let random = prng(1)

function isName(name: string): name is FailpointName {
  return (FAILPOINT_NAMES as readonly string[]).includes(name)
}

/** Parses `name:action[@p][*n],…`; a typo throws, so a test can't pass by arming nothing. */
export function parseFailpoints(spec: string): Map<FailpointName, FailpointArm> {
  const out = new Map<FailpointName, FailpointArm>()
  for (const part of spec.split(',').map((s) => s.trim())) {
    if (part === '') continue
    const match = /^([a-z0-9_.]+):(throw|exit|pause)(?:@([0-9.]+))?(?:\*(\d+))?$/.exec(part)
    const name = match?.[1] ?? ''
    if (!match || !isName(name)) {
      throw new Error(
        `KURUS_FAILPOINTS: cannot parse "${part}" (name:throw|exit|pause[@p][*n], names: ${FAILPOINT_NAMES.join(', ')})`,
      )
    }
    const probability = match[3] === undefined ? 1 : Number(match[3])
    if (!(probability >= 0 && probability <= 1)) {
      throw new Error(`KURUS_FAILPOINTS: probability of ${name} must be in 0..1`)
    }
    out.set(name, {
      action: match[2] as FailpointAction,
      probability,
      ...(match[4] === undefined ? {} : { times: Number(match[4]) }),
    })
  }
  return out
}

export function armFailpoint(name: FailpointName, arm: FailpointArm): void {
  armed.set(name, {
    action: arm.action,
    probability: arm.probability ?? 1,
    remaining: arm.times ?? Number.POSITIVE_INFINITY,
  })
}

export function disarmAllFailpoints(): void {
  armed.clear()
}

/** How many times the fail point fired in this process (tests assert it did). */
export function failpointHits(name: FailpointName): number {
  return fired.get(name) ?? 0
}

/** Reseeds the PRNG behind `@p` fail points. */
export function seedFailpoints(seed: number): void {
  random = prng(seed)
}

/** A named place where an armed test makes this process fail; nothing at all otherwise. */
export function failpoint(name: FailpointName): void {
  if (armed.size === 0) return
  const arm = armed.get(name)
  if (!arm || arm.remaining <= 0) return
  if (arm.probability < 1 && random() >= arm.probability) return
  arm.remaining--
  fired.set(name, (fired.get(name) ?? 0) + 1)
  if (arm.action === 'exit') {
    process.stderr.write(`fail point ${name}: SIGKILL pid ${process.pid}\n`)
    process.kill(process.pid, 'SIGKILL')
  }
  if (arm.action === 'pause') {
    process.stderr.write(`fail point ${name}: SIGSTOP pid ${process.pid}\n`)
    process.kill(process.pid, 'SIGSTOP')
    return
  }
  throw new FailpointError(name)
}

function armFromEnvironment(env: NodeJS.ProcessEnv): void {
  if (env['KURUS_ENV'] === 'live') return
  const file = env['KURUS_FAILPOINTS_FILE']
  if (file) {
    process.on('SIGUSR2', () => {
      const spec = readFileSync(file, 'utf8').trim()
      disarmAllFailpoints()
      for (const [name, arm] of parseFailpoints(spec)) armFailpoint(name, arm)
      process.stderr.write(`fail points armed: ${spec}\n`)
    })
  }
  const spec = env['KURUS_FAILPOINTS']
  if (!spec) return
  seedFailpoints(Number(env['KURUS_FAILPOINTS_SEED'] ?? '1') || 1)
  for (const [name, arm] of parseFailpoints(spec)) armFailpoint(name, arm)
}

armFromEnvironment(process.env)
