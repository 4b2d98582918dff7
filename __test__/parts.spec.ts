// A large array of strings is read in parts while the first parts encode (encodeBatch and
// countBatch with more than one thread): the result must be the whole batch's, in order, and a
// failure to read a later part must throw from the call without leaving a stray promise behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { batchtok, corpus } from './helpers'

const { Tokenizer, Scheduler } = batchtok
const o200k = Tokenizer.fromEncoding('o200k_base')
const shortItems = corpus.bigShortItems()

function sameIds(a: { ids: Uint32Array; offsets: Uint32Array }, b: { ids: Uint32Array; offsets: Uint32Array }) {
  return (
    Buffer.compare(Buffer.from(a.ids.buffer, a.ids.byteOffset, a.ids.byteLength), Buffer.from(b.ids.buffer, b.ids.byteOffset, b.ids.byteLength)) === 0 &&
    Buffer.compare(
      Buffer.from(a.offsets.buffer, a.offsets.byteOffset, a.offsets.byteLength),
      Buffer.from(b.offsets.buffer, b.offsets.byteOffset, b.offsets.byteLength),
    ) === 0
  )
}

describe('a large array of strings, read in parts', () => {
  const whole = o200k.encodeBatchSync(shortItems, { scheduler: new Scheduler({ threads: 1, policy: 'serial' }) })

  it.each([
    ['chunked', 2],
    ['chunked', 3],
    ['rayon', 2],
    ['rayon-min-len', 2],
    ['serial', 2],
  ] as const)('encodeBatch gives the ids of the whole batch (%s, %i threads), in several runs', async (policy, threads) => {
    const scheduler = new Scheduler({ threads, policy })
    const batch = await o200k.encodeBatch(shortItems, { scheduler })
    expect(sameIds(batch, whole)).toBe(true)
    const stats = scheduler.stats()!
    expect(stats.parts).toBeGreaterThan(1)
    expect(stats.items).toBe(shortItems.length)
    // Each run's workers lease the engine's working memory once, whatever its number of texts.
    const workersPerPart = policy.startsWith('rayon') ? stats.chunks : threads * stats.parts
    expect(stats.engineLocks).toBeLessThanOrEqual(2 * workersPerPart)
  })

  it('countBatch gives the counts of the whole batch, in several runs', async () => {
    const scheduler = new Scheduler({ threads: 2 })
    const counts = await o200k.countBatch(shortItems, { scheduler })
    expect(counts.length).toBe(shortItems.length)
    expect(counts.every((count, i) => count === whole.offsets[i + 1] - whole.offsets[i])).toBe(true)
    expect(scheduler.stats()!.parts).toBeGreaterThan(1)
  })

  it('is read whole, in one run, with one thread, for a small batch, or for long texts', async () => {
    const one = new Scheduler({ threads: 1 })
    expect(sameIds(await o200k.encodeBatch(shortItems, { scheduler: one }), whole)).toBe(true)
    expect(one.stats()!.parts).toBe(1)
    const two = new Scheduler({ threads: 2 })
    await o200k.encodeBatch(shortItems.slice(0, 20), { scheduler: two })
    expect(two.stats()!.parts).toBe(1)
    // ~6.5 KB documents: reading them is too small a share of the work on two threads.
    const documents = corpus.bigDocuments()
    const encoded = await o200k.encodeBatch(documents, { scheduler: two })
    expect(sameIds(encoded, o200k.encodeBatchSync(documents, { scheduler: one }))).toBe(true)
    expect(two.stats()!.parts).toBe(1)
  })

  it('rejects with an AbortError when the signal fires while the parts encode', async () => {
    const controller = new AbortController()
    const pending = o200k.encodeBatch(shortItems, { signal: controller.signal, scheduler: new Scheduler({ threads: 2 }) })
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' })
  })
})

describe('a string array that fails to read after its first part', () => {
  const unhandled: unknown[] = []
  const record = (reason: unknown) => unhandled.push(reason)
  beforeAll(() => process.on('unhandledRejection', record))
  afterAll(() => process.off('unhandledRejection', record))

  const late = 40_000

  it.each(['encodeBatch', 'countBatch'] as const)('%s throws a TypeError naming the index, and leaves no rejected promise', async (method) => {
    const texts: unknown[] = shortItems.slice()
    texts[late] = 42
    const scheduler = new Scheduler({ threads: 2 })
    expect(() => o200k[method](texts as string[], { scheduler })).toThrow(new TypeError(`texts[${late}] is a number; expected a string`))
    // The work queued for the first parts settles quietly, and the scheduler keeps working.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(unhandled).toEqual([])
    expect(sameIds(await o200k.encodeBatch(shortItems.slice(0, 3000), { scheduler }), o200k.encodeBatchSync(shortItems.slice(0, 3000)))).toBe(true)
  })

  it('a getter that throws part-way through propagates its error', async () => {
    const texts = shortItems.slice()
    Object.defineProperty(texts, late, {
      get() {
        throw new Error('no text here')
      },
    })
    expect(() => o200k.encodeBatch(texts, { scheduler: new Scheduler({ threads: 2 }) })).toThrow('no text here')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(unhandled).toEqual([])
  })
})
