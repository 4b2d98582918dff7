import { defineConfig } from 'vitest/config'

// The spec that measures CPU use over wall-clock windows (the pool idle after the storm, its share
// of the process while it works) and aborts batches at set moments runs on its own, after the
// others, so that no second file's load stretches those windows.
const ALONE = ['__test__/reliability.spec.ts']

export default defineConfig({
  test: {
    // The parity suites encode whole corpora; the machine is shared, so allow for a slow run.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Native addons and worker_threads: run test files in child processes. Two files at a time:
    // one at a time keeps the 2-core build machine only about 70% busy (files wait on the CLI's
    // child processes, on tsc, on single-threaded JS). The specs count and compare rather than
    // time, except the ones in ALONE, which measure CPU and so run with nothing beside them.
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'specs', include: ['__test__/**/*.spec.ts'], exclude: ALONE, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
  },
})
