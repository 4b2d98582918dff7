// Load time of a Hugging Face tokenizer.json: batchtok's `Tokenizer.fromFile` against Python
// `tokenizers`' `Tokenizer.from_file`, the `tokenizers` npm binding's `Tokenizer.fromFile`,
// `@huggingface/tokenizers` (read, `JSON.parse`, `new Tokenizer`) and transformers.js
// (`@huggingface/transformers`: read, `JSON.parse`, `new PreTrainedTokenizer`).
//
// batchtok is ready to encode once one engine is built: the stable engine, while the release
// candidate is built on a thread of its own (`src/engine/loading.rs`). The column `batchtok, whenReady`
// times the same load on to the end of that build (`await tokenizer.whenReady()`), when the
// fastest engine encodes.
//
// What a server pays at a cold start: each sample is a fresh process that imports its library
// first (not timed), then times one load from the file's path to a tokenizer ready to encode, then
// encodes a check text with padding off (batchtok never pads). Every contender's ids for that text
// must equal batchtok's, or the file's row says so instead of a time. Rounds interleave the contenders in a new order each round; the
// table gives the median and the fastest sample.
//
// Files: the three test fixtures and the real model files `node scripts/real-tokenizers.js`
// fetches (fetched here if absent). Python `tokenizers` runs from the throwaway virtualenv
// `scripts/gen-fixtures.sh` makes (`scripts/.venv`); without it, its column is skipped with a
// message.
//
//   node benchmark/load.mjs [--rounds 7] [--baseline DIR] [--memory] [--write]
//
// `--baseline DIR` adds another build of batchtok (a folder holding its `index.js` and `.node`, such
// as a copy of an earlier build) as a contender, to measure a change. `--write` writes the table to
// benchmark/results/load.md.
//
// `--memory` measures resident memory instead, on the contenders whose load has ended when they
// return (batchtok after `whenReady()`): each fresh process reads its VmRSS after importing its
// library, and again after the load and the check text, with its VmHWM (the process's peak), from
// /proc/self/status (Linux only). With `--write` it writes its own section of load.md.

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describeMachine, packageVersion } from './machine.mjs'
import { TRANSFORMERS_ENTRY, ensureSidePeers, sidePeerVersion } from './fresh-contenders.mjs'
import { writeSection } from './results-file.mjs'
import { median, shuffledOrders } from './stats.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const PYTHON = path.join(ROOT, 'scripts', '.venv', 'bin', 'python')
const CHECK_TEXT = 'Hello, world! It is 2024: naïve café, 日本語のテキスト, and 12345 tokens.'

const args = process.argv.slice(2)
const ROUNDS = Number(args[args.indexOf('--rounds') + 1] || 0) || 7
const WRITE = args.includes('--write')
const MEMORY = args.includes('--memory')
const BASELINE = args.includes('--baseline') ? path.resolve(args[args.indexOf('--baseline') + 1]) : null

const { ensureRealTokenizers } = require('../scripts/real-tokenizers.js')
const FILES = [
  ...['bert', 'gpt2', 'unigram'].map((name) => ({
    name: `${name} (fixture)`,
    file: path.join(ROOT, '__test__', 'fixtures', 'tokenizers', `${name}.json`),
  })),
  ...Object.entries(ensureRealTokenizers()).map(([name, file]) => ({ name, file })),
]

/** A contender: how a child process loads `file` and prints `{ms, ids}`. */
const NODE_CONTENDERS = {
  batchtok: `
    const { Tokenizer } = require(${JSON.stringify(ROOT)})
    const started = process.hrtime.bigint()
    const tokenizer = Tokenizer.fromFile(FILE)
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    const ids = Array.from(tokenizer.encode(TEXT, { addSpecialTokens: false }))`,
  'tokenizers (npm)': `
    const { Tokenizer } = require(${JSON.stringify(path.join(ROOT, 'node_modules', 'tokenizers'))})
    const started = process.hrtime.bigint()
    const tokenizer = Tokenizer.fromFile(FILE)
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    tokenizer.disablePadding()
    const ids = await tokenizer.encode(TEXT, null, { addSpecialTokens: false }).then((e) => e.getIds())`,
  '@huggingface/tokenizers': `
    const { Tokenizer } = require(${JSON.stringify(path.join(ROOT, 'node_modules', '@huggingface', 'tokenizers'))})
    const fs = require('node:fs')
    const started = process.hrtime.bigint()
    const tokenizer = new Tokenizer(JSON.parse(fs.readFileSync(FILE, 'utf8')), {})
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    const ids = tokenizer.encode(TEXT, { add_special_tokens: false }).ids`,
  'transformers.js': `
    const { PreTrainedTokenizer } = require(${JSON.stringify(TRANSFORMERS_ENTRY)})
    const fs = require('node:fs')
    const started = process.hrtime.bigint()
    const tokenizer = new PreTrainedTokenizer(JSON.parse(fs.readFileSync(FILE, 'utf8')), {})
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    const ids = tokenizer.encode(TEXT, { add_special_tokens: false })`,
}

NODE_CONTENDERS['batchtok, whenReady'] = NODE_CONTENDERS.batchtok.replace(
  'const tokenizer = Tokenizer.fromFile(FILE)',
  'const tokenizer = Tokenizer.fromFile(FILE); await tokenizer.whenReady()',
)

if (BASELINE) {
  for (const name of ['batchtok', 'batchtok, whenReady']) {
    NODE_CONTENDERS[name.replace('batchtok', 'batchtok baseline')] = NODE_CONTENDERS[name].replace(
      JSON.stringify(ROOT),
      JSON.stringify(BASELINE),
    )
  }
}

/** Contenders whose load has ended when they return: the ones `--memory` measures. */
const loadedWhenReturned = (name) => name !== 'batchtok' && name !== 'batchtok baseline'

/** A child's VmRSS and VmHWM in bytes, from /proc/self/status. */
const NODE_MEMORY = `(() => {
  const status = require('node:fs').readFileSync('/proc/self/status', 'utf8').split('\\n')
  const kib = (key) => parseInt(status.find((line) => line.startsWith(key + ':')).slice(key.length + 1), 10)
  return { rss: kib('VmRSS') * 1024, peak: kib('VmHWM') * 1024 }
})()`

const PYTHON_CONTENDER = `
import json, sys, time
from tokenizers import Tokenizer
def memory():
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    kib = lambda key: int(status[key].split()[0])
    return {"rss": kib("VmRSS") * 1024, "peak": kib("VmHWM") * 1024}
before = memory()["rss"]
started = time.perf_counter()
tokenizer = Tokenizer.from_file(sys.argv[1])
ms = (time.perf_counter() - started) * 1000
tokenizer.no_padding()
ids = tokenizer.encode(sys.argv[2], add_special_tokens=False).ids
print(json.dumps({"ms": ms, "ids": ids, "rssBefore": before, **memory()}))
`

function pythonVersion() {
  if (!fs.existsSync(PYTHON)) return null
  try {
    return execFileSync(PYTHON, ['-c', 'import tokenizers; print(tokenizers.__version__)'], { encoding: 'utf8' }).trim()
  } catch {
    return null
  }
}

/** One sample: a fresh process loads `file` once. */
function sample(contender, file) {
  const out =
    contender === 'Python tokenizers'
      ? execFileSync(PYTHON, ['-c', PYTHON_CONTENDER, file, CHECK_TEXT], { encoding: 'utf8' })
      : execFileSync(
          process.execPath,
          [
            '-e',
            `(async () => { const FILE = ${JSON.stringify(file)}; const TEXT = ${JSON.stringify(CHECK_TEXT)};
             const memory = () => ${NODE_MEMORY}
             const rssBefore = memory().rss
             ${NODE_CONTENDERS[contender]}
             console.log(JSON.stringify({ ms, ids: Array.from(ids), rssBefore, ...memory() })) })()`,
          ],
          { encoding: 'utf8', maxBuffer: 1 << 26 },
        )
  return JSON.parse(out.trim().split('\n').pop())
}

ensureSidePeers()
const python = pythonVersion()
// In --memory, batchtok's columns first: the others' ids are checked against the first column's.
const contenders = MEMORY
  ? Object.keys(NODE_CONTENDERS)
      .filter(loadedWhenReturned)
      .sort((a, b) => Number(b.startsWith('batchtok')) - Number(a.startsWith('batchtok')))
  : Object.keys(NODE_CONTENDERS)
if (python) contenders.push('Python tokenizers')
else console.error(`Python tokenizers: skipped (no ${path.relative(ROOT, PYTHON)}; scripts/gen-fixtures.sh makes it)`)

const loadBefore = os.loadavg()
const rows = []
for (const { name, file } of FILES) {
  const samples = Object.fromEntries(contenders.map((c) => [c, []]))
  const differs = {}
  let reference = null
  const order = shuffledOrders(contenders.length, 7)
  for (let round = 0; round < ROUNDS; round++) {
    for (const index of order()) {
      const contender = contenders[index]
      let result
      try {
        result = sample(contender, file)
      } catch (e) {
        differs[contender] = `fails: ${String(e.message).split('\n').find((l) => /Error/.test(l)) ?? 'error'}`
        continue
      }
      if (contender === contenders[0]) reference ??= result.ids
      samples[contender].push(MEMORY ? result : result.ms)
      ;(samples[`${contender} ids`] ??= []).push(result.ids)
    }
  }
  for (const contender of contenders) {
    const seen = samples[`${contender} ids`] ?? []
    if (seen.some((ids) => JSON.stringify(ids) !== JSON.stringify(reference))) {
      differs[contender] ??= 'ids differ from batchtok'
    }
  }
  const size = (fs.statSync(file).size / 2 ** 20).toFixed(1)
  const mib = (bytes) => (bytes / 2 ** 20).toFixed(0)
  const cell = (values) =>
    MEMORY
      ? `${mib(median(values.map((m) => m.rss - m.rssBefore)))} (${mib(median(values.map((m) => m.peak - m.rssBefore)))})`
      : `${median(values).toFixed(0)} (${Math.min(...values).toFixed(0)})`
  const cells = contenders.map((c) => differs[c] ?? cell(samples[c]))
  rows.push(`| ${name} | ${size} | ${cells.join(' | ')} |`)
  console.log(rows.at(-1))
}

const machine = describeMachine()
const versions = [
  `tokenizers (npm) ${packageVersion('tokenizers')}`,
  `@huggingface/tokenizers ${packageVersion('@huggingface/tokenizers')}`,
  `transformers.js ${sidePeerVersion('@huggingface/transformers')}`,
  python ? `Python tokenizers ${python}` : 'Python tokenizers not installed',
].join(', ')
if (MEMORY) {
  const section = `Resident memory of a loaded tokenizer.json (--memory)`
  const lines = [
    `### ${section}`,
    '',
    `Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.os}, Node ${machine.node}. ${versions}.`,
    `Command: \`node benchmark/load.mjs --memory --rounds ${ROUNDS}${BASELINE ? ' --baseline DIR' : ''}\`. Each cell is, in MiB over the`,
    `process with its library imported, the median over ${ROUNDS} fresh processes of its resident memory once the`,
    `tokenizer is loaded and has encoded a check text (batchtok: after \`whenReady()\`), and in brackets`,
    `the median of its peak (VmHWM) over the same base; every contender's ids for the check text equal`,
    `the first column's (a cell says where they do not).`,
    '',
    `| file | MiB | ${contenders.join(' | ')} |`,
    `| --- | --- | ${contenders.map(() => '---').join(' | ')} |`,
    ...rows,
  ]
  console.log(lines.join('\n'))
  if (WRITE) writeSection(path.join(ROOT, 'benchmark', 'results', 'load.md'), section, lines)
  process.exit(0)
}

const report = `# Load time of a tokenizer.json

Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.os}, Node ${machine.node}; load average (1, 5, 15 min)
${loadBefore.map((l) => l.toFixed(2)).join(', ')} before the run, ${os.loadavg().map((l) => l.toFixed(2)).join(', ')} after. ${versions}.
Command: \`node benchmark/load.mjs --rounds ${ROUNDS}${BASELINE ? ' --baseline DIR' : ''}\`. Each cell is the median load time in ms of
${ROUNDS} fresh processes (the fastest in brackets), from the file's path to a tokenizer ready to
encode; contenders interleave in a new order each round, and every contender's ids for a check text
equal batchtok's (a cell says where they do not).

| file | MiB | ${contenders.join(' | ')} |
| --- | --- | ${contenders.map(() => '---').join(' | ')} |
${rows.join('\n')}
`
console.log(report)
if (WRITE) fs.writeFileSync(path.join(ROOT, 'benchmark', 'results', 'load.md'), report)
