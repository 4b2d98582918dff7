// The event loop while a large tokenizer.json loads: `Tokenizer.fromFile` (on the main thread)
// against `Tokenizer.load` and `Tokenizer.fromPretrained` (parsed on a libuv thread), and
// `Tokenizer.load` followed by `whenReady()` (the release candidate's build, on a thread of its own).
//
// For each real model file (`node scripts/real-tokenizers.js` fetches them) and each loader, a
// round loads the file once while a 1 ms interval timer notes the gaps between its runs; the
// loaders interleave in a new order each round. The table gives, per loader, the median over
// rounds of the load's wall time, of the gaps' p99 and largest, and of the timer's runs during the
// load. A server's loop stays free when the
// delay stays near the sampling interval whatever the file's size.
//
//   node benchmark/async-load.mjs [--rounds 5] [--only name,name] [--write]
//
// `--write` writes the table to benchmark/results/async-load.md.

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describeMachine } from './machine.mjs'
import { median, shuffledOrders } from './stats.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const { Tokenizer } = require('../index.js')
const { ensureRealTokenizers, configPath } = require('../scripts/real-tokenizers.js')

const args = process.argv.slice(2)
const ROUNDS = Number(args[args.indexOf('--rounds') + 1] || 0) || 5
const WRITE = args.includes('--write')
const ONLY = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null

/** Each model as a folder (its tokenizer.json and tokenizer_config.json) in a temporary place. */
const files = Object.fromEntries(
  Object.entries(ensureRealTokenizers()).filter(([name]) => !ONLY || ONLY.includes(name)),
)
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-async-load-'))
const folders = {}
for (const [name, file] of Object.entries(files)) {
  folders[name] = path.join(work, name)
  fs.mkdirSync(folders[name])
  fs.copyFileSync(file, path.join(folders[name], 'tokenizer.json'))
  fs.copyFileSync(configPath(name), path.join(folders[name], 'tokenizer_config.json'))
}

const LOADERS = {
  'fromFile (sync)': async (name) => Tokenizer.fromFile(files[name]),
  'load (async)': (name) => Tokenizer.load(files[name]),
  'fromPretrained (async)': (name) => Tokenizer.fromPretrained(folders[name]),
  // On to the end of the release candidate's build, which runs on a thread of its own once the
  // stable engine is built.
  'load + whenReady (async)': async (name) => {
    const tokenizer = await Tokenizer.load(files[name])
    await tokenizer.whenReady()
    return tokenizer
  },
}

/** How long the loop is watched after a load ends, so that a blocked loop's delay is recorded. */
const SETTLE_MS = 20

/**
 * One load under observation: its wall time, and the gaps between the runs of a 1 ms interval
 * timer from just before the load until `SETTLE_MS` after it (a loop blocked by the load shows as
 * one gap as long as the load): their p99 and largest, in ms, and how many runs fell in the load.
 */
async function observe(load) {
  const gaps = []
  let last = performance.now()
  let runs = 0
  const timer = setInterval(() => {
    const now = performance.now()
    gaps.push(now - last)
    last = now
    runs++
  }, 1)
  const started = performance.now()
  const tokenizer = await load()
  const wall = performance.now() - started
  const runsDuringLoad = runs
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
  clearInterval(timer)
  // The next load starts once this one's background build is over, so that builds never overlap.
  await tokenizer.whenReady()
  if (tokenizer.vocabSize === 0) throw new Error('empty vocabulary')
  gaps.sort((a, b) => a - b)
  const p99 = gaps[Math.min(gaps.length - 1, Math.floor(gaps.length * 0.99))]
  return { wall, p99, max: gaps[gaps.length - 1], runs: runsDuringLoad }
}

const names = Object.keys(files)
const loadBefore = os.loadavg()
const loaderNames = Object.keys(LOADERS)
const samples = {}
for (const name of names) for (const loader of loaderNames) samples[`${name}/${loader}`] = []
const nextOrder = shuffledOrders(loaderNames.length, 7)
for (let round = 0; round < ROUNDS; round++) {
  for (const name of names) {
    for (const index of nextOrder()) {
      const loader = loaderNames[index]
      samples[`${name}/${loader}`].push(await observe(() => LOADERS[loader](name)))
    }
  }
}
fs.rmSync(work, { recursive: true, force: true })

const machine = describeMachine()
const lines = [
  '# The event loop during a tokenizer load',
  '',
  `Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.os}, Node ${machine.node}; load average`,
  `(1, 5, 15 min) ${loadBefore.map((l) => l.toFixed(2)).join(', ')} before the run and ${os.loadavg().map((l) => l.toFixed(2)).join(', ')} after.`,
  `Command: \`node benchmark/async-load.mjs --rounds ${ROUNDS}${ONLY ? ` --only ${ONLY.join(',')}` : ''}\`. Each cell is the median over ${ROUNDS} rounds`,
  'of: the load in ms; the p99 and largest gap in ms between the runs of a 1 ms interval timer,',
  'from the start of the load to 20 ms after it (a blocked loop is one gap as long as the load);',
  'and how many times the timer ran during the load. Measured while other builds shared the',
  "machine: the times are noisy, the difference between the loaders' gaps is not.",
  '',
  '| file | loader | load ms | gap p99 ms | gap max ms | timer runs |',
  '| --- | --- | --- | --- | --- | --- |',
]
const cell = (values, digits = 0) => median(values).toFixed(digits)
for (const name of names) {
  for (const loader of loaderNames) {
    const s = samples[`${name}/${loader}`]
    lines.push(
      `| ${name} | ${loader} | ${cell(s.map((x) => x.wall))} | ${cell(s.map((x) => x.p99), 1)} | ` +
        `${cell(s.map((x) => x.max), 1)} | ${cell(s.map((x) => x.runs))} |`,
    )
  }
}
const table = lines.join('\n') + '\n'
console.log(table)
if (WRITE) fs.writeFileSync(path.join(ROOT, 'benchmark', 'results', 'async-load.md'), table)
