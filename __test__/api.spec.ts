// The shape and behaviour of the public API, beyond parity: BatchEncoding, countBatch, decoding,
// special tokens, UTF-16 edge cases, cancellation and the event loop.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { inspect } from 'node:util'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { batchtok, corpus, hfTokenizer } from './helpers'

const require = createRequire(import.meta.url)

const { Tokenizer, Scheduler } = batchtok
const o200k = Tokenizer.fromEncoding('o200k_base')

describe('BatchEncoding', () => {
  it('reads in console.log as its length and first ids, and in JSON as arrays of numbers', () => {
    const batch = o200k.encodeBatchSync(['hello world', '', 'x'.repeat(200)])
    const shown = inspect(batch)
    expect(shown).toMatch(/^BatchEncoding\(3\) \[ \[ 24912, 2375 \], \[  \], \[ /)
    expect(shown).toMatch(/\.\.\. \d+ more \] \]$/)
    expect(inspect(o200k.encodeBatchSync(Array(20).fill('hi')))).toMatch(/\.\.\. 12 more texts \]$/)
    expect(JSON.parse(JSON.stringify(batch))).toEqual(batch.toArrays())
    expect(JSON.parse(JSON.stringify({ batch })).batch[0]).toEqual([24912, 2375])
  })

  it('hands out typed arrays: map keeps the type, Array.from gives numbers', () => {
    const ids = o200k.encodeBatchSync(['hello world']).get(0)
    expect(ids.map((id) => id + 1)).toBeInstanceOf(Uint32Array)
    expect(Array.from(ids)).toEqual([24912, 2375])
  })

  const texts = ['hello world', '', 'The quick brown fox', 'naïve café 日本語']

  it('holds every text ids back to back, with length + 1 offsets', async () => {
    const batch = await o200k.encodeBatch(texts)
    expect(batch.length).toBe(texts.length)
    expect(batch.ids).toBeInstanceOf(Uint32Array)
    expect(batch.offsets).toBeInstanceOf(Uint32Array)
    expect(batch.offsets.length).toBe(texts.length + 1)
    expect(batch.offsets[0]).toBe(0)
    expect(batch.offsets[texts.length]).toBe(batch.ids.length)
    texts.forEach((text, i) => {
      const expected = Array.from(o200k.encode(text))
      expect(Array.from(batch.ids.subarray(batch.offsets[i], batch.offsets[i + 1]))).toEqual(expected)
      expect(Array.from(batch.get(i))).toEqual(expected)
    })
  })

  it('get(i) is a view into ids, not a copy', async () => {
    const batch = await o200k.encodeBatch(texts)
    const view = batch.get(2)
    expect(view.buffer).toBe(batch.ids.buffer)
    view[0] = 12345
    expect(batch.ids[batch.offsets[2]]).toBe(12345)
  })

  it('iterates over the texts in order, more than once', async () => {
    const batch = await o200k.encodeBatch(texts)
    const first = [...batch].map((ids) => Array.from(ids))
    const second = Array.from(batch, (ids) => Array.from(ids))
    expect(first).toEqual(batch.toArrays())
    expect(second).toEqual(first)
  })

  it('toArrays returns plain arrays of numbers', async () => {
    const arrays = (await o200k.encodeBatch(texts)).toArrays()
    expect(Array.isArray(arrays[0])).toBe(true)
    expect(arrays.map((a) => a.length)).toEqual(texts.map((t) => o200k.encode(t).length))
  })

  it('handles an empty batch', async () => {
    const batch = await o200k.encodeBatch([])
    expect(batch.length).toBe(0)
    expect(Array.from(batch.offsets)).toEqual([0])
    expect([...batch]).toEqual([])
  })

  it('encodeBatchSync returns what encodeBatch resolves to', async () => {
    const docs = corpus.bigDocuments().slice(0, 50)
    expect(o200k.encodeBatchSync(docs).toArrays()).toEqual((await o200k.encodeBatch(docs)).toArrays())
  })
})

describe('countBatch', () => {
  it('counts what encodeBatch returns untruncated, for both families', async () => {
    const docs = corpus.bigShortItems().slice(0, 2000)
    for (const tokenizer of [o200k, hfTokenizer('bert')]) {
      // A count is a text's true size; bert.json's own truncation applies to encodeBatch alone.
      const batch = await tokenizer.encodeBatch(docs, tokenizer === o200k ? {} : { truncation: false })
      const counts = await tokenizer.countBatch(docs)
      expect(counts).toBeInstanceOf(Uint32Array)
      expect(Array.from(counts)).toEqual(docs.map((_, i) => batch.offsets[i + 1] - batch.offsets[i]))
      expect(Array.from(tokenizer.countBatchSync(docs))).toEqual(Array.from(counts))
    }
  })
})

describe('decode', () => {
  it('round-trips text through every OpenAI encoding', () => {
    const text = 'Hello, wörld! 日本語 👨‍👩‍👧 <|endoftext|>\r\n\ttabs'
    for (const name of ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'gpt2']) {
      const tokenizer = Tokenizer.fromEncoding(name)
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text)
      expect(tokenizer.decode(Array.from(tokenizer.encode(text)))).toBe(text)
    }
  })

  it('spells special tokens, or leaves them out', () => {
    const ids = o200k.encode('a<|endoftext|>b<|endofprompt|>', { allowedSpecial: 'all' })
    expect(Array.from(ids)).toContain(199999)
    expect(Array.from(ids)).toContain(200018)
    expect(o200k.decode(ids)).toBe('a<|endoftext|>b<|endofprompt|>')
    expect(o200k.decode(ids, { skipSpecialTokens: true })).toBe('ab')
  })

  it('decodes a Hugging Face tokenizer as tokenizers does', () => {
    const bert = hfTokenizer('bert')
    expect(bert.decode(bert.encode('Hello world'))).toBe('[CLS] hello world [SEP]')
    expect(bert.decode(bert.encode('Hello world'), { skipSpecialTokens: true })).toBe('hello world')
  })

  it('decodeBatch decodes each list', async () => {
    const texts = ['one', 'two three', '']
    const lists = texts.map((t) => o200k.encode(t))
    expect(await o200k.decodeBatch(lists)).toEqual(texts)
    expect(o200k.decodeBatchSync(lists)).toEqual(texts)
  })
})

describe('special tokens in the OpenAI family', () => {
  it('encodes special-token text as ordinary text by default, as encode_ordinary', () => {
    const ids = Array.from(o200k.encode('<|endoftext|>'))
    expect(ids).not.toContain(199999)
    expect(o200k.decode(ids)).toBe('<|endoftext|>')
  })

  it('turns only the allowed special tokens into ids', () => {
    const cl100k = Tokenizer.fromEncoding('cl100k_base')
    const ids = Array.from(cl100k.encode('<|fim_prefix|>x<|endoftext|>', { allowedSpecial: ['<|endoftext|>'] }))
    expect(ids).toContain(100257)
    expect(ids).not.toContain(100258)
  })
})

describe('strings JS cannot encode as UTF-8', () => {
  it('encodes lone surrogates as U+FFFD, as TextEncoder does', () => {
    const texts = ['a\uD800b', '\uDC00', 'x\uD83D', '\uDE00y', 'ok \uD83D\uDE00']
    for (const text of texts) {
      const asTextEncoder = new TextDecoder().decode(new TextEncoder().encode(text))
      expect(Array.from(o200k.encode(text))).toEqual(Array.from(o200k.encode(asTextEncoder)))
      expect(o200k.decode(o200k.encode(text))).toBe(asTextEncoder)
    }
  })
})

describe('worst cases stay linear', () => {
  it.each([
    ['a', 'a'],
    ['spaces', ' '],
    ['digits', '7'],
    ['base64', 'QmFzZTY0IGlzIGZ1bg+/'],
  ])('encodes 1 MB of %s', (_, unit) => {
    const text = unit.repeat(Math.ceil(1_000_000 / unit.length))
    const ids = o200k.encode(text)
    expect(ids.length).toBeGreaterThan(0)
    expect(o200k.decode(ids)).toBe(text)
  })
})

describe('async batches', () => {
  it("reject an abort with an AbortError whose cause is the signal's reason, decodeBatch too", async () => {
    const controller = new AbortController()
    const reason = new Error('the user left')
    controller.abort(reason)
    for (const call of [
      () => o200k.encodeBatch(['a', 'b'], { signal: controller.signal }),
      () => o200k.countBatch(['a'], { signal: controller.signal }),
      () => o200k.decodeBatch([[24912], [2375]], { signal: controller.signal }),
    ]) {
      const error = await call().then(
        () => null,
        (e: Error) => e,
      )
      expect(error).toBeInstanceOf(Error)
      expect(error!.name).toBe('AbortError')
      expect((error as Error & { code: string }).code).toBe('ABORT_ERR')
      expect(error!.cause).toBe(reason)
    }
  })

  it('leave the event loop free while a large batch runs', async () => {
    const docs = corpus.bigDocuments()
    const scheduler = new Scheduler({ threads: 1, policy: 'serial' })
    let ticks = 0
    const timer = setInterval(() => ticks++, 1)
    const delay = monitorEventLoopDelay({ resolution: 1 })
    delay.enable()
    const batch = await o200k.encodeBatch(docs, { scheduler })
    delay.disable()
    clearInterval(timer)
    expect(batch.length).toBe(docs.length)
    // The timer kept firing while the batch ran on another thread. (Counted, not timed.)
    expect(ticks).toBeGreaterThan(1)
  })

  it('reject with an AbortError when the signal has already fired', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(o200k.encodeBatch(['x'], { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
      code: 'ABORT_ERR',
    })
    await expect(o200k.countBatch(['x'], { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('reject with an AbortError when the signal fires mid-batch, and the next batch works', async () => {
    const docs = corpus.bigDocuments()
    const many = Array.from({ length: 20 }, () => docs).flat()
    const controller = new AbortController()
    const pending = o200k.encodeBatch(many, { signal: controller.signal, scheduler: new Scheduler({ threads: 1 }) })
    setImmediate(() => controller.abort())
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    const after = await o200k.encodeBatch(['still works'])
    expect(after.length).toBe(1)
  })

  it('run many at once, each with its own result', async () => {
    const items = corpus.bigShortItems().slice(0, 400)
    const results = await Promise.all(items.map((item) => o200k.encodeBatch([item, item])))
    results.forEach((batch, i) => {
      const expected = Array.from(o200k.encode(items[i]))
      expect(Array.from(batch.get(0))).toEqual(expected)
      expect(Array.from(batch.get(1))).toEqual(expected)
    })
  })
})

describe('whenReady', () => {
  it("resolves once an OpenAI encoding's release-candidate engine takes every text", async () => {
    // The rank-table engine that encodes first takes no engine lock; the release candidate takes
    // one per worker, so a serial batch right after whenReady shows whether it is the one encoding.
    const tokenizer = batchtok.Tokenizer.fromEncoding('cl100k_base')
    await expect(tokenizer.whenReady()).resolves.toBeUndefined()
    expect(tokenizer.routing).toMatch(/^pipeline: tokenizers 1\.0\.0-rc\.3 encodes every text on its own matcher/)
    expect(tokenizer.routing).not.toMatch(/until the release candidate is built/)
    const scheduler = new batchtok.Scheduler({ threads: 1, policy: 'serial' })
    await tokenizer.encodeBatch(['plain text'], { scheduler })
    expect(scheduler.stats()!.engineLocks).toBeGreaterThan(0)
  })

  it("resolves once a Hugging Face tokenizer's release candidate is built, with the same ids", async () => {
    // fromFile returns once the stable engine is built; the release candidate follows on a
    // thread of its own, and routing says which engine encodes until then.
    const tokenizer = hfTokenizer('gpt2')
    const texts = ['Hello, world!', 'naïve café 日本語 12345', ' \u{1F8D1} new in Unicode 17']
    const before = texts.map((text) => Array.from(tokenizer.encode(text)))
    expect(tokenizer.routing).toMatch(/^(stable: .* while the 1\.0 release candidate is built|pipeline:)/)
    await expect(tokenizer.whenReady()).resolves.toBeUndefined()
    expect(tokenizer.routing).toMatch(/^pipeline: tokenizers 1\.0\.0-rc\.3 encodes every text$/)
    expect(texts.map((text) => Array.from(tokenizer.encode(text)))).toEqual(before)
    const scheduler = new batchtok.Scheduler({ threads: 1, policy: 'serial' })
    await tokenizer.encodeBatch(['plain text'], { scheduler })
    expect(scheduler.stats()!.engineLocks).toBeGreaterThan(0)
  })

  it('engineWaitBytes: 16 a token of a tokenizer.json, 32 MiB for an encoding', () => {
    const gpt2 = hfTokenizer('gpt2')
    expect(gpt2.engineWaitBytes).toBe(16 * gpt2.vocabSize)
    expect(batchtok.Tokenizer.fromEncoding('o200k_base').engineWaitBytes).toBe(32 << 20)
  })

  it('a batch call of engineWaitBytes waits for the release candidate; a small one does not', async () => {
    // Gemma 3's file: its release candidate is built over half a second after the load returns,
    // far longer than the stable engine takes for a few texts.
    const { ensureRealTokenizers } = require('../scripts/real-tokenizers.js') as { ensureRealTokenizers(names: string[]): Record<string, string> }
    const building = /while the 1\.0 release candidate is built/
    const small = batchtok.Tokenizer.fromFile(ensureRealTokenizers(['gemma3']).gemma3)
    await small.encodeBatch(['a few words', 'and a few more'])
    expect(small.routing).toMatch(building)
    const large = batchtok.Tokenizer.fromFile(ensureRealTokenizers(['gemma3']).gemma3)
    const lines = corpus.bigTxt().slice(0, large.engineWaitBytes * 1.1).split('\n')
    expect(lines.reduce((bytes, line) => bytes + Buffer.byteLength(line), 0)).toBeGreaterThanOrEqual(large.engineWaitBytes)
    expect(large.routing).toMatch(building)
    const ids = await large.encodeBatch(lines)
    expect(large.routing).not.toMatch(building)
    await small.whenReady()
    expect(ids.toArrays()).toEqual((await small.encodeBatch(lines)).toArrays())
  }, 60_000)
})
