// The entry points in gpt-tokenizer's style: `batchtok/encoding/<name>` and
// `batchtok/model/<model>` export ready functions that work unbound, from CJS and ESM, typed.
// Their answers are checked against the references (tiktoken ids, gpt-tokenizer chat ids).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { batchtok, expectPeersWords, fixture, typeCheck, type OpenAiFixture, type Texts } from './helpers'

const require = createRequire(import.meta.url)
const { Tokenizer, encodings, modelEncodings } = batchtok
type Ready = import('../entry/ready').ReadyFunctions

const ROOT = join(__dirname, '..')
const openai = fixture<OpenAiFixture>('openai.json')
const chat = fixture<{ conversations: Record<string, { role?: string; name?: string; content: string }[]>; models: Record<string, Record<string, number[]>> }>('chat.json')
const texts = fixture<Texts>('texts.json').cases.map((c) => c.text)

function ordinaryIds(encoding: string): number[][] {
  const entry = openai.encodings[encoding]
  return entry.ordinary ?? openai.encodings[entry.ordinaryAs!].ordinary!
}

/** The ready functions every entry point exports, as the issue names them and entry/ready.d.ts types them. */
const READY = ['encode', 'decode', 'decodeBytes', 'count', 'isWithinTokenLimit', 'truncate', 'encodeChat', 'countChat', 'encodeBatch', 'countBatch', 'decodeBatch', 'decoder', 'decodeStream']

describe('batchtok/encoding/<name>', () => {
  it.each(encodings())('%s exports the ready functions, typed', (name) => {
    const ready = require(`batchtok/encoding/${name}`) as Ready
    for (const fn of READY) expect([fn, typeof (ready as any)[fn]]).toEqual([fn, 'function'])
    expect(ready.tokenizer).toBeInstanceOf(Tokenizer)
    expect(ready.tokenizer.name).toBe(Tokenizer.fromEncoding(name).name)
    expect(existsSync(join(ROOT, 'encoding', `${name}.d.ts`))).toBe(true)
  })

  it.each(Object.keys(openai.encodings))("%s: unbound encode, count and decode give tiktoken's ids, counts and texts", (name) => {
    const { encode, count, decode } = require(`batchtok/encoding/${name}`) as Ready
    const ids = ordinaryIds(name)
    expect(texts.map(encode).map((list) => Array.from(list))).toEqual(ids)
    expect(texts.map(count)).toEqual(ids.map((list) => list.length))
    expect(ids.map(decode)).toEqual(texts)
  })
})

describe('batchtok/model/<model>', () => {
  it('gpt-4o exports the ready functions, over the o200k_base tokenizer', () => {
    const ready = require('batchtok/model/gpt-4o') as Ready
    for (const fn of READY) expect([fn, typeof (ready as any)[fn]]).toEqual([fn, 'function'])
    expect(ready.tokenizer.name).toBe('o200k_base')
    expect(existsSync(join(ROOT, 'model', 'gpt-4o.d.ts'))).toBe(true)
  })

  it('every exact model name of tiktoken whose encoding is embedded has an entry point', () => {
    const embedded = new Set(encodings())
    const missing = Object.entries(modelEncodings())
      .filter(([, encoding]) => embedded.has(encoding))
      .filter(([model]) => !existsSync(join(ROOT, 'model', `${model}.js`)) || !existsSync(join(ROOT, 'model', `${model}.d.ts`)))
    expect(missing).toEqual([])
  })

  it('texts.map(count) works unbound and equals the tokenizer\'s count', () => {
    const { count, tokenizer, isWithinTokenLimit, truncate } = require('batchtok/model/gpt-4o') as Ready
    expect(texts.map(count)).toEqual(texts.map((t) => tokenizer.count(t)))
    expect(texts.map(count)).toEqual(ordinaryIds('o200k_base').map((ids) => ids.length))
    // Called bare, as a callback receives them, with this undefined.
    const bare = [count, isWithinTokenLimit, truncate].map((fn) => fn.bind(undefined))
    expect(bare[0]('hello world')).toBe(tokenizer.count('hello world'))
    expect(bare[1]('hello world', 100)).toBe(tokenizer.count('hello world'))
  })

  it.each(Object.keys(chat.models).filter((m) => existsSync(join(ROOT, 'model', `${m}.js`))))("%s: encodeChat without a model option gives gpt-tokenizer's ids", (model) => {
    const { encodeChat } = require(`batchtok/model/${model}`) as Ready
    for (const [name, messages] of Object.entries(chat.conversations)) {
      expect([name, Array.from(encodeChat(messages))]).toEqual([name, chat.models[model][name]])
    }
  })
})

/** gpt-tokenizer's own module for an encoding or a model (a pinned devDependency). */
const gptTokenizer = (path: string) => require(`gpt-tokenizer/${path}`) as Record<string, any>

/**
 * What gpt-tokenizer's entry points export and batchtok's do not: its default export, and what
 * belongs to its own engine or data (its merge cache's size, its price table, and its
 * `vocabularySize`, which is neither tiktoken's `n_vocab` nor the number of tokens).
 */
const NOT_OFFERED = ['DEFAULT_MERGE_CACHE_SIZE', 'clearMergeCache', 'default', 'estimateCost', 'setMergeCacheSize', 'vocabularySize']

describe("gpt-tokenizer's names, on batchtok's entry points", () => {
  // gpt-tokenizer throws on special-token text by default, where batchtok encodes it as text.
  const chats = Object.entries(chat.conversations).filter(([, messages]) => messages.every((m) => !m.content.includes('<|')))

  it.each([...encodings().map((n) => `encoding/${n}`), 'model/gpt-4o', 'model/gpt-oss-20b', 'model/gpt-3.5-turbo'])(
    '%s exports every name of gpt-tokenizer\'s module but its engine\'s own, constants equal',
    (path) => {
      const theirs = gptTokenizer(path)
      const ours = require(`batchtok/${path}`) as Record<string, unknown>
      expect(Object.keys(theirs).filter((name) => !(name in ours)).sort()).toEqual(NOT_OFFERED)
      for (const [name, value] of Object.entries(theirs)) {
        if (typeof value === 'string') expect([name, ours[name]]).toEqual([name, value])
      }
    },
  )

  it.each(Object.keys(openai.encodings))(
    "%s: countTokens, encodeGenerator and decodeGenerator give gpt-tokenizer's answers where its ids are tiktoken's",
    (name) => {
      const theirs = gptTokenizer(`encoding/${name}`)
      const ours = require(`batchtok/encoding/${name}`) as Ready
      const tiktoken = ordinaryIds(name)
      const differing: string[] = []
      texts.forEach((text, i) => {
        if (text.includes('<|')) return
        const ids = theirs.encode(text) as number[]
        if (JSON.stringify(ids) !== JSON.stringify(tiktoken[i])) return void differing.push(text)
        expect([text, ours.countTokens(text)]).toEqual([text, theirs.countTokens(text)])
        expect([text, [...ours.encodeGenerator(text)].flat()]).toEqual([text, [...theirs.encodeGenerator(text)].flat()])
        expect([text, [...ours.decodeGenerator(ids)].join('')]).toEqual([text, [...theirs.decodeGenerator(ids)].join('')])
        expect([text, ours.decode(ids.values())]).toEqual([text, text])
      })
      // gpt-tokenizer cuts a text before U+FEFF, where tiktoken's pattern keeps it with its word.
      expect(differing.filter((text) => !text.includes('\ufeff'))).toEqual([])
    },
  )

  it.each(['gpt-4o', 'gpt-4', 'gpt-3.5-turbo', 'gpt-oss-20b'])(
    "%s: countTokens, isWithinTokenLimit, encodeChat and encodeChatGenerator of a conversation give gpt-tokenizer's answers",
    (model) => {
      const theirs = gptTokenizer(`model/${model}`)
      const ours = require(`batchtok/model/${model}`) as Ready
      const encoding = ours.tokenizer.name
      const onEncoding = require(`batchtok/encoding/${encoding}`) as Ready
      const theirsOnEncoding = gptTokenizer(`encoding/${encoding}`)
      for (const [name, messages] of chats) {
        const count = theirs.countTokens(messages) as number
        expect([name, ours.countTokens(messages)]).toEqual([name, count])
        for (const limit of [count, count - 1]) {
          expect([name, limit, ours.isWithinTokenLimit(messages, limit)]).toEqual([name, limit, theirs.isWithinTokenLimit(messages, limit)])
        }
        expect([name, [...ours.encodeChatGenerator(messages)].flat()]).toEqual([name, [...theirs.encodeChatGenerator(messages)].flat()])
        expect([name, Array.from(onEncoding.encodeChat(messages, model))]).toEqual([name, theirsOnEncoding.encodeChat(messages, model)])
        expect([name, Array.from(ours.encodeChat(messages.values()))]).toEqual([name, theirs.encodeChat(messages)])
      }
    },
  )

  it('takes special tokens as a Set where the methods take an array', () => {
    const { encode, count, isWithinTokenLimit, EndOfText, FimPrefix, ALL_SPECIAL_TOKENS } = require('batchtok/encoding/cl100k_base') as Ready
    const text = `hello ${EndOfText} and ${FimPrefix}`
    const asArray = encode(text, { allowedSpecial: [EndOfText] })
    expect(encode(text, { allowedSpecial: new Set([EndOfText]) })).toEqual(asArray)
    expect(count(text, { allowedSpecial: new Set([EndOfText]) })).toBe(asArray.length)
    expect(isWithinTokenLimit(text, 100, { allowedSpecial: new Set([EndOfText]) })).toBe(asArray.length)
    expect(encode(text, { allowedSpecial: ALL_SPECIAL_TOKENS })).toEqual(encode(text, { allowedSpecial: [EndOfText, FimPrefix] }))
    expect(() => encode(text, { disallowedSpecial: new Set([FimPrefix]) })).toThrow(FimPrefix)
    expect(() => encode(text, { allowedSpecial: new Set([EndOfText]), disallowedSpecial: ALL_SPECIAL_TOKENS })).toThrow(FimPrefix)
  })

  it("allowed special tokens are found anywhere, as tiktoken finds them, where gpt-tokenizer 4.0.0 takes one only at the start", () => {
    const ours = require('batchtok/encoding/cl100k_base') as Ready
    const theirs = gptTokenizer('encoding/cl100k_base') as unknown as Ready
    const jsTiktoken = (require('js-tiktoken') as typeof import('js-tiktoken')).getEncoding('cl100k_base')
    for (const text of ['<|endoftext|> x', 'hi <|endoftext|>', 'x<|endoftext|>y<|fim_prefix|>']) {
      expect(Array.from(ours.encode(text, { allowedSpecial: 'all' })), text).toEqual(jsTiktoken.encode(text, 'all'))
    }
    // README's "What behaves differently": gpt-tokenizer agrees where the token starts the text.
    expect(theirs.encode('<|endoftext|> x', { allowedSpecial: 'all' })).toEqual([100257, 865])
    expect(theirs.encode('hi <|endoftext|>', { allowedSpecial: 'all' })).toEqual([6151, 83739, 8862, 728, 428, 91, 29])
    expect(Array.from(ours.encode('hi <|endoftext|>', { allowedSpecial: 'all' }))).toEqual([6151, 220, 100257])
  })

  it("a disallowed special token's message begins with gpt-tokenizer's own", () => {
    const text = 'hello <|endoftext|> world'
    const calls: [string, (module: Ready) => unknown][] = [
      ['encode', (module) => module.encode(text, { disallowedSpecial: 'all' })],
      ['countTokens', (module) => module.countTokens(text, { disallowedSpecial: 'all' })],
      ['isWithinTokenLimit', (module) => module.isWithinTokenLimit(text, 100, { disallowedSpecial: 'all' })],
      ['encodeGenerator', (module) => [...module.encodeGenerator(text, { disallowedSpecial: 'all' })]],
    ]
    expectPeersWords(calls, require('batchtok/model/gpt-4o') as Ready, gptTokenizer('model/gpt-4o') as unknown as Ready)
  })

  it('decodeAsyncGenerator decodes ids as they arrive, singly or in arrays', async () => {
    const { encode, decodeAsyncGenerator } = require('batchtok/encoding/o200k_base') as Ready
    const text = 'naïve café, 日本語 and 👋🏽'
    const ids = Array.from(encode(text))
    async function* arriving() {
      yield ids.slice(0, 3)
      for (const id of ids.slice(3)) yield id
    }
    const pieces: string[] = []
    for await (const piece of decodeAsyncGenerator(arriving())) pieces.push(piece)
    expect(pieces.join('')).toBe(text)
    expect(pieces.length).toBeGreaterThan(1)
  })

  it("type-check code written against gpt-tokenizer's module (tsc --noEmit --strict)", () => {
    expect(typeCheck('gpt-tokenizer-names.ts')).toBe('')
  })

  it('a conversation with options it does not take is refused, naming the option', () => {
    const { countTokens } = require('batchtok/model/gpt-4o') as Ready
    expect(() => countTokens([{ role: 'user', content: 'hi' }], { allowedSpecial: 'all' })).toThrow(/allowedSpecial/)
  })

  it("encodeChat takes gpt-tokenizer's options after the model, and refuses allowedSpecial there rather than ignore it", () => {
    const { encodeChat, encodeChatGenerator } = require('batchtok/model/gpt-4o') as Ready
    const messages = [{ role: 'user', content: 'Hello <|endoftext|> world' }]
    const ids = Array.from(encodeChat(messages))
    expect(Array.from(encodeChat(messages, undefined, { model: 'gpt-4o' }))).toEqual(ids)
    expect([messages, messages].map(encodeChat).map((row) => Array.from(row))).toEqual([ids, ids])
    const withSpecials = { allowedSpecial: new Set(['<|endoftext|>']) } as never
    expect(() => encodeChat(messages, 'gpt-4o', withSpecials)).toThrow(new TypeError('options.allowedSpecial is not an option of encodeChat (options: model)'))
    expect(() => [...encodeChatGenerator(messages, undefined, withSpecials)]).toThrow(/allowedSpecial/)
    expect(() => encodeChat(messages, 'gpt-4o', 'gpt-4o' as never)).toThrow(new TypeError('options is string; expected an object'))
  })
})

describe('from a plain Node process', () => {
  // In the repository, so that `batchtok` resolves to this package by its own name.
  const dir = join(ROOT, '.cache', 'entry-points-spec')
  mkdirSync(dir, { recursive: true })
  const sample = texts.slice(0, 40)

  it("ESM: import { count } from 'batchtok/model/gpt-4o' and the other named imports work", () => {
    const file = join(dir, 'check.mjs')
    writeFileSync(
      file,
      [
        "import { count, encode, decode, encodeChat, decodeStream, tokenizer } from 'batchtok/model/gpt-4o'",
        "import * as cl100k from 'batchtok/encoding/cl100k_base'",
        `const texts = ${JSON.stringify(sample)}`,
        'const pieces = []',
        'for await (const piece of decodeStream(encode(texts[3]))) pieces.push(piece)',
        'console.log(JSON.stringify({',
        '  counts: texts.map(count),',
        '  cl100k: texts.map(cl100k.count),',
        '  ids: texts.map((t) => Array.from(encode(t))),',
        '  decoded: texts.map((t) => decode(encode(t))),',
        "  chat: Array.from(encodeChat([{ role: 'user', content: 'Hello, world!' }])),",
        '  streamed: pieces.join(""),',
        '  name: tokenizer.name,',
        '}))',
      ].join('\n'),
    )
    const out = JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8', cwd: dir }))
    expect(out.name).toBe('o200k_base')
    expect(out.ids).toEqual(ordinaryIds('o200k_base').slice(0, 40))
    expect(out.counts).toEqual(out.ids.map((ids: number[]) => ids.length))
    expect(out.cl100k).toEqual(ordinaryIds('cl100k_base').slice(0, 40).map((ids) => ids.length))
    expect(out.decoded).toEqual(sample)
    expect(out.chat).toEqual(chat.models['gpt-4o']['one-user-message'])
    expect(out.streamed).toBe(sample[3])
  })

  it("CJS: require('batchtok/encoding/o200k_base') works and its functions work unbound", () => {
    const file = join(dir, 'check.cjs')
    writeFileSync(
      file,
      [
        "const { count, encode } = require('batchtok/encoding/o200k_base')",
        `const texts = ${JSON.stringify(sample)}`,
        'console.log(JSON.stringify({ counts: texts.map(count), ids: texts.map(encode).map((ids) => Array.from(ids)) }))',
      ].join('\n'),
    )
    const out = JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8', cwd: dir }))
    expect(out.ids).toEqual(ordinaryIds('o200k_base').slice(0, 40))
    expect(out.counts).toEqual(out.ids.map((ids: number[]) => ids.length))
  })
})
