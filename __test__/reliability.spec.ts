// Issue 8, the short versions of `npm run soak`: repeated batches give the same ids without
// memory growth, a storm of concurrent and aborted calls settles every promise correctly and leaves
// the pool idle, and worker_threads terminated mid-batch leave the survivors' results intact.
// The runs themselves live in scripts/reliability.js, shared with scripts/soak.js.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { type DigestFixture, batchtok, corpus, fixture } from './helpers'

const require = createRequire(import.meta.url)
const runs = require('../scripts/reliability.js') as typeof import('../scripts/reliability.js')

const { Tokenizer, Scheduler } = batchtok
const MiB = 2 ** 20
const POLICIES = ['chunked', 'serial', 'rayon', 'rayon-min-len'] as const
const digests = fixture<DigestFixture>('corpus-digests.json').cuts.bigDocuments

describe('soak', () => {
  const docs = corpus.bigDocuments()
  const o200k = Tokenizer.fromEncoding('o200k_base')
  // Every batch copies 6.5 MB of texts in and hands back ~6 MiB of ids, so a leak of either would
  // add over 120 MiB in the 20 batches after the warm-up. RSS is read after a full GC and after the
  // allocator has handed back its cached free memory, so it follows live memory more closely, but
  // it still moves by up to ~30 MiB between samples on this machine.
  const GROWTH_BOUND = 64 * MiB
  const BATCHES = 30
  const WARMUP = 10

  it.each(['default', ...POLICIES])(
    '%s: 30 batches of big.txt give the reference ids every time, and RSS stays flat',
    async (policy) => {
      const scheduler = policy === 'default' ? undefined : new Scheduler({ policy })
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

    // Nothing left spinning: once every promise has settled (and idle workers have had time to
    // end their spin and park, and V8 to finish collecting the thousand results, whose
    // concurrent marking once took 18% of a core 200 ms after the storm in CI), the process is
    // near idle.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(await runs.cpuShare(300)).toBeLessThan(0.15)
    // And the pool still works.
    const after = await tokenizers[0].encodeBatch(docs.slice(0, 50))
    expect(runs.digest(after)).toBe(runs.digest(tokenizers[0].encodeBatchSync(docs.slice(0, 50), { scheduler: serial })))
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
