// Python tiktoken's own public test vectors (tests/test_encoding.py, test_simple_public.py and
// test_misc.py of its 0.12.0 release), run through `batchtok/tiktoken` (the `tiktoken` package's
// API) and the `Tokenizer` it wraps. Its tests that need what neither has (decode_with_offsets,
// encoding raw bytes, pickling) are left out; its hypothesis round trips are the fuzz's
// (FUZZING.md) and the parity suite's.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { batchtok } from './helpers'

const require = createRequire(import.meta.url)
const tiktoken = require('batchtok/tiktoken') as typeof import('../entry/tiktoken')
const { Tokenizer } = batchtok

const utf8 = new TextDecoder()
/** tiktoken's `decode`, which gives a string (here `decode` gives bytes, as the package's does). */
const decode = (enc: ReturnType<typeof tiktoken.get_encoding>, ids: Uint32Array | number[]) => utf8.decode(enc.decode(ids))
const ids = (encoded: Uint32Array) => Array.from(encoded)

/** tiktoken's `list_encoding_names()`. */
const ENCODINGS = ['gpt2', 'r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base', 'o200k_harmony'] as const
/** The encodings its parametrized tests run on. */
const PARAMETRIZED = ['r50k_base', 'cl100k_base'] as const

describe("tiktoken's test vectors", () => {
  it('simple: hello world, the end of text allowed, and single tokens', () => {
    const gpt2 = tiktoken.get_encoding('gpt2')
    expect(ids(gpt2.encode('hello world'))).toEqual([31373, 995])
    expect(decode(gpt2, [31373, 995])).toBe('hello world')
    expect(ids(gpt2.encode('hello <|endoftext|>', 'all'))).toEqual([31373, 220, 50256])
    const cl100k = tiktoken.get_encoding('cl100k_base')
    expect(ids(cl100k.encode('hello world'))).toEqual([15339, 1917])
    expect(decode(cl100k, [15339, 1917])).toBe('hello world')
    expect(ids(cl100k.encode('hello <|endoftext|>', 'all'))).toEqual([15339, 220, 100257])
    for (const name of ENCODINGS) {
      const enc = tiktoken.get_encoding(name)
      for (let token = 0; token < 10_000; token++) {
        if (enc.encode_single_token(enc.decode_single_token_bytes(token)) !== token) throw new Error(`${name}: token ${token} does not come back`)
      }
    }
  })

  it('simple repeated: runs of zeros under gpt2', () => {
    const gpt2 = tiktoken.get_encoding('gpt2')
    const expected: number[][] = [
      [15],
      [405],
      [830],
      [2388],
      [20483],
      [10535],
      [24598],
      [8269],
      [10535, 830],
      [8269, 405],
      [8269, 830],
      [8269, 2388],
      [8269, 20483],
      [8269, 10535],
      [8269, 24598],
      [25645],
      [8269, 10535, 830],
    ]
    expected.forEach((want, i) => expect(ids(gpt2.encode('0'.repeat(i + 1))), `${i + 1} zeros`).toEqual(want))
  })

  it('large repeated: a million of one letter, which tiktoken refuses, is encoded and decodes back', () => {
    // tiktoken raises ValueError here (its regex engine's backtrack limit; the WASM package traps),
    // where batchtok's engines encode it as tiktoken's BPE would.
    const o200k = tiktoken.get_encoding('o200k_base')
    const text = 'x'.repeat(1_000_000)
    expect(decode(o200k, o200k.encode(text)) === text).toBe(true)
  })

  it('simple regex: contractions and line ends under cl100k_base', () => {
    const cl100k = tiktoken.get_encoding('cl100k_base')
    expect(ids(cl100k.encode('rer'))).toEqual([38149])
    expect(ids(cl100k.encode("'rer"))).toEqual([2351, 81])
    expect(ids(cl100k.encode('today\n '))).toEqual([31213, 198, 220])
    expect(ids(cl100k.encode('today\n \n'))).toEqual([31213, 27907])
    expect(ids(cl100k.encode('today\n  \n'))).toEqual([31213, 14211])
  })

  it('basic encode, and an empty text', () => {
    expect(ids(tiktoken.get_encoding('r50k_base').encode('hello world'))).toEqual([31373, 995])
    expect(ids(tiktoken.get_encoding('p50k_base').encode('hello world'))).toEqual([31373, 995])
    const cl100k = tiktoken.get_encoding('cl100k_base')
    expect(ids(cl100k.encode('hello world'))).toEqual([15339, 1917])
    expect(ids(cl100k.encode(' \x850'))).toEqual([220, 126, 227, 15])
    expect(ids(tiktoken.get_encoding('r50k_base').encode(''))).toEqual([])
  })

  it('surrogate pairs: a pair is its code point, a lone surrogate is U+FFFD', () => {
    const cl100k = tiktoken.get_encoding('cl100k_base')
    expect(ids(cl100k.encode('👍'))).toEqual([9468, 239, 235])
    expect(ids(cl100k.encode('\ud83d\udc4d'))).toEqual([9468, 239, 235])
    expect(ids(cl100k.encode('\ud83d'))).toEqual(ids(cl100k.encode('\ufffd')))
  })

  it.each(PARAMETRIZED)('%s: catastrophically repetitive texts decode back', (name) => {
    const enc = tiktoken.get_encoding(name)
    for (const c of ['^', '0', 'a', "'s", ' ', '\n']) {
      let value = c.repeat(10_000)
      expect(decode(enc, enc.encode(value)) === value, JSON.stringify(c)).toBe(true)
      value = ' ' + value
      expect(decode(enc, enc.encode(value)) === value, JSON.stringify(` ${c}`)).toBe(true)
      value = value + '\n'
      expect(decode(enc, enc.encode(value)) === value, JSON.stringify(` ${c}…\\n`)).toBe(true)
    }
  })

  it.each(PARAMETRIZED)('%s: basic round trips, with and without special tokens read', (name) => {
    const enc = tiktoken.get_encoding(name)
    for (const value of ['hello', 'hello ', 'hello  ', ' hello', ' hello ', ' hello  ', 'hello world', '请考试我的软件！12345']) {
      expect(decode(enc, enc.encode(value))).toBe(value)
      expect(decode(enc, enc.encode_ordinary(value))).toBe(value)
    }
  })

  it.each(PARAMETRIZED)('%s: every token of the vocabulary comes back from its bytes', (name) => {
    const enc = tiktoken.get_encoding(name)
    const size = Tokenizer.fromEncoding(name).idLimit
    let checked = 0
    for (let token = 0; token < size; token++) {
      let bytes: Uint8Array
      try {
        bytes = enc.decode_single_token_bytes(token)
      } catch {
        continue
      }
      if (enc.encode_single_token(bytes) !== token) throw new Error(`${name}: token ${token} does not come back`)
      checked++
    }
    expect(checked).toBeGreaterThan(50_000)
  })

  it('special tokens: refused unless allowed, found only where allowed', () => {
    const enc = tiktoken.get_encoding('cl100k_base')
    const eot = enc.encode_single_token(new TextEncoder().encode('<|endoftext|>'))
    const fip = enc.encode_single_token(new TextEncoder().encode('<|fim_prefix|>'))
    const fim = enc.encode_single_token(new TextEncoder().encode('<|fim_middle|>'))
    expect(eot).toBe(100257)

    let text = '<|endoftext|> hello <|fim_prefix|>'
    expect(ids(enc.encode(text, [], []))).not.toContain(eot)
    expect(() => enc.encode(text)).toThrow()
    expect(() => enc.encode(text, [], 'all')).toThrow()
    expect(() => enc.encode(text, [], ['<|endoftext|>'])).toThrow()
    expect(() => enc.encode(text, [], ['<|fim_prefix|>'])).toThrow()

    text = '<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>'
    const found = (allowed: 'all' | string[], disallowed: 'all' | string[]) => {
      const tokens = ids(enc.encode(text, allowed, disallowed))
      return [eot, fip, fim].map((token) => tokens.includes(token))
    }
    expect(found([], [])).toEqual([false, false, false])
    expect(found('all', [])).toEqual([true, true, true])
    expect(found('all', 'all')).toEqual([true, true, true])
    expect(found(['<|fim_prefix|>'], [])).toEqual([false, true, false])
    expect(found(['<|endoftext|>'], [])).toEqual([true, false, false])
    expect(found(['<|fim_middle|>'], [])).toEqual([false, false, true])
  })

  it.each(PARAMETRIZED)('%s: a batch encodes as its texts one by one', async (name) => {
    const enc = tiktoken.get_encoding(name)
    const tokenizer = Tokenizer.fromEncoding(name)
    for (const batch of [['hello world'], ['hello world', 'goodbye world']]) {
      const one = batch.map((text) => ids(enc.encode(text)))
      expect((await tokenizer.encodeBatch(batch)).toArrays().map(ids)).toEqual(one)
      expect((await tokenizer.encodeBatch(batch, { allowedSpecial: 'all' })).toArrays().map(ids)).toEqual(batch.map((text) => ids(enc.encode(text, 'all'))))
      expect(batch.map((text) => ids(enc.encode_ordinary(text)))).toEqual(one)
    }
  })

  it("encoding for model: tiktoken's names", () => {
    const names: [string, string][] = [
      ['gpt2', 'gpt2'],
      ['text-davinci-003', 'p50k_base'],
      ['text-davinci-edit-001', 'p50k_edit'],
      ['gpt-3.5-turbo-0301', 'cl100k_base'],
      ['gpt-4', 'cl100k_base'],
      ['gpt-4o', 'o200k_base'],
      ['gpt-oss-120b', 'o200k_harmony'],
    ]
    for (const [model, encoding] of names) {
      expect(tiktoken.encoding_for_model(model as Parameters<typeof tiktoken.encoding_for_model>[0]).name, model).toBe(encoding)
    }
  })
})
