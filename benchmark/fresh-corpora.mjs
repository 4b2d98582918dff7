// The four corpora as the fresh-text benchmark cuts them, and how a child process hands back its
// result; shared by fresh.mjs, fresh-threads.mjs, fresh-child.mjs and
// (through the same JSONL files and item ranges) fresh_python.py.

import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const CORPUS_DIR = path.join(ROOT, '.cache', 'corpus')

export const CORPORA = ['prose', 'code', 'multilingual', 'chat']

/** What a child process prints before its JSON result (fresh-child.mjs, fresh_python.py). */
export const RESULT_PREFIX = 'FRESH_RESULT '

/**
 * Runs one child (fresh-child.mjs or fresh_python.py) from the checkout's root and resolves with
 * `{ ok: true, ...its result }`, or `{ ok: false, error }` naming why it gave none: its exit code
 * or its being stopped after `timeoutMs`, and the last line it wrote to stderr.
 */
export function runResultChild(command, args, env, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX))
      if (line) return resolve({ ok: true, ...JSON.parse(line.slice(RESULT_PREFIX.length)) })
      const why = signal === 'SIGKILL' ? `stopped after ${timeoutMs / 1000} s` : `exit ${code}`
      resolve({ ok: false, error: `${why}: ${(stderr.trim().split('\n').pop() ?? '').slice(0, 200)}` })
    })
  })
}

/**
 * A slice's size: a realistic request of ~100 documents of ~6.5 KB. A slice ends at the first item
 * that brings it to this many bytes or to `SLICE_ITEMS` items, so chat slices (50-300-byte items)
 * hold a few thousand items of the same total size.
 */
export const SLICE_BYTES = 650_000
export const SLICE_ITEMS = 100
const CHAT_SLICE_ITEMS = Infinity

/** The corpus whose slice 0 warms a contender up before it is timed on `corpus`. */
export const WARMUP_CORPUS = { prose: 'code', code: 'multilingual', multilingual: 'chat', chat: 'prose' }

export const jsonlPath = (name) => path.join(CORPUS_DIR, `${name}.jsonl`)

/** Writes the corpora's JSONL files if one is missing (scripts/corpus.js builds them). */
export function ensureCorpora() {
  if (CORPORA.every((name) => fs.existsSync(jsonlPath(name)))) return
  require('../scripts/corpus.js').writeCorpora()
}

const loaded = new Map()

/** Every text of a corpus, from its JSONL file. */
export function readCorpus(name) {
  if (!loaded.has(name)) {
    const lines = fs.readFileSync(jsonlPath(name), 'utf8').split('\n').filter(Boolean)
    loaded.set(name, lines.map((line) => JSON.parse(line)))
  }
  return loaded.get(name)
}

export const readCorpusItems = (name, start, end) => readCorpus(name).slice(start, end)

/**
 * The corpus cut into consecutive slices: { corpus, index, start, end, bytes }. A last piece
 * under half a slice is dropped.
 */
export function cutSlices(name) {
  const texts = readCorpus(name)
  const maxItems = name === 'chat' ? CHAT_SLICE_ITEMS : SLICE_ITEMS
  const slices = []
  let start = 0
  let bytes = 0
  for (let i = 0; i < texts.length; i++) {
    bytes += Buffer.byteLength(texts[i])
    if (bytes >= SLICE_BYTES || i + 1 - start >= maxItems) {
      slices.push({ corpus: name, index: slices.length, start, end: i + 1, bytes })
      start = i + 1
      bytes = 0
    }
  }
  if (bytes >= SLICE_BYTES / 2) slices.push({ corpus: name, index: slices.length, start, end: texts.length, bytes })
  return slices
}

/** The first items of a slice that reach `capBytes` (at least one item), for the slow peers. */
export function capSlice(slice, capBytes) {
  if (!capBytes || slice.bytes <= capBytes) return slice
  const texts = readCorpus(slice.corpus)
  let bytes = 0
  let end = slice.start
  while (end < slice.end && bytes < capBytes) bytes += Buffer.byteLength(texts[end++])
  return { ...slice, end, bytes }
}

/**
 * A text's ids as 16 hex digits of the SHA-1 of their little-endian u32 bytes; fresh_python.py
 * computes the same, so ids from any process and either language compare as strings.
 */
export function idsDigest(ids) {
  const words = ids instanceof Uint32Array ? ids : Uint32Array.from(ids)
  return crypto.createHash('sha1').update(new Uint8Array(words.buffer, words.byteOffset, words.byteLength)).digest('hex').slice(0, 16)
}
