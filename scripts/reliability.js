'use strict'
// The reliability runs of issue 8, shared by `npm run soak` (scripts/soak.js: the long versions,
// figures for benchmark/results/soak.md) and __test__/reliability.spec.ts (the short versions
// inside `npm test`). Each run returns what it observed; the callers judge it (the spec asserts,
// the script reports), so the short and the long run measure in exactly the same way.

const { createHash } = require('node:crypto')
const fs = require('node:fs')
const { performance } = require('node:perf_hooks')
const path = require('node:path')
const v8 = require('node:v8')
const vm = require('node:vm')
const { Worker } = require('node:worker_threads')

const addon = require('../__test__/load-addon.cjs')
const { seededRandom } = require('./corpus.js')

/**
 * A digest of everything a `BatchEncoding` says: sha256 over its offsets' bytes, then its ids'
 * bytes. Two batches with the same digest have the same ids split the same way.
 */
function digest(batch) {
  const hash = createHash('sha256')
  const { offsets, ids } = batch
  hash.update(new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength))
  hash.update(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength))
  return hash.digest('hex')
}

/**
 * The digest scripts/fixtures.py writes for the reference ids (corpus-digests.json): sha256 over,
 * for each item, its token count as u32 little-endian, then its ids as u32 little-endian.
 */
function fixtureDigest(batch) {
  const hash = createHash('sha256')
  const count = new Uint32Array(1)
  const { offsets, ids } = batch
  for (let i = 0; i < batch.length; i++) {
    count[0] = offsets[i + 1] - offsets[i]
    hash.update(new Uint8Array(count.buffer))
    hash.update(new Uint8Array(ids.buffer, ids.byteOffset + offsets[i] * 4, count[0] * 4))
  }
  return hash.digest('hex')
}

let collect
/**
 * Runs a full garbage collection. A `BatchEncoding`'s arrays are external memory that V8 frees
 * only when it collects their wrappers, so RSS compared between batches without a collection
 * would measure the collector's mood rather than batchtok.
 */
function gcNow() {
  if (!collect) {
    if (typeof globalThis.gc === 'function') {
      collect = globalThis.gc
    } else {
      // The flag only takes effect for contexts created after it is set, hence the new context.
      v8.setFlagsFromString('--expose-gc')
      collect = vm.runInNewContext('gc')
    }
  }
  collect()
}

/**
 * The least-squares slope of `ys` over `xs` (same length, at least two points).
 */
function slope(xs, ys) {
  const n = xs.length
  const mx = xs.reduce((a, x) => a + x, 0) / n
  const my = ys.reduce((a, y) => a + y, 0) / n
  let sxy = 0
  let sxx = 0
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my)
    sxx += (xs[i] - mx) ** 2
  }
  return sxx === 0 ? 0 : sxy / sxx
}

/**
 * Settling, before any soak is measured: `rounds` rounds of one `encodeBatch` on each of
 * `schedulers` in turn (`undefined` stands for the default scheduler), unmeasured. A fresh
 * process's RSS climbs while the threads that allocate start (libuv's, the pool's, each rayon
 * pool's, each with an allocator arena of its own) and V8 sizes its heap. Without this, the soak
 * measured first also measured the process's start-up, and each later one the start of threads
 * new to it; after it, every soak runs in a process where all those threads exist, whatever its
 * place in the order. Returns RSS after a full GC before and after.
 *
 * @returns {Promise<{ rssBefore: number, rssAfter: number, batches: number, ms: number }>}
 */
async function settle({ tokenizer, texts, schedulers, rounds }) {
  const started = performance.now()
  gcNow()
  const rssBefore = process.memoryUsage().rss
  for (let round = 0; round < rounds; round++) {
    for (const scheduler of schedulers) {
      await tokenizer.encodeBatch(texts, scheduler ? { scheduler } : undefined)
    }
  }
  gcNow()
  return { rssBefore, rssAfter: process.memoryUsage().rss, batches: rounds * schedulers.length, ms: performance.now() - started }
}

/**
 * Soak: `batches` consecutive `encodeBatch` calls of the same texts, each compared with the first
 * by digest. Every `sampleEvery` batches, after a full GC, RSS is sampled; the slope over the
 * samples after `warmup` batches is returned in bytes per 100 batches. With `release`, the
 * allocator hands its cached free memory back first (`releaseMemory()`), so RSS follows live
 * memory: a leak then shows as a slope instead of hiding in the allocator's noise.
 *
 * @returns {Promise<{ first: string, firstFixture: string, mismatches: number[], samples: {batch: number, rss: number, resident: number|null}[], slopePer100: number, residentSlopePer100: number|null, ms: number }>}
 */
async function soak({ tokenizer, texts, scheduler, batches, warmup, sampleEvery = 10, release = false, onProgress }) {
  const options = scheduler ? { scheduler } : undefined
  const mismatches = []
  const samples = []
  let first
  let firstFixture
  const started = performance.now()
  for (let i = 0; i < batches; i++) {
    const batch = await tokenizer.encodeBatch(texts, options)
    const d = digest(batch)
    if (i === 0) {
      first = d
      firstFixture = fixtureDigest(batch)
    } else if (d !== first) {
      mismatches.push(i)
    }
    if ((i + 1) % sampleEvery === 0) {
      gcNow()
      if (release) addon.releaseMemory()
      const stats = addon.memoryStats()
      samples.push({ batch: i + 1, rss: process.memoryUsage().rss, resident: stats.resident ?? null })
      if (onProgress) onProgress(i + 1, samples[samples.length - 1])
    }
  }
  const steady = samples.filter((s) => s.batch > warmup)
  const xs = steady.map((s) => s.batch)
  const slopePer100 = steady.length >= 2 ? slope(xs, steady.map((s) => s.rss)) * 100 : 0
  const residentSlopePer100 =
    steady.length >= 2 && steady.every((s) => s.resident !== null)
      ? slope(xs, steady.map((s) => s.resident)) * 100
      : null
  return { first, firstFixture, mismatches, samples, slopePer100, residentSlopePer100, ms: performance.now() - started }
}

/**
 * The calls of a storm: `count` cases, each one of the four OpenAI encodings or three fixture
 * tokenizer.json files, a slice of `docs` or `short` (one short text run inline, up to 400 short
 * items, or up to 40 documents spread over threads), the default scheduler or one of each policy,
 * and the digest of the same texts encoded on one thread (the reference). Returns the cases, the
 * tokenizers and that one-thread scheduler.
 */
function stormCases({ docs, short, count, seed }) {
  const { Tokenizer, Scheduler } = addon
  const fixtures = path.join(__dirname, '..', '__test__', 'fixtures', 'tokenizers')
  const tokenizers = [
    ...['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'].map((name) => Tokenizer.fromEncoding(name)),
    ...['gpt2', 'bert', 'unigram'].map((name) => Tokenizer.fromFile(path.join(fixtures, `${name}.json`))),
  ]
  const policies = ['chunked', 'serial', 'rayon', 'rayon-min-len']
  const schedulers = [undefined, ...policies.map((policy) => new Scheduler({ policy }))]
  const serial = new Scheduler({ policy: 'serial', threads: 1 })
  const random = seededRandom(seed)
  const pick = (n) => Math.floor(random() * n)
  const cases = Array.from({ length: count }, (_, i) => {
    const tokenizer = tokenizers[i % tokenizers.length]
    const kind = pick(3)
    const source = kind === 2 ? docs : short
    const texts = kind === 0 ? 1 : kind === 1 ? 1 + pick(400) : 1 + pick(40)
    const start = pick(source.length - texts)
    const slice = source.slice(start, start + texts)
    const expected = digest(tokenizer.encodeBatchSync(slice, { scheduler: serial }))
    return { tokenizer, texts: slice, expected, scheduler: schedulers[pick(schedulers.length)] }
  })
  return { cases, tokenizers, serial }
}

/**
 * Storm: `calls` `encodeBatch` calls started in one go, each on one of `cases` (a tokenizer, its
 * texts, the digest of their ids computed beforehand), some aborted at a random moment: before
 * the call, right after it, or after a random delay of up to `maxAbortDelayMs`. Waits for every
 * promise to settle and sorts the outcomes.
 *
 * @param {{ calls: number, seed: number, cases: { tokenizer: any, texts: string[], expected: string, scheduler?: any }[], abortShare?: number, maxAbortDelayMs?: number }} plan
 */
async function storm({ calls, seed, cases, abortShare = 0.3, maxAbortDelayMs = 200 }) {
  const random = seededRandom(seed)
  const outcome = {
    calls,
    settled: 0,
    resolved: 0,
    resolvedDespiteAbort: 0,
    aborted: 0,
    abortedCodes: {},
    // Calls that were not asked to abort but rejected anyway, or whose ids differ, or that
    // rejected with something other than an AbortError: each must stay empty.
    wrong: [],
    abortLatencyMs: [],
  }
  const timers = []
  const promises = []
  for (let i = 0; i < calls; i++) {
    const c = cases[Math.floor(random() * cases.length)]
    const abortWhen = random() < abortShare ? Math.floor(random() * 3) : -1
    const controller = abortWhen >= 0 ? new AbortController() : null
    let abortedAt = null
    const abort = () => {
      abortedAt = performance.now()
      controller.abort()
    }
    if (abortWhen === 0) abort()
    const options = {}
    if (controller) options.signal = controller.signal
    if (c.scheduler) options.scheduler = c.scheduler
    const promise = c.tokenizer.encodeBatch(c.texts, options)
    if (abortWhen === 1) abort()
    if (abortWhen === 2) timers.push(setTimeout(abort, random() * maxAbortDelayMs))
    promises.push(
      promise.then(
        (batch) => {
          outcome.settled++
          outcome.resolved++
          if (controller && abortedAt !== null) outcome.resolvedDespiteAbort++
          if (digest(batch) !== c.expected) outcome.wrong.push({ call: i, why: 'ids differ from the reference' })
        },
        (error) => {
          outcome.settled++
          if (!controller || abortedAt === null) {
            outcome.wrong.push({ call: i, why: `rejected without an abort: ${error && error.message}` })
          } else if (!(error instanceof Error) || error.name !== 'AbortError') {
            outcome.wrong.push({ call: i, why: `rejected with ${error && error.name}: ${error && error.message}` })
          } else {
            outcome.aborted++
            outcome.abortedCodes[error.code] = (outcome.abortedCodes[error.code] || 0) + 1
            outcome.abortLatencyMs.push(performance.now() - abortedAt)
          }
        },
      ),
    )
  }
  await Promise.all(promises)
  for (const timer of timers) clearTimeout(timer)
  return outcome
}

/**
 * The CPU over one window of `ms` milliseconds of wall time, each as a share of one core:
 * `process`, every thread of the process; `pool`, batchtok's own threads alone (Linux; elsewhere
 * `null`).
 */
async function cpuShares(ms) {
  const linux = process.platform === 'linux'
  const poolBefore = linux ? batchtokThreadsCpuNs() : 0
  const before = process.cpuUsage()
  const start = performance.now()
  await new Promise((resolve) => setTimeout(resolve, ms))
  const used = process.cpuUsage(before)
  const wallMs = performance.now() - start
  return {
    process: (used.user + used.system) / 1000 / wallMs,
    pool: linux ? (batchtokThreadsCpuNs() - poolBefore) / 1e6 / wallMs : null,
  }
}

/**
 * The CPU time the whole process (every thread) spends over `ms` of wall time, as a fraction of
 * one core. Near zero means no thread is left spinning.
 */
async function cpuShare(ms) {
  return (await cpuShares(ms)).process
}

/** Nanoseconds of CPU that the process's threads named `batchtok…` (the chunked pool's workers
 * and the rayon policies' threads) have run so far (Linux: `/proc/self/task/<tid>/schedstat`). */
function batchtokThreadsCpuNs() {
  let total = 0
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      if (!fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').startsWith('batchtok')) continue
      total += Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // The thread ended between the listing and the read: it runs no more.
    }
  }
  return total
}

/**
 * The CPU batchtok's own threads use over `ms` milliseconds, as a share of one core: what a
 * worker left spinning would show, and what the runtime's threads (V8 collecting garbage, libuv)
 * do not. Linux only; elsewhere `null`.
 */
async function poolCpuShare(ms) {
  return (await cpuShares(ms)).pool
}

const CHURN_WORKER = path.join(__dirname, '..', '__test__', 'worker-churn.cjs')

function startWorker(workerData) {
  const worker = new Worker(CHURN_WORKER, { workerData })
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => (m === 'ready' ? resolve(worker) : reject(new Error(String(m)))))
    worker.once('error', reject)
  })
}

/**
 * Worker churn: `cycles` times, starts `workers` worker_threads that each load batchtok and
 * encode `texts` with `encoding`; after a random delay of up to `maxKillDelayMs`, terminates a
 * random half of them, most in the middle of a batch; the others must post the digest `expected`.
 * RSS is sampled after each cycle (after a full GC).
 */
async function churn({ cycles, workers, encoding, texts, expected, seed, maxKillDelayMs = 30, onCycle }) {
  const random = seededRandom(seed)
  const outcome = { cycles, started: 0, terminated: 0, survivors: 0, correct: 0, wrong: [], rss: [] }
  for (let cycle = 0; cycle < cycles; cycle++) {
    const pool = await Promise.all(
      Array.from({ length: workers }, () => startWorker({ encoding, texts })),
    )
    outcome.started += pool.length
    const doomed = new Set()
    while (doomed.size < workers / 2) doomed.add(Math.floor(random() * workers))
    const results = pool.map((worker, index) => {
      const result = new Promise((resolve) => {
        worker.once('message', (m) => resolve({ index, message: m }))
        worker.once('error', (error) => resolve({ index, error }))
        worker.once('exit', (code) => resolve({ index, exit: code }))
      })
      worker.postMessage('encode')
      return result
    })
    await new Promise((resolve) => setTimeout(resolve, random() * maxKillDelayMs))
    await Promise.all([...doomed].map((index) => pool[index].terminate()))
    outcome.terminated += doomed.size
    for (const result of await Promise.all(results)) {
      if (doomed.has(result.index)) continue
      outcome.survivors++
      if (result.message === expected) outcome.correct++
      else outcome.wrong.push({ cycle, worker: result.index, got: result.error ? String(result.error) : result.message ?? `exit ${result.exit}` })
    }
    await Promise.all(pool.map((worker) => worker.terminate()))
    gcNow()
    outcome.rss.push(process.memoryUsage().rss)
    if (onCycle) onCycle(cycle + 1, outcome)
  }
  return outcome
}

/**
 * Cancellation latency: starts `encodeBatch(texts)` on `scheduler`, aborts it after `delayMs`, and
 * returns how long the rejection took after the abort (null if the batch finished first).
 */
async function abortLatency({ tokenizer, texts, scheduler, delayMs }) {
  const controller = new AbortController()
  let abortedAt = 0
  const promise = tokenizer.encodeBatch(texts, { signal: controller.signal, scheduler })
  const timer = setTimeout(() => {
    abortedAt = performance.now()
    controller.abort()
  }, delayMs)
  try {
    await promise
    clearTimeout(timer)
    return null
  } catch (error) {
    if (error.name !== 'AbortError') throw error
    return performance.now() - abortedAt
  }
}

module.exports = { digest, fixtureDigest, prng: seededRandom, gcNow, slope, settle, soak, stormCases, storm, cpuShare, cpuShares, poolCpuShare, churn, abortLatency }
