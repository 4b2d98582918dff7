// `batchtok/js-tiktoken`: js-tiktoken's API over batchtok's tokenizers, checked against js-tiktoken
// itself (a pinned devDependency) and against Python tiktoken's ids (the parity fixture).
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { batchtok, expectPeersWords, fixture, outcome, typeCheck, type OpenAiFixture, type Texts } from './helpers'

const require = createRequire(import.meta.url)
type Module = typeof import('../entry/js-tiktoken')
const ours = require('batchtok/js-tiktoken') as Module
const theirs = require('js-tiktoken') as Module

const openai = fixture<OpenAiFixture>('openai.json')
const texts = fixture<Texts>('texts.json').cases.map((c) => c.text)
/**
 * The longest text js-tiktoken is asked about: its BPE takes seconds to a minute on the fixture's
 * long runs of one character or script, which batchtok is checked on against tiktoken's ids alone.
 */
const JS_TIKTOKEN_MAX_LENGTH = 1_000
/** The encodings js-tiktoken has and the parity fixture holds tiktoken's ids for. */
const ENCODINGS = ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'] as const

describe.each(ENCODINGS)('getEncoding(%s)', (name) => {
  const encoding = ours.getEncoding(name)
  const reference = theirs.getEncoding(name)
  const ordinary = openai.encodings[name].ordinary!

  it("encode(text) gives tiktoken's ids, and throws where js-tiktoken throws: on special-token text", () => {
    texts.forEach((text, i) => {
      const got = outcome(() => encoding.encode(text))
      if ('value' in got) expect([text, got.value]).toEqual([text, ordinary[i]])
      if (text.length > JS_TIKTOKEN_MAX_LENGTH) return
      const want = outcome(() => reference.encode(text))
      expect(['threw' in got, text]).toEqual(['threw' in want, text])
    })
    expect(() => encoding.encode('a <|endoftext|>')).toThrow('<|endoftext|>')
  })

  it("encode(text, [], []) is tiktoken's encode_ordinary, and encode(text, 'all') its ids with every special token", () => {
    texts.forEach((text, i) => expect([text, encoding.encode(text, [], [])]).toEqual([text, ordinary[i]]))
    for (const { case: i, allowedSpecial, ids } of openai.encodings[name].special) {
      expect([texts[i], encoding.encode(texts[i], allowedSpecial, [])]).toEqual([texts[i], ids])
      if (allowedSpecial === 'all') expect(encoding.encode(texts[i], 'all')).toEqual(reference.encode(texts[i], 'all'))
    }
  })

  it("decode gives the text back, as js-tiktoken's does but for a leading byte order mark", () => {
    texts.forEach((text, i) => {
      const ids = ordinary[i]
      expect([text, encoding.decode(ids)]).toEqual([text, text])
      expect([text, encoding.decode(Uint32Array.from(ids))]).toEqual([text, text])
      // js-tiktoken decodes with TextDecoder's defaults, which drop a leading U+FEFF.
      const want = text.startsWith('\ufeff') ? `\ufeff${reference.decode(ids)}` : reference.decode(ids)
      expect([text, encoding.decode(ids)]).toEqual([text, want])
    })
  })

  it('new Tiktoken(ranks) from js-tiktoken/ranks, with extended special tokens, encodes as getEncoding and as js-tiktoken', () => {
    const ranks = require(`js-tiktoken/ranks/${name}`)
    const extra = { '<|extra|>': 300_000 }
    const fromRanks = new ours.Tiktoken(ranks, extra)
    const reference = new theirs.Tiktoken(ranks, extra)
    for (const text of texts.slice(0, 60)) {
      expect(fromRanks.encode(text, [], [])).toEqual(encoding.encode(text, [], []))
      expect(fromRanks.encode(`${text}<|extra|>`, 'all')).toEqual(reference.encode(`${text}<|extra|>`, 'all'))
    }
    expect(fromRanks.tokenizer).toBeInstanceOf(batchtok.Tokenizer)
  })
})

describe('models', () => {
  // js-tiktoken's TiktokenModel list, from its types.
  const declarations = require('node:fs').readFileSync(require.resolve('js-tiktoken/lite').replace(/lite\.c?js$/, 'lite.d.ts'), 'utf8') as string
  const core = require('node:fs').readFileSync(
    require.resolve('js-tiktoken/lite').replace(/lite\.c?js$/, /from '\.\/(core-[\w-]+)\.js'/.exec(declarations)![1] + '.d.ts'),
    'utf8',
  ) as string
  const models = [.../type TiktokenModel = ([^;]+);/.exec(core)![1].matchAll(/"([^"]+)"/g)].map((m) => m[1])

  it("every js-tiktoken model has tiktoken's encoding; js-tiktoken's differs for davinci-002 and babbage-002", () => {
    expect(models.length).toBeGreaterThan(100)
    const differ = models.filter((model) => ours.getEncodingNameForModel(model) !== theirs.getEncodingNameForModel(model))
    expect(differ).toEqual(['davinci-002', 'babbage-002'])
    // tiktoken's model table: both are cl100k_base models.
    for (const model of differ) expect(batchtok.encodingForModel(model)).toBe('cl100k_base')
    for (const model of models) expect(ours.encodingForModel(model).tokenizer.name).toBe(ours.getEncodingNameForModel(model))
  })

  it('an unknown model throws, naming it', () => {
    expect(() => ours.encodingForModel('no-such-model')).toThrow(/no-such-model/)
  })
})

describe('bad input', () => {
  it("ranks that are not js-tiktoken's rank object are a TypeError saying what is expected", () => {
    expect(() => new ours.Tiktoken({} as never)).toThrow(TypeError)
    expect(() => new ours.Tiktoken(null as never)).toThrow(/expected \{ bpe_ranks, special_tokens, pat_str \}/)
  })

  it('a disallowed special token names the token and where it is', () => {
    const refused = outcome(() => ours.getEncoding('o200k_base').encode('hi <|endoftext|>', [], ['<|endoftext|>']))
    expect(refused).toEqual({ threw: expect.stringMatching(/not allowed: <\|endoftext\|> \(at index 3; pass it in allowedSpecial/) })
  })

  it("each error's message begins with js-tiktoken's own", () => {
    const text = '<|fim_prefix|>test<|fim_suffix|>'
    const calls: [string, (module: Module) => unknown][] = [
      ['an unknown encoding', (module) => module.getEncoding('o300k_base' as never)],
      ['an unknown model', (module) => module.encodingForModel('gpt-4oo' as never)],
      ["an unknown model's encoding name", (module) => module.getEncodingNameForModel('gpt-4oo' as never)],
      ['special-token text by default', (module) => module.getEncoding('cl100k_base').encode(text)],
      ['special-token text disallowed', (module) => module.getEncoding('cl100k_base').encode(text, [], 'all')],
      ['the special token not allowed', (module) => module.getEncoding('cl100k_base').encode(text, ['<|fim_prefix|>'])],
    ]
    expectPeersWords(calls, ours, theirs)
  })

  it("code written against js-tiktoken's types type-checks (tsc --noEmit --strict)", () => {
    expect(typeCheck('js-tiktoken.ts')).toBe('')
  })
})
