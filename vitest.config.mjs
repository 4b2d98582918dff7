import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    // The parity suites encode whole corpora; the machine is shared, so allow for a slow run.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Native addons and worker_threads: run test files in child processes. Two files at a time:
    // one at a time keeps the 2-core build machine only about 70% busy (files wait on the CLI's
    // child processes, on tsc, on single-threaded JS), and the specs count and compare, never
    // time, so they hold under the load a second file adds.
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
})
