'use strict'
// `npm run soak`: the long reliability runs, printed and written to
// benchmark/results/soak.md. The short versions of the same runs are __test__/reliability.spec.ts.
//
//   node scripts/soak.js [--batches 1000] [--settle 100] [--storm 1000] [--cycles 100] [--workers 8] [--seed 1]
//   node scripts/soak.js --allocators [--batches 10000]
//
// - soak: first `--settle` rounds of one batch on every scheduler below, unmeasured (`settle` in
//   scripts/reliability.js: the process's RSS climbs while its threads come up). Then `--batches`
//   consecutive encodeBatch calls over the whole of big.txt (as documents), with the default
//   scheduler and with each policy; every result compared with the first (and the first with the
//   reference digest of Python tiktoken); RSS sampled after a full GC every 10 batches, its
//   least-squares slope over the samples after each row's warm-up (its first tenth) reported.
// - storm: `--storm` calls in flight at once, mixed sizes, OpenAI and Hugging Face tokenizers, every
//   policy, 30% aborted at random moments; then the process's CPU use while idle.
// - cancellation latency: batches of 20 MB aborted while running, per policy; and one 20 MB text.
// - churn: `--cycles` cycles of `--workers` worker_threads, half terminated mid-batch.
//
// With `--allocators`, only the allocator soak runs: `--batches` batches of 2 MB (big.txt's first
// 2 MB as documents, then as short items) in a fresh process per allocator build and workload
// (the builds `node benchmark/allocator.js` leaves in .cache/allocator/), RSS sampled after a full
// GC every 50 batches, its least-squares slope after the warm-up (the first tenth) reported per
// 1,000 batches. Writes benchmark/results/allocator-soak.md.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

/** The allocator builds the allocator soak compares, as `node benchmark/allocator.js` builds them. */
const ALLOCATOR_BUILDS = path.join(__dirname, '..', '.cache', 'allocator')
/** The `.node` file of one allocator build, or undefined where it was not built. */
function allocatorBuild(variant) {
  const dir = path.join(ALLOCATOR_BUILDS, variant)
  const file = fs.existsSync(dir) && fs.readdirSync(dir).find((name) => name.endsWith('.node'))
  return file ? path.join(dir, file) : undefined
}
// The allocator soak's own process only starts the children, each of which loads one build; it
// loads one of those builds too, so it runs where the regular build is absent.
if (process.argv.includes('--allocators') && !process.env.BATCHTOK_ADDON) {
  process.env.BATCHTOK_ADDON = allocatorBuild('mimalloc') ?? allocatorBuild('system') ?? ''
}

const runs = require('./reliability.js')
const corpus = require('./corpus.js')
const batchtok = require('../__test__/load-addon.cjs')

const { Tokenizer, Scheduler } = batchtok
const ROOT = path.join(__dirname, '..')
const RESULTS = path.join(ROOT, 'benchmark', 'results', 'soak.md')
const MiB = 2 ** 20
const POLICIES = ['chunked', 'serial', 'rayon', 'rayon-min-len']
/** The soak row that returns the allocator's cached memory before each sample. */
const RELEASED = 'default, `releaseMemory()` before each sample'

const ALLOCATOR_SOAK_RESULTS = path.join(ROOT, 'benchmark', 'results', 'allocator-soak.md')
/** Bytes of big.txt per allocator-soak batch. */
const ALLOCATOR_SOAK_BYTES = 2e6
const ALLOCATOR_SOAK_SAMPLE_EVERY = 50

function flag(name, fallback) {
  const at = process.argv.indexOf(`--${name}`)
  if (at === -1) return fallback
  const value = Number(process.argv[at + 1])
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${name} needs a whole number above 0`)
  return value
}

const options = {
  batches: flag('batches', 1000),
  settle: flag('settle', 100),
  storm: flag('storm', 1000),
  cycles: flag('cycles', 100),
  workers: flag('workers', 8),
  seed: flag('seed', 1),
}

function machine() {
  const cpuinfo = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : ''
  const model = (cpuinfo.match(/^model name\s*:\s*(.*)$/m) || [])[1] || os.cpus()[0]?.model || 'unknown'
  return {
    cpu: model.trim(),
    nproc: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    allocator: batchtok.allocator(),
    memoryGiB: (os.totalmem() / 2 ** 30).toFixed(0),
  }
}

const mib = (bytes) => (bytes / MiB).toFixed(1)
const quantile = (values, q) => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}
const log = (...args) => console.log(...args)

async function soakAll(docs, referenceDigest) {
  const o200k = Tokenizer.fromEncoding('o200k_base')
  const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d), 0)
  const schedulers = new Map(POLICIES.map((policy) => [policy, new Scheduler({ policy })]))
  log(`settle: ${options.settle} rounds over the default scheduler and ${POLICIES.join(', ')}`)
  const settled = await runs.settle({ tokenizer: o200k, texts: docs, schedulers: [undefined, ...schedulers.values()], rounds: options.settle })
  log(`  RSS ${mib(settled.rssBefore)} -> ${mib(settled.rssAfter)} MiB in ${settled.batches} batches`)
  const rows = []
  for (const policy of ['default', ...POLICIES, RELEASED]) {
    const scheduler = schedulers.get(policy)
    log(`soak ${policy}: ${options.batches} batches`)
    const run = await runs.soak({
      tokenizer: o200k,
      texts: docs,
      scheduler,
      release: policy === RELEASED,
      batches: options.batches,
      warmup: Math.max(10, Math.floor(options.batches / 10)),
      onProgress: (batch, sample) => {
        if (batch % 100 === 0) log(`  ${batch}: RSS ${mib(sample.rss)} MiB`)
      },
    })
    const warm = run.samples.find((s) => s.batch > Math.max(10, Math.floor(options.batches / 10)))
    const last = run.samples[run.samples.length - 1]
    rows.push({
      policy,
      batches: options.batches,
      mibPerS: ((bytes * options.batches) / MiB / (run.ms / 1000)).toFixed(0),
      reference: run.firstFixture === referenceDigest ? 'yes' : `NO (${run.firstFixture})`,
      mismatches: run.mismatches.length,
      rssWarm: mib(warm.rss),
      rssEnd: mib(last.rss),
      rssMax: mib(Math.max(...run.samples.map((s) => s.rss))),
      slope: (run.slopePer100 / MiB).toFixed(3),
      residentSlope: run.residentSlopePer100 === null ? 'n/a' : (run.residentSlopePer100 / MiB).toFixed(3),
      minutes: (run.ms / 60000).toFixed(1),
    })
    log(`  ${JSON.stringify(rows[rows.length - 1])}`)
  }
  return { settled, rows }
}

async function stormRun(docs, short) {
  const { cases } = runs.stormCases({ docs, short, count: 96, seed: options.seed })
  log(`storm: ${options.storm} calls in flight`)
  const started = Date.now()
  const outcome = await runs.storm({ calls: options.storm, seed: options.seed, cases, abortShare: 0.3, maxAbortDelayMs: 200 })
  const ms = Date.now() - started
  await new Promise((resolve) => setTimeout(resolve, 100))
  const idle = await runs.cpuShare(1000)
  log(`  ${JSON.stringify({ ...outcome, abortLatencyMs: undefined, ms, idle })}`)
  return { outcome, ms, idle }
}

async function cancelLatency(docs) {
  const o200k = Tokenizer.fromEncoding('o200k_base')
  const big = [...docs, ...docs, ...docs]
  const random = runs.prng(options.seed + 1)
  const rows = []
  for (const policy of POLICIES) {
    const scheduler = new Scheduler({ policy })
    const latencies = []
    let finished = 0
    for (let i = 0; i < 20; i++) {
      const latency = await runs.abortLatency({ tokenizer: o200k, texts: big, scheduler, delayMs: 5 + random() * 60 })
      if (latency === null) finished++
      else latencies.push(latency)
    }
    rows.push({ what: `${policy}: 3 × big.txt (${big.length} documents)`, n: latencies.length, finished, median: quantile(latencies, 0.5), p90: quantile(latencies, 0.9), max: Math.max(...latencies) })
    log(`  cancel ${JSON.stringify(rows[rows.length - 1])}`)
  }
  // One text is one item: the scheduler checks the signal between items and chunks, never inside
  // one, so this measures the other end of the guarantee.
  const one = [docs.join('').repeat(3)]
  const latencies = []
  for (let i = 0; i < 5; i++) {
    const latency = await runs.abortLatency({ tokenizer: o200k, texts: one, scheduler: new Scheduler(), delayMs: 20 })
    if (latency !== null) latencies.push(latency)
  }
  rows.push({ what: `chunked: one text of ${(Buffer.byteLength(one[0]) / 1e6).toFixed(0)} MB`, n: latencies.length, finished: 5 - latencies.length, median: quantile(latencies, 0.5), p90: quantile(latencies, 0.9), max: Math.max(...latencies) })
  log(`  cancel ${JSON.stringify(rows[rows.length - 1])}`)
  return rows
}

async function churnRun(docs) {
  const texts = docs.slice(0, 300)
  const expected = runs.digest(Tokenizer.fromEncoding('o200k_base').encodeBatchSync(texts))
  log(`churn: ${options.cycles} cycles of ${options.workers} workers`)
  const started = Date.now()
  const outcome = await runs.churn({
    cycles: options.cycles,
    workers: options.workers,
    encoding: 'o200k_base',
    texts,
    expected,
    seed: options.seed,
    onCycle: (cycle, o) => {
      if (cycle % 10 === 0) log(`  ${cycle}: RSS ${mib(o.rss[o.rss.length - 1])} MiB, ${o.correct}/${o.survivors} survivors correct`)
    },
  })
  const warm = Math.max(1, Math.floor(options.cycles / 10))
  const xs = outcome.rss.map((_, i) => i + 1).slice(warm)
  const slopePer10 = xs.length >= 2 ? (runs.slope(xs, outcome.rss.slice(warm)) * 10) / MiB : 0
  return { outcome, ms: Date.now() - started, slopePer10, warm }
}

function report(m, soak, storm, cancel, churn, started) {
  const lines = []
  const out = (s = '') => lines.push(s)
  out('# Reliability runs (`npm run soak`)')
  out()
  out(`Machine: ${m.cpu}, \`nproc\` ${m.nproc}, ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}, allocator \`${m.allocator}\`. The machine is shared with other builds: times are indicative only.`)
  out(`Command: \`node scripts/soak.js --batches ${options.batches} --settle ${options.settle} --storm ${options.storm} --cycles ${options.cycles} --workers ${options.workers} --seed ${options.seed}\` (${((Date.now() - started) / 60000).toFixed(0)} min in all).`)
  out()
  out('## Soak')
  out()
  const settled = soak.settled
  out(`Before the first row the process settles, unmeasured: ${options.settle} rounds of one batch on each scheduler of the table (${settled.batches} batches, ${(settled.ms / 60000).toFixed(1)} min), while RSS went from ${mib(settled.rssBefore)} to ${mib(settled.rssAfter)} MiB. RSS climbs while the threads that allocate start (libuv's, the pool's, each rayon pool's, each with an allocator arena of its own) and V8 sizes its heap; after this, every row is measured in a process where all those threads exist, whatever its place in the table.`)
  out()
  out(`o200k_base over the whole of big.txt as documents (989 texts, 6.5 MB) per batch. "reference": the first batch's ids equal Python tiktoken's (digest in \`__test__/fixtures/corpus-digests.json\`); "mismatches": later batches whose ids or offsets differ from the first (sha256). RSS after a full GC every 10 batches; the slope is a least-squares fit over the samples after the warm-up (the first tenth of the batches); \`memoryStats().resident\` is the addon's own reading of the same figure. The allocator keeps freed memory cached, so RSS wanders by tens of MiB from sample to sample and the slope of the first five rows carries that noise; the last row hands the cache back (\`releaseMemory()\`, glibc's \`malloc_trim\`) before each sample, so its RSS follows live memory and a leak would show as a steady slope.`)
  out()
  out('| scheduler | batches | MiB/s | reference | mismatches | RSS after warm-up | RSS at end | RSS max | RSS slope (MiB / 100 batches) | resident slope | minutes |')
  out('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const r of soak.rows) {
    out(`| ${r.policy} | ${r.batches} | ${r.mibPerS} | ${r.reference} | ${r.mismatches} | ${r.rssWarm} MiB | ${r.rssEnd} MiB | ${r.rssMax} MiB | ${r.slope} | ${r.residentSlope} | ${r.minutes} |`)
  }
  out()
  out('## Storm')
  out()
  const o = storm.outcome
  const lat = o.abortLatencyMs
  out(`${o.calls} \`encodeBatch\` calls started in one go over 96 cases (1 short text, up to 400 short items, or up to 40 documents; o200k_base, cl100k_base, p50k_base, r50k_base and the gpt2, bert and unigram tokenizer.json fixtures; default scheduler or one of the four policies); 30% aborted before the call, right after it, or after up to 200 ms. Each resolved batch is compared with the same texts encoded alone on one thread.`)
  out()
  out('| calls | settled | resolved (ids correct) | of which aborted too late to matter | rejected with AbortError | wrong | wall time | CPU while idle after |')
  out('| --- | --- | --- | --- | --- | --- | --- | --- |')
  out(`| ${o.calls} | ${o.settled} | ${o.resolved} | ${o.resolvedDespiteAbort} | ${o.aborted} (codes: ${Object.entries(o.abortedCodes).map(([k, v]) => `${k} ${v}`).join(', ')}) | ${o.wrong.length} | ${(storm.ms / 1000).toFixed(1)} s | ${(storm.idle * 100).toFixed(1)}% of one core |`)
  out()
  out(`Abort to rejection, under the storm (queueing behind ~${o.calls} completions included): median ${quantile(lat, 0.5).toFixed(1)} ms, p90 ${quantile(lat, 0.9).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms.`)
  if (o.wrong.length) out(`Wrong outcomes: ${JSON.stringify(o.wrong.slice(0, 10))}`)
  out()
  out('## Cancellation latency')
  out()
  out('A batch aborted while it runs (20 trials per policy, abort after 5–65 ms): time from `abort()` to the rejection. "finished" counts batches that completed before the abort.')
  out()
  out('| batch | aborted | finished | median ms | p90 ms | max ms |')
  out('| --- | --- | --- | --- | --- | --- |')
  for (const r of cancel) out(`| ${r.what} | ${r.n} | ${r.finished} | ${r.median.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.max.toFixed(1)} |`)
  out()
  out('## Worker churn')
  out()
  const c = churn.outcome
  out(`${c.cycles} cycles: ${options.workers} worker_threads each load batchtok and encode 300 documents with o200k_base; a random half is terminated 0–30 ms after the start, mostly mid-batch; the others must post the reference digest. RSS after each cycle (full GC); slope over the cycles after the first tenth.`)
  out()
  out('| cycles | workers started | terminated | survivors | correct | wrong | RSS after cycle ' + `${churn.warm} | RSS at end | RSS slope (MiB / 10 cycles) | wall time |`)
  out('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  out(`| ${c.cycles} | ${c.started} | ${c.terminated} | ${c.survivors} | ${c.correct} | ${c.wrong.length} | ${mib(c.rss[churn.warm - 1])} MiB | ${mib(c.rss[c.rss.length - 1])} MiB | ${churn.slopePer10.toFixed(2)} | ${(churn.ms / 1000).toFixed(0)} s |`)
  if (c.wrong.length) out(`Wrong outcomes: ${JSON.stringify(c.wrong.slice(0, 10))}`)
  out()
  return lines.join('\n')
}

/** The first `ALLOCATOR_SOAK_BYTES` of a cut of big.txt. */
function soakTexts(workload) {
  const all = workload === 'documents' ? corpus.bigDocuments() : corpus.bigShortItems()
  const texts = []
  let bytes = 0
  for (const text of all) {
    if (bytes >= ALLOCATOR_SOAK_BYTES) break
    texts.push(text)
    bytes += Buffer.byteLength(text)
  }
  return { texts, bytes }
}

/** The child of the allocator soak: one build (BATCHTOK_ADDON), one workload; prints JSON. */
async function allocatorSoakChild(workload) {
  const { texts, bytes } = soakTexts(workload)
  const warmup = Math.max(ALLOCATOR_SOAK_SAMPLE_EVERY, Math.floor(options.batches / 10))
  const run = await runs.soak({
    tokenizer: Tokenizer.fromEncoding('o200k_base'),
    texts,
    batches: options.batches,
    warmup,
    sampleEvery: ALLOCATOR_SOAK_SAMPLE_EVERY,
  })
  const warm = run.samples.find((s) => s.batch > warmup)
  const last = run.samples[run.samples.length - 1]
  console.log(
    JSON.stringify({
      allocator: batchtok.allocator(),
      workload,
      items: texts.length,
      bytes,
      mismatches: run.mismatches.length,
      mibPerS: (bytes * options.batches) / MiB / (run.ms / 1000),
      rssWarm: warm.rss,
      rssEnd: last.rss,
      rssMax: Math.max(...run.samples.map((s) => s.rss)),
      slopePer1000: run.slopePer100 * 10,
      minutes: run.ms / 60000,
    }),
  )
}

/** Every allocator build and workload in a fresh process; writes ALLOCATOR_SOAK_RESULTS. */
function allocatorSoak() {
  const started = Date.now()
  const builds = ['mimalloc', 'system'].filter((variant) => allocatorBuild(variant))
  if (builds.length === 0) throw new Error(`no allocator builds in ${ALLOCATOR_BUILDS}: run \`node benchmark/allocator.js\` first`)
  const rows = []
  for (const workload of ['documents', 'short items']) {
    for (const variant of builds) {
      const binary = allocatorBuild(variant)
      log(`allocator soak: ${variant}, ${workload}, ${options.batches} batches`)
      const child = spawnSync(process.execPath, [__filename, '--allocator-soak-child', workload, '--batches', String(options.batches)], {
        encoding: 'utf8',
        env: { ...process.env, BATCHTOK_ADDON: binary },
      })
      if (child.status !== 0) throw new Error(`the ${variant} soak failed: ${child.stderr}`)
      const row = JSON.parse(child.stdout.trim().split('\n').pop())
      log(`  ${JSON.stringify(row)}`)
      rows.push(row)
    }
  }
  const m = machine()
  const lines = [
    '# Allocator soak (`node scripts/soak.js --allocators`)',
    '',
    `Machine: ${m.cpu}, \`nproc\` ${m.nproc}, ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}. The machine is shared with other builds: MiB/s is indicative only.`,
    `Command: \`node benchmark/allocator.js\` (builds both allocators), then \`node scripts/soak.js --allocators --batches ${options.batches}\` (${((Date.now() - started) / 60000).toFixed(0)} min in all).`,
    '',
    `o200k_base, default scheduler, ${options.batches} consecutive \`encodeBatch\` calls of the first 2 MB of big.txt, cut as documents or as short items, in a fresh process per row. RSS after a full GC every ${ALLOCATOR_SOAK_SAMPLE_EVERY} batches; the slope is a least-squares fit over the samples after the warm-up (the first tenth), in MiB per 1,000 batches. "mismatches": batches whose ids or offsets differ from the first.`,
    '',
    '| allocator | workload | items per batch | mismatches | MiB/s | RSS after warm-up | RSS at end | RSS max | RSS slope (MiB / 1,000 batches) | minutes |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.allocator} | ${r.workload} | ${r.items} | ${r.mismatches} | ${r.mibPerS.toFixed(0)} | ${mib(r.rssWarm)} MiB | ${mib(r.rssEnd)} MiB | ${mib(r.rssMax)} MiB | ${(r.slopePer1000 / MiB).toFixed(2)} | ${r.minutes.toFixed(1)} |`,
    ),
    '',
  ]
  fs.writeFileSync(ALLOCATOR_SOAK_RESULTS, lines.join('\n'))
  log(`\n${lines.join('\n')}written to ${path.relative(ROOT, ALLOCATOR_SOAK_RESULTS)}`)
  if (rows.some((r) => r.mismatches > 0)) process.exitCode = 1
}

async function main() {
  const childAt = process.argv.indexOf('--allocator-soak-child')
  if (childAt !== -1) return allocatorSoakChild(process.argv[childAt + 1])
  if (process.argv.includes('--allocators')) return allocatorSoak()
  const started = Date.now()
  const m = machine()
  log(JSON.stringify({ machine: m, options }))
  const docs = corpus.bigDocuments()
  const short = corpus.bigShortItems()
  const digests = JSON.parse(fs.readFileSync(path.join(ROOT, '__test__', 'fixtures', 'corpus-digests.json'), 'utf8'))
  const soak = await soakAll(docs, digests.cuts.bigDocuments.o200k_base.sha256)
  const storm = await stormRun(docs, short)
  log('cancellation latency')
  const cancel = await cancelLatency(docs)
  const churn = await churnRun(docs)
  const text = report(m, soak, storm, cancel, churn, started)
  fs.mkdirSync(path.dirname(RESULTS), { recursive: true })
  fs.writeFileSync(RESULTS, `${text}\n`)
  log(`\n${text}\nwritten to ${path.relative(ROOT, RESULTS)}`)
  const failed =
    soak.rows.some((r) => r.mismatches > 0 || r.reference !== 'yes') ||
    storm.outcome.wrong.length > 0 ||
    storm.outcome.settled !== storm.outcome.calls ||
    churn.outcome.wrong.length > 0
  if (failed) process.exitCode = 1
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
