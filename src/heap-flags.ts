// Imported first by src/main.ts, before anything else is loaded.
// V8 sizes the young generation from the machine's memory: on 16 GiB and more each of its two
// semi-spaces may grow to 64 MiB, and an API process kept most of that resident after start and
// under load (issue 43: under 250 MB RSS). `serve` caps them at 16 MiB; the measured cost in CPU
// per request is in docs/performance.md ("Round 3, part 3: memory"). V8 reads the flag only at
// start, so the process replaces itself (execve: same pid and stdio, nothing loaded yet) with a
// Node given the flag, unless it is there already: a cluster fork inherits it, and an operator's
// NODE_OPTIONS=--max-semi-space-size=N (0: V8's own sizing) wins.
const SEMI_SPACE_FLAG = '--max-semi-space-size'
if (
  process.argv[2] === 'serve' &&
  process.execve !== undefined &&
  ![...process.execArgv, process.env['NODE_OPTIONS'] ?? ''].some((a) => a.includes(SEMI_SPACE_FLAG))
) {
  try {
    process.execve(process.execPath, [
      process.execPath,
      `${SEMI_SPACE_FLAG}=16`,
      ...process.execArgv,
      ...process.argv.slice(1),
    ])
  } catch {
    // No execve here (a platform without it, a sandbox refusing it): V8's own sizing.
  }
}
