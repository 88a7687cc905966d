#!/usr/bin/env node
// Runs on the project's pinned Node (npx kurus …), which strips TypeScript types natively.
import '../src/main.ts'
