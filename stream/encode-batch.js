'use strict'
// One batch of documents encoded: the addon call its kind takes, errors placed in their input, and
// the ids a caller puts around each document (ends.js). Shared by the stream's encoders and the
// CLI's (cli/pipeline.js), which run batches in order but each in its own way.

const { withEnds } = require('./ends')

/** How many documents `batch` holds (`NaN` for a batch of lines: known once it is encoded). */
function documentsIn(batch) {
  if (batch.lines) return NaN
  return batch.texts ? batch.texts.length : batch.offsets.length - 1
}

/** The text bytes `batch` holds (for a string batch, the UTF-8 length; for a batch of lines, its
 * bytes as read, line ends and JSON syntax included). */
function bytesIn(batch) {
  if (batch.lines) return batch.lines.length
  if (batch.bytes) return batch.offsets[batch.offsets.length - 1] - batch.offsets[0]
  let bytes = 0
  for (const text of batch.texts) bytes += Buffer.byteLength(text, 'utf8')
  return bytes
}

/**
 * `error`, where it is about one text of `batch` (its `itemIndex`) and the batch knows where it
 * starts in the stream (`firstDocument`), as an error that names the document by its index in the
 * whole stream (`documentIndex`), with the original's properties (`itemIndex`, a disallowed
 * token's `code`, `token` and `index`) and the original as its `cause`.
 */
function placedInStream(error, batch) {
  if (batch.firstDocument === undefined || !(error instanceof Error) || typeof error.itemIndex !== 'number') return error
  const documentIndex = batch.firstDocument + error.itemIndex
  const placed = new error.constructor(`document ${documentIndex} of the stream: ${error.message}`, { cause: error })
  return Object.assign(placed, { ...error, documentIndex })
}

/** `error` with the batch's `source` as its own `source`, unless it already names one. */
function withSource(error, batch) {
  if (batch.source !== undefined && error !== null && typeof error === 'object') error.source ??= batch.source
  return error
}

/** A `TypeError` where `batch` is not a `DocumentBatch` of one of its three kinds. */
function checkBatch(batch) {
  if (batch !== null && typeof batch === 'object' && (batch.lines !== undefined || batch.bytes !== undefined || batch.texts !== undefined)) return
  const what = batch === null ? 'null' : typeof batch !== 'object' ? typeof batch : Array.isArray(batch) ? 'an array' : `an object with ${Object.keys(batch).join(', ') || 'no keys'}`
  throw new TypeError(`a batch is ${what}; expected { texts }, { bytes, offsets } or { lines, format } (a DocumentBatch)`)
}

/**
 * Starts encoding `batch`; the promise resolves to its `TokenBatch` (see `encodeOne`, which
 * checks `options` and the batch first). `afterCut` (`followsCut`): the batch's first document
 * goes on the one the batch before left open, from a place `lastSafeCut` found.
 * `options.template` (`templateEnds`), where set, holds the ids put around each document (with
 * `options.eosId` after them), which the batch is encoded without: `encodeLineStream`'s and the
 * CLI's long documents.
 * @param {import('../index').Tokenizer} tokenizer
 * @param {import('./index').DocumentBatch} batch
 * @param {import('./index').EncodeStreamOptions & { template?: { before: number[], after: number[] } | null }} options
 * @param {boolean} [afterCut]
 */
async function encodeChecked(tokenizer, batch, options, afterCut = false) {
  const batchOptions = {}
  if (options.scheduler) batchOptions.scheduler = options.scheduler
  if (options.signal) batchOptions.signal = options.signal
  if (options.encodeOptions) Object.assign(batchOptions, options.encodeOptions)
  if (afterCut) batchOptions.afterCut = true
  // A long record's outline that goes on its document, whose text the batches before held
  // (with the template's tokens where the engine adds them), adds no ids: its text is empty.
  if (batch.recordOutline === true && batchOptions.afterCut === true) batchOptions.addSpecialTokens = false
  const continues = batch.continues === true
  const before = options.template?.before ?? []
  const after = [...(options.template?.after ?? []), ...(options.eosId === undefined ? [] : [options.eosId])]
  /** `encoding` with the ids put around each document, where there are any. */
  const ended = (encoding) =>
    before.length + after.length === 0 ? encoding : withEnds(encoding, { before, after, continued: afterCut, continues })
  let encoding
  if (batch.lines) {
    const format = batch.format === 'jsonl' ? { format: 'jsonl', field: batch.field } : { format: 'lines' }
    try {
      encoding = await tokenizer.encodeLines(batch.lines, format, batchOptions)
    } catch (error) {
      throw withSource(error, batch)
    }
    const { ids, offsets } = ended(encoding)
    return tokenBatch({ ids, offsets, documents: offsets.length - 1, bytes: encoding.textBytes, lines: encoding.lines, source: batch.source }, batch)
  }
  try {
    if (batch.bytes) {
      const base = batch.offsets[0]
      // The addon reads offsets from 0; a batch cut out of a larger buffer is rebased.
      const bytes = base === 0 ? batch.bytes : batch.bytes.subarray(base)
      const offsets = base === 0 ? batch.offsets : Uint32Array.from(batch.offsets, (o) => o - base)
      encoding = await tokenizer.encodeUtf8Batch(bytes, offsets, batchOptions)
    } else {
      encoding = await tokenizer.encodeBatch(batch.texts, batchOptions)
    }
  } catch (error) {
    throw withSource(placedInStream(error, batch), batch)
  }
  const { ids, offsets } = ended({ ids: encoding.ids, offsets: encoding.offsets })
  return tokenBatch({ ids, offsets, documents: offsets.length - 1, bytes: bytesIn(batch), source: batch.source }, batch)
}

/** `encoded`, saying `continues` and `restarts` where its `batch` does. */
function tokenBatch(encoded, batch) {
  if (batch.continues === true) encoded.continues = true
  if (batch.restarts === true) encoded.restarts = true
  return encoded
}

/**
 * A reader of batches in input order that says of each whether its first document goes on the
 * one the batch before left open (`continues`), from a place `lastSafeCut` found: it is then
 * encoded with `afterCut` and gets no ids before it. A batch that `restarts` starts that document
 * over instead.
 * @returns {(batch: { continues?: true, restarts?: true }) => boolean}
 */
function followsCut() {
  let open = false
  return (batch) => {
    const goesOn = open && batch.restarts !== true
    open = batch.continues === true
    return goesOn
  }
}

module.exports = { documentsIn, bytesIn, checkBatch, encodeChecked, followsCut }
