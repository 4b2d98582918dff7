// gpt-tokenizer's own test vectors, run through batchtok: its TestPlans.txt (samples and their ids
// for every encoding), and the vectors of its GptEncoding.test.ts that batchtok's API expresses
// (ids of texts, isWithinTokenLimit, special tokens, chat ids from its snapshot). Everything is
// read from node_modules/gpt-tokenizer (a pinned devDependency) at test time.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { batchtok } from './helpers'

const { Tokenizer, encodings } = batchtok

const GPT_TOKENIZER = join(__dirname, '..', 'node_modules', 'gpt-tokenizer')
const END_OF_TEXT = '<|endoftext|>'

type Plan = { encoding: string; sample: string; encoded: number[] }

/** TestPlans.txt: blank-line separated plans of `EncodingName: …`, `Sample: …`, `Encoded: [ids]`. */
function testPlans(): Plan[] {
  const text = readFileSync(join(GPT_TOKENIZER, 'data', 'TestPlans.txt'), 'utf8')
  const plans: Plan[] = []
  for (const block of text.split('\n\n')) {
    const [encodingLine, sampleLine, encodedLine] = block.split('\n')
    if (!encodingLine || !sampleLine || !encodedLine) continue
    const value = (line: string, key: string) => {
      expect(line.startsWith(`${key}: `), line).toBe(true)
      return line.slice(key.length + 2)
    }
    plans.push({
      encoding: value(encodingLine, 'EncodingName'),
      sample: value(sampleLine, 'Sample'),
      encoded: JSON.parse(value(encodedLine, 'Encoded')),
    })
  }
  return plans
}

/** The source of gpt-tokenizer's GptEncoding.test.ts, whose tables are read from it. */
const testSource = readFileSync(join(GPT_TOKENIZER, 'src', 'GptEncoding.test.ts'), 'utf8')

/**
 * The value of the JS expression the source assigns between `start` and `end` (the test file's
 * data literals, TypeScript's `satisfies …` and `as const` removed), with `EndOfText` in scope.
 */
function sourceTable<T>(start: string, end: string, name: string): T {
  const from = testSource.indexOf(start)
  const to = testSource.indexOf(end, from)
  expect([from, to].every((i) => i >= 0), `${start} … ${end} in GptEncoding.test.ts`).toBe(true)
  const code = testSource
    .slice(from, to)
    .replace(/\s+satisfies Record<EncodingName, unknown>/g, '')
    .replace(/\]\s+as const/g, ']')
    .replace(/: ChatMessage\[\]/g, '')
  return new Function('EndOfText', `${code}\nreturn ${name}`)(END_OF_TEXT) as T
}

type Results = Record<string, Record<string, number[] | string[]>>
const results = sourceTable<Results>('const sharedResults = {', 'const offsetPrompts', 'results')
const offsetPrompts = sourceTable<string[]>('const offsetPrompts = [', 'const testPlans', 'offsetPrompts')
const exampleMessages = sourceTable<{ role: string; name?: string; content: string }[]>(
  'const exampleMessages',
  'describe.each(chatModelNames)',
  'exampleMessages',
)

describe("gpt-tokenizer's TestPlans.txt", () => {
  const plans = testPlans()

  it('holds the plans it is known to hold, over every encoding it names', () => {
    expect(plans.length).toBe(313)
    for (const encoding of new Set(plans.map((p) => p.encoding))) expect(encodings()).toContain(encoding)
  })

  it.each(plans.map((p, i) => [i, p.encoding, p] as const))('plan %i (%s): encode gives its ids, decode its sample', (_, encoding, plan) => {
    const tokenizer = Tokenizer.fromEncoding(encoding)
    expect(Array.from(tokenizer.encode(plan.sample))).toEqual(plan.encoded)
    expect(tokenizer.decode(plan.encoded)).toBe(plan.sample)
  })
})

describe("GptEncoding.test.ts's vectors", () => {
  const encodingNames = Object.keys(results)

  it('reads its tables', () => {
    expect(encodingNames).toEqual(expect.arrayContaining(['cl100k_base', 'o200k_base', 'r50k_base']))
    expect(offsetPrompts.length).toBeGreaterThan(3)
    expect(exampleMessages.length).toBe(6)
  })

  describe.each(encodingNames)('%s', (name) => {
    const tokenizer = Tokenizer.fromEncoding(name)
    const result = results[name]
    const texts = Object.entries(result).filter(([key]) => key !== 'decodedHelloWorldTokens')
    const textOf = (key: string) => ({ space: ' ', tab: '\t', indivisible: 'indivisible' })[key] ?? key

    it.each(texts)('%s: its ids, and isWithinTokenLimit at and below the count', (key, ids) => {
      const text = textOf(key)
      expect(Array.from(tokenizer.encode(text))).toEqual(ids)
      expect(tokenizer.decode(ids as number[])).toBe(text)
      expect(tokenizer.isWithinTokenLimit(text, ids.length)).toBe(ids.length)
      expect(tokenizer.isWithinTokenLimit(text, ids.length - 1)).toBe(false)
      expect(tokenizer.count(text)).toBe(ids.length)
    })

    it('the empty string: no ids, within any limit', () => {
      expect(Array.from(tokenizer.encode(''))).toEqual([])
      expect(tokenizer.isWithinTokenLimit('', 0)).toBe(0)
    })

    it('decodes the emoji text token by token as its pieces', () => {
      const ids = result['hello 👋 world 🌍'] as number[]
      const decoder = tokenizer.decoder()
      const pieces = ids.map((id) => decoder.write([id])).filter((piece) => piece !== '')
      expect(pieces).toEqual(result.decodedHelloWorldTokens)
    })

    it.each(offsetPrompts)('round trip with special tokens as ids: %s', (prompt) => {
      expect(tokenizer.decode(tokenizer.encode(prompt, { allowedSpecial: 'all' }))).toBe(prompt)
    })

    it('special tokens: refused where disallowed, counted as ids where allowed', () => {
      const text = `hello ${END_OF_TEXT} world`
      expect(() => tokenizer.isWithinTokenLimit(text, 100, { disallowedSpecial: 'all' })).toThrow(END_OF_TEXT)
      expect(() => tokenizer.count(text, { disallowedSpecial: 'all' })).toThrow(END_OF_TEXT)
      const ids = tokenizer.encode(text, { allowedSpecial: 'all' })
      expect(ids).toContain(tokenizer.tokenToId(END_OF_TEXT))
      expect(tokenizer.isWithinTokenLimit(text, 100, { allowedSpecial: 'all' })).toBe(ids.length)
      expect(tokenizer.count(text, { allowedSpecial: 'all' })).toBe(ids.length)
      expect(tokenizer.decode(ids)).toBe(text)
    })
  })

  it("keeps o200k's contractions whole", () => {
    const match = /const str = "What's"\s+expect\(encode\(str\)\)\.toEqual\(\[([\d_]+)\]\)/.exec(testSource)
    expect(match).not.toBeNull()
    const id = Number(match![1].replaceAll('_', ''))
    for (const name of ['o200k_base', 'o200k_harmony']) expect(Array.from(Tokenizer.fromEncoding(name).encode("What's"))).toEqual([id])
  })

  it('gpt2 is r50k_base under another name, with 50,257 tokens', () => {
    const samples = sourceTable<string[]>('const samples = [', 'expect(gpt2.vocabularySize)', 'samples')
    const gpt2 = Tokenizer.fromEncoding('gpt2')
    const r50k = Tokenizer.fromEncoding('r50k_base')
    for (const sample of samples) expect(gpt2.encode(sample)).toEqual(r50k.encode(sample))
    expect(testSource).toContain('expect(gpt2.vocabularySize).toBe(50_257)')
    expect(gpt2.vocabSize).toBe(50_257)
  })
})

describe("encodeChat against GptEncoding.test.ts's chat snapshot", () => {
  const snapshot = readFileSync(join(GPT_TOKENIZER, 'src', '__snapshots__', 'GptEncoding.test.ts.snap'), 'utf8')
  const chats = [...snapshot.matchAll(/exports\[`(.+?) > chat functionality > encodes a chat correctly 1`\] = `\s*\[([\d,\s]*)\]\s*`;/g)].map(
    ([, model, ids]) => [model, ids.split(',').map((s) => s.trim()).filter(Boolean).map(Number)] as const,
  )
  it('reads the snapshot, and batchtok lays out a chat for each of its models', () => {
    expect(chats.length).toBeGreaterThan(100)
    const refused = chats.filter(([model]) => {
      try {
        Tokenizer.fromModel(model).encodeChat([])
        return false
      } catch {
        return true
      }
    })
    expect(refused.map(([model]) => model)).toEqual([])
  })

  it.each(chats)('%s: the example chat gives the snapshot ids', (model, ids) => {
    const tokenizer = Tokenizer.fromModel(model)
    expect(Array.from(tokenizer.encodeChat(exampleMessages))).toEqual(ids)
  })
})
