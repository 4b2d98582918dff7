// End-to-end `batchtok encode` against `encodeUtf8Batch` on the same bytes held in memory.
//
//   node benchmark/cli.mjs [--mib 300] [--rounds 5] [--threads 2] [--baseline-cli DIR/cli/batchtok.js]
//                          [--tokenizer llama3]
//                          [--wait-quiet] [--only lines|jsonl|parquet] [--out benchmark/results/cli.md]
//
// Inputs are built in a temporary folder (never committed) from the four corpora of
// scripts/corpus.js (prose, code, multilingual, chat), their items taken in turn so that the
// kinds mix, repeated to size: `lines.txt`, every line of every item a document (text input),
// `docs.jsonl`, every item one record `{"id", "text", "corpus"}` (JSONL input, `--field text`),
// and `docs.parquet`, every item's text in one row group (benchmark/cli-inputs.mjs).
// Each round runs, in a shuffled order, the CLI as a child process (o200k_base, or with
// `--tokenizer` a real tokenizer.json of `node scripts/real-tokenizers.js`; Megatron output,
// the given threads), a baseline CLI where one is given (another checkout's cli/, e.g. main's, to
// compare builds side by side), and two in-memory calls of encodeUtf8Batch over the documents'
// bytes with the same threads: one in this process, on an engine that has encoded these very
// documents before (warm: its word caches hold their words, its memory is already mapped), and
// one in a fresh child process, the first call after `whenReady()` (the text met for the first
// time, as the CLI meets it; the load and the build are not timed). Before timing, each CLI's ids
// are checked equal to the in-memory ids. Reported: median seconds and MiB/s of input, each CLI's
// ratio to both in-memory calls (the ratio of the medians, and the median of each round's ratio),
// its start, and its peak RSS. With `--wait-quiet`, each run waits until the machine's cores are
// at least 90% idle over 2 s (other processes' builds would take the cores the CLI leaves idle
// and slow the in-memory call more).

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { cliInputs } from './cli-inputs.mjs'
import { describeMachine } from './machine.mjs'
import { median, MiB, shuffledOrders } from './stats.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const CLI = path.join(ROOT, 'cli', 'batchtok.js')
const { Tokenizer, Scheduler } = require('../index.js')

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`)
  return at === -1 ? fallback : args[at + 1]
}
const targetMiB = Number(option('mib', 300))
const rounds = Number(option('rounds', 5))
const threads = Number(option('threads', 2))
const baselineCli = option('baseline-cli', null)
const outFile = option('out', null)
const waitQuiet = args.includes('--wait-quiet')
const only = option('only', null)
const freshChild = option('fresh-in-memory', null)
const tokenizerName = option('tokenizer', null)
const tokenizerFile = tokenizerName === null ? null : require('../scripts/real-tokenizers.js').ensureRealTokenizers()[tokenizerName]
if (tokenizerName !== null && !tokenizerFile) throw new Error(`--tokenizer ${tokenizerName} is not a file of scripts/real-tokenizers.js`)
/** The CLI's option naming the tokenizer, and the same tokenizer loaded here. */
const tokenizerArgs = tokenizerFile === null ? ['--encoding', 'o200k_base'] : ['--tokenizer', tokenizerFile]
const loadTokenizer = () => (tokenizerFile === null ? Tokenizer.fromEncoding('o200k_base') : Tokenizer.fromFile(tokenizerFile))

/** The machine's busy and idle CPU ticks since boot, from /proc/stat. */
function machineTicks() {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number)
  const total = fields.reduce((sum, ticks) => sum + ticks, 0)
  return { total, idle: fields[3] + fields[4] }
}

/** Waits (up to 10 minutes) until the cores are at least 90% idle over 2 s. */
async function untilQuiet() {
  for (let tries = 0; tries < 300; tries++) {
    const before = machineTicks()
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const after = machineTicks()
    if (after.idle - before.idle >= 0.9 * (after.total - before.total)) return
  }
}

/** The documents of each input, as the CLI reads them (its own code left out), as one buffer of
 * UTF-8 and its offsets. Read as bytes a line at a time: a string holds at most 512 Mi code
 * units, less than the largest inputs. */
function inMemoryDocuments(kind, file) {
  const data = fs.readFileSync(file)
  const documents = []
  for (let start = 0; start < data.length; ) {
    const newline = data.indexOf(0x0a, start)
    const next = newline === -1 ? data.length : newline + 1
    let end = newline === -1 ? data.length : newline
    if (kind === 'lines') {
      if (end > start && data[end - 1] === 0x0d) end -= 1
      documents.push(data.subarray(start, end))
    } else {
      const line = data.toString('utf8', start, end)
      if (line.trim() !== '') documents.push(Buffer.from(JSON.parse(line).text))
    }
    start = next
  }
  return joined(documents)
}

/** `documents` (Buffers) as one buffer and the offsets between them. */
function joined(documents) {
  const offsets = new Uint32Array(documents.length + 1)
  documents.forEach((document, i) => (offsets[i + 1] = offsets[i] + document.length))
  return { bytes: Buffer.concat(documents), offsets }
}

/** Runs the CLI at `cliPath` once; returns its summary. The previous run's output is deleted
 * first, outside the timing: `--force` would replace it, and freeing a few hundred MB of the old
 * file at the rename is the file system's work, not the encoding's. */
function runCli(cliPath, work, input, extra = []) {
  for (const file of ['out.bin', 'out.idx']) fs.rmSync(path.join(work, file), { force: true })
  const result = spawnSync(
    process.execPath,
    [cliPath, 'encode', input.file, ...input.args, ...tokenizerArgs, '--threads', String(threads), '-o', path.join(work, 'out'), '--force', '-q', '--summary', ...extra],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  )
  if (result.status !== 0) throw new Error(`${cliPath} failed: ${result.stderr}`)
  return JSON.parse(result.stdout.trim())
}

/** Whether two Uint32Arrays hold the same ids. */
function sameIds(a, b) {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
}

/** Writes `memory` where a fresh child process reads it (`freshInMemory`). */
function writeMemory(work, memory) {
  const prefix = path.join(work, 'memory')
  fs.writeFileSync(`${prefix}.bytes`, memory.bytes)
  fs.writeFileSync(`${prefix}.offsets`, memory.offsets)
  return prefix
}

/** One encodeUtf8Batch call in a fresh child process (`--fresh-in-memory PREFIX`); returns its
 * seconds. */
function freshInMemory(prefix) {
  const result = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--fresh-in-memory', prefix, '--threads', String(threads), ...(tokenizerName === null ? [] : ['--tokenizer', tokenizerName])], {
    encoding: 'utf8',
  })
  if (result.status !== 0) throw new Error(`the fresh in-memory call failed: ${result.stderr}`)
  return JSON.parse(result.stdout.trim()).seconds
}

if (freshChild !== null) {
  // The child: the engine built, the pool's threads started on other text, then the one timed call.
  const bytes = fs.readFileSync(`${freshChild}.bytes`)
  const raw = fs.readFileSync(`${freshChild}.offsets`)
  const offsets = new Uint32Array(raw.buffer, raw.byteOffset, raw.length / 4)
  const tokenizer = loadTokenizer()
  await tokenizer.whenReady()
  const scheduler = new Scheduler({ threads })
  await tokenizer.encodeBatch(['Hello, world!', 'Warm-up text.'], { scheduler })
  const started = performance.now()
  await tokenizer.encodeUtf8Batch(bytes, offsets, { scheduler })
  console.log(JSON.stringify({ seconds: (performance.now() - started) / 1000 }))
  process.exit(0)
}

const clis = [{ key: 'cli', name: 'CLI', path: CLI }]
if (baselineCli) clis.push({ key: 'baseline', name: 'baseline CLI', path: path.resolve(baselineCli) })

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-bench-cli-'))
try {
  const { inputs, write, parquetTexts } = cliInputs(work)
  const tokenizer = loadTokenizer()
  await tokenizer.whenReady()
  const scheduler = new Scheduler({ threads })
  const rows = []
  const loads = []
  for (const input of inputs) {
    if (only && input.kind !== only) continue
    const size = await write(input, targetMiB * MiB)
    const memory = input.kind === 'parquet' ? joined(parquetTexts().map((text) => Buffer.from(text))) : inMemoryDocuments(input.kind, input.file)
    const documents = memory.offsets.length - 1
    const memoryPrefix = writeMemory(work, memory)
    // Warm the engine, and check each CLI's ids against the in-memory ids before timing.
    const reference = await tokenizer.encodeUtf8Batch(memory.bytes, memory.offsets, { scheduler })
    for (const cli of clis) {
      runCli(cli.path, work, input, ['--output-format', 'flat'])
      const flat = fs.readFileSync(path.join(work, 'out.bin'))
      if (!sameIds(new Uint32Array(flat.buffer, flat.byteOffset, flat.length / 4), reference.ids)) {
        throw new Error(`${input.name}: ${cli.name}'s ids differ from encodeUtf8Batch's`)
      }
    }
    const contenders = [...clis.map((cli) => cli.key), 'memory', 'fresh']
    const samples = Object.fromEntries(contenders.map((key) => [key, { seconds: [], startup: [], rss: [] }]))
    const nextOrder = shuffledOrders(contenders.length, 20)
    loads.push(os.loadavg()[0])
    for (let round = 0; round < rounds; round++) {
      for (const index of nextOrder()) {
        const key = contenders[index]
        if (waitQuiet) await untilQuiet()
        if (key === 'memory') {
          const started = performance.now()
          await tokenizer.encodeUtf8Batch(memory.bytes, memory.offsets, { scheduler })
          samples.memory.seconds.push((performance.now() - started) / 1000)
        } else if (key === 'fresh') {
          samples.fresh.seconds.push(freshInMemory(memoryPrefix))
        } else {
          const summary = runCli(clis.find((cli) => cli.key === key).path, work, input)
          samples[key].seconds.push(summary.seconds)
          samples[key].startup.push(summary.startupSeconds)
          samples[key].rss.push(summary.peakRssMiB)
        }
      }
    }
    loads.push(os.loadavg()[0])
    for (const cli of clis) {
      const s = samples[cli.key]
      // The machine's speed drifts between rounds; a round's runs are seconds apart.
      const pairedRatio = (key) => median(s.seconds.map((seconds, round) => samples[key].seconds[round] / seconds))
      rows.push({
        input: input.name,
        cli: cli.name,
        mib: size / MiB,
        documents,
        seconds: median(s.seconds),
        startup: median(s.startup),
        warm: median(samples.memory.seconds),
        warmRatio: pairedRatio('memory'),
        fresh: median(samples.fresh.seconds),
        freshRatio: pairedRatio('fresh'),
        rss: Math.max(...s.rss),
      })
    }
  }
  const machine = describeMachine()
  const command = `node benchmark/cli.mjs --mib ${targetMiB} --rounds ${rounds} --threads ${threads}${baselineCli ? ' --baseline-cli BASE/cli/batchtok.js' : ''}${waitQuiet ? ' --wait-quiet' : ''}${only ? ` --only ${only}` : ''}${tokenizerName === null ? '' : ` --tokenizer ${tokenizerName}`}`
  const lines = [
    '# `batchtok encode` end to end vs `encodeUtf8Batch` in memory',
    '',
    `Command: \`${command}\``,
    '',
    `Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}. Medians of ${rounds} rounds in shuffled order${waitQuiet ? ', each run started on a quiet machine' : ''}; 1-minute load average ${loads.map((load) => load.toFixed(1)).join(', ')} (before and after each input's rounds).`,
    '',
    `${tokenizerName === null ? 'o200k_base' : `${tokenizerName}'s tokenizer.json`}, ${threads} threads. Input: the four corpora (prose, code, multilingual, chat; scripts/corpus.js), their items in turn, repeated to size; text has every line of every item as a document, JSONL every item as a record \`{"id", "text", "corpus"}\`, Parquet every item's text in one row group (snappy pages of plain values). CLI: a child process from start to exit (loading, encoding on one thread with the first engine while the full one is built, then on every thread, reading, writing the Megatron .bin/.idx, fsync); the previous run's output is deleted before each run, untimed; "start s" is the time before its first batch is handed over. In memory, one \`encodeUtf8Batch\` call over the same documents' bytes: *warm*, in the benchmark's process, on an engine that has encoded these documents before; *fresh*, the first call of a new process after \`whenReady()\`, which meets the text for the first time as the CLI does (its load and build untimed, the CLI's timed). Each CLI's ids are checked equal to the in-memory ids first. "Warm / run" and "fresh / run" are the medians of each round's ratio of that in-memory call to the CLI run, the two seconds apart, which the machine's drift between rounds moves less than a ratio of medians.`,
    '',
    '| input | MiB | documents | run | s | MiB/s | start s | in memory, warm s | warm / run | in memory, fresh s | fresh / run | peak RSS MiB |',
    '| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.input} | ${r.mib.toFixed(0)} | ${r.documents} | ${r.cli} | ${r.seconds.toFixed(2)} | ${(r.mib / r.seconds).toFixed(1)} | ${r.startup.toFixed(2)} | ${r.warm.toFixed(2)} | ${r.warmRatio.toFixed(2)}x | ${r.fresh.toFixed(2)} | ${r.freshRatio.toFixed(2)}x | ${r.rss} |`,
    ),
    '',
  ]
  const report = lines.join('\n')
  console.log(report)
  if (outFile) fs.writeFileSync(outFile, report)
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
