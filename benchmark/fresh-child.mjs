// One contender, one model, one corpus, in a process of its own: fresh.mjs starts one per
// contender × corpus × round, so no text it times can have been encoded in this process before.
//
//   node --expose-gc benchmark/fresh-child.mjs '<job as JSON>'
//
// The job names the model, the contender, a warm-up slice (from another corpus) and the slices to
// time, each as an item range of a corpus's JSONL file. In order:
//   1. load the library and the model (timed: load ms);
//   2. warm up on the warm-up slice (JIT, thread pools, the allocator), never timed;
//   3. fresh: each slice once, one timed call each, text this process has not seen;
//   4. repeated: the first slice again, `repeats` timed calls, as a tinybench loop would do;
//   5. the ids of every timed call, as a digest per text, for fresh.mjs to compare with batchtok's.
// Prints one line: RESULT_PREFIX and the JSON result.

import { performance } from 'node:perf_hooks'
import { freshContenderByKey } from './fresh-contenders.mjs'
import { RESULT_PREFIX, readCorpusItems, idsDigest } from './fresh-corpora.mjs'

const collect = globalThis.gc ?? (() => {})

/**
 * One timed call: its wall time, the process's CPU time over it, the time until `run` returned
 * (the main thread's share, where the contender hands the work to other threads and returns a
 * promise), and, where the runner can tell (batchtok), its scheduler's account of the batch:
 * each thread's busy time on it.
 */
async function timed(runner, texts) {
  collect()
  const cpu = process.cpuUsage()
  const start = performance.now()
  const pending = runner.run(texts)
  const heldMs = performance.now() - start
  const result = await pending
  const ms = performance.now() - start
  const used = process.cpuUsage(cpu)
  const busyMs = runner.busyMs?.() ?? undefined
  return { result, ms, heldMs, busyMs, cpuMs: (used.user + used.system) / 1000 }
}

function digests(contender, runner, result, count) {
  const out = []
  for (let i = 0; i < count; i++) {
    out.push(contender.kind === 'count' ? runner.countOf(result, i) : idsDigest(runner.idsOf(result, i)))
  }
  return out
}

async function main() {
  const job = JSON.parse(process.argv[2])
  const contender = freshContenderByKey(job.key)
  const textsOf = (slice) => readCorpusItems(slice.corpus, slice.start, slice.end)

  const loadStart = performance.now()
  const runner = await contender.open(job.model)
  const loadMs = performance.now() - loadStart

  const warmup = textsOf(job.warmup)
  let warmupCalls = 0
  const warmStart = performance.now()
  while (warmupCalls < job.warmupCalls || (performance.now() - warmStart < job.warmupMs && warmupCalls < 2 * job.warmupCalls)) {
    await runner.run(warmup)
    warmupCalls++
  }

  const fresh = []
  const kept = []
  for (const slice of job.slices) {
    const texts = textsOf(slice)
    const { result, ms, heldMs, busyMs, cpuMs } = await timed(runner, texts)
    kept.push({ slice, result, count: texts.length })
    fresh.push({ ...slice, ms, heldMs, busyMs, cpuMs })
  }

  const repeated = []
  const first = textsOf(job.slices[0])
  for (let i = 0; i < job.repeats; i++) {
    const { ms, cpuMs } = await timed(runner, first)
    repeated.push({ ...job.slices[0], ms, cpuMs })
  }

  const checks = kept.map(({ slice, result, count }) => ({ ...slice, digests: digests(contender, runner, result, count) }))
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify({ loadMs, warmupCalls, fresh, repeated, checks })}\n`)
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exit(1)
})
