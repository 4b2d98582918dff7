'use strict'
// Streaming encoding: documents in, token batches out, with bounded memory.
//
// Documents are gathered into batches of about `batchBytes` of text; each batch goes to the
// addon's async batch methods, which run on the scheduler's threads, so the event loop only
// gathers and hands over. One batch encodes while the next is gathered; the next is started as
// soon as it is whole, before the previous one's result is handed on, so the scheduler's threads
// never wait for the consumer. At most one batch is gathering and two are encoding or waiting
// for the consumer, whatever the input's size. A consumer that stops
// pulling (a `Transform` whose readable side is full) stops the gathering too. A stream that has
// read a few MiB waits for the tokenizer's fastest engine before its next batch (engine-wait.js).

const { Transform } = require('node:stream')

const { INCOMPLETE_BYTES, chunkPlaces, keptLineAsks, keptLineRest } = require('./cuts')
const { LongRecord } = require('./long-record')
const { templateEnds } = require('./ends')
const { documentsIn, bytesIn, checkBatch, encodeChecked, followsCut } = require('./encode-batch')
const { EngineWait } = require('./engine-wait')

/** Text per batch: large enough that the scheduler's threads finish together and the fixed cost
 * of a call is small, small enough that three batches in flight stay a few tens of MiB. */
const DEFAULT_BATCH_BYTES = 4 << 20
/** Documents per batch, whatever their size: bounds the offsets and per-document work. */
const DEFAULT_BATCH_DOCUMENTS = 1 << 16

/** The names `EncodeStreamOptions` has. */
const STREAM_OPTIONS = ['scheduler', 'signal', 'eosId', 'batchBytes', 'batchDocuments', 'encodeOptions']

/** Checks the batch sizes of `options`: whole numbers of at least 1 (or `Infinity`). */
function checkBatchSizes(options) {
  for (const name of ['batchBytes', 'batchDocuments']) {
    const value = options[name]
    if (value === undefined) continue
    if (typeof value !== 'number') throw new TypeError(`options.${name} is ${typeof value}; expected a number`)
    if (!(value >= 1 && (Number.isInteger(value) || value === Infinity))) {
      throw new RangeError(`options.${name} is ${value}; expected a whole number of at least 1`)
    }
  }
}

/**
 * Checks `options` before any work is done: a name not in `names`, or a value of the wrong type
 * or range, is an error naming it. The options of each batch call, in `encodeOptions`, are checked by
 * the call itself.
 * @returns {EncodeStreamOptions}
 */
function checkOptions(tokenizer, options, caller, names = STREAM_OPTIONS) {
  if (tokenizer === null || typeof tokenizer !== 'object' || typeof tokenizer.encodeBatch !== 'function') {
    const what = tokenizer === null ? 'null' : typeof tokenizer
    throw new TypeError(`${caller}'s tokenizer is ${what}; expected a batchtok Tokenizer (Tokenizer.fromEncoding, fromModel, fromFile…)`)
  }
  if (options === undefined) return {}
  if (options === null || typeof options !== 'object') throw new TypeError(`${caller}'s options must be an object`)
  for (const name of Object.keys(options)) {
    if (!names.includes(name)) {
      throw new TypeError(
        `options.${name} is not an option of ${caller} (options: ${names.join(', ')}); an option of each batch call goes in encodeOptions`,
      )
    }
  }
  checkBatchSizes(options)
  const { eosId, encodeOptions } = options
  if (eosId !== undefined) {
    if (typeof eosId !== 'number') throw new TypeError(`options.eosId is ${typeof eosId}; expected a token id`)
    if (!Number.isInteger(eosId) || eosId < 0 || eosId >= tokenizer.idLimit) {
      throw new RangeError(`options.eosId ${eosId} is not an id of this tokenizer (0 to ${tokenizer.idLimit - 1})`)
    }
  }
  if (encodeOptions !== undefined && (encodeOptions === null || typeof encodeOptions !== 'object')) {
    throw new TypeError('options.encodeOptions must be an object of the batch call\'s options')
  }
  return options
}

/**
 * One batch of documents, prepared for the addon: UTF-8 bytes with `documents + 1` boundaries
 * (`encodeUtf8Batch`), JS strings (`encodeBatch`), or whole lines of bytes as a file holds them,
 * a document per line or a JSONL field per record (`encodeLines`, which cuts and reads them on
 * the scheduler's threads).
 * @typedef {{ bytes: Uint8Array, offsets: Uint32Array | number[] } | { texts: string[] }
 *   | { lines: Uint8Array, format: 'lines' | 'jsonl', field?: string }} DocumentBatch
 * Any of them may say `continues: true`: its last document is the start of one whose rest starts
 * the next batch, cut where the tokenizer allows (`Tokenizer.lastSafeCut`). `restarts: true` says
 * that the document the batch before left open starts over with this batch's first (a long JSONL
 * record whose text field comes twice: stream/long-record.js). `recordOutline: true` marks a
 * batch of one JSONL line, a long record with its strings emptied, whose (empty) text ends the
 * document its text was handed over in.
 */

/**
 * The ids of one batch: document `i`'s ids are `ids.subarray(offsets[i], offsets[i + 1])`;
 * `bytes` is the documents' UTF-8 text; `lines`, for a batch of lines, how many it held;
 * `continues`, as its batch said: the last document's ids go on in the next batch's first
 * (and get no `eosId` here); `restarts`, as its batch said.
 * @typedef {{ ids: Uint32Array, offsets: Uint32Array, documents: number, bytes: number, lines?: number,
 *   continues?: true, restarts?: true }} TokenBatch
 */

/**
 * Starts encoding one batch; the promise resolves to its `TokenBatch`. A rejection carries the
 * batch's `source` (where it has one) as the error's `source`, so that an error naming a line of
 * a batch of lines (`lineIndex`) or a text of a batch (`itemIndex`) can be placed in its input.
 * @param {import('../index').Tokenizer} tokenizer
 * @param {DocumentBatch} batch
 * @param {EncodeStreamOptions} options
 */
async function encodeOne(tokenizer, batch, options) {
  const checked = checkOptions(tokenizer, options, 'encodeOne')
  checkBatch(batch)
  return encodeChecked(tokenizer, batch, checked)
}

/**
 * @typedef {object} EncodeStreamOptions
 * @property {import('../index').Scheduler} [scheduler] the scheduler that runs the batches
 * @property {AbortSignal} [signal] stops the stream: the pending batch rejects with an AbortError
 * @property {number} [eosId] an id appended after every document's ids
 * @property {number} [batchBytes] text per batch (4 MiB)
 * @property {number} [batchDocuments] documents per batch at most (65536)
 * @property {object} [encodeOptions] options for every batch call (allowedSpecial, addSpecialTokens…)
 */

/**
 * Encodes prepared batches, one encoding while the next is read: yields one `TokenBatch` per
 * input batch, in order. A batch may carry a `source` (any value), passed on to its result.
 * @param {import('../index').Tokenizer} tokenizer
 * @param {Iterable<DocumentBatch> | AsyncIterable<DocumentBatch>} batches
 * @param {EncodeStreamOptions} [options]
 * @returns {AsyncGenerator<TokenBatch>}
 */
async function* encodeBatches(tokenizer, batches, options) {
  yield* encodeCheckedBatches(tokenizer, batches, checkOptions(tokenizer, options, 'encodeBatches'))
}

/** `encodeBatches` with `options` already checked. */
async function* encodeCheckedBatches(tokenizer, batches, options) {
  const engine = new EngineWait(tokenizer)
  let pending = null
  const afterCut = followsCut()
  const iterator = Symbol.asyncIterator in batches ? batches[Symbol.asyncIterator]() : batches[Symbol.iterator]()
  try {
    while (true) {
      let read
      try {
        read = await iterator.next()
      } catch (error) {
        // A reading error comes after the batch before it (which a line's error counts on).
        if (pending) {
          const done = await pending
          pending = null
          yield done
        }
        throw error
      }
      if (read.done) break
      const batch = read.value
      checkBatch(batch)
      await engine.beforeBatch(bytesIn(batch))
      const next = encodeChecked(tokenizer, batch, options, afterCut(batch))
      // A rejection is taken where the promise is awaited; until then it must not count as
      // unhandled.
      next.catch(() => {})
      if (pending) {
        const done = await pending
        pending = next
        yield done
      } else {
        pending = next
      }
    }
    if (pending) {
      const done = await pending
      pending = null
      yield done
    }
  } finally {
    // An early return or an error leaves at most one batch running; wait for it so no work
    // outlives the generator, and let go of the input.
    if (pending) await pending.catch(() => {})
    await iterator.return?.()
  }
}

/**
 * Groups documents (strings, or Buffers / Uint8Arrays of UTF-8) into `DocumentBatch`es of about
 * `batchBytes`. Consecutive byte documents share one buffer; a change of kind ends a batch.
 * @param {Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>} documents
 * @param {{ batchBytes?: number, batchDocuments?: number }} [options]
 * @returns {AsyncGenerator<DocumentBatch>}
 */
async function* batchDocuments(documents, options = {}) {
  checkBatchSizes(options)
  const maxBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES
  const maxDocuments = options.batchDocuments ?? DEFAULT_BATCH_DOCUMENTS
  let texts = []
  let buffers = []
  let bytes = 0
  let index = 0
  const flush = () => {
    let batch = null
    const firstDocument = index - texts.length - buffers.length
    if (texts.length > 0) batch = { texts, firstDocument }
    else if (buffers.length > 0) {
      const offsets = new Uint32Array(buffers.length + 1)
      for (let i = 0; i < buffers.length; i++) offsets[i + 1] = offsets[i] + buffers[i].length
      batch = { bytes: Buffer.concat(buffers, offsets[buffers.length]), offsets, firstDocument }
    }
    texts = []
    buffers = []
    bytes = 0
    return batch
  }
  for await (const document of documents) {
    if (typeof document === 'string') {
      if (buffers.length > 0) yield flush()
      texts.push(document)
      bytes += document.length
    } else if (document instanceof Uint8Array) {
      if (texts.length > 0) yield flush()
      buffers.push(document)
      bytes += document.length
    } else {
      throw new TypeError(
        `document ${index} is ${document === null ? 'null' : typeof document}; expected a string, a Buffer or a Uint8Array of UTF-8`,
      )
    }
    index++
    if (bytes >= maxBytes || texts.length + buffers.length >= maxDocuments) yield flush()
  }
  const last = flush()
  if (last) yield last
}

/**
 * Encodes a stream of documents: yields `TokenBatch`es (ids and document boundaries) in
 * document order, with one batch encoding on the scheduler's threads while the next is
 * gathered, and at most three batches held at once (one gathering, two encoding or done).
 * @param {import('../index').Tokenizer} tokenizer
 * @param {Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>} documents
 * @param {EncodeStreamOptions} [options]
 * @returns {AsyncGenerator<TokenBatch>}
 */
function encodeStream(tokenizer, documents, options) {
  const checked = checkOptions(tokenizer, options, 'encodeStream')
  if (typeof documents === 'string') {
    throw new TypeError('documents is a string, whose characters would each be a document; pass [text] for one text')
  }
  if (documents == null || !(Symbol.iterator in Object(documents) || Symbol.asyncIterator in Object(documents))) {
    throw new TypeError('documents must be an iterable or async iterable of strings or UTF-8 Buffers')
  }
  return encodeCheckedBatches(tokenizer, batchDocuments(documents, checked), checked)
}

/** A line feed: where a batch of lines may be cut. */
const NEWLINE = 0x0a
/** The names `encodeLineStream`'s options have: the format of its lines, and every
 * `EncodeStreamOptions` name but `batchDocuments` (a batch's documents are known only once its
 * lines are read, on the scheduler's threads). */
const LINE_STREAM_OPTIONS = ['format', 'field', ...STREAM_OPTIONS.filter((name) => name !== 'batchDocuments'), 'longLines']

/**
 * Checks `batchLines`'s options; returns the batches' format, their size in bytes, where a long
 * line may be cut and what start of it a truncation keeps.
 * @returns {{ format: 'lines' | 'jsonl', field?: string, maxBytes: number, cutLine?: Function, keptLine?: Function }}
 */
function checkLineOptions(options, caller) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${caller}'s options must be an object`)
  const { format = 'lines', field, cutLine, keptLine } = options
  if (format !== 'lines' && format !== 'jsonl') {
    throw new TypeError(`options.format is ${JSON.stringify(format)}; expected 'lines' (a document per line) or 'jsonl' (a record per line)`)
  }
  if (format === 'lines' && field !== undefined) throw new TypeError("options.field is for format 'jsonl'; a document per line has no field")
  if (field !== undefined && typeof field !== 'string') throw new TypeError(`options.field is ${typeof field}; expected the name of the records' text field`)
  if (cutLine !== undefined && typeof cutLine !== 'function') {
    throw new TypeError(`options.cutLine is ${typeof cutLine}; expected a function such as (bytes, from) => tokenizer.lastSafeCut(bytes, from, { afterCut: true })`)
  }
  if (keptLine !== undefined && typeof keptLine !== 'function') {
    throw new TypeError(`options.keptLine is ${typeof keptLine}; expected a function such as (bytes) => tokenizer.keptByTruncation(bytes)`)
  }
  checkBatchSizes({ batchBytes: options.batchBytes })
  const maxBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES
  return {
    format,
    field: format === 'jsonl' ? (field ?? 'text') : undefined,
    maxBytes,
    cutLine: cutLine && ((bytes, from) => checkedLength(cutLine(bytes, from), bytes, 'cutLine', 'no place')),
    keptLine: keptLine && ((bytes) => checkedLength(keptLine(bytes), bytes, 'keptLine', 'no start')),
  }
}

/**
 * `length`, what the option `name` (`cutLine` or `keptLine`) answered about `bytes`, where it is
 * -1 (`none`) or a whole number of those bytes; a `TypeError` that says what it answered
 * otherwise, rather than batches cut at a place no byte is at.
 */
function checkedLength(length, bytes, name, none) {
  if (Number.isInteger(length) && length >= -1 && length <= bytes.length) return length
  const answered = typeof length === 'number' || typeof length === 'bigint' ? String(length) : typeof length === 'string' ? JSON.stringify(length) : typeof length
  throw new TypeError(`options.${name} returned ${answered} for ${bytes.length} bytes; expected -1 (${none}) or a whole number of bytes from 0 to ${bytes.length}`)
}

/**
 * Cuts a stream of text chunks (Buffers or Uint8Arrays of UTF-8, or strings, cut anywhere: a
 * file's or a socket's reads, a decompressor's output) into `DocumentBatch`es of whole lines of
 * at most `batchBytes` each, for `encodeLines`: a document per line (`format: 'lines'`, the
 * default), or a JSON record per line whose string `field` (default `'text'`) is the document
 * (`format: 'jsonl'`, blank lines skipped, a byte order mark starting the stream skipped). A line
 * longer than `batchBytes` makes a batch of its own, or, given `cutLine` (a tokenizer's
 * `lastSafeCut`), batches of parts of it cut where that finds a place, each but the last saying
 * `continues`, or, given `keptLine` (a tokenizer's `keptByTruncation`), the start of it that
 * finds, as a line (the rest of the line read past, only checked to be UTF-8: where it is not,
 * the start gets a byte that is not either, so that the line is refused as any such line is); a
 * JSONL record so long is read as its bytes come (`LongRecord`): parts of its text field (or the
 * start `keptLine` finds), then its outline, which ends the document. Beyond the chunks being
 * cut, only the bytes after the last batch are held: a chunk is read once the batches cut before
 * it have been taken.
 * @param {Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>} chunks
 * @param {{ format?: 'lines' | 'jsonl', field?: string, batchBytes?: number,
 *   cutLine?: (bytes: Uint8Array, from: number) => number, keptLine?: (bytes: Uint8Array) => number }} [options]
 * @returns {AsyncGenerator<DocumentBatch>}
 */
async function* batchLines(chunks, options = {}) {
  const { format, field, maxBytes, cutLine, keptLine } = checkLineOptions(options, 'batchLines')
  const batchOf = (lines) => (format === 'jsonl' ? { lines, format, field } : { lines, format })
  /** The bytes gathered: the end of the last batch's line on. */
  let parts = []
  let size = 0
  /** Whether the gathered bytes are one line, longer than a batch, whose end is still to come. */
  let unfinishedLine = false
  const places = cutLine && format === 'lines' && chunkPlaces(cutLine)
  /** When to ask for the start of a long line to keep (a record's goes to its `LongRecord`). */
  const keptAsks = keptLineAsks(format === 'lines' ? keptLine : undefined, maxBytes)
  /** The reader of the JSONL record longer than a batch being read, if one is. */
  let record = null
  /** The line whose start `keptLine` found, its rest being read past up to its end. */
  let readPast = null
  /** Puts the start of the line read past, as a line, before the bytes gathered next. */
  const endReadPast = () => {
    const line = readPast.line()
    parts = [line]
    size = line.length
    readPast = null
  }
  let first = true
  let index = 0
  for await (const chunk of chunks) {
    let bytes
    if (typeof chunk === 'string') bytes = Buffer.from(chunk, 'utf8')
    else if (chunk instanceof Uint8Array) bytes = chunk
    else throw new TypeError(`chunk ${index} is ${chunk === null ? 'null' : typeof chunk}; expected a Buffer, a Uint8Array of UTF-8 or a string`)
    index++
    if (first && bytes.length > 0) {
      first = false
      // JSON.parse refuses a byte order mark; a file written with one still holds JSON Lines.
      if (format === 'jsonl' && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3)
    }
    if (record) {
      const { batches, rest } = record.pushToLineEnd(bytes)
      yield* batches
      if (rest === null) continue
      record = null
      bytes = rest
    }
    if (readPast) {
      const lineEnd = readPast.read(bytes)
      if (lineEnd === -1) continue
      endReadPast()
      bytes = bytes.subarray(lineEnd + 1)
    }
    if (bytes.length === 0) continue
    parts.push(bytes)
    size += bytes.length
    // A long line is joined once, when its end, a place to cut it or enough bytes to ask
    // `keptLine` again come, not at every chunk.
    const joinLater =
      unfinishedLine && bytes.indexOf(NEWLINE) === -1 && !(places && places.in(bytes)) && !keptAsks.due(size)
    if (places) places.read(bytes)
    if (size < maxBytes || joinLater) continue
    const gathered = parts.length === 1 ? parts[0] : Buffer.concat(parts, size)
    let start = 0
    unfinishedLine = false
    // The consumer hands each batch to encodeLines, which copies it, before asking for the next,
    // so a view of the caller's chunk is safe to yield.
    while (gathered.length - start >= maxBytes) {
      // The last line end within a batch's size.
      const end = gathered.lastIndexOf(NEWLINE, start + maxBytes - 1)
      if (end >= start) {
        yield batchOf(gathered.subarray(start, end + 1))
        start = end + 1
        keptAsks.reset()
        continue
      }
      // The line from `start` is longer than a batch: a part of it up to the last place to cut
      // within a batch's size, else within what is gathered of it; else the line whole.
      const lineEnd = gathered.indexOf(NEWLINE, start + maxBytes)
      if (format === 'jsonl' && cutLine && lineEnd === -1) {
        // A record whose end is still to come: read from here as it comes.
        record = new LongRecord({ field, batchBytes: maxBytes, cutLine, keptLine, source: {} })
        yield* record.push(gathered.subarray(start))
        start = gathered.length
        break
      }
      const gatheredLine = gathered.subarray(start, lineEnd === -1 ? gathered.length : lineEnd)
      const cuts = format === 'lines' && cutLine
      let cut = cuts ? cutLine(gatheredLine.subarray(0, maxBytes), 0) : -1
      if (cuts && cut <= 0) cut = cutLine(gatheredLine, Math.max(0, maxBytes - INCOMPLETE_BYTES))
      const kept = cut <= 0 && lineEnd === -1 ? keptAsks.ask(gatheredLine) : -1
      if (cut > 0) {
        yield { ...batchOf(gathered.subarray(start, start + cut)), continues: true }
        start += cut
        // What is held of the line from here on is no start of it.
        keptAsks.reset(Infinity)
      } else if (kept > 0) {
        readPast = keptLineRest(gatheredLine.subarray(0, kept), gatheredLine.subarray(kept))
        start = gathered.length
        break
      } else if (lineEnd !== -1) {
        yield batchOf(gathered.subarray(start, lineEnd + 1))
        start = lineEnd + 1
        keptAsks.reset()
      } else {
        unfinishedLine = true
        break
      }
    }
    parts = start < gathered.length ? [gathered.subarray(start)] : []
    size = gathered.length - start
  }
  if (record) yield* record.end()
  if (readPast) endReadPast()
  if (size > 0) yield batchOf(parts.length === 1 ? parts[0] : Buffer.concat(parts, size))
}

/** What to do about a line of a stream that gives no document, by `encodeLines`' error code, in
 * `encodeLineStream`'s terms (its field is `options.field`). */
const LINE_ADVICE = {
  ERR_NOT_UTF8: 'convert the input to UTF-8',
  ERR_MALFORMED_JSON: 'fix or remove the line',
  ERR_MISSING_FIELD: 'name the text field with options.field',
  // A null (a record without text) or a number: the line is at fault, or the field named.
  ERR_FIELD_NOT_STRING: 'fix or remove the line, or name a string field with options.field',
}

/**
 * `error`, where it names a line of a batch (`lineIndex`) and `linesBefore` lines came before the
 * batch, as an error that names the line in the whole stream: `lineNumber`, counted from 1 as an
 * editor counts them, with the original's properties (`code`, `reason`, `lineIndex`, a disallowed
 * token's `token` and `index`) and the original as its `cause`.
 */
function placedLine(error, linesBefore) {
  if (!(error instanceof Error) || typeof error.lineIndex !== 'number') return error
  const lineNumber = linesBefore + error.lineIndex + 1
  // A long record's outline answers for the record (stream/long-record.js).
  if (typeof error.source?.reasonOf === 'function' && typeof error.reason === 'string') error.reason = error.source.reasonOf(error.reason)
  // The batch's own count of the line gives way to the stream's.
  const inBatch = `line ${error.lineIndex + 1}: `
  const advice = LINE_ADVICE[error.code]
  const rest =
    advice && typeof error.reason === 'string'
      ? `${error.reason}; ${advice}`
      : error.message.startsWith(inBatch)
        ? error.message.slice(inBatch.length)
        : error.message
  const placed = new error.constructor(`line ${lineNumber} of the stream: ${rest}`, { cause: error })
  return Object.assign(placed, { ...error, lineNumber })
}

/**
 * Encodes a stream of text chunks cut anywhere (a file's or a socket's reads, a decompressor's
 * output): lines are gathered into batches of about `batchBytes` (`batchLines`), and each batch
 * is cut into documents and encoded on the scheduler's threads (`encodeLines`), one while the
 * next is read. Yields `TokenBatch`es in order; an error about a line names it by its number in
 * the stream (`line 812 of the stream: …`, with `lineNumber`). At most three batches are held.
 * @param {import('../index').Tokenizer} tokenizer
 * @param {Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>} chunks
 * @param {EncodeStreamOptions & { format?: 'lines' | 'jsonl', field?: string }} [options]
 * @returns {AsyncGenerator<TokenBatch>}
 */
function encodeLineStream(tokenizer, chunks, options = {}) {
  if (typeof chunks === 'string' || chunks == null || !(Symbol.iterator in Object(chunks) || Symbol.asyncIterator in Object(chunks))) {
    throw new TypeError('chunks must be an iterable or async iterable of Buffers, Uint8Arrays or strings (a Readable is one)')
  }
  // Said before the unknown-name check, which would only list the names it takes.
  if (options?.batchDocuments !== undefined) {
    throw new TypeError("options.batchDocuments does not apply to encodeLineStream: a batch's documents are counted as its lines are read; size batches with batchBytes")
  }
  const checked = checkOptions(tokenizer, options, 'encodeLineStream', LINE_STREAM_OPTIONS)
  const { longLines = 'whole' } = checked
  if (longLines !== 'whole' && longLines !== 'parts') {
    throw new TypeError(`options.longLines is ${JSON.stringify(longLines)}; expected 'whole' (a line is one batch's document) or 'parts' (cut where tokenizer.lastSafeCut allows)`)
  }
  const { addSpecialTokens, truncation } = checked.encodeOptions ?? {}
  if (longLines === 'parts' && truncation !== undefined && truncation !== false) {
    throw new TypeError("options.longLines 'parts' cannot go with a truncation in encodeOptions: each part would be truncated alone")
  }
  const lineOptions = { format: checked.format, field: checked.field, batchBytes: checked.batchBytes }
  // Where the template puts tokens around each text and the file is cut only without them, the
  // lines are encoded without them and the stream puts them around each line itself.
  const template = longLines === 'parts' && addSpecialTokens !== false ? templateEnds(tokenizer) : null
  const encodeOptions = template ? { ...checked.encodeOptions, addSpecialTokens: false } : checked.encodeOptions
  // The part after a cut is encoded as one (`encodeCheckedBatches`).
  const cutOptions = { addSpecialTokens: encodeOptions?.addSpecialTokens !== false, afterCut: true }
  if (longLines === 'parts') lineOptions.cutLine = (bytes, from) => tokenizer.lastSafeCut(bytes, from, cutOptions)
  // Under the file's truncation, a long line is read up to the start whose ids it keeps.
  if (longLines === 'parts' && truncation !== false) lineOptions.keptLine = (bytes) => tokenizer.keptByTruncation(bytes)
  checkLineOptions(lineOptions, 'encodeLineStream')
  return encodeLinesInOrder(tokenizer, batchLines(chunks, lineOptions), { ...checked, encodeOptions, template })
}

/** `encodeCheckedBatches` over batches of consecutive lines, their errors placed in the stream. */
async function* encodeLinesInOrder(tokenizer, batches, options) {
  // An error comes from the batch after the last one yielded, so the lines counted are those
  // before it.
  let linesBefore = 0
  try {
    for await (const batch of encodeCheckedBatches(tokenizer, batches, options)) {
      // The line a batch ends inside (`continues`) is counted with the batch that ends it; a part
      // of a long record's text (no lines) with its outline.
      if (batch.lines !== undefined) linesBefore += batch.continues ? batch.lines - 1 : batch.lines
      yield batch
    }
  } catch (error) {
    throw placedLine(error, linesBefore)
  }
}

/**
 * A `Transform` in object mode: write documents (strings or UTF-8 Buffers), read `TokenBatch`es.
 * Backpressure holds: when the readable side is full, writes wait, and no more text is taken.
 * @param {import('../index').Tokenizer} tokenizer
 * @param {EncodeStreamOptions} [options]
 * @returns {import('node:stream').Transform}
 */
function createEncodeStream(tokenizer, options) {
  options = checkOptions(tokenizer, options, 'createEncodeStream')
  const maxBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES
  const maxDocuments = options.batchDocuments ?? DEFAULT_BATCH_DOCUMENTS
  let gathered = []
  let gatheredBytes = 0
  /** Documents written so far, gathered ones included. */
  let written = 0
  let pending = null
  const engine = new EngineWait(tokenizer)
  /** Hands the gathered documents to the encoder; pushes the batch that was running. */
  const startBatch = async (stream) => {
    const documents = gathered
    const groupStart = written - documents.length
    gathered = []
    gatheredBytes = 0
    let batch = null
    for await (const b of batchDocuments(documents, { batchBytes: Infinity, batchDocuments: Infinity })) {
      b.firstDocument += groupStart
      // A change of kind inside the group makes two batches; encode the first at once.
      if (batch) {
        if (pending) stream.push(await pending)
        await engine.beforeBatch(bytesIn(batch))
        pending = encodeChecked(tokenizer, batch, options)
        pending.catch(() => {})
      }
      batch = b
    }
    if (batch) await engine.beforeBatch(bytesIn(batch))
    const next = batch ? encodeChecked(tokenizer, batch, options) : null
    if (next) next.catch(() => {})
    if (pending) stream.push(await pending)
    pending = next
  }
  return new Transform({
    objectMode: true,
    // One document at a time on the writable side; the batch is the unit of memory.
    writableHighWaterMark: 1,
    readableHighWaterMark: 1,
    transform(document, _encoding, callback) {
      if (typeof document !== 'string' && !(document instanceof Uint8Array)) {
        callback(new TypeError(`a document is ${document === null ? 'null' : typeof document}; expected a string or a Buffer of UTF-8`))
        return
      }
      gathered.push(document)
      written++
      gatheredBytes += document.length
      if (gatheredBytes < maxBytes && gathered.length < maxDocuments) {
        callback()
        return
      }
      startBatch(this).then(() => callback(), callback)
    },
    flush(callback) {
      const finish = async () => {
        if (gathered.length > 0) await startBatch(this)
        if (pending) this.push(await pending)
        pending = null
      }
      finish().then(() => callback(), callback)
    },
  })
}

module.exports = {
  encodeStream,
  encodeLineStream,
  batchLines,
  encodeBatches,
  batchDocuments,
  createEncodeStream,
  DEFAULT_BATCH_BYTES,
  DEFAULT_BATCH_DOCUMENTS,
  documentsIn,
  bytesIn,
  encodeOne,
}
