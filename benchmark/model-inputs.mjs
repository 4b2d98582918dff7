// Model inputs for a batch: padded input ids and an attention mask (BigInt64Array, what
// onnxruntime-node's int64 tensors take) for 10,000 short texts (big.txt's items of 100 to 200
// bytes, about a chat message each) with the WordPiece fixture (bert.json), against:
//
// - batchtok's encodeBatch on the same texts (ragged ids, no padding): the speed encodeForModel
//   is held to;
// - encodeForModel with returnOffsets: what offsets cost;
// - the `tokenizers` npm binding (Hugging Face's Rust library): setPadding, encodeBatch, and each
//   Encoding's ids and mask copied into the flat arrays;
// - `@huggingface/tokenizers` (transformers.js's tokenizer code, pure JS): encode each text, then
//   pad into the flat arrays.
//
// batchtok and the binding run on 2 threads (a Scheduler of 2; RAYON_NUM_THREADS=2), the JS peer
// on the main thread. Every contender's padded ids and mask are checked equal to encodeForModel's
// before anything is timed. One tinybench `Bench`, each task one whole batch; the table gives the
// median and fastest batch and each median over encodeForModel's.
//
//   node benchmark/model-inputs.mjs [--quick]
// writes benchmark/results/model-inputs.md.

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Bench } from 'tinybench'
import { describeMachine, packageVersion } from './machine.mjs'

// Read by the binding's thread pool when it starts.
process.env.RAYON_NUM_THREADS = '2'

const require = createRequire(import.meta.url)
const HERE = path.dirname(fileURLToPath(import.meta.url))
const QUICK = process.argv.includes('--quick')
const THREADS = 2
const COUNT = 10_000
const BERT = path.join(HERE, '..', '__test__', 'fixtures', 'tokenizers', 'bert.json')

const { Tokenizer, Scheduler } = require('../index.js')
const corpus = require('../scripts/corpus.js')

/** Chat-sized: big.txt's short items of at most this many bytes (a message or two). */
const MAX_TEXT_BYTES = 200
const texts = corpus
  .bigShortItems()
  .filter((text) => Buffer.byteLength(text) <= MAX_TEXT_BYTES)
  .slice(0, COUNT)
const json = JSON.parse(fs.readFileSync(BERT, 'utf8'))
// Every contender pads to the longest text of the batch with [PAD]; the file's own padding (a fixed
// 128) and truncation are set aside so that all of them do the same work.
const PAD_ID = json.padding.pad_id
const PAD_TOKEN = json.padding.pad_token
const plain = { ...json, truncation: null, padding: null }
const padded = { ...plain, padding: { ...json.padding, strategy: 'BatchLongest' } }

const batchtok = Tokenizer.fromJSON(JSON.stringify(padded))
const scheduler = new Scheduler({ threads: THREADS })

/** Flat row-major ids and mask from one list of ids per text, padded on the right to the longest. */
function pad(lists) {
  const sequence = Math.max(...lists.map((ids) => ids.length))
  const inputIds = new BigInt64Array(lists.length * sequence).fill(BigInt(PAD_ID))
  const attentionMask = new BigInt64Array(lists.length * sequence)
  lists.forEach((ids, row) => {
    const at = row * sequence
    for (let i = 0; i < ids.length; i++) {
      inputIds[at + i] = BigInt(ids[i])
      attentionMask[at + i] = 1n
    }
  })
  return { inputIds, attentionMask, dims: [lists.length, sequence] }
}

async function contenders() {
  const { Tokenizer: Binding } = require('tokenizers')
  const binding = Binding.fromString(JSON.stringify(plain))
  binding.setPadding({ padId: PAD_ID, padToken: PAD_TOKEN })
  const { Tokenizer: JsTokenizer } = await import('@huggingface/tokenizers')
  const js = new JsTokenizer(plain, {})
  return {
    'batchtok encodeForModel': () => batchtok.encodeForModel(texts, { padding: 'longest', scheduler }),
    'batchtok encodeBatch (no padding)': () => batchtok.encodeBatch(texts, { scheduler }),
    'batchtok encodeForModel + offsets': () =>
      batchtok.encodeForModel(texts, { padding: 'longest', scheduler, returnOffsets: true }),
    'tokenizers (HF binding)': async () => {
      const encodings = await binding.encodeBatch(texts)
      const sequence = encodings[0].getIds().length
      const inputIds = new BigInt64Array(encodings.length * sequence)
      const attentionMask = new BigInt64Array(encodings.length * sequence)
      encodings.forEach((encoding, row) => {
        const ids = encoding.getIds()
        const mask = encoding.getAttentionMask()
        for (let i = 0; i < sequence; i++) {
          inputIds[row * sequence + i] = BigInt(ids[i])
          attentionMask[row * sequence + i] = BigInt(mask[i])
        }
      })
      return { inputIds, attentionMask, dims: [encodings.length, sequence] }
    },
    '@huggingface/tokenizers': async () => pad(texts.map((text) => js.encode(text).ids)),
  }
}

async function check(runs) {
  const reference = await runs['batchtok encodeForModel']()
  const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i])
  for (const [name, run] of Object.entries(runs)) {
    const got = await run()
    if (name.includes('encodeBatch')) {
      const [rows, sequence] = reference.dims
      for (let row = 0; row < rows; row++) {
        const ids = got.get(row)
        const start = row * sequence
        const want = reference.inputIds.subarray(start, start + ids.length)
        if (!same(Array.from(ids, BigInt), Array.from(want))) throw new Error(`${name}: text ${row} differs`)
      }
      continue
    }
    if (got.dims.join() !== reference.dims.join()) throw new Error(`${name}: dims ${got.dims}, expected ${reference.dims}`)
    if (!same(got.inputIds, reference.inputIds)) throw new Error(`${name}: input ids differ`)
    if (!same(got.attentionMask, reference.attentionMask)) throw new Error(`${name}: attention mask differs`)
  }
  return reference.dims
}

async function main() {
  const runs = await contenders()
  const dims = await check(runs)
  const bench = new Bench({ name: 'model inputs', time: QUICK ? 500 : 4000, iterations: QUICK ? 5 : 20, warmup: true })
  // Rotated order: each contender runs first in turn across the tasks tinybench interleaves.
  const names = Object.keys(runs)
  for (const name of names) bench.add(name, runs[name])
  await bench.run()
  const median = (task) => task.result.latency.p50
  const base = median(bench.tasks.find((t) => t.name === 'batchtok encodeForModel'))
  const machine = describeMachine()
  const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0)
  const versions = ['tokenizers', '@huggingface/tokenizers', 'tinybench'].map((n) => `${n} ${packageVersion(n)}`).join(', ')
  const lines = [
    '# Model inputs: padded ids and attention mask',
    '',
    `Machine: ${machine.cpu}, \`nproc\` ${machine.nproc}, ${machine.os}, Node ${machine.node}. Peers: ${versions}.`,
    `Command: \`node benchmark/model-inputs.mjs${QUICK ? ' --quick' : ''}\` (\`benchmark/model-inputs.mjs\` says how it measures).`,
    '',
    `${texts.length.toLocaleString('en')} texts of big.txt (items of at most ${MAX_TEXT_BYTES} bytes ; ${(bytes / 1e6).toFixed(2)} MB), bert.json (WordPiece), padded to the longest: ` +
      `dims [${dims.join(', ')}], BigInt64Array. batchtok and the binding on ${THREADS} threads, @huggingface/tokenizers on the main thread.`,
    '',
    '| contender | median batch | fastest batch | texts/s (median) | median / encodeForModel |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...bench.tasks.map((task) => {
      const ms = median(task)
      return `| ${task.name} | ${ms.toFixed(2)} ms | ${task.result.latency.min.toFixed(2)} ms | ${Math.round((COUNT / ms) * 1000).toLocaleString('en')} | ${(ms / base).toFixed(2)} |`
    }),
    '',
  ]
  const out = path.join(HERE, 'results', 'model-inputs.md')
  fs.writeFileSync(out, lines.join('\n'))
  console.log(lines.join('\n'))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
