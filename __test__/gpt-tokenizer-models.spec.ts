// batchtok against gpt-tokenizer's model modules, read from node_modules/gpt-tokenizer (a pinned
// devDependency) at test time: every `gpt-tokenizer/model/<name>` has its encoding in batchtok
// (tiktoken's answer where its table knows the name), a `batchtok/model/<name>`, and the same chat
// ids, or the same refusal of chat; and gpt-oss's Harmony chats give gpt-tokenizer's ids on seeded
// random conversations.
import { existsSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { batchtok, corpus, fixture } from './helpers'

const { Tokenizer, encodingForModel, modelEncodings } = batchtok
const require = createRequire(import.meta.url)
const models = fixture<{ known: Record<string, string> }>('models.json')

const ROOT = join(__dirname, '..')
const GPT_TOKENIZER = join(ROOT, 'node_modules', 'gpt-tokenizer')
const mapping = require('gpt-tokenizer/mapping') as {
  modelToEncodingMap: Record<string, string>
  DEFAULT_ENCODING: string
  chatModelParams: Record<string, unknown>
}

type Message = {
  role?: string
  name?: string
  content: string
  channel?: string
  recipient?: string
  recipientPlacement?: 'role' | 'channel'
  constraint?: string
  terminator?: '<|end|>' | '<|return|>' | '<|call|>'
}
type Module = {
  encodeChat: (messages: Message[], model?: string) => number[]
  countTokens: (input: string | Message[]) => number
}

/** The models gpt-tokenizer has a module for: the names of its `esm/model` folder. */
const names = readdirSync(join(GPT_TOKENIZER, 'esm', 'model'))
  .filter((file) => file.endsWith('.js'))
  .map((file) => file.slice(0, -'.js'.length))
  .sort()

/** The encoding gpt-tokenizer's module for `model` tokenizes with, as its code generator picks it. */
const theirs = (model: string) => mapping.modelToEncodingMap[model] ?? mapping.DEFAULT_ENCODING
/** tiktoken's answer for `model`, where models.json has one. */
const tiktoken = (model: string) => models.known[model]
const module = (model: string) => require(`gpt-tokenizer/model/${model}`) as Module

const conversation: Message[] = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', name: 'Zoë', content: 'What is 2 + 2? 日本語 🦀' },
  { role: 'assistant', content: '4.' },
]

describe("gpt-tokenizer's models", () => {
  it('reads its model modules', () => {
    expect(names.length).toBeGreaterThan(200)
    expect(names).toEqual(expect.arrayContaining(['gpt-4o', 'gpt-audio', 'gpt-oss-20b', 'text-embedding-3-small']))
  })

  it('gpt-tokenizer and tiktoken agree on every name both know', () => {
    const disagreements = names.filter((model) => tiktoken(model) !== undefined && tiktoken(model) !== theirs(model))
    expect(disagreements).toEqual([])
  })

  it("every model: encodingForModel, Tokenizer.fromModel and modelEncodings() give its module's encoding (tiktoken's where it knows the name)", () => {
    const table = modelEncodings()
    const expected = (model: string) => tiktoken(model) ?? theirs(model)
    const answers = (model: string) => [model, encodingForModel(model), Tokenizer.fromModel(model).name, table[model]]
    expect(names.map(answers)).toEqual(names.map((model) => [model, expected(model), expected(model), expected(model)]))
  })

  it('every model has its entry point, batchtok/model/<name>, with types', () => {
    const missing = names.filter((model) => !existsSync(join(ROOT, 'model', `${model}.js`)) || !existsSync(join(ROOT, 'model', `${model}.d.ts`)))
    expect(missing).toEqual([])
    const ready = require(join(ROOT, 'model', 'gpt-audio.js'))
    expect(ready.tokenizer.name).toBe('o200k_base')
  })

  it('an unknown name is an Error naming the nearest known ones, gpt-tokenizer\'s among them', () => {
    expect(() => Tokenizer.fromModel('gpt-audoi')).toThrow(/^unknown model "gpt-audoi": did you mean 'gpt-audio'\?/)
    expect(() => encodingForModel('gpt-realtime-mni')).toThrow(/did you mean 'gpt-realtime-mini'/)
  })

  const chatModels = names.filter((model) => model in mapping.chatModelParams)
  const otherModels = names.filter((model) => !(model in mapping.chatModelParams))

  it('has chat models and models without chat', () => {
    expect(chatModels.length).toBeGreaterThan(100)
    expect(otherModels.length).toBeGreaterThan(50)
  })

  it.each(chatModels)("%s: encodeChat gives its module's ids, from Tokenizer.fromModel and from batchtok/model", (model) => {
    const ids = module(model).encodeChat(conversation)
    expect(Array.from(Tokenizer.fromModel(model).encodeChat(conversation))).toEqual(ids)
    expect(Array.from(Tokenizer.fromEncoding(theirs(model)).encodeChat(conversation, { model }))).toEqual(ids)
    expect(Array.from(require(join(ROOT, 'model', `${model}.js`)).encodeChat(conversation))).toEqual(ids)
  })

  it.each(otherModels)('%s: chat is refused, as gpt-tokenizer refuses it', (model) => {
    // Its module is its encoding's: without encodeChat (r50k_base, p50k_base), or with one that
    // refuses the model.
    const { encodeChat } = module(model)
    if (encodeChat !== undefined) expect(() => encodeChat(conversation, model)).toThrow(/does not support chat/)
    const tokenizer = Tokenizer.fromModel(model)
    expect(() => tokenizer.encodeChat(conversation)).toThrow(/not a chat model/)
    expect(() => tokenizer.countChat(conversation)).toThrow(/not a chat model/)
  })
})

/** Seeded Harmony conversations: every header field present or not, empty or not. */
function harmonyConversations(seed: number, count: number): Message[][] {
  const next = corpus.seededRandom(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]
  const maybe = <T>(value: () => T): T | undefined => (next() < 0.5 ? value() : undefined)
  const words = ['hello', ' world', 'Ελληνικά', '日本語', '🦀', '\n', '  ', '{"a": 1}', 'to=', 'functions.f', "What's", '\t', 'x']
  const text = () => Array.from({ length: Math.floor(next() * 8) }, () => pick(words)).join('')
  return Array.from({ length: count }, () =>
    Array.from({ length: Math.floor(next() * 6) }, () => {
      const message: Message = { content: text() }
      const fields: [keyof Message, () => string][] = [
        ['role', () => pick(['system', 'developer', 'user', 'assistant', 'tool', ''])],
        ['name', () => pick(['functions.get_weather', 'browser', 'Zoë', ''])],
        ['channel', () => pick(['analysis', 'commentary', 'final', ''])],
        ['recipient', () => pick(['functions.get_weather', 'assistant', 'browser.search', ''])],
        ['recipientPlacement', () => pick(['role', 'channel'])],
        ['constraint', () => pick(['json', 'json-schema', ''])],
        ['terminator', () => pick(['<|end|>', '<|return|>', '<|call|>'])],
      ]
      for (const [key, value] of fields) {
        const chosen = maybe(value)
        if (chosen !== undefined) (message as Record<string, string>)[key] = chosen
      }
      return message
    }),
  )
}

describe('Harmony chats (gpt-oss)', () => {
  const conversations = harmonyConversations(0x6a726d, 300)

  it('the random conversations use every header field', () => {
    const keys = new Set(conversations.flat().flatMap((m) => Object.keys(m)))
    expect([...keys].sort()).toEqual(['channel', 'constraint', 'content', 'name', 'recipient', 'recipientPlacement', 'role', 'terminator'])
  })

  it.each(['gpt-oss-20b', 'gpt-oss-120b'])("%s: encodeChat gives gpt-tokenizer's ids on 300 seeded conversations, and countChat its countTokens", (model) => {
    const { encodeChat, countTokens } = module(model)
    const tokenizer = Tokenizer.fromModel(model)
    const ready = require(join(ROOT, 'model', `${model}.js`))
    for (const messages of conversations) {
      const ids = encodeChat(messages)
      expect([messages, Array.from(tokenizer.encodeChat(messages))]).toEqual([messages, ids])
      expect(Array.from(ready.encodeChat(messages))).toEqual(ids)
      expect(tokenizer.countChat(messages)).toBe(countTokens(messages))
      expect(tokenizer.countChat(messages)).toBe(ids.length)
    }
  })

  it('a dated or fine-tuned gpt-oss name writes Harmony too', () => {
    const messages = conversations.find((c) => c.length > 2)!
    expect(Array.from(Tokenizer.fromModel('gpt-oss-20b-2025').encodeChat(messages))).toEqual(module('gpt-oss-20b').encodeChat(messages))
  })

  it.each([
    ['channel', 1, TypeError, /messages\[0\]\.channel is a number; expected a string/],
    ['recipient', {}, TypeError, /messages\[0\]\.recipient is an object; expected a string/],
    ['constraint', true, TypeError, /messages\[0\]\.constraint is a boolean; expected a string/],
    ['recipientPlacement', 2, TypeError, /messages\[0\]\.recipientPlacement is a number; expected one of 'channel', 'role'/],
    ['recipientPlacement', 'middle', RangeError, /messages\[0\]\.recipientPlacement is "middle"; expected one of 'channel', 'role'/],
    ['terminator', null, TypeError, /messages\[0\]\.terminator is null; expected one of '<\|end\|>'/],
    ['terminator', '<|stop|>', RangeError, /messages\[0\]\.terminator is "<\|stop\|>"; expected one of '<\|end\|>', '<\|return\|>', '<\|call\|>'/],
  ])('a message whose %s is %o throws naming it', (key, value, kind, message) => {
    const tokenizer = Tokenizer.fromModel('gpt-oss-20b')
    for (const call of [() => tokenizer.encodeChat([{ content: 'x', [key]: value } as any]), () => tokenizer.countChat([{ content: 'x', [key]: value } as any])]) {
      expect(call).toThrow(kind)
      expect(call).toThrow(message)
    }
  })
})
