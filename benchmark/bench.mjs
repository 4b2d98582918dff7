// The tokenizer benchmark: batchtok's scheduler policies and thread counts against the tokenizers a
// Node user would otherwise pick, on the project's corpora.
//
//   npm run bench          full run: writes benchmark/results/bench.md and bench.svg
//   npm run bench:quick    o200k_base and BERT, corpus subsets, chunked and rayon only; writes
//                          benchmark/results/raw/bench-quick.md and .svg (ignored by git)
//
// Per scenario (encoding × workload): every contender's output is first checked against batchtok's
// reference ids (a contender that differs is reported with the first differing item and not timed);
// that full pass also warms each contender up. Then ROUNDS rounds, each a tinybench `Bench` with the
// contenders in a rotated order, so slow drift of a shared machine does not always land on the same
// ones; the report gives the median over all samples of all rounds with the min–max range.
// Responsiveness, peak RSS, time to first use and the worst case are measured in fresh processes
// (probe.mjs), one per configuration. README.md beside this file says what each number means.

import { spawn, execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Bench } from 'tinybench'
import {
  ENCODINGS,
  ENCODING_LABELS,
  HF_BINDING_THREADS,
  PEER_PACKAGES,
  batchtokContender,
  batchtokContenders,
  peerContenders,
} from './contenders.mjs'
import { describeMachine, packageVersion } from './machine.mjs'
import { RESULT_PREFIX } from './probe.mjs'
import { renderMarkdown, renderSvg } from './report.mjs'
import { throughput, median } from './stats.mjs'
import { BERT_FIXTURE, prepareTokenizerJson } from './tokenizer-json.mjs'
import { workloads } from './workloads.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.join(HERE, '..')
const PROBE = path.join(HERE, 'probe.mjs')

const QUICK = process.argv.includes('--quick')

/**
 * What each mode runs. Rounds: enough for a median on a noisy machine while the slowest peers
 * (~1–3 MiB/s on ~25 MiB of corpus per encoding) keep a full run within about 25 minutes. A task's
 * time budget lets the fast configurations take several samples per round; the slow ones take one.
 */
const SETTINGS = QUICK
  ? {
      mode: 'quick',
      encodings: ['o200k_base', 'bert'],
      rounds: 3,
      taskTimeMs: 100,
      firstUseRepeats: 1,
      probeRuns: 1,
      worstTimeoutMs: 5_000,
      out: path.join(HERE, 'results', 'raw', 'bench-quick'),
    }
  : {
      mode: 'full',
      encodings: ENCODINGS,
      // The trim that keeps the full run near 25 minutes: UDHR and the skewed batch cost the slow
      // peers the most (js-tiktoken and @huggingface/tokenizers run UDHR at under 1 MiB/s), so
      // cl100k_base and gpt2 are timed on the two big.txt workloads only.
      workloadsOf: { cl100k_base: ['documents', 'short'], r50k_base: ['documents', 'short'] },
      rounds: 3,
      taskTimeMs: 300,
      firstUseRepeats: 3,
      probeRuns: 2,
      worstTimeoutMs: 30_000,
      out: path.join(HERE, 'results', 'bench'),
    }

/** The encoding of the targets, the responsiveness and memory probes, the worst case and the chart. */
const HEADLINE_ENCODING = 'o200k_base'
/** batchtok's reference configuration: the default policy at two threads. */
const REFERENCE = { policy: 'chunked', threads: 2, kind: 'encode' }
/** Probe processes that do not answer within this long are stopped and reported as failed. */
const PROBE_TIMEOUT_MS = 10 * 60_000

const log = (...args) => console.log(...args)

// ---- ids ------------------------------------------------------------------------------------

/** Where `runner`'s output first differs from the reference ids, or null if it never does. */
function firstDifference(texts, reference, contender, runner, result) {
  for (let i = 0; i < texts.length; i++) {
    const expected = reference.get(i)
    if (contender.kind === 'count') {
      const got = runner.countOf(result, i)
      if (got !== expected.length) return { item: i, text: texts[i], expectedCount: expected.length, gotCount: got }
      continue
    }
    const got = runner.idsOf(result, i)
    const length = Math.max(expected.length, got.length)
    for (let j = 0; j < length; j++) {
      if (expected[j] !== got[j]) {
        return {
          item: i,
          text: texts[i],
          position: j,
          expectedLength: expected.length,
          gotLength: got.length,
          expected: Array.from(expected.slice(j, j + 6)),
          got: Array.from(got.slice(j, j + 6)),
        }
      }
    }
  }
  return null
}

function describeDifference(d) {
  const preview = JSON.stringify(d.text.length > 60 ? `${d.text.slice(0, 60)}…` : d.text)
  if ('expectedCount' in d) return `item ${d.item} ${preview}: count ${d.gotCount}, batchtok ${d.expectedCount} ids`
  return (
    `item ${d.item} ${preview}: id ${d.position} is [${d.got.join(', ')}…], batchtok [${d.expected.join(', ')}…] ` +
    `(${d.gotLength} vs ${d.expectedLength} ids)`
  )
}

// ---- throughput -----------------------------------------------------------------------------

/** The rotation of `list` for round `round` of `rounds`: start points spread over the list. */
function rotated(list, round, rounds) {
  const shift = Math.round((round * list.length) / rounds) % Math.max(list.length, 1)
  return [...list.slice(shift), ...list.slice(0, shift)]
}

async function runScenario(encoding, workload, entries) {
  const { texts } = workload
  const reference = await entries.get(batchtokContender(REFERENCE).key).runner.run(texts)
  const rows = []
  const timed = []
  for (const { contender, runner, loadError } of entries.values()) {
    const row = { key: contender.key, library: contender.library, label: contender.label, threads: contender.threads, kind: contender.kind }
    rows.push(row)
    if (loadError) {
      row.status = 'load-error'
      row.detail = loadError
      continue
    }
    // The check is also the warm-up: one full pass over the workload before any timing.
    try {
      const result = await runner.run(texts)
      const difference = firstDifference(texts, reference, contender, runner, result)
      if (difference) {
        row.status = 'differs'
        row.detail = describeDifference(difference)
        continue
      }
      row.tokens = runner.tokens(result)
      row.status = 'timed'
      row.samplesMs = []
      timed.push({ contender, runner, row })
    } catch (error) {
      row.status = 'error'
      row.detail = String(error?.message ?? error).split('\n')[0]
    }
  }

  for (let round = 0; round < SETTINGS.rounds; round++) {
    const bench = new Bench({
      name: `${ENCODING_LABELS[encoding]} · ${workload.label} · round ${round + 1}`,
      time: SETTINGS.taskTimeMs,
      iterations: 1,
      warmup: false,
      retainSamples: true,
      throws: true,
    })
    // Async functions, so tinybench does not call a task once more just to learn whether it is async.
    for (const { contender, runner } of rotated(timed, round, SETTINGS.rounds)) {
      bench.add(contender.key, async () => runner.run(texts))
    }
    await bench.run()
    for (const task of bench.tasks) {
      timed.find((t) => t.contender.key === task.name).row.samplesMs.push(...task.result.latency.samples)
    }
  }
  for (const { row } of timed) Object.assign(row, throughput(row.samplesMs, workload.bytes, row.tokens))
  return { encoding, workload: workload.key, label: workload.label, description: workload.description, bytes: workload.bytes, items: texts.length, rows }
}

function printScenario(scenario) {
  log(`\n${ENCODING_LABELS[scenario.encoding]} · ${scenario.label}: ${scenario.description}`)
  const table = scenario.rows.map((row) => ({
    contender: row.label,
    threads: row.threads,
    'MiB/s': row.status === 'timed' ? row.mibPerSec.toFixed(1) : row.status,
    'min–max': row.status === 'timed' ? `${row.mibPerSecMin.toFixed(1)}–${row.mibPerSecMax.toFixed(1)}` : '',
    'Mtok/s': row.status === 'timed' ? (row.tokensPerSec / 1e6).toFixed(2) : '',
    samples: row.samples ?? '',
  }))
  console.table(table)
  for (const row of scenario.rows) if (row.detail) log(`  ${row.label}: ${row.status}: ${row.detail}`)
}

// ---- probes ---------------------------------------------------------------------------------

/** Runs probe.mjs in a fresh Node process; resolves to its result, or { failed, timedOut, error }. */
function probe(request, timeoutMs = PROBE_TIMEOUT_MS) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PROBE, JSON.stringify(request)], {
      cwd: ROOT,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX))
      if (line && code === 0) resolve(JSON.parse(line.slice(RESULT_PREFIX.length)))
      else resolve({ failed: true, timedOut, error: timedOut ? `stopped after ${timeoutMs / 1000} s` : stderr.trim().split('\n').slice(-3).join(' ') })
    })
  })
}

/** One contender per library for the per-library probes: batchtok at its reference configuration. */
function libraryContenders() {
  const peers = peerContenders().filter((c) => c.kind === 'encode')
  return [batchtokContender(REFERENCE), ...peers]
}

/**
 * The configurations probed for responsiveness and memory: all of them in a full run; in quick mode
 * batchtok's encodeBatch at two threads and each peer's encode (each probe runs the whole ~6 MB
 * batch, which takes the slow peers several seconds).
 */
function batchProbeContenders() {
  const all = [...batchtokContenders({ quick: QUICK }), ...peerContenders()]
  if (!QUICK) return all
  return all.filter((c) => c.kind === 'encode' && (c.library !== 'batchtok' || c.threads === 2))
}

async function runBatchProbes(contenders) {
  const rows = []
  for (const contender of contenders) {
    if (!contender.supports(HEADLINE_ENCODING)) continue
    const result = await probe({ job: 'batch', contender: contender.key, encoding: HEADLINE_ENCODING, runs: SETTINGS.probeRuns })
    rows.push({ key: contender.key, label: contender.label, library: contender.library, threads: contender.threads, kind: contender.kind, ...result })
    const summary = result.failed
      ? `failed: ${result.error}`
      : `batch ${result.firstRunMs.toFixed(0)} ms, loop p99 ${result.duringBatch.p99Ms.toFixed(1)} ms (max ${result.duringBatch.maxMs.toFixed(0)} ms), peak RSS ${(result.maxRssBytes / 2 ** 20).toFixed(0)} MiB`
    log(`  ${contender.label} ×${contender.threads}: ${summary}`)
  }
  return rows
}

async function runFirstUseProbes() {
  const rows = []
  const contenders = libraryContenders()
  for (const encoding of SETTINGS.encodings) {
    const samples = new Map(contenders.map((c) => [c.key, []]))
    const errors = new Map()
    // Repeats go round the libraries in turn, so a burst of load on the machine hits them alike.
    for (let repeat = 0; repeat < SETTINGS.firstUseRepeats; repeat++) {
      for (const contender of rotated(contenders, repeat, SETTINGS.firstUseRepeats)) {
        if (!contender.supports(encoding)) continue
        const result = await probe({ job: 'first-use', contender: contender.key, encoding })
        if (result.failed) errors.set(contender.key, result.error)
        else samples.get(contender.key).push(result)
      }
    }
    for (const contender of contenders) {
      if (!contender.supports(encoding)) continue
      const list = samples.get(contender.key)
      const row = { encoding, key: contender.key, library: contender.library, repeats: list.length, error: errors.get(contender.key) }
      if (list.length) {
        row.totalMs = median(list.map((s) => s.totalMs))
        row.loadMs = median(list.map((s) => s.loadMs))
        row.firstEncodeMs = median(list.map((s) => s.firstEncodeMs))
      }
      rows.push(row)
      log(`  ${ENCODING_LABELS[encoding]} · ${contender.library}: ${row.totalMs !== undefined ? `${row.totalMs.toFixed(0)} ms` : `failed: ${row.error}`}`)
    }
  }
  return rows
}

async function runWorstCaseProbes() {
  const rows = []
  for (const contender of libraryContenders()) {
    const result = await probe({ job: 'worst', contender: contender.key, encoding: HEADLINE_ENCODING }, SETTINGS.worstTimeoutMs)
    rows.push({ key: contender.key, library: contender.library, label: contender.label, ...result })
    log(`  ${contender.library}: ${result.failed ? result.error : `${result.ms.toFixed(0)} ms, ${result.tokens} tokens`}`)
  }
  return { encoding: HEADLINE_ENCODING, timeoutMs: SETTINGS.worstTimeoutMs, rows }
}

// ---- the BERT fixture as shipped ------------------------------------------------------------

/**
 * The three tokenizer.json readers on the BERT fixture as it is shipped (truncation at 128 tokens,
 * padding to 128), over the first documents of big.txt: records where each differs from batchtok.
 */
async function checkBertAsShipped(texts) {
  const { createRequire } = await import('node:module')
  const require = createRequire(import.meta.url)
  const { Tokenizer } = require('../index.js')
  const reference = await Tokenizer.fromFile(BERT_FIXTURE).encodeBatch(texts)
  const outputs = []
  try {
    const hf = require('tokenizers').Tokenizer.fromFile(BERT_FIXTURE)
    outputs.push(['tokenizers', (await hf.encodeBatch(texts)).map((e) => e.getIds())])
  } catch (error) {
    outputs.push(['tokenizers', null, String(error.message)])
  }
  try {
    const { Tokenizer: JsTokenizer } = await import('@huggingface/tokenizers')
    const js = new JsTokenizer(JSON.parse(fs.readFileSync(BERT_FIXTURE, 'utf8')), {})
    outputs.push(['@huggingface/tokenizers', texts.map((t) => js.encode(t).ids)])
  } catch (error) {
    outputs.push(['@huggingface/tokenizers', null, String(error.message)])
  }
  return outputs.map(([library, lists, error]) => {
    if (!lists) return { library, error }
    const contender = { kind: 'encode' }
    const runner = { idsOf: (l, i) => l[i] }
    const difference = firstDifference(texts, reference, contender, runner, lists)
    return { library, items: texts.length, equal: !difference, detail: difference ? describeDifference(difference) : null }
  })
}

// ---- main -----------------------------------------------------------------------------------

function addonFingerprint() {
  const file = fs.readdirSync(ROOT).find((name) => name.endsWith('.node'))
  if (!file) return null
  const digest = crypto.createHash('sha256').update(fs.readFileSync(path.join(ROOT, file))).digest('hex')
  return { file, sha256: digest.slice(0, 16) }
}

function gitCommit() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'Cargo.toml', 'Cargo.lock'], { cwd: ROOT, encoding: 'utf8' }).trim()
    return dirty ? `${commit} (with uncommitted changes under src/ or Cargo.*)` : commit
  } catch {
    return 'unknown'
  }
}

function peerPackages() {
  return PEER_PACKAGES.map((name) => {
    try {
      return { name, version: packageVersion(name), status: 'installed' }
    } catch {
      return { name, version: null, status: 'not installed: see benchmark/README.md' }
    }
  })
}

/** `--render FILE`: writes bench.md and bench.svg again from a raw results file, without measuring. */
function renderOnly(file) {
  const results = JSON.parse(fs.readFileSync(file, 'utf8'))
  const out = results.meta.mode === 'quick' ? path.join(HERE, 'results', 'raw', 'bench-quick') : path.join(HERE, 'results', 'bench')
  fs.writeFileSync(`${out}.md`, renderMarkdown(results))
  fs.writeFileSync(`${out}.svg`, renderSvg(results))
  log(`wrote ${path.relative(ROOT, out)}.md and .svg from ${file}`)
}

async function main() {
  const renderIndex = process.argv.indexOf('--render')
  if (renderIndex !== -1) return renderOnly(process.argv[renderIndex + 1])
  // Fixed before anything loads the binding: its rayon pool reads this once, when it starts.
  process.env.RAYON_NUM_THREADS = String(HF_BINDING_THREADS)
  const started = Date.now()
  const machine = describeMachine()
  const meta = {
    mode: SETTINGS.mode,
    date: new Date().toISOString(),
    commit: gitCommit(),
    addon: addonFingerprint(),
    machine,
    versions: { batchtok: JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version, tinybench: packageVersion('tinybench') },
    peers: peerPackages(),
    settings: { workloadsOf: SETTINGS.workloadsOf ?? null, rounds: SETTINGS.rounds, taskTimeMs: SETTINGS.taskTimeMs, probeRuns: SETTINGS.probeRuns, hfBindingThreads: HF_BINDING_THREADS },
  }
  log(`batchtok benchmark (${SETTINGS.mode}) on ${machine.cpu}, nproc ${machine.nproc}, Node ${machine.node}`)
  log(`peers: ${meta.peers.map((p) => `${p.name} ${p.version ?? p.status}`).join(', ')}`)

  for (const encoding of SETTINGS.encodings) prepareTokenizerJson(encoding)
  const loads = workloads({ quick: QUICK })
  for (const w of loads) log(`workload ${w.label}: ${w.description}`)

  const scenarios = []
  for (const encoding of SETTINGS.encodings) {
    const entries = new Map()
    for (const contender of [...batchtokContenders({ quick: QUICK }), ...peerContenders()]) {
      if (!contender.supports(encoding)) continue
      try {
        entries.set(contender.key, { contender, runner: await contender.open(encoding) })
      } catch (error) {
        entries.set(contender.key, { contender, loadError: String(error?.message ?? error).split('\n')[0] })
      }
    }
    for (const workload of loads) {
      if (SETTINGS.workloadsOf?.[encoding] && !SETTINGS.workloadsOf[encoding].includes(workload.key)) continue
      const scenario = await runScenario(encoding, workload, entries)
      scenarios.push(scenario)
      printScenario(scenario)
    }
  }

  log('\nBERT fixture as shipped (truncation and padding on):')
  // Documents run past the truncation length; short items show what padding does.
  const bertTexts = ['documents', 'short'].flatMap((key) => loads.find((w) => w.key === key).texts.slice(0, 50))
  const bertAsShipped = await checkBertAsShipped(bertTexts)
  for (const r of bertAsShipped) log(`  ${r.library}: ${r.error ?? (r.equal ? 'same ids as batchtok' : r.detail)}`)

  log(`\nOne batch of big.txt documents per fresh process (${HEADLINE_ENCODING}): event loop and peak RSS`)
  const batchProbes = await runBatchProbes(batchProbeContenders())
  log('\nTime to first use (fresh process: load, then encode one short text)')
  const firstUse = await runFirstUseProbes()
  log(`\nWorst case: ${HEADLINE_ENCODING}, one text of 100,000 × 'a', limit ${SETTINGS.worstTimeoutMs / 1000} s`)
  const worstCase = await runWorstCaseProbes()

  meta.durationSec = Math.round((Date.now() - started) / 1000)
  const results = { meta, headlineEncoding: HEADLINE_ENCODING, scenarios, bertAsShipped, batchProbes, firstUse, worstCase }
  fs.mkdirSync(path.dirname(SETTINGS.out), { recursive: true })
  fs.mkdirSync(path.join(HERE, 'results', 'raw'), { recursive: true })
  fs.writeFileSync(path.join(HERE, 'results', 'raw', `bench-${SETTINGS.mode}.json`), `${JSON.stringify(results, null, 1)}\n`)
  fs.writeFileSync(`${SETTINGS.out}.md`, renderMarkdown(results))
  fs.writeFileSync(`${SETTINGS.out}.svg`, renderSvg(results))
  log(`\nwrote ${path.relative(ROOT, SETTINGS.out)}.md and .svg in ${meta.durationSec} s`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
