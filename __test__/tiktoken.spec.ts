// `batchtok/tiktoken`: the `tiktoken` package's API (WASM) over batchtok's tokenizers, checked
// against that package itself (a pinned devDependency) and Python tiktoken's ids (the parity
// fixture).
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { batchtok, digestOf, expectPeersWords, fixture, outcome, typeCheck, type Digest, type OpenAiFixture, type Texts } from './helpers'

const require = createRequire(import.meta.url)
type Module = typeof import('../entry/tiktoken')
const ours = require('batchtok/tiktoken') as Module
const theirs = require('tiktoken') as Module

const openai = fixture<OpenAiFixture>('openai.json')
const texts = fixture<Texts>('texts.json').cases.map((c) => c.text)
const ENCODINGS = ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'] as const

/** Python tiktoken's `encode_with_unstable` of each text, every special token allowed. */
type UnstableFixture = {
  texts: string[]
  encodings: Record<string, { stable: number[]; completions: Digest; written?: number[][] }[]>
}
const unstable = fixture<UnstableFixture>('unstable.json')

/** What `run` returned, or that it threw (the two libraries' messages differ). */
function result<T>(run: () => T): { value: T } | { threw: true } {
  const got = outcome(run)
  return 'value' in got ? got : { threw: true }
}

it("has every method of tiktoken's Tiktoken", () => {
  const methods = (module: Module) => Object.getOwnPropertyNames(module.Tiktoken.prototype)
  expect(methods(theirs).filter((name) => !methods(ours).includes(name)).sort()).toEqual(['__destroy_into_raw'])
  expect(Object.keys(theirs).filter((name) => !(name in ours)).sort()).toEqual([])
})

it("each error's message begins with tiktoken's own", () => {
  const text = '<|fim_prefix|>test<|fim_suffix|>'
  const calls: [string, (module: Module) => unknown][] = [
    ['an unknown encoding', (module) => module.get_encoding('o300k_base' as never)],
    ['an unknown model', (module) => module.encoding_for_model('gpt-4oo' as never)],
    ["an unknown model's encoding name", (module) => module.get_encoding_name_for_model('gpt-4oo' as never)],
    ['special-token text by default', (module) => module.get_encoding('cl100k_base').encode(text)],
    ['special-token text disallowed', (module) => module.get_encoding('cl100k_base').encode(text, [], 'all')],
    ['the special token not allowed', (module) => module.get_encoding('cl100k_base').encode(text, ['<|fim_prefix|>'])],
    ['allowed_special neither a list nor "all"', (module) => module.get_encoding('gpt2').encode('hi', 'some' as never)],
    ['disallowed_special neither a list nor "all"', (module) => module.get_encoding('gpt2').encode('hi', [], 'some' as never)],
    ['encode_with_unstable of special-token text', (module) => module.get_encoding('cl100k_base').encode_with_unstable(text)],
  ]
  expectPeersWords(calls, ours, theirs)
  // After tiktoken's words, batchtok's: where the token is, what the call could do instead.
  expect(outcome(() => ours.get_encoding('cl100k_base').encode(`hi ${text}`))).toEqual({
    threw: 'The text contains a special token that is not allowed: <|fim_prefix|> (at index 3; pass it in allowed_special to encode it as its id, or encode it with encode_ordinary as ordinary text)',
  })
})

describe.each(ENCODINGS)('get_encoding(%s)', (name) => {
  const encoding = ours.get_encoding(name)
  const reference = theirs.get_encoding(name)
  const ordinary = openai.encodings[name].ordinary!

  it("encode gives tiktoken's ids and throws where tiktoken throws; encode_ordinary is encode_ordinary", () => {
    texts.forEach((text, i) => {
      const got = result(() => Array.from(encoding.encode(text)))
      const want = result(() => Array.from(reference.encode(text)))
      expect([text, got]).toEqual([text, want])
      expect([text, Array.from(encoding.encode_ordinary(text))]).toEqual([text, ordinary[i]])
    })
    for (const { case: i, allowedSpecial, ids } of openai.encodings[name].special) {
      expect([texts[i], Array.from(encoding.encode(texts[i], allowedSpecial, []))]).toEqual([texts[i], ids])
    }
  })

  it("encode_with_unstable gives Python tiktoken's stable ids and set of completions, in ascending order", () => {
    unstable.texts.forEach((text, i) => {
      const want = unstable.encodings[name][i]
      const [stable, completions] = encoding.encode_with_unstable(text, 'all')
      expect([text, stable]).toEqual([text, want.stable])
      expect([text, digestOf(completions.map((ids) => Uint32Array.from(ids)))]).toEqual([text, want.completions])
      if (want.written) expect([text, completions]).toEqual([text, want.written])
    })
    // Every completion spells the text on from the stable ids.
    const [stable, completions] = encoding.encode_with_unstable('hello fanta')
    const spelled = new TextDecoder().decode(encoding.decode(Uint32Array.from(stable)))
    expect(spelled).toBe('hello')
    for (const ids of completions) expect(new TextDecoder().decode(encoding.decode(Uint32Array.from([...stable, ...ids])))).toMatch(/^hello fanta/)
  })

  it("decode gives tiktoken's bytes; the single-token methods (and token_byte_values) give tiktoken's answers", () => {
    for (const ids of ordinary) expect(encoding.decode(Uint32Array.from(ids))).toEqual(reference.decode(Uint32Array.from(ids)))
    const limit = encoding.tokenizer.idLimit
    for (let id = 0; id < limit + 3; id += 97) {
      const got = result(() => encoding.decode_single_token_bytes(id))
      expect([id, got]).toEqual([id, result(() => reference.decode_single_token_bytes(id))])
      if ('value' in got) expect([id, encoding.encode_single_token(got.value)]).toEqual([id, reference.encode_single_token(got.value)])
    }
    expect(() => encoding.encode_single_token(Uint8Array.of(0xff, 0xfe, 0xfd, 0xfc, 0xfb))).toThrow(/no token of/)
    // As tiktoken's binding: an array of byte values is bytes too; a string is a clear TypeError.
    expect(encoding.encode_single_token([104, 101, 108, 108, 111])).toBe(reference.encode_single_token([104, 101, 108, 108, 111]))
    expect(() => encoding.encode_single_token('hello' as never)).toThrow(new TypeError("encode_single_token takes a token's bytes as a Uint8Array or an array of byte values; for a string, pass new TextEncoder().encode(text)"))
    // Every token's bytes, sorted: one encoding is enough for the one code path (seconds each).
    if (name === 'cl100k_base') expect(encoding.token_byte_values()).toEqual(reference.token_byte_values())
    expect(encoding.name).toBe(reference.name)
  })

  it('new Tiktoken(bpe_ranks, special_tokens, pat_str) from tiktoken/encoders encodes as tiktoken does', () => {
    const { bpe_ranks, special_tokens, pat_str } = require(`tiktoken/encoders/${name}.json`)
    const fromRanks = new ours.Tiktoken(bpe_ranks, special_tokens, pat_str)
    const reference = new theirs.Tiktoken(bpe_ranks, special_tokens, pat_str)
    for (const text of texts.slice(0, 80)) expect(fromRanks.encode(text, 'all')).toEqual(reference.encode(text, 'all'))
    expect(fromRanks.encode_with_unstable('hello fanta')).toEqual(encoding.encode_with_unstable('hello fanta'))
    fromRanks.free()
    reference.free()
    expect(fromRanks.encode_ordinary('still usable after free()')).toEqual(encoding.encode_ordinary('still usable after free()'))
  })
})

it("every model of tiktoken's table has tiktoken's encoding", () => {
  const table = require('tiktoken/model_to_encoding.json') as Record<string, string>
  for (const [model, name] of Object.entries(table)) {
    expect([model, ours.get_encoding_name_for_model(model)]).toEqual([model, name])
    expect([model, ours.encoding_for_model(model).name]).toEqual([model, name])
  }
  expect(Array.from(ours.get_encoding('cl100k_base', { '<|im_start|>': 100264 }).encode('<|im_start|>', 'all'))).toEqual([100264])
  expect(batchtok.encodingForModel('gpt-4o')).toBe('o200k_base')
})

it("code written against tiktoken's types type-checks (tsc --noEmit --strict)", () => {
  expect(typeCheck('tiktoken.ts')).toBe('')
})
