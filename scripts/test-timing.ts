import { appendFileSync } from 'node:fs'

// Preloaded into every test-file process by scripts/test.ts (NODE_OPTIONS=--import): when the
// process ends it appends one line — the file, its wall time and the CPU it used — to
// KURUS_TEST_TIMINGS. The runner prints the slowest files from these lines and orders the next
// run longest-first. CPU time is the honest number on a shared machine: wall time includes
// waiting for a core.

const out = process.env['KURUS_TEST_TIMINGS']
const file = process.argv[1]
if (out && file?.endsWith('.test.ts')) {
  process.on('exit', () => {
    const cpu = process.cpuUsage()
    const line = {
      file,
      wallMs: Math.round(performance.now()),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    }
    appendFileSync(out, JSON.stringify(line) + '\n')
  })
}
