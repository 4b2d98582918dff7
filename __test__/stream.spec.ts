// batchtok/stream: documents in, token batches out, in order, with bounded memory.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { batchtok, corpus, expectWordGap, fixture, FIXTURES, gpt2WithTemplate, llama2Shaped, metaspaceShaped, typeCheck, type Texts } from './helpers'

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
        code: 'ERR_DISALLOWED_SPECIAL_TOKEN',
        token: '<|endoftext|>',
        index: 2,
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

  it('a tokenizer that is none is a TypeError naming the call', async () => {
    type AnyTokenizer = Parameters<typeof stream.encodeStream>[0]
    for (const [given, said] of [[null, 'null'], [undefined, 'undefined'], ['o200k_base', 'string'], [{}, 'object']] as const) {
      const none = given as unknown as AnyTokenizer
      const message = new RegExp(`tokenizer is ${said}; expected a batchtok Tokenizer \\(Tokenizer\\.fromEncoding`)
      expect(() => stream.encodeStream(none, ['a'])).toThrow(message)
      expect(() => stream.createEncodeStream(none)).toThrow(message)
      await expect(stream.encodeOne(none, { texts: ['a'] })).rejects.toThrow(message)
      await expect(idsOf(stream.encodeBatches(none, []))).rejects.toThrow(message)
    }
  })

  it('a batch of no kind is a TypeError saying what it is and what a batch holds', async () => {
    const kinds = /expected \{ texts \}, \{ bytes, offsets \} or \{ lines, format \} \(a DocumentBatch\)$/
    const cases: [unknown, string][] = [
      [null, 'null'],
      [5, 'number'],
      [[], 'an array'],
      [{}, 'an object with no keys'],
      [{ text: 'a', offsets: [0, 1] }, 'an object with text, offsets'],
    ]
    for (const [batch, said] of cases) {
      const message = new RegExp(`^a batch is ${said}; ${kinds.source}`)
      await expect(stream.encodeOne(tokenizer, batch as import('../stream/index').DocumentBatch)).rejects.toThrow(message)
      await expect(idsOf(stream.encodeBatches(tokenizer, [{ texts: ['fine'] }, batch as import('../stream/index').DocumentBatch]))).rejects.toThrow(message)
    }
  })
})

/** Lets every settled promise run its callbacks. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

/**
 * A stand-in tokenizer whose batches wait from `engineWaitBytes`: its batch calls say how many
 * documents they start, and its `whenReady()` waits until the test calls `markReady`.
 */
function buildingTokenizer(engineWaitBytes: number) {
  const events: string[] = []
  let markReady = () => {}
  const ready = new Promise<void>((resolve) => (markReady = resolve))
  const standIn = {
    engineWaitBytes,
    idLimit: 1000,
    whenReady() {
      events.push('wait')
      return ready
    },
    async encodeBatch(texts: string[]) {
      events.push(`encode ${texts.length}`)
      return { ids: Uint32Array.from(texts, (text) => text.length), offsets: Uint32Array.from({ length: texts.length + 1 }, (_, i) => i) }
    },
  }
  return { tokenizer: standIn as unknown as typeof tokenizer, events, markReady: () => markReady() }
}

describe("waiting for the tokenizer's fastest engine", () => {
  const tenDocuments = Array.from({ length: 10 }, (_, i) => String(i).repeat(2000))

  it('a stream waits before the batch that reaches half of engineWaitBytes, and never again', async () => {
    const { tokenizer: building, events, markReady } = buildingTokenizer(32_000)
    const done = idsOf(stream.encodeStream(building, tenDocuments, { batchBytes: 4000 }))
    for (let i = 0; i < 20; i++) await settle()
    // Batches of two documents (4,000 bytes): the fourth reaches 16,000 and waits.
    expect(events).toEqual(['encode 2', 'encode 2', 'encode 2', 'wait'])
    markReady()
    const ids = await done
    expect(events).toEqual(['encode 2', 'encode 2', 'encode 2', 'wait', 'encode 2', 'encode 2'])
    expect(ids).toEqual(tenDocuments.map(() => [2000]))
  })

  it('a stream shorter than that never waits', async () => {
    const short = buildingTokenizer(32_000)
    await idsOf(stream.encodeStream(short.tokenizer, tenDocuments.slice(0, 7), { batchBytes: 4000 }))
    expect(short.events).toEqual(['encode 2', 'encode 2', 'encode 2', 'encode 1'])
    const encoding = buildingTokenizer(32 << 20)
    await idsOf(stream.encodeStream(encoding.tokenizer, tenDocuments, { batchBytes: 4000 }))
    expect(encoding.events).not.toContain('wait')
  })

  it('createEncodeStream waits the same way', async () => {
    const { tokenizer: building, events, markReady } = buildingTokenizer(32_000)
    const transform = stream.createEncodeStream(building, { batchBytes: 4000 })
    const batches: unknown[] = []
    transform.on('data', (batch) => batches.push(batch))
    const ended = new Promise((resolve) => transform.on('end', resolve))
    for (const document of tenDocuments) transform.write(document)
    transform.end()
    for (let i = 0; i < 20; i++) await settle()
    expect(events).toEqual(['encode 2', 'encode 2', 'encode 2', 'wait'])
    markReady()
    await ended
    expect(events.filter((event) => event === 'wait')).toHaveLength(1)
    expect(batches).toHaveLength(5)
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

describe('encodeLineStream and batchLines', () => {
  /** Fixture texts that fit on one line, as a text file holds them. */
  const lines = texts.filter((text) => !/[\r\n]/.test(text))
  /** `bytes` in chunks of `size` bytes, cut anywhere (inside a character too). */
  function* chunksOf(bytes: Buffer, size: number) {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
  }

  it.each([
    [7, 1],
    [1000, 3000],
    [65536, 1 << 22],
  ])('text in chunks of %i bytes, batches of %i: a document per line, ids equal encodeBatch', async (chunk, batchBytes) => {
    // CRLF and LF line ends, a blank line, and a last line without a line end.
    const text = lines.map((line, i) => line + (i % 3 ? '\n' : '\r\n')).join('') + '\nlast'
    const documents = [...lines, '', 'last']
    const expected = (await tokenizer.encodeBatch(documents)).toArrays()
    let lineCount = 0
    const out: number[][] = []
    for await (const batch of stream.encodeLineStream(tokenizer, chunksOf(Buffer.from(text), chunk), { batchBytes })) {
      lineCount += batch.lines!
      out.push(...(await idsOf([batch])))
    }
    expect(out).toEqual(expected)
    expect(lineCount).toBe(documents.length)
  })

  it('gzipped JSONL from a file stream, with a byte order mark and blank lines: ids equal encodeBatch of each record\'s field', async () => {
    const { createReadStream, mkdtempSync, rmSync, writeFileSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const { createGunzip, gzipSync } = await import('node:zlib')
    const folder = mkdtempSync(join(tmpdir(), 'batchtok-lines-'))
    try {
      const records = texts.map((text, i) => JSON.stringify({ id: i, body: text }) + (i % 5 ? '\n' : '\n\n'))
      writeFileSync(join(folder, 'docs.jsonl.gz'), gzipSync('\ufeff' + records.join('')))
      const chunks = createReadStream(join(folder, 'docs.jsonl.gz'), { highWaterMark: 4096 }).pipe(createGunzip())
      const ids = await idsOf(stream.encodeLineStream(tokenizer, chunks, { format: 'jsonl', field: 'body', batchBytes: 5000, eosId: 199999 }))
      expect(ids).toEqual((await tokenizer.encodeBatch(texts)).toArrays().map((each) => [...each, 199999]))
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })

  it('strings from a Readable in text mode, through stream.pipeline', async () => {
    const out: number[][] = []
    await pipeline(
      Readable.from(['héllo\nwor', 'ld\n日本', '語\n']),
      (chunks: AsyncIterable<string>) => stream.encodeLineStream(tokenizer, chunks),
      new Writable({
        objectMode: true,
        write(batch, _encoding, callback) {
          idsOf([batch]).then((ids) => (out.push(...ids), callback()), callback)
        },
      }),
    )
    expect(out).toEqual((await tokenizer.encodeBatch(['héllo', 'world', '日本語'])).toArrays())
  })

  it('a line longer than a batch is a batch of its own; the lines around it are cut at line ends', async () => {
    const long = 'word '.repeat(5000)
    const batches = []
    for await (const batch of stream.batchLines(chunksOf(Buffer.from(`a\n${long}\nb\nc\n`), 100), { batchBytes: 1000 })) {
      batches.push(Buffer.from(batch.lines).toString())
    }
    expect(batches.join('')).toBe(`a\n${long}\nb\nc\n`)
    expect(batches.every((batch) => batch.endsWith('\n'))).toBe(true)
    expect(batches.some((batch) => batch.includes(long) && batch.length <= long.length + 104)).toBe(true)
  })

  describe('a line longer than a batch, in parts', () => {
    const big = corpus.bigTxt()
    /** Prose on one line, `bytes` long, from `from` in big.txt. */
    const prose = (from: number, bytes: number) => big.slice(from, from + bytes).replace(/\s/g, ' ')
    const partsLines = ['short', prose(0, 40_000), '', 'ひらがな'.repeat(3000), prose(50_000, 9_000) + ' <|endoftext|> x', 'last']
    const text = Buffer.from(partsLines.join('\n') + '\n')

    /** The documents' ids from batches, each document whose batch `continues` joined to the next. */
    async function joinedIdsOf(batches: AsyncIterable<import('../stream/index').TokenBatch>) {
      const out: number[][] = []
      let open: number[] | null = null
      let continuing = 0
      for await (const batch of batches) {
        if (batch.continues) continuing++
        // A long JSONL record whose field comes again: the open document starts over.
        if (batch.restarts) open = null
        for (let i = 0; i < batch.documents; i++) {
          const ids = Array.from(batch.ids.subarray(batch.offsets[i], batch.offsets[i + 1]))
          const joined: number[] = open === null ? ids : open.concat(ids)
          open = null
          if (batch.continues && i === batch.documents - 1) open = joined
          else out.push(joined)
        }
      }
      expect(open).toBe(null)
      return { ids: out, continuing }
    }

    it.each([
      [777, 2000],
      [1, 5000],
      [65536, 4096],
    ])('chunks of %i bytes, batches of %i: the joined ids equal encodeBatch, EOS only at a line end', async (chunk, batchBytes) => {
      const expected = (await tokenizer.encodeBatch(partsLines)).toArrays().map((ids) => [...ids, 199999])
      const run = await joinedIdsOf(stream.encodeLineStream(tokenizer, chunksOf(text, chunk), { batchBytes, longLines: 'parts', eosId: 199999 }))
      expect(run.ids).toEqual(expected)
      expect(run.continuing).toBeGreaterThan(3)
      // Whole, the long lines come as they are.
      const whole = await joinedIdsOf(stream.encodeLineStream(tokenizer, chunksOf(text, chunk), { batchBytes, eosId: 199999 }))
      expect(whole).toEqual({ ids: expected, continuing: 0 })
    })

    it.each([false, true])(
      'a tokenizer.json with template tokens around each text (after too: %s): cut, encoded without them, and given them once a line',
      async (after) => {
        const templated = batchtok.Tokenizer.fromJSON(JSON.stringify(gpt2WithTemplate({ after })))
        for (const encodeOptions of [{}, { addSpecialTokens: true }, { addSpecialTokens: false }]) {
          const options = { batchBytes: 2000, longLines: 'parts' as const, encodeOptions, eosId: 0 }
          const run = await joinedIdsOf(stream.encodeLineStream(templated, chunksOf(text, 777), options))
          const want = (await templated.encodeBatch(partsLines, encodeOptions)).toArrays().map((ids) => [...ids, 0])
          expect(run.ids).toEqual(want)
          expect(run.continuing).toBeGreaterThan(3)
        }
        // Whole, the engine puts them.
        const whole = await joinedIdsOf(stream.encodeLineStream(templated, chunksOf(text, 777), { batchBytes: 2000 }))
        expect(whole).toEqual({ ids: (await templated.encodeBatch(partsLines)).toArrays().map((ids) => [...ids]), continuing: 0 })
      },
    )

    it.each([
      ["Llama 2's shape (a `▁` put before each text): the part after each cut is encoded without the space it begins at", llama2Shaped(), 1],
      ['a Metaspace pre-tokenizer (a `▁` put before a text that does not begin with a space): cut at spaces', metaspaceShaped('first'), 1],
      ["XLM-RoBERTa's shape (a character map before a Metaspace that splits): cut at spaces the map leaves alone", fixture<object>('tokenizers/sentencepiece.json'), 0],
    ])('%s', async (_name, file, bos) => {
      const sentencePiece = batchtok.Tokenizer.fromJSON(JSON.stringify(file))
      const want = (await sentencePiece.encodeBatch(partsLines)).toArrays().map((ids) => [...ids])
      expect(want[0][0]).toBe(bos)
      const options = { batchBytes: 2000, longLines: 'parts' as const }
      const run = await joinedIdsOf(stream.encodeLineStream(sentencePiece, chunksOf(text, 777), options))
      expect(run.ids).toEqual(want)
      expect(run.continuing).toBeGreaterThan(3)
      // A long JSONL record's text, in parts as it comes.
      const records = Buffer.from(partsLines.map((line) => JSON.stringify({ text: line })).join('\n') + '\n')
      const jsonl = await joinedIdsOf(stream.encodeLineStream(sentencePiece, chunksOf(records, 777), { ...options, format: 'jsonl' }))
      expect(jsonl.ids).toEqual(want)
      expect(jsonl.continuing).toBeGreaterThan(3)
    })

    it("a tokenizer.json whose truncation keeps the first ids (BERT's): a long line is read up to the start it keeps, the rest read past", async () => {
      const bert = batchtok.Tokenizer.fromFile(join(FIXTURES, 'tokenizers/bert.json'))
      const want = (await bert.encodeBatch(partsLines)).toArrays().map((ids) => [...ids])
      const records = Buffer.from(partsLines.map((line) => JSON.stringify({ text: line })).join('\n') + '\n')
      for (const chunk of [777, 65536]) {
        const run = await joinedIdsOf(stream.encodeLineStream(bert, chunksOf(text, chunk), { batchBytes: 2000, longLines: 'parts' }))
        expect(run).toEqual({ ids: want, continuing: 0 })
        // A long record's text: its start handed over, the outline ending the document.
        const jsonl = await joinedIdsOf(stream.encodeLineStream(bert, chunksOf(records, chunk), { format: 'jsonl', batchBytes: 2000, longLines: 'parts' }))
        expect(jsonl.ids).toEqual(want)
        // One part a long record at most: its start, or its text whole.
        expect(jsonl.continuing).toBeGreaterThan(0)
        expect(jsonl.continuing).toBeLessThanOrEqual(partsLines.filter((line) => Buffer.byteLength(line) > 2000).length)
      }
      // Each line is there, in order; the long prose line only as its start.
      const batches: Buffer[] = []
      const keptLine = (bytes: Uint8Array) => bert.keptByTruncation(bytes)
      for await (const batch of stream.batchLines(chunksOf(text, 777), { batchBytes: 2000, keptLine })) batches.push(Buffer.from(batch.lines))
      const held = Buffer.concat(batches).toString().split('\n').slice(0, -1)
      expect(held.length).toBe(partsLines.length)
      for (const [i, line] of partsLines.entries()) expect(line.startsWith(held[i])).toBe(true)
      expect(held[1].length).toBeLessThan(20_000)
      expect(held[3]).toBe(partsLines[3])
      // Without the truncation, every line is whole.
      const encodeOptions = { truncation: false as const }
      const untruncated = await joinedIdsOf(stream.encodeLineStream(bert, chunksOf(text, 777), { batchBytes: 2000, longLines: 'parts', encodeOptions }))
      expect(untruncated.ids).toEqual((await bert.encodeBatch(partsLines, encodeOptions)).toArrays().map((ids) => [...ids]))
    })

    it.each(['lines', 'jsonl'] as const)('given cutLine and keptLine both (%s), a long line is asked for a kept start only before a part of it is handed over', async (format) => {
      // No tokenizer gives both (lastSafeCut finds no place under a truncation), but a caller's own
      // functions may. Prose, then a run of kana with no place to cut: what is held of the line
      // after a part is no start of it, whatever keptLine would say of it.
      const long = prose(0, 10_000) + 'ひらがな'.repeat(3000) + ' the end'
      const documents = ['short', long, 'last']
      const input = Buffer.from(documents.map((text) => (format === 'jsonl' ? JSON.stringify({ text }) : text)).join('\n') + '\n')
      const asked: string[] = []
      const keptLine = (bytes: Uint8Array) => {
        asked.push(Buffer.from(bytes).toString())
        return bytes.length
      }
      const cutLine = (bytes: Uint8Array, from: number) => tokenizer.lastSafeCut(bytes, from, { afterCut: true })
      const parts: string[] = []
      let rest = ''
      for await (const batch of stream.batchLines(chunksOf(input, 777), { format, batchBytes: 2000, cutLine, keptLine })) {
        const bytes = batch.lines ? Buffer.from(batch.lines) : Buffer.from(batch.bytes!.subarray(batch.offsets![0], batch.offsets![1]))
        if (batch.continues) parts.push(bytes.toString().split('\n').pop()!)
        else if (format === 'lines' && parts.length > 0 && rest === '') rest = bytes.toString().split('\n')[0]
      }
      expect(parts.length).toBeGreaterThan(2)
      expect(long.startsWith(parts.join(''))).toBe(true)
      if (format === 'lines') expect(parts.join('') + rest).toBe(long)
      for (const held of asked) expect(long.startsWith(held)).toBe(true)
    })

    it('under a truncation, a long line whose rest is not UTF-8 is refused and named, as read whole', async () => {
      const bert = batchtok.Tokenizer.fromFile(join(FIXTURES, 'tokenizers/bert.json'))
      const line = Buffer.from(partsLines[1])
      for (const at of [30_000, line.length]) {
        const bad = Buffer.concat([Buffer.from('short\n'), line.subarray(0, at), Buffer.from([0xe2, 0x82]), line.subarray(at), Buffer.from('\nlast\n')])
        for (const longLines of ['parts', 'whole'] as const) {
          await expect(joinedIdsOf(stream.encodeLineStream(bert, chunksOf(bad, 777), { batchBytes: 2000, longLines }))).rejects.toThrow(
            expect.objectContaining({ lineNumber: 2, code: 'ERR_NOT_UTF8' }),
          )
        }
      }
    })

    it('utf8Check: chunks cut anywhere, a character across them included, are UTF-8 together; a bad or unfinished one is not', () => {
      const { utf8Check } = require('../stream/utf8-check.js') as { utf8Check: () => { check(chunk: Uint8Array): boolean; end(): boolean } }
      const check = (...chunks: Uint8Array[]) => {
        const checked = utf8Check()
        for (const chunk of chunks) checked.check(chunk)
        return checked.end()
      }
      const text = Buffer.from('a€ b😀 ก́ c')
      for (let i = 0; i <= text.length; i++) {
        for (let j = i; j <= text.length; j++) expect(check(text.subarray(0, i), text.subarray(i, j), text.subarray(j))).toBe(true)
      }
      expect(check(text.subarray(0, 3))).toBe(false)
      expect(check(Buffer.from([0x61]), Buffer.from([0x80]))).toBe(false)
      expect(check(Buffer.from([0xe2, 0x82]), Buffer.from([0x41]))).toBe(false)
      expect(check(Buffer.from([0xed, 0xa0, 0x80]))).toBe(false)
    })

    it('batchLines with cutLine: parts end and start at a word gap, each at most a batch and a chunk', async () => {
      const batches: { lines: Buffer; continues?: boolean }[] = []
      const cutLine = (bytes: Uint8Array, from: number) => tokenizer.lastSafeCut(bytes, from)
      for await (const batch of stream.batchLines(chunksOf(text, 300), { batchBytes: 2000, cutLine })) {
        batches.push({ lines: Buffer.from(batch.lines), continues: batch.continues })
      }
      expect(Buffer.concat(batches.map((batch) => batch.lines)).equals(text)).toBe(true)
      for (const [i, batch] of batches.entries()) {
        if (!batch.continues) continue
        expectWordGap(batch.lines.toString(), batches[i + 1].lines.toString())
        expect(batch.lines.length).toBeLessThanOrEqual(2000 + 300)
      }
      // The line with no word gap is held whole.
      expect(batches.some((batch) => batch.lines.includes(Buffer.from('ひらがな'.repeat(3000))))).toBe(true)
    })

    it.each([777, 65536])('JSONL records longer than a batch, in chunks of %i bytes, read as they come: the joined ids equal encodeBatch of JSON.parse', async (chunk) => {
      const records = [
        JSON.stringify({ text: 'short' }),
        JSON.stringify({ id: 1, text: `${prose(0, 30_000)} é 😀 \ud83d`, tags: ['a', prose(90_000, 5_000)] }),
        '',
        // The field twice: its last value counts.
        `{"text": ${JSON.stringify(prose(40_000, 20_000))}, "id": 2, "text": ${JSON.stringify(prose(70_000, 9_000))}}`,
        JSON.stringify({ text: 'last' }),
      ]
      const data = Buffer.from(records.join('\n') + '\n')
      const texts = records.filter((record) => record !== '').map((record) => JSON.parse(record).text)
      const options = { format: 'jsonl' as const, batchBytes: 2000, longLines: 'parts' as const }
      const batches: import('../stream/index').TokenBatch[] = []
      const run = await joinedIdsOf(
        (async function* () {
          for await (const batch of stream.encodeLineStream(tokenizer, chunksOf(data, chunk), options)) yield batches[batches.push(batch) - 1]
        })(),
      )
      expect(run.ids).toEqual((await tokenizer.encodeBatch(texts)).toArrays().map((ids) => [...ids]))
      // A record whose end has come in the chunks read is one batch's document: bounded by them.
      if (chunk < options.batchBytes) {
        expect(run.continuing).toBeGreaterThan(10)
        expect(batches.some((batch) => batch.restarts)).toBe(true)
      }
      // Whole, each record is one batch's document.
      expect((await joinedIdsOf(stream.encodeLineStream(tokenizer, chunksOf(data, chunk), { ...options, longLines: 'whole' }))).continuing).toBe(0)
    })

    it('JSONL records longer than a batch, under tokenizer.json files with template tokens: those come once a document', async () => {
      const records = [
        JSON.stringify({ text: 'short' }),
        JSON.stringify({ id: 1, text: prose(0, 30_000) }),
        // Long because of another field, its text empty; the field twice, the last value empty.
        JSON.stringify({ html: prose(0, 9_000), text: '' }),
        `{"text": ${JSON.stringify(prose(40_000, 20_000))}, "id": 2, "text": ""}`,
        JSON.stringify({ text: 'last' }),
      ]
      const data = Buffer.from(records.join('\n') + '\n')
      const texts = records.map((record) => JSON.parse(record).text)
      // BERT's ([CLS] … [SEP], a truncation; never cut, so the engine adds them), and a file cut
      // only without its template (the stream adds them).
      const files = [readFileSync(join(FIXTURES, 'tokenizers/bert.json'), 'utf8'), JSON.stringify(gpt2WithTemplate({ after: true }))]
      for (const file of files) {
        const templated = batchtok.Tokenizer.fromJSON(file)
        const run = await joinedIdsOf(stream.encodeLineStream(templated, chunksOf(data, 777), { format: 'jsonl', batchBytes: 2000, longLines: 'parts' }))
        expect(run.ids).toEqual((await templated.encodeBatch(texts)).toArrays().map((ids) => [...ids]))
        expect(run.continuing).toBeGreaterThan(0)
      }
    })

    it('a bad JSONL record longer than a batch is named by its line in the stream, at its column', async () => {
      const long = prose(0, 30_000)
      for (const bad of [`{"text": "${long}\\q"}`, `{"a": 1 "text": "${long}"}`, `{"text": "${long}", "b": [1,, 2]}`]) {
        const data = Buffer.from(`{"text": "ok"}\n\n${bad}\n{"text": "after"}\n`)
        const whole = await tokenizer.encodeLines(Buffer.from(bad), { format: 'jsonl', field: 'text' }).catch((error) => error)
        expect(whole.code).toBe('ERR_MALFORMED_JSON')
        await expect(
          joinedIdsOf(stream.encodeLineStream(tokenizer, chunksOf(data, 500), { format: 'jsonl', batchBytes: 1000, longLines: 'parts' })),
        ).rejects.toThrow(expect.objectContaining({ lineNumber: 3, code: 'ERR_MALFORMED_JSON', reason: whole.reason }))
      }
      // Found by the reader of the record, not the addon: still after the lines before it.
      const notUtf8 = Buffer.concat([Buffer.from(`{"text": "ok"}\n\n{"text": "${long}`), Buffer.from([0xff]), Buffer.from(`${long}"}\n`)])
      await expect(
        joinedIdsOf(stream.encodeLineStream(tokenizer, chunksOf(notUtf8, 500), { format: 'jsonl', batchBytes: 1000, longLines: 'parts' })),
      ).rejects.toThrow(expect.objectContaining({ lineNumber: 3, code: 'ERR_NOT_UTF8' }))
    })

    it('a bad line after a line in parts is named by its line in the stream', async () => {
      const bad = Buffer.concat([Buffer.from(`${prose(0, 20_000)}\nfine\n`), Buffer.from([0x61, 0xff, 0x0a])])
      await expect(joinedIdsOf(stream.encodeLineStream(tokenizer, chunksOf(bad, 500), { batchBytes: 1000, longLines: 'parts' }))).rejects.toThrow(
        expect.objectContaining({ lineNumber: 3, code: 'ERR_NOT_UTF8' }),
      )
    })

    it('bad options are errors naming them', () => {
      expect(() => stream.encodeLineStream(tokenizer, ['a'], { longLines: 'cut' as 'parts' })).toThrow(/options\.longLines is "cut"; expected 'whole' .* or 'parts'/)
      const truncated = { longLines: 'parts' as const, encodeOptions: { truncation: { maxLength: 10 } } }
      expect(() => stream.encodeLineStream(tokenizer, ['a'], truncated)).toThrow(/options\.longLines 'parts' cannot go with a truncation in encodeOptions/)
      const next = (options: object) => stream.batchLines(['a'], options).next()
      return Promise.all([
        expect(next({ cutLine: 5 })).rejects.toThrow(/options\.cutLine is number; expected a function/),
        expect(next({ keptLine: 'yes' })).rejects.toThrow(/options\.keptLine is string; expected a function/),
      ])
    })

    it('seeded random streams: every tokenizer shape, format, batch and chunk size gives the ids of encodeBatch over the documents', async () => {
      const tokenizers = {
        o200k_base: tokenizer,
        gpt2: batchtok.Tokenizer.fromFile(join(FIXTURES, 'tokenizers/gpt2.json')),
        'bert (truncates)': batchtok.Tokenizer.fromFile(join(FIXTURES, 'tokenizers/bert.json')),
        sentencepiece: batchtok.Tokenizer.fromFile(join(FIXTURES, 'tokenizers/sentencepiece.json')),
        "llama 2's shape": batchtok.Tokenizer.fromJSON(JSON.stringify(llama2Shaped())),
      }
      let state = 20_251
      const random = () => ((state = (state * 1_103_515_245 + 12_345) & 0x7fffffff) / 0x7fffffff)
      const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)]
      const at = () => Math.floor(random() * (big.length - 50_000))
      const documentOf: Record<string, () => string> = {
        short: () => prose(at(), Math.floor(random() * 80)),
        prose: () => prose(at(), 500 + Math.floor(random() * 3_000)),
        long: () => prose(at(), 5_000 + Math.floor(random() * 40_000)),
        kana: () => 'ひらがなカタカナ'.repeat(100 + Math.floor(random() * 2_000)) + (random() < 0.5 ? ' tail words' : ''),
        empty: () => '',
        special: () => prose(at(), 3_000) + ' <|endoftext|> [SEP] </s> x',
        spaces: () => ' '.repeat(1 + Math.floor(random() * 9_000)) + 'x',
        'carriage return': () => prose(at(), 200) + '\r',
      }
      /** A record's JSON with every character past ASCII as a `\u` escape (surrogate pairs as two). */
      const asciiEscaped = (json: string) => json.replace(/[\u0080-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
      for (let round = 0; round < 60; round++) {
        const name = pick(Object.keys(tokenizers) as (keyof typeof tokenizers)[])
        const format = pick(['lines', 'jsonl'] as const)
        const options = { format, longLines: pick(['parts', 'whole'] as const), batchBytes: pick([500, 2_000, 5_000, 65_536]) }
        const documents = Array.from({ length: 2 + Math.floor(random() * 12) }, () => documentOf[pick(Object.keys(documentOf))]())
        const lastLineEnd = random() < 0.5 ? '\n' : ''
        let input: string
        let expected: string[]
        if (format === 'lines') {
          input = documents.join('\n') + lastLineEnd
          expected = documents.map((document) => document.replace(/\r$/, ''))
          if (lastLineEnd === '' && expected.at(-1) === '') expected.pop()
        } else {
          // Line ends, tabs, quotes and emoji inside the texts; blank lines between the records.
          for (let i = 0; i < documents.length; i++) if (random() < 0.3) documents[i] += '\n\tnext "line" \\ 😀 é' + documents[i].slice(0, 3_000)
          const records = documents.map((text, i) => {
            if (text === '' && random() < 0.5) return ''
            const json = JSON.stringify(random() < 0.5 ? { id: i, text } : { text, meta: { n: i } })
            return random() < 0.3 ? asciiEscaped(json) : json
          })
          input = records.join('\n') + lastLineEnd
          expected = documents.filter((_, i) => records[i] !== '')
        }
        const bytes = Buffer.from(input)
        const chunk = pick([1, 7, 333, 4_096, 100_000].filter((size) => size > 1 || bytes.length < 60_000))
        const what = `round ${round}: ${name}, ${JSON.stringify({ ...options, chunk })}`
        const run = await joinedIdsOf(stream.encodeLineStream(tokenizers[name], chunksOf(bytes, chunk), options))
        const want = (await tokenizers[name].encodeBatch(expected)).toArrays().map((ids) => [...ids])
        expect(run.ids.length, what).toBe(want.length)
        run.ids.forEach((ids, i) => expect(ids, `${what}, document ${i}`).toEqual(want[i]))
      }
    })

    it("cutLine's and keptLine's answers are checked: -1 or a whole number of the bytes they were given", async () => {
      const documents = ['short', prose(0, 5_000), 'last']
      const read = async (format: 'lines' | 'jsonl', options: object) => {
        const input = Buffer.from(documents.map((text) => (format === 'jsonl' ? JSON.stringify({ text }) : text)).join('\n') + '\n')
        for await (const batch of stream.batchLines(chunksOf(input, 500), { format, batchBytes: 1000, ...options })) void batch
      }
      const noPlace = () => -1
      const cases: [unknown, string][] = [
        [1.5, '1\\.5'],
        [Number.NaN, 'NaN'],
        ['12', '"12"'],
        [undefined, 'undefined'],
        [-2, '-2'],
        [1e9, '1000000000'],
      ]
      for (const [answer, said] of cases) {
        for (const format of ['lines', 'jsonl'] as const) {
          await expect(read(format, { cutLine: () => answer })).rejects.toThrow(
            new RegExp(`^options\\.cutLine returned ${said} for \\d+ bytes; expected -1 \\(no place\\) or a whole number of bytes from 0 to \\d+$`),
          )
          // A long record's text is asked about only where it may be cut.
          await expect(read(format, { cutLine: noPlace, keptLine: () => answer })).rejects.toThrow(
            new RegExp(`^options\\.keptLine returned ${said} for \\d+ bytes; expected -1 \\(no start\\) or a whole number of bytes from 0 to \\d+$`),
          )
        }
      }
      // Either bound is an answer.
      await read('lines', { cutLine: (bytes: Uint8Array) => bytes.length })
      await read('lines', { cutLine: () => 0, keptLine: () => 0 })
    })
  })

  it('one chunk of many lines, as a whole file read at once, is cut into batches of at most batchBytes', async () => {
    const text = Buffer.from(lines.join('\n') + '\n')
    const batches = []
    for await (const batch of stream.batchLines([text], { batchBytes: 2000 })) batches.push(Buffer.from(batch.lines))
    expect(Buffer.concat(batches).equals(text)).toBe(true)
    expect(batches.length).toBeGreaterThan(10)
    for (const batch of batches) {
      expect(batch.at(-1)).toBe(0x0a)
      // At most a batch's size, unless one line is longer.
      if (batch.length > 2000) expect(batch.indexOf(0x0a)).toBe(batch.length - 1)
    }
  })

  it('a bad line deep in the stream is named by its line in the stream, with its code', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => (i === 2716 ? '{"text": oops}' : JSON.stringify({ text: `record ${i}` })))
    const text = Buffer.from(records.join('\n') + '\n')
    const run = idsOf(stream.encodeLineStream(tokenizer, chunksOf(text, 777), { format: 'jsonl', batchBytes: 4000 }))
    await expect(run).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/^line 2717 of the stream: malformed JSON \(expected a value at column 10\); fix or remove the line$/),
        lineNumber: 2717,
        code: 'ERR_MALFORMED_JSON',
      }),
    )
  })

  it('a line whose document holds a disallowed special token keeps the token and its index', async () => {
    const lines = Buffer.from('a\nb\nsay <|endoftext|>\n')
    const run = idsOf(stream.encodeLineStream(tokenizer, [lines], { encodeOptions: { disallowedSpecial: 'all' } }))
    await expect(run).rejects.toThrow(
      expect.objectContaining({ lineNumber: 3, lineIndex: 2, code: 'ERR_DISALLOWED_SPECIAL_TOKEN', token: '<|endoftext|>', index: 4 }),
    )
  })

  it.each([
    ['a record without the field', '{"body":"a"}\n', /^line 2 of the stream: the record has no "text" field \(it has: body\); name the text field with options\.field$/],
    ['a record whose text is null', '{"text":null}\n', /^line 2 of the stream: the record has a "text" that is null, not a string \(it has: text\); fix or remove the line, or name a string field with options\.field$/],
  ])('%s: the advice names encodeLineStream\'s own option', async (_name, bad, message) => {
    const chunks = ['{"text":"fine"}\n', bad]
    await expect(idsOf(stream.encodeLineStream(tokenizer, chunks, { format: 'jsonl', batchBytes: 1 }))).rejects.toThrow(message)
  })

  it('reads ahead a bounded number of chunks: a consumer that stops, stops the reading', async () => {
    let pulled = 0
    function* source() {
      for (let i = 0; i < 100_000; i++) {
        pulled++
        // 30 bytes a line, and a chunk.
        yield Buffer.from(`line ${String(i).padStart(7, '0')} of a long stream\n`)
      }
    }
    const batches = stream.encodeLineStream(tokenizer, source(), { batchBytes: 3000 })
    await batches.next()
    // 100 chunks a batch: the first batch, the second (started before the first is handed on)
    // and the one chunk the third's gathering has begun.
    expect(pulled).toBeLessThanOrEqual(201)
    await batches.return(undefined)
  })

  it('bad arguments are errors naming them, before any work', () => {
    expect(() => stream.encodeLineStream(tokenizer, ['a'], { format: 'csv' as 'lines' })).toThrow(/options\.format is "csv"; expected 'lines' .* or 'jsonl'/)
    expect(() => stream.encodeLineStream(tokenizer, ['a'], { field: 'text' })).toThrow(/options\.field is for format 'jsonl'/)
    expect(() => stream.encodeLineStream(tokenizer, ['a'], { batchDocuments: 10 } as object)).toThrow(/options\.batchDocuments does not apply to encodeLineStream/)
    expect(() => stream.encodeLineStream(tokenizer, ['a'], { batchBytes: 0 })).toThrow(/options\.batchBytes is 0/)
    expect(() => stream.encodeLineStream(tokenizer, ['a'], { eosId: -1 })).toThrow(/options\.eosId -1 is not an id/)
    expect(() => stream.encodeLineStream(tokenizer, ['a'], { nope: 1 } as object)).toThrow(/options\.nope is not an option of encodeLineStream \(options: format, field, scheduler/)
    expect(() => stream.encodeLineStream(tokenizer, 'a\nb' as unknown as string[])).toThrow(/chunks must be an iterable/)
  })

  it("the package's types take both, and refuse batchDocuments and an unknown format (tsc --noEmit --strict)", () => {
    expect(typeCheck('line-stream.ts', { node: true })).toBe('')
  })

  it('a chunk that is not text is a TypeError naming it', async () => {
    await expect(idsOf(stream.encodeLineStream(tokenizer, ['a\n', 5 as unknown as string]))).rejects.toThrow(/^chunk 1 is number; expected a Buffer, a Uint8Array of UTF-8 or a string/)
  })
})
