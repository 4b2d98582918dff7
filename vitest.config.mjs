import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    // The parity suites encode whole corpora; the machine is shared, so allow for a slow run.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Native addons and worker_threads: run test files in child processes, one file at a time
    // (the machine has 2 cores and the addon uses both).
    pool: 'forks',
    fileParallelism: false,
  },
})
