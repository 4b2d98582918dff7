// The daily jobs of the OpenAI tokenizers' users, checked against the references: model names
// against Python tiktoken's table (models.json), counts against tiktoken's ids (openai.json), chat
// ids against gpt-tokenizer's encodeChat (chat.json), special tokens against tiktoken's semantics,
// and truncation against the text's own tokens.
import { describe, expect, it } from 'vitest'

import { batchtok, fixture, hfTokenizer, HF_TOKENIZERS, OPENAI_ENCODINGS, type HfFixture, type OpenAiFixture, type Texts } from './helpers'

const { Tokenizer, encodingForModel, encodings, modelEncodings } = batchtok
type Tokenizer = InstanceType<typeof Tokenizer>

type ModelsFixture = {
  exact: Record<string, string>
  prefixes: [string, string][]
  known: Record<string, string>
  unknown: string[]
}
type ChatMessage = { role?: string; name?: string; content: string }
type ChatFixture = {
  conversations: Record<string, ChatMessage[]>
  models: Record<string, Record<string, number[]>>
}
type HfSpecialFixture = {
  tokenizers: Record<string, { cases: number[]; specials: string[]; ordinary: number[][]; split: number[][] }>
}

const models = fixture<ModelsFixture>('models.json')
const chat = fixture<ChatFixture>('chat.json')
const openai = fixture<OpenAiFixture>('openai.json')
const hf = fixture<HfFixture>('hf.json')
const hfSpecial = fixture<HfSpecialFixture>('hf-special.json')
const texts = fixture<Texts>('texts.json').cases.map((c) => c.text)

/** tiktoken's `encode_ordinary` ids of every fixture text in `encoding`. */
function ordinaryIds(encoding: string): number[][] {
  const entry = openai.encodings[encoding]
  return entry.ordinary ?? openai.encodings[entry.ordinaryAs!].ordinary!
}

const tokenizers = new Map<string, Tokenizer>()
/** One tokenizer per encoding or model name, shared by the tests. */
function tokenizerFor(name: string, from: 'encoding' | 'model' = 'encoding'): Tokenizer {
  const key = `${from}:${name}`
  if (!tokenizers.has(key)) tokenizers.set(key, from === 'model' ? Tokenizer.fromModel(name) : Tokenizer.fromEncoding(name))
  return tokenizers.get(key)!
}

/**
 * The special tokens of each encoding as tiktoken defines them (tiktoken_ext/openai_public.py):
 * the reference the disallowedSpecial tests search texts with. A test below checks this table
 * against tiktoken's own ids in openai.json.
 */
const HARMONY_RESERVED = [200000, 200001, 200004, 200009, 200010, 200011]
  .concat(Array.from({ length: 201088 - 200013 }, (_, i) => 200013 + i))
  .map((id) => `<|reserved_${id}|>`)
const SPECIALS: Record<string, string[]> = {
  r50k_base: ['<|endoftext|>'],
  p50k_base: ['<|endoftext|>'],
  cl100k_base: ['<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|endofprompt|>'],
  o200k_base: ['<|endoftext|>', '<|endofprompt|>'],
  o200k_harmony: [
    '<|endoftext|>', '<|endofprompt|>', '<|startoftext|>', '<|return|>', '<|constrain|>', '<|channel|>',
    '<|start|>', '<|end|>', '<|message|>', '<|call|>', ...HARMONY_RESERVED,
  ],
}

/** The first of `specials` in `text` (the longest where two start together), as tiktoken's search finds it. */
function firstSpecial(text: string, specials: readonly string[]): { token: string; index: number } | null {
  let best: { token: string; index: number } | null = null
  for (const token of specials) {
    const index = text.indexOf(token)
    if (index < 0) continue
    if (!best || index < best.index || (index === best.index && token.length > best.token.length)) best = { token, index }
  }
  return best
}

/** The error `call` throws, or null. */
function thrown(call: () => unknown): Error | null {
  try {
    call()
  } catch (error) {
    return error as Error
  }
  return null
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

describe('model names', () => {
  it("encodingForModel answers as tiktoken's encoding_name_for_model for every name of models.json", () => {
    const wrong = Object.entries(models.known).filter(([model, encoding]) => encodingForModel(model) !== encoding)
    expect(wrong).toEqual([])
    expect(Object.keys(models.known).length).toBeGreaterThan(100)
  })

  // Every model whose encoding batchtok embeds under tiktoken's own name.
  const byEncoding = new Map<string, string[]>()
  for (const [model, encoding] of Object.entries(models.known)) {
    byEncoding.set(encoding, [...(byEncoding.get(encoding) ?? []), model])
  }
  const canonical = ['o200k_base', 'o200k_harmony', 'cl100k_base', 'p50k_base', 'r50k_base'].filter((e) => byEncoding.has(e))

  it.each(canonical)('Tokenizer.fromModel(m).name is %s for every model tiktoken maps to it', (encoding) => {
    const names = byEncoding.get(encoding)!
    expect(names.map((model) => [model, tokenizerFor(model, 'model').name])).toEqual(names.map((model) => [model, encoding]))
  })

  // tiktoken names the encoding as it was asked for ('gpt2', the r50k_base ranks).
  it("Tokenizer.fromModel(m).name is 'gpt2' for the models tiktoken maps to gpt2", () => {
    const names = byEncoding.get('gpt2')!
    expect(names.length).toBeGreaterThan(0)
    expect(names.map((model) => [model, tokenizerFor(model, 'model').name])).toEqual(names.map((model) => [model, 'gpt2']))
  })

  it("Tokenizer.fromModel(m).name is 'p50k_edit' for the models tiktoken maps to p50k_edit", () => {
    const names = byEncoding.get('p50k_edit')!
    expect(names.length).toBeGreaterThan(0)
    expect(names.map((model) => [model, tokenizerFor(model, 'model').name])).toEqual(names.map((model) => [model, 'p50k_edit']))
  })

  it.each(models.unknown.map((m) => [JSON.stringify(m), m]))('the name tiktoken refuses, %s, throws an Error saying how to pass an encoding', (_, model) => {
    for (const call of [() => encodingForModel(model), () => Tokenizer.fromModel(model)]) {
      const error = thrown(call)
      expect(error).toBeInstanceOf(Error)
      expect(error!.message).toContain(JSON.stringify(model))
      expect(error!.message).toMatch(/Tokenizer\.fromEncoding\('o200k_base'\)/)
    }
  })

  it("modelEncodings() holds tiktoken's table of exact names (and gpt-tokenizer's models beyond it)", () => {
    expect(modelEncodings()).toEqual(expect.objectContaining(models.exact))
  })

  it('encodings() names every encoding of openai.json', () => {
    const names = encodings()
    for (const encoding of Object.keys(openai.encodings)) expect(names).toContain(encoding)
    for (const encoding of OPENAI_ENCODINGS) expect(Tokenizer.fromEncoding(encoding).name).toBe(encoding)
  })
})

describe('count and isWithinTokenLimit', () => {
  it.each(OPENAI_ENCODINGS)('%s: count(text) is encode(text).length and the length of tiktoken ids, for every fixture text', (encoding) => {
    const tokenizer = tokenizerFor(encoding)
    const ids = ordinaryIds(encoding)
    const wrong = texts
      .map((text, i) => [i, tokenizer.count(text), tokenizer.encode(text).length, ids[i].length])
      .filter(([, count, encoded, reference]) => count !== reference || encoded !== reference)
    expect(wrong).toEqual([])
  })

  // Python's ids are cut by the file's truncation, as encode's are; a count applies it when asked.
  it.each(HF_TOKENIZERS)('%s tokenizer.json: count(text, { truncation: true }) is encode(text).length and the length of Python tokenizers ids', (name) => {
    const tokenizer = hfTokenizer(name)
    const { withSpecial, withoutSpecial } = hf.tokenizers[name]
    const file = { truncation: name === 'bert' } as const
    const wrong = texts
      .map((text, i) => [i, tokenizer.count(text, file), tokenizer.encode(text).length, withSpecial[i].length, tokenizer.count(text, { ...file, addSpecialTokens: false }), withoutSpecial[i].length])
      .filter(([, count, encoded, reference, bare, bareReference]) => count !== reference || encoded !== reference || bare !== bareReference)
    expect(wrong).toEqual([])
  })

  type Family = [string, () => Tokenizer, (i: number) => number, { truncation?: boolean }]
  const families: Family[] = [
    ...OPENAI_ENCODINGS.map((e): Family => [e, () => tokenizerFor(e), (i) => ordinaryIds(e)[i].length, {}]),
    ...HF_TOKENIZERS.map((n): Family => [`${n} tokenizer.json`, () => hfTokenizer(n), (i) => hf.tokenizers[n].withSpecial[i].length, { truncation: n === 'bert' }]),
  ]

  it.each(families)('%s: isWithinTokenLimit is the count at limit n and n + 1, false at n - 1', (_, make, reference, options) => {
    const tokenizer = make()
    const wrong: unknown[] = []
    texts.forEach((text, i) => {
      const n = reference(i)
      const within = (limit: number) => tokenizer.isWithinTokenLimit(text, limit, options)
      const got = [within(n), within(n + 1), n > 0 ? within(n - 1) : false]
      if (got[0] !== n || got[1] !== n || got[2] !== false) wrong.push([i, n, got])
    })
    expect(wrong).toEqual([])
  })

  it.each(OPENAI_ENCODINGS)("%s: isWithinTokenLimit('', 0) is 0", (encoding) => {
    expect(tokenizerFor(encoding).isWithinTokenLimit('', 0)).toBe(0)
    expect(tokenizerFor(encoding).isWithinTokenLimit('', 5)).toBe(0)
  })

  it.each(OPENAI_ENCODINGS)('%s: a 10 MB text with limit 100 is false', (encoding) => {
    const tokenizer = tokenizerFor(encoding)
    const prose = texts[3] + ' '
    const text = prose.repeat(Math.ceil(10e6 / prose.length))
    expect(text.length).toBeGreaterThanOrEqual(10e6)
    expect(tokenizer.isWithinTokenLimit(text, 100)).toBe(false)
    // The same text cut to fit: the count, as count gives it.
    const fits = text.slice(0, 200)
    expect(tokenizer.isWithinTokenLimit(fits, 100)).toBe(tokenizer.count(fits))
  })

  it.each(OPENAI_ENCODINGS)("%s: with allowedSpecial 'all', each special token's text is one token: 200 of them are within 200, not 199", (encoding) => {
    const tokenizer = tokenizerFor(encoding)
    for (const token of [...SPECIALS[encoding].slice(0, 10), ...SPECIALS[encoding].slice(-2)]) {
      const text = token.repeat(200)
      expect([token, tokenizer.count(text, { allowedSpecial: 'all' })]).toEqual([token, 200])
      expect([token, tokenizer.isWithinTokenLimit(text, 200, { allowedSpecial: 'all' })]).toEqual([token, 200])
      expect([token, tokenizer.isWithinTokenLimit(text, 199, { allowedSpecial: 'all' })]).toEqual([token, false])
    }
  })

  // As tiktoken raises for any text that holds one, whatever its length.
  it.each(OPENAI_ENCODINGS)('%s: a disallowed special token throws from isWithinTokenLimit whatever the limit and length', (encoding) => {
    const tokenizer = tokenizerFor(encoding)
    const token = SPECIALS[encoding][0]
    for (const text of [`${token} x`, token + 'x '.repeat(100_000)]) {
      for (const limit of [0, 1, 5, 1e6]) {
        const error = thrown(() => tokenizer.isWithinTokenLimit(text, limit, { disallowedSpecial: 'all' }))
        expect([text.length, limit, error?.message]).toEqual([text.length, limit, expect.stringMatching(new RegExp(`${escape(JSON.stringify(token))}.*\\bindex 0\\b`))])
      }
    }
  })
})

describe('encodeChat and countChat', () => {
  const cases = Object.keys(chat.models)

  it.each(cases)("%s: encodeChat gives gpt-tokenizer's ids for every conversation, with { model } and from Tokenizer.fromModel", (model) => {
    const withOption = tokenizerFor(encodingForModel(model))
    const fromModel = tokenizerFor(model, 'model')
    for (const [name, messages] of Object.entries(chat.conversations)) {
      const expected = chat.models[model][name]
      expect([name, Array.from(withOption.encodeChat(messages, { model }))]).toEqual([name, expected])
      expect([name, Array.from(fromModel.encodeChat(messages))]).toEqual([name, expected])
    }
  })

  /**
   * OpenAI's documented accounting (the cookbook's num_tokens_from_messages): each message costs
   * its fields' tokens plus a fixed amount, a name costs one more (gpt-3.5-turbo-0301: 4 per
   * message, one less for a name, which replaces the role), and the reply is primed with 3.
   */
  function documentedCount(tokenizer: Tokenizer, model: string, messages: ChatMessage[]): number {
    const [perMessage, perName] = model === 'gpt-3.5-turbo-0301' ? [4, -1] : [3, 1]
    let total = 3
    for (const message of messages) {
      total += perMessage
      for (const value of [message.role, message.content, message.name]) {
        if (value !== undefined) total += tokenizer.count(value)
      }
      if (message.name !== undefined) total += perName
    }
    return total
  }

  // The accounting is ChatML's; for Harmony (gpt-oss) countChat is the length of the ids.
  const harmony = (model: string) => model.startsWith('gpt-oss-')

  it.each([...cases, 'gpt-3.5-turbo-0301'])("%s: countChat is OpenAI's documented accounting (Harmony: the ids' length)", (model) => {
    const tokenizer = tokenizerFor(model, 'model')
    for (const [name, messages] of Object.entries(chat.conversations)) {
      const expected = harmony(model) ? tokenizer.encodeChat(messages).length : documentedCount(tokenizer, model, messages)
      expect([name, tokenizer.countChat(messages)]).toEqual([name, expected])
      expect([name, tokenizerFor(tokenizer.name).countChat(messages, { model })]).toEqual([name, expected])
    }
  })
})

describe('disallowedSpecial', () => {
  it("the special tokens searched for here are tiktoken's: a text's ids with allowedSpecial 'all' differ from its ordinary ids exactly when it holds one", () => {
    for (const encoding of OPENAI_ENCODINGS) {
      const ordinary = ordinaryIds(encoding)
      const all = openai.encodings[encoding].special.filter((s) => s.allowedSpecial === 'all')
      expect(all.length).toBeGreaterThan(5)
      for (const { case: i, ids } of all) {
        const holds = firstSpecial(texts[i], SPECIALS[encoding]) !== null
        expect([encoding, i, holds]).toEqual([encoding, i, JSON.stringify(ids) !== JSON.stringify(ordinary[i])])
      }
    }
  })

  it.each(OPENAI_ENCODINGS)("%s: with 'all', a text that holds a special token throws naming it and its index; any other text encodes as ordinary text", (encoding) => {
    const tokenizer = tokenizerFor(encoding)
    const ordinary = ordinaryIds(encoding)
    let refused = 0
    texts.forEach((text, i) => {
      const first = firstSpecial(text, SPECIALS[encoding])
      const error = thrown(() => tokenizer.encode(text, { disallowedSpecial: 'all' }))
      if (first) {
        refused++
        expect(error, `text ${i}`).toBeInstanceOf(Error)
        expect(error!.message).toContain(JSON.stringify(first.token))
        expect(error!.message).toMatch(new RegExp(`\\bindex ${first.index}\\b`))
        expect(thrown(() => tokenizer.count(text, { disallowedSpecial: 'all' }))?.message).toBe(error!.message)
        expect(thrown(() => tokenizer.isWithinTokenLimit(text, 1e6, { disallowedSpecial: 'all' }))?.message).toBe(error!.message)
      } else {
        expect(error, `text ${i}`).toBeNull()
        expect([i, Array.from(tokenizer.encode(text, { disallowedSpecial: 'all' }))]).toEqual([i, ordinary[i]])
      }
      // Without the option, the same text encodes as ordinary text.
      expect([i, Array.from(tokenizer.encode(text))]).toEqual([i, ordinary[i]])
    })
    expect(refused).toBeGreaterThan(5)
  })

  it.each(OPENAI_ENCODINGS)('%s: a list refuses only the tokens it names, each at its own index', (encoding) => {
    const tokenizer = tokenizerFor(encoding)
    const ordinary = ordinaryIds(encoding)
    const named = SPECIALS[encoding].slice(0, 10)
    texts.forEach((text, i) => {
      for (const token of named) {
        const error = thrown(() => tokenizer.encode(text, { disallowedSpecial: [token] }))
        if (text.includes(token)) {
          expect(error!.message).toContain(JSON.stringify(token))
          expect(error!.message).toMatch(new RegExp(`\\bindex ${text.indexOf(token)}\\b`))
        } else {
          expect([i, token, error]).toEqual([i, token, null])
          expect(Array.from(tokenizer.encode(text, { disallowedSpecial: [token] }))).toEqual(ordinary[i])
        }
      }
    })
  })

  it.each(OPENAI_ENCODINGS)("%s: 'all' spares the tokens of allowedSpecial, whose ids are tiktoken's", (encoding) => {
    const tokenizer = tokenizerFor(encoding)
    for (const { case: i, allowedSpecial, ids } of openai.encodings[encoding].special) {
      const text = texts[i]
      const rest = allowedSpecial === 'all' ? [] : SPECIALS[encoding].filter((s) => !allowedSpecial.includes(s))
      const first = firstSpecial(text, rest)
      const call = () => tokenizer.encode(text, { allowedSpecial, disallowedSpecial: 'all' })
      if (first) {
        expect(thrown(call)!.message).toMatch(new RegExp(`${escape(JSON.stringify(first.token))}.*\\bindex ${first.index}\\b`))
      } else {
        expect([i, allowedSpecial, Array.from(call())]).toEqual([i, allowedSpecial, ids])
      }
    }
  })

  // Astral characters take two UTF-16 units each: the index is a JS string index.
  const astral = ['𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀🦀 ', 'é😀', '日本語 🇯🇵 ', '']
  const batchTexts = (token: string) => ['plain text', ...astral.map((prefix) => `${prefix}x${token} tail`)]

  it.each(OPENAI_ENCODINGS)('%s: the index counts UTF-16 units after astral characters', (encoding) => {
    const tokenizer = tokenizerFor(encoding)
    for (const token of SPECIALS[encoding].slice(0, 10)) {
      for (const text of batchTexts(token).slice(1)) {
        expect(text.indexOf(token)).toBeGreaterThanOrEqual(0)
        const error = thrown(() => tokenizer.encode(text, { disallowedSpecial: [token] }))
        expect(error).toBeInstanceOf(Error)
        expect(error!.message).toMatch(new RegExp(`${escape(JSON.stringify(token))}.*\\bindex ${text.indexOf(token)}\\b`))
      }
    }
  })

  it.each(OPENAI_ENCODINGS)('%s: batch methods reject (never throw) naming the text, the token and its index', async (encoding) => {
    const properties = (text: string, token: string) => ({ itemIndex: 2, code: 'ERR_DISALLOWED_SPECIAL_TOKEN', token, index: text.indexOf(token) })
    const tokenizer = tokenizerFor(encoding)
    const token = SPECIALS[encoding][0]
    for (const [at, text] of batchTexts(token).entries()) {
      if (at === 0) continue
      const batch = ['plain text', 'more text', text, 'after']
      const index = text.indexOf(token)
      const pattern = new RegExp(`\\b(item|texts\\[)\\s?2\\b.*${escape(JSON.stringify(token))}.*\\bindex ${index}\\b`)
      const bytes = Buffer.from(batch.join(''))
      const offsets = [0]
      for (const t of batch) offsets.push(offsets[offsets.length - 1] + Buffer.byteLength(t))
      const calls: [string, () => Promise<unknown>][] = [
        ['encodeBatch', () => tokenizer.encodeBatch(batch, { disallowedSpecial: 'all' })],
        ['countBatch', () => tokenizer.countBatch(batch, { disallowedSpecial: [token] })],
        ['encodeUtf8Batch', () => tokenizer.encodeUtf8Batch(bytes, offsets, { disallowedSpecial: 'all' })],
      ]
      for (const [name, call] of calls) {
        let promise: Promise<unknown> | undefined
        expect(() => (promise = call()), name).not.toThrow()
        const error = await promise!.then(() => null, (e: Error) => e)
        expect(error, name).toBeInstanceOf(Error)
        expect(error!.message, name).toMatch(pattern)
        expect({ ...error }, name).toEqual(properties(text, token))
      }
      expect(() => tokenizer.encodeBatchSync(batch, { disallowedSpecial: 'all' })).toThrow(pattern)
      expect(() => tokenizer.encodeBatchSync(batch, { disallowedSpecial: 'all' })).toThrow(expect.objectContaining(properties(text, token)))
      // Without the option the batch encodes, the token as ordinary text.
      expect((await tokenizer.encodeBatch(batch)).toArrays()).toEqual(batch.map((t) => Array.from(tokenizer.encode(t))))
    }
  })
})

type ExtendedSpecialsFixture = {
  cases: {
    encoding: string
    specialTokens: Record<string, number>
    first: string
    nVocab: number
    specialTokensSet: string[]
    decoded: Record<string, string>
    texts: { text: string; allowedAll: number[]; allowedFirst: number[]; ordinary: number[]; refusedByDefault: boolean }[]
  }[]
}

describe("special tokens added to an encoding (tiktoken's Encoding(special_tokens={**base, ...}))", () => {
  const extended = fixture<ExtendedSpecialsFixture>('extended-specials.json')

  it.each(extended.cases.map((c) => [c.encoding, Object.keys(c.specialTokens).join(' '), c] as const))(
    '%s with %s: ids, refusals, decode and vocabulary as tiktoken',
    async (name, _tokens, c) => {
      const tokenizer = Tokenizer.fromEncoding(name, { specialTokens: c.specialTokens })
      const base = Tokenizer.fromEncoding(name)
      for (const t of c.texts) {
        expect(Array.from(tokenizer.encode(t.text, { allowedSpecial: 'all' })), t.text).toEqual(t.allowedAll)
        expect(Array.from(tokenizer.encode(t.text, { allowedSpecial: [c.first] })), t.text).toEqual(t.allowedFirst)
        expect(Array.from(tokenizer.encode(t.text)), t.text).toEqual(t.ordinary)
        if (t.refusedByDefault) expect(() => tokenizer.encode(t.text, { disallowedSpecial: 'all' }), t.text).toThrow(/disallowed special token/)
        else expect(Array.from(tokenizer.encode(t.text, { disallowedSpecial: 'all' })), t.text).toEqual(t.ordinary)
        expect(tokenizer.count(t.text, { allowedSpecial: 'all' })).toBe(t.allowedAll.length)
        expect(tokenizer.decode(t.allowedAll)).toBe(t.text)
      }
      const batch = await tokenizer.encodeBatch(c.texts.map((t) => t.text), { allowedSpecial: 'all' })
      expect(batch.toArrays()).toEqual(c.texts.map((t) => t.allowedAll))
      expect(tokenizer.idLimit).toBe(c.nVocab)
      const added = Object.entries(c.specialTokens).filter(([text]) => base.tokenToId(text) === null)
      expect(tokenizer.vocabSize).toBe(base.vocabSize + added.length)
      for (const [text, id] of Object.entries(c.specialTokens)) {
        expect(tokenizer.tokenToId(text)).toBe(id)
        expect(tokenizer.idToToken(id)).toBe(text)
        expect(tokenizer.decode([id])).toBe(c.decoded[text])
        expect(tokenizer.getVocab()[text]).toBe(id)
      }
      // The encoding itself is left as it was.
      for (const [text, id] of added) {
        expect(base.tokenToId(text)).toBeNull()
        expect(() => base.decode([id])).toThrow(RangeError)
        expect(Array.from(base.encode(text, { allowedSpecial: 'all' }))).not.toEqual([id])
      }
    },
  )

  it('fromModel takes them too; the same tokens give the same tokenizer state, in any order', () => {
    const chatml = { '<|im_start|>': 100264, '<|im_end|>': 100265 }
    const model = Tokenizer.fromModel('gpt-4', { specialTokens: chatml })
    expect(model.name).toBe('cl100k_base')
    expect(Array.from(model.encode('<|im_start|>x<|im_end|>', { allowedSpecial: 'all' }))).toEqual([100264, 87, 100265])
    const reordered = Tokenizer.fromEncoding('cl100k_base', { specialTokens: { '<|im_end|>': 100265, '<|im_start|>': 100264 } })
    expect(Array.from(reordered.encode('<|im_end|>', { allowedSpecial: 'all' }))).toEqual([100265])
    // None added, or only the encoding's own: the encoding itself.
    expect(Tokenizer.fromEncoding('cl100k_base', { specialTokens: { '<|endoftext|>': 100257 } }).idLimit).toBe(Tokenizer.fromEncoding('cl100k_base').idLimit)
  })

  it.each([
    ['an ordinary token\'s id', { '<|im_start|>': 5 }, RangeError, /the id 5 of "<\|im_start\|>" is the ordinary token "&" of cl100k_base, whose ordinary tokens have the ids below 100256; give it an id no token has/],
    ['another special token\'s id', { x: 100257 }, RangeError, /the id 100257 of "x" is already the special token "<\|endoftext\|>"'s/],
    ['one id for two', { a: 100300, b: 100300 }, RangeError, /the id 100300 of "b" is already the special token "a"'s/],
    ['a special token of the encoding with another id', { '<|endoftext|>': 100300 }, RangeError, /"<\|endoftext\|>" is cl100k_base's special token 100257, not 100300; leave it out to keep it/],
    ['an id too large', { x: 2 ** 24 }, RangeError, /the id 16777216 of "x" is too large; an added special token's id is at most 16777215/],
    ['an empty text', { '': 100300 }, TypeError, /a special token's text is empty/],
    ['an id that is not whole', { x: 1.5 }, RangeError, /options\.specialTokens\["x"\] is 1\.5; expected a whole number/],
    ['an id that is a string', { x: '100300' }, TypeError, /options\.specialTokens\["x"\] is a string; expected a whole number/],
    ['an array', [['x', 100300]], TypeError, /options\.specialTokens is an array; expected an object of each token's text and id/],
  ])('%s is an error naming the token', (_name, specialTokens, kind, message) => {
    expect(() => Tokenizer.fromEncoding('cl100k_base', { specialTokens: specialTokens as Record<string, number> })).toThrow(kind)
    expect(() => Tokenizer.fromEncoding('cl100k_base', { specialTokens: specialTokens as Record<string, number> })).toThrow(message)
  })

  it('an unknown option is a TypeError listing the valid one', () => {
    expect(() => Tokenizer.fromEncoding('cl100k_base', { special: {} } as object)).toThrow(/options\.special is not an option of fromEncoding.*specialTokens/)
  })
})

describe('encodeSpecialTokens on Hugging Face tokenizers', () => {
  it.each(Object.keys(hfSpecial.tokenizers))("%s tokenizer.json: true gives Python tokenizers' ids with encode_special_tokens = True", (name) => {
    const tokenizer = hfTokenizer(name)
    const { cases, ordinary, split } = hfSpecial.tokenizers[name]
    expect(cases.length).toBeGreaterThan(0)
    cases.forEach((i, at) => {
      const text = texts[i]
      expect([i, Array.from(tokenizer.encode(text, { addSpecialTokens: false, encodeSpecialTokens: true }))]).toEqual([i, ordinary[at]])
      expect([i, Array.from(tokenizer.encode(text, { addSpecialTokens: false, encodeSpecialTokens: false }))]).toEqual([i, split[at]])
      expect([i, Array.from(tokenizer.encode(text, { addSpecialTokens: false }))]).toEqual([i, split[at]])
      expect(tokenizer.count(text, { addSpecialTokens: false, encodeSpecialTokens: true })).toBe(ordinary[at].length)
    })
  })

  it.each(Object.keys(hfSpecial.tokenizers))('%s tokenizer.json: the batch methods take the option too', async (name) => {
    const tokenizer = hfTokenizer(name)
    const { cases, ordinary } = hfSpecial.tokenizers[name]
    const batch = await tokenizer.encodeBatch(cases.map((i) => texts[i]), { addSpecialTokens: false, encodeSpecialTokens: true })
    expect(batch.toArrays()).toEqual(ordinary)
  })
})

describe('truncate', () => {
  /** UTF-16 index of each UTF-8 byte offset that falls on a character boundary. */
  function utf16At(text: string): Map<number, number> {
    const map = new Map<number, number>([[0, 0]])
    let bytes = 0
    for (let i = 0; i < text.length; ) {
      const point = text.codePointAt(i)!
      const units = point > 0xffff ? 2 : 1
      bytes += Buffer.byteLength(String.fromCodePoint(point))
      i += units
      map.set(bytes, i)
    }
    return map
  }

  /**
   * Where the text's own tokens meet, from decodeBytes of each token: `exact`, the UTF-16 indices
   * of the meeting points that fall between characters, and `near`, those and the character
   * boundaries either side of a meeting point inside a character (a cut there keeps whole
   * characters, so it moves to the nearest character boundary).
   */
  function tokenBoundaries(tokenizer: Tokenizer, text: string): { exact: number[]; near: Set<number> } {
    const at = utf16At(text)
    const charStarts = [...at.keys()]
    const exact = [0]
    const near = new Set([0])
    let bytes = 0
    for (const id of tokenizer.encode(text)) {
      bytes += tokenizer.decodeBytes([id]).length
      const index = at.get(bytes)
      if (index !== undefined) {
        if (index !== exact[exact.length - 1]) exact.push(index)
        near.add(index)
      } else {
        const after = charStarts.findIndex((b) => b > bytes)
        near.add(at.get(charStarts[after - 1])!)
        near.add(at.get(charStarts[after])!)
      }
    }
    expect(bytes).toBe(Buffer.byteLength(text))
    return { exact, near }
  }

  const shortTexts = texts.map((text, i) => [i, text] as const).filter(([, t]) => t.length > 0 && t.length <= 160)

  /**
   * Truncates the short fixture texts to a few budgets, from either end, and checks the promise:
   * a prefix (suffix) whose count fits, whole characters, a text that fits comes back whole; with
   * `boundaries`, the cut is where the text's own tokens meet, and with `longest` no longer cut
   * there fits (by brute force over every such cut).
   */
  function checkTruncation(tokenizer: Tokenizer, { boundaries: withBoundaries, longest }: { boundaries: boolean; longest: boolean }) {
    const wrong: unknown[] = []
    const empty = tokenizer.count('')
    for (const [i, text] of shortTexts) {
      const n = tokenizer.count(text)
      const boundaries = withBoundaries ? tokenBoundaries(tokenizer, text) : null
      const cuts = boundaries?.exact
      const prefixCounts = cuts?.map((c) => tokenizer.count(text.slice(0, c)))
      const suffixCounts = cuts?.map((c) => tokenizer.count(text.slice(c)))
      for (const k of new Set([0, 1, 2, 3, 5, 8, Math.max(0, n - 1), n, n + 1])) {
        for (const from of ['end', 'start'] as const) {
          const kept = tokenizer.truncate(text, k, { from })
          const fail = (why: string) => wrong.push({ i, k, from, kept, why })
          const keptCount = tokenizer.count(kept)
          // A template (BERT's [CLS] … [SEP]) costs its tokens even around nothing: '' is then all that can come back.
          if (from === 'end' ? !text.startsWith(kept) : !text.endsWith(kept)) fail('not a prefix (suffix) of the text')
          if (keptCount > Math.max(k, empty)) fail(`count ${keptCount} > ${k}`)
          if (keptCount > k && kept !== '') fail(`count ${keptCount} > ${k}, and not empty`)
          if (!kept.isWellFormed()) fail('splits a surrogate pair')
          if (n <= k && kept !== text) fail('a text that fits comes back whole')
          if (!cuts) continue
          const cutAt = from === 'end' ? kept.length : text.length - kept.length
          if (!boundaries!.near.has(cutAt) && cutAt !== text.length) fail(`cut at ${cutAt}, not at a token boundary ${cuts}`)
          if (!longest) continue
          // No longer cut at a token boundary fits.
          cuts.forEach((c, j) => {
            const longer = from === 'end' ? c > kept.length : text.length - c > kept.length
            const count = from === 'end' ? prefixCounts![j] : suffixCounts![j]
            if (longer && count <= k) fail(`the cut at ${c} is longer and has ${count} tokens`)
          })
        }
      }
    }
    expect(wrong).toEqual([])
  }

  it.each(OPENAI_ENCODINGS)("%s: a prefix (suffix) cut where the text's tokens meet, that fits, never inside a character", (encoding) => {
    checkTruncation(tokenizerFor(encoding), { boundaries: true, longest: false })
  })

  it.each(['p50k_base', 'r50k_base'])('%s: no longer cut where the text\'s tokens meet fits', (encoding) => {
    checkTruncation(tokenizerFor(encoding), { boundaries: true, longest: true })
  })

  // A longer cut can re-encode to fewer tokens than the tokens it keeps (two ideographic spaces
  // that become one token, say): truncate goes on while the next cut fits.
  it.each(['o200k_base', 'o200k_harmony', 'cl100k_base'])("%s: no longer cut where the text's tokens meet fits", (encoding) => {
    checkTruncation(tokenizerFor(encoding), { boundaries: true, longest: true })
  })

  it('GPT-2 tokenizer.json: the longest prefix (suffix) at the text\'s token boundaries that fits', () => {
    // Byte-level without a prefix space: each token's bytes are a piece of the text.
    checkTruncation(hfTokenizer('gpt2'), { boundaries: true, longest: true })
  })

  it.each(['bert', 'unigram'])('%s tokenizer.json: a prefix (suffix) that fits, never inside a character', (name) => {
    checkTruncation(hfTokenizer(name), { boundaries: false, longest: false })
  })

  it('keeps astral characters whole at every budget', () => {
    const tokenizer = hfTokenizer('gpt2')
    const text = '😀🦀𝔘𝔫 a😀b 🇯🇵🇯🇵 end'
    for (let k = 0; k <= tokenizer.count(text) + 1; k++) {
      for (const from of ['end', 'start'] as const) {
        const kept = tokenizer.truncate(text, k, { from })
        expect(kept.isWellFormed()).toBe(true)
        expect(tokenizer.count(kept)).toBeLessThanOrEqual(k)
      }
    }
  })
})
