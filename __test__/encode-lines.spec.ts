// `encodeLines`: whole lines of bytes, text or JSON Lines, cut and read by the addon. Its ids are
// `encodeUtf8Batch`'s over the documents JS itself cuts out of the same lines (split at `\n`, a
// `\r` before it dropped; for JSONL, `JSON.parse(line)[field]` of every line `trim` leaves
// non-empty), and a line that gives no document is named by its index.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { join } from 'node:path'

import { batchtok, corpus, expectWordGap, FIXTURES, fixture, gpt2WithTemplate, llama2Shaped, metaspaceShaped, rankFileOf, t5Shaped, type Texts } from './helpers'

const require = createRequire(import.meta.url)
const stream = require('../stream/index.js') as typeof import('../stream/index')

const { Tokenizer, Scheduler } = batchtok
const o200k = Tokenizer.fromEncoding('o200k_base')

/** The lines of `bytes` as the CLI has always cut them. */
function linesOf(text: string): string[] {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
}

/** The documents of JSONL `text` as JSON.parse reads them. */
function recordsOf(text: string, field = 'text'): string[] {
  return linesOf(text)
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line)[field] as string)
}

/** `encodeUtf8Batch`'s ids and offsets over `documents`. */
async function reference(documents: string[], scheduler?: InstanceType<typeof Scheduler>) {
  const buffers = documents.map((document) => Buffer.from(document, 'utf8'))
  const offsets = new Uint32Array(buffers.length + 1)
  buffers.forEach((buffer, i) => (offsets[i + 1] = offsets[i] + buffer.length))
  const encoding = await o200k.encodeUtf8Batch(Buffer.concat(buffers), offsets, scheduler ? { scheduler } : {})
  return { ids: encoding.ids, offsets: encoding.offsets, textBytes: offsets[buffers.length] }
}

async function expectSameAsUtf8Batch(bytes: Buffer, documents: string[], format: Parameters<typeof o200k.encodeLines>[1], scheduler?: InstanceType<typeof Scheduler>) {
  const got = await o200k.encodeLines(bytes, format, scheduler ? { scheduler } : {})
  const expected = await reference(documents, scheduler)
  // As bytes: one comparison, rather than one per id.
  const bytesOf = (array: Uint32Array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength)
  expect(got.offsets.length).toBe(expected.offsets.length)
  expect(bytesOf(got.offsets).equals(bytesOf(expected.offsets))).toBe(true)
  expect(got.ids.length).toBe(expected.ids.length)
  expect(bytesOf(got.ids).equals(bytesOf(expected.ids))).toBe(true)
  expect(got.textBytes).toBe(expected.textBytes)
  expect(got.lines).toBe(linesOf(bytes.toString('utf8')).length)
}

describe('ids equal encodeUtf8Batch over the same documents', () => {
  // Real text from every script the corpora hold, cut to lines, a few MiB so that the lines are
  // cut in many segments on several threads.
  const items = [...corpus.bigDocuments().slice(0, 300), ...corpus.udhrDocuments().slice(0, 200).map((d) => d.text)]
  const text = items.join('\n') + '\n'
  const jsonl = items.map((item, i) => JSON.stringify(i % 2 ? { id: i, text: item, meta: { n: [i, null, true] } } : { text: item, id: `d${i}` })).join('\n') + '\n'

  it.each([
    ['1 thread', () => new Scheduler({ threads: 1 })],
    ['3 threads', () => new Scheduler({ threads: 3 })],
    ['the default scheduler', () => undefined],
  ])('text and JSONL from the corpora, %s', async (_name, make) => {
    const scheduler = make()
    await expectSameAsUtf8Batch(Buffer.from(text), linesOf(text), { format: 'lines' }, scheduler)
    await expectSameAsUtf8Batch(Buffer.from(jsonl), recordsOf(jsonl), { format: 'jsonl', field: 'text' }, scheduler)
  })

  it('CRLF line ends, blank lines, a last line without its newline', async () => {
    const text = 'first\r\n\r\n \t \nsecond line\rwith a CR inside\n\nlast, no newline\r'
    await expectSameAsUtf8Batch(Buffer.from(text), linesOf(text), { format: 'lines' })
    expect(linesOf(text)).toEqual(['first', '', ' \t ', 'second line\rwith a CR inside', '', 'last, no newline'])
    const jsonl = '{"text":"a"}\r\n\r\n   \n\u00a0\u3000\ufeff\n{"text":"b"}\n\t\n{"text":"c"}'
    await expectSameAsUtf8Batch(Buffer.from(jsonl), ['a', 'b', 'c'], { format: 'jsonl', field: 'text' })
    await expectSameAsUtf8Batch(Buffer.alloc(0), [], { format: 'lines' })
  })

  it('JSON escapes, non-ASCII, duplicate keys and other fields as JSON.parse reads them', async () => {
    const records = [
      String.raw`{"text":"tab\tnew\nline \"quoted\" back\\slash \/ \b\f\r"}`,
      String.raw`{"text":"\u00e9\u65e5\ud83d\ude00 caf\u00E9"}`,
      '{"text":"日本語のテキスト ✓ émoji 🙂"}',
      // Lone surrogates: JSON.parse keeps them; written as UTF-8 they are U+FFFD.
      String.raw`{"text":"a\ud800b\udc00c\ud800\u0041"}`,
      '{"text":"first","text":"last wins"}',
      '{"te\\u0078t":"an escaped key"}',
      '{"id":1e400,"nested":[[[{"text":"not this one"}]]],"text":"this one","tail":{}}',
      '  {"text" :  "spaces around"  }  ',
    ]
    const jsonl = records.join('\n')
    const documents = recordsOf(jsonl)
    expect(documents[3]).toBe('a\ud800b\udc00c\ud800A')
    expect(documents[4]).toBe('last wins')
    await expectSameAsUtf8Batch(Buffer.from(jsonl), documents, { format: 'jsonl', field: 'text' })
  })

  it('another field name', async () => {
    const jsonl = '{"body":"x","text":1}\n{"body":"y"}\n'
    await expectSameAsUtf8Batch(Buffer.from(jsonl), ['x', 'y'], { format: 'jsonl', field: 'body' })
  })

  it('agrees with encodeUtf8Batch under special-token options', async () => {
    const text = 'a <|endoftext|> b\nplain\n'
    const got = await o200k.encodeLines(Buffer.from(text), { format: 'lines' }, { allowedSpecial: 'all' })
    const expected = await o200k.encodeUtf8Batch(Buffer.from('a <|endoftext|> bplain'), [0, 17, 22], { allowedSpecial: 'all' })
    expect(Array.from(got.ids)).toEqual(Array.from(expected.ids))
  })
})

describe('a line that gives no document rejects naming its index', () => {
  const cases: [string, Buffer, Parameters<typeof o200k.encodeLines>[1], number, string, RegExp][] = [
    ['not UTF-8', Buffer.concat([Buffer.from('ok\nfine\n'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), Buffer.from('\xff\n', 'latin1')]), { format: 'lines' }, 2, 'ERR_NOT_UTF8', /^line 3: the text is not UTF-8/],
    ['not UTF-8 in a record', Buffer.concat([Buffer.from('{"text":"a"}\n{"text":"'), Buffer.from([0xc3]), Buffer.from('"}\n')]), { format: 'jsonl', field: 'text' }, 1, 'ERR_NOT_UTF8', /^line 2: the text is not UTF-8/],
    ['malformed JSON', Buffer.from('{"text":"a"}\n\n{"text": oops}\n{"text": 1}\n'), { format: 'jsonl', field: 'text' }, 2, 'ERR_MALFORMED_JSON', /^line 3: malformed JSON \(expected a value at column 10\); fix or remove the line$/],
    ['a raw control character in a string', Buffer.from('{"text":"a\tb"}\n'), { format: 'jsonl', field: 'text' }, 0, 'ERR_MALFORMED_JSON', /^line 1: malformed JSON/],
    ['a missing field', Buffer.from('{"text":"a"}\r\n{"body":"b","2":0,"id":3}\n'), { format: 'jsonl', field: 'text' }, 1, 'ERR_MISSING_FIELD', /^line 2: the record has no "text" field \(it has: 2, body, id\)/],
    ['a record that is not an object', Buffer.from('[1,2]\n'), { format: 'jsonl', field: 'text' }, 0, 'ERR_MISSING_FIELD', /the record has no "text" field \(it has: 0, 1\)/],
    ['a field that is not a string', Buffer.from('\n{"text":null}\n'), { format: 'jsonl', field: 'text' }, 1, 'ERR_FIELD_NOT_STRING', /^line 2: the record has a "text" that is null, not a string \(it has: text\)/],
    ['the last of a duplicate key not a string', Buffer.from('{"text":"a","text":[1]}\n'), { format: 'jsonl', field: 'text' }, 0, 'ERR_FIELD_NOT_STRING', /that is object, not a string/],
  ]
  it.each(cases)('%s', async (_name, bytes, format, lineIndex, code, message) => {
    const error = await o200k.encodeLines(bytes, format).then(
      () => null,
      (e: Error & { lineIndex: number; code: string; reason: string }) => e,
    )
    expect(error).toBeInstanceOf(Error)
    expect(error!.message).toMatch(message)
    expect(error!.lineIndex).toBe(lineIndex)
    expect(error!.code).toBe(code)
    expect(error!.message).toContain(error!.reason)
  })

  it('the first bad line in order, in a batch cut over several threads', async () => {
    const good = '{"text":"some words here"}\n'.repeat(40_000)
    const lines = good.split('\n')
    lines[30_000] = '{"text": late}'
    lines[2_000] = '{"text": early}'
    const bytes = Buffer.from(lines.join('\n'))
    for (const threads of [1, 2, 4]) {
      const error = await o200k.encodeLines(bytes, { format: 'jsonl', field: 'text' }, { scheduler: new Scheduler({ threads }) }).catch((e) => e)
      expect(error.lineIndex).toBe(2_000)
    }
  })

  it('a document the encoding refuses names its line, and the token as encode does', async () => {
    const error = await o200k
      .encodeLines(Buffer.from('{"text":"a"}\n\n{"text":"x <|endoftext|>"}\n'), { format: 'jsonl', field: 'text' }, { disallowedSpecial: 'all' })
      .catch((e) => e)
    expect(error).toMatchObject({ lineIndex: 2, code: 'ERR_DISALLOWED_SPECIAL_TOKEN', token: '<|endoftext|>', index: 2 })
    expect(error.message).toMatch(/^line 3: the text contains the disallowed special token "<\|endoftext\|>" at index 2/)
  })
})

describe('arguments', () => {
  it.each([
    ['bytes that are a string', () => o200k.encodeLines('a' as never, { format: 'lines' }), TypeError, /bytes is a string; expected a Uint8Array/],
    ['no format', () => o200k.encodeLines(Buffer.from('a'), undefined as never), TypeError, /format is undefined; expected \{ format: 'lines' \}/],
    ['an unknown format', () => o200k.encodeLines(Buffer.from('a'), { format: 'csv' } as never), RangeError, /format\.format is "csv"; expected one of 'lines', 'jsonl'/],
    ['jsonl without a field', () => o200k.encodeLines(Buffer.from('a'), { format: 'jsonl' }), TypeError, /format\.field is missing/],
    ['a field for lines', () => o200k.encodeLines(Buffer.from('a'), { format: 'lines', field: 'text' }), TypeError, /format\.field applies to 'jsonl'/],
    ['a misspelt key', () => o200k.encodeLines(Buffer.from('a'), { format: 'lines', feild: 'x' } as never), TypeError, /did you mean 'field'/],
  ])('%s', async (_name, call, kind, message) => {
    const error = await call().catch((e) => e)
    expect(error).toBeInstanceOf(kind)
    expect(error.message).toMatch(message)
  })

  it('an aborted signal rejects with an AbortError', async () => {
    const error = await o200k.encodeLines(Buffer.from('a\n'), { format: 'lines' }, { signal: AbortSignal.abort() }).catch((e) => e)
    expect(error.name).toBe('AbortError')
  })
})

describe('lastSafeCut: where a text still being read may be cut', () => {
  const random = corpus.seededRandom(7)
  const big = corpus.bigTxt()
  const udhr = corpus.udhrDocuments().map((document) => document.text)
  const fixtureTexts = fixture<Texts>('texts.json').cases.map((c) => c.text)
  /** Texts from every corpus: prose slices, declarations, fixture texts, special-token text. */
  const texts = Array.from({ length: 150 }, (_, i) => {
    const at = Math.floor(random() * (big.length - 5000))
    const pick = [big.slice(at, at + 200 + Math.floor(random() * 4000)), udhr[i % udhr.length].slice(0, 3000), fixtureTexts[i % fixtureTexts.length]][i % 3]
    return i % 5 === 0 ? `${pick} the <|endoftext|> and <|fim_prefix|> tokens ${pick}` : pick
  })

  it.each(['o200k_base', 'o200k_harmony', 'cl100k_base', 'p50k_base', 'r50k_base'])(
    '%s: the two sides of every cut found encode to the whole text, with special tokens allowed or not',
    (encoding) => {
      const tokenizer = Tokenizer.fromEncoding(encoding)
      let cuts = 0
      for (const text of texts) {
        const bytes = Buffer.from(text)
        const from = Math.floor(random() * bytes.length)
        for (const cut of [tokenizer.lastSafeCut(bytes), tokenizer.lastSafeCut(bytes, from)]) {
          if (cut === -1) continue
          cuts++
          expect(cut).toBeGreaterThan(0)
          const [before, after] = [bytes.subarray(0, cut).toString(), bytes.subarray(cut).toString()]
          expectWordGap(before, after)
          for (const options of [{}, { allowedSpecial: 'all' as const }]) {
            expect([...tokenizer.encode(before, options), ...tokenizer.encode(after, options)]).toEqual([...tokenizer.encode(text, options)])
          }
        }
      }
      expect(cuts).toBeGreaterThan(100)
    },
  )

  /** Whether each real tokenizer.json is cut: those that split as a pattern that is cut and add
   * no template token around a text; `'without template'` where a template token is added,
   * which leaves them cut for parts encoded without it; `'after cut'` where, besides, the part
   * from a cut is encoded with `afterCut` (Llama 2's shape). */
  const REAL_FILES_CUT: Record<string, boolean | 'without template' | 'after cut'> = {
    claude: true,
    deepseek_v3: true,
    gemini: 'without template',
    gemma3: 'without template',
    gpt35turbo: true,
    gpt4o: true,
    gptoss: true,
    llama2: 'after cut',
    llama3: true,
    llama3_1: 'without template',
    qwen3: true,
    gemma2: 'without template',
    openai_gpt2: true,
    mistral_nemo: 'without template',
    chatglm3: 'after cut',
    baichuan2: 'after cut',
    internlm2: 'without template',
    yi: true,
  }
  const { ensureRealTokenizers, FILES } = require('../scripts/real-tokenizers.js') as {
    ensureRealTokenizers(names: string[]): Record<string, string>
    FILES: { name: string }[]
  }

  it('names every real file', () => expect(Object.keys(REAL_FILES_CUT).sort()).toEqual(FILES.map((file) => file.name).sort()))

  it.each(Object.entries(REAL_FILES_CUT))('%s: cut %s, and the two sides of every cut encode to the whole text', (name, cuts) => {
    const tokenizer = Tokenizer.fromFile(ensureRealTokenizers([name])[name])
    expectCutOnlyAsSaid(tokenizer, cuts)
    if (cuts === false) return
    expectCutsToEncodeAsTheWhole(tokenizer, cuts === true ? [{}, { addSpecialTokens: false }] : [{ addSpecialTokens: false }])
  })

  /** Whether `tokenizer` is cut with its template, without, and only after a cut (`cuts`). */
  function expectCutOnlyAsSaid(tokenizer: InstanceType<typeof Tokenizer>, cuts: boolean | 'without template' | 'after cut') {
    const gaps = Buffer.from('plenty of word gaps')
    expect(tokenizer.lastSafeCut(gaps) !== -1).toBe(cuts === true)
    expect(tokenizer.lastSafeCut(gaps, 0, { afterCut: true }) !== -1).toBe(cuts === true)
    expect(tokenizer.lastSafeCut(gaps, 0, { addSpecialTokens: false }) !== -1).toBe(cuts === true || cuts === 'without template')
    expect(tokenizer.lastSafeCut(gaps, 0, { addSpecialTokens: false, afterCut: true }) !== -1).toBe(cuts !== false)
  }

  /** The two sides of a cut found in each text, the second encoded with `afterCut`, encode to the
   * whole text under each of `optionsOf`. */
  function expectCutsToEncodeAsTheWhole(tokenizer: InstanceType<typeof Tokenizer>, optionsOf: { addSpecialTokens?: boolean }[]) {
    let cuts = 0
    for (const text of texts) {
      const bytes = Buffer.from(text)
      const cut = tokenizer.lastSafeCut(bytes, Math.floor(random() * bytes.length), { addSpecialTokens: false, afterCut: true })
      if (cut === -1) continue
      cuts++
      const [before, after] = [bytes.subarray(0, cut).toString(), bytes.subarray(cut).toString()]
      for (const options of optionsOf) {
        const parts = [...tokenizer.encode(before, options), ...tokenizer.encode(after, { ...options, afterCut: true })]
        expect(parts).toEqual([...tokenizer.encode(text, options)])
      }
    }
    expect(cuts).toBeGreaterThan(20)
  }

  it("Llama 2's shape (a `▁` put before each text): cut only for parts encoded after a cut, which leaves out the space there", async () => {
    const llama2 = Tokenizer.fromJSON(JSON.stringify(llama2Shaped()))
    expectCutOnlyAsSaid(llama2, 'after cut')
    expectCutsToEncodeAsTheWhole(llama2, [{ addSpecialTokens: false }])
    const without = { addSpecialTokens: false }
    // The place is a space after a letter, and needs the character after it: not before an added
    // token, nor an incomplete character.
    expect(llama2.lastSafeCut(Buffer.from('one two'), 0, { ...without, afterCut: true })).toBe(3)
    expect(llama2.lastSafeCut(Buffer.from('one two '), 0, { ...without, afterCut: true })).toBe(3)
    expect(llama2.lastSafeCut(Buffer.from('one <s>'), 0, { ...without, afterCut: true })).toBe(-1)
    const kanji = Buffer.from('one 日')
    expect(llama2.lastSafeCut(kanji.subarray(0, 6), 0, { ...without, afterCut: true })).toBe(-1)
    expect(llama2.lastSafeCut(kanji, kanji.length - 4, { ...without, afterCut: true })).toBe(3)
    // `afterCut` leaves out the space the text begins at, in every encode and count method (the
    // first text of a batch), and only there.
    const space = ' two  three'
    const left = [...llama2.encode(space.slice(1), without)]
    expect(left).not.toEqual([...llama2.encode(space, without)])
    const after = { ...without, afterCut: true }
    expect([...llama2.encode(space, after)]).toEqual(left)
    expect(llama2.count(space, after)).toBe(left.length)
    expect(llama2.isWithinTokenLimit(space, 100, after)).toBe(left.length)
    const second = [...llama2.encode(space, without)]
    for (const batch of [await llama2.encodeBatch([space, space], after), llama2.encodeBatchSync([space, space], after)]) {
      expect(batch.toArrays().map((ids) => [...ids])).toEqual([left, second])
    }
    expect([...(await llama2.countBatch([space, space], after))]).toEqual([left.length, second.length])
    const bytes = Buffer.from(space + space)
    const offsets = Uint32Array.of(0, space.length, 2 * space.length)
    expect((await llama2.encodeUtf8Batch(bytes, offsets, after)).toArrays().map((ids) => [...ids])).toEqual([left, second])
    const lines = await llama2.encodeLines(Buffer.from(`${space}\n${space}\n`), { format: 'lines' }, after)
    expect(Array.from(lines.ids)).toEqual([...left, ...second])
    expect(lines.textBytes).toBe(2 * space.length)
    // A text with no space to leave out, an empty batch, and an OpenAI encoding: as without it.
    expect([...llama2.encode('two', after)]).toEqual([...llama2.encode('two', without)])
    expect((await llama2.encodeBatch([], after)).toArrays()).toEqual([])
    expect([...o200k.encode(space, { afterCut: true })]).toEqual([...o200k.encode(space)])
    // A batch of JSONL records: the first record's text (after a blank line).
    const records = Buffer.from(`\n${JSON.stringify({ text: space })}\n${JSON.stringify({ text: space })}\n`)
    const fromRecords = await llama2.encodeLines(records, { format: 'jsonl', field: 'text' }, after)
    expect(Array.from(fromRecords.ids)).toEqual([...left, ...second])
  })

  it.each(['always', 'first', 'never'] as const)(
    'a Metaspace pre-tokenizer (prepend scheme %s): cut without the template, and the part after a cut encoded as it is',
    (scheme) => {
      const metaspace = Tokenizer.fromJSON(JSON.stringify(metaspaceShaped(scheme)))
      expectCutOnlyAsSaid(metaspace, 'without template')
      expectCutsToEncodeAsTheWhole(metaspace, [{ addSpecialTokens: false }])
      // The `▁` its pre-tokenizer puts before a text is not put before one that begins with a
      // space: `afterCut` leaves nothing out.
      const without = { addSpecialTokens: false }
      expect([...metaspace.encode(' two  three', { ...without, afterCut: true })]).toEqual([...metaspace.encode(' two  three', without)])
    },
  )

  it.each([
    ["BERT's fixture without its truncation (WordPiece after BERT's pre-tokenizer)", { ...fixture<object>('tokenizers/bert.json'), truncation: null }],
    ['the Unigram fixture (NFKC, then a Metaspace pre-tokenizer that splits)', fixture<object>('tokenizers/unigram.json')],
    ["the SentencePiece fixture (XLM-RoBERTa's conversion: a character map, the end stripped, runs of spaces as a `▁`; a Metaspace that splits)", fixture<object>('tokenizers/sentencepiece.json')],
    ["T5's shape (a character map alone; WhitespaceSplit, then a Metaspace)", t5Shaped()],
  ])('%s: split at every space, so cut at a space after a letter, without the template', (_name, file) => {
    const tokenizer = Tokenizer.fromJSON(JSON.stringify(file))
    expectCutOnlyAsSaid(tokenizer, 'without template')
    expectCutsToEncodeAsTheWhole(tokenizer, [{ addSpecialTokens: false }])
    // At a space after a letter only: not before the comma, nor at the space after it.
    expect(tokenizer.lastSafeCut(Buffer.from('one two, three'), 0, { addSpecialTokens: false })).toBe(3)
  })

  it('finds the last word gap from `from`, and -1 where there is none', () => {
    const bytes = Buffer.from('one two, three  four x')
    expect(o200k.lastSafeCut(bytes)).toBe(20)
    expect(o200k.lastSafeCut(bytes, 20)).toBe(20)
    expect(o200k.lastSafeCut(bytes, 21)).toBe(-1)
    expect(o200k.lastSafeCut(bytes.subarray(0, 20))).toBe(14)
    expect(o200k.lastSafeCut(bytes.subarray(0, 14))).toBe(7)
    // Nothing after the place is read.
    expect(o200k.lastSafeCut(Buffer.from('one '))).toBe(3)
    expect(o200k.lastSafeCut(Buffer.from('12 34 ...'))).toBe(-1)
    // Any script's letters, and punctuation of any script.
    expect(o200k.lastSafeCut(Buffer.from('日本語 テキスト 12 34'))).toBe(22)
    const chinese = Buffer.from('中文。中文')
    expect(o200k.lastSafeCut(chinese)).toBe(6)
    // The `。` not whole yet: no place, until the rest of it comes.
    expect(o200k.lastSafeCut(chinese.subarray(0, 8))).toBe(-1)
    expect(o200k.lastSafeCut(chinese.subarray(0, 9), 8 - 3)).toBe(6)
    expect(o200k.lastSafeCut(new Uint8Array(0), 5)).toBe(-1)
  })

  it('is -1 for a tokenizer whose texts are not cut', () => {
    const bytes = Buffer.from('plenty of word gaps here')
    // BERT's fixture: its truncation reads across a cut, and its template adds [CLS] and [SEP]
    // around each text. GPT-2's, byte-level over GPT-2's pattern, is cut.
    expect(Tokenizer.fromFile(join(FIXTURES, 'tokenizers/bert.json')).lastSafeCut(bytes)).toBe(-1)
    expect(Tokenizer.fromFile(join(FIXTURES, 'tokenizers/gpt2.json')).lastSafeCut(bytes)).toBe(19)
    // A pattern of the user's own: nothing is known of it.
    const own = Tokenizer.fromTiktoken(rankFileOf('r50k_base'), { pattern: String.raw`\S+|\s+` })
    expect(own.lastSafeCut(bytes)).toBe(-1)
    // The same ranks under GPT-2's own pattern are cut.
    const gpt2Pattern = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
    expect(Tokenizer.fromTiktoken(rankFileOf('r50k_base'), { pattern: gpt2Pattern }).lastSafeCut(bytes)).toBe(19)
    // Llama 3.1's kind: a template token before each text, which each part would get; cut for
    // parts encoded without it.
    const templated = Tokenizer.fromJSON(JSON.stringify(gpt2WithTemplate()))
    expect(templated.lastSafeCut(bytes)).toBe(-1)
    expect(templated.lastSafeCut(bytes, 0, { addSpecialTokens: true })).toBe(-1)
    expect(templated.lastSafeCut(bytes, 0, { addSpecialTokens: false })).toBe(19)
    const cut = templated.lastSafeCut(bytes, 0, { addSpecialTokens: false })
    const without = { addSpecialTokens: false }
    expect([...templated.encode(bytes.subarray(0, cut).toString(), without), ...templated.encode(bytes.subarray(cut).toString(), without)]).toEqual([
      ...templated.encode(bytes.toString(), without),
    ])
    // No cut parts a special token, its own or one the user added, nor what may begin one.
    const spaced = Tokenizer.fromEncoding('cl100k_base', { specialTokens: { '<|my token|>': 100300 } })
    const special = Buffer.from('say <|my token|>')
    expect(spaced.lastSafeCut(bytes)).toBe(19)
    expect(spaced.lastSafeCut(special)).toBe(3)
    expect(spaced.lastSafeCut(special.subarray(0, 9))).toBe(3)
    expect(Tokenizer.fromEncoding('cl100k_base').lastSafeCut(special)).toBe(14)
    expect(Tokenizer.fromEncoding('cl100k_base').lastSafeCut(Buffer.from('say <|endoftext|>'))).toBe(3)
  })

  it.each([
    ['bytes a string', () => o200k.lastSafeCut('text' as unknown as Uint8Array), TypeError, /bytes is a string; expected a Uint8Array/],
    ['from negative', () => o200k.lastSafeCut(Buffer.from('a b'), -1), RangeError, /from is -1; expected a whole number/],
    ['from not whole', () => o200k.lastSafeCut(Buffer.from('a b'), 1.5), RangeError, /from is 1.5; expected a whole number/],
    ['from a string', () => o200k.lastSafeCut(Buffer.from('a b'), '1' as unknown as number), TypeError, /from is a string; expected a whole number/],
    ['an unknown option', () => o200k.lastSafeCut(Buffer.from('a b'), 0, { addSpecial: false } as object), TypeError, /options\.addSpecial is not an option of lastSafeCut \(options: addSpecialTokens, afterCut\)/],
    ['an option not a boolean', () => o200k.lastSafeCut(Buffer.from('a b'), 0, { addSpecialTokens: 1 as unknown as boolean }), TypeError, /addSpecialTokens is a number; expected true or false/],
  ])('%s is refused', (_name, call, kind, message) => {
    expect(call).toThrow(kind)
    expect(call).toThrow(message)
  })
})

describe('keptByTruncation: the start of a text still being read that a truncation keeps', () => {
  const bert = Tokenizer.fromFile(join(FIXTURES, 'tokenizers/bert.json'))
  const prose = corpus.bigTxt().slice(0, 400_000)
  const multilingual = corpus
    .udhrDocuments()
    .map((document) => document.text)
    .join(' ')
    .slice(0, 400_000)

  it.each([
    ['prose', prose],
    ['many scripts', multilingual],
  ])("BERT's file (128 ids), %s: the start's ids are the whole text's, wherever the bytes held end", (_, text) => {
    const bytes = Buffer.from(text)
    const whole = bert.encode(text)
    expect(whole.length).toBe(128)
    let found = 0
    for (const held of [100, 5_001, 20_003, 65_537, 200_001]) {
      const kept = bert.keptByTruncation(bytes.subarray(0, held))
      if (kept === -1) continue
      found++
      expect(kept).toBeGreaterThan(0)
      expect(kept).toBeLessThanOrEqual(held)
      const start = bytes.subarray(0, kept)
      expect(new TextDecoder('utf-8', { fatal: true }).decode(start)).toBe(start.toString())
      expect([...bert.encode(start.toString())]).toEqual([...whole])
    }
    // Too little held for 128 ids: none yet; enough: found.
    expect(bert.keptByTruncation(bytes.subarray(0, 100))).toBe(-1)
    expect(found).toBeGreaterThanOrEqual(3)
  })

  it('-1 where no start is kept: no truncation, one that keeps the last ids, an encoding', () => {
    const bytes = Buffer.from(prose)
    const bertFile = fixture<{ truncation: object }>('tokenizers/bert.json')
    const keepsLast = Tokenizer.fromJSON(JSON.stringify({ ...bertFile, truncation: { ...bertFile.truncation, direction: 'Left' } }))
    expect(keepsLast.keptByTruncation(bytes)).toBe(-1)
    expect(Tokenizer.fromJSON(JSON.stringify({ ...bertFile, truncation: null })).keptByTruncation(bytes)).toBe(-1)
    expect(Tokenizer.fromFile(join(FIXTURES, 'tokenizers/gpt2.json')).keptByTruncation(bytes)).toBe(-1)
    expect(o200k.keptByTruncation(bytes)).toBe(-1)
  })

  it('bytes that are not a Uint8Array are a TypeError', () => {
    expect(() => bert.keptByTruncation('text' as unknown as Uint8Array)).toThrow(TypeError)
    expect(() => bert.keptByTruncation(undefined as unknown as Uint8Array)).toThrow(/bytes is undefined; expected a Uint8Array/)
  })
})

describe('batchtok/stream', () => {
  it('takes batches of lines, with an EOS id, and a failing batch rejects with its source', async () => {
    const batches = [
      { lines: Buffer.from('one\ntwo\n'), format: 'lines' as const, source: 'a' },
      { lines: Buffer.from('{"text":"three"}\n\n'), format: 'jsonl' as const, field: 'text', source: 'b' },
    ]
    const out = []
    for await (const batch of stream.encodeBatches(o200k, batches, { eosId: 199999 })) out.push(batch)
    expect(out.map((b) => [b.documents, b.lines, b.bytes, b.source])).toEqual([
      [2, 2, 6, 'a'],
      [1, 2, 5, 'b'],
    ])
    expect(Array.from(out[1].ids)).toEqual([...o200k.encode('three'), 199999])
    const failing = [{ lines: Buffer.from('{"text":1}\n'), format: 'jsonl' as const, field: 'text', source: { file: 'x' } }]
    const error = await (async () => {
      for await (const _ of stream.encodeBatches(o200k, failing)) void _
    })().catch((e) => e)
    expect(error.lineIndex).toBe(0)
    expect(error.source).toEqual({ file: 'x' })
  })
})
