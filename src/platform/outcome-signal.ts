// Wake-ups for requests waiting on another request's outcome on the same row (a capture
// waiting for a capture, a duplicate 3DS submit waiting for the first). The database stays
// the truth: a waiter always re-reads the row. The signal only says "look now": a request in
// this process that records an outcome wakes the waiters at once, and a waiter whose
// outcome is recorded by another process re-reads after `fallbackMs` instead (no wake-up
// crosses processes), so the wait is short in the common case and still bounded otherwise.

export class OutcomeSignal {
  private readonly waiters = new Map<string, Set<() => void>>()

  /** Resolves when `key` is notified, or after `ms`, whichever comes first. */
  wait(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(key)
      if (!set) {
        set = new Set()
        this.waiters.set(key, set)
      }
      const waiters = set
      const done = () => {
        clearTimeout(timer)
        waiters.delete(done)
        if (waiters.size === 0 && this.waiters.get(key) === waiters) this.waiters.delete(key)
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, ms))
      waiters.add(done)
    })
  }

  /** Wakes every waiter on `key` (after the outcome's transaction has committed). */
  notify(key: string): void {
    const set = this.waiters.get(key)
    if (!set) return
    for (const done of [...set]) done()
  }

  /** Waiters currently parked (metrics and tests). */
  get size(): number {
    let n = 0
    for (const set of this.waiters.values()) n += set.size
    return n
  }
}
