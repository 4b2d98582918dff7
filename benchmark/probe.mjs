// One measurement in a fresh Node process, spawned by bench.mjs once per configuration, so what one
// contender loaded or allocated cannot show up in another's numbers.
//
//   node benchmark/probe.mjs '{"job":"first-use","contender":"tiktoken/encode","encoding":"o200k_base"}'
//
// Jobs:
//   first-use  load the library and the encoding, then encode one short text: the wait before a
//              new process can tokenize anything.
//   batch      one big batch (probeBatch in workloads.mjs) under monitorEventLoopDelay, then more
//              runs of it, then the process's peak RSS.
//   worst      one text of a single repeated letter; bench.mjs kills the process at its time limit.
//
// The result is one line on stdout: RESULT_PREFIX followed by JSON.

import fs from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { contenderByKey } from './contenders.mjs'

export const RESULT_PREFIX = 'probe-result '

/** Timer resolution of the event-loop monitor: an idle loop reads about this much delay. */
const LOOP_RESOLUTION_MS = 1
/** How long the idle loop is watched first, as the floor the batch is compared with. */
const IDLE_WATCH_MS = 200
/**
 * How long the monitor keeps watching after the batch settles. A batch that blocked the loop is
 * recorded only when the monitor's timer next fires, which needs the loop to turn at least once.
 */
const TAIL_WATCH_MS = 20
/**
 * How long the monitor runs before the batch starts. Its first timer tick only sets the point later
 * delays are measured from, so a batch that blocks the loop before that tick would go unrecorded.
 */
const LEAD_WATCH_MS = 10
const SHORT_TEXT = 'Hello, world! Tokenizers turn text into ids.'

const ns = (value) => value / 1e6

/**
 * This process's peak RSS in bytes. On Linux it is VmHWM, the high-water mark of the memory image
 * the process started with at exec. `process.resourceUsage().maxRSS` is not used there because
 * Linux carries a forked child's maximum over from its parent: every probe would report at least
 * the RSS bench.mjs had when it spawned it. Elsewhere maxRSS is the best there is.
 */
function peakRssBytes() {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))
    if (match) return { bytes: Number(match[1]) * 1024, source: 'VmHWM' }
  } catch {
    // Not Linux: fall through.
  }
  // resourceUsage reports maxRSS in kilobytes.
  return { bytes: process.resourceUsage().maxRSS * 1024, source: 'maxRSS' }
}

function loopStats(histogram) {
  return {
    samples: histogram.count,
    p50Ms: ns(histogram.percentile(50)),
    p99Ms: ns(histogram.percentile(99)),
    maxMs: ns(histogram.max),
  }
}

async function firstUse(contender, encoding) {
  const start = performance.now()
  const runner = await contender.open(encoding)
  const loaded = performance.now()
  const result = await runner.run([SHORT_TEXT])
  const done = performance.now()
  return { loadMs: loaded - start, firstEncodeMs: done - loaded, totalMs: done - start, tokens: runner.tokens(result) }
}

async function batch(contender, encoding, runs) {
  const { probeBatch } = await import('./workloads.mjs')
  const workload = probeBatch()
  const rssBeforeLoad = process.memoryUsage.rss()
  const runner = await contender.open(encoding)

  const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  histogram.enable()
  await sleep(LEAD_WATCH_MS)
  histogram.reset()
  await sleep(IDLE_WATCH_MS)
  histogram.disable()
  const idle = loopStats(histogram)
  histogram.reset()

  histogram.enable()
  await sleep(LEAD_WATCH_MS)
  const start = performance.now()
  const result = await runner.run(workload.texts)
  const firstRunMs = performance.now() - start
  await sleep(TAIL_WATCH_MS)
  histogram.disable()
  const duringBatch = loopStats(histogram)
  const tokens = runner.tokens(result)

  // Further runs, so the peak includes whatever a library keeps or fragments from one batch to the next.
  for (let run = 1; run < runs; run++) await runner.run(workload.texts)
  const peak = peakRssBytes()
  return {
    items: workload.texts.length,
    bytes: workload.bytes,
    tokens,
    firstRunMs,
    runs,
    idle,
    duringBatch,
    rssBeforeLoadBytes: rssBeforeLoad,
    maxRssBytes: peak.bytes,
    maxRssSource: peak.source,
  }
}

async function worst(contender, encoding) {
  const { worstCaseText } = await import('./workloads.mjs')
  const text = worstCaseText()
  const runner = await contender.open(encoding)
  const start = performance.now()
  const result = await runner.run([text])
  return { ms: performance.now() - start, tokens: runner.tokens(result) }
}

async function main() {
  const request = JSON.parse(process.argv[2])
  const contender = contenderByKey(request.contender)
  let result
  if (request.job === 'first-use') result = await firstUse(contender, request.encoding)
  else if (request.job === 'batch') result = await batch(contender, request.encoding, request.runs)
  else if (request.job === 'worst') result = await worst(contender, request.encoding)
  else throw new Error(`unknown probe job ${request.job}`)
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`)
}

// bench.mjs imports this module for RESULT_PREFIX; only a process started on it runs a probe.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
