// The batches the benchmark times, cut from the project's corpora (scripts/corpus.js) the same way
// on every run. Quick mode takes fixed subsets and each workload says which in its description.

import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const corpus = require('../scripts/corpus.js')

/** Size of each big item of the skewed batch. */
const SKEWED_BIG_BYTES = 2 ** 20
/** The skewed batch's items: a few big ones among many ~100-byte ones. */
const SKEWED = { full: { big: 4, short: 8000 }, quick: { big: 1, short: 1000 } }
/**
 * Quick mode: the first 512 KiB of documents and of short items, and every 16th UDHR language
 * (about 0.5 MiB, every script family still present), so that the slowest peers keep the whole
 * quick run within a couple of minutes.
 */
const QUICK_BYTES = 2 ** 19
const QUICK_UDHR_STRIDE = 16

/** Fixed seed of the skewed batch's shuffle, so every run times the same order. */
const SKEWED_SEED = 0x5eed

/** The worst case of the report: one long run of a single letter, one pre-tokenizer piece. */
export const WORST_CASE_TEXT_BYTES = 100_000
export const worstCaseText = () => 'a'.repeat(WORST_CASE_TEXT_BYTES)

export const utf8Bytes = (texts) => texts.reduce((total, t) => total + Buffer.byteLength(t, 'utf8'), 0)

function firstBytes(items, limit) {
  const out = []
  let bytes = 0
  for (const item of items) {
    if (bytes >= limit) break
    out.push(item)
    bytes += Buffer.byteLength(item, 'utf8')
  }
  return out
}

/**
 * A few ~1 MiB stretches of big.txt placed at seeded positions among thousands of short items: the
 * batch where splitting by item count leaves one thread holding a huge item at the end.
 */
function skewed({ big, short }) {
  const bigItems = corpus.splitAtLines(corpus.bigTxt(), SKEWED_BIG_BYTES).slice(0, big)
  const items = corpus.bigShortItems().slice(0, short)
  const random = corpus.seededRandom(SKEWED_SEED)
  for (const item of bigItems) items.splice(Math.floor(random() * (items.length + 1)), 0, item)
  return items
}

/**
 * The workloads in table order: { key, label, description, texts, bytes }.
 * `only` limits them to the given keys (the probes need just one).
 */
export function workloads({ quick, only }) {
  const defs = [
    {
      key: 'documents',
      label: 'big.txt documents (~6.5 KB)',
      build: () => (quick ? firstBytes(corpus.bigDocuments(), QUICK_BYTES) : corpus.bigDocuments()),
      subset: 'first 512 KiB',
    },
    {
      key: 'short',
      label: 'big.txt short items (~100 B)',
      build: () => (quick ? firstBytes(corpus.bigShortItems(), QUICK_BYTES) : corpus.bigShortItems()),
      subset: 'first 512 KiB',
    },
    {
      key: 'udhr',
      label: 'UDHR, 532 languages (documents)',
      build: () => {
        const docs = corpus.udhrDocuments().map((d) => d.text)
        return quick ? docs.filter((_, i) => i % QUICK_UDHR_STRIDE === 0) : docs
      },
      subset: `every ${QUICK_UDHR_STRIDE}th language`,
    },
    {
      key: 'skewed',
      label: 'skewed: 1 MiB items among short ones',
      build: () => skewed(quick ? SKEWED.quick : SKEWED.full),
      subset: `${SKEWED.quick.big} big item and ${SKEWED.quick.short} short ones`,
    },
  ]
  return defs
    .filter((d) => !only || only.includes(d.key))
    .map((d) => {
      const texts = d.build()
      const bytes = utf8Bytes(texts)
      const description = `${texts.length} items, ${(bytes / 2 ** 20).toFixed(2)} MiB${quick ? ` (quick: ${d.subset})` : ''}`
      return { key: d.key, label: d.label, description, texts, bytes }
    })
}

/**
 * The batch of the responsiveness and memory probes: all of big.txt as documents (~6 MB), in quick
 * mode too, since the target is stated for a batch of that size.
 */
export function probeBatch() {
  const texts = corpus.bigDocuments()
  return { key: 'documents', label: 'big.txt documents (~6.5 KB)', texts, bytes: utf8Bytes(texts) }
}
