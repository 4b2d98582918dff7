'use strict'
// mimalloc against the system allocator, side by side in one run.
//
//   node benchmark/allocator.js [--rounds N] [--skip-build]
//
// On a machine shared with other work, wall-clock throughput swings with the load; the CPU time the
// process spends per MiB moves far less, so both are reported. The text of
// benchmark/results/allocator.md from its `## Profile` heading on is kept as it is (the findings,
// written by hand); the table above it is rewritten. In GitHub Actions the table is also appended
// to the job summary ($GITHUB_STEP_SUMMARY).
//
// Builds the addon twice (`BATCHTOK_ALLOCATOR=mimalloc` and `=system`, which override build.rs's
// per-target choice) into .cache/allocator/<variant>/, then runs each measurement in a fresh child
// process per variant, alternating which variant goes first from round to round, and reports
// medians over the rounds:
//
// - throughput (MiB/s) and CPU time per MiB (all threads) of `encodeBatch` at 1 and 2 threads on big.txt documents and short items,
//   with the release-candidate engine (o200k_base) and with the stable-engine fallback (the GPT-2
//   fixture with a token longer than the release candidate holds, so that it takes no text);
// - peak RSS of the throughput process;
// - steady RSS after 50 consecutive `encodeBatch` calls of the whole corpus (documents): what a
//   long-running process holds once the allocator's caches are warm;
// - the on-disk size of each `.node`.
//
// Writes benchmark/results/allocator.md.

const { execFileSync, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const OUT = path.join(ROOT, '.cache', 'allocator')
const RESULTS = path.join(__dirname, 'results', 'allocator.md')
const VARIANTS = ['mimalloc', 'system']
const STEADY_BATCHES = 50

function argument(name, fallback) {
  const at = process.argv.indexOf(name)
  return at === -1 ? fallback : process.argv[at + 1]
}

function build(variant) {
  const dir = path.join(OUT, variant)
  fs.mkdirSync(dir, { recursive: true })
  const args = ['napi', 'build', '--platform', '--release', '--output-dir', dir, '--no-js', '--dts', 'index.d.ts']
  console.log(`building the ${variant} variant`)
  const windows = process.platform === 'win32'
  execFileSync(windows ? 'npx.cmd' : 'npx', args, {
    cwd: ROOT,
    shell: windows,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, BATCHTOK_ALLOCATOR: variant },
  })
  const file = fs.readdirSync(dir).find((name) => name.endsWith('.node'))
  return path.join(dir, file)
}

/** The GPT-2 fixture with one token longer than the release candidate holds, so that the stable
 * engine encodes every text (its `routing` says so). */
function stableOnlyTokenizer() {
  const file = path.join(OUT, 'gpt2-stable-only.json')
  const json = JSON.parse(fs.readFileSync(path.join(ROOT, '__test__', 'fixtures', 'tokenizers', 'gpt2.json'), 'utf8'))
  json.model.vocab['x'.repeat(40_000)] = Object.keys(json.model.vocab).length
  fs.writeFileSync(file, JSON.stringify(json))
  return file
}

// The child: one measurement in a fresh process, printed as JSON on its last line.
const CHILD = `
const [binary, mode, tokenizerSpec, workload, threads, runs] = process.argv.slice(1)
const addon = require(binary)
const corpus = require(${JSON.stringify(path.join(ROOT, 'scripts', 'corpus.js'))})
const tokenizer = tokenizerSpec.endsWith('.json') ? addon.Tokenizer.fromFile(tokenizerSpec) : addon.Tokenizer.fromEncoding(tokenizerSpec)
let texts = workload === 'documents' ? corpus.bigDocuments() : corpus.bigShortItems()
// The stable engine is about fifty times slower: a quarter of the corpus keeps its rows short.
if (tokenizerSpec.endsWith('.json')) texts = texts.slice(0, Math.ceil(texts.length / 4))
const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0)
const scheduler = new addon.Scheduler({ threads: Number(threads) })
;(async () => {
  await tokenizer.whenReady()
  if (tokenizerSpec.endsWith('.json') && !tokenizer.routing.startsWith('stable:')) {
    throw new Error('the stable-only tokenizer is not on the stable route: ' + tokenizer.routing)
  }
  const result = { allocator: addon.allocator(), routing: tokenizer.routing }
  if (mode === 'throughput') {
    const seconds = []
    const cpuMs = []
    for (let run = 0; run < Number(runs); run++) {
      const [start, cpuBefore] = [process.hrtime.bigint(), process.cpuUsage()]
      await tokenizer.encodeBatch(texts, { scheduler })
      seconds.push(Number(process.hrtime.bigint() - start) / 1e9)
      const cpu = process.cpuUsage(cpuBefore)
      cpuMs.push((cpu.user + cpu.system) / 1000)
    }
    seconds.sort((a, b) => a - b)
    cpuMs.sort((a, b) => a - b)
    result.mibPerSecond = bytes / 2 ** 20 / seconds[seconds.length >> 1]
    result.cpuMsPerMiB = cpuMs[cpuMs.length >> 1] / (bytes / 2 ** 20)
  } else {
    for (let batch = 0; batch < ${STEADY_BATCHES}; batch++) await tokenizer.encodeBatch(texts, { scheduler })
    result.steadyRss = process.memoryUsage().rss
  }
  result.peakRss = process.resourceUsage().maxRSS * 1024
  console.log(JSON.stringify(result))
})()
`

function child(binary, ...args) {
  const run = spawnSync(process.execPath, ['-e', CHILD, binary, ...args.map(String)], { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`child failed (${args.join(' ')}): ${run.stderr}`)
  return JSON.parse(run.stdout.trim().split('\n').pop())
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const mib = (bytes) => (bytes / 2 ** 20).toFixed(1)

function main() {
  const rounds = Number(argument('--rounds', 3))
  const binaries = {}
  for (const variant of VARIANTS) {
    binaries[variant] = process.argv.includes('--skip-build')
      ? path.join(OUT, variant, fs.readdirSync(path.join(OUT, variant)).find((n) => n.endsWith('.node')))
      : build(variant)
  }
  const stableJson = stableOnlyTokenizer()
  const configs = []
  for (const [engine, spec] of [['1.0 pipeline (o200k_base)', 'o200k_base'], ['stable fallback (GPT-2, stable route)', stableJson]]) {
    for (const workload of ['documents', 'short items']) {
      for (const threads of [1, 2]) configs.push({ engine, spec, workload, threads })
    }
  }
  const samples = {} // key -> variant -> [values]
  const record = (key, variant, value) => {
    samples[key] ??= {}
    ;(samples[key][variant] ??= []).push(value)
  }
  for (let round = 0; round < rounds; round++) {
    // Alternate which variant runs first, so a drift in the machine favours neither.
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()
    for (const config of configs) {
      for (const variant of order) {
        const result = child(binaries[variant], 'throughput', config.spec, config.workload, config.threads, 5)
        if (result.allocator !== variant) throw new Error(`${binaries[variant]} reports ${result.allocator}`)
        const key = `${config.engine}|${config.workload}|${config.threads}`
        record(`speed|${key}`, variant, result.mibPerSecond)
        record(`cpu|${key}`, variant, result.cpuMsPerMiB)
        record(`peak|${key}`, variant, result.peakRss)
      }
    }
    for (const variant of order) {
      const result = child(binaries[variant], 'steady', 'o200k_base', 'documents', 2, 0)
      record('steady', variant, result.steadyRss)
      record('steady-peak', variant, result.peakRss)
    }
    console.log(`round ${round + 1} of ${rounds} done`)
  }

  const lines = []
  lines.push('# mimalloc against the system allocator')
  lines.push('')
  lines.push(`Machine: ${os.cpus()[0].model}, nproc ${os.availableParallelism()}, ${os.platform()} ${os.arch()}, Node ${process.version}.`)
  lines.push(`Command: \`node benchmark/allocator.js --rounds ${rounds}\`. Each cell is the median of ${rounds} rounds, each round a fresh process per variant (the median of 5 \`encodeBatch\` runs, for MiB/s and for CPU time alike), the variants alternating which goes first; the range over the rounds in parentheses. CPU ms/MiB is the process's user and system time per MiB encoded, all threads together: lower is better, and it moves far less than MiB/s when other work shares the machine.`)
  lines.push('')
  lines.push('| engine | workload | threads | mimalloc MiB/s | system MiB/s | mimalloc / system | CPU ms/MiB mimalloc | CPU ms/MiB system | system / mimalloc CPU | peak RSS mimalloc | peak RSS system |')
  lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const { engine, workload, threads } of configs) {
    const key = `${engine}|${workload}|${threads}`
    const speed = samples[`speed|${key}`]
    const cpu = samples[`cpu|${key}`]
    const peak = samples[`peak|${key}`]
    const [m, s] = [median(speed.mimalloc), median(speed.system)]
    const [cm, cs] = [median(cpu.mimalloc), median(cpu.system)]
    const spread = (values) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`
    lines.push(
      `| ${engine} | ${workload} | ${threads} | ${m.toFixed(1)} (${spread(speed.mimalloc)}) | ${s.toFixed(1)} (${spread(speed.system)}) | ${(m / s).toFixed(2)} | ${cm.toFixed(1)} (${spread(cpu.mimalloc)}) | ${cs.toFixed(1)} (${spread(cpu.system)}) | ${(cs / cm).toFixed(2)} | ${mib(median(peak.mimalloc))} MiB | ${mib(median(peak.system))} MiB |`,
    )
  }
  const steady = samples.steady
  lines.push('')
  lines.push(`Steady RSS after ${STEADY_BATCHES} consecutive \`encodeBatch\` calls of big.txt documents (o200k_base, 2 threads): mimalloc ${mib(median(steady.mimalloc))} MiB, system ${mib(median(steady.system))} MiB, ratio ${(median(steady.mimalloc) / median(steady.system)).toFixed(2)}.`)
  lines.push('')
  lines.push(`On-disk size: mimalloc ${mib(fs.statSync(binaries.mimalloc).size)} MiB, system ${mib(fs.statSync(binaries.system).size)} MiB.`)
  const table = `${lines.join('\n')}\n`
  const previous = fs.existsSync(RESULTS) ? fs.readFileSync(RESULTS, 'utf8') : ''
  const findings = previous.indexOf('\n## Profile')
  fs.mkdirSync(path.dirname(RESULTS), { recursive: true })
  fs.writeFileSync(RESULTS, findings === -1 ? table : `${table}${previous.slice(findings)}`)
  if (process.env.GITHUB_STEP_SUMMARY) fs.appendFileSync(process.env.GITHUB_STEP_SUMMARY, `${table}\n`)
  console.log(table)
}

main()
