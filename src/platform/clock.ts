// One injectable clock: reconcilers, the signature window and tests all read time from here,
// so a test moves time instead of sleeping.
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

export class TestClock implements Clock {
  private offsetMs = 0
  now(): Date {
    return new Date(Date.now() + this.offsetMs)
  }
  advance(ms: number): void {
    this.offsetMs += ms
  }
  set(date: Date): void {
    this.offsetMs = date.getTime() - Date.now()
  }
  reset(): void {
    this.offsetMs = 0
  }
}
