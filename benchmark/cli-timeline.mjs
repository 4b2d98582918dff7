// Where `batchtok encode`'s cores wait: runs the CLI with its timeline on (BATCHTOK_CLI_TIMELINE,
// cli/timeline.js) over the inputs of benchmark/cli.mjs and adds up, for each phase of the run,
// the wall time, the CPU time of the whole process, and the core-seconds left idle (wall x cores
// - CPU); and, while batches encode, the time an encoding thread had no batch.
//
//   node benchmark/cli-timeline.mjs [--mib 300] [--rounds 3] [--threads 2] [--cli cli/batchtok.js]
//                                   [--inputs DIR] [--only lines|jsonl|parquet] [--max-others 0.1]
//                                   [-- extra CLI options]
//
// `--inputs DIR` keeps the text and JSONL inputs there for the next run (built when missing; the
// Parquet input is written each run). `--max-others S` runs a round again (up to 10 times as many
// runs as rounds) when other processes took more than S core-seconds during it: their CPU fills
// the cores the CLI leaves idle and hides them. Medians of the rounds kept.

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { cliInputs } from './cli-inputs.mjs'
import { median, MiB } from './stats.mjs'

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const dash = process.argv.indexOf('--')
const args = dash === -1 ? process.argv.slice(2) : process.argv.slice(2, dash)
const extra = dash === -1 ? [] : process.argv.slice(dash + 1)
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`)
  return at === -1 ? fallback : args[at + 1]
}
const targetMiB = Number(option('mib', 300))
const rounds = Number(option('rounds', 3))
const threads = Number(option('threads', 2))
const cli = path.resolve(option('cli', path.join(ROOT, 'cli', 'batchtok.js')))
const only = option('only', null)
const keep = option('inputs', null)
const maxOthers = Number(option('max-others', Infinity))
const cores = Math.min(threads, os.availableParallelism())

/** The phases of a run, each between two of the timeline's events; after the last batch is
 * written, the events that end a run's last phases, in the order they happen. */
const PHASES = [
  ['set-up', 'start', 'first-encode'],
  ['engine build', 'first-encode', 'ready'],
  ['encoding', 'ready', 'last-written'],
]
const ENDINGS = { 'final-sync-end': 'final sync', 'index-written': 'index', closed: 'close' }

/** The breakdown of one run's timeline (JSON lines). */
function breakdown(text) {
  const records = text.trim().split('\n').map((line) => JSON.parse(line))
  const events = records.filter((r) => r.event !== 'thread')
  const first = (name) => events.find((e) => e.event === name)
  const at = {
    start: first('start'),
    'first-encode': first('encode'),
    ready: first('ready') ?? first('encode'),
    'last-written': first('last-written'),
  }
  const endings = Object.keys(ENDINGS)
    .filter((name) => first(name))
    .sort((a, b) => first(a).t - first(b).t)
  let previous = 'last-written'
  const phaseList = [...PHASES]
  for (const name of endings) {
    at[name] = first(name)
    phaseList.push([ENDINGS[name], previous, name])
    previous = name
  }
  // The engine may be ready before the first batch (small inputs): the build phase is then empty.
  if (at.ready.t < at['first-encode'].t) at.ready = at['first-encode']
  const phases = {}
  for (const [name, from, to] of phaseList) {
    const wall = (at[to].t - at[from].t) / 1000
    const cpu = (at[to].cpu - at[from].cpu) / 1000
    // Other processes' CPU, and the cores no process used, from the machine's counters.
    const busy = (at[to].machine.busy - at[from].machine.busy) / 1000
    const idle = (at[to].machine.idle - at[from].machine.idle) / 1000
    phases[name] = { wall, cpu, others: Math.max(0, busy - cpu), idle }
  }
  // Encoding threads without a batch, from the first batch handed over to the last encoded.
  let running = 0
  let last = at['first-encode'].t
  let idleBuild = 0
  let idleEncoding = 0
  for (const e of events) {
    if (e.event !== 'encode' && e.event !== 'encoded') continue
    const span = (e.t - last) / 1000
    const waiting = Math.max(0, threads - running)
    if (e.t <= at.ready.t) idleBuild += waiting * span
    else idleEncoding += waiting * span
    last = e.t
    running += e.event === 'encode' ? 1 : -1
  }
  const syncs = events.filter((e) => e.event === 'sync-start').length
  const finalSync = first('final-sync-start')
  const threadCpu = records.filter((r) => r.event === 'thread')
  const mainTid = Math.min(...threadCpu.map((r) => r.tid))
  return {
    total: (at.closed.t - at.start.t) / 1000,
    cpu: (at.closed.cpu - at.start.cpu) / 1000,
    others: Math.max(0, (at.closed.machine.busy - at.start.machine.busy - at.closed.cpu + at.start.cpu) / 1000),
    idle: (at.closed.machine.idle - at.start.machine.idle) / 1000,
    phases,
    idleBuild,
    idleEncoding,
    batches: events.filter((e) => e.event === 'encode').length,
    syncs,
    unsyncedMiB: finalSync ? finalSync.unsynced / MiB : 0,
    mainCpu: (threadCpu.find((r) => r.tid === mainTid)?.cpu ?? 0) / 1000,
    threadCpu: threadCpu.map((r) => `${r.name}:${(r.cpu / 1000).toFixed(2)}`).join(' '),
  }
}

const work = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-bench-cli-timeline-'))
fs.mkdirSync(work, { recursive: true })
try {
  const { inputs, write } = cliInputs(work)
  console.log(`${cli}, ${threads} threads, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  for (const input of inputs) {
    if (only && input.kind !== only) continue
    // A text input is written until it reaches the size, so it ends within one repeated piece past
    // it. A Parquet file's size is that of its compressed pages, which says nothing of its texts'
    // size: it is written again every time.
    const kept = input.kind !== 'parquet' && fs.existsSync(input.file) ? fs.statSync(input.file).size : 0
    if (kept < targetMiB * MiB || kept > (targetMiB + 64) * MiB) await write(input, targetMiB * MiB)
    const runs = []
    let discarded = 0
    for (let attempt = 0; runs.length < rounds && attempt < 10 * rounds; attempt++) {
      const timelineFile = path.join(work, 'timeline.jsonl')
      for (const file of ['out.bin', 'out.idx']) fs.rmSync(path.join(work, file), { force: true })
      const result = spawnSync(
        process.execPath,
        [cli, 'encode', input.file, ...input.args, '--encoding', 'o200k_base', '--threads', String(threads), '-o', path.join(work, 'out'), '--force', '-q', '--summary', ...extra],
        { encoding: 'utf8', env: { ...process.env, BATCHTOK_CLI_TIMELINE: timelineFile } },
      )
      if (result.status !== 0) throw new Error(`${cli} failed: ${result.stderr}`)
      const summary = JSON.parse(result.stdout.trim())
      const run = { seconds: summary.seconds, rss: summary.peakRssMiB, ...breakdown(fs.readFileSync(timelineFile, 'utf8')) }
      if (run.others > maxOthers) {
        discarded++
        continue
      }
      runs.push(run)
    }
    if (runs.length === 0) throw new Error(`${input.name}: other processes took more than ${maxOthers} core-s in every run; wait for a quiet machine`)
    const m = (pick) => median(runs.map(pick))
    console.log(`\n${input.name}: ${(fs.statSync(input.file).size / MiB).toFixed(0)} MiB, ${runs[0].batches} batches, medians of ${runs.length}${discarded ? ` (${discarded} runs dropped: other processes busy)` : ''}`)
    console.log(`run ${m((r) => r.seconds).toFixed(2)} s (summary); peak RSS ${Math.max(...runs.map((r) => r.rss))} MiB`)
    console.log('| phase | wall s | CPU s | other processes CPU s | idle core-s |')
    console.log('| --- | ---: | ---: | ---: | ---: |')
    const row = (name, pick) => `| ${name} | ${m((r) => pick(r).wall).toFixed(3)} | ${m((r) => pick(r).cpu).toFixed(3)} | ${m((r) => pick(r).others).toFixed(2)} | ${m((r) => pick(r).idle).toFixed(2)} |`
    for (const name of Object.keys(runs[0].phases)) console.log(row(name, (r) => r.phases[name]))
    console.log(row('start to close', (r) => ({ wall: r.total, cpu: r.cpu, others: r.others, idle: r.idle })))
    console.log(`encoding threads without a batch: ${m((r) => r.idleBuild).toFixed(3)} thread-s during the build, ${m((r) => r.idleEncoding).toFixed(3)} after`)
    console.log(`background syncs ${m((r) => r.syncs)}, unsynced at the final sync ${m((r) => r.unsyncedMiB).toFixed(1)} MiB; main thread CPU ${m((r) => r.mainCpu).toFixed(2)} s`)
    console.log(`threads (last round): ${runs.at(-1).threadCpu}`)
  }
} finally {
  if (keep) for (const file of ['out.bin', 'out.idx', 'timeline.jsonl']) fs.rmSync(path.join(work, file), { force: true })
  else fs.rmSync(work, { recursive: true, force: true })
}
