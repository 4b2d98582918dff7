// encodeForModel against Python tokenizers (encode_batch with enable_padding and
// enable_truncation, written by scripts/fixtures.py into model-inputs.json) on WordPiece,
// byte-level BPE (also as the RoBERTa family writes it: a prefix space its template trims from
// the offsets), Unigram and two real model files (`llama2`, Mistral 7B's SentencePiece-style BPE
// with byte fallback, Llama 3's byte-level BPE); truncation chosen per call on the encode and count
// methods; and the errors of bad inputs and options.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

import { FIXTURES, batchtok, fixture } from './helpers'

const { ensureRealTokenizers } = require('../scripts/real-tokenizers.js') as {
  ensureRealTokenizers: (names: string[]) => Record<string, string>
}

type Input = string | [string, string]
type PaddingSection = {
  strategy: 'BatchLongest' | { Fixed: number }
  direction: 'Left' | 'Right'
  pad_to_multiple_of: number | null
  pad_id: number
  pad_type_id: number
  pad_token: string
}
type TruncationSection = {
  max_length: number
  strategy: 'LongestFirst' | 'OnlyFirst' | 'OnlySecond'
  stride: number
  direction: 'Left' | 'Right'
}
type Row = {
  sample: number
  ids: number[]
  typeIds: number[]
  attentionMask: number[]
  specialTokensMask: number[]
  wordIds: number[]
  tokens: string[]
  offsets: [number, number][]
  /** The text each token comes from (-1: a template or pad token). */
  sequenceIds: number[]
}
type Case = {
  file: string
  case: string
  padding: PaddingSection
  truncation: TruncationSection | null
  addSpecialTokens: boolean
  inputs: Input[]
  rows: Row[]
}

const cases = fixture<{ cases: Case[] }>('model-inputs.json').cases
const files: Record<string, string> = {
  bert: join(FIXTURES, 'tokenizers', 'bert.json'),
  gpt2: join(FIXTURES, 'tokenizers', 'gpt2.json'),
  unigram: join(FIXTURES, 'tokenizers', 'unigram.json'),
  // The fixture's real files (scripts/fixtures.py's MODEL_INPUT_REAL).
  ...ensureRealTokenizers(['llama2', 'llama3']),
}
const parsed = new Map<string, Record<string, any>>()
const fileJson = (name: string) => {
  if (!parsed.has(name)) parsed.set(name, name === 'roberta' ? robertaStyle(fileJson('gpt2')) : JSON.parse(readFileSync(files[name], 'utf8')))
  return parsed.get(name)!
}

/**
 * A byte-level file as the RoBERTa family writes theirs (scripts/fixtures.py's `roberta_style`):
 * a space before each text and each piece after an added token, and `RobertaProcessing` trimming
 * it out of the offsets.
 */
function robertaStyle(file: Record<string, any>): Record<string, any> {
  const eos = file.added_tokens.find((token: { content: string }) => token.content === '<|endoftext|>')
  const template = [eos.content, eos.id]
  return {
    ...file,
    pre_tokenizer: { ...file.pre_tokenizer, add_prefix_space: true },
    post_processor: { type: 'RobertaProcessing', sep: template, cls: template, trim_offsets: true, add_prefix_space: true },
  }
}

const loaded = new Map<string, InstanceType<typeof batchtok.Tokenizer>>()

/**
 * The file `name` with these padding and truncation sections, loaded once per distinct file and
 * sections (a real file takes about a second to load and build, and several tests read the same).
 */
function tokenizerWith(name: string, padding: PaddingSection | null, truncation: TruncationSection | null) {
  const key = JSON.stringify([name, padding, truncation])
  if (!loaded.has(key)) {
    loaded.set(key, batchtok.Tokenizer.fromJSON(JSON.stringify({ ...fileJson(name), padding, truncation })))
  }
  return loaded.get(key)!
}

const ALL_FIELDS = {
  returnOffsets: true,
  returnTokens: true,
  returnWordIds: true,
  returnSequenceIds: true,
  returnSpecialTokensMask: true,
  returnOverflowing: true,
} as const

/** The options that ask for what the case's sections set, on a file whose sections say otherwise. */
function explicitOptions(c: Case) {
  const p = c.padding
  const t = c.truncation
  const strategies = { LongestFirst: 'longestFirst', OnlyFirst: 'onlyFirst', OnlySecond: 'onlySecond' } as const
  return {
    addSpecialTokens: c.addSpecialTokens,
    padding: p.strategy === 'BatchLongest' ? ('longest' as const) : ('maxLength' as const),
    ...(p.strategy === 'BatchLongest' ? {} : { maxLength: p.strategy.Fixed }),
    padSide: p.direction === 'Left' ? ('left' as const) : ('right' as const),
    ...(p.pad_to_multiple_of ? { padToMultipleOf: p.pad_to_multiple_of } : {}),
    truncation: t
      ? {
          maxLength: t.max_length,
          strategy: strategies[t.strategy],
          stride: t.stride,
          direction: t.direction === 'Left' ? ('left' as const) : ('right' as const),
        }
      : false,
  }
}

/** A file whose sections differ from the case's: default padding, and a truncation the options turn off. */
function otherSections(c: Case): [PaddingSection, TruncationSection | null] {
  const padding: PaddingSection = { ...c.padding, strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: null }
  const truncation: TruncationSection | null = c.truncation
    ? null
    : { max_length: 3, strategy: 'LongestFirst', stride: 0, direction: 'Right' }
  return [padding, truncation]
}

const numbers = (array: ArrayLike<number | bigint>) => Array.from(array as ArrayLike<number>, Number)
const flat = <K extends keyof Row>(rows: Row[], key: K) => rows.flatMap((row) => row[key] as unknown[])
const mainRows = (rows: Row[]) => rows.filter((row, i) => i === 0 || rows[i - 1].sample !== row.sample)

function expectIdsAndMasks(got: import('../index.js').ModelInputs, rows: Row[]) {
  expect(got.dims).toEqual([rows.length, rows[0].ids.length])
  expect(numbers(got.inputIds)).toEqual(flat(rows, 'ids'))
  expect(numbers(got.attentionMask)).toEqual(flat(rows, 'attentionMask'))
  expect(numbers(got.tokenTypeIds)).toEqual(flat(rows, 'typeIds'))
}

function expectEveryField(got: import('../index.js').ModelInputs, rows: Row[]) {
  expectIdsAndMasks(got, rows)
  expect(numbers(got.offsets!)).toEqual(rows.flatMap((row) => row.offsets.flat()))
  expect(got.tokens).toEqual(rows.map((row) => row.tokens))
  expect(numbers(got.wordIds!)).toEqual(flat(rows, 'wordIds'))
  expect(numbers(got.sequenceIds!)).toEqual(flat(rows, 'sequenceIds'))
  expect(numbers(got.specialTokensMask!)).toEqual(flat(rows, 'specialTokensMask'))
  expect(numbers(got.overflowToSampleMapping!)).toEqual(rows.map((row) => row.sample))
}

describe.each(cases.map((c) => [`${c.file} ${c.case}`, c] as const))('%s against Python tokenizers', (_, c) => {
  it('gives ids, attention mask and type ids from the file’s sections', async () => {
    const tokenizer = tokenizerWith(c.file, c.padding, c.truncation)
    const got = await tokenizer.encodeForModel(c.inputs, { addSpecialTokens: c.addSpecialTokens })
    expect(got.inputIds).toBeInstanceOf(BigInt64Array)
    expectIdsAndMasks(got, mainRows(c.rows))
  })

  it('gives every field, overflowing windows as rows, from the file’s sections', () => {
    const tokenizer = tokenizerWith(c.file, c.padding, c.truncation)
    const got = tokenizer.encodeForModelSync(c.inputs, { addSpecialTokens: c.addSpecialTokens, ...ALL_FIELDS })
    expectEveryField(got, c.rows)
  })

  it('gives the same with the pad token from the call, on a file without a padding section', () => {
    const tokenizer = tokenizerWith(c.file, null, c.truncation)
    const options = { ...explicitOptions(c), padToken: c.padding.pad_token }
    expectIdsAndMasks(tokenizer.encodeForModelSync(c.inputs, { ...options, dtype: 'int32' }), mainRows(c.rows))
  })

  it('gives the same from options that override the file’s sections', () => {
    const tokenizer = tokenizerWith(c.file, ...otherSections(c))
    const options = explicitOptions(c)
    expectIdsAndMasks(tokenizer.encodeForModelSync(c.inputs, { ...options, dtype: 'int32' }), mainRows(c.rows))
    expectEveryField(tokenizer.encodeForModelSync(c.inputs, { ...options, ...ALL_FIELDS }), c.rows)
  })

  it('gives offsets that slice each token’s own text, never inside a character', () => {
    const tokenizer = tokenizerWith(c.file, c.padding, c.truncation)
    const got = tokenizer.encodeForModelSync(c.inputs, { addSpecialTokens: c.addSpecialTokens, ...ALL_FIELDS })
    const [rows, sequence] = got.dims
    const mapping = got.overflowToSampleMapping!
    for (let row = 0; row < rows; row++) {
      const input = c.inputs[mapping[row]]
      const texts = typeof input === 'string' ? [input] : input
      for (let t = 0; t < sequence; t++) {
        const cell = row * sequence + t
        const [start, end] = [got.offsets![2 * cell], got.offsets![2 * cell + 1]]
        if (end === start) continue
        const text = texts[Math.max(0, c.rows[row].sequenceIds[t])]
        const slice = text.slice(start, end)
        expect(slice.length, `${slice}`).toBe(end - start)
        expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(slice), `row ${row} token ${t}: ${JSON.stringify(slice)}`).toBe(
          false,
        )
        const token = got.tokens![row][t]
        if (c.file === 'bert' && token !== '[UNK]') {
          const plain = slice.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '')
          expect(plain).toBe(token.replace(/^##/, ''))
        }
      }
    }
  })
})

describe('truncation chosen per call', () => {
  const bert = batchtok.Tokenizer.fromFile(files.bert) // its file truncates to 128
  const text = 'word '.repeat(500)

  it('counts a text’s true size by default, and encodes with the file’s truncation', async () => {
    expect(bert.count(text)).toBe(502)
    expect(bert.isWithinTokenLimit(text, 1000)).toBe(502)
    expect(await bert.countBatch([text, 'word'])).toEqual(Uint32Array.of(502, 3))
    expect(bert.countBatchSync([text])).toEqual(Uint32Array.of(502))
    const bytes = new TextEncoder().encode(text)
    expect(await bert.countUtf8Batch(bytes, [0, bytes.length])).toEqual(Uint32Array.of(502))
    expect(bert.encode(text)).toHaveLength(128)
    expect((await bert.encodeBatch([text])).ids).toHaveLength(128)
    expect(bert.encodeUtf8BatchSync(bytes, [0, bytes.length]).ids).toHaveLength(128)
  })

  it('takes false, true and parameters on every encode and count method', async () => {
    expect(bert.encode(text, { truncation: false })).toHaveLength(502)
    expect(bert.count(text, { truncation: true })).toBe(128)
    expect(bert.isWithinTokenLimit(text, 200, { truncation: true })).toBe(128)
    expect(bert.encodeBatchSync([text], { truncation: false }).ids).toHaveLength(502)
    expect(await bert.countBatch([text], { truncation: { maxLength: 10 } })).toEqual(Uint32Array.of(10))
    const left = bert.encode('one two three four five', { truncation: { maxLength: 4, direction: 'left' } })
    expect(Array.from(left)).toEqual(Array.from(bert.encode('four five')))
  })

  it('reads true as the file’s truncation, and refuses it where the file has none', () => {
    const plain = tokenizerWith('bert', null, null)
    expect(plain.encode(text)).toHaveLength(502)
    expect(() => plain.encode(text, { truncation: true })).toThrow(/maxLength/)
    expect(plain.encode(text, { truncation: { maxLength: 7 } })).toHaveLength(7)
  })
})

describe('encodeForModel', () => {
  const bert = batchtok.Tokenizer.fromFile(files.bert)

  it('runs on any scheduler, async and sync alike', async () => {
    const inputs: Input[] = Array.from({ length: 300 }, (_, i) =>
      i % 3 ? `text number ${i} 😀`.repeat(1 + (i % 7)) : [`question ${i}?`, `context ${i}`],
    )
    const scheduler = new batchtok.Scheduler({ threads: 2 })
    const options = { padding: 'longest', scheduler, returnOffsets: true } as const
    const [sync, async] = [bert.encodeForModelSync(inputs, options), await bert.encodeForModel(inputs, options)]
    expect(async.dims).toEqual(sync.dims)
    expect(numbers(async.inputIds)).toEqual(numbers(sync.inputIds))
    expect(numbers(async.offsets!)).toEqual(numbers(sync.offsets!))
    const one = bert.encodeForModelSync([inputs[1]], { padding: false })
    expect(numbers(one.inputIds)).toEqual(numbers(sync.inputIds).slice(sync.dims[1], sync.dims[1] + one.dims[1]))
  })

  it('gives each dtype', () => {
    expect(bert.encodeForModelSync(['a'], { dtype: 'int32' }).attentionMask).toBeInstanceOf(Int32Array)
    expect(bert.encodeForModelSync(['a'], { dtype: 'uint32' }).tokenTypeIds).toBeInstanceOf(Uint32Array)
    expect(bert.encodeForModelSync(['a']).inputIds).toBeInstanceOf(BigInt64Array)
  })

  // Large enough that the type-id array, where it is all zeros, is fresh memory nothing writes.
  it('gives a large batch every type id, zeros or not, in arrays of its own', () => {
    const texts = Array.from({ length: 40_000 }, (_, i) => 'word a b '.repeat(1 + (i % 5)))
    const expectRows = (got: import('../index.js').ModelInputs, inputs: Input[], padTypeId: number) => {
      const [rows, sequence] = got.dims
      expect(rows).toBe(inputs.length)
      for (const row of [0, 1, 2, 3, 4, 17, rows - 1]) {
        const alone = bert.encodeForModelSync([inputs[row]], { padding: false })
        const length = alone.dims[1]
        const at = row * sequence
        expect(numbers(got.inputIds.subarray(at, at + length))).toEqual(numbers(alone.inputIds))
        expect(numbers(got.tokenTypeIds.subarray(at, at + length))).toEqual(numbers(alone.tokenTypeIds))
        expect(numbers(got.tokenTypeIds.subarray(at + length, at + sequence))).toEqual(
          Array(sequence - length).fill(padTypeId),
        )
      }
    }
    const single = bert.encodeForModelSync(texts, { padding: 'longest' })
    expect(single.tokenTypeIds.byteLength).toBeGreaterThan(1 << 20)
    expect((single.tokenTypeIds as BigInt64Array).every((v) => v === 0n)).toBe(true)
    expectRows(single, texts, 0)
    // The array is the caller's: written, it keeps what is written, and no later call shares it.
    ;(single.tokenTypeIds as BigInt64Array).fill(7n, 5, 9)
    const again = bert.encodeForModelSync(texts, { padding: 'longest' })
    expect(numbers(single.tokenTypeIds.subarray(4, 10))).toEqual([0, 7, 7, 7, 7, 0])
    expect((again.tokenTypeIds as BigInt64Array).every((v) => v === 0n)).toBe(true)
    const pairs: Input[] = texts.map((text, i) => (i % 2 ? [text, 'a b'] : text))
    expectRows(bert.encodeForModelSync(pairs, { padding: 'longest', dtype: 'int32' }), pairs, 0)
    const padSection = fileJson('bert').padding as PaddingSection | null
    const typedPadding: PaddingSection = {
      ...(padSection ?? { pad_to_multiple_of: null, pad_id: 0, pad_token: '[PAD]' }),
      strategy: 'BatchLongest',
      direction: 'Right',
      pad_type_id: 1,
    }
    const typedPad = tokenizerWith('bert', typedPadding, null).encodeForModelSync(texts, { padding: 'longest' })
    expectRows(typedPad, texts, 1)
  })

  it('rejects when aborted', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(bert.encodeForModel(['a'], { signal: controller.signal })).rejects.toThrow(/aborted/)
  })
})

describe('bad inputs and options', () => {
  const bert = batchtok.Tokenizer.fromFile(files.bert)
  const gpt2 = batchtok.Tokenizer.fromFile(files.gpt2)
  const o200k = batchtok.Tokenizer.fromEncoding('o200k_base')
  type Bad = [string, () => unknown, ErrorConstructor, RegExp]
  const table: Bad[] = [
    ['a pair of one', () => bert.encodeForModelSync([['a'] as never]), TypeError, /^inputs\[0\] is an array of 1; expected a string or a pair/],
    ['a pair of three', () => bert.encodeForModelSync([['a', 'b', 'c'] as never]), TypeError, /^inputs\[0\] is an array of 3/],
    ['a pair with a number', () => bert.encodeForModelSync([['a', 1] as never]), TypeError, /^inputs\[0\]\[1\] is a number; expected a string/],
    ['a number input', () => bert.encodeForModelSync([1 as never]), TypeError, /^inputs\[0\] is a number; expected a string or a pair/],
    ['a string for the array', () => bert.encodeForModelSync('a' as never), TypeError, /^inputs is a string; expected an array/],
    ['maxLength 0', () => bert.encodeForModelSync(['a'], { maxLength: 0 }), RangeError, /^options\.maxLength is 0; expected a whole number from 1/],
    ['maxLength -1', () => bert.encodeForModelSync(['a'], { maxLength: -1 }), RangeError, /^options\.maxLength is -1/],
    ['maxLength 1.5', () => bert.encodeForModelSync(['a'], { maxLength: 1.5 }), RangeError, /^options\.maxLength is 1\.5/],
    ['truncation maxLength 0', () => bert.encode('a', { truncation: { maxLength: 0 } }), RangeError, /^options\.truncation\.maxLength is 0/],
    ['truncation maxLength below the template', () => bert.encode('a', { truncation: { maxLength: 1 } }), RangeError, /less than the 2 tokens the template adds/],
    ['a stride as long as the row', () => bert.encode('a', { truncation: { maxLength: 5, stride: 3 } }), RangeError, /stride is 3, not less than the 3 tokens/],
    ['padToMultipleOf 0', () => bert.encodeForModelSync(['a'], { padToMultipleOf: 0 }), RangeError, /^options\.padToMultipleOf is 0/],
    ['an unknown dtype', () => bert.encodeForModelSync(['a'], { dtype: 'float32' as never }), RangeError, /^options\.dtype is "float32"; expected one of 'int64', 'int32', 'uint32'/],
    ['an unknown padding', () => bert.encodeForModelSync(['a'], { padding: 'max' as never }), RangeError, /^options\.padding is "max"; expected one of 'longest', 'maxLength'/],
    ['padding true', () => bert.encodeForModelSync(['a'], { padding: true as never }), TypeError, /^options\.padding is true; expected false, 'longest' or 'maxLength'/],
    ['an unknown strategy', () => bert.encodeForModelSync(['a'], { truncation: { strategy: 'longest' as never } }), RangeError, /^options\.truncation\.strategy is "longest"; expected one of 'longestFirst'/],
    ['an unknown direction', () => bert.count('a', { truncation: { direction: 'up' as never } }), RangeError, /^options\.truncation\.direction is "up"/],
    ['an unknown padSide', () => bert.encodeForModelSync(['a'], { padSide: 'top' as never }), RangeError, /^options\.padSide is "top"; expected one of 'right', 'left'/],
    ['a misspelt truncation key', () => bert.encode('a', { truncation: { maxLenght: 5 } as never }), TypeError, /options\.maxLenght is not an option of truncation; did you mean 'maxLength'/],
    ['a misspelt option', () => bert.encodeForModelSync(['a'], { paddng: 'longest' } as never), TypeError, /did you mean 'padding'/],
    ['truncation of another type', () => bert.count('a', { truncation: 5 as never }), TypeError, /^options\.truncation is a number; expected true, false or/],
    ['padding without a pad token', () => gpt2.encodeForModelSync(['a', 'a b'], { padding: 'longest' }), Error, /padding needs a pad token, and this tokenizer has none/],
    ['a pad token the vocabulary lacks', () => gpt2.encodeForModelSync(['a', 'a b'], { padding: 'longest', padToken: '<pad>' }), RangeError, /^options\.padToken "<pad>" is not a token of this tokenizer; pass one it has/],
    ['a pad token that is not a string', () => gpt2.encodeForModelSync(['a'], { padToken: 0 as never }), TypeError, /^options\.padToken is a number; expected a string/],
    ['unequal rows without padding', () => gpt2.encodeForModelSync(['a', 'a b']), RangeError, /rows differ in length .* pass padding: 'longest'/],
    ['maxLength padding with no length', () => tokenizerWith('bert', { ...(fileJson('bert').padding as PaddingSection), strategy: 'BatchLongest' }, null).encodeForModelSync(['a'], { padding: 'maxLength' }), Error, /padding: 'maxLength' needs a length/],
    ['truncation on an OpenAI encoding', () => o200k.encode('a', { truncation: true }), TypeError, /truncation applies to Hugging Face tokenizers; o200k_base .* Use truncate\(text, maxTokens\)/],
    ['countBatch truncation on an OpenAI encoding', () => o200k.countBatchSync(['a'], { truncation: false }), TypeError, /Use truncate\(/],
    ['encodeForModel on an OpenAI encoding', () => o200k.encodeForModelSync(['a']), TypeError, /^encodeForModelSync applies to Hugging Face tokenizers/],
    ['only second on a single text that needs cutting', () => bert.encodeForModelSync(['a b c d e f'], { truncation: { maxLength: 4, strategy: 'onlySecond' } }), Error, /item 0 of the batch failed: .*[Ss]econd sequence not provided/],
  ]

  it.each(table)('%s', (_, call, errorClass, message) => {
    let thrown: unknown
    try {
      call()
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(errorClass)
    if (errorClass === Error) expect((thrown as Error).constructor).toBe(Error)
    expect((thrown as Error).message).toMatch(message)
  })

  it('rejects rather than throws in the async form', async () => {
    await expect(bert.encodeForModel([['a'] as never])).rejects.toThrow(TypeError)
    await expect(gpt2.encodeForModel(['a', 'a b'], { padding: 'longest' })).rejects.toThrow(/pad token/)
  })
})
