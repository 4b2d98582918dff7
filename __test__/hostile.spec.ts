// Issue 8, hostile input: every case gets a correct result or a clear Error, in bounded time and
// memory. RELIABILITY.md tabulates what each case produced. The references are the fixtures
// written by Python tiktoken and tokenizers, and two reference implementations run here: `tiktoken`
// (OpenAI's Rust code compiled to WebAssembly) and `tokenizers` (the Hugging Face Node binding).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

import {
  FIXTURES,
  type HfFixture,
  HF_TOKENIZERS,
  type OpenAiFixture,
  type Texts,
  batchtok,
  corpus,
  fixture,
  hfTokenizer,
} from './helpers'

const require = createRequire(import.meta.url)
const runs = require('../scripts/reliability.js') as typeof import('../scripts/reliability.js')
const tiktoken = require('tiktoken') as typeof import('tiktoken')
const hf = require('tokenizers') as typeof import('tokenizers')

const { Tokenizer } = batchtok
const o200k = Tokenizer.fromEncoding('o200k_base')
const MiB = 2 ** 20
const texts = fixture<Texts>('texts.json').cases
const openai = fixture<OpenAiFixture>('openai.json').encodings
const hfIds = fixture<HfFixture>('hf.json').tokenizers
const caseIndex = (name: string) => texts.findIndex((c) => c.name === name)
const hfLoaded = Object.fromEntries(HF_TOKENIZERS.map((name) => [name, hfTokenizer(name)]))

/**
 * The ids of a reference `Encoding` without its padding: some fixture files pad every text to a
 * fixed length, which batchtok's ragged batches leave out (README, API).
 */
function unpadded(encoding: { getIds(): number[]; getAttentionMask(): number[] }): number[] {
  const mask = encoding.getAttentionMask()
  return encoding.getIds().filter((_, i) => mask[i] === 1)
}

/** `a` and `b` hold the same ids. */
function sameIds(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** What a call threw, or null. */
function thrown(call: () => unknown): (Error & { code?: string }) | null {
  try {
    call()
    return null
  } catch (error) {
    return error as Error
  }
}

describe('a 100 MB text', () => {
  it('encodes in one batch to the ids of its repeated piece, exactly', async () => {
    // The piece ends at a line end and the next copy starts a new line: no pre-tokenizer piece
    // crosses the seam, which the first check below confirms rather than assumes.
    const piece = corpus.bigDocuments().slice(0, 40).join('')
    const pieceIds = o200k.encode(piece)
    expect(sameIds(o200k.encode(piece + piece), [...pieceIds, ...pieceIds])).toBe(true)

    const copies = Math.ceil((100 * 1000 * 1000) / piece.length)
    const text = piece.repeat(copies)
    expect(text.length).toBeGreaterThanOrEqual(100e6)
    const batch = await o200k.encodeBatch([text])
    expect(batch.length).toBe(1)
    const ids = batch.get(0)
    expect(ids.length).toBe(copies * pieceIds.length)
    let wrongCopies = 0
    for (let c = 0; c < copies; c++) {
      if (!sameIds(ids.subarray(c * pieceIds.length, (c + 1) * pieceIds.length), pieceIds)) wrongCopies++
    }
    expect(wrongCopies).toBe(0)
    expect(Array.from(await o200k.countBatch([text, piece]))).toEqual([ids.length, pieceIds.length])
  })
})

describe('a million empty strings', () => {
  const empties = new Array<string>(1_000_000).fill('')

  it('give a million empty id lists (OpenAI encoding)', async () => {
    const batch = await o200k.encodeBatch(empties)
    expect(batch.length).toBe(1_000_000)
    expect(batch.ids.length).toBe(0)
    expect(batch.offsets.length).toBe(1_000_001)
    expect(batch.offsets.every((o) => o === 0)).toBe(true)
    expect(batch.get(999_999).length).toBe(0)
    expect(openai.o200k_base.ordinary[caseIndex('empty')]).toEqual([])
  })

  it('give a million copies of the template tokens (BERT, addSpecialTokens)', async () => {
    const expected = hfIds.bert.withSpecial[caseIndex('empty')]
    expect(expected.length).toBe(2)
    const batch = await hfLoaded.bert.encodeBatch(empties)
    expect(batch.length).toBe(1_000_000)
    expect(batch.ids.length).toBe(2_000_000)
    let wrong = 0
    for (let i = 0; i < batch.ids.length; i += 2) {
      if (batch.ids[i] !== expected[0] || batch.ids[i + 1] !== expected[1]) wrong++
    }
    expect(wrong).toBe(0)
    expect(Array.from(await hfLoaded.bert.countBatch(empties)).every((n) => n === 2)).toBe(true)
  })
})

describe('invalid UTF-16', () => {
  // Node turns each lone surrogate into U+FFFD when the string crosses napi (as TextEncoder does);
  // batchtok documents that, so the ids must be those of the well-formed string.
  const random = runs.prng(0xd800)
  const units = () =>
    String.fromCharCode(
      ...Array.from({ length: 1 + Math.floor(random() * 40) }, () => {
        const r = random()
        // A third lone or mispaired surrogates, the rest ASCII and BMP letters.
        if (r < 0.33) return 0xd800 + Math.floor(random() * 0x800)
        if (r < 0.66) return 0x20 + Math.floor(random() * 0x5f)
        return 0xa0 + Math.floor(random() * 0xd000)
      }),
    )
  const hostile = [
    '\ud800',
    '\udfff',
    '\udc00\ud800',
    'abc\ud800',
    '\udbffxyz',
    'a\ud83d b\ude00 c',
    '\ud83d\ud83d\ude00',
    '\ud800'.repeat(1000),
    'x\udc00'.repeat(500),
    ...Array.from({ length: 200 }, units),
  ]

  it('a lone surrogate encodes as U+FFFD, as the reference encodes U+FFFD', () => {
    const replacement = caseIndex('single/U+FFFD')
    for (const name of ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'] as const) {
      expect(Array.from(Tokenizer.fromEncoding(name).encode('\ud800')), name).toEqual(openai[name].ordinary[replacement])
    }
    for (const name of HF_TOKENIZERS) {
      expect(Array.from(hfLoaded[name].encode('\udfff')), name).toEqual(hfIds[name].withSpecial[replacement])
    }
  })

  it.each([['o200k_base'], ['cl100k_base'], ...HF_TOKENIZERS.map((n) => [n])])(
    '%s: ids equal those of the string with U+FFFD for each lone surrogate, in batches and alone',
    async (name) => {
      const tokenizer = name.endsWith('_base') ? Tokenizer.fromEncoding(name) : hfLoaded[name]
      const wellFormed = hostile.map((t) => t.toWellFormed())
      expect(wellFormed.some((t, i) => t !== hostile[i])).toBe(true)
      const batch = await tokenizer.encodeBatch(hostile)
      const reference = tokenizer.encodeBatchSync(wellFormed)
      expect(runs.digest(batch)).toBe(runs.digest(reference))
      hostile.forEach((t, i) => expect(sameIds(tokenizer.encode(t), reference.get(i)), `text ${i}`).toBe(true))
    },
  )

  it('decoding the ids gives the well-formed string back (o200k_base)', () => {
    for (const t of hostile) expect(o200k.decode(o200k.encode(t))).toBe(t.toWellFormed())
  })
})

describe('one code point repeated', () => {
  const enc = tiktoken.get_encoding('o200k_base')
  // tiktoken's merge loop is quadratic in a piece's length (1e5 'a' takes it ~13 s here) and a
  // million spaces make it trap, so the reference runs on a shorter run of each.
  const REFERENCE_LENGTH = 3_000
  const runsOf: [string, string, number][] = [
    ['a', 'a', 10_000_000],
    ['0', '0', 1_000_000],
    ['space', ' ', 1_000_000],
    ['emoji', '\u{1F600}', 1_000_000],
    ['e-acute', 'é', 1_000_000],
  ]

  it.each(runsOf)('%s: the reference ids for 3,000, and a run of %s×%i finishes and round-trips', async (_, char, count) => {
    const short = char.repeat(REFERENCE_LENGTH)
    expect(Array.from(o200k.encode(short))).toEqual(Array.from(enc.encode_ordinary(short)))
    const text = char.repeat(count)
    const batch = await o200k.encodeBatch([text])
    const ids = batch.get(0)
    expect(ids.length).toBeGreaterThan(0)
    expect(o200k.decode(ids)).toBe(text)
  })

  it('a million digits are 333,333 copies of the ids of three digits, then one', () => {
    // o200k_base's pre-tokenizer cuts digit runs into groups of at most three.
    const ids = o200k.encode('0'.repeat(1_000_000))
    const three = o200k.encode('000')
    const one = o200k.encode('0')
    expect(three.length).toBe(1)
    expect(ids.length).toBe(333_334)
    expect(ids.subarray(0, 333_333).every((id) => id === three[0])).toBe(true)
    expect(ids[333_333]).toBe(one[0])
  })

  it.each(HF_TOKENIZERS.map((n) => [n]))('%s: runs of 100,000 equal the Hugging Face reference', async (name) => {
    const reference = hf.Tokenizer.fromString(readFileSync(join(FIXTURES, 'tokenizers', `${name}.json`), 'utf8'))
    const tokenizer = hfLoaded[name]
    const batch = await tokenizer.encodeBatch(runsOf.map(([, char]) => char.repeat(100_000)))
    for (let i = 0; i < runsOf.length; i++) {
      const expected = unpadded(await reference.encode(runsOf[i][1].repeat(100_000)))
      expect(sameIds(batch.get(i), expected), runsOf[i][0]).toBe(true)
    }
  })
})

describe('hostile added tokens in a tokenizer.json', () => {
  const gpt2 = JSON.parse(readFileSync(join(FIXTURES, 'tokenizers', 'gpt2.json'), 'utf8'))
  const next = Object.keys(gpt2.model.vocab).length + gpt2.added_tokens.length
  const token = (id: number, content: string, special = false) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: !special,
    special,
  })
  const withAdded = (added: ReturnType<typeof token>[]) =>
    JSON.stringify({ ...gpt2, added_tokens: [...gpt2.added_tokens, ...added] })
  const megabyte = 'x'.repeat(MiB)
  const sample = 'abcabcabc bcab cab hello zebra lion <t5><t99999> <t100000> The quick brown fox <|endoftext|>'

  const cases: [string, () => string, string[]][] = [
    ['one 1 MB added token', () => withAdded([token(next, megabyte)]), [sample, megabyte, `a${megabyte}b${megabyte.slice(1)}`]],
    ['100,000 added tokens', () => withAdded(Array.from({ length: 100_000 }, (_, i) => token(next + i, `<t${i}>`))), [sample, Array.from({ length: 2000 }, (_, i) => `<t${i * 50}>`).join(' ')]],
    ['added tokens that contain each other and overlap', () => withAdded([token(next, 'abc'), token(next + 1, 'abcabc'), token(next + 2, 'bca'), token(next + 3, 'b'), token(next + 4, 'cab', true)]), [sample, 'abcabcabcab', 'bcabcab cabc']],
    ['the same content twice', () => withAdded([token(next, 'hello'), token(next + 1, 'hello')]), [sample, 'hello hello']],
    ['two added tokens with one id', () => withAdded([token(next, 'foo'), token(next, 'bar')]), [sample, 'foo bar foobar']],
    ['added ids that collide with the vocabulary', () => withAdded([token(100, 'zebra'), token(101, 'lion')]), [sample, 'zebra lion']],
    ['an added token equal to a vocabulary token', () => withAdded([token(gpt2.model.vocab.hello, 'hello')]), [sample]],
    ['an added token with id 2^32 - 2', () => withAdded([token(4294967294, '<<far>>')]), [sample, '<<far>> <<far>>']],
    ['an empty added token', () => withAdded([token(next, '')]), [sample, '']],
  ]

  it.each(cases)('%s: loads, and encodes as the Hugging Face reference does', async (_, json, inputs) => {
    const source = json()
    const tokenizer = Tokenizer.fromJSON(source)
    const reference = hf.Tokenizer.fromString(source)
    const batch = await tokenizer.encodeBatch(inputs)
    for (let i = 0; i < inputs.length; i++) {
      const expected = unpadded(await reference.encode(inputs[i]))
      expect(sameIds(batch.get(i), expected), `input ${i}`).toBe(true)
      expect(tokenizer.decode(batch.get(i))).toBe(await reference.decode(expected, false))
    }
  })

  it('a negative added id is refused with a clear Error, as by the reference', () => {
    const error = thrown(() => Tokenizer.fromJSON(withAdded([token(-1, 'neg')])))
    expect(error).toBeInstanceOf(Error)
    expect(error!.message).toMatch(/not a tokenizer\.json that Hugging Face tokenizers can read: invalid value: integer `-1`, expected u32/)
  })

  it('vocabulary ids near 2^32 cost memory by token count, not by id value', () => {
    // A WordLevel vocabulary with three tokens, one of them at id 4,000,000,000: a table indexed
    // by id would need 4 GB.
    const json = JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [],
      normalizer: null,
      pre_tokenizer: { type: 'Whitespace' },
      post_processor: null,
      decoder: null,
      model: { type: 'WordLevel', vocab: { '[UNK]': 0, a: 1, b: 4_000_000_000 }, unk_token: '[UNK]' },
    })
    runs.gcNow()
    const before = process.memoryUsage().rss
    const tokenizer = Tokenizer.fromJSON(json)
    expect(process.memoryUsage().rss - before).toBeLessThan(256 * MiB)
    expect(tokenizer.idLimit).toBe(4_000_000_001)
    expect(tokenizer.vocabSize).toBe(3)
    expect(Array.from(tokenizer.encode('a b c'))).toEqual([1, 4_000_000_000, 0])
    expect(tokenizer.decode([4_000_000_000, 1])).toBe('b a')
    const error = thrown(() => tokenizer.decode([2]))
    expect(error).toBeInstanceOf(RangeError)
    expect(error!.message).toMatch(/id 2 at index 0 is not in the vocabulary/)
  })
})

describe('truncated tokenizer.json files', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'batchtok-hostile-'))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))
  const CLEAR = /is not valid JSON: .* at line \d+ column \d+|cannot read tokenizer file '.*': stream did not contain valid UTF-8/

  it.each(['bert', 'unigram'])('%s.json cut at 60 places: each fromJSON and fromFile throws a clear Error', (name) => {
    const bytes = readFileSync(join(FIXTURES, 'tokenizers', `${name}.json`))
    const text = bytes.toString('utf8')
    const random = runs.prng(name.length)
    // The ends and the start are where parsers slip; the rest fall anywhere.
    const cuts = [0, 1, 2, 10, bytes.length - 2, bytes.length - 3, ...Array.from({ length: 54 }, () => Math.floor(random() * bytes.length))]
    for (const cut of cuts) {
      const file = join(scratch, `${name}-${cut}.json`)
      writeFileSync(file, bytes.subarray(0, cut))
      const fromFile = thrown(() => Tokenizer.fromFile(file))
      expect(fromFile, `fromFile cut at byte ${cut}`).toBeInstanceOf(Error)
      expect(fromFile!.constructor, `cut at ${cut}`).toBe(Error)
      expect(fromFile!.message, `cut at ${cut}`).toMatch(CLEAR)
      const fromJSON = thrown(() => Tokenizer.fromJSON(text.slice(0, Math.min(cut, text.length - 2))))
      expect(fromJSON, `fromJSON cut at ${cut}`).toBeInstanceOf(Error)
      expect(fromJSON!.message, `cut at ${cut}`).toMatch(/the tokenizer JSON is not valid JSON: /)
    }
    expect(Array.from(Tokenizer.fromFile(join(FIXTURES, 'tokenizers', `${name}.json`)).encode('still works'))).toEqual(Array.from(hfLoaded[name].encode('still works')))
  })

  it('a file cut inside a multi-byte character names the encoding problem', () => {
    const bytes = readFileSync(join(FIXTURES, 'tokenizers', 'bert.json'))
    // The first byte that starts a multi-byte UTF-8 sequence, cut right after it.
    const lead = bytes.findIndex((b) => b >= 0xc2 && b <= 0xf4)
    expect(lead).toBeGreaterThan(0)
    const file = join(scratch, 'bert-mid-char.json')
    writeFileSync(file, bytes.subarray(0, lead + 1))
    expect(thrown(() => Tokenizer.fromFile(file))?.message).toMatch(/cannot read tokenizer file '.*bert-mid-char\.json': stream did not contain valid UTF-8/)
  })
})

describe('ids near 2^32 in decode', () => {
  it.each([
    ['4294967295', [4294967295], RangeError, /id 4294967295 at index 0 is not in the vocabulary \(ids run from 0 to 200018\)/],
    ['2^32 - 2 in a Uint32Array', new Uint32Array([24912, 4294967294]), RangeError, /id 4294967294 at index 1 is not in the vocabulary/],
    ['-1', [-1], RangeError, /ids\[0\] is -1; ids are whole numbers from 0 to 4294967295/],
    ['2^32', [24912, 4294967296], RangeError, /ids\[1\] is 4294967296; ids are whole numbers/],
    ['NaN', [NaN], RangeError, /ids\[0\] is NaN; ids are whole numbers/],
    ['Infinity', [Infinity], RangeError, /ids\[0\] is Infinity; ids are whole numbers/],
    ['-Infinity', [-Infinity], RangeError, /ids\[0\] is -Infinity; ids are whole numbers/],
    ['1.5', [1.5], RangeError, /ids\[0\] is 1\.5; ids are whole numbers/],
    ['a bigint', [1n], TypeError, /ids\[0\] is a bigint; ids are whole numbers/],
    ['a string', ['7'], TypeError, /ids\[0\] is a string; ids are whole numbers/],
  ] as [string, unknown, ErrorConstructor, RegExp][])('decode of %s throws an error of the documented class, naming the id', (_, ids, errorClass, message) => {
    const error = thrown(() => o200k.decode(ids as number[]))
    expect(error).toBeInstanceOf(errorClass)
    expect(error!.message).toMatch(message)
  })

  it('decodeBatch rejects with a RangeError naming the list and the index', async () => {
    const error = await o200k.decodeBatch([[24912], [24912, 2375, 4294967295]]).then(
      () => null,
      (e: Error) => e,
    )
    expect(error).toBeInstanceOf(RangeError)
    expect(error!.message).toMatch(/lists\[1\]: id 4294967295 at index 2 is not in the vocabulary/)
  })

  it('ten million ids decode; one bad id at the end of them is found and named', () => {
    const hello = o200k.encode('hello')
    expect(hello.length).toBe(1)
    const ids = new Uint32Array(10_000_000).fill(hello[0])
    expect(o200k.decode(ids)).toBe('hello'.repeat(10_000_000))
    ids[9_999_999] = 4294967295
    expect(thrown(() => o200k.decode(ids))?.message).toMatch(/id 4294967295 at index 9999999 /)
  })
})
