// Texts given as UTF-8 bytes plus offsets (`encodeUtf8Batch`, `countUtf8Batch`): the same ids as
// strings give, the reference digests whichever scheduler runs the batch, and clear errors.
import { describe, expect, it } from 'vitest'

import type { BatchStats } from '../index'
import { batchtok, corpus, digest, fixture, hfTokenizer, type DigestFixture } from './helpers'

const { Tokenizer, Scheduler } = batchtok
const o200k = Tokenizer.fromEncoding('o200k_base')
const digests = fixture<DigestFixture>('corpus-digests.json')

/** `texts` as one UTF-8 buffer and the n + 1 offsets between them. */
function asUtf8(texts: string[]) {
  const bytes = Buffer.from(texts.join(''), 'utf8')
  const offsets = new Uint32Array(texts.length + 1)
  texts.forEach((text, i) => {
    offsets[i + 1] = offsets[i] + Buffer.byteLength(text, 'utf8')
  })
  return { bytes, offsets }
}

const SCHEDULERS = {
  'chunked, 1 thread': () => new Scheduler({ threads: 1, policy: 'chunked' }),
  'chunked, 2 threads': () => new Scheduler({ threads: 2, policy: 'chunked' }),
  'chunked, 3 threads': () => new Scheduler({ threads: 3, policy: 'chunked' }),
  serial: () => new Scheduler({ policy: 'serial' }),
  rayon: () => new Scheduler({ threads: 2, policy: 'rayon' }),
}

describe('every scheduler gives the reference ids', () => {
  // A one-thread batch hands its worker's buffer over as the result; several threads' results are
  // reassembled in input order. Both must give exactly the reference ids.
  const documents = corpus.bigDocuments()
  const shortItems = corpus.bigShortItems()
  it.each(Object.keys(SCHEDULERS))('%s, strings and bytes', async (name) => {
    const scheduler = SCHEDULERS[name as keyof typeof SCHEDULERS]()
    for (const [cut, texts] of [['bigDocuments', documents], ['bigShortItems', shortItems]] as const) {
      const expected = digests.cuts[cut].o200k_base
      expect(digest(await o200k.encodeBatch(texts, { scheduler }))).toEqual(expected)
      const { bytes, offsets } = asUtf8(texts)
      expect(digest(await o200k.encodeUtf8Batch(bytes, offsets, { scheduler }))).toEqual(expected)
    }
  })
})

describe('encodeUtf8Batch', () => {
  const texts = ['hello world', '', 'naïve café 日本語 🦀', '<|endoftext|> tail', '\n']

  it('gives what encodeBatch gives, for both families', async () => {
    const { bytes, offsets } = asUtf8(texts)
    expect((await o200k.encodeUtf8Batch(bytes, offsets)).toArrays()).toEqual(
      (await o200k.encodeBatch(texts)).toArrays(),
    )
    const bert = hfTokenizer('bert')
    expect(bert.encodeUtf8BatchSync(bytes, offsets).toArrays()).toEqual(bert.encodeBatchSync(texts).toArrays())
    const options = { allowedSpecial: 'all' as const }
    expect(o200k.encodeUtf8BatchSync(bytes, offsets, options).toArrays()).toEqual(
      o200k.encodeBatchSync(texts, options).toArrays(),
    )
  })

  it('reads a view at its own offset, offsets as a plain array, and a first offset above 0', () => {
    const { bytes, offsets } = asUtf8(texts)
    const padded = new Uint8Array(bytes.length + 10)
    padded.set(bytes, 7)
    const view = padded.subarray(7, 7 + bytes.length)
    const expected = o200k.encodeBatchSync(texts).toArrays()
    expect(o200k.encodeUtf8BatchSync(view, Array.from(offsets)).toArrays()).toEqual(expected)
    const shifted = Array.from(offsets, (o) => o + 7)
    expect(o200k.encodeUtf8BatchSync(padded, shifted).toArrays()).toEqual(expected)
    expect(o200k.encodeUtf8BatchSync(padded, [3]).length).toBe(0)
  })

  it('copies the bytes: changing them after the call does not change the result', async () => {
    const { bytes, offsets } = asUtf8(texts)
    const pending = o200k.encodeUtf8Batch(bytes, offsets)
    bytes.fill(0x41)
    expect((await pending).toArrays()).toEqual(o200k.encodeBatchSync(texts).toArrays())
  })

  it('countUtf8Batch counts what encodeUtf8Batch returns', async () => {
    const docs = corpus.bigDocuments().slice(0, 40)
    const { bytes, offsets } = asUtf8(docs)
    const batch = o200k.encodeUtf8BatchSync(bytes, offsets)
    const lengths = Array.from({ length: batch.length }, (_, i) => batch.get(i).length)
    expect(Array.from(await o200k.countUtf8Batch(bytes, offsets))).toEqual(lengths)
    expect(Array.from(o200k.countUtf8BatchSync(bytes, offsets))).toEqual(lengths)
  })

  it('rejects with an AbortError when its signal fires', async () => {
    const { bytes, offsets } = asUtf8(corpus.bigDocuments())
    const controller = new AbortController()
    controller.abort()
    await expect(o200k.encodeUtf8Batch(bytes, offsets, { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    })
    expect(() => o200k.encodeUtf8BatchSync(bytes, offsets, { signal: controller.signal } as never)).toThrow(TypeError)
  })
})

describe('encodeUtf8Batch refuses bad input, saying where', () => {
  const bytes = Buffer.from('héllo日本', 'utf8') // h, é (2 bytes), llo, 日 (3), 本 (3): 12 bytes
  const cases: [string, () => unknown, ErrorConstructor, RegExp][] = [
    ['a string for bytes', () => o200k.encodeUtf8BatchSync('hello' as never, [0, 5]), TypeError, /bytes is a string; expected a Uint8Array/],
    ['a Uint16Array for bytes', () => o200k.encodeUtf8BatchSync(new Uint16Array(4) as never, [0, 1]), TypeError, /bytes is an object; expected a Uint8Array/],
    ['no offsets', () => o200k.encodeUtf8BatchSync(bytes, undefined as never), TypeError, /offsets is undefined; expected a Uint32Array or an array/],
    ['empty offsets', () => o200k.encodeUtf8BatchSync(bytes, []), Error, /offsets is empty; n texts need n \+ 1 offsets/],
    ['a fractional offset', () => o200k.encodeUtf8BatchSync(bytes, [0, 1.5]), RangeError, /offsets\[1\] is 1.5; offsets are whole numbers/],
    ['a negative offset', () => o200k.encodeUtf8BatchSync(bytes, [-1, 3]), RangeError, /offsets\[0\] is -1/],
    ['decreasing offsets', () => o200k.encodeUtf8BatchSync(bytes, [0, 6, 3]), Error, /offsets\[2\] is 3, below offsets\[1\] = 6/],
    ['an offset past the end', () => o200k.encodeUtf8BatchSync(bytes, [0, 13]), Error, /last offset is 13, past the end of the 12 bytes/],
    ['an offset inside a character', () => o200k.encodeUtf8BatchSync(bytes, [0, 2, 12]), Error, /offsets\[1\] = 2 falls inside a multi-byte UTF-8 character/],
    ['bytes that are not UTF-8', () => o200k.encodeUtf8BatchSync(Buffer.from([0x61, 0x62, 0xff, 0x63]), [0, 2, 4]), Error, /text 1 is not valid UTF-8 \(at byte 2 of the buffer\)/],
  ]
  it.each(cases)('%s', (_name, call, kind, message) => {
    let thrown: unknown
    try {
      call()
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(kind)
    expect((thrown as Error).message).toMatch(message)
  })

  it('bytes that are not UTF-8 carry the text as itemIndex', () => {
    expect(() => o200k.encodeUtf8BatchSync(Buffer.from([0x61, 0x62, 0xff, 0x63]), [0, 1, 2, 4])).toThrow(
      expect.objectContaining({ itemIndex: 2 }),
    )
  })

  it('the async form rejects with the same errors before it starts', async () => {
    await expect(o200k.encodeUtf8Batch(bytes, [0, 2, 12])).rejects.toThrow(/falls inside a multi-byte UTF-8 character/)
    await expect(o200k.countUtf8Batch(bytes, [0, 13])).rejects.toThrow(/past the end/)
  })
})

describe('scheduler stats', () => {
  it('count the engine locks of a batch: two per worker, none per text', async () => {
    const texts = corpus.bigShortItems().slice(0, 100)
    // A sink (one worker's output) leases the engine's working memory once: serial and chunked
    // have one per thread that ran a chunk, rayon one per leaf job.
    const workers = (stats: BatchStats) => (stats.policy.startsWith('rayon') ? stats.chunks : stats.threadsUsed)
    await o200k.whenReady()
    // The stable engine a tokenizer.json encodes on until its release candidate is built takes no
    // such locks: the count is the release candidate's.
    const bert = hfTokenizer('bert')
    await bert.whenReady()
    for (const policy of ['chunked', 'serial', 'rayon'] as const) {
      const scheduler = new Scheduler({ threads: 2, policy })
      await o200k.encodeBatch(texts, { scheduler })
      const stats = scheduler.stats()!
      expect(stats.items).toBe(texts.length)
      expect(stats.engineLocks).toBe(2 * workers(stats))
      expect(stats.engineLocks).toBeLessThan(texts.length)
      const { bytes, offsets } = asUtf8(texts)
      // BERT truncates and adds template tokens: the same path, the same two locks per worker.
      await bert.countUtf8Batch(bytes, offsets, { scheduler })
      expect(scheduler.stats()!.engineLocks).toBe(2 * workers(scheduler.stats()!))
    }
  })

  it('say how many claim cursors a batch was dealt to: one below 65 threads, none off the chunked policy', async () => {
    const texts = corpus.bigDocuments().slice(0, 40)
    for (const [policy, cursors] of [['chunked', 1], ['serial', 0], ['rayon', 0]] as const) {
      const scheduler = new Scheduler({ threads: 2, policy })
      await o200k.encodeBatch(texts, { scheduler })
      expect(scheduler.stats()!.cursors, policy).toBe(cursors)
    }
  })

  it('count no lock for the texts of the exact path', async () => {
    // U+061D is one of the characters o200k_base's fast path reads differently from tiktoken
    // (src/engine/unicode_drift.rs): a text holding it goes to the exact path, tiktoken's BPE on
    // the rank table, which keeps its working memory per thread and leases none.
    const plain = ['plain text', 'more plain text']
    const drift = ['drift \u061d', 'more drift \u061d']
    const scheduler = new Scheduler({ threads: 1, policy: 'serial' })
    await o200k.whenReady()
    await o200k.encodeBatch(plain, { scheduler })
    expect(scheduler.stats()!.engineLocks).toBe(2)
    await o200k.encodeBatch([...drift, ...plain], { scheduler })
    expect(scheduler.stats()!.engineLocks).toBe(2)
    await o200k.encodeBatch(drift, { scheduler })
    expect(scheduler.stats()!.engineLocks).toBe(0)
  })
})
