// batchtok's encodeBatch from JS at more thread counts than fresh.mjs's one and two, on fresh
// text, beside the `tokenizers` binding on as many threads and gpt-tokenizer on its one. Written
// for a machine with many cores (scripts/many-cores.sh stages it for the device's 16), where the
// question is how far a call from JS scales once the main thread's share of it (reading the
// strings, handing the ids back) is the only part the threads do not divide.
//
//   node benchmark/fresh-threads.mjs [--threads 1,2,4,8,16] [--rounds 2] [--slices 3]
//                                    [--repeats 3] [--corpora prose,code,multilingual,chat]
//                                    [--peers tokenizers,gpt-tokenizer|none] [--out FILE]
//
// The protocol is fresh.mjs's: every contender runs in a new process per corpus and round
// (fresh-child.mjs), warms up on a slice of another corpus, then encodes each of its `--slices`
// slices (~650 KB; each round its own) once, one timed call each; batchtok's processes then
// encode their first slice `--repeats` more times (repeated: the word caches warm on exactly that
// text), which tells how much of the fresh text's cost at more threads is each thread's word
// cache learning the words apart. The `tokenizers` binding runs
// on rayon's global pool, sized by RAYON_NUM_THREADS, set per process to the row's thread count.
// Every contender's ids for every timed text are compared with batchtok's at the first thread
// count; one that differs is reported as such, not timed. Prints a Markdown table per corpus
// (and writes it to --out): median MiB/s per thread count, fresh and repeated, the ratio to
// batchtok at the first thread count, and the cores the process kept busy (CPU time over wall
// time, the workers' spinning before they sleep included).

import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeMachine } from './machine.mjs'
import { MiB, median, shuffledOrders } from './stats.mjs'
import { CORPORA, WARMUP_CORPUS, cutSlices, ensureCorpora, runResultChild } from './fresh-corpora.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const CHILD = path.join(HERE, 'fresh-child.mjs')
const MODEL = 'o200k_base'
const CHILD_TIMEOUT_MS = 120_000
/** Warm-up: at least this many calls on the warm-up slice, more (up to twice) while under warmupMs. */
const WARMUP = { warmupCalls: 2, warmupMs: 500 }

function option(name, fallback) {
  const at = process.argv.indexOf(name)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback
}

function positiveList(text, what) {
  const list = text.split(',').map(Number)
  if (!list.length || list.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`${what} takes whole numbers above 0, such as 1,2,4; got ${text}`)
  }
  return list
}

const THREADS = positiveList(option('--threads', '1,2,4,8,16'), '--threads')
const [ROUNDS] = positiveList(option('--rounds', '2'), '--rounds')
const [SLICES] = positiveList(option('--slices', '3'), '--slices')
const REPEATS = Number(option('--repeats', '3'))
if (!Number.isInteger(REPEATS) || REPEATS < 0) throw new Error(`--repeats takes a whole number, 0 or more`)
const SELECTED = option('--corpora', CORPORA.join(',')).split(',')
const OUT = option('--out', null)
const PEERS = option('--peers', 'tokenizers,gpt-tokenizer').split(',').filter((peer) => peer !== 'none')
for (const peer of PEERS) {
  if (!['tokenizers', 'gpt-tokenizer'].includes(peer)) throw new Error(`--peers: no peer ${peer}; the peers are tokenizers and gpt-tokenizer, or none`)
}
for (const corpus of SELECTED) {
  if (!CORPORA.includes(corpus)) throw new Error(`--corpora: no corpus ${corpus}; the corpora are ${CORPORA.join(', ')}`)
}

/** One row of the table: a contender at a thread count. */
const contenders = [
  ...THREADS.map((threads) => ({ library: 'batchtok', threads, key: `batchtok/encodeBatch/chunked/${threads}`, repeats: REPEATS })),
  ...THREADS.map((threads) => ({ library: 'tokenizers', threads, key: 'tokenizers/encodeBatch', repeats: 0 })),
  { library: 'gpt-tokenizer', threads: 1, key: 'gpt-tokenizer/encode', repeats: 0 },
].filter((contender) => contender.library === 'batchtok' || PEERS.includes(contender.library))

function runChild(contender, job) {
  const threads = String(contender.threads)
  const env = { ...process.env, RAYON_NUM_THREADS: threads, UV_THREADPOOL_SIZE: String(Math.max(4, contender.threads)) }
  return runResultChild(process.execPath, ['--expose-gc', CHILD, JSON.stringify(job)], env, CHILD_TIMEOUT_MS)
}

/** The first text whose digest differs from the reference's, as words, or null. */
function difference(checks, referenceChecks) {
  for (const check of checks) {
    const theirs = referenceChecks.get(check.start)
    if (!theirs) return `${check.corpus} item ${check.start}: not checked, batchtok at ${THREADS[0]} thread(s) failed on it`
    const at = check.digests.findIndex((d, i) => d !== theirs[i])
    if (at >= 0) return `${check.corpus} item ${check.start + at}: ids differ from batchtok's`
  }
  return null
}

async function main() {
  ensureCorpora()
  const started = Date.now()
  const slices = Object.fromEntries(CORPORA.map((c) => [c, cutSlices(c)]))
  const rows = new Map(SELECTED.map((c) => [c, contenders.map(() => ({ samples: [], repeated: [], problem: null }))]))
  const order = shuffledOrders(contenders.length - 1, 7)
  for (let round = 0; round < ROUNDS; round++) {
    for (const corpus of SELECTED) {
      // Slice 0 of every corpus is only ever a warm-up; each round times its own slices.
      const mine = slices[corpus].slice(1 + round * SLICES, 1 + (round + 1) * SLICES)
      if (mine.length < SLICES) throw new Error(`${corpus} has too few slices for ${ROUNDS} rounds of ${SLICES}`)
      const job = { model: MODEL, warmup: slices[WARMUP_CORPUS[corpus]][0], slices: mine, ...WARMUP }
      // The reference runs first, for its digests; the rest in a seeded order per round.
      const referenceChecks = new Map()
      for (const index of [0, ...order().map((i) => i + 1)]) {
        const contender = contenders[index]
        const row = rows.get(corpus)[index]
        if (row.problem) continue
        const result = await runChild(contender, { ...job, key: contender.key, repeats: contender.repeats })
        if (!result.ok) {
          row.problem = result.error
        } else if (index === 0) {
          for (const check of result.checks) referenceChecks.set(check.start, check.digests)
        } else {
          row.problem = difference(result.checks, referenceChecks)
        }
        if (row.problem) {
          console.error(`${corpus} round ${round + 1} ${contender.library} ${contender.threads}: ${row.problem}`)
          continue
        }
        const withBytes = (s) => ({ ...s, bytes: mine.find((m) => m.start === s.start).bytes })
        row.samples.push(...result.fresh.map(withBytes))
        row.repeated.push(...result.repeated.map(withBytes))
      }
      console.error(`${corpus} round ${round + 1} done (${((Date.now() - started) / 1000).toFixed(0)} s)`)
    }
  }

  const machine = describeMachine()
  const lines = [
    `Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}.`,
    `${MODEL}; ${ROUNDS} round(s) × ${SLICES} fresh slice(s) per contender and corpus, one process each, then ${REPEATS} repeated call(s) per batchtok process; medians.`,
    `Command: \`node benchmark/fresh-threads.mjs --threads ${THREADS.join(',')} --rounds ${ROUNDS} --slices ${SLICES} --repeats ${REPEATS} --corpora ${SELECTED.join(',')}\`; took ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    '',
  ]
  const rateOf = (samples) => (samples.length ? median(samples.map((s) => s.bytes / MiB / (s.ms / 1000))) : null)
  const stats = (row) => {
    if (row.problem || !row.samples.length) return null
    return {
      rate: rateOf(row.samples),
      repeated: rateOf(row.repeated),
      cores: median(row.samples.map((s) => s.cpuMs / s.ms)),
    }
  }
  const show = (x, digits = 1) => (x === undefined || x === null ? '–' : x.toFixed(digits))
  for (const corpus of SELECTED) {
    const all = rows.get(corpus).map(stats)
    const base = all[0]?.rate
    const repeatedBase = all[0]?.repeated
    const ratio = (x, y, digits = 2) => (x && y ? show(x / y, digits) + 'x' : '–')
    const statsOf = (library, threads) => all[contenders.findIndex((c) => c.library === library && c.threads === threads)]
    const gpt = statsOf('gpt-tokenizer', 1)
    const problems = rows.get(corpus).map((row, i) => (row.problem ? `${contenders[i].library} at ${contenders[i].threads}: ${row.problem}` : null)).filter(Boolean)
    lines.push(
      `### ${corpus}`,
      '',
      `gpt-tokenizer on one thread: ${show(gpt?.rate)} MiB/s.`,
      '',
      `| threads | batchtok fresh MiB/s | ÷ at ${THREADS[0]} | cores busy | repeated MiB/s | ÷ at ${THREADS[0]} | \`tokenizers\` fresh MiB/s | cores busy | batchtok ÷ \`tokenizers\` | batchtok ÷ gpt-tokenizer |`,
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    )
    THREADS.forEach((threads, i) => {
      const ours = all[i]
      const binding = statsOf('tokenizers', threads)
      lines.push(
        `| ${threads} | ${show(ours?.rate)} | ${ratio(ours?.rate, base)} | ${show(ours?.cores, 2)} | ` +
          `${show(ours?.repeated)} | ${ratio(ours?.repeated, repeatedBase)} | ` +
          `${show(binding?.rate)} | ${show(binding?.cores, 2)} | ${ratio(ours?.rate, binding?.rate, 1)} | ` +
          `${ratio(ours?.rate, gpt?.rate, 1)} |`,
      )
    })
    lines.push(
      '',
      `Where batchtok's fresh calls go (medians, ms): held is the main thread's share (until \`encodeBatch\` returns its promise); busy is the scheduler's account of the batch (\`Scheduler.stats().busyMs\`), its busiest thread and all threads summed (the work); the rest of the call is the hand-overs and the result.`,
      '',
      '| threads | call | held | busiest thread | threads summed | summed ÷ at ' + THREADS[0] + ' | call − busiest |',
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    )
    const split = THREADS.map((threads, i) => {
      const samples = rows.get(corpus)[i].samples.filter((s) => s.busyMs?.length)
      if (!samples.length) return null
      return {
        threads,
        call: median(samples.map((s) => s.ms)),
        held: median(samples.map((s) => s.heldMs)),
        busiest: median(samples.map((s) => Math.max(...s.busyMs))),
        summed: median(samples.map((s) => s.busyMs.reduce((a, b) => a + b, 0))),
        outside: median(samples.map((s) => s.ms - Math.max(...s.busyMs))),
      }
    })
    for (const row of split.filter(Boolean)) {
      lines.push(
        `| ${row.threads} | ${show(row.call, 2)} | ${show(row.held, 2)} | ${show(row.busiest, 2)} | ${show(row.summed, 2)} | ` +
          `${ratio(row.summed, split[0]?.summed)} | ${show(row.outside, 2)} |`,
      )
    }
    if (problems.length) lines.push('', ...problems.map((p) => `- ${p}`))
    lines.push('')
  }
  const text = lines.join('\n')
  console.log(text)
  if (OUT) fs.writeFileSync(OUT, `${text}\n`)
  if ([...rows.values()].some((corpus) => corpus.some((row) => row.problem))) process.exitCode = 1
}

main().catch((error) => {
  console.error(error?.stack ?? error)
  process.exit(1)
})
