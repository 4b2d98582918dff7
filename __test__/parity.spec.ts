// Id-for-id parity with the reference implementations: Python tiktoken for the OpenAI encodings
// and Python tokenizers 0.23 for tokenizer.json files, through fixtures that scripts/fixtures.py
// wrote with them, and through digests of the reference ids over whole corpora.
import { describe, expect, it } from 'vitest'

import {
  HF_TOKENIZERS,
  OPENAI_ENCODINGS,
  batchtok,
  corpus,
  digest,
  fixture,
  hfTokenizer,
  type DigestFixture,
  type HfFixture,
  type OpenAiFixture,
  type Texts,
} from './helpers'

const texts = fixture<Texts>('texts.json').cases
const openai = fixture<OpenAiFixture>('openai.json')
const hf = fixture<HfFixture>('hf.json')
const digests = fixture<DigestFixture>('corpus-digests.json')

const cuts: Record<string, () => string[]> = {
  bigDocuments: corpus.bigDocuments,
  bigShortItems: corpus.bigShortItems,
  udhr: () => corpus.udhrDocuments().map((d) => d.text),
  // One text of 6 MB, which an OpenAI encoding encodes a part at a time.
  bigTxtWhole: () => [corpus.bigTxt()],
}

describe.each(OPENAI_ENCODINGS)('%s against tiktoken', (name) => {
  const tokenizer = batchtok.Tokenizer.fromEncoding(name)
  const expected = openai.encodings[name]
  const ordinary = expected.ordinary ?? openai.encodings[expected.ordinaryAs!].ordinary!

  it('encodes every fixture text as encode_ordinary does, one at a time', () => {
    texts.forEach(({ name: caseName, text }, i) => {
      expect(Array.from(tokenizer.encode(text)), caseName).toEqual(ordinary[i])
    })
  })

  it('encodes every fixture text as encode_ordinary does, as one batch', async () => {
    const batch = await tokenizer.encodeBatch(texts.map((t) => t.text))
    expect(batch.toArrays()).toEqual(ordinary)
  })

  it('turns exactly the allowed special tokens into ids', () => {
    expect(expected.special.length).toBeGreaterThan(0)
    for (const { case: i, allowedSpecial, ids } of expected.special) {
      const got = tokenizer.encode(texts[i].text, { allowedSpecial })
      expect(Array.from(got), `${texts[i].name} ${JSON.stringify(allowedSpecial)}`).toEqual(ids)
    }
  })

  it.each(Object.keys(cuts))('matches the reference digest over the corpus cut %s', async (cut) => {
    const batch = await tokenizer.encodeBatch(cuts[cut]())
    expect(digest(batch)).toEqual(digests.cuts[cut][name])
  })
})

describe.each(HF_TOKENIZERS)('%s tokenizer.json against tokenizers 0.23', (name) => {
  const tokenizer = hfTokenizer(name)
  const expected = hf.tokenizers[name]

  it('encodes every fixture text with the template tokens', async () => {
    const batch = await tokenizer.encodeBatch(texts.map((t) => t.text))
    batch.toArrays().forEach((ids, i) => expect(ids, texts[i].name).toEqual(expected.withSpecial[i]))
  })

  it('encodes every fixture text without the template tokens', async () => {
    const batch = await tokenizer.encodeBatch(
      texts.map((t) => t.text),
      { addSpecialTokens: false },
    )
    batch.toArrays().forEach((ids, i) => expect(ids, texts[i].name).toEqual(expected.withoutSpecial[i]))
  })

  it('encodes one text at a time as the batch does', () => {
    texts.slice(0, 40).forEach(({ text }, i) => {
      expect(Array.from(tokenizer.encode(text))).toEqual(expected.withSpecial[i])
    })
  })

  it.each(Object.keys(cuts))('matches the reference digest over the corpus cut %s', async (cut) => {
    const batch = await tokenizer.encodeBatch(cuts[cut]())
    expect(digest(batch)).toEqual(digests.cuts[cut][name])
  })
})
