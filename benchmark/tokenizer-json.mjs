// Hugging Face tokenizer.json files for the benchmark, made on this machine from data that ships in
// installed packages: nothing is fetched.
//
// The two Hugging Face peers read only tokenizer.json, so to race them on the OpenAI encodings they
// need each encoding written as a byte-level BPE file, the form the Hub carries for GPT-2 and GPT-4o.
// The ranks come from the `tiktoken` package's encoder files. A rank table has no merge list, so
// each token's merge is recovered by replaying BPE on its bytes with only lower-ranked tokens
// allowed: the two parts left at the end are the pair whose merge makes the token. Whether the
// result encodes exactly as tiktoken does is not assumed here: the benchmark checks every peer's ids
// against batchtok's before timing it.

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { packageVersion } from './machine.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const CACHE_DIR = path.join(ROOT, '.cache', 'bench')

/** The BERT WordPiece tokenizer.json from the test fixtures. */
export const BERT_FIXTURE = path.join(ROOT, '__test__', 'fixtures', 'tokenizers', 'bert.json')

/**
 * The BERT fixture with its `truncation` (128 tokens) and `padding` (fixed 128) switched off.
 *
 * As shipped, the three contenders that read it would do three different jobs: batchtok truncates
 * but never pads, the `tokenizers` binding truncates and pads, and `@huggingface/tokenizers` does
 * neither. With both off they all tokenize the whole text, so their ids can be compared and tokens/s
 * counts real work. `bench.mjs` still reports how they differ on the file as shipped.
 */
export function bertJson() {
  const json = JSON.parse(fs.readFileSync(BERT_FIXTURE, 'utf8'))
  json.truncation = null
  json.padding = null
  return JSON.stringify(json)
}

/**
 * GPT-2's reversible map from bytes to printable characters, which byte-level BPE vocabularies are
 * written in: printable Latin-1 bytes stand for themselves, the rest are moved past U+00FF in order.
 */
function byteToCharTable() {
  const table = new Array(256)
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)
  let next = 256
  for (let b = 0; b < 256; b++) table[b] = String.fromCodePoint(printable(b) ? b : next++)
  return table
}

/** The rank table of a `tiktoken` encoder file: base64 token → rank. */
export function readRanks(encoding) {
  const file = require(`tiktoken/encoders/${encoding}.json`)
  const ranks = new Map()
  // Each line is a placeholder word, the rank of its first token, then consecutive tokens.
  for (const line of file.bpe_ranks.split('\n')) {
    if (!line) continue
    const words = line.split(' ')
    const first = Number(words[1])
    for (let i = 2; i < words.length; i++) if (words[i]) ranks.set(words[i], first + i - 2)
  }
  return { ranks, pattern: file.pat_str }
}

/**
 * The pair whose merge creates `bytes` (rank `rank`): BPE replayed on its bytes, merging only pairs
 * whose result ranks below `rank`, stops at exactly two parts for every token of a BPE vocabulary.
 */
function lastMerge(bytes, rank, rankOf) {
  let parts = Array.from(bytes, (b) => Buffer.from([b]))
  for (;;) {
    let best = -1
    let bestRank = rank
    for (let i = 0; i + 1 < parts.length; i++) {
      const r = rankOf(Buffer.concat([parts[i], parts[i + 1]]))
      if (r !== undefined && r < bestRank) {
        bestRank = r
        best = i
      }
    }
    if (best < 0) break
    parts.splice(best, 2, Buffer.concat([parts[best], parts[best + 1]]))
  }
  if (parts.length !== 2) throw new Error(`token of rank ${rank} does not split into one merge`)
  return parts
}

function buildOpenAiJson(encoding) {
  const { ranks, pattern } = readRanks(encoding)
  const byteChar = byteToCharTable()
  const toChars = (bytes) => Array.from(bytes, (b) => byteChar[b]).join('')
  const rankOf = (bytes) => ranks.get(bytes.toString('base64'))

  const vocab = {}
  const merges = []
  const byRank = [...ranks].sort((a, b) => a[1] - b[1])
  for (const [b64, rank] of byRank) {
    const bytes = Buffer.from(b64, 'base64')
    vocab[toChars(bytes)] = rank
    if (bytes.length > 1) merges.push(lastMerge(bytes, rank, rankOf).map(toChars).join(' '))
  }
  // Special tokens are left out on purpose: batchtok, like tiktoken's `encode_ordinary`, reads
  // `<|endoftext|>` in a text as ordinary text by default, and added tokens would make the Hugging
  // Face peers match it as one special token instead.
  return JSON.stringify({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      // tiktoken takes a piece that is itself a token as that token before trying any merge.
      ignore_merges: true,
      vocab,
      merges,
    },
  })
}

function jsonFile(encoding) {
  if (encoding === 'bert') return path.join(CACHE_DIR, 'bert.no-truncation.tokenizer.json')
  return path.join(CACHE_DIR, `${encoding}.tiktoken-${packageVersion('tiktoken')}.tokenizer.json`)
}

/**
 * Writes the tokenizer.json file of `encoding` ('bert' or an OpenAI encoding) under
 * `.cache/bench/`. An OpenAI file is built once and kept (o200k_base takes a few seconds); the BERT
 * one is rewritten each time, so it always follows the fixture.
 */
export function prepareTokenizerJson(encoding) {
  const file = jsonFile(encoding)
  if (encoding !== 'bert' && fs.existsSync(file)) return file
  const text = encoding === 'bert' ? bertJson() : buildOpenAiJson(encoding)
  fs.mkdirSync(CACHE_DIR, { recursive: true })
  fs.writeFileSync(`${file}.tmp`, text)
  fs.renameSync(`${file}.tmp`, file)
  return file
}

/**
 * The tokenizer.json file of `encoding`, which `prepareTokenizerJson` must have written: loading it
 * is part of what a probe times, so it is never built here.
 */
export function tokenizerJsonPath(encoding) {
  const file = jsonFile(encoding)
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: call prepareTokenizerJson('${encoding}') first`)
  return file
}
