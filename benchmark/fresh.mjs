// Fresh text against repeated text: batchtok and every tokenizer a Node user might pick, on the
// four corpora, each timed two ways side by side in one run.
//
//   npm run bench:fresh            full run: benchmark/results/fresh.md, fresh.svg, repeated.svg
//   npm run bench:fresh -- --quick o200k_base, one round of one slice per corpus, slow peers capped
//                                  harder; writes benchmark/results/raw/fresh-quick.*
//
// - fresh: each timed sample is a slice of a corpus (~100 documents, ~650 KB; chat items of the
//   same total size) that the contender has never encoded in its process. Every contender runs
//   in a new process per corpus and round (fresh-child.mjs, fresh_python.py), warms up on a slice of
//   another corpus, then encodes each of its slices once. No cache, JIT profile or pool can be warm
//   on the measured text, whatever the library keeps.
// - repeated: in the same process, after the fresh samples, the first slice again and again, as a
//   tinybench loop over one batch does. Caches of merged words are then warm on exactly that text.
//
// Every contender's ids for every timed text are compared with batchtok's (a digest per text):
// one whose ids differ is reported as such, not as a throughput. Rounds take the contenders in a
// new seeded order, so a shared machine's drift does not always land on the same ones.

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describeMachine, packageVersion } from './machine.mjs'
import { renderSvg } from './report.mjs'
import { MiB, median, shuffledOrders } from './stats.mjs'
import {
  FRESH_PEER_PACKAGES,
  MODELS,
  SIDE_PEERS,
  batchtokTokenizer,
  ensureSidePeers,
  freshContenders,
  sidePeerVersion,
} from './fresh-contenders.mjs'
import { CORPORA, WARMUP_CORPUS, capSlice, cutSlices, ensureCorpora, idsDigest, readCorpus, runResultChild } from './fresh-corpora.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.join(HERE, '..')
const CHILD = path.join(HERE, 'fresh-child.mjs')
const PYTHON_CHILD = path.join(HERE, 'fresh_python.py')
const QUICK = process.argv.includes('--quick')
const require = createRequire(import.meta.url)

/** The Python with tiktoken and tokenizers: scripts/gen-fixtures.sh makes this virtualenv. */
const PYTHON = process.env.BATCHTOK_PYTHON ?? path.join(ROOT, 'scripts', '.venv', 'bin', 'python')

/**
 * What each mode runs, per model: rounds × slices per round fresh samples per contender and
 * corpus (one process per round), `repeats` repeated samples per process. Slow peers (a few MiB/s
 * or less) get the first `slowCapBytes` of each slice, which keeps a full run near 30 minutes on
 * two shared cores; their rate per byte hardly depends on batch size, as they encode one text at a
 * time, and the cap is printed with the results.
 */
const SETTINGS = QUICK
  ? {
      mode: 'quick',
      plan: { o200k_base: { rounds: 1, slicesPerRound: 1 } },
      repeats: 3,
      slowCapBytes: 64 * 1024,
      out: path.join(HERE, 'results', 'raw', 'fresh-quick'),
      raw: path.join(HERE, 'results', 'raw', 'fresh-quick.json'),
    }
  : {
      mode: 'full',
      plan: {
        o200k_base: { rounds: 3, slicesPerRound: 2 },
        cl100k_base: { rounds: 1, slicesPerRound: 1 },
        llama3: { rounds: 1, slicesPerRound: 2 },
        llama2: { rounds: 1, slicesPerRound: 2 },
        tekken: { rounds: 1, slicesPerRound: 2 },
      },
      repeats: 3,
      slowCapBytes: 128 * 1024,
      out: path.join(HERE, 'results', 'fresh'),
      raw: path.join(HERE, 'results', 'raw', 'fresh-full.json'),
    }
/** Warm-up: at least this many calls on the warm-up slice, more (up to twice) while under warmupMs. */
const WARMUP = { warmupCalls: 2, warmupMs: 1000 }
const CHILD_TIMEOUT_MS = 5 * 60_000
/** Threads of the peers' own pools: the `tokenizers` binding's rayon and libuv's (async peers). */
const PEER_THREADS = 2

const HEADLINE = 'o200k_base'
const OURS = 'batchtok/encodeBatch/chunked/2'
const OURS_1 = 'batchtok/encodeBatch/chunked/1'
const GPT_TOKENIZER = 'gpt-tokenizer/encode'
const HF_BINDING = 'tokenizers/encodeBatch'
/** The goals of the fresh method at 2 threads (same-run ratios of medians). */
const GOALS = { gptTokenizer: 25, binding: 40, twoThreads: 1.8 }

const log = (...args) => console.log(...args)

// ---- setup ----------------------------------------------------------------------------------

function pythonVersions() {
  if (!fs.existsSync(PYTHON)) return null
  const out = execFileSync(
    PYTHON,
    ['-c', 'import sys, tiktoken, tokenizers, mistral_common; print(sys.version.split()[0], tiktoken.__version__, tokenizers.__version__, mistral_common.__version__)'],
    { encoding: 'utf8' },
  )
  const [python, tiktoken, tokenizers, mistralCommon] = out.trim().split(' ')
  return { python, tiktoken, tokenizers, mistralCommon }
}

// ---- reference ids ----------------------------------------------------------------------------

/** batchtok's ids of every text of a corpus, as digests and counts: what every contender must match. */
function referenceOf(model, corpus) {
  const tokenizer = batchtokTokenizer(model)
  const texts = readCorpus(corpus)
  const batch = tokenizer.encodeBatchSync(texts)
  const digests = new Array(texts.length)
  const counts = new Array(texts.length)
  for (let i = 0; i < texts.length; i++) {
    const ids = batch.get(i)
    digests[i] = idsDigest(ids)
    counts[i] = ids.length
  }
  return { digests, counts }
}

/** The first text whose ids (or count) differ from batchtok's in a child's checks, or null. */
function firstDifference(contender, checks, reference) {
  for (const check of checks) {
    for (let i = 0; i < check.digests.length; i++) {
      const at = check.start + i
      const expected = contender.kind === 'count' ? reference.counts[at] : reference.digests[at]
      if (check.digests[i] !== expected) {
        const text = readCorpus(check.corpus)[at]
        const preview = JSON.stringify(text.length > 50 ? `${text.slice(0, 50)}…` : text)
        return contender.kind === 'count'
          ? `${check.corpus} item ${at} ${preview}: count ${check.digests[i]}, batchtok ${expected}`
          : `${check.corpus} item ${at} ${preview}: ids differ from batchtok's (${reference.counts[at]} ids)`
      }
    }
  }
  return null
}

// ---- children ---------------------------------------------------------------------------------

function runChild(contender, job) {
  const python = contender.lang === 'python'
  const command = python ? PYTHON : process.execPath
  const args = python ? [PYTHON_CHILD, JSON.stringify(job)] : ['--expose-gc', CHILD, JSON.stringify(job)]
  const env = { ...process.env, RAYON_NUM_THREADS: String(PEER_THREADS), UV_THREADPOOL_SIZE: String(PEER_THREADS) }
  return runResultChild(command, args, env, CHILD_TIMEOUT_MS)
}

// ---- the run ----------------------------------------------------------------------------------

function rateStats(samples) {
  const rates = samples.map((s) => s.bytes / MiB / (s.ms / 1000))
  const cpu = samples.map((s) => s.cpuMs / s.ms)
  const perCpuSecond = samples.map((s) => s.bytes / MiB / (Math.max(s.cpuMs, 0.001) / 1000))
  return {
    samples: samples.length,
    mibPerCpuSec: median(perCpuSecond),
    mibPerSec: median(rates),
    mibPerSecMin: Math.min(...rates),
    mibPerSecMax: Math.max(...rates),
    cpuPerWall: median(cpu),
    bytes: median(samples.map((s) => s.bytes)),
  }
}

async function measureModel(model, plan, contenders, python) {
  const rows = {}
  for (const corpus of CORPORA) {
    rows[corpus] = Object.fromEntries(contenders.map((c) => [c.key, { fresh: [], repeated: [], loadMs: [], problems: [] }]))
  }
  const slices = Object.fromEntries(CORPORA.map((c) => [c, cutSlices(c)]))
  const references = {}
  const order = shuffledOrders(contenders.length, 21)
  for (let round = 0; round < plan.rounds; round++) {
    for (const corpus of CORPORA) {
      // Slice 0 of every corpus is only ever a warm-up; each round times its own slices.
      const mine = slices[corpus].slice(1 + round * plan.slicesPerRound, 1 + (round + 1) * plan.slicesPerRound)
      if (mine.length < plan.slicesPerRound) throw new Error(`${corpus} has too few slices for ${plan.rounds} rounds`)
      references[corpus] ??= referenceOf(model, corpus)
      const warmup = slices[WARMUP_CORPUS[corpus]][0]
      for (const index of order()) {
        const contender = contenders[index]
        const row = rows[corpus][contender.key]
        if (contender.lang === 'python' && !python) continue
        const cap = contender.slow ? SETTINGS.slowCapBytes : 0
        const job = {
          key: contender.key,
          model,
          warmup: capSlice(warmup, cap),
          slices: mine.map((s) => capSlice(s, cap)),
          repeats: SETTINGS.repeats,
          ...WARMUP,
        }
        const started = Date.now()
        const result = await runChild(contender, job)
        if (!result.ok) {
          row.problems.push(result.error)
          log(`  ${model} ${corpus} round ${round + 1} ${contender.key}: failed: ${result.error}`)
          continue
        }
        const byteOf = (s) => s.bytes ?? job.slices.find((j) => j.start === s.start).bytes
        row.fresh.push(...result.fresh.map((s) => ({ ...s, bytes: byteOf(s) })))
        row.repeated.push(...result.repeated.map((s) => ({ ...s, bytes: byteOf(s) })))
        row.loadMs.push(result.loadMs)
        const difference = firstDifference(contender, result.checks, references[corpus])
        if (difference) row.problems.push({ differs: true, detail: difference })
        const fresh = rateStats(row.fresh.slice(-result.fresh.length))
        log(
          `  ${model} ${corpus} round ${round + 1} ${contender.key.padEnd(34)} fresh ${fresh.mibPerSec.toFixed(2).padStart(7)} MiB/s` +
            `${difference ? '  IDS DIFFER' : ''}  (${((Date.now() - started) / 1000).toFixed(1)} s)`,
        )
      }
    }
  }
  const out = {}
  for (const corpus of CORPORA) {
    out[corpus] = contenders.map((c) => {
      const row = rows[corpus][c.key]
      const base = { key: c.key, library: c.library, label: c.label, threads: c.threads, kind: c.kind, slow: Boolean(c.slow), lang: c.lang }
      if (c.lang === 'python' && !python) return { ...base, status: 'skipped', detail: 'no Python virtualenv' }
      const differs = row.problems.find((p) => p.differs)
      if (differs) return { ...base, status: 'differs', detail: differs.detail }
      if (!row.fresh.length) return { ...base, status: 'failed', detail: row.problems[0] ?? 'no samples' }
      return {
        ...base,
        status: 'timed',
        detail: row.problems[0],
        loadMs: median(row.loadMs),
        fresh: rateStats(row.fresh),
        repeated: rateStats(row.repeated),
        samples: { fresh: row.fresh, repeated: row.repeated },
      }
    })
  }
  return out
}

// ---- report -----------------------------------------------------------------------------------

function rate(x) {
  if (x >= 100) return x.toFixed(0)
  if (x >= 10) return x.toFixed(1)
  return x.toFixed(2)
}
const times = (x) => (x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(2)}×`)
function table(headers, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n')
}
const rowName = (r) => `${r.label}${r.slow ? ' †' : ''}`
const statusText = (r) => ({ differs: 'ids differ: not timed', failed: 'failed', skipped: 'skipped (no Python)' })[r.status] ?? r.status

/** ours ÷ theirs on one method, with the range the two sample ranges allow. */
function ratio(ours, theirs) {
  if (!ours || !theirs) return null
  return { mid: ours.mibPerSec / theirs.mibPerSec, low: ours.mibPerSecMin / theirs.mibPerSecMax, high: ours.mibPerSecMax / theirs.mibPerSecMin }
}
const ratioText = (r) => (r ? `${times(r.mid)} (${times(r.low)}–${times(r.high)})` : 'not measured')

function timedRow(rows, key) {
  const row = rows.find((r) => r.key === key)
  return row?.status === 'timed' ? row : null
}

function goalRows(results) {
  const model = results.models[HEADLINE]
  if (!model) return []
  return CORPORA.map((corpus) => {
    const rows = model[corpus]
    const ours = timedRow(rows, OURS)?.fresh
    const peers = rows.filter((r) => r.status === 'timed' && r.library !== 'batchtok')
    const best = peers.reduce((a, b) => (!a || b.fresh.mibPerSec > a.fresh.mibPerSec ? b : a), null)
    const gpt = ratio(ours, timedRow(rows, GPT_TOKENIZER)?.fresh)
    const hf = ratio(ours, timedRow(rows, HF_BINDING)?.fresh)
    const bestRatio = ratio(ours, best?.fresh)
    const two = ratio(ours, timedRow(rows, OURS_1)?.fresh)
    const mark = (r, goal) => (r ? `${ratioText(r)} ${r.mid >= goal ? '✓' : '✗'}` : 'not measured')
    return [
      corpus,
      ours ? rate(ours.mibPerSec) : 'n/a',
      mark(gpt, GOALS.gptTokenizer),
      mark(hf, GOALS.binding),
      best ? `${rowName(best)}: ${mark(bestRatio, 1)}` : 'n/a',
      mark(two, GOALS.twoThreads),
    ]
  })
}

/** Fresh samples by CPU time: MiB of input per CPU-second of the process, all its threads. */
function cpuTable(model) {
  const keys = model[CORPORA[0]].map((r) => r.key)
  return table(
    ['contender', 'threads', ...CORPORA.map((c) => `${c} MiB per CPU-s`)],
    keys.map((key) => {
      const first = model[CORPORA[0]].find((r) => r.key === key)
      const cells = CORPORA.map((corpus) => {
        const row = model[corpus].find((r) => r.key === key)
        return row.status === 'timed' ? rate(row.fresh.mibPerCpuSec) : statusText(row)
      })
      return [rowName(first), first.threads, ...cells]
    }),
  )
}

function methodTable(model, method) {
  const keys = model[CORPORA[0]].map((r) => r.key)
  return table(
    ['contender', 'threads', ...CORPORA.map((c) => `${c} MiB/s (min–max)`), `${method === 'fresh' ? 'CPU/wall' : 'repeated ÷ fresh'}`],
    keys.map((key) => {
      const first = model[CORPORA[0]].find((r) => r.key === key)
      const cells = CORPORA.map((corpus) => {
        const row = model[corpus].find((r) => r.key === key)
        if (row.status !== 'timed') return statusText(row)
        const s = row[method]
        return `**${rate(s.mibPerSec)}** (${rate(s.mibPerSecMin)}–${rate(s.mibPerSecMax)})`
      })
      const timed = CORPORA.map((c) => model[c].find((r) => r.key === key)).filter((r) => r.status === 'timed')
      const last =
        method === 'fresh'
          ? timed.map((r) => r.fresh.cpuPerWall.toFixed(1)).join(' / ')
          : timed.map((r) => `${(r.repeated.mibPerSec / r.fresh.mibPerSec).toFixed(2)}`).join(' / ')
      return [rowName(first), first.threads, ...cells, last]
    }),
  )
}

function renderMarkdown(results) {
  const { meta } = results
  const m = meta.machine
  const out = []
  out.push('# Fresh text against repeated text: batchtok and every peer, four corpora', '')
  out.push(
    `Written by \`${meta.command}\` (benchmark/fresh.mjs; the method: [benchmark/README.md](../README.md#fresh-text-freshmjs)). ` +
      `Mode: **${meta.mode}**; the run took ${Math.round(meta.durationSec / 60)} min.`,
    '',
  )
  out.push('## Machine and versions', '')
  out.push(
    table(
      ['CPU', 'nproc', 'memory', 'OS', 'Node', 'load average (1/5/15 min) at start', 'at end'],
      [[m.cpu, m.nproc, `${m.memoryGiB} GiB`, m.os, m.node, meta.loadStart.map((x) => x.toFixed(2)).join(' / '), meta.loadEnd.map((x) => x.toFixed(2)).join(' / ')]],
    ),
    '',
  )
  out.push(
    `The machine was shared with other builds while this ran (see the load average): every number is wall clock on ` +
      `whatever cores were free, and the CPU/wall column says how many cores a contender actually got. ` +
      `batchtok ${meta.versions.batchtok} at commit ${meta.commit}.`,
    '',
  )
  out.push(
    table(
      ['peer', 'version'],
      [
        ...meta.peers.map((p) => [`\`${p.name}\``, p.version]),
        ...(meta.python
          ? [
              ['Python `tiktoken`', meta.python.tiktoken],
              ['Python `tokenizers`', meta.python.tokenizers],
              ['Python `mistral-common`', meta.python.mistralCommon],
            ]
          : [['Python', `not run: no virtualenv at ${path.relative(ROOT, PYTHON)} (make one with scripts/gen-fixtures.sh)`]]),
      ],
    ),
    '',
  )
  if (meta.python) out.push(`Python ${meta.python.python}.`, '')

  out.push('## Method', '')
  out.push(
    `- **fresh**: each sample is one call on a slice of a corpus (~100 documents, ~${Math.round(meta.sliceBytes / 1000)} KB; chat: ` +
      `that many bytes of 50-300-byte items) that the contender has never encoded in its process. Each contender runs in a new ` +
      `process per corpus and round, warms up on a slice of another corpus (${Object.entries(WARMUP_CORPUS).map(([a, b]) => `${a} ← ${b}`).join(', ')}; ` +
      `at least ${WARMUP.warmupCalls} calls), then encodes each of its slices once.`,
    `- **repeated**: the same process then encodes its first slice ${meta.repeats} more times, as a benchmark loop over one batch does.`,
    `- Per model: ${Object.entries(meta.plan).map(([model, p]) => `${model} ${p.rounds} round(s) × ${p.slicesPerRound} slice(s)`).join('; ')}. ` +
      `Rounds take the contenders in a new seeded order. MiB/s is UTF-8 input bytes per wall second, median over samples, ` +
      `min–max from the slowest and fastest sample; a sample ends when every text's ids (or counts) are in JS (Python: in Python lists).`,
    `- † slow peers: each sample and the warm-up are the first ${Math.round(meta.slowCapBytes / 1024)} KiB of the slice (they encode one text at a ` +
      `time, so their rate hardly depends on the batch size). Everyone else gets whole slices.`,
    `- Threads: batchtok's \`Scheduler({ threads, policy: 'chunked' })\`; the \`tokenizers\` binding and Python \`tokenizers\` on rayon's pool ` +
      `(RAYON_NUM_THREADS=${PEER_THREADS}); @anysphere/tiktoken-node's async encode on libuv's pool (UV_THREADPOOL_SIZE=${PEER_THREADS}); Python tiktoken's ` +
      `\`encode_ordinary_batch(num_threads=N)\`. Special-token text is ordinary text everywhere. The Hugging Face peers read the real ` +
      `tokenizer.json of each model (o200k_base: gpt4o's; cl100k_base: gpt-3.5-turbo's), as a user would.`,
    `- Ids: every timed text's ids (a digest per text) are compared with batchtok's; a contender that differs on any text is listed as such.`,
    '',
  )

  if (results.models[HEADLINE]) {
    out.push(`## Goals: fresh method, ${HEADLINE}, batchtok encodeBatch at 2 threads`, '')
    out.push(
      `Ratios of medians in this run, with the range the sample ranges allow; ✓ where the median meets the goal ` +
        `(≥ ${GOALS.gptTokenizer}× gpt-tokenizer, ≥ ${GOALS.binding}× the \`tokenizers\` binding, ahead of the fastest peer, ` +
        `2 threads ≥ ${GOALS.twoThreads}× 1 thread).`,
      '',
    )
    out.push(table(['corpus', 'batchtok MiB/s', '× gpt-tokenizer', '× `tokenizers` binding', '× fastest peer', '2 threads ÷ 1 thread'], goalRows(results)), '')
    const [freshSvg, repeatedSvg] = svgNames(path.basename(SETTINGS.out))
    out.push(`![fresh method, o200k_base](${freshSvg})`, '', `![repeated method, o200k_base](${repeatedSvg})`, '')
  }

  for (const [model, data] of Object.entries(results.models)) {
    out.push(`## ${MODELS[model].label}`, '')
    out.push(`### Fresh`, '', methodTable(data, 'fresh'), '')
    out.push(`### Repeated`, '', methodTable(data, 'repeated'), '')
    out.push(
      `### Fresh, by CPU time`,
      '',
      'The same fresh samples per CPU-second of the process (all its threads): less sensitive to the other load on the ' +
        'machine than wall clock, and a contender on 2 threads is charged for both.',
      '',
      cpuTable(data),
      '',
    )
  }

  out.push('## Id checks and failures', '')
  const issues = []
  for (const [model, data] of Object.entries(results.models)) {
    for (const corpus of CORPORA) {
      for (const row of data[corpus]) {
        if (row.status !== 'timed' || row.detail) issues.push(`- ${model} · ${corpus} · ${row.label}: ${statusText(row)}: ${row.detail}`)
      }
    }
  }
  out.push(issues.length ? 'Every contender not listed produced batchtok\'s ids on every text it was timed on.' : 'Every contender produced batchtok\'s ids (or counts) on every text it was timed on.', '', ...issues, '')
  return `${out.join('\n').trimEnd()}\n`
}

const SVG_COLORS = {
  'batchtok encode': '#0969da',
  'batchtok count': '#7cb9f4',
  'gpt-tokenizer': '#e16f24',
  'js-tiktoken': '#bf8700',
  tiktoken: '#8250df',
  '@dqbd/tiktoken': '#a475f9',
  tokenizers: '#cf222e',
  '@huggingface/tokenizers': '#1a7f37',
  '@huggingface/transformers': '#4ac26b',
  '@lenml/tokenizers': '#116329',
  '@anysphere/tiktoken-node': '#bc4c00',
  'tiktoken-node': '#953800',
  kitoken: '#6639ba',
  'ai-tokenizer': '#9a6700',
  '@microsoft/tiktokenizer': '#57606a',
  'tiktoken (Python)': '#3572a5',
  'tokenizers (Python)': '#ffd43b',
}

/** The lowest and highest of the 1-, 5- and 15-minute load averages at the start and the end. */
function loadRange(meta) {
  const all = [...meta.loadStart, ...meta.loadEnd]
  return `${Math.min(...all).toFixed(1)}–${Math.max(...all).toFixed(1)}`
}

/** A row's name in the charts: the library and, for batchtok, the method; the panels are narrow. */
function chartLabel(row) {
  if (row.library === 'batchtok') return row.label
  return row.label.replace(/ (encode_ordinary_batch|encode_ordinary|encodeBatch|encode_batch|encode|tokenizer\.encode)$/, '')
}

function renderMethodSvg(results, method) {
  const data = results.models[HEADLINE]
  const chart = {
    headlineEncoding: HEADLINE,
    meta: results.meta,
    scenarios: CORPORA.map((corpus) => ({
      encoding: HEADLINE,
      label: corpus,
      description: `${method}: ${method === 'fresh' ? 'each sample a slice never encoded in its process' : 'one slice encoded again and again'}`,
      rows: data[corpus].map((r) => ({ ...r, label: chartLabel(r), ...(r.status === 'timed' ? r[method] : {}) })),
    })),
  }
  const m = results.meta.machine
  return renderSvg(chart, {
    colors: SVG_COLORS,
    title: `${method === 'fresh' ? 'Fresh' : 'Repeated'} text, ${HEADLINE}: input MiB/s, median (bar) and min–max (whisker), log scale`,
    subtitle: `${m.cpu}, nproc ${m.nproc}, load average ${loadRange(results.meta)} (shared machine); ${results.meta.mode} run; threads after ×`,
  })
}

// ---- main ---------------------------------------------------------------------------------------

async function main() {
  const started = Date.now()
  const loadStart = os.loadavg()
  ensureCorpora()
  require('../scripts/real-tokenizers.js').ensureRealTokenizers()
  ensureSidePeers(log)
  const python = pythonVersions()
  if (!python) log(`Python contenders skipped: no virtualenv at ${PYTHON} (scripts/gen-fixtures.sh makes one; BATCHTOK_PYTHON names another)`)

  const machine = describeMachine()
  log(`fresh benchmark (${SETTINGS.mode}): ${machine.cpu}, nproc ${machine.nproc}, load average ${loadStart.map((x) => x.toFixed(2)).join(' ')}`)
  log(`slow peers (†) get the first ${SETTINGS.slowCapBytes / 1024} KiB of each slice`)
  const contenders = freshContenders()
  const models = {}
  for (const [model, plan] of Object.entries(SETTINGS.plan)) {
    const mine = contenders.filter((c) => c.supports(model))
    log(`${model}: ${mine.length} contenders, ${plan.rounds} round(s) × ${plan.slicesPerRound} slice(s) per corpus`)
    models[model] = await measureModel(model, plan, mine, python)
  }
  const peerVersions = FRESH_PEER_PACKAGES.map((name) => ({ name, version: packageVersion(name) }))
  for (const name of Object.keys(SIDE_PEERS)) peerVersions.push({ name, version: sidePeerVersion(name) })
  const results = {
    meta: {
      mode: SETTINGS.mode,
      command: QUICK ? 'npm run bench:fresh -- --quick' : 'npm run bench:fresh',
      machine,
      loadStart,
      loadEnd: os.loadavg(),
      durationSec: (Date.now() - started) / 1000,
      commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim(),
      versions: { batchtok: require('../package.json').version },
      peers: peerVersions,
      python,
      plan: SETTINGS.plan,
      repeats: SETTINGS.repeats,
      slowCapBytes: SETTINGS.slowCapBytes,
      sliceBytes: 650_000,
    },
    models,
  }
  fs.mkdirSync(path.dirname(SETTINGS.raw), { recursive: true })
  fs.writeFileSync(SETTINGS.raw, `${JSON.stringify(results, null, 1)}\n`)
  writeReport(results)
}

/** The two charts' file names beside the markdown: fresh.svg and repeated.svg for the full run. */
function svgNames(base) {
  const prefix = base === 'fresh' ? '' : `${base}-`
  return [`${prefix}fresh.svg`, `${prefix}repeated.svg`]
}

function writeReport(results) {
  const dir = path.dirname(SETTINGS.out)
  const base = path.basename(SETTINGS.out)
  fs.writeFileSync(`${SETTINGS.out}.md`, renderMarkdown(results))
  if (results.models[HEADLINE]) {
    const [freshSvg, repeatedSvg] = svgNames(base)
    fs.writeFileSync(path.join(dir, freshSvg), renderMethodSvg(results, 'fresh'))
    fs.writeFileSync(path.join(dir, repeatedSvg), renderMethodSvg(results, 'repeated'))
  }
  log(`wrote ${path.relative(ROOT, SETTINGS.out)}.md`)
}

const renderOnly = process.argv.indexOf('--render')
if (renderOnly >= 0) {
  const results = JSON.parse(fs.readFileSync(process.argv[renderOnly + 1], 'utf8'))
  writeReport(results)
} else {
  await main()
}
