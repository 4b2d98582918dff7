// When a bulk job should wait for the tokenizer's fastest engine, by input size.
//
//   node benchmark/engine-wait.mjs [--rounds 3] [--threads 2] [--sizes 1,2,3,4,8,16,32,64]
//                                  [--stream-sizes 1,3,8,32]
//                                  [--tokenizers o200k_base,llama3,qwen3,gemma3,llama2]
//                                  [--out benchmark/results/engine-wait.md]
//
// A tokenizer encodes as soon as it is loaded, on its first engine (an encoding's: tiktoken's BPE
// over the rank table; a tokenizer.json's: the stable `tokenizers` crate), while its fastest one
// is built on a thread of lower priority. From `tokenizer.engineWaitBytes` of text
// (src/engine/engine_wait.rs) a batch call waits for that build; `batchtok encode` leaves a core to
// it from an input that size, and `batchtok/stream` waits for it once it has read half as much
// (stream/engine-wait.js). This benchmark times the ways of a job for each tokenizer and input
// size, forced by benchmark/engine-wait-policy.cjs, each run a child process from start to exit,
// the ways in a new order each round:
// - `batchtok encode` (`--threads`, Megatron output, batch calls of 1 MiB), at `--sizes` (MiB):
//   never waiting, and waiting from the start;
// - `encodeLineStream` over a file stream (the default scheduler, batch calls of 4 MiB), at
//   `--stream-sizes`: never waiting, waiting from the start, and the stream's own way;
// on text input, a document per line, made of the four corpora's items in turn
// (benchmark/cli-inputs.mjs), with o200k_base or a real tokenizer.json of
// `node scripts/real-tokenizers.js`. "Never" is the job's: a batch call of `engineWaitBytes` or
// more still waits inside the addon. Reported: the median seconds of each way, their ratio,
// whether the input reaches the size, and the median peak RSS; every run's token count is
// checked equal. Each part replaces its own section of `--out` (an empty list of sizes skips it).

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { cliInputs } from './cli-inputs.mjs'
import { describeMachine } from './machine.mjs'
import { writeSection } from './results-file.mjs'
import { median, MiB, shuffledOrders } from './stats.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const CLI = path.join(ROOT, 'cli', 'batchtok.js')
const POLICY = path.join(ROOT, 'benchmark', 'engine-wait-policy.cjs')
const { Tokenizer } = require('../index.js')
const { ensureRealTokenizers } = require('../scripts/real-tokenizers.js')

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`)
  return at === -1 ? fallback : args[at + 1]
}
const numbers = (text) => (text === '' ? [] : text.split(',').map(Number))
const rounds = Number(option('rounds', 3))
const threads = Number(option('threads', 2))
const sizes = numbers(option('sizes', '1,2,3,4,8,16,32,64'))
const streamSizes = numbers(option('stream-sizes', '1,3,8,32'))
const tokenizers = option('tokenizers', 'o200k_base,llama3,qwen3,gemma3,llama2').split(',')
const outFile = option('out', null)
/** The ways each kind of run is timed: never waiting, always waiting (from the first byte), and, for
 * the stream, which decides as it goes, batchtok's own thresholds. */
const POLICIES = { cli: ['never', 'always'], stream: ['never', 'always', 'batchtok'] }

const isEncoding = (name) => name.endsWith('_base')
const realFiles = tokenizers.some((name) => !isEncoding(name)) ? ensureRealTokenizers() : {}

/** Where the real tokenizer.json `name` is kept. */
function realFile(name) {
  if (!realFiles[name]) throw new Error(`${name} is neither an encoding nor a file of scripts/real-tokenizers.js`)
  return realFiles[name]
}

const thresholds = new Map()

/** Whether an input of `bytes` reaches the size from which batchtok waits for the engine. */
function batchtokWaits(name, bytes) {
  if (!thresholds.has(name)) {
    const tokenizer = isEncoding(name) ? Tokenizer.fromEncoding(name) : Tokenizer.fromFile(realFile(name))
    thresholds.set(name, tokenizer.engineWaitBytes)
  }
  return bytes >= thresholds.get(name)
}

/** A child that encodes `file` with `encodeLineStream` and prints its tokens and peak RSS. */
const STREAM_CHILD = `
const fs = require('node:fs')
const { Tokenizer } = require(${JSON.stringify(ROOT)})
const { encodeLineStream } = require(${JSON.stringify(path.join(ROOT, 'stream'))})
const [file, encoding, tokenizerFile] = process.argv.slice(1)
;(async () => {
  const tokenizer = encoding ? Tokenizer.fromEncoding(encoding) : Tokenizer.fromFile(tokenizerFile)
  let tokens = 0
  for await (const batch of encodeLineStream(tokenizer, fs.createReadStream(file))) tokens += batch.ids.length
  // VmHWM, not getrusage's maxrss, which keeps the parent's peak across the fork and exec.
  const peakKiB = Number(/^VmHWM:\\s+(\\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1])
  process.stdout.write(JSON.stringify({ tokens, peakRssMiB: Math.round(peakKiB / 1024) }))
})()
`

/** The child's arguments for one run of `what` ('cli' or 'stream'). */
function childArgs(what, name, file, output) {
  if (what === 'stream') return ['--require', POLICY, '-e', STREAM_CHILD, file, isEncoding(name) ? name : '', isEncoding(name) ? '' : realFile(name)]
  const tokenizer = isEncoding(name) ? ['--encoding', name] : ['--tokenizer', realFile(name)]
  return ['--require', POLICY, CLI, 'encode', file, ...tokenizer, '-o', output, '--threads', String(threads), '--force', '-q', '--summary']
}

/** One run: its wall seconds (process start to exit), tokens and peak RSS in MiB. */
function runOnce(what, name, file, policy, output) {
  const started = process.hrtime.bigint()
  const run = spawnSync(process.execPath, childArgs(what, name, file, output), {
    encoding: 'utf8',
    env: { ...process.env, BATCHTOK_BENCH_WAIT: policy },
    maxBuffer: 1 << 26,
  })
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (run.status !== 0) throw new Error(`the ${what} run failed (${policy}, ${name}, ${file}): ${run.stderr}`)
  const result = JSON.parse(run.stdout)
  return { seconds, tokens: result.tokens, peakRssMiB: result.peakRssMiB }
}

/** Both ways on one tokenizer and input, interleaved; the medians. */
function measure(what, name, input, output) {
  const policies = POLICIES[what]
  const samples = Object.fromEntries(policies.map((p) => [p, []]))
  const nextOrder = shuffledOrders(policies.length, input.mib)
  for (let round = 0; round < rounds; round++) {
    for (const index of nextOrder()) samples[policies[index]].push(runOnce(what, name, input.file, policies[index], output))
  }
  const tokens = new Set(policies.flatMap((p) => samples[p].map((s) => s.tokens)))
  if (tokens.size !== 1) throw new Error(`${what} ${name} ${input.file}: the runs gave different token counts (${[...tokens]})`)
  const seconds = Object.fromEntries(policies.map((p) => [p, median(samples[p].map((s) => s.seconds))]))
  const peak = Object.fromEntries(policies.map((p) => [p, median(samples[p].map((s) => s.peakRssMiB))]))
  console.error(`${what} ${name} ${(input.bytes / MiB).toFixed(1)} MiB: ${policies.map((p) => `${p} ${seconds[p].toFixed(2)} s`).join(', ')}`)
  return { name, mib: input.bytes / MiB, seconds, peak, waits: batchtokWaits(name, input.bytes) }
}

/** A results table of `rows`, each timed the ways of `what`. */
function table(what, rows) {
  const policies = POLICIES[what]
  return [
    `| tokenizer | MiB | ${policies.map((p) => `${p} s`).join(' | ')} | never / always | input ≥ threshold | ${policies.map((p) => `peak RSS MiB, ${p}`).join(' | ')} |`,
    `| --- | ---: | ${policies.map(() => '---:').join(' | ')} | ---: | --- | ${policies.map(() => '---:').join(' | ')} |`,
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.mib.toFixed(1)} | ${policies.map((p) => row.seconds[p].toFixed(2)).join(' | ')} | ${(row.seconds.never / row.seconds.always).toFixed(2)}x | ${row.waits ? 'yes' : 'no'} | ${policies.map((p) => row.peak[p]).join(' | ')} |`,
    ),
  ]
}

const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-engine-wait-'))
try {
  // The largest input, and each smaller one its first lines (up to the line end past its size).
  const made = cliInputs(folder)
  const largest = made.inputs.find((each) => each.kind === 'lines')
  await made.write(largest, Math.max(...sizes, ...streamSizes) * MiB)
  const text = fs.readFileSync(largest.file)
  const inputOf = (mib) => {
    const bytes = text.indexOf(0x0a, mib * MiB - 1) + 1
    const file = path.join(folder, `${mib}.txt`)
    if (!fs.existsSync(file)) fs.writeFileSync(file, text.subarray(0, bytes))
    return { mib, bytes, file }
  }
  const output = path.join(folder, 'out')
  const cliRows = []
  const streamRows = []
  for (const name of tokenizers) {
    for (const mib of sizes) cliRows.push(measure('cli', name, inputOf(mib), output))
    for (const mib of streamSizes) streamRows.push(measure('stream', name, inputOf(mib), output))
  }
  const machine = describeMachine()
  const load = os.loadavg().map((value) => value.toFixed(1)).join(', ')
  const about = [
    `Command: \`node benchmark/engine-wait.mjs --rounds ${rounds} --threads ${threads} --sizes ${sizes.join(',') || "''"} --stream-sizes ${streamSizes.join(',') || "''"} --tokenizers ${tokenizers.join(',')}\``,
    '',
    `Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}; load average at the end ${load}. Medians of ${rounds} rounds, the ways in a new order each round; every run's token count equal.`,
    '',
  ]
  const sections = [
    [
      'batchtok encode',
      cliRows,
      `### \`batchtok encode\`, ${threads} threads, Megatron output`,
      `*Never*: encodes on every thread from the start (a batch call of \`engineWaitBytes\` or more, Llama 2's 1 MiB batches here, still waits inside the addon). *Always*: encodes on one thread fewer until the build is done. "Input ≥ threshold": the input reaches \`engineWaitBytes\`, and \`batchtok encode\` waits from the start.`,
    ],
    [
      'encodeLineStream',
      streamRows,
      '### `encodeLineStream` over a file stream, the default scheduler',
      `*Never*: the stream never waits, though a batch call of \`engineWaitBytes\` or more waits inside the addon (the 4 MiB batches of every file here but Gemma 3's, whose size is just over 4 MiB). *Always*: starts its first batch once the build is done. *batchtok*: the stream's own way, which waits before the batch with which the bytes read reach half of \`engineWaitBytes\`. "Input ≥ threshold": the input reaches \`engineWaitBytes\`.`,
    ],
  ]
  for (const [name, rows, heading, legend] of sections) {
    if (rows.length === 0) continue
    const lines = [heading, '', ...about, legend, '', ...table(name === 'batchtok encode' ? 'cli' : 'stream', rows)]
    if (outFile) writeSection(outFile, name, lines)
    else process.stdout.write(`${lines.join('\n')}\n\n`)
  }
} finally {
  fs.rmSync(folder, { recursive: true, force: true })
}
