// The short versions of `npm run soak`: repeated batches give the same ids without
// memory growth, a storm of concurrent and aborted calls settles every promise correctly and leaves
// the pool idle, worker_threads terminated mid-batch leave the survivors' results intact, and a
// tokenizer dropped leaves nothing behind in the threads that encoded with it.
// The runs themselves live in scripts/reliability.js, shared with scripts/soak.js.
import { getEventListeners } from 'node:events'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

import { type DigestFixture, FIXTURES, batchtok, corpus, fixture } from './helpers'

const require = createRequire(import.meta.url)
const runs = require('../scripts/reliability.js') as typeof import('../scripts/reliability.js')

const { Tokenizer, Scheduler } = batchtok
const MiB = 2 ** 20
const POLICIES = ['chunked', 'serial', 'rayon', 'rayon-min-len'] as const
const digests = fixture<DigestFixture>('corpus-digests.json').cuts.bigDocuments

describe('soak', () => {
  const docs = corpus.bigDocuments()
  const o200k = Tokenizer.fromEncoding('o200k_base')
  const schedulers = new Map(POLICIES.map((policy) => [policy, new Scheduler({ policy })]))
  // Every batch copies 6.5 MB of texts in and hands back ~6 MiB of ids, so a leak of either would
  // add over 120 MiB in the 20 batches after the warm-up. RSS is read after a full GC and after the
  // allocator has handed back its cached free memory, so it follows live memory more closely, but
  // it still moves by up to ~30 MiB between samples on this machine.
  const GROWTH_BOUND = 64 * MiB
  const BATCHES = 30
  const WARMUP = 10
  // As `npm run soak` does, at a smaller scale: every scheduler runs before the first one is
  // measured, so each is measured in a process where all their threads exist, whatever its order.
  const SETTLE_ROUNDS = 2

  beforeAll(async () => {
    await runs.settle({ tokenizer: o200k, texts: docs, schedulers: [undefined, ...schedulers.values()], rounds: SETTLE_ROUNDS })
  })

  it.each(['default', ...POLICIES])(
    '%s: 30 batches of big.txt give the reference ids every time, and RSS stays flat',
    async (policy) => {
      const scheduler = schedulers.get(policy)
      const run = await runs.soak({ tokenizer: o200k, texts: docs, scheduler, batches: BATCHES, warmup: WARMUP, sampleEvery: 1, release: true })
      expect(run.firstFixture).toBe(digests.o200k_base.sha256)
      expect(run.mismatches).toEqual([])
      const afterWarmup = run.samples.find((s) => s.batch === WARMUP)!.rss
      const last = run.samples[run.samples.length - 1].rss
      expect(last - afterWarmup).toBeLessThan(GROWTH_BOUND)
    },
  )
})

describe('storm', () => {
  it('1,000 calls in flight, 30% aborted at random moments: each resolves with the right ids or rejects with an AbortError, and the pool goes idle', async () => {
    const docs = corpus.bigDocuments()
    const short = corpus.bigShortItems()
    const { cases, tokenizers, serial } = runs.stormCases({ docs, short, count: 48, seed: 0x5eed })

    const outcome = await runs.storm({ calls: 1000, seed: 0xfeed, cases, abortShare: 0.3, maxAbortDelayMs: 200 })
    expect(outcome.wrong).toEqual([])
    expect(outcome.settled).toBe(1000)
    expect(outcome.resolved + outcome.aborted).toBe(1000)
    // The seed aborts about 300 calls; most abort before their batch can finish.
    expect(outcome.aborted).toBeGreaterThan(100)
    expect(Object.keys(outcome.abortedCodes)).toEqual(['ABORT_ERR'])
    expect(outcome.resolved).toBeGreaterThan(600)

    // Nothing left spinning: once every promise has settled and idle workers have had time to
    // end their spin and park, batchtok's own threads use next to no CPU. Only they are measured:
    // V8's collection of the thousand results runs on its own threads for a second or more
    // afterwards (it once took 17% of a core a second after the storm), while a worker left
    // spinning would take a whole core.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const share = await runs.poolCpuShare(300)
    if (share !== null) expect(share).toBeLessThan(0.05)
    // And the pool still works.
    const after = await tokenizers[0].encodeBatch(docs.slice(0, 50))
    expect(runs.digest(after)).toBe(runs.digest(tokenizers[0].encodeBatchSync(docs.slice(0, 50), { scheduler: serial })))
  })

  it('the idle measure sees the pool when it works', async () => {
    // The control for the storm's last check: while a batch of about 60 MiB runs on two threads
    // (the calling thread and one of the pool's), batchtok's threads run about half of the
    // process's CPU. A share of the process's CPU, not of a core: other work on a shared machine
    // slows every thread of the process alike and leaves it where it is.
    const docs = corpus.bigDocuments()
    const big = Array.from({ length: 10 }, () => docs).flat()
    const o200k = Tokenizer.fromEncoding('o200k_base')
    const scheduler = new Scheduler({ threads: 2, policy: 'chunked' })
    const running = o200k.encodeBatch(big, { scheduler })
    const shares = await runs.cpuShares(300)
    await running
    if (shares.pool !== null) expect(shares.pool / shares.process).toBeGreaterThan(0.3)
  })

  it('an abort of a batch already running rejects with an AbortError; the tokenizer keeps working', async () => {
    const docs = corpus.bigDocuments()
    const o200k = Tokenizer.fromEncoding('o200k_base')
    const big = Array.from({ length: 5 }, () => docs).flat()
    for (const policy of POLICIES) {
      const controller = new AbortController()
      const promise = o200k.encodeBatch(big, { signal: controller.signal, scheduler: new Scheduler({ policy }) })
      // Late enough that an idle libuv thread has started the work (so napi cannot simply drop
      // it), early enough that 32 MB cannot be done yet (~100 MB/s per core).
      setTimeout(() => controller.abort(), 30)
      const error = await promise.then(
        () => null,
        (e: Error) => e,
      )
      expect(error, policy).toBeInstanceOf(Error)
      expect(error!.name).toBe('AbortError')
      expect((error as Error & { code: string }).code).toBe('ABORT_ERR')
    }
    expect(runs.digest(await o200k.encodeBatch(docs))).toBe(runs.digest(o200k.encodeBatchSync(docs)))
  })
})

describe('an abort before the work starts', () => {
  // A call still queued for a libuv thread when its signal fires must reject like any other
  // abort: name 'AbortError', code 'ABORT_ERR' (napi-rs's own rejection of queued work has code
  // 'Cancelled'; batchtok keeps the signal away from it, see `batch_task` in src/js/tokenizer.rs).
  it('rejects with code ABORT_ERR too', async () => {
    const o200k = Tokenizer.fromEncoding('o200k_base')
    const texts = corpus.bigDocuments()
    // Occupy libuv's threads so the last call is still queued when it is aborted.
    const busy = Array.from({ length: 8 }, () => o200k.encodeBatch(texts))
    const controller = new AbortController()
    const queued = o200k.encodeBatch(texts, { signal: controller.signal })
    controller.abort()
    const error = (await queued.then(
      () => null,
      (e: Error) => e,
    )) as (Error & { code?: string }) | null
    await Promise.all(busy)
    expect(error?.name).toBe('AbortError')
    expect(error?.code).toBe('ABORT_ERR')
  })

  it('rejects even an empty batch whose signal had already fired', async () => {
    const controller = new AbortController()
    controller.abort()
    const o200k = Tokenizer.fromEncoding('o200k_base')
    await expect(o200k.encodeBatch([], { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORT_ERR' })
  })
})

describe("the caller's AbortSignal", () => {
  // batchtok adds one 'abort' listener per call with addEventListener and removes it once the
  // call has settled (src/js/signal.rs); the caller's own handlers are left alone.
  const o200k = Tokenizer.fromEncoding('o200k_base')
  const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort')
  const settle = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (e: Error & { code?: string }) => e,
    )

  it('keeps its own onabort handler, set before or after the call, and the batch still aborts', async () => {
    const docs = corpus.bigDocuments()
    const heard: string[] = []

    const early = new AbortController()
    early.signal.onabort = () => heard.push('set before the call')
    const first = o200k.encodeBatch(docs, { signal: early.signal })
    early.abort()
    expect((await settle(first))?.code).toBe('ABORT_ERR')

    const late = new AbortController()
    const second = o200k.countBatch(docs, { signal: late.signal })
    late.signal.onabort = () => heard.push('set after the call')
    late.abort()
    expect((await settle(second))?.code).toBe('ABORT_ERR')

    expect(heard).toEqual(['set before the call', 'set after the call'])
  })

  it('holds one listener while a call runs and none once it settles, resolved or aborted', async () => {
    const docs = corpus.bigDocuments()
    const controller = new AbortController()
    const resolved = o200k.encodeBatch(docs.slice(0, 50), { signal: controller.signal })
    expect(listeners(controller.signal)).toHaveLength(1)
    await resolved
    expect(listeners(controller.signal)).toEqual([])

    const aborted = o200k.encodeBatch(docs, { signal: controller.signal })
    expect(listeners(controller.signal)).toHaveLength(1)
    controller.abort()
    expect((await settle(aborted))?.code).toBe('ABORT_ERR')
    expect(listeners(controller.signal)).toEqual([])
  })

  it('one signal reused for 50 calls in a row leaves no listener behind and no MaxListenersExceededWarning', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    process.on('warning', onWarning)
    try {
      const texts = corpus.bigShortItems().slice(0, 200)
      const expected = runs.digest(o200k.encodeBatchSync(texts))
      const counts = o200k.countBatchSync(texts)
      const controller = new AbortController()
      for (let call = 0; call < 50; call++) {
        if (call % 2 === 0) {
          expect(runs.digest(await o200k.encodeBatch(texts, { signal: controller.signal }))).toBe(expected)
        } else {
          expect(await o200k.countBatch(texts, { signal: controller.signal })).toEqual(counts)
        }
        expect(listeners(controller.signal)).toEqual([])
      }
      // Node emits its warning on a later tick (past 10 listeners on one AbortSignal).
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.filter((name) => name === 'MaxListenersExceededWarning')).toEqual([])
      // The signal still works for the next call.
      controller.abort()
      expect((await settle(o200k.encodeBatch(texts, { signal: controller.signal })))?.code).toBe('ABORT_ERR')
      expect(listeners(controller.signal)).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('ignores an abort that comes after the batch settled', async () => {
    const texts = corpus.bigShortItems().slice(0, 200)
    const controller = new AbortController()
    const batch = await o200k.encodeBatch(texts, { signal: controller.signal })
    const digest = runs.digest(batch)
    controller.abort()
    await new Promise((resolve) => setImmediate(resolve))
    expect(controller.signal.aborted).toBe(true)
    expect(runs.digest(batch)).toBe(digest)
    expect(digest).toBe(runs.digest(o200k.encodeBatchSync(texts)))
    expect(listeners(controller.signal)).toEqual([])
  })
})

describe('worker_threads churn', () => {
  it('10 cycles of 8 workers, half terminated mid-batch: no crash, the survivors get the reference ids, memory does not pile up', async () => {
    const texts = corpus.bigDocuments().slice(0, 300)
    const expected = runs.digest(Tokenizer.fromEncoding('o200k_base').encodeBatchSync(texts))
    const outcome = await runs.churn({ cycles: 10, workers: 8, encoding: 'o200k_base', texts, expected, seed: 0xc0ffee })
    expect(outcome.wrong).toEqual([])
    expect(outcome.started).toBe(80)
    expect(outcome.survivors).toBe(40)
    expect(outcome.correct).toBe(40)
    // Each cycle starts 8 isolates of ~10 MiB each; a leak of a worker's addon state or heap per
    // cycle would add that again every cycle.
    expect(outcome.rss[9] - outcome.rss[2]).toBeLessThan(96 * MiB)
    // The main thread's addon is unaffected.
    expect(runs.digest(await Tokenizer.fromEncoding('o200k_base').encodeBatch(texts))).toBe(expected)
  })
})

describe('tokenizers dropped after the stable engine encoded', () => {
  it('a tokenizer.json on the stable engine, loaded, used on the pool and dropped 8 times: RSS stays flat', async () => {
    // A token longer than the release candidate holds sends every text to the stable engine.
    const file = JSON.parse(readFileSync(join(FIXTURES, 'tokenizers', 'gpt2.json'), 'utf8'))
    file.model.vocab['x'.repeat(40_000)] = Object.keys(file.model.vocab).length
    const json = JSON.stringify(file)
    const rss: number[] = []
    for (let round = 0; round < 8; round++) {
      const tokenizer = Tokenizer.fromJSON(json)
      await tokenizer.whenReady()
      expect(tokenizer.routing).toMatch(/^stable: /)
      // Words the stable crate would keep in each encoding thread's word cache, a few KB each
      // (a word's symbols as merging began): about 40 MiB a round if they outlived the tokenizer.
      const words = Array.from({ length: 10_000 }, (_, i) => ` w${(round * 10_000 + i).toString(36)}${'q'.repeat(200)}`)
      const ids = await tokenizer.encodeBatch(words)
      expect(ids.offsets.length).toBe(words.length + 1)
      runs.gcNow()
      batchtok.releaseMemory()
      rss.push(process.memoryUsage().rss)
    }
    expect(rss[7] - rss[1]).toBeLessThan(64 * MiB)
  })
})
