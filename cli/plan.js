'use strict'
// Which part of the input a run reads (`--shard i/n`), and the batches of that part in order.
//
// The inputs, in their fixed order, are laid end to end as one space of raw bytes, cut into n
// equal ranges. Shard i reads the documents that start in range i: an uncompressed text or JSONL
// file is split at the line where a range starts, a Parquet file between row groups (a group goes
// where its column chunk starts); any other file (compressed, a document per file) cannot be
// entered in the middle and goes whole to the shard where it starts.
// Every document lands in exactly one shard, and shard 0's documents, then shard 1's, and so on
// are the documents of a single run in its order, which is what `merge` relies on. Within a
// part, the lines of small whole files are joined into shared batches (`joinedBatch`), which
// keeps the documents and their order.

const { UsageError } = require('./errors')
const readers = require('./readers')

/**
 * Parses `--shard i/n`.
 * @param {string | undefined} text
 * @returns {{ index: number, count: number }}
 */
function parseShard(text) {
  if (text === undefined) return { index: 0, count: 1 }
  const match = /^(\d+)\/(\d+)$/.exec(text)
  const index = match ? Number(match[1]) : NaN
  const count = match ? Number(match[2]) : NaN
  if (!match || count < 1 || index >= count) {
    throw new UsageError(`--shard ${text} is not a shard; write i/n with 0 <= i < n, e.g. --shard 0/4 (a Slurm or Kubernetes index is 0-based)`)
  }
  return { index, count }
}

/** Whether `input` can be entered at a byte offset. */
function splittable(input, docPerFile) {
  return !docPerFile && !input.pipe && input.compression === 'none' && ['text', 'jsonl', 'parquet'].includes(input.format)
}

/**
 * The parts of the inputs that shard `index` of `count` reads: `{ input, start, end }`, raw byte
 * ranges where a document starts.
 */
function shardParts(inputs, { index, count }, docPerFile) {
  if (count === 1) return inputs.map((input) => ({ input, start: 0, end: Infinity }))
  if (inputs.some((input) => input.pipe)) throw new UsageError('--shard needs named files; stdin and pipes cannot be split')
  const total = inputs.reduce((sum, input) => sum + input.size, 0)
  // Exact integer bounds: every run of every shard computes the same cuts.
  const bound = (k) => Number((BigInt(total) * BigInt(k)) / BigInt(count))
  const from = bound(index)
  const to = bound(index + 1)
  const parts = []
  let fileStart = 0
  for (const input of inputs) {
    const fileEnd = fileStart + input.size
    if (splittable(input, docPerFile)) {
      const start = Math.max(from, fileStart)
      const end = Math.min(to, fileEnd)
      if (start < end) parts.push({ input, start: start - fileStart, end: end - fileStart })
    } else if (fileStart >= from && (fileStart < to || (index === count - 1 && fileStart === total))) {
      // (An empty file at the very end starts at `total`, which only the last shard reaches.)
      parts.push({ input, start: 0, end: Infinity })
    }
    fileStart = fileEnd
  }
  return parts
}

/**
 * The document batches of `parts`, in order.
 * @param {{ input: object, start: number, end: number }[]} parts
 * @param {{ docPerFile: boolean, field: string, batchBytes: (format: string) => number,
 *   progress: { rawBytes: number }, cutLine?: (bytes: Buffer, from: number) => number,
 *   keptLine?: (bytes: Buffer) => number }} options
 *   `batchBytes`: text per batch, by input format; `cutLine`: where a long document may be cut,
 *   `keptLine`: the start of a long line that its truncation keeps (see `readers.lineBatches`)
 */
async function* planBatches(parts, options) {
  if (options.docPerFile) {
    yield* readers.fileBatches(
      parts.map((part) => part.input),
      { ...options, batchBytes: options.batchBytes('text') },
    )
    return
  }
  /** Whole small files' batches, to be handed over as one (`joinedBatch`). */
  let held = []
  let heldBytes = 0
  const release = function* () {
    if (held.length > 0) yield joinedBatch(held)
    held = []
    heldBytes = 0
  }
  for (const { input, start, end } of parts) {
    // A long JSONL record's text is handed over in parts of a text batch (stream/long-record.js).
    const batchBytes = options.batchBytes(input.format)
    const partOptions = { ...options, start, end, batchBytes, textBatchBytes: options.batchBytes('text') }
    let batches
    if (input.format === 'parquet') batches = readers.parquetBatches(input, partOptions)
    else if (input.format === 'jsonl') batches = readers.jsonlBatches(input, partOptions)
    else batches = readers.textBatches(input, partOptions)
    if (input.pipe || start !== 0 || input.size >= batchBytes) {
      yield* release()
      yield* batches
      continue
    }
    // A small file: held while it is one batch (of lines that end with a line's end, which the
    // next file's lines can follow). A read error comes after the files held before it.
    let first
    let second
    try {
      first = await batches.next()
      second = first.done ? first : await batches.next()
    } catch (error) {
      yield* release()
      throw error
    }
    if (first.done) continue
    const batch = first.value
    const joinable =
      second.done && batch.continues !== true && (batch.lines !== undefined ? batch.source instanceof readers.LineSource : batch.bytes !== undefined)
    if (!joinable) {
      yield* release()
      yield batch
      if (!second.done) yield second.value
      yield* batches
      continue
    }
    const bytes = (batch.lines ?? batch.bytes).length
    if (held.length > 0 && (heldBytes + bytes > batchBytes || held[0].format !== batch.format)) yield* release()
    held.push(batch)
    heldBytes += bytes
    if (batch.lines !== undefined && batch.lines[batch.lines.length - 1] !== readers.NEWLINE) yield* release()
  }
  yield* release()
}

/**
 * One batch of `batches`, each a whole file's: a batch costs a hand-over to an encoding thread
 * and a write, however small, which thousands of small files would pay each (5,000 JSONL files
 * of 20 KB, a batch each: 2.3 s on 2 cores, against 0.9 s for one file of their lines and 1.1-1.3
 * s joined). Batches of lines (all of one format) are joined as their lines, each but the last
 * ending with a line's end, so the lines, and the documents, are those of the batches one after
 * another; Parquet's batches of values as their values, their source naming every file as
 * `--doc-per-file`'s batches do.
 */
function joinedBatch(batches) {
  if (batches.length === 1) return batches[0]
  const [first] = batches
  if (first.lines === undefined) {
    const bytes = Buffer.concat(batches.map((batch) => batch.bytes))
    const offsets = new Uint32Array(batches.reduce((sum, batch) => sum + batch.offsets.length - 1, 0) + 1)
    let at = 0
    for (const batch of batches) {
      const base = offsets[at]
      for (let i = 1; i < batch.offsets.length; i++) offsets[at + i] = base + batch.offsets[i]
      at += batch.offsets.length - 1
    }
    return { bytes, offsets, source: { ...first.source, files: batches.map((batch) => batch.source.file) } }
  }
  const { format, field } = first
  const lines = Buffer.concat(batches.map((batch) => batch.lines))
  const source = new readers.JoinedLineSource(batches)
  return format === 'jsonl' ? { lines, source, format, field } : { lines, source, format }
}

/** The raw bytes `parts` span, for the progress bar's total. */
function partBytes(parts) {
  return parts.reduce((sum, { input, start, end }) => sum + Math.min(end, input.size) - start, 0)
}

/** About how many bytes of text a byte of a compressed file holds, on the low side: the four
 * corpora of scripts/corpus.js compress 2.7 to 6.4 times under gzip and zstd. */
const COMPRESSION_RATIO = 3

/**
 * About how much text `parts` hold, for whether a run waits for the tokenizer's fastest engine:
 * a plain file's bytes, a compressed file's `COMPRESSION_RATIO` times over, and stdin or a pipe,
 * whose size is unknown, as unbounded (what is piped in is most often a corpus; the wait costs a
 * short input at most the build's time).
 */
function expectedTextBytes(parts) {
  return parts.reduce((sum, { input, start, end }) => {
    if (input.pipe) return Infinity
    const bytes = Math.min(end, input.size) - start
    return sum + (input.compression === 'none' ? bytes : COMPRESSION_RATIO * bytes)
  }, 0)
}

module.exports = { parseShard, shardParts, planBatches, partBytes, expectedTextBytes }
