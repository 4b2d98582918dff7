// README's "Migrating from the tokenizers binding and transformers.js": each call of its table,
// made with the `tokenizers` napi binding (0.23, the Python reference's own crate) and with
// batchtok on the fixture tokenizer files, gives the same answer.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

import { batchtok, fixture, FIXTURES, HF_TOKENIZERS, type Texts } from './helpers'

const { Tokenizer } = batchtok
const require = createRequire(import.meta.url)
const { Tokenizer: Binding } = require('tokenizers') as typeof import('tokenizers')

const texts = fixture<Texts>('texts.json').cases.map((c) => c.text)
/** Pairs of consecutive fixture texts, as a question and its context. */
const pairs = texts.slice(0, 60).map((text, i) => [text, texts[(i + 1) % texts.length]] as [string, string])

/** A token of each file to pad with: BERT's own, GPT-2's end of text, the Unigram's unknown token. */
const PAD_TOKENS: Record<(typeof HF_TOKENIZERS)[number], string> = { bert: '[PAD]', gpt2: '<|endoftext|>', unigram: '<unk>' }

/** The binding's offsets are in characters (code points); a JS string's indices count UTF-16 units. */
function utf16Offsets(text: string, offsets: number[][]): number[] {
  const units = [0]
  for (const char of text) units.push(units[units.length - 1] + char.length)
  return offsets.flatMap(([start, end]) => [units[start], units[end]])
}

describe.each(HF_TOKENIZERS)('%s.json: the binding and batchtok', (name) => {
  const file = join(FIXTURES, 'tokenizers', `${name}.json`)
  const ours = Tokenizer.fromFile(file)
  /** The binding with the file's own padding left off: batchtok's encode never pads. */
  const binding = () => {
    const tokenizer = Binding.fromFile(file)
    tokenizer.disablePadding()
    return tokenizer
  }

  it('encode, with and without the template tokens, and many texts', async () => {
    const peer = binding()
    for (const text of texts) {
      expect(Array.from(ours.encode(text)), text).toEqual((await peer.encode(text)).getIds())
      const without = await peer.encode(text, null, { addSpecialTokens: false })
      expect(Array.from(ours.encode(text, { addSpecialTokens: false })), text).toEqual(without.getIds())
    }
    const batch = await peer.encodeBatch(texts)
    expect((await ours.encodeBatch(texts)).toArrays()).toEqual(batch.map((encoding) => encoding.getIds()))
  })

  it('a pair, its type ids, sequence ids, tokens and offsets', async () => {
    const peer = binding()
    for (const [text, pair] of pairs) {
      const expected = await peer.encode(text, pair)
      const inputs = ours.encodeForModelSync([[text, pair]], { padding: false, dtype: 'uint32', returnTokens: true, returnSequenceIds: true })
      expect(Array.from(inputs.inputIds), text).toEqual(expected.getIds())
      expect(Array.from(inputs.tokenTypeIds), text).toEqual(expected.getTypeIds())
      expect(Array.from(inputs.sequenceIds!), text).toEqual(expected.getSequenceIds().map((s) => s ?? -1))
      expect(inputs.tokens![0], text).toEqual(expected.getTokens())
    }
    for (const text of texts) {
      const expected = await peer.encode(text)
      const inputs = ours.encodeForModelSync([text], { padding: false, returnOffsets: true })
      expect(Array.from(inputs.offsets!), text).toEqual(utf16Offsets(text, expected.getOffsets()))
    }
  })

  it('padded and truncated model inputs, with a pad token of the call', async () => {
    const peer = binding()
    const padToken = PAD_TOKENS[name]
    peer.setTruncation(16)
    peer.setPadding({ padId: ours.tokenToId(padToken)!, padToken })
    const expected = await peer.encodeBatch(texts)
    const inputs = await ours.encodeForModel(texts, { padding: 'longest', padToken, truncation: true, maxLength: 16, dtype: 'uint32' })
    expect(inputs.dims).toEqual([texts.length, 16])
    expect(Array.from(inputs.inputIds)).toEqual(expected.flatMap((encoding) => encoding.getIds()))
    expect(Array.from(inputs.attentionMask)).toEqual(expected.flatMap((encoding) => encoding.getAttentionMask()))
    expect(Array.from(inputs.tokenTypeIds)).toEqual(expected.flatMap((encoding) => encoding.getTypeIds()))
  })

  it('decode, one list and many, with and without the special tokens', async () => {
    const peer = binding()
    const lists = (await ours.encodeBatch(texts)).toArrays()
    for (const [i, ids] of lists.entries()) {
      expect(ours.decode(ids), texts[i]).toBe(await peer.decode(ids, false))
      expect(ours.decode(ids, { skipSpecialTokens: true }), texts[i]).toBe(await peer.decode(ids, true))
    }
    expect(await ours.decodeBatch(lists, { skipSpecialTokens: true })).toEqual(await peer.decodeBatch(lists, true))
  })

  it("decode with cleanUpTokenizationSpaces, as transformers.js's decode with clean_up_tokenization_spaces", async () => {
    // transformers.js's tokenizer library: the file, and a tokenizer_config that asks for it.
    const { Tokenizer: TransformersJs } = await import('@huggingface/tokenizers')
    const json = JSON.parse(readFileSync(file, 'utf8'))
    const peer = new TransformersJs(json, { clean_up_tokenization_spaces: true })
    const spaced = ["Hello , world . Is it ? Yes ! I do n't know , it 's what we 're doing ' here ' .", 'a ? ! , .']
    // transformers.js refuses an empty list of ids.
    const lists = (await ours.encodeBatch([...spaced, ...texts], { addSpecialTokens: false })).toArrays().filter((ids) => ids.length > 0)
    const options = { cleanUpTokenizationSpaces: true }
    for (const ids of lists) {
      expect(ours.decode(ids, options)).toBe(peer.decode(Array.from(ids), { clean_up_tokenization_spaces: true }))
    }
    expect(ours.decode(lists[0], options)).not.toBe(ours.decode(lists[0]))
    expect(await ours.decodeBatch(lists, options)).toEqual(lists.map((ids) => ours.decode(ids, options)))
    expect(() => ours.decodeBytes(lists[0], options as never)).toThrow(/cleanUpTokenizationSpaces/)
  })

  it('added tokens, plain and special', async () => {
    const peer = binding()
    peer.addTokens(['<new_token>', 'hello world'])
    peer.addSpecialTokens(['<|im_start|>', '<|im_end|>'])
    const added = ours.withAddedTokens(['<new_token>', 'hello world']).withAddedTokens(['<|im_start|>', '<|im_end|>'], { special: true })
    expect(added.vocabSize).toBe(peer.getVocabSize(true))
    for (const text of ['<|im_start|>user hello world<|im_end|>', 'a <new_token>b HELLO WORLD', ...texts.slice(0, 40)]) {
      const ids = (await peer.encode(text)).getIds()
      expect(Array.from(added.encode(text)), text).toEqual(ids)
      expect(added.decode(ids, { skipSpecialTokens: true }), text).toBe(await peer.decode(ids, true))
    }
  })

  it('the vocabulary: its size, every token and id, both ways', () => {
    const peer = binding()
    const vocab = peer.getVocab(true)
    expect(ours.vocabSize).toBe(peer.getVocabSize(true))
    expect(ours.getVocab()).toEqual(vocab)
    for (const [token, id] of Object.entries(vocab)) {
      expect(ours.tokenToId(token), token).toBe(peer.tokenToId(token))
      expect(ours.idToToken(id), token).toBe(peer.idToToken(id))
    }
  })
})
