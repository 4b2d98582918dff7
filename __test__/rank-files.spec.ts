// Encodings read from rank files in tiktoken's format, checked against Python tiktoken's
// Encoding(name, pat_str, mergeable_ranks, special_tokens) on the same files (rank-files.json):
// each file is written here from an embedded encoding's token bytes, and its sha256 checked
// against the one the fixture script wrote, before it is read.
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'

import { Tiktoken as JsTiktoken } from 'js-tiktoken/lite'

import { describe, expect, it } from 'vitest'

import { batchtok, digest, fixture, rankFileOf, type Digest, type Texts } from './helpers'

const { Tokenizer } = batchtok
const require = createRequire(import.meta.url)

type RankFileCase = {
  name: string
  ranks: string
  below: number | null
  drop: [number, number] | null
  emptyTokenAt: number | null
  emptyToken?: { id: number; decoded: string; bytes: number[] }
  pattern: string
  specialTokens: Record<string, number>
  contentsSha256: string
  nVocab: number
  ordinary: Digest
  allowedAll: Digest
  samples: { text: string; ordinary: number[]; allowedAll: number[]; decoded: string }[]
}
type RankFilesFixture = { samples: string[]; cases: RankFileCase[] }

const rankFiles = fixture<RankFilesFixture>('rank-files.json')
const texts = [...fixture<Texts>('texts.json').cases.map((c) => c.text), ...rankFiles.samples]

/**
 * The rank file of `c`: its encoding's ordinary tokens below `below`, but those in `drop`, then its
 * empty token (base64 `=`) where it has one.
 */
const rankFile = (c: RankFileCase) =>
  rankFileOf(c.ranks, (rank) => (c.below === null || rank < c.below) && (c.drop === null || rank < c.drop[0] || rank >= c.drop[1])) +
  (c.emptyTokenAt === null ? '' : `= ${c.emptyTokenAt}\n`)

describe('Tokenizer.fromTiktoken', () => {
  it.each(rankFiles.cases.map((c) => [c.name, c] as const))('%s: ids, decode and vocabulary as tiktoken', async (_name, c) => {
    const contents = rankFile(c)
    expect(createHash('sha256').update(contents).digest('hex'), 'the rank file the fixture was made from').toBe(c.contentsSha256)
    const options = { pattern: c.pattern, specialTokens: c.specialTokens, name: c.name }
    const tokenizer = Tokenizer.fromTiktoken(contents, options)
    expect(tokenizer.name).toBe(c.name)
    expect(tokenizer.idLimit).toBe(c.nVocab)
    for (const sample of c.samples) {
      expect(Array.from(tokenizer.encode(sample.text)), sample.text).toEqual(sample.ordinary)
      expect(Array.from(tokenizer.encode(sample.text, { allowedSpecial: 'all' })), sample.text).toEqual(sample.allowedAll)
      expect(tokenizer.decode(sample.ordinary)).toBe(sample.decoded)
    }
    for (const [text, id] of Object.entries(c.specialTokens)) {
      expect(tokenizer.tokenToId(text)).toBe(id)
      expect(tokenizer.decode([id])).toBe(text)
    }
    if (c.emptyToken !== undefined) {
      // tiktoken's encode_single_token(b""), decode and decode_single_token_bytes.
      expect(tokenizer.tokenToId('')).toBe(c.emptyToken.id)
      expect(tokenizer.decode([0, c.emptyToken.id, 1])).toBe(c.emptyToken.decoded)
      expect(Array.from(tokenizer.tokenBytes(c.emptyToken.id) ?? [-1])).toEqual(c.emptyToken.bytes)
      expect(tokenizer.idToToken(c.emptyToken.id)).toBe('')
      expect(tokenizer.vocabSize).toBe(c.nVocab)
    }
    // Whichever engine encodes (the first engine over the table, then the release candidate
    // built from it), the ids are tiktoken's.
    expect(digest(await tokenizer.encodeBatch(texts)), 'before the release candidate is ready').toEqual(c.ordinary)
    await tokenizer.whenReady()
    expect(digest(await tokenizer.encodeBatch(texts))).toEqual(c.ordinary)
    expect(digest(await tokenizer.encodeBatch(texts, { allowedSpecial: 'all' }))).toEqual(c.allowedAll)
    // Patterns of tiktoken's, Qwen's, Tekken's and Kimi's run on the release candidate's matcher;
    // the two cases' own patterns (single digits, letters and numbers only) on fancy-regex.
    const ownPattern = ['o200k_single_digits', 'p50k_gap_letters_and_numbers'].includes(c.name)
    expect(tokenizer.routing).toMatch(ownPattern ? /its pattern on fancy-regex, since/ : /on its own matcher for the pattern/)
    expect(tokenizer.routing.includes('Han numeral or radical')).toBe(c.name === 'o200k_kimi_pattern')
    expect(tokenizer.routing).not.toMatch(/until the release candidate is built/)
    // The file as bytes is the same encoding, made once.
    const again = Tokenizer.fromTiktoken(Buffer.from(contents), options)
    expect(digest(await again.encodeBatch(texts))).toEqual(c.ordinary)
  })

  it.each(['cl100k_base', 'o200k_base', 'p50k_base'])("reads js-tiktoken's packed ranks/%s as js-tiktoken's new Tiktoken(ranks)", async (name) => {
    const loaded = require(`js-tiktoken/ranks/${name}`)
    const ranks = (loaded.default ?? loaded) as { bpe_ranks: string; pat_str: string; special_tokens: Record<string, number> }
    const peer = new JsTiktoken(ranks)
    const tokenizer = Tokenizer.fromTiktoken(ranks.bpe_ranks, { pattern: ranks.pat_str, specialTokens: ranks.special_tokens, name: `js-${name}` })
    for (const text of rankFiles.samples) {
      expect(Array.from(tokenizer.encode(text)), text).toEqual(peer.encode(text, [], []))
      expect(Array.from(tokenizer.encode(text, { allowedSpecial: 'all' })), text).toEqual(peer.encode(text, 'all'))
    }
    // The embedded encoding's ids are tiktoken's (parity.spec.ts).
    const embedded = Tokenizer.fromEncoding(name)
    expect(digest(await tokenizer.encodeBatch(texts))).toEqual(digest(await embedded.encodeBatch(texts)))
    // js-tiktoken's pattern spells out the contractions' cases where tiktoken's folds them, so
    // `'ſ` (long s) is no contraction to it; such texts take the exact path, which runs the
    // pattern as given (the rest run on the release candidate's matcher for tiktoken's spelling).
    await tokenizer.whenReady()
    for (const text of ["it'ſ", "IT'ſ A cat'S", "we'ſ'll"]) {
      expect(Array.from(tokenizer.encode(text)), text).toEqual(peer.encode(text, [], []))
    }
  })

  const gpt2 = rankFiles.cases.find((c) => c.ranks === 'p50k_base')!
  const contents = rankFile(gpt2)
  const pattern = gpt2.pattern

  it("serves every encoding method from the file's ranks, and refuses the chat methods", async () => {
    const c = rankFiles.cases[0]
    const tokenizer = Tokenizer.fromTiktoken(rankFile(c), { pattern: c.pattern, specialTokens: c.specialTokens, name: c.name })
    const sample = c.samples[0]
    const ids = Uint32Array.from(sample.ordinary)
    expect(tokenizer.count(sample.text)).toBe(ids.length)
    expect(await tokenizer.countBatch([sample.text, ''])).toEqual(Uint32Array.of(ids.length, 0))
    expect(tokenizer.isWithinTokenLimit(sample.text, ids.length)).toBe(ids.length)
    expect(tokenizer.isWithinTokenLimit(sample.text, ids.length - 1)).toBe(false)
    expect(tokenizer.encode(tokenizer.truncate(sample.text, 3))).toEqual(ids.subarray(0, 3))
    expect(Buffer.from(tokenizer.decodeBytes(ids)).toString()).toBe(sample.decoded)
    const stream = tokenizer.decoder()
    expect(Array.from(ids, (id) => stream.write([id])).join('') + stream.end()).toBe(sample.decoded)
    expect(await tokenizer.decodeBatch([ids])).toEqual([sample.decoded])
    const lines = await tokenizer.encodeLines(Buffer.from(`${sample.text}\n${sample.text}\n`), { format: 'lines' })
    expect(lines.ids).toEqual(Uint32Array.from([...ids, ...ids]))
    expect(tokenizer.vocabSize).toBe((c.below ?? 0) + Object.keys(c.specialTokens).length)
    expect(tokenizer.getVocab()['Hello']).toBe(tokenizer.tokenToId('Hello'))
    expect(tokenizer.addedTokens.map((token) => token.content)).toEqual(Object.keys(c.specialTokens))
    expect(() => tokenizer.encode('<|endoftext|>', { disallowedSpecial: 'all' })).toThrow(/disallowed special token/)
    expect(() => tokenizer.encodeChat([{ role: 'user', content: 'hi' }], { model: 'gpt-4' })).toThrow(/this tokenizer is cl100k_first_30000/)
  })

  it('drops the text its pattern does not match, as tiktoken does', () => {
    const tokenizer = Tokenizer.fromTiktoken(contents, { pattern })
    expect(tokenizer.decode(tokenizer.encode('abc, 123!'))).toBe('abc 123')
    expect(tokenizer.name).toBe('custom')
  })

  it.each([
    ['no options', undefined, TypeError, /needs options\.pattern/],
    ['no pattern', {}, TypeError, /needs options\.pattern/],
    ['a pattern that is not a string', { pattern: 3 }, TypeError, /options\.pattern is a number; expected a string/],
    ['a pattern that does not compile', { pattern: '(' }, TypeError, /options\.pattern is not a regex tiktoken's engine reads: Parsing error at position 1: Opening parenthesis without closing parenthesis/],
    ['an embedded encoding\'s name', { pattern, name: 'cl100k_base' }, TypeError, /a name of its own, not an embedded encoding's/],
    ['an unknown option', { pattern, ranks: 1 }, TypeError, /options\.ranks is not an option of fromTiktoken/],
    ['a special token with an ordinary token\'s id', { pattern, specialTokens: { '<|x|>': 5 } }, RangeError, /the id 5 of "<\|x\|>" is the ordinary token/],
  ])('refuses %s', (_what, options, kind, message) => {
    // @ts-expect-error: the refused options are not of the declared type
    expect(() => Tokenizer.fromTiktoken(contents, options)).toThrow(kind)
    // @ts-expect-error: as above
    expect(() => Tokenizer.fromTiktoken(contents, options)).toThrow(message)
  })

  it.each([
    ['a path', '/models/llama3/tokenizer.model', /line 1 of the rank file is "\/models\/llama3\/tokenizer\.model", not '<base64 bytes> <rank>'; is it a rank file\? Give a \.tiktoken file's contents \(fs\.readFileSync\(path\)\), not its path/],
    ['a cut line', 'IQ== 0\nIg==\n', /line 2 of the rank file is "Ig==", not '<base64 bytes> <rank>'/],
    ['bytes that are not base64', 'IQ== 0\n!!!! 1\n', /line 2 of the rank file has a token that is not base64/],
    ['a rank given twice', 'IQ== 0\nIg== 0\n', /line 2 of the rank file gives rank 0, which line 1 gives already/],
    ['a token given twice', 'IQ== 0\nIQ== 1\n', /the rank file is not a rank table: ranks 0 and 1 are the same token/],
    ['a byte with no rank', 'IQ== 0\n', /the rank file is not a rank table: byte 0x00 has no rank/],
    ['nothing', '\n\n', /the rank file has no tokens/],
  ])('names the fault of %s', (_what, ranks, message) => {
    expect(() => Tokenizer.fromTiktoken(ranks, { pattern })).toThrow(message)
  })

  it('refuses ranks that are neither a string nor bytes', () => {
    // @ts-expect-error: a number is not a rank file
    expect(() => Tokenizer.fromTiktoken(5, { pattern })).toThrow(/ranks is a number; expected the rank file's contents, a string or a Uint8Array/)
  })
})
