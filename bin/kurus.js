#!/usr/bin/env node
// Runs on the project's pinned Node (npx kurus …), which strips TypeScript types natively.
// The version is checked here rather than in package.json `engines`: npx checks `engines`
// against the Node that runs npm itself (the machine's, possibly older), not the pinned one
// that runs this file, and printed EBADENGINE warnings on every `npx kurus` for nothing.
import process from 'node:process'

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `kurus needs Node >= 22.18 (this is ${process.version}); run it through npx or npm scripts, ` +
      'which use the Node 24 the project pins\n',
  )
  process.exit(1)
}
await import('../src/main.ts')
