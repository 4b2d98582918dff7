// A file's lines to ids, the two ways a Node program can do it, timed side by side in one run:
//   - read the file as a string, split it into lines, `encodeBatch(lines)`;
//   - read the file as bytes, find the line offsets, `encodeUtf8Batch(bytes, offsets)`, which
//     makes no string per line and reads no string on the main thread.
// Both give the same ids (checked before timing). Each round times both, alternating which goes
// first, each step after a full collection (with `node --expose-gc`) so that neither pays for
// the other's garbage; medians are reported.
//
//   node --expose-gc benchmark/lines-to-ids.mjs [--rounds N] [--quick]
// writes benchmark/results/lines-to-ids.md (not with --quick).

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { lineOffsets, msSince, sameIds } from './batch-io.mjs'
import { describeMachine } from './machine.mjs'
import { median, MiB } from './stats.mjs'

const require = createRequire(import.meta.url)
const HERE = path.dirname(fileURLToPath(import.meta.url))
const { Tokenizer, Scheduler } = require('../index.js')
const corpus = require('../scripts/corpus.js')

const args = process.argv.slice(2)
const QUICK = args.includes('--quick')
const roundsFlag = args.indexOf('--rounds')
const ROUNDS = roundsFlag >= 0 ? Number(args[roundsFlag + 1]) : QUICK ? 3 : 41
const THREAD_COUNTS = [1, 2]
const ENCODING = 'o200k_base'

/** A full collection before each step (run with `node --expose-gc`; without it, nothing). */
const collectGarbage = globalThis.gc ?? (() => {})

/** Both ways of turning `file`'s lines into ids on `threads` threads, interleaved over ROUNDS. */
async function linesToIds(tokenizer, file, threads) {
  const options = { scheduler: new Scheduler({ threads, policy: 'chunked' }) }
  const viaStrings = []
  const viaBytes = []
  const steps = [
    async () => {
      const t = process.hrtime.bigint()
      const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/)
      await tokenizer.encodeBatch(lines, options)
      viaStrings.push(msSince(t))
    },
    async () => {
      const t = process.hrtime.bigint()
      const bytes = fs.readFileSync(file)
      await tokenizer.encodeUtf8Batch(bytes, lineOffsets(bytes), options)
      viaBytes.push(msSince(t))
    },
  ]
  const bytes = fs.readFileSync(file)
  const lines = bytes.toString('utf8').split(/(?<=\n)/)
  if (!sameIds(tokenizer.encodeBatchSync(lines, options), tokenizer.encodeUtf8BatchSync(bytes, lineOffsets(bytes), options))) {
    throw new Error('the two ways of reading the file disagree; not timing a wrong result')
  }
  // One untimed warm-up call of each.
  for (const step of steps) await step()
  viaStrings.length = viaBytes.length = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < steps.length; i++) {
      collectGarbage()
      await steps[(i + round) % steps.length]()
    }
  }
  return { lines: lines.length, mib: bytes.length / MiB, viaStrings: median(viaStrings), viaBytes: median(viaBytes) }
}

const fmt = (x) => x.toFixed(2)

async function main() {
  const machine = describeMachine()
  const lines = []
  const out = (line = '') => {
    console.log(line)
    lines.push(line)
  }
  out('# A file\'s lines to ids: strings or bytes')
  out()
  out(`Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}.`)
  out(`Command: \`node --expose-gc benchmark/lines-to-ids.mjs --rounds ${ROUNDS}\`. Medians of ${ROUNDS} rounds after one warm-up call of each way, the two alternating which goes first, each ${globalThis.gc ? 'after a full collection' : 'without a collection before it (run without --expose-gc)'}; times in ms for the whole file (read, split, encode; ${ENCODING}, big.txt, a batch of one text per line, newline kept).`)
  out()
  out('| threads | lines | MiB | readFile + split + encodeBatch | readFile + line offsets + encodeUtf8Batch | gain |')
  out('|---:|---:|---:|---:|---:|---:|')
  const tokenizer = Tokenizer.fromEncoding(ENCODING)
  const file = corpus.ensureBigTxt()
  for (const threads of THREAD_COUNTS) {
    const r = await linesToIds(tokenizer, file, threads)
    out(`| ${threads} | ${r.lines} | ${fmt(r.mib)} | ${fmt(r.viaStrings)} | ${fmt(r.viaBytes)} | ${fmt(r.viaStrings / r.viaBytes)}x |`)
  }
  if (!QUICK) {
    const target = path.join(HERE, 'results', 'lines-to-ids.md')
    fs.writeFileSync(target, lines.join('\n') + '\n')
    console.log(`\nwrote ${path.relative(process.cwd(), target)}`)
  }
}

await main()
