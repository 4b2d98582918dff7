// The JS boundary: what a batch costs between JS and the engine, measured side by side in one run.
//
// For each workload and thread count, every round (interleaved, the steps in a new order each
// round, medians reported) times:
//   - the engine's own Rust `encode_into` loop over the texts on one thread (no JS, no scheduler),
//   - the same batch on the scheduler from Rust, texts already converted (no JS),
//   - the main thread's parts of a call: strings into one UTF-8 buffer, and the result out,
//   - `encodeBatch` end to end from JS (strings in, BatchEncoding out), and `encodeBatchSync`,
//   - `encodeUtf8Batch` end to end from one UTF-8 Buffer plus offsets (no string per text).
// (A whole file's lines to ids, strings against bytes, is `lines-to-ids.mjs`.)
// The Rust-side parts come from the `__profileBoundary` hook, which only the addon built with the
// `testing` feature has (`npm run build:testing`); this benchmark loads that build.
//
// Two ways, each in a table of its own:
//   - in a loop: each step runs BLOCK times back to back, the first call of each block untimed,
//     as a throughput loop (tinybench) calls a method; V8 collects when it chooses, and each call
//     follows a call of its own kind, so each pays for its own garbage;
//   - single calls: each step once, after a full collection (with `node --expose-gc`), so that no
//     step pays for another's garbage; the collector's threads then still sweep while the step
//     starts, which delays a worker woken at the start of an asynchronous call.
//
// With `--baseline FILE.node` (an earlier build of the addon), every round also times that build's
// `encodeBatch` on the same texts, in the same process, to show what the changes since gave.
//
//   node --expose-gc benchmark/boundary.mjs [--rounds N] [--quick] [--baseline FILE.node]
// writes its section ("repeated") of benchmark/results/boundary.md; `boundary-fresh.mjs` writes the
// sections on fresh text.

import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { asUtf8, msSince, sameIds } from './batch-io.mjs'
import { describeMachine } from './machine.mjs'
import { median, MiB, shuffledOrders } from './stats.mjs'
import { writeSection } from './results-file.mjs'

const require = createRequire(import.meta.url)
const HERE = path.dirname(fileURLToPath(import.meta.url))
const batchtok = process.env.BATCHTOK_ADDON
  ? require(process.env.BATCHTOK_ADDON)
  : require('../__test__/load-testing-addon.cjs')
const corpus = require('../scripts/corpus.js')
const { Tokenizer, Scheduler } = batchtok

const args = process.argv.slice(2)
const QUICK = args.includes('--quick')
const roundsFlag = args.indexOf('--rounds')
const ROUNDS = roundsFlag >= 0 ? Number(args[roundsFlag + 1]) : QUICK ? 3 : 11
const baselineFlag = args.indexOf('--baseline')
const baseline = baselineFlag >= 0 ? require(path.resolve(args[baselineFlag + 1])) : null

/**
 * A full collection before each single call (run with `node --expose-gc`; without it, nothing).
 * Every step leaves ~6 MB of results behind, and V8 collects them while the main thread is idle:
 * during a round, only inside the asynchronous steps, which would pay for every step's garbage.
 */
const collectGarbage = globalThis.gc ?? (() => {})

/** Calls per step and round in a loop; the first of each is untimed (it follows another step). */
const BLOCK = 4

/**
 * Every part of one workload at one thread count, interleaved over ROUNDS rounds: in a loop
 * (`inLoop`, BLOCK calls per step and round) or as single calls after a collection.
 */
async function measure(tokenizer, texts, threads, inLoop) {
  const scheduler = new Scheduler({ threads, policy: 'chunked' })
  const options = { scheduler }
  const old = baseline && {
    tokenizer: baseline.Tokenizer.fromEncoding(tokenizer.name),
    options: { scheduler: new baseline.Scheduler({ threads, policy: 'chunked' }) },
  }
  const { buffer, offsets } = asUtf8(texts)
  const reference = tokenizer.encodeBatchSync(texts, options)
  if (!sameIds(reference, tokenizer.encodeUtf8BatchSync(buffer, offsets, options))) {
    throw new Error('encodeUtf8Batch and encodeBatch disagree; not timing a wrong result')
  }
  const parts = {
    engineLoop: [], scheduled: [], convert: [], result: [],
    asyncEnd: [], syncEnd: [], utf8End: [], baselineEnd: [],
  }
  const steps = [
    () => {
      const p = batchtok.__profileBoundary(tokenizer, texts, options)
      parts.engineLoop.push(p.engineLoopMs)
      parts.scheduled.push(p.scheduledMs)
      parts.convert.push(p.convertMs)
      parts.result.push(p.resultMs)
    },
    async () => {
      const t = process.hrtime.bigint()
      await tokenizer.encodeBatch(texts, options)
      parts.asyncEnd.push(msSince(t))
    },
    () => {
      const t = process.hrtime.bigint()
      tokenizer.encodeBatchSync(texts, options)
      parts.syncEnd.push(msSince(t))
    },
    async () => {
      const t = process.hrtime.bigint()
      await tokenizer.encodeUtf8Batch(buffer, offsets, options)
      parts.utf8End.push(msSince(t))
    },
  ]
  if (old) {
    if (!sameIds(reference, old.tokenizer.encodeBatchSync(texts, old.options))) {
      throw new Error('the baseline build gives other ids; not timing it')
    }
    steps.push(async () => {
      const t = process.hrtime.bigint()
      await old.tokenizer.encodeBatch(texts, old.options)
      parts.baselineEnd.push(msSince(t))
    })
  }
  const lengths = () => Object.values(parts).map((times) => times.length)
  const truncateTo = (kept) => Object.values(parts).forEach((times, i) => (times.length = kept[i]))
  // One untimed warm-up round; then each round takes the steps in a new order, so that neither
  // drift nor the step before favours one.
  for (const step of steps) await step()
  truncateTo(Object.values(parts).map(() => 0))
  const nextOrder = shuffledOrders(steps.length)
  // Each round's median of each part, for ratios taken within a round (paired): the host's
  // drift between rounds then cancels out of them.
  const perRound = Object.fromEntries(Object.keys(parts).map((key) => [key, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const before = lengths()
    for (const i of nextOrder()) {
      const step = steps[i]
      if (inLoop) {
        const kept = lengths()
        await step()
        truncateTo(kept)
        for (let call = 1; call < BLOCK; call++) await step()
      } else {
        collectGarbage()
        await step()
      }
    }
    Object.entries(parts).forEach(([key, times], i) => {
      if (times.length > before[i]) perRound[key].push(median(times.slice(before[i])))
    })
  }
  const medians = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, v.length ? median(v) : NaN]))
  const pairedRatio = (a, b) => (perRound[a].length ? median(perRound[a].map((x, i) => x / perRound[b][i])) : NaN)
  const ratios = {
    engineLoopToAsync: pairedRatio('engineLoop', 'asyncEnd'),
    scheduledToAsync: pairedRatio('scheduled', 'asyncEnd'),
    scheduledToUtf8: pairedRatio('scheduled', 'utf8End'),
    baselineToAsync: pairedRatio('baselineEnd', 'asyncEnd'),
  }
  return { ...medians, ratios, mib: buffer.length / MiB, items: texts.length }
}

const fmt = (x, digits = 2) => x.toFixed(digits)

async function main() {
  const machine = describeMachine()
  const lines = []
  const out = (line = '') => {
    console.log(line)
    lines.push(line)
  }
  out('## The same batch again and again: batchtok from JS against the engine alone')
  out()
  out(`Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}.`)
  out(`Medians of ${ROUNDS} interleaved rounds after one warm-up round, the steps in a new order each round; times in ms, and ratios as the median of each round's ratio (paired). In a loop: ${BLOCK} calls of each step in a row per round, the first untimed, as a throughput loop calls a method. Single calls: one call of each step per round, ${globalThis.gc ? 'after a full collection' : 'without a collection between steps (run without --expose-gc)'} (\`node --expose-gc benchmark/boundary.mjs\`).`)
  out()
  const tokenizer = Tokenizer.fromEncoding('o200k_base')
  const workloads = [
    ['o200k_base, big.txt documents (~6.5 KB)', corpus.bigDocuments()],
    ['o200k_base, big.txt short items (~100 B)', corpus.bigShortItems()],
  ]
  const threadCounts = [...new Set([1, 2])]
  const ways = [
    ['In a loop', true],
    ['Single calls', false],
  ]
  const rowsOf = new Map()
  for (const [way, inLoop] of ways) {
    out(`${way}:`)
    out()
    out('| workload | threads | engine loop (1 thread) | scheduled (Rust) | strings in (main) | result out (main) | encodeBatch | encodeBatchSync | encodeUtf8Batch | engine loop / encodeBatch | scheduled / encodeBatch | scheduled / encodeUtf8Batch |')
    out('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    const rows = []
    rowsOf.set(inLoop, rows)
    for (const [label, texts] of workloads) {
      for (const threads of threadCounts) {
        const r = await measure(tokenizer, texts, threads, inLoop)
        rows.push({ label, threads, ...r })
        out(`| ${label} | ${threads} | ${fmt(r.engineLoop)} | ${fmt(r.scheduled)} | ${fmt(r.convert)} | ${fmt(r.result)} | ${fmt(r.asyncEnd)} | ${fmt(r.syncEnd)} | ${fmt(r.utf8End)} | ${fmt(r.ratios.engineLoopToAsync)} | ${fmt(r.ratios.scheduledToAsync)} | ${fmt(r.ratios.scheduledToUtf8)} |`)
      }
    }
    out()
  }
  out('Main thread per MiB of text (strings in, result out) and what else an `encodeBatch` call costs beyond the Rust work (in a loop):')
  out()
  out('| workload | threads | MiB | items | strings in, ms/MiB | result out, ms/MiB | encodeBatch − (in + scheduled + out), ms |')
  out('|---|---:|---:|---:|---:|---:|---:|')
  for (const r of rowsOf.get(true)) {
    const rest = r.asyncEnd - (r.convert + r.scheduled + r.result)
    out(`| ${r.label} | ${r.threads} | ${fmt(r.mib)} | ${r.items} | ${fmt(r.convert / r.mib, 3)} | ${fmt(r.result / r.mib, 3)} | ${fmt(rest)} |`)
  }
  out()
  if (baseline) {
    out(`The same \`encodeBatch\` calls on the baseline build \`${args[baselineFlag + 1]}\`, interleaved with the rows above:`)
    out()
    out('| workload | threads | baseline, in a loop | this build | gain | baseline, single calls | this build | gain |')
    out('|---|---:|---:|---:|---:|---:|---:|---:|')
    rowsOf.get(true).forEach((r, i) => {
      const single = rowsOf.get(false)[i]
      out(`| ${r.label} | ${r.threads} | ${fmt(r.baselineEnd)} | ${fmt(r.asyncEnd)} | ${fmt(r.ratios.baselineToAsync)}x | ${fmt(single.baselineEnd)} | ${fmt(single.asyncEnd)} | ${fmt(single.ratios.baselineToAsync)}x |`)
    })
    out()
  }
  if (!QUICK) {
    const target = path.join(HERE, 'results', 'boundary.md')
    writeSection(target, 'repeated', lines)
    console.log(`\nwrote section "repeated" of ${path.relative(process.cwd(), target)}`)
  }
}

await main()
