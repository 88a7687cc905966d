// Imported first by src/main.ts, before anything else is loaded.
// V8 sizes its heap for throughput on a machine's whole memory: on 16 GiB and more the young
// generation's two semi-spaces grow to 64 MiB each, and the old generation runs up to about
// twice its live size before a full collection. An API process on PostgreSQL started at
// ~280 MiB RSS and peaked at ~430 MiB under load (issue 43 asks under 250 MB). `serve` runs
// with a smaller young generation, a full collection at 1.5 × the live old generation, and
// freed heap pages given back to the system; measured, with the CPU they cost, in
// docs/performance.md ("Round 3, part 3: memory").
// V8 reads these flags only at start, so the process replaces itself (execve: same pid and
// stdio, nothing loaded yet) with a Node given them. A flag already on Node's command line
// (a cluster fork inherits them all) or in NODE_OPTIONS is left as given: V8's own sizing is
// `--max-semi-space-size=0 --heap-growing-percent=0 --no-decommit-pooled-pages`.
const HEAP_FLAGS = [
  '--max-semi-space-size=8',
  '--heap-growing-percent=50',
  '--decommit-pooled-pages',
]

const given = [...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)]
const missing = HEAP_FLAGS.filter((flag) => {
  const name = flag.split('=')[0] ?? flag
  const off = name.replace(/^--/, '--no-')
  return !given.some((g) => g === name || g === off || g.startsWith(`${name}=`))
})
if (process.argv[2] === 'serve' && process.execve !== undefined && missing.length > 0) {
  try {
    process.execve(process.execPath, [
      process.execPath,
      ...missing,
      ...process.execArgv,
      ...process.argv.slice(1),
    ])
  } catch {
    // No execve here (a platform without it, a sandbox refusing it): V8's own sizing.
  }
}
