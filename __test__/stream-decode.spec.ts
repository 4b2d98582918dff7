// Decoding that never breaks a character: decodeBytes gives tiktoken's exact bytes, and the
// streaming decoder's pieces, however the ids are cut, join to `decode` of all the ids and carry
// no U+FFFD that `decode` does not. Ids come from the references (tiktoken, Python tokenizers).
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

import { batchtok, fixture, hfTokenizer, HF_TOKENIZERS, OPENAI_ENCODINGS, type HfFixture, type OpenAiFixture, type Texts } from './helpers'

const require = createRequire(import.meta.url)
const { Tokenizer } = batchtok
type Tokenizer = InstanceType<typeof Tokenizer>

const openai = fixture<OpenAiFixture>('openai.json')
const hf = fixture<HfFixture>('hf.json')
const texts = fixture<Texts>('texts.json').cases.map((c) => c.text)

function ordinaryIds(encoding: string): number[][] {
  const entry = openai.encodings[encoding]
  return entry.ordinary ?? openai.encodings[entry.ordinaryAs!].ordinary!
}

/** The seeded generator the reliability runs use (mulberry32), so a failure names a cut that can be replayed. */
const random = (require('../scripts/reliability.js') as { prng(seed: number): () => number }).prng

/** Every split point of `n` ids when there are few, else `sample` of them drawn with `next`. */
function splitPoints(n: number, sample: number, next: () => number): number[] {
  if (n + 1 <= sample) return Array.from({ length: n + 1 }, (_, i) => i)
  const points = new Set([0, n])
  while (points.size < sample) points.add(Math.floor(next() * (n + 1)))
  return [...points].sort((a, b) => a - b)
}

/** The decoder's pieces for `ids` written in runs that end at `cuts` (ascending), then `end()`. */
function streamed(tokenizer: Tokenizer, ids: number[], cuts: number[], typed = false): string[] {
  const decoder = tokenizer.decoder()
  const pieces: string[] = []
  let from = 0
  for (const cut of [...cuts, ids.length]) {
    const run = ids.slice(from, cut)
    pieces.push(decoder.write(typed ? Uint32Array.from(run) : run))
    from = cut
  }
  pieces.push(decoder.end())
  return pieces
}

const families: [string, () => Tokenizer, number[][]][] = [
  ...OPENAI_ENCODINGS.map((e): [string, () => Tokenizer, number[][]] => [e, () => Tokenizer.fromEncoding(e), ordinaryIds(e)]),
  ...HF_TOKENIZERS.map((n): [string, () => Tokenizer, number[][]] => [`${n} tokenizer.json`, () => hfTokenizer(n), hf.tokenizers[n].withSpecial]),
]

describe('decodeBytes', () => {
  it.each(OPENAI_ENCODINGS)("%s: the bytes of tiktoken's ids are the text's UTF-8", (encoding) => {
    const tokenizer = Tokenizer.fromEncoding(encoding)
    const ids = ordinaryIds(encoding)
    const wrong = texts.filter((text, i) => {
      const bytes = tokenizer.decodeBytes(ids[i])
      return !(bytes instanceof Uint8Array) || !Buffer.from(bytes).equals(Buffer.from(text))
    })
    expect(wrong).toEqual([])
  })

  it.each(OPENAI_ENCODINGS)('%s: ids cut inside a character give that character\'s first bytes, as each id\'s bytes joined', (encoding) => {
    const tokenizer = Tokenizer.fromEncoding(encoding)
    const ids = ordinaryIds(encoding)
    const next = random(0xb17e5)
    const wrong: unknown[] = []
    let insideCharacter = 0
    texts.forEach((text, i) => {
      const utf8 = Buffer.from(text)
      const each = ids[i].map((id) => Buffer.from(tokenizer.decodeBytes([id])))
      for (const k of splitPoints(ids[i].length, 64, next)) {
        const bytes = Buffer.from(tokenizer.decodeBytes(ids[i].slice(0, k)))
        const joined = Buffer.concat(each.slice(0, k))
        if (!bytes.equals(joined) || !bytes.equals(utf8.subarray(0, bytes.length))) wrong.push([i, k])
        if (bytes.length < utf8.length && (utf8[bytes.length] & 0xc0) === 0x80) insideCharacter++
      }
    })
    expect(wrong).toEqual([])
    expect(insideCharacter).toBeGreaterThan(50)
  })

  it.each(HF_TOKENIZERS)("%s tokenizer.json: the bytes of Python tokenizers' ids are the UTF-8 of decode", (name) => {
    const tokenizer = hfTokenizer(name)
    const { withSpecial } = hf.tokenizers[name]
    const wrong = withSpecial.filter((ids) => {
      const text = tokenizer.decode(ids)
      return !text.includes('\uFFFD') && !Buffer.from(tokenizer.decodeBytes(ids)).equals(Buffer.from(text))
    })
    expect(wrong).toEqual([])
  })

  it("GPT-2 tokenizer.json: ids cut inside a character give that character's first bytes", () => {
    const tokenizer = hfTokenizer('gpt2')
    const ids = hf.tokenizers.gpt2.withoutSpecial
    let insideCharacter = 0
    texts.forEach((text, i) => {
      if (text.includes('<|endoftext|>')) return
      const utf8 = Buffer.from(text)
      const each = ids[i].map((id) => Buffer.from(tokenizer.decodeBytes([id])))
      for (let k = 0; k <= Math.min(ids[i].length, 40); k++) {
        const bytes = Buffer.from(tokenizer.decodeBytes(ids[i].slice(0, k)))
        expect([i, k, bytes.equals(Buffer.concat(each.slice(0, k))), bytes.equals(utf8.subarray(0, bytes.length))]).toEqual([i, k, true, true])
        if (bytes.length < utf8.length && (utf8[bytes.length] & 0xc0) === 0x80) insideCharacter++
      }
    })
    expect(insideCharacter).toBeGreaterThan(50)
  })
})

describe('the streaming decoder', () => {
  it.each(families)('%s: one id at a time, the pieces join to decode and hold no U+FFFD that decode does not', (_, make, idLists) => {
    const tokenizer = make()
    const wrong: unknown[] = []
    idLists.forEach((ids, i) => {
      const whole = tokenizer.decode(ids)
      const pieces = streamed(tokenizer, ids, ids.map((_, k) => k).slice(1))
      if (pieces.join('') !== whole) wrong.push([i, 'joined', pieces.join(''), whole])
      if (!whole.includes('\uFFFD') && pieces.some((p) => p.includes('\uFFFD'))) wrong.push([i, 'U+FFFD', pieces])
    })
    expect(wrong).toEqual([])
  })

  it.each(families)('%s: cut in two at every split point (a seeded sample of them for long texts)', (_, make, idLists) => {
    const tokenizer = make()
    const next = random(0x5711)
    const wrong: unknown[] = []
    idLists.forEach((ids, i) => {
      const whole = tokenizer.decode(ids)
      for (const cut of splitPoints(ids.length, 40, next)) {
        const pieces = streamed(tokenizer, ids, [cut], cut % 2 === 1)
        if (pieces.join('') !== whole) wrong.push([i, cut, 'joined'])
        if (!whole.includes('\uFFFD') && pieces.some((p) => p.includes('\uFFFD'))) wrong.push([i, cut, 'U+FFFD', pieces])
      }
    })
    expect(wrong).toEqual([])
  })

  it.each(families)('%s: cut at random places into runs of 1 to 6 ids', (_, make, idLists) => {
    const tokenizer = make()
    const next = random(0xc0ffee)
    const wrong: unknown[] = []
    idLists.forEach((ids, i) => {
      const whole = tokenizer.decode(ids)
      for (let round = 0; round < 3; round++) {
        const cuts: number[] = []
        for (let at = 1 + Math.floor(next() * 6); at < ids.length; at += 1 + Math.floor(next() * 6)) cuts.push(at)
        const pieces = streamed(tokenizer, ids, cuts, round === 1)
        if (pieces.join('') !== whole) wrong.push([i, cuts, 'joined'])
        if (!whole.includes('\uFFFD') && pieces.some((p) => p.includes('\uFFFD'))) wrong.push([i, cuts, 'U+FFFD', pieces])
      }
    })
    expect(wrong).toEqual([])
  })

  it('settles each whole character as soon as its last id arrives, and skips special tokens when asked', () => {
    const tokenizer = Tokenizer.fromEncoding('cl100k_base')
    const ids = Array.from(tokenizer.encode('Ł'))
    expect(ids.length).toBe(2)
    const decoder = tokenizer.decoder()
    const first = decoder.write([ids[0]])
    expect(first).toBe('')
    expect(first + decoder.write([ids[1]]) + decoder.end()).toBe('Ł')
    const special = Array.from(tokenizer.encode('a<|endoftext|>b', { allowedSpecial: 'all' }))
    const skipping = tokenizer.decoder({ skipSpecialTokens: true })
    expect(special.map((id) => skipping.write([id])).join('') + skipping.end()).toBe(tokenizer.decode(special, { skipSpecialTokens: true }))
  })

  it('end() twice, and write() after end(), throw an Error', () => {
    const decoder = Tokenizer.fromEncoding('o200k_base').decoder()
    decoder.write([24912])
    expect(decoder.end()).toBeTypeOf('string')
    expect(() => decoder.end()).toThrow(Error)
    expect(() => decoder.end()).toThrow(/end\(\)/)
    expect(() => decoder.write([24912])).toThrow(/end\(\)/)
  })

  it('an id outside the vocabulary throws a RangeError and leaves the decoder as it was', () => {
    const tokenizer = Tokenizer.fromEncoding('cl100k_base')
    const ids = Array.from(tokenizer.encode('Ł and 😀'))
    const decoder = tokenizer.decoder()
    let text = decoder.write([ids[0]])
    expect(() => decoder.write([999_999_999])).toThrow(RangeError)
    for (const id of ids.slice(1)) text += decoder.write([id])
    expect(text + decoder.end()).toBe('Ł and 😀')
  })
})

describe('decodeStream of batchtok/model/gpt-4o', () => {
  const gpt4o = require('batchtok/model/gpt-4o') as import('../entry/ready').ReadyFunctions
  const ids = ordinaryIds('o200k_base')
  const sample = [0, 5, 25, 60, 150, 170, 200, 210, 230, 270].map((i) => [i, ids[i]] as const)

  async function* single(list: readonly number[]) {
    for (const id of list) yield id
  }
  async function* runs(list: readonly number[], size: number) {
    for (let at = 0; at < list.length; at += size) yield list.slice(at, at + size)
  }
  async function* typedRuns(list: readonly number[], size: number) {
    for (let at = 0; at < list.length; at += size) yield Uint32Array.from(list.slice(at, at + size))
  }
  async function collect(stream: AsyncIterable<string>): Promise<string[]> {
    const pieces: string[] = []
    for await (const piece of stream) pieces.push(piece)
    return pieces
  }

  it.each(sample)('text %i: over single ids, id arrays and Uint32Arrays, the pieces join to decode', async (_, list) => {
    const whole = gpt4o.decode(list)
    for (const source of [single(list), runs(list, 3), typedRuns(list, 5), [list]]) {
      const pieces = await collect(gpt4o.decodeStream(source))
      expect(pieces.join('')).toBe(whole)
      expect(pieces.every((p) => p !== '')).toBe(true)
      if (!whole.includes('\uFFFD')) expect(pieces.some((p) => p.includes('\uFFFD'))).toBe(false)
    }
  })
})
