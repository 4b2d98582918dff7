// End-to-end `batchtok encode` against `encodeUtf8Batch` on the same bytes held in memory.
//
//   node benchmark/cli.mjs [--mib 300] [--rounds 3] [--threads 2] [--out benchmark/results/cli.md]
//
// Inputs are built in a temporary folder (never committed) from big.txt (scripts/corpus.js),
// repeated to size: `lines.txt`, one document per line of big.txt (short documents, ~50 bytes:
// the most per-document work), and `docs.jsonl`, big.txt's ~6.5 KB documents as JSONL records.
// Each round runs, in rotated order, the CLI as a child process (o200k_base, Megatron output,
// the given threads) and, in this process, encodeUtf8Batch over the documents' bytes in one call
// on a warm engine with the same threads. Before timing, the CLI's ids are checked equal to the
// in-memory ids. Reported: median seconds and MiB/s of input, the CLI's ratio to in-memory (end
// to end, and from its first batch on), and the CLI's peak RSS.

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { describeMachine } from './machine.mjs'
import { median, MiB } from './stats.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const CLI = path.join(ROOT, 'cli', 'batchtok.js')
const { Tokenizer, Scheduler } = require('../index.js')
const corpus = require('../scripts/corpus.js')

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`)
  return at === -1 ? fallback : args[at + 1]
}
const targetMiB = Number(option('mib', 300))
const rounds = Number(option('rounds', 3))
const threads = Number(option('threads', 2))
const outFile = option('out', null)

/** Writes `piece` repeated until the file reaches `bytes`; returns the file's size. */
function writeRepeated(file, piece, bytes) {
  const fd = fs.openSync(file, 'w')
  let size = 0
  while (size < bytes) size += fs.writeSync(fd, piece)
  fs.closeSync(fd)
  return size
}

/** The documents of each input as one buffer of UTF-8 and its offsets, as the CLI reads them. */
function inMemoryDocuments(kind, file) {
  const bytes = fs.readFileSync(file)
  if (kind === 'lines') {
    // The CLI drops each line's newline; so do these offsets' texts, by moving bytes down.
    const text = bytes.toString('utf8').split('\n')
    if (text.at(-1) === '') text.pop()
    return utf8Of(text)
  }
  const texts = bytes
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line).text)
  return utf8Of(texts)
}

function utf8Of(texts) {
  const buffers = texts.map((text) => Buffer.from(text))
  const offsets = new Uint32Array(buffers.length + 1)
  buffers.forEach((buffer, i) => (offsets[i + 1] = offsets[i] + buffer.length))
  return { bytes: Buffer.concat(buffers), offsets }
}

/** Runs the CLI once; returns its summary. */
function runCli(work, file, extra = []) {
  const result = spawnSync(
    process.execPath,
    [CLI, 'encode', file, '--encoding', 'o200k_base', '--threads', String(threads), '-o', path.join(work, 'out'), '--force', '-q', '--summary', ...extra],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  )
  if (result.status !== 0) throw new Error(`the CLI failed: ${result.stderr}`)
  return JSON.parse(result.stdout.trim())
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-bench-cli-'))
try {
  const big = corpus.bigTxt ? corpus.bigTxt() : fs.readFileSync(path.join(ROOT, '.cache/corpus/big.txt'), 'utf8')
  const jsonl = corpus.bigDocuments().map((text) => JSON.stringify({ text })).join('\n') + '\n'
  const inputs = [
    { kind: 'lines', name: 'big.txt lines (~50 B documents), text', file: path.join(work, 'lines.txt'), piece: big.endsWith('\n') ? big : `${big}\n` },
    { kind: 'jsonl', name: 'big.txt ~6.5 KB documents, JSONL', file: path.join(work, 'docs.jsonl'), piece: jsonl },
  ]
  const tokenizer = Tokenizer.fromEncoding('o200k_base')
  const scheduler = new Scheduler({ threads })
  const rows = []
  for (const input of inputs) {
    const size = writeRepeated(input.file, input.piece, targetMiB * MiB)
    const memory = inMemoryDocuments(input.kind, input.file)
    // Warm the engine, and check the CLI's ids against the in-memory ids before timing.
    const reference = await tokenizer.encodeUtf8Batch(memory.bytes, memory.offsets, { scheduler })
    runCli(work, input.file, ['--output-format', 'flat'])
    const flat = fs.readFileSync(path.join(work, 'out.bin'))
    const cliIds = new Uint32Array(flat.buffer, flat.byteOffset, flat.length / 4)
    if (cliIds.length !== reference.ids.length || !Buffer.from(cliIds.buffer, cliIds.byteOffset, cliIds.byteLength).equals(Buffer.from(reference.ids.buffer, reference.ids.byteOffset, reference.ids.byteLength))) {
      throw new Error(`${input.name}: the CLI's ids differ from encodeUtf8Batch's`)
    }
    const samples = { cli: [], cliEncoding: [], memory: [], rss: [] }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['cli', 'memory'] : ['memory', 'cli']
      for (const contender of order) {
        if (contender === 'cli') {
          const summary = runCli(work, input.file)
          samples.cli.push(summary.seconds)
          samples.cliEncoding.push(summary.seconds - summary.startupSeconds)
          samples.rss.push(summary.peakRssMiB)
        } else {
          const started = performance.now()
          await tokenizer.encodeUtf8Batch(memory.bytes, memory.offsets, { scheduler })
          samples.memory.push((performance.now() - started) / 1000)
        }
      }
    }
    const mib = size / MiB
    const cli = median(samples.cli)
    const cliEncoding = median(samples.cliEncoding)
    const memorySeconds = median(samples.memory)
    rows.push({
      name: input.name,
      mib,
      cli,
      cliEncoding,
      memory: memorySeconds,
      ratio: memorySeconds / cli,
      ratioEncoding: memorySeconds / cliEncoding,
      rss: Math.max(...samples.rss),
    })
  }
  const machine = describeMachine()
  const lines = [
    '# `batchtok encode` end to end vs `encodeUtf8Batch` in memory',
    '',
    `Command: \`node benchmark/cli.mjs --mib ${targetMiB} --rounds ${rounds} --threads ${threads}\``,
    '',
    `Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}. The machine is shared: medians of ${rounds} rotated rounds.`,
    '',
    `o200k_base, ${threads} threads. CLI: a child process from start to exit (reading, batching, encoding, writing the Megatron .bin/.idx, fsync), and from its first batch on (after loading and waiting for the full engine). In memory: one \`encodeUtf8Batch\` call over the same documents' bytes on a warm engine. The CLI's ids are checked equal to the in-memory ids first.`,
    '',
    '| input | MiB | CLI s | CLI MiB/s | CLI from first batch s | in memory s | in memory MiB/s | CLI / in memory | from first batch / in memory | CLI peak RSS MiB |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.mib.toFixed(0)} | ${r.cli.toFixed(2)} | ${(r.mib / r.cli).toFixed(1)} | ${r.cliEncoding.toFixed(2)} | ${r.memory.toFixed(2)} | ${(r.mib / r.memory).toFixed(1)} | ${r.ratio.toFixed(2)}x | ${r.ratioEncoding.toFixed(2)}x | ${r.rss} |`,
    ),
    '',
  ]
  const report = lines.join('\n')
  console.log(report)
  if (outFile) fs.writeFileSync(outFile, report)
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
