// batchtok/stream: documents in, token batches out, in order, with bounded memory.
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { batchtok, fixture, type Texts } from './helpers'

const require = createRequire(import.meta.url)
const stream = require('../stream/index.js') as typeof import('../stream/index')

const tokenizer = batchtok.Tokenizer.fromEncoding('o200k_base')
const texts = fixture<Texts>('texts.json').cases.map((c) => c.text)
/** Every second text as UTF-8 bytes: both kinds in one stream. */
const documents = texts.map((text, i) => (i % 2 ? Buffer.from(text) : text))

/** The documents' ids, in order, from a stream of token batches. */
async function idsOf(batches: AsyncIterable<import('../stream/index').TokenBatch>): Promise<number[][]> {
  const out: number[][] = []
  for await (const batch of batches) {
    for (let i = 0; i < batch.documents; i++) out.push(Array.from(batch.ids.subarray(batch.offsets[i], batch.offsets[i + 1])))
  }
  return out
}

describe('encodeStream', () => {
  it.each([1, 100, 5000, 1 << 22])('batches of %i bytes: ids equal encodeBatch, in order', async (batchBytes) => {
    const expected = (await tokenizer.encodeBatch(texts)).toArrays()
    expect(await idsOf(stream.encodeStream(tokenizer, documents, { batchBytes }))).toEqual(expected)
  })

  it('eosId follows every document', async () => {
    const expected = (await tokenizer.encodeBatch(texts)).toArrays().map((ids) => [...ids, 199999])
    expect(await idsOf(stream.encodeStream(tokenizer, documents, { batchBytes: 3000, eosId: 199999 }))).toEqual(expected)
  })

  it('reads ahead at most one batch: a consumer that stops, stops the reading', async () => {
    let pulled = 0
    async function* source() {
      for (let i = 0; i < 10_000; i++) {
        pulled++
        yield `document ${i}`
      }
    }
    const batches = stream.encodeStream(tokenizer, source(), { batchDocuments: 100 })
    await batches.next()
    // The first batch's result waits for the second to start: 200 documents read, plus the one
    // that the third batch's gathering has begun.
    expect(pulled).toBeLessThanOrEqual(201)
    await batches.return(undefined)
  })

  it('an error about one document names it by its index in the stream', async () => {
    const strings = ['a', 'b', 'c', 'd <|endoftext|>', 'e']
    const disallowed = stream.encodeStream(tokenizer, strings, { batchDocuments: 2, encodeOptions: { disallowedSpecial: 'all' } })
    await expect(idsOf(disallowed)).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/^document 3 of the stream: item 1 of the batch failed: .*disallowed special token "<\|endoftext\|>"/),
        documentIndex: 3,
        itemIndex: 1,
      }),
    )
    // Strings, then bytes: the byte batch starts at document 2.
    const mixed = ['a', 'b', Buffer.from('c'), Buffer.from('d'), Buffer.from([0x65, 0xff])]
    await expect(idsOf(stream.encodeStream(tokenizer, mixed))).rejects.toThrow(
      expect.objectContaining({ message: expect.stringMatching(/^document 4 of the stream: text 2 is not valid UTF-8/), documentIndex: 4 }),
    )
    const transform = stream.createEncodeStream(tokenizer, { batchDocuments: 2 })
    const sink = new Writable({ objectMode: true, write: (_batch, _encoding, callback) => callback() })
    await expect(pipeline(Readable.from(mixed), transform, sink)).rejects.toThrow(expect.objectContaining({ documentIndex: 4 }))
  })

  it('a document that is not text is a TypeError naming it', async () => {
    await expect(idsOf(stream.encodeStream(tokenizer, ['a', 3 as unknown as string]))).rejects.toThrow(
      /document 1 is number; expected a string, a Buffer or a Uint8Array of UTF-8/,
    )
  })
})

describe('encodeOne', () => {
  it("a failed batch of any kind rejects with the batch's source on the error", async () => {
    const source = { file: 'shard-7.jsonl' }
    const disallowed = { encodeOptions: { disallowedSpecial: 'all' as const } }
    const bad = [
      [{ texts: ['a', 'b <|endoftext|>'], source }, disallowed, /item 1 of the batch failed/],
      [{ bytes: Buffer.from('ab\xff', 'latin1'), offsets: [0, 1, 3], source }, {}, /text 1 is not valid UTF-8/],
      [{ lines: Buffer.from('{"text":"a"}\n{"body":"b"}\n'), format: 'jsonl', field: 'text', source }, {}, /line 2/],
    ] as const
    for (const [batch, options, message] of bad) {
      await expect(stream.encodeOne(tokenizer, batch, options)).rejects.toThrow(expect.objectContaining({ source, message: expect.stringMatching(message) }))
    }
    const ok = await stream.encodeOne(tokenizer, { texts: ['a'], source })
    expect(ok.source).toBe(source)
  })
})

describe('documentsIn and bytesIn', () => {
  it('count the documents and the text bytes of every kind of batch', () => {
    const texts = { texts: ['é', 'ab'] }
    const bytes = { bytes: Buffer.from('xxabcdef'), offsets: Uint32Array.of(2, 5, 8) }
    const lines = { lines: Buffer.from('{"text":"a"}\n\n'), format: 'jsonl' as const, field: 'text' }
    expect([texts, bytes, lines].map((batch) => stream.documentsIn(batch))).toEqual([2, 2, NaN])
    expect([texts, bytes, lines].map((batch) => stream.bytesIn(batch))).toEqual([4, 6, 14])
  })
})

describe('options', () => {
  type Options = import('../stream/index').EncodeStreamOptions
  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['an unknown name', { addSpecialTokens: false }, /options\.addSpecialTokens is not an option of \w+ .*goes in encodeOptions/],
    ['an eosId below 0', { eosId: -1 }, /options\.eosId -1 is not an id of this tokenizer \(0 to 200018\)/],
    ['an eosId past the vocabulary', { eosId: 2 ** 32 }, /options\.eosId 4294967296 is not an id/],
    ['an eosId that is not a number', { eosId: '199999' }, /options\.eosId is string; expected a token id/],
    ['a batch of no bytes', { batchBytes: 0 }, /options\.batchBytes is 0; expected a whole number of at least 1/],
    ['a batch of half a document', { batchDocuments: 0.5 }, /options\.batchDocuments is 0\.5/],
  ]

  it.each(bad)('%s is an error naming the option, before any work', async (_, options, message) => {
    const opts = options as Options
    expect(() => stream.encodeStream(tokenizer, ['a'], opts)).toThrow(message)
    expect(() => stream.createEncodeStream(tokenizer, opts)).toThrow(message)
    await expect(stream.encodeOne(tokenizer, { texts: ['a'] }, opts)).rejects.toThrow(message)
    await expect(idsOf(stream.encodeBatches(tokenizer, [], opts))).rejects.toThrow(message)
  })

  it('documents that are one string, or not iterable, are a TypeError', () => {
    expect(() => stream.encodeStream(tokenizer, 'one text' as unknown as string[])).toThrow(/documents is a string.*pass \[text\]/)
    expect(() => stream.encodeStream(tokenizer, 5 as unknown as string[])).toThrow(/documents must be an iterable/)
  })
})

describe('createEncodeStream', () => {
  it('a pipeline of documents to batches: ids equal encodeBatch', async () => {
    const expected = (await tokenizer.encodeBatch(texts)).toArrays()
    const out: number[][] = []
    await pipeline(
      Readable.from(documents),
      stream.createEncodeStream(tokenizer, { batchBytes: 2000 }),
      new Writable({
        objectMode: true,
        write(batch, _encoding, callback) {
          for (let i = 0; i < batch.documents; i++) out.push(Array.from(batch.ids.subarray(batch.offsets[i], batch.offsets[i + 1])))
          callback()
        },
      }),
    )
    expect(out).toEqual(expected)
  })

  it('backpressure: with no reader, the writable side fills and refuses more', async () => {
    const transform = stream.createEncodeStream(tokenizer, { batchDocuments: 10 })
    let accepted = 0
    while (transform.write(`document ${accepted}`)) {
      accepted++
      await new Promise((resolve) => setImmediate(resolve))
      if (accepted > 1000) break
    }
    expect(accepted).toBeLessThan(100)
    transform.destroy()
  })
})
