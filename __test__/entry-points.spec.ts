// The entry points in gpt-tokenizer's style: `batchtok/encoding/<name>` and
// `batchtok/model/<model>` export ready functions that work unbound, from CJS and ESM, typed.
// Their answers are checked against the references (tiktoken ids, gpt-tokenizer chat ids).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { batchtok, fixture, type OpenAiFixture, type Texts } from './helpers'

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
