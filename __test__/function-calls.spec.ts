// countChatCompletionTokens: the prompt tokens of a chat completion request with function
// definitions, as gpt-tokenizer counts them. Checked against gpt-tokenizer itself: its own test
// cases, seeded random requests through its countChatCompletionTokens, and which models and
// encodings offer the count.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { countChatCompletionTokens as gptTokenizer4o } from 'gpt-tokenizer/model/gpt-4o'
import { countChatCompletionTokens as gptTokenizer4Turbo } from 'gpt-tokenizer/model/gpt-4-turbo'
import { countChatCompletionTokens as gptTokenizerOss } from 'gpt-tokenizer/model/gpt-oss-20b'
import { functionCallingTestCases } from '../node_modules/gpt-tokenizer/src/fixtures/functionCallingTestCases'
import { batchtok, corpus, FIXTURES, typeCheck } from './helpers'

const require = createRequire(import.meta.url)
const { Tokenizer, modelEncodings } = batchtok
type Request = Parameters<InstanceType<typeof Tokenizer>['countChatCompletionTokens']>[0]

const ROOT = join(__dirname, '..')
const GPT_TOKENIZER_MODELS = join(ROOT, 'node_modules/gpt-tokenizer/src/model')

/** The contenders: a batchtok tokenizer and gpt-tokenizer's count for the same encoding. */
const CONTENDERS = [
  { name: 'gpt-4o (o200k_base)', ours: () => Tokenizer.fromModel('gpt-4o'), theirs: gptTokenizer4o! },
  { name: 'gpt-4-turbo (cl100k_base)', ours: () => Tokenizer.fromModel('gpt-4-turbo'), theirs: gptTokenizer4Turbo! },
  { name: 'gpt-oss-20b (o200k_harmony)', ours: () => Tokenizer.fromEncoding('o200k_harmony'), theirs: gptTokenizerOss! },
]

/** Whether gpt-tokenizer's module for `model` exports countChatCompletionTokens. */
function gptTokenizerOffers(model: string): boolean {
  return readFileSync(join(GPT_TOKENIZER_MODELS, `${model}.ts`), 'utf8').includes('countChatCompletionTokens,')
}

describe("gpt-tokenizer's function-calling test cases", () => {
  const gpt4o = Tokenizer.fromModel('gpt-4o')
  it.each(functionCallingTestCases.map((c, i) => [i, c] as const))('case %i gives its tokens', (_, testCase) => {
    const { tokens, ...request } = testCase
    expect(gpt4o.countChatCompletionTokens(request as Request)).toBe(tokens)
  })
  it('has the cases it is known to have', () => {
    expect(functionCallingTestCases.length).toBeGreaterThan(30)
  })
})

/** Random chat completion requests: every schema shape gpt-tokenizer renders, and every field absent, empty or null. */
function requests(seed: number, count: number): Request[] {
  const next = corpus.seededRandom(seed)
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T,>(items: readonly T[]): T => items[int(items.length)]
  const chance = (p: number) => next() < p
  const WORDS = ['the', 'weather', 'city', 'Get', 'current', 'unit', 'São Paulo', '東京', 'naïve', '🌍', 'x', 'IDs', "don't", '42', '3.14', '<|endoftext|>', '<|im_start|>', 'a_b', 'C++', '$ref']
  const PUNCTUATION = ['', '.', ',', ':', ';', '!', '?', ' "quoted"', " 'single'", ' \\back\\slash', '\n', '\n\n', '\t', ' - ', '\r\n', ' // comment', '*/', '{', '}', '\u0001', '\u2028', '\u007f']
  const text = (max = 8) =>
    Array.from({ length: 1 + int(max) }, () => pick(WORDS) + pick(PUNCTUATION)).join(pick([' ', '', '  ', '\n']))
  const identifier = () => pick(['get_weather', 'search', 'f', 'lookup_user', 'sendEmail', 'x1', 'do-it', 'ünïcode', 'with space', ''])
  const maybe = <T,>(value: () => T): T | undefined | null => (chance(0.15) ? pick([undefined, null]) : value())
  const description = () => (chance(0.5) ? undefined : chance(0.15) ? pick(['', null]) : text())
  const NUMBERS = [0, 1, -1, 2.5, 0.1, 1e21, 1.5e-7, -0, 123456789.125, 5e-324, Number.MAX_SAFE_INTEGER, 1e-6, NaN, Infinity]
  const enumValue = (): string | number | boolean | null =>
    chance(0.6) ? text(2) : chance(0.7) ? pick(NUMBERS) : pick([true, false, null])

  const schema = (depth: number): any => {
    const roll = int(depth > 2 ? 6 : 10)
    const withDescription = (s: any) => {
      const d = description()
      if (d !== undefined) s.description = d
      if (chance(0.2)) s.default = 'ignored'
      return s
    }
    switch (roll) {
      case 0: {
        const s: any = { type: 'string' }
        if (chance(0.4)) s.enum = chance(0.1) ? pick([null, []]) : Array.from({ length: 1 + int(4) }, enumValue)
        return withDescription(s)
      }
      case 1: {
        const s: any = { type: pick(['number', 'integer']) }
        if (chance(0.4)) s.enum = Array.from({ length: 1 + int(4) }, () => (chance(0.7) ? pick(NUMBERS) : enumValue()))
        if (chance(0.3)) s.minimum = 0
        return withDescription(s)
      }
      case 2:
        return withDescription({ type: pick(['boolean', 'null']) })
      case 3:
        return withDescription(pick([{ type: 'foo' }, { type: ['string', 'null'] }, {}, { type: null }, { anyOf: [{ type: 'string' }] }]))
      case 4:
        return pick([true, false])
      case 5:
        return withDescription({ type: 'string', format: 'date-time' })
      case 6:
      case 7: {
        const s: any = { type: 'array' }
        if (chance(0.8)) s.items = chance(0.1) ? pick([null, true, false, [{ type: 'string' }]]) : schema(depth + 1)
        return withDescription(s)
      }
      default:
        return withDescription({ type: 'object', ...objectBody(depth + 1) })
    }
  }
  const objectBody = (depth: number): any => {
    const body: any = {}
    if (chance(0.9)) {
      const properties: Record<string, unknown> = {}
      for (let i = int(5); i > 0; i--) properties[pick(['city', 'unit', 'days', 'query', 'tags', 'nested', 'a b', '0', '10', 'x-y', 'ÿ'])] = schema(depth)
      body.properties = chance(0.05) ? null : properties
      if (chance(0.7)) body.required = Object.keys(properties).filter(() => chance(0.5)).concat(chance(0.1) ? ['not_a_property'] : [])
    }
    if (chance(0.2)) body.additionalProperties = false
    return body
  }
  const fn = (): any => {
    const f: any = { name: identifier() }
    const d = description()
    if (d !== undefined) f.description = d
    if (chance(0.85)) f.parameters = chance(0.1) ? pick([null, { type: 'object' }, { type: 'object', properties: {} }]) : { type: 'object', ...objectBody(1) }
    return f
  }
  const message = (): any => {
    const role = pick(['system', 'user', 'assistant', 'function', 'developer', undefined, null, ''])
    const m: any = { role }
    m.content = chance(0.1) ? pick([null, undefined, '']) : text(12)
    if (chance(0.3)) m.name = pick(['bob', 'example_user', '', null, identifier()])
    if (chance(0.2)) {
      m.function_call = chance(0.1) ? {} : { name: maybe(identifier), arguments: maybe(() => JSON.stringify({ city: text(2), days: int(9) })) }
    }
    if (chance(0.1)) m.channel = 'ignored'
    return m
  }
  return Array.from({ length: count }, () => {
    const request: any = { messages: Array.from({ length: int(6) }, message) }
    if (chance(0.8)) request.functions = chance(0.1) ? pick([[], null]) : Array.from({ length: 1 + int(4) }, fn)
    if (chance(0.6)) request.function_call = pick(['auto', 'none', { name: identifier() }, { name: '' }, null])
    return request as Request
  })
}

describe('the same count as gpt-tokenizer on random requests', () => {
  it.each(CONTENDERS)('$name', ({ ours, theirs }) => {
    const tokenizer = ours()
    const cases = requests(0x5eed ^ tokenizer.name.length, 300)
    let withFunctions = 0
    for (const [index, request] of cases.entries()) {
      if (request.functions?.length) withFunctions++
      expect([index, tokenizer.countChatCompletionTokens(request)]).toEqual([index, theirs(request as any)])
    }
    expect(withFunctions).toBeGreaterThan(150)
  })

  it('covers every schema shape in the rendering', () => {
    // The same request with and without each shape differs, so none of them is silently dropped.
    const tokenizer = Tokenizer.fromModel('gpt-4o')
    const request = (schema: unknown): Request => ({
      messages: [{ role: 'user', content: 'Hi' }],
      functions: [{ name: 'f', parameters: { type: 'object', properties: { p: schema as any } } }],
    })
    for (const schema of [
      { type: 'string' },
      { type: 'string', enum: ['a"b', 'c\nd', 1e21, null] },
      { type: 'number', enum: [1.5e-7, -0, 'x', NaN] },
      { type: 'boolean' },
      { type: 'null' },
      { type: 'array' },
      { type: 'array', items: { type: 'object', properties: { q: { type: 'string', description: 'deep' } } } },
      { type: 'object' },
      { type: ['string', 'null'] },
      true,
    ]) {
      expect([schema, tokenizer.countChatCompletionTokens(request(schema))]).toEqual([schema, gptTokenizer4o!(request(schema) as any)])
    }
  })
})

describe('which models and encodings offer it', () => {
  it("follows gpt-tokenizer's model modules for every model both know", () => {
    const hi = { messages: [{ role: 'user', content: 'Hi' }] }
    // 'user' and 'Hi' are one token each in both chat encodings.
    expect(gptTokenizer4Turbo!(hi)).toBe(gptTokenizer4o!(hi))
    let offered = 0
    for (const file of readdirSync(GPT_TOKENIZER_MODELS)) {
      const model = file.replace(/\.ts$/, '')
      let tokenizer
      try {
        tokenizer = Tokenizer.fromModel(model)
      } catch {
        continue // a model tiktoken's table does not know
      }
      const count = () => tokenizer.countChatCompletionTokens(hi)
      if (gptTokenizerOffers(model)) {
        expect([model, count()]).toEqual([model, gptTokenizer4o!(hi)])
        offered++
      } else {
        expect(count, model).toThrow(TypeError)
      }
    }
    expect(offered).toBeGreaterThan(40)
  })

  it('refuses a model gpt-tokenizer does not offer it for, and says what to use instead', () => {
    expect(() => Tokenizer.fromModel('gpt-4').countChatCompletionTokens({ messages: [] })).toThrow(
      /"gpt-4" is not one of them.*Tokenizer\.fromEncoding\('cl100k_base'\)/,
    )
    expect(Tokenizer.fromModel('ft:gpt-4o-2024-08-06:org::abc').countChatCompletionTokens({ messages: [] })).toBe(3)
  })

  it.each(['cl100k_base', 'o200k_base', 'o200k_harmony'])('counts on %s', (name) => {
    expect(Tokenizer.fromEncoding(name).countChatCompletionTokens({ messages: [] })).toBe(3)
  })

  it.each(['r50k_base', 'p50k_base', 'p50k_edit', 'gpt2'])('refuses %s, naming it', (name) => {
    expect(() => Tokenizer.fromEncoding(name).countChatCompletionTokens({ messages: [] })).toThrow(
      new RegExp(`this tokenizer is ${name === 'gpt2' ? 'r50k_base' : name}`),
    )
  })

  it('refuses a Hugging Face tokenizer', () => {
    const hf = Tokenizer.fromFile(join(FIXTURES, 'tokenizers', 'gpt2.json'))
    expect(() => hf.countChatCompletionTokens({ messages: [] })).toThrow(/Hugging Face tokenizer/)
  })

  it('is a ready function where gpt-tokenizer has it, and absent elsewhere', () => {
    for (const [model, encoding] of Object.entries(modelEncodings())) {
      const file = join(ROOT, 'model', `${model}.js`)
      if (!existsSync(file)) continue
      const ready = require(file)
      const theirs = existsSync(join(GPT_TOKENIZER_MODELS, `${model}.ts`)) && gptTokenizerOffers(model)
      expect([model, encoding, 'countChatCompletionTokens' in ready]).toEqual([model, encoding, theirs])
      const dts = readFileSync(join(ROOT, 'model', `${model}.d.ts`), 'utf8')
      expect(dts.includes('countChatCompletionTokens')).toBe(theirs)
    }
    const { countChatCompletionTokens } = require(join(ROOT, 'model', 'gpt-4o.js'))
    const request = { messages: [{ role: 'user', content: 'Hi' }], functions: [{ name: 'f' }], function_call: 'none' }
    expect(countChatCompletionTokens(request)).toBe(gptTokenizer4o!(request as any))
    for (const encoding of ['o200k_base', 'cl100k_base', 'o200k_harmony']) {
      expect(typeof require(join(ROOT, 'encoding', `${encoding}.js`)).countChatCompletionTokens).toBe('function')
    }
    expect('countChatCompletionTokens' in require(join(ROOT, 'encoding', 'r50k_base.js'))).toBe(false)
  })

  it('imports from ESM', async () => {
    const { countChatCompletionTokens } = await import('batchtok/model/o3')
    const request = { messages: [{ role: 'system', content: 'Be brief' }], functions: [{ name: 'f' }] }
    expect(countChatCompletionTokens(request)).toBe(gptTokenizer4o!(request))
  })
})

describe('bad requests', () => {
  const tokenizer = Tokenizer.fromModel('gpt-4o')
  const withParameters = (parameters: unknown) => ({ messages: [], functions: [{ name: 'f', parameters }] })
  const withProperty = (schema: unknown) => withParameters({ type: 'object', properties: { city: schema } })
  it.each<[string, unknown, RegExp]>([
    ['not an object', 'Hi', /^request is a string; expected \{ messages/],
    ['no messages', {}, /^request\.messages is missing/],
    ['messages not an array', { messages: { role: 'user' } }, /^request\.messages is an object; expected an array of messages/],
    ['a message not an object', { messages: ['Hi'] }, /^request\.messages\[0\] is a string/],
    ['content not a string', { messages: [{ role: 'user', content: ['part'] }] }, /^request\.messages\[0\]\.content is an array; expected a string/],
    ['a role not a string', { messages: [{ role: 1, content: '' }] }, /^request\.messages\[0\]\.role is a number/],
    ['function_call not an object', { messages: [{ content: '', function_call: 'f' }] }, /^request\.messages\[0\]\.function_call is a string/],
    ['arguments not a string', { messages: [{ content: '', function_call: { arguments: {} } }] }, /^request\.messages\[0\]\.function_call\.arguments is an object/],
    ['functions not an array', { messages: [], functions: { name: 'f' } }, /^request\.functions is an object; expected an array of function definitions/],
    ['a function without a name', { messages: [], functions: [{ description: 'd' }] }, /^request\.functions\[0\]\.name is missing; a function needs a name/],
    ['a name not a string', { messages: [], functions: [{ name: 7 }] }, /^request\.functions\[0\]\.name is a number/],
    ['a description not a string', { messages: [], functions: [{ name: 'f', description: 3 }] }, /^request\.functions\[0\]\.description is a number/],
    ['parameters not an object', withParameters('object'), /^request\.functions\[0\]\.parameters is a string; expected an object schema/],
    ['parameters an array', withParameters([]), /^request\.functions\[0\]\.parameters is an array/],
    ['properties not an object', withParameters({ properties: [] }), /^request\.functions\[0\]\.parameters\.properties is an array; expected an object of property schemas/],
    ['required not an array', withParameters({ properties: {}, required: 'city' }), /^request\.functions\[0\]\.parameters\.required is a string; expected an array/],
    ['a required name not a string', withParameters({ properties: {}, required: [1] }), /^request\.functions\[0\]\.parameters\.required\[0\] is a number/],
    ['a property schema a string', withProperty('string'), /^request\.functions\[0\]\.parameters\.properties\.city is a string; expected a schema/],
    ['a property schema null', withProperty(null), /^request\.functions\[0\]\.parameters\.properties\.city is null; expected a schema/],
    ['a type not a string', withProperty({ type: 3 }), /properties\.city\.type is a number; expected a string/],
    ['an enum not an array', withProperty({ type: 'string', enum: 'a|b' }), /properties\.city\.enum is a string; expected an array/],
    ['an enum value an object', withProperty({ type: 'number', enum: [1, {}] }), /properties\.city\.enum\[1\] is an object; expected a string, number, boolean or null/],
    ['items a string', withProperty({ type: 'array', items: 'string' }), /properties\.city\.items is a string; expected a schema/],
    ['a nested property bad', withProperty({ type: 'object', properties: { deep: 1 } }), /properties\.city\.properties\.deep is a number/],
    ['function_call an unknown string', { messages: [], function_call: 'required' }, /^request\.function_call is "required"; expected 'auto', 'none' or \{ name \}/],
    ['function_call without a name', { messages: [], function_call: {} }, /^request\.function_call\.name is missing/],
    ['function_call a number', { messages: [], function_call: 1 }, /^request\.function_call is a number/],
  ])('%s: a TypeError naming the field', (_, request, message) => {
    expect(() => tokenizer.countChatCompletionTokens(request as Request)).toThrow(TypeError)
    expect(() => tokenizer.countChatCompletionTokens(request as Request)).toThrow(message)
  })

  it('reads a property name a C string cannot hold', () => {
    const request = withProperty({ type: 'string' }) as any
    request.functions[0].parameters.properties = { 'a\u0000b': { type: 'string' } }
    expect(tokenizer.countChatCompletionTokens(request)).toBe(gptTokenizer4o!(request))
  })

  it('a schema that contains itself is a TypeError, not a stack overflow', () => {
    const items: any = { type: 'array' }
    items.items = items
    expect(() => tokenizer.countChatCompletionTokens(withProperty(items) as Request)).toThrow(/nested 101 schemas deep; batchtok reads at most 100/)
    const object: any = { type: 'object', properties: {} }
    object.properties.self = object
    expect(() => tokenizer.countChatCompletionTokens(withParameters(object) as Request)).toThrow(TypeError)
    let deep: any = { type: 'string' }
    for (let i = 0; i < 99; i++) deep = i % 2 ? { type: 'array', items: deep } : { type: 'object', properties: { p: deep } }
    expect(tokenizer.countChatCompletionTokens(withProperty(deep) as Request)).toBe(gptTokenizer4o!(withProperty(deep) as any))
  })

  it('a getter or proxy that throws has its own error reach the caller', () => {
    const boom = new Error('boom')
    const getter = { messages: [], functions: [{ name: 'f', get parameters() { throw boom } }] }
    expect(() => tokenizer.countChatCompletionTokens(getter as Request)).toThrow(boom)
    const proxy = new Proxy({}, { ownKeys: () => { throw boom } })
    expect(() => tokenizer.countChatCompletionTokens(withParameters({ properties: proxy }) as Request)).toThrow(boom)
  })

  it("reads a schema's own properties, as Object.entries does", () => {
    const properties = Object.create({ inherited: { type: 'string' } })
    properties.own = { type: 'number' }
    const request = withParameters({ properties }) as any
    expect(tokenizer.countChatCompletionTokens(request)).toBe(gptTokenizer4o!(request))
    expect(tokenizer.countChatCompletionTokens(request)).toBe(tokenizer.countChatCompletionTokens(withParameters({ properties: { own: { type: 'number' } } }) as Request))
  })

  it('counts lone surrogates as gpt-tokenizer does: escaped in a string enum, U+FFFD elsewhere', () => {
    const lone = 'a\ud800b'
    for (const request of [
      { messages: [{ role: 'user', content: lone, name: lone }] },
      { messages: [], functions: [{ name: lone, description: lone }] },
      withProperty({ type: 'string', enum: [lone, '\udc00'] }),
      withProperty({ type: 'number', enum: [lone] }),
      withParameters({ properties: { [lone]: { type: 'string', description: lone } }, required: [lone] }),
    ]) {
      expect([request, tokenizer.countChatCompletionTokens(request as Request)]).toEqual([request, gptTokenizer4o!(request as any)])
    }
  })
})

describe('worker_threads', () => {
  it('counts in a worker, the deepest schema read included', async () => {
    const { Worker } = await import('node:worker_threads')
    const code = `const { parentPort } = require('node:worker_threads')
const { countChatCompletionTokens } = require(${JSON.stringify(join(ROOT, 'model', 'gpt-4o.js'))})
let deep = { type: 'string' }
for (let i = 0; i < 99; i++) deep = { type: 'object', properties: { p: { type: 'array', items: deep } } }
const request = { messages: [{ role: 'user', content: 'Hi' }], functions: [{ name: 'f', parameters: { properties: { p: deep } } }] }
let error
try { countChatCompletionTokens(request) } catch (e) { error = e.message }
const shallow = { messages: [{ role: 'user', content: 'Hi' }], functions: [{ name: 'f' }] }
parentPort.postMessage([error, countChatCompletionTokens(shallow)])`
    const worker = new Worker(code, { eval: true })
    try {
      const [error, count] = await new Promise<[string, number]>((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      })
      expect(error).toMatch(/batchtok reads at most 100/)
      expect(count).toBe(gptTokenizer4o!({ messages: [{ role: 'user', content: 'Hi' }], functions: [{ name: 'f' }] }))
    } finally {
      await worker.terminate()
    }
  })
})

describe('types', () => {
  it("take gpt-tokenizer's ChatCompletionRequest, and type the ready function where it exists (tsc --noEmit --strict)", () => {
    expect(typeCheck('count-chat-completion-tokens.ts')).toBe('')
  })
})
