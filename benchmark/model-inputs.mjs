// Model inputs for a batch: padded input ids and an attention mask (BigInt64Array, what
// onnxruntime-node's int64 tensors take) for 10,000 short texts (big.txt's items of 100 to 200
// bytes, about a chat message each) with two files, so that both engines' kinds show: the
// WordPiece fixture (bert.json, padded with its [PAD]) and Llama 3's byte-level BPE (llama3.json,
// which `node scripts/real-tokenizers.js` fetches; padded with <|end_of_text|>, as the fixtures
// script pads it), against:
//
// - batchtok's encodeBatch on the same texts (ragged ids, no padding): the speed encodeForModel
//   is held to;
// - encodeForModel with returnOffsets: what offsets cost;
// - the `tokenizers` npm binding (Hugging Face's Rust library): setPadding, encodeBatch, and each
//   Encoding's ids and mask copied into the flat arrays;
// - `@huggingface/tokenizers` (transformers.js's tokenizer code, pure JS): encode each text, then
//   pad into the flat arrays;
// - transformers.js itself (`@huggingface/transformers`, installed beside the repo by
//   ensureSidePeers): AutoTokenizer from a local folder holding the file and a
//   tokenizer_config.json naming the pad token, called as `tokenizer(texts, { padding: true })`,
//   which returns input_ids and attention_mask as int64 tensors.
//
// batchtok's own three (encodeForModel, encodeBatch, encodeForModel with offsets) are also timed
// alone, in a child process that loads nothing else: what a service running batchtok sees. In the
// shared process every contender's garbage is every other's (transformers.js keeps a large heap of
// objects), and encodeForModel, whose 23 MB of external arrays per batch set off V8's collections,
// pays for marking the peers' heap where encodeBatch, which allocates little, rarely does.
//
// batchtok and the binding run on 2 threads (a Scheduler of 2; RAYON_NUM_THREADS=2), the JS peers
// on the main thread. Every contender's padded ids and mask are checked equal to encodeForModel's
// before anything is timed. Each sample is one whole batch; the contenders take turns, one batch
// each per round in an order shuffled anew each round (the machine is shared, and a slow spell
// then costs every contender alike; so does the garbage the contender before leaves, the order
// changing who follows whom), for 25 rounds after 2 of warm-up. Each table gives the median and fastest batch
// and each median over encodeForModel's.
//
//   node benchmark/model-inputs.mjs [--quick]
// writes benchmark/results/model-inputs.md. (`--alone FILE` is the child's mode: batchtok's
// contenders for one file, printed as JSON.)

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describeMachine, packageVersion } from './machine.mjs'
import { TRANSFORMERS_ENTRY, ensureSidePeers, sidePeerVersion } from './fresh-contenders.mjs'

// Read by the binding's thread pool when it starts.
process.env.RAYON_NUM_THREADS = '2'

const require = createRequire(import.meta.url)
const HERE = path.dirname(fileURLToPath(import.meta.url))
/** The model folders transformers.js's AutoTokenizer loads, one per file. */
const FOLDERS = path.join(HERE, '..', '.cache', 'model-inputs')
const QUICK = process.argv.includes('--quick')
/** The child's mode: the file whose batchtok contenders it times alone. */
const ALONE = process.argv.includes('--alone') ? process.argv[process.argv.indexOf('--alone') + 1] : null
const THREADS = 2
const COUNT = 10_000

const { Tokenizer, Scheduler } = require('../index.js')
const corpus = require('../scripts/corpus.js')
const { ensureRealTokenizers } = require('../scripts/real-tokenizers.js')

/** Each file: its name, kind, path and the pad token every contender pads with. */
const FILES = [
  {
    name: 'bert.json',
    kind: 'WordPiece',
    file: path.join(HERE, '..', '__test__', 'fixtures', 'tokenizers', 'bert.json'),
    padToken: '[PAD]',
  },
  { name: 'llama3.json', kind: 'byte-level BPE', file: ensureRealTokenizers().llama3, padToken: '<|end_of_text|>' },
]

/** Chat-sized: big.txt's short items of at most this many bytes (a message or two). */
const MAX_TEXT_BYTES = 200
const texts = corpus
  .bigShortItems()
  .filter((text) => Buffer.byteLength(text) <= MAX_TEXT_BYTES)
  .slice(0, COUNT)
const scheduler = new Scheduler({ threads: THREADS })

/** The tokenizers of `spec`'s file for every contender, and the pad id. */
function load(spec) {
  const json = JSON.parse(fs.readFileSync(spec.file, 'utf8'))
  const padId = json.added_tokens.find((token) => token.content === spec.padToken)?.id ?? json.model.vocab[spec.padToken]
  // Every contender pads to the longest text of the batch with the pad token; the file's own
  // padding and truncation (bert.json's fixed 128) are set aside so that all of them do the same
  // work.
  const plain = { ...json, truncation: null, padding: null }
  const padding = { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: null, pad_id: padId, pad_type_id: 0, pad_token: spec.padToken }
  return { plain, padId, batchtok: Tokenizer.fromJSON(JSON.stringify({ ...plain, padding })) }
}

/**
 * transformers.js's tokenizer of `plain` (the file without its padding and truncation), loaded by
 * AutoTokenizer from a folder as a model's would be, its config naming the pad token.
 */
async function transformersTokenizer(spec, plain) {
  const folder = path.join(FOLDERS, path.basename(spec.name, '.json'))
  fs.mkdirSync(folder, { recursive: true })
  fs.writeFileSync(path.join(folder, 'tokenizer.json'), JSON.stringify(plain))
  const config = { tokenizer_class: 'PreTrainedTokenizerFast', pad_token: spec.padToken, padding_side: 'right', model_max_length: 1e6 }
  fs.writeFileSync(path.join(folder, 'tokenizer_config.json'), JSON.stringify(config))
  const { AutoTokenizer, env } = createRequire(path.join(TRANSFORMERS_ENTRY, 'package.json'))('@huggingface/transformers')
  env.allowRemoteModels = false
  return AutoTokenizer.from_pretrained(folder, { local_files_only: true })
}
/** Flat row-major ids and mask from one list of ids per text, padded with `padId` on the right to the longest. */
function pad(lists, padId) {
  const sequence = Math.max(...lists.map((ids) => ids.length))
  const inputIds = new BigInt64Array(lists.length * sequence).fill(BigInt(padId))
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

/** batchtok's contenders. */
function batchtokContenders(batchtok) {
  return {
    'batchtok encodeForModel': () => batchtok.encodeForModel(texts, { padding: 'longest', scheduler }),
    'batchtok encodeBatch (no padding)': () => batchtok.encodeBatch(texts, { scheduler }),
    'batchtok encodeForModel + offsets': () =>
      batchtok.encodeForModel(texts, { padding: 'longest', scheduler, returnOffsets: true }),
  }
}

async function contenders(spec) {
  const { plain, padId, batchtok } = load(spec)
  // Timed on the release candidate, as a server that has been up a few seconds runs it.
  await batchtok.whenReady()
  if (ALONE) return batchtokContenders(batchtok)
  const { Tokenizer: Binding } = require('tokenizers')
  const binding = Binding.fromString(JSON.stringify(plain))
  binding.setPadding({ padId, padToken: spec.padToken })
  const { Tokenizer: JsTokenizer } = await import('@huggingface/tokenizers')
  const js = new JsTokenizer(plain, {})
  const transformers = await transformersTokenizer(spec, plain)
  return {
    ...batchtokContenders(batchtok),
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
    '@huggingface/tokenizers': async () => pad(texts.map((text) => js.encode(text).ids), padId),
    'transformers.js (padding: true)': async () => {
      const { input_ids: ids, attention_mask: mask } = transformers(texts, { padding: true })
      return { inputIds: ids.data, attentionMask: mask.data, dims: ids.dims }
    },
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

/**
 * Times every contender `rounds` times, one batch each per round, in an order shuffled each round
 * (seeded, so runs repeat it), so that the machine's slow spells and the garbage of the contender
 * before fall on all of them alike. The first two rounds warm up and are not kept.
 */
async function interleaved(runs, rounds) {
  const names = Object.keys(runs)
  const samples = Object.fromEntries(names.map((name) => [name, []]))
  let seed = 0x5eed
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
  for (let round = -2; round < rounds; round++) {
    const order = [...names]
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[order[i], order[j]] = [order[j], order[i]]
    }
    for (const name of order) {
      const start = performance.now()
      await runs[name]()
      if (round >= 0) samples[name].push(performance.now() - start)
    }
  }
  return names.map((name) => {
    const sorted = samples[name].sort((x, y) => x - y)
    return { name, median: sorted[sorted.length >> 1], fastest: sorted[0] }
  })
}

/** One file's contenders, checked and timed: `{ dims, tasks }`. */
async function timed(spec) {
  const runs = await contenders(spec)
  const dims = await check(runs)
  return { dims, tasks: await interleaved(runs, QUICK ? 5 : 25) }
}

/** A table of `tasks`, each median also over encodeForModel's. */
function table(tasks) {
  const base = tasks.find((t) => t.name === 'batchtok encodeForModel').median
  return [
    '| contender | median batch | fastest batch | texts/s (median) | median / encodeForModel |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...tasks.map(({ name, median: ms, fastest }) => {
      return `| ${name} | ${ms.toFixed(2)} ms | ${fastest.toFixed(2)} ms | ${Math.round((COUNT / ms) * 1000).toLocaleString('en')} | ${(ms / base).toFixed(2)} |`
    }),
  ]
}

/** One file's tables: batchtok alone (a child process), then every contender in this one. */
async function measure(spec) {
  const args = [fileURLToPath(import.meta.url), '--alone', spec.name, ...(QUICK ? ['--quick'] : [])]
  const alone = JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' }))
  const { dims, tasks } = await timed(spec)
  return [
    `## ${spec.name} (${spec.kind})`,
    '',
    `Padded to the longest with ${spec.padToken}: dims [${dims.join(', ')}], BigInt64Array.`,
    '',
    'batchtok alone, in a process of its own:',
    '',
    ...table(alone.tasks),
    '',
    'Every contender, in one process:',
    '',
    ...table(tasks),
    '',
  ]
}

async function main() {
  if (ALONE) {
    console.log(JSON.stringify(await timed(FILES.find((spec) => spec.name === ALONE))))
    return
  }
  const machine = describeMachine()
  const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0)
  ensureSidePeers()
  const versions = [
    ...['tokenizers', '@huggingface/tokenizers'].map((n) => `${n} ${packageVersion(n)}`),
    `@huggingface/transformers ${sidePeerVersion('@huggingface/transformers')}`,
  ].join(', ')
  const loadAverage = os.loadavg().map((l) => l.toFixed(2)).join(', ')
  const tables = []
  for (const spec of FILES) tables.push(...(await measure(spec)))
  const lines = [
    '# Model inputs: padded ids and attention mask',
    '',
    `Machine: ${machine.cpu}, \`nproc\` ${machine.nproc}, ${machine.os}, Node ${machine.node}; load average ${loadAverage} (1, 5, 15 min) at the start. Peers: ${versions}.`,
    `Command: \`node benchmark/model-inputs.mjs${QUICK ? ' --quick' : ''}\` (\`benchmark/model-inputs.mjs\` says how it measures).`,
    '',
    `${texts.length.toLocaleString('en')} texts of big.txt (items of at most ${MAX_TEXT_BYTES} bytes; ${(bytes / 1e6).toFixed(2)} MB), ` +
      `padded to the longest. batchtok and the binding on ${THREADS} threads, @huggingface/tokenizers and transformers.js on the main thread.`,
    '',
    ...tables,
  ]
  const out = path.join(HERE, 'results', 'model-inputs.md')
  fs.writeFileSync(out, lines.join('\n'))
  console.log(lines.join('\n'))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
