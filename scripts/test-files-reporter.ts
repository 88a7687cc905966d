// A node:test reporter (scripts/test.ts passes it to every test process): one JSON line per
// test file with the wall time of its top-level tests. Files share a process (see
// scripts/test.ts), so the process's own time says nothing about a file; the sum of its
// tests' durations does, and orders the next run longest first.

interface TestEvent {
  type: string
  data: { file?: string; nesting?: number; details?: { duration_ms?: number } }
}

export default async function* filesReporter(
  source: AsyncIterable<TestEvent>,
): AsyncGenerator<string> {
  const wall = new Map<string, number>()
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const { file, nesting, details } = event.data
    if (!file || nesting !== 0) continue
    wall.set(file, (wall.get(file) ?? 0) + (details?.duration_ms ?? 0))
  }
  for (const [file, ms] of wall) yield `${JSON.stringify({ file, wallMs: Math.round(ms) })}\n`
}
