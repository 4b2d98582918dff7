// Tokens added to a Hugging Face tokenizer, checked against Python tokenizers' add_tokens and
// add_special_tokens on the fixture files (added-tokens.json): which tokens are new, their ids,
// where they match, and how they decode.
import { describe, expect, it } from 'vitest'

import { batchtok, fixture, hfTokenizer } from './helpers'

const { Tokenizer } = batchtok

type AddedTokensCase = {
  file: string
  steps: ('plain' | 'special')[]
  vocabSize: number
  ids: Record<string, number | null>
  addedTokens: { content: string; id: number; special: boolean }[]
  texts: { text: string; ids: number[]; decoded: string; decodedSkipping: string }[]
}
/** An AddedToken's arguments as Python takes them. */
type PythonAddedToken = { content: string; single_word?: boolean; lstrip?: boolean; rstrip?: boolean; normalized?: boolean }
type AddedTokensFixture = {
  plain: string[]
  special: string[]
  cases: AddedTokensCase[]
  withOptions: {
    plain: PythonAddedToken[]
    special: PythonAddedToken[]
    cases: Omit<AddedTokensCase, 'steps' | 'ids'>[]
  }
  specialGivenAsPlain: { file: string; token: string; text: string; ids: number[]; decoded: string; decodedSkipping: string }[]
}

const added = fixture<AddedTokensFixture>('added-tokens.json')

/** Python's ids and decoded texts, whichever engine encodes: before and after the release candidate is built. */
async function expectTexts(tokenizer: InstanceType<typeof Tokenizer>, texts: AddedTokensCase['texts']) {
  for (const ready of [false, true]) {
    if (ready) await tokenizer.whenReady()
    for (const t of texts) {
      expect(Array.from(tokenizer.encode(t.text)), t.text).toEqual(t.ids)
      expect(tokenizer.decode(t.ids), t.text).toBe(t.decoded)
      expect(tokenizer.decode(t.ids, { skipSpecialTokens: true }), t.text).toBe(t.decodedSkipping)
    }
    expect((await tokenizer.encodeBatch(texts.map((t) => t.text))).toArrays()).toEqual(texts.map((t) => t.ids))
  }
}

describe('withAddedTokens', () => {
  it.each(added.cases.map((c) => [c.file, c.steps.join(' then '), c] as const))('%s after %s: as Python tokenizers', async (file, _steps, c) => {
    const original = hfTokenizer(file)
    let tokenizer = original
    for (const step of c.steps) {
      tokenizer = step === 'plain' ? tokenizer.withAddedTokens(added.plain) : tokenizer.withAddedTokens(added.special, { special: true })
    }
    expect(tokenizer.vocabSize).toBe(c.vocabSize)
    expect(tokenizer.addedTokens).toEqual(c.addedTokens)
    for (const [token, id] of Object.entries(c.ids)) expect(tokenizer.tokenToId(token), token).toBe(id)
    await expectTexts(tokenizer, c.texts)
    // The tokenizer it was made from is left as it was.
    expect(original.tokenToId('<new_token>')).toBeNull()
    expect(original.vocabSize).toBeLessThan(c.vocabSize)
  })

  /** Python's AddedToken arguments as withAddedTokens takes them. */
  const asOptions = ({ single_word, ...rest }: PythonAddedToken) => ({ ...rest, ...(single_word === undefined ? {} : { singleWord: single_word }) })

  it.each(added.withOptions.cases.map((c) => [c.file, c] as const))('%s with tokens given as AddedToken objects: as Python tokenizers', async (file, c) => {
    const tokenizer = hfTokenizer(file)
      .withAddedTokens(added.withOptions.plain.map(asOptions))
      .withAddedTokens(added.withOptions.special.map(asOptions), { special: true })
    expect(tokenizer.vocabSize).toBe(c.vocabSize)
    expect(tokenizer.addedTokens).toEqual(c.addedTokens)
    await expectTexts(tokenizer, c.texts)
    // Without its options a token matches otherwise: the options reach the reference.
    const bare = hfTokenizer(file).withAddedTokens(added.withOptions.special.map((t) => t.content), { special: true })
    expect(Array.from(bare.encode('a <mask> b'))).not.toEqual(c.texts[0].ids)
  })

  it('says what is wrong with a token given as an object', () => {
    const bert = hfTokenizer('bert')
    expect(() => bert.withAddedTokens([{ content: '<x>', strip: true } as never])).toThrow(/tokens\[0\] has the key "strip"; a token is a string or an object of content, singleWord, lstrip, rstrip, normalized/)
    expect(() => bert.withAddedTokens([{ lstrip: true } as never])).toThrow(/tokens\[0\] has no content/)
    expect(() => bert.withAddedTokens(['a', { content: 'b', rstrip: 1 } as never])).toThrow(/tokens\[1\]\.rstrip is a number; expected true or false/)
    expect(() => bert.withAddedTokens([{ content: '' }])).toThrow(/tokens\[0\] is empty/)
  })

  it.each(added.specialGivenAsPlain.map((c) => [c.token, c.file, c] as const))('keeps %s of %s, given again as plain, special when decoding, as Python’s tokenizer does', async (token, file, c) => {
    const tokenizer = hfTokenizer(file).withAddedTokens([token])
    for (const ready of [false, true]) {
      if (ready) await tokenizer.whenReady()
      expect(Array.from(tokenizer.encode(c.text))).toEqual(c.ids)
      expect(tokenizer.decode(c.ids)).toBe(c.decoded)
      expect(tokenizer.decode(c.ids, { skipSpecialTokens: true })).toBe(c.decodedSkipping)
    }
    // Python's get_added_tokens_decoder calls it plain; batchtok says what decoding does.
    expect(tokenizer.addedTokens.find((added) => added.content === token)?.special).toBe(true)
  })

  it('keeps the model folder’s configuration', async () => {
    const { mkdtempSync, copyFileSync, writeFileSync, rmSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const folder = mkdtempSync(join(tmpdir(), 'batchtok-added-'))
    copyFileSync(join(__dirname, 'fixtures', 'tokenizers', 'bert.json'), join(folder, 'tokenizer.json'))
    writeFileSync(join(folder, 'tokenizer_config.json'), JSON.stringify({ model_max_length: 77, chat_template: '{{ messages }}' }))
    const tokenizer = Tokenizer.fromPretrainedSync(folder).withAddedTokens(['<x>'])
    expect(tokenizer.modelMaxLength).toBe(77)
    expect(Object.keys(tokenizer.chatTemplates)).toEqual(['default'])
    rmSync(folder, { recursive: true })
  })

  it.each([
    ['tokens that are not an array', () => hfTokenizer('bert').withAddedTokens('<x>' as never), TypeError, /^tokens is a string; expected an array of strings/],
    ['a token that is not a string', () => hfTokenizer('bert').withAddedTokens(['<x>', 5] as never), TypeError, /^tokens\[1\] is a number; expected a string/],
    ['an empty token', () => hfTokenizer('bert').withAddedTokens(['<x>', '']), TypeError, /^tokens\[1\] is empty/],
    ['an unknown option', () => hfTokenizer('bert').withAddedTokens(['<x>'], { speical: true } as never), TypeError, /options\.speical is not an option of withAddedTokens; did you mean 'special'/],
    ['an OpenAI encoding', () => Tokenizer.fromEncoding('cl100k_base').withAddedTokens(['<x>']), TypeError, /withAddedTokens applies to Hugging Face tokenizers; cl100k_base takes special tokens of its own with Tokenizer\.fromEncoding/],
  ])('refuses %s', (_what, call, kind, message) => {
    expect(call).toThrow(kind)
    expect(call).toThrow(message)
  })
})
