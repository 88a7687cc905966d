// A FIFO async mutex. Used to serialise access to the single PGlite connection.
export class Mutex {
  private locked = false
  private readonly waiters: (() => void)[] = []

  /** Held right now? */
  get busy(): boolean {
    return this.locked
  }

  /** Callers queued behind the holder. */
  get waiting(): number {
    return this.waiters.length
  }

  lock(): Promise<void> {
    if (!this.locked) {
      this.locked = true
      return Promise.resolve()
    }
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  unlock(): void {
    const next = this.waiters.shift()
    if (next) next()
    else this.locked = false
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.lock()
    try {
      return await fn()
    } finally {
      this.unlock()
    }
  }
}
