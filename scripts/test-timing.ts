import { appendFileSync } from 'node:fs'

// Preloaded into every test process by scripts/test.ts (NODE_OPTIONS=--import): when the
// process ends it appends one line — its group of test files, its wall time and the CPU it
// used — to KURUS_TEST_TIMINGS. The runner adds them up per pass. CPU time is the honest
// number on a shared machine: wall time includes waiting for a core. Processes the tests
// start themselves (a `kurus serve`) inherit the preload but are not test processes.

const out = process.env['KURUS_TEST_TIMINGS']
if (out && process.execArgv.includes('--test')) {
  process.on('exit', () => {
    const cpu = process.cpuUsage()
    const line = {
      group: process.env['KURUS_TEST_GROUP'] ?? '',
      wallMs: Math.round(performance.now()),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    }
    appendFileSync(out, JSON.stringify(line) + '\n')
  })
}
