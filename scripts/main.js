'use strict'
// The main job: the embedded o200k_base encoding over big.txt, cut into ~6.5 KB documents and
// ~100-byte items, with every scheduler policy at 1, 2 and all threads. Prints throughput (median
// of several rounds, the policies interleaved within each) and each policy's ratio to the per-item
// rayon baseline measured in the same run.
//
// `npm start` runs it; `npm run bench` has the full benchmark against other tokenizers.

const os = require('node:os')
const { Tokenizer, Scheduler } = require('../index.js')
const corpus = require('./corpus.js')

const RUNS = Number(process.env.BATCHTOK_RUNS || 5)
const POLICIES = ['serial', 'rayon', 'rayon-min-len', 'chunked']

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * Times `encodeBatch` of `texts` on each scheduler, round-robin: one untimed warm-up round, then
 * RUNS rounds, each starting one contender later, so drift in a shared machine favours none.
 */
async function measure(tokenizer, texts, schedulers) {
  const names = Object.keys(schedulers)
  const seconds = Object.fromEntries(names.map((name) => [name, []]))
  let tokens = 0
  for (let round = -1; round < RUNS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + Math.max(round, 0)) % names.length]
      const start = process.hrtime.bigint()
      const batch = await tokenizer.encodeBatch(texts, { scheduler: schedulers[name] })
      if (round >= 0) seconds[name].push(Number(process.hrtime.bigint() - start) / 1e9)
      tokens = batch.ids.length
    }
  }
  return Object.fromEntries(names.map((name) => [name, { seconds: median(seconds[name]), tokens }]))
}

async function main() {
  const threadCounts = [...new Set([1, 2, os.availableParallelism()])]
  console.log(`batchtok main job: o200k_base over big.txt`)
  console.log(`machine: ${os.cpus()[0].model}, nproc ${os.availableParallelism()}, Node ${process.version}`)
  const started = process.hrtime.bigint()
  const tokenizer = Tokenizer.fromEncoding('o200k_base')
  console.log(`o200k_base loaded in ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms`)
  console.log(`median of ${RUNS} interleaved rounds of encodeBatch (strings in, BatchEncoding out)\n`)

  const workloads = [
    ['documents (~6.5 KB)', corpus.bigDocuments()],
    ['short items (~100 B)', corpus.bigShortItems()],
  ]
  for (const [label, texts] of workloads) {
    const mib = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0) / 2 ** 20
    console.log(`${label}: ${texts.length} items, ${mib.toFixed(2)} MiB`)
    console.log(`  ${'policy'.padEnd(14)} ${'threads'.padStart(7)} ${'MiB/s'.padStart(8)} ${'Mtok/s'.padStart(8)} ${'vs rayon'.padStart(9)}`)
    for (const threads of threadCounts) {
      const schedulers = {}
      for (const policy of POLICIES) {
        if (policy === 'serial' && threads > 1) continue
        schedulers[policy] = new Scheduler({ threads, policy })
      }
      const results = await measure(tokenizer, texts, schedulers)
      const baseline = results.rayon.seconds
      for (const [policy, { seconds, tokens }] of Object.entries(results)) {
        const ratio = (baseline / seconds).toFixed(2)
        console.log(
          `  ${policy.padEnd(14)} ${String(threads).padStart(7)} ${(mib / seconds).toFixed(1).padStart(8)} ` +
            `${(tokens / seconds / 1e6).toFixed(2).padStart(8)} ${(ratio + 'x').padStart(9)}`,
        )
      }
    }
    console.log()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
