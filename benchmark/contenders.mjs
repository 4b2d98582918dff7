// Every contender in the benchmark behind one interface, so the timing loop, the id check and the
// child-process probes treat batchtok and its peers alike.
//
// A contender is { key, library, label, threads, kind, supports(encoding), open(encoding) }.
// `open` loads the library and the encoding, as a user would, and returns a runner:
//   run(texts)            the whole job: ids (kind 'encode') or token counts (kind 'count') of
//                         every text, in the form the library hands them to JS
//   idsOf(result, i)      the ids of text i (kind 'encode')
//   countOf(result, i)    the token count of text i (kind 'count')
//   tokens(result)        tokens in the whole result
//
// Each peer is called as its own README shows, with the options that make it do batchtok's job:
// special-token text such as `<|endoftext|>` is ordinary text (tiktoken's `encode_ordinary`),
// which is batchtok's default. Everything loads from installed packages or local files.
//
// Every import is dynamic so that a probe process (probe.mjs) loads only the library it measures.

import fs from 'node:fs'
import os from 'node:os'
import { createRequire } from 'node:module'
import { tokenizerJsonPath } from './tokenizer-json.mjs'

const require = createRequire(import.meta.url)

/** Encodings in the benchmark; 'bert' is the BERT WordPiece tokenizer.json fixture. */
export const ENCODINGS = ['o200k_base', 'cl100k_base', 'r50k_base', 'bert']
export const OPENAI_ENCODINGS = ['o200k_base', 'cl100k_base', 'r50k_base']

export const ENCODING_LABELS = {
  o200k_base: 'o200k_base',
  cl100k_base: 'cl100k_base',
  r50k_base: 'gpt2 (r50k_base)',
  bert: 'BERT WordPiece (tokenizer.json)',
}

export const POLICIES = ['serial', 'rayon', 'rayon-min-len', 'chunked']

/**
 * Threads the `tokenizers` binding runs its batches on. It parallelises with rayon's global pool,
 * whose size is read from RAYON_NUM_THREADS when the pool starts; bench.mjs sets it for itself and
 * every probe before the binding loads.
 */
export const HF_BINDING_THREADS = 2

/** Thread counts batchtok is measured at: 1, 2 and every core, without repeats. */
export function threadCounts() {
  return [...new Set([1, 2, os.availableParallelism()])]
}

function sum(values) {
  let total = 0
  for (const v of values) total += v
  return total
}

// ---- batchtok -------------------------------------------------------------------------------

function openBatchtok(encoding) {
  const { Tokenizer } = require('../index.js')
  return encoding === 'bert'
    ? Tokenizer.fromFile(tokenizerJsonPath('bert'))
    : Tokenizer.fromEncoding(encoding)
}

export function batchtokContender({ policy, threads, kind }) {
  const method = kind === 'encode' ? 'encodeBatch' : 'countBatch'
  return {
    key: `batchtok/${method}/${policy}/${threads}`,
    library: 'batchtok',
    label: `batchtok ${method} ${policy}`,
    threads,
    policy,
    kind,
    supports: () => true,
    async open(encoding) {
      const { Scheduler } = require('../index.js')
      const tokenizer = openBatchtok(encoding)
      // Timed on the fastest engine, as a server that has been up a few seconds runs it.
      await tokenizer.whenReady()
      const scheduler = new Scheduler({ threads, policy })
      if (kind === 'encode') {
        return {
          run: (texts) => tokenizer.encodeBatch(texts, { scheduler }),
          idsOf: (batch, i) => batch.get(i),
          tokens: (batch) => batch.ids.length,
        }
      }
      return {
        run: (texts) => tokenizer.countBatch(texts, { scheduler }),
        countOf: (counts, i) => counts[i],
        tokens: (counts) => sum(counts),
      }
    },
  }
}

// ---- peers ----------------------------------------------------------------------------------

const arraysRunner = (encodeOne) => ({
  run: (texts) => texts.map(encodeOne),
  idsOf: (lists, i) => lists[i],
  tokens: (lists) => sum(lists.map((ids) => ids.length)),
})

const countsRunner = (countOne) => ({
  run: (texts) => texts.map(countOne),
  countOf: (counts, i) => counts[i],
  tokens: (counts) => sum(counts),
})

/** gpt-tokenizer: pure TypeScript, one module per encoding, ranks inside the package. */
function gptTokenizer(kind) {
  const modules = { o200k_base: 'o200k_base', cl100k_base: 'cl100k_base', r50k_base: 'r50k_base' }
  return {
    key: `gpt-tokenizer/${kind}`,
    library: 'gpt-tokenizer',
    label: kind === 'encode' ? 'gpt-tokenizer encode' : 'gpt-tokenizer countTokens',
    threads: 1,
    kind,
    supports: (encoding) => encoding in modules,
    async open(encoding) {
      const api = await import(`gpt-tokenizer/encoding/${modules[encoding]}`)
      // An empty disallowed set makes special-token text ordinary text instead of an error.
      const options = { disallowedSpecial: new Set() }
      return kind === 'encode'
        ? arraysRunner((text) => api.encode(text, options))
        : countsRunner((text) => api.countTokens(text, options))
    },
  }
}

/** js-tiktoken: pure JS; the "lite" entry with the one rank file needed, as its README suggests. */
function jsTiktoken() {
  const ranks = { o200k_base: 'o200k_base', cl100k_base: 'cl100k_base', r50k_base: 'r50k_base' }
  return {
    key: 'js-tiktoken/encode',
    library: 'js-tiktoken',
    label: 'js-tiktoken encode',
    threads: 1,
    kind: 'encode',
    supports: (encoding) => encoding in ranks,
    async open(encoding) {
      const { Tiktoken } = await import('js-tiktoken/lite')
      const { default: rankFile } = await import(`js-tiktoken/ranks/${ranks[encoding]}`)
      const enc = new Tiktoken(rankFile)
      // No allowed and no disallowed special tokens: ordinary text, as batchtok.
      return arraysRunner((text) => enc.encode(text, [], []))
    },
  }
}

/** tiktoken: OpenAI's Rust core compiled to WASM, encodings inside the package. */
function tiktokenWasm() {
  const names = { o200k_base: 'o200k_base', cl100k_base: 'cl100k_base', r50k_base: 'r50k_base' }
  return {
    key: 'tiktoken/encode',
    library: 'tiktoken',
    label: 'tiktoken (WASM) encode_ordinary',
    threads: 1,
    kind: 'encode',
    supports: (encoding) => encoding in names,
    async open(encoding) {
      const { get_encoding } = require('tiktoken')
      const enc = get_encoding(names[encoding])
      return arraysRunner((text) => enc.encode_ordinary(text))
    },
  }
}

/**
 * tokenizers: Hugging Face's own Rust library as a native Node binding. It reads tokenizer.json
 * only; the OpenAI encodings are given to it as the byte-level BPE files tokenizer-json.mjs makes.
 */
function hfBinding() {
  return {
    key: 'tokenizers/encodeBatch',
    library: 'tokenizers',
    label: 'tokenizers (HF binding) encodeBatch',
    threads: HF_BINDING_THREADS,
    kind: 'encode',
    supports: () => true,
    async open(encoding) {
      const { Tokenizer } = require('tokenizers')
      const tokenizer = Tokenizer.fromFile(tokenizerJsonPath(encoding))
      return {
        // The binding returns one Encoding object per text; the ids are read out of each, as a
        // caller who wants ids must.
        run: async (texts) => (await tokenizer.encodeBatch(texts)).map((encoded) => encoded.getIds()),
        idsOf: (lists, i) => lists[i],
        tokens: (lists) => sum(lists.map((ids) => ids.length)),
      }
    },
  }
}

/** @huggingface/tokenizers: Hugging Face's pure-JS tokenizers (Transformers.js), from a tokenizer.json. */
function hfJs() {
  return {
    key: '@huggingface/tokenizers/encode',
    library: '@huggingface/tokenizers',
    label: '@huggingface/tokenizers encode',
    threads: 1,
    kind: 'encode',
    supports: () => true,
    async open(encoding) {
      const { Tokenizer } = await import('@huggingface/tokenizers')
      const json = JSON.parse(fs.readFileSync(tokenizerJsonPath(encoding), 'utf8'))
      // The second argument is the model's tokenizer_config.json; these files have none, and
      // its settings only touch decoding.
      const tokenizer = new Tokenizer(json, {})
      return arraysRunner((text) => tokenizer.encode(text).ids)
    },
  }
}

/** The peers, in the order tables list them. */
export function peerContenders() {
  return [gptTokenizer('encode'), gptTokenizer('count'), jsTiktoken(), tiktokenWasm(), hfBinding(), hfJs()]
}

/** The peers' npm package names, for versions and install status. */
export const PEER_PACKAGES = ['gpt-tokenizer', 'js-tiktoken', 'tiktoken', 'tokenizers', '@huggingface/tokenizers']

/**
 * batchtok's configurations: each policy at each thread count (serial only at 1), encodeBatch
 * and countBatch. Quick mode keeps chunked and rayon.
 */
export function batchtokContenders({ quick }) {
  const policies = quick ? ['rayon', 'chunked'] : POLICIES
  const list = []
  for (const kind of ['encode', 'count']) {
    for (const threads of threadCounts()) {
      for (const policy of policies) {
        if (policy === 'serial' && threads > 1) continue
        list.push(batchtokContender({ policy, threads, kind }))
      }
    }
  }
  return list
}

/** The contender a key names (used by probe.mjs in a child process). */
export function contenderByKey(key) {
  if (key.startsWith('batchtok/')) {
    const [, method, policy, threads] = key.split('/')
    return batchtokContender({ policy, threads: Number(threads), kind: method === 'encodeBatch' ? 'encode' : 'count' })
  }
  const found = peerContenders().find((c) => c.key === key)
  if (!found) throw new Error(`no contender with key ${key}`)
  return found
}
