'use strict'
// Reading inputs into document batches (see batchtok/stream's DocumentBatch). Text and JSONL are
// read as bytes and cut at line ends; a batch's bytes go to encodeUtf8Batch without a JS string
// per line. Each batch carries a `source` ({ file, firstLine, rangeStart }) for error messages.

const fs = require('node:fs')
const zlib = require('node:zlib')
const { Transform } = require('node:stream')
const { isUtf8 } = require('node:buffer')
const { InputError, placeOf } = require('./errors')

/** Read size: large reads keep the event loop's share of the work small. */
const READ_CHUNK_BYTES = 1 << 20
const NEWLINE = 10
const CARRIAGE_RETURN = 13

/**
 * A zstd decompressor as a Node Transform: Node's own where it has one (22.15 / 23.8 on), else
 * fzstd's streaming `Decompress`, pure JS (the napi zstd packages fetch their binary at install,
 * which offline installs refuse); fzstd is the slower (benchmark/results/cli.md).
 */
function zstdDecompressor() {
  if (typeof zlib.createZstdDecompress === 'function') return zlib.createZstdDecompress({ chunkSize: READ_CHUNK_BYTES })
  const { Decompress } = require('fzstd')
  let decoder
  return new Transform({
    construct(callback) {
      decoder = new Decompress((chunk) => this.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length)))
      callback()
    },
    transform(chunk, _encoding, callback) {
      try {
        decoder.push(chunk)
        callback()
      } catch (error) {
        callback(error)
      }
    },
    flush(callback) {
      try {
        decoder.push(new Uint8Array(0), true)
        callback()
      } catch (error) {
        callback(error)
      }
    },
  })
}

/**
 * The decompressed bytes of `input` from `start` (raw bytes, uncompressed files only), as an
 * async iterable of Buffers. `progress.rawBytes` grows by the file bytes read.
 */
function openBytes(input, start, progress) {
  const raw = input.stdin
    ? process.stdin
    : fs.createReadStream(input.path, { start, highWaterMark: READ_CHUNK_BYTES })
  const counted = raw.pipe(
    new Transform({
      highWaterMark: READ_CHUNK_BYTES,
      transform(chunk, _encoding, callback) {
        progress.rawBytes += chunk.length
        callback(null, chunk)
      },
    }),
  )
  raw.on('error', (error) => counted.destroy(error))
  if (input.compression === 'none') return counted
  const decompressor = input.compression === 'gzip' ? zlib.createGunzip({ chunkSize: READ_CHUNK_BYTES }) : zstdDecompressor()
  counted.on('error', (error) => decompressor.destroy(error))
  return counted.pipe(decompressor)
}

/** Rewrites an error from reading `input` into one that names the file and says what to do. */
function readError(input, error) {
  if (error instanceof InputError) return error
  const what = error.code === 'ENOENT' || error.code === 'EACCES' ? `cannot read it (${error.code})` : error.message
  const hint =
    input.compression === 'none' ? 'check the path and its permissions' : `check that it is a whole ${input.compression} file`
  return new InputError(`${input.path}: ${what}; ${hint}`)
}

/** Lines up to this long are moved down byte by byte in JS; longer ones by `copyWithin`, whose
 * call costs more than moving a short line. */
const SHORT_LINE_BYTES = 64

/**
 * Cuts `buffer` (whole lines, the last one possibly without its newline) into lines in place: each
 * line's bytes are moved down over the line ends before it, without its `\n` or `\r\n`. One pass:
 * documents of a few dozen bytes are common, and each native call per line costs about as much as
 * moving the line.
 * @returns {{ bytes: Buffer, offsets: Uint32Array }}
 */
function compactLines(buffer) {
  // A typed array goes to the addon in one piece; a JS array would be read element by element.
  let offsets = new Uint32Array(Math.max(16, buffer.length >>> 5))
  let lines = 0
  let write = 0
  let read = 0
  while (read < buffer.length) {
    const newline = buffer.indexOf(NEWLINE, read)
    const next = newline === -1 ? buffer.length : newline + 1
    let end = newline === -1 ? buffer.length : newline
    if (end > read && buffer[end - 1] === CARRIAGE_RETURN) end--
    if (write === read) write = end
    else if (end - read <= SHORT_LINE_BYTES) {
      for (let at = read; at < end; at++) buffer[write++] = buffer[at]
    } else {
      buffer.copyWithin(write, read, end)
      write += end - read
    }
    if (++lines === offsets.length) {
      const grown = new Uint32Array(offsets.length * 2)
      grown.set(offsets)
      offsets = grown
    }
    offsets[lines] = write
    read = next
  }
  return { bytes: buffer.subarray(0, write), offsets: offsets.slice(0, lines + 1) }
}

/**
 * The lines of `input` whose first byte lies in `[start, end)` (raw byte positions; a range other
 * than the whole file only for uncompressed files), in batches of about `batchBytes`.
 * @returns {AsyncGenerator<{ bytes: Buffer, offsets: Uint32Array, source: object }>}
 */
async function* lineBatches(input, { start = 0, end = Infinity, batchBytes, progress }) {
  // From `start - 1`, so that a line starting exactly at `start` is seen to start there.
  const readFrom = start > 0 ? start - 1 : 0
  let skipping = start > 0
  let position = readFrom
  let carry = null
  let pieces = []
  let pieceBytes = 0
  let firstLine = 1
  let done = false
  const emit = (final) => {
    const buffer = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, pieceBytes)
    pieces = []
    pieceBytes = 0
    const { bytes, offsets } = compactLines(buffer)
    const source = { file: input.path, firstLine, rangeStart: start, final }
    firstLine += offsets.length - 1
    return { bytes, offsets, source }
  }
  const stream = openBytes(input, readFrom, progress)
  try {
    for await (const chunk of stream) {
      let data = chunk
      if (skipping) {
        const newline = data.indexOf(NEWLINE)
        if (newline === -1) {
          position += data.length
          continue
        }
        position += newline + 1
        data = data.subarray(newline + 1)
        skipping = false
      }
      const dataStart = position - (carry ? carry.length : 0)
      position += data.length
      if (carry) data = Buffer.concat([carry, data])
      const lastNewline = data.lastIndexOf(NEWLINE)
      if (lastNewline === -1) {
        carry = data
        continue
      }
      let whole = data.subarray(0, lastNewline + 1)
      carry = data.subarray(lastNewline + 1)
      if (dataStart + whole.length > end) {
        // Keep the lines that start before `end`: up to the newline at or after `end - 1`.
        whole = dataStart >= end ? whole.subarray(0, 0) : whole.subarray(0, whole.indexOf(NEWLINE, end - 1 - dataStart) + 1)
        carry = null
        done = true
      }
      // The carry's bytes are referenced until the next chunk; copy it out of the chunk so a
      // batch never pins a whole read buffer for a few bytes.
      if (carry) carry = Buffer.from(carry)
      if (whole.length > 0) {
        pieces.push(whole)
        pieceBytes += whole.length
      }
      if (pieceBytes >= batchBytes) yield emit(false)
      if (done) break
    }
  } catch (error) {
    throw readError(input, error)
  } finally {
    stream.destroy()
  }
  if (!done && carry && carry.length > 0 && position - carry.length < end) {
    pieces.push(carry)
    pieceBytes += carry.length
  }
  if (pieceBytes > 0) yield emit(true)
}

/** Throws an InputError naming the first line of `batch` that is not UTF-8. */
function checkUtf8(batch) {
  if (isUtf8(batch.bytes)) return
  const { offsets } = batch
  for (let i = 0; i + 1 < offsets.length; i++) {
    if (!isUtf8(batch.bytes.subarray(offsets[i], offsets[i + 1]))) {
      throw new InputError(`${placeOf(batch.source, i)}: the text is not UTF-8; convert the file to UTF-8 (iconv -f <encoding> -t utf-8)`)
    }
  }
}

/** Text input: one document per line. */
async function* textBatches(input, options) {
  for await (const batch of lineBatches(input, options)) {
    checkUtf8(batch)
    yield batch
  }
}

/**
 * JSONL input: the string field `options.field` of each line's object; blank lines are skipped.
 * Each text is written back as UTF-8 over the batch's own bytes, and the batch goes to the addon
 * as bytes: one pass to write each text, where a batch of JS strings would cost the addon two
 * (its length, then its bytes) and the stream a third (the byte count). It fits: a JSON string's
 * UTF-8 is never longer than its literal (an escape is at least as long as what it stands for),
 * so text `i` ends at or before line `i` does, over lines already parsed.
 */
async function* jsonlBatches(input, options) {
  const { field } = options
  for await (const batch of lineBatches(input, options)) {
    checkUtf8(batch)
    const { bytes, offsets, source } = batch
    const textOffsets = new Uint32Array(offsets.length)
    let texts = 0
    let written = 0
    for (let i = 0; i + 1 < offsets.length; i++) {
      if (offsets[i] === offsets[i + 1]) continue
      const line = bytes.toString('utf8', offsets[i], offsets[i + 1])
      if (line.trim() === '') continue
      let record
      try {
        record = JSON.parse(line)
      } catch (error) {
        throw new InputError(`${placeOf(source, i)}: malformed JSON (${error.message}); fix or remove the line`)
      }
      const text = record !== null && typeof record === 'object' ? record[field] : undefined
      if (typeof text !== 'string') {
        const fields = record !== null && typeof record === 'object' ? Object.keys(record).join(', ') : typeof record
        const what = text === undefined ? `has no "${field}" field` : `has a "${field}" that is ${text === null ? 'null' : typeof text}, not a string`
        throw new InputError(`${placeOf(source, i)}: the record ${what} (it has: ${fields}); name the text field with --field`)
      }
      written += bytes.write(text, written, offsets[i + 1] - written)
      textOffsets[++texts] = written
    }
    if (texts > 0) yield { bytes: bytes.subarray(0, written), offsets: textOffsets.subarray(0, texts + 1), source }
  }
}

/** Whole files as documents (`--doc-per-file`), several small files to a batch. */
async function* fileBatches(inputs, options) {
  let pieces = []
  let names = []
  let bytes = 0
  const emit = () => {
    const offsets = new Uint32Array(pieces.length + 1)
    pieces.forEach((piece, i) => (offsets[i + 1] = offsets[i] + piece.length))
    const batch = { bytes: Buffer.concat(pieces, bytes), offsets, source: { file: names[0], firstLine: 1, rangeStart: 0, files: names } }
    pieces = []
    names = []
    bytes = 0
    return batch
  }
  for (const input of inputs) {
    const chunks = []
    try {
      for await (const chunk of openBytes(input, 0, options.progress)) chunks.push(chunk)
    } catch (error) {
      throw readError(input, error)
    }
    const document = Buffer.concat(chunks)
    if (!isUtf8(document)) throw new InputError(`${input.path}: the text is not UTF-8; convert the file to UTF-8`)
    pieces.push(document)
    names.push(input.path)
    bytes += document.length
    if (bytes >= options.batchBytes) yield emit()
  }
  if (pieces.length > 0) yield emit()
}

/** Parquet input: the string column `options.field`, a row group at a time. */
async function* parquetBatches(input, options) {
  const { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } = await import('hyparquet')
  const { compressors } = await import('hyparquet-compressors')
  let file
  let metadata
  try {
    file = await asyncBufferFromFile(input.path)
    metadata = await parquetMetadataAsync(file)
  } catch (error) {
    throw new InputError(`${input.path}: not a Parquet file that can be read (${error.message}); check the file`)
  }
  const columns = metadata.schema.slice(1).map((element) => element.name)
  if (!columns.includes(options.field)) {
    throw new InputError(`${input.path}: no column "${options.field}" (it has: ${columns.join(', ')}); name the text column with --field`)
  }
  let rowStart = 0
  for (const group of metadata.row_groups) {
    const rows = Number(group.num_rows)
    const groupBytes = Number(group.total_byte_size)
    const records = await parquetReadObjects({ file, metadata, columns: [options.field], rowStart, rowEnd: rowStart + rows, compressors })
    const texts = new Array(records.length)
    for (let i = 0; i < records.length; i++) {
      const text = records[i][options.field]
      if (typeof text !== 'string') {
        throw new InputError(`${input.path}: row ${rowStart + i} has a "${options.field}" that is ${text === null ? 'null' : typeof text}, not a string; pick a string column with --field`)
      }
      texts[i] = text
    }
    options.progress.rawBytes += Math.min(groupBytes, input.size)
    yield { texts, source: { file: input.path, firstLine: rowStart + 1, rangeStart: 0 } }
    rowStart += rows
  }
}

module.exports = { lineBatches, textBatches, jsonlBatches, fileBatches, parquetBatches, compactLines, openBytes }
