// Throughput per tokenizer.json at 1 and 2 threads: batchtok's `encodeBatch` against Python
// `tokenizers`' `encode_batch` and the `tokenizers` npm binding's `encodeBatch`.
//
// Input: big.txt cut at lines into documents of at least 6.5 KB (as benchmark/corpus.rs cuts them
// for benchmark/fallback.rs), in `--runs` + 1 consecutive batches of about `--bytes` each, encoded
// with the template tokens, padding off. Each sample is a fresh process that loads the file (not
// timed; batchtok waits for `whenReady()`), encodes the first batch to warm up, then times one
// encode of each other batch and reports their median and a digest of the first batch's ids,
// which must equal batchtok's. Every timed batch is text the process has not encoded before, so
// no word cache holds it (the method of `benchmark/fresh.mjs`): an engine's cache keyed on whole
// texts, which a tokenizer.json without a pre-tokenizer gives it, would otherwise time lookups. The thread count is batchtok's
// `Scheduler({ threads })`, and rayon's `RAYON_NUM_THREADS` for the two others (read once per
// process, hence a process per sample). Per file, the six contenders run in a new order each
// round; a cell is the median over rounds, in MiB/s. The machine's load average is printed before
// and after, since the machine may be shared.
//
// Files: the three test fixtures and the real model files `node scripts/real-tokenizers.js`
// fetches (fetched here if absent). Python `tokenizers` runs from `scripts/.venv` (made by
// `scripts/gen-fixtures.sh`); without it, its columns are left empty.
//
// `--typographic` sets big.txt's quotes as edited prose sets them (’ for an apostrophe, “ and ”
// for double quotes): English text that is no longer all ASCII, which some normalizers take a
// slower path for.
//
//   node benchmark/files.mjs [--rounds 3] [--runs 3] [--bytes 1000000] [--only a,b] [--typographic]
//                            [--write]
//
// `--write` writes the table to benchmark/results/files.md (files-typographic.md with
// `--typographic`).

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describeMachine, packageVersion } from './machine.mjs'
import { median, shuffledOrders } from './stats.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const PYTHON = path.join(ROOT, 'scripts', '.venv', 'bin', 'python')

const args = process.argv.slice(2)
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const ROUNDS = Number(option('--rounds', 3))
const RUNS = Number(option('--runs', 3))
const BYTES = Number(option('--bytes', 1_000_000))
const ONLY = option('--only', null)?.split(',')
const WRITE = args.includes('--write')
const TYPOGRAPHIC = args.includes('--typographic')
const DOCUMENT_BYTES = 6500

const { ensureRealTokenizers } = require('../scripts/real-tokenizers.js')
const FILES = [
  ...['gpt2', 'bert', 'unigram', 'sentencepiece'].map((name) => ({
    name: `${name} (fixture)`,
    file: path.join(ROOT, '__test__', 'fixtures', 'tokenizers', `${name}.json`),
  })),
  ...Object.entries(ensureRealTokenizers()).map(([name, file]) => ({ name, file })),
].filter(({ name }) => !ONLY || ONLY.some((only) => name.startsWith(only)))

/** `text` with typographic quotes: ’ for an apostrophe or a closing single quote, “ and ” in
 * turn for the double quotes of each paragraph. */
function typographic(text) {
  return text
    .split('\n\n')
    .map((paragraph) => {
      let open = true
      return paragraph.replaceAll("'", '\u2019').replace(/"/g, () => ((open = !open) ? '\u201d' : '\u201c'))
    })
    .join('\n\n')
}

/** big.txt cut at lines into documents of at least `DOCUMENT_BYTES`, in `RUNS + 1` batches of
 * about `BYTES` each. */
function batches() {
  const plain = fs.readFileSync(path.join(ROOT, '.cache', 'corpus', 'big.txt'), 'utf8')
  const text = TYPOGRAPHIC ? typographic(plain) : plain
  const lines = text.split('\n').map((line, i, all) => (i < all.length - 1 ? `${line}\n` : line))
  const items = []
  let current = []
  let bytes = 0
  for (const line of lines) {
    current.push(line)
    bytes += Buffer.byteLength(line)
    if (bytes >= DOCUMENT_BYTES) {
      items.push(current.join(''))
      current = []
      bytes = 0
    }
  }
  const sets = [[]]
  let total = 0
  for (const item of items) {
    if (total >= BYTES) {
      if (sets.length === RUNS + 1) break
      sets.push([])
      total = 0
    }
    sets.at(-1).push(item)
    total += Buffer.byteLength(item)
  }
  if (sets.length < RUNS + 1 || total < BYTES) {
    throw new Error(`big.txt holds fewer than ${RUNS + 1} batches of ${BYTES} bytes; lower --bytes or --runs`)
  }
  return sets
}

const sets = batches()
const MIB = sets.slice(1).reduce((n, set) => n + set.reduce((m, d) => m + Buffer.byteLength(d), 0), 0) / RUNS / 2 ** 20
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-files-'))
const DOCS = path.join(work, 'docs.json')
fs.writeFileSync(DOCS, JSON.stringify(sets))

// Each child prints `{ seconds, digest }`: the median time of its encodes of the batches after the
// first, and the first batch's ids' count and a checksum of them in order.
const NODE_COMMON = `
  const fs = require('node:fs')
  const sets = JSON.parse(fs.readFileSync(process.env.DOCS, 'utf8'))
  function digest(lists) {
    let count = 0, sum = 0
    for (const ids of lists) for (const id of ids) { count++; sum = (sum * 31 + id) % 4294967291 }
    return count + ':' + sum
  }
  async function time(run) {
    const first = await run(sets[0])
    const seconds = []
    for (const docs of sets.slice(1)) {
      const started = process.hrtime.bigint()
      await run(docs)
      seconds.push(Number(process.hrtime.bigint() - started) / 1e9)
    }
    seconds.sort((a, b) => a - b)
    console.log(JSON.stringify({ seconds: seconds[seconds.length >> 1], digest: digest(first) }))
  }`

const NODE_CONTENDERS = {
  batchtok: `
    const { Tokenizer, Scheduler } = require(${JSON.stringify(ROOT)})
    const tokenizer = Tokenizer.fromFile(process.env.FILE)
    await tokenizer.whenReady()
    const scheduler = new Scheduler({ threads: Number(process.env.THREADS) })
    // The ids stay in the batch's one Uint32Array, as a caller reads them; the digest iterates its views.
    await time((docs) => tokenizer.encodeBatch(docs, { scheduler }))`,
  'tokenizers (npm)': `
    const { Tokenizer } = require(${JSON.stringify(path.join(ROOT, 'node_modules', 'tokenizers'))})
    const tokenizer = Tokenizer.fromFile(process.env.FILE)
    tokenizer.disablePadding()
    await time(async (docs) => (await tokenizer.encodeBatch(docs)).map((e) => e.getIds()))`,
}

const PYTHON_CONTENDER = `
import json, os, statistics, time
from tokenizers import Tokenizer
sets = json.load(open(os.environ["DOCS"], encoding="utf-8"))
tokenizer = Tokenizer.from_file(os.environ["FILE"])
tokenizer.no_padding()
first = tokenizer.encode_batch(sets[0], add_special_tokens=True)
seconds = []
for docs in sets[1:]:
    started = time.perf_counter()
    tokenizer.encode_batch(docs, add_special_tokens=True)
    seconds.append(time.perf_counter() - started)
count, total = 0, 0
for encoding in first:
    for i in encoding.ids:
        count += 1
        total = (total * 31 + i) % 4294967291
seconds.sort()
print(json.dumps({"seconds": seconds[len(seconds) // 2], "digest": f"{count}:{total}"}))
`

const python = fs.existsSync(PYTHON)
const LIBRARIES = ['batchtok', 'tokenizers (npm)', ...(python ? ['Python tokenizers'] : [])]
const CONTENDERS = LIBRARIES.flatMap((library) => [1, 2].map((threads) => ({ library, threads })))

function sample({ library, threads }, file) {
  const env = { ...process.env, FILE: file, DOCS, THREADS: String(threads), RAYON_NUM_THREADS: String(threads) }
  const out =
    library === 'Python tokenizers'
      ? execFileSync(PYTHON, ['-c', PYTHON_CONTENDER], { encoding: 'utf8', env })
      : execFileSync(process.execPath, ['-e', `(async () => { ${NODE_COMMON}\n${NODE_CONTENDERS[library]} })()`], {
          encoding: 'utf8',
          env,
          maxBuffer: 1 << 26,
        })
  return JSON.parse(out.trim().split('\n').pop())
}

const loadBefore = os.loadavg()
console.error(`${RUNS + 1} batches of ${sets[1].length} documents, ${MIB.toFixed(2)} MiB; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`)
const rows = []
for (const { name, file } of FILES) {
  const rates = CONTENDERS.map(() => [])
  const notes = CONTENDERS.map(() => null)
  let reference = null
  const order = shuffledOrders(CONTENDERS.length, 11)
  for (let round = 0; round < ROUNDS; round++) {
    for (const index of order()) {
      try {
        const { seconds, digest } = sample(CONTENDERS[index], file)
        if (CONTENDERS[index].library === 'batchtok') reference ??= digest
        if (reference !== null && digest !== reference) notes[index] = 'ids differ'
        rates[index].push(MIB / seconds)
      } catch (e) {
        notes[index] = `fails: ${String(e.message).split('\n').find((l) => /Error/.test(l)) ?? 'error'}`
      }
    }
  }
  const cell = (i) => notes[i] ?? (rates[i].length ? median(rates[i]).toFixed(1) : '')
  const rate = (library, threads) => {
    const i = CONTENDERS.findIndex((c) => c.library === library && c.threads === threads)
    return i >= 0 && !notes[i] && rates[i].length ? median(rates[i]) : null
  }
  const ratio = (threads) => {
    const ours = rate('batchtok', threads)
    const theirs = rate('Python tokenizers', threads)
    return ours && theirs ? `${(ours / theirs).toFixed(0)}x` : ''
  }
  const efficiency = (library) => {
    const one = rate(library, 1)
    const two = rate(library, 2)
    return one && two ? (two / (2 * one)).toFixed(2) : ''
  }
  rows.push(
    `| ${name} | ${CONTENDERS.map((_, i) => cell(i)).join(' | ')} | ${ratio(1)} | ${ratio(2)} | ${LIBRARIES.map(efficiency).join(' | ')} |`,
  )
  console.log(rows.at(-1))
}
const loadAfter = os.loadavg()

const machine = describeMachine()
const header = CONTENDERS.map(({ library, threads }) => `${library} ${threads}`)
const report = `# Throughput per tokenizer.json, at 1 and 2 threads${TYPOGRAPHIC ? ', on text with typographic quotes' : ''}

Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.os}, Node ${machine.node}; load average
(1, 5, 15 min) ${loadBefore.map((l) => l.toFixed(2)).join(', ')} before the run and
${loadAfter.map((l) => l.toFixed(2)).join(', ')} after. tokenizers (npm) ${packageVersion('tokenizers')}${python ? ', Python tokenizers from scripts/.venv' : ''}.
Command: \`node benchmark/files.mjs --rounds ${ROUNDS} --runs ${RUNS} --bytes ${BYTES}${ONLY ? ` --only ${ONLY.join(',')}` : ''}${TYPOGRAPHIC ? ' --typographic' : ''}\`.

Input: big.txt${TYPOGRAPHIC ? ' with typographic quotes (’ for each apostrophe, “ and ” for double quotes)' : ''} in ${RUNS + 1} batches of ${sets[1].length} documents (${MIB.toFixed(2)} MiB each), with the
template tokens. Each cell is the median over ${ROUNDS} rounds of a fresh process's median time of
${RUNS} encodes, in MiB/s; a process warms up on the first batch and times one encode of each other
batch, text it has not encoded before. The six contenders run in a new order each round, and every contender's ids equal batchtok's (a cell says
where they do not). "x Python" is batchtok's rate over Python's at the same thread count;
efficiency is the 2-thread rate over twice the 1-thread rate.

| file | ${header.join(' | ')} | x Python, 1 | x Python, 2 | ${LIBRARIES.map((l) => `efficiency, ${l}`).join(' | ')} |
| --- | ${header.map(() => '---').join(' | ')} | --- | --- | ${LIBRARIES.map(() => '---').join(' | ')} |
${rows.join('\n')}
`
console.log(report)
fs.rmSync(work, { recursive: true, force: true })
if (WRITE) fs.writeFileSync(path.join(ROOT, 'benchmark', 'results', TYPOGRAPHIC ? 'files-typographic.md' : 'files.md'), report)
