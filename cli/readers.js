'use strict'
// Reading inputs into document batches (see batchtok/stream's DocumentBatch). Text and JSONL are
// read as bytes and handed over as batches of whole lines: the addon cuts the lines, reads the
// JSONL field and checks the UTF-8 on the scheduler's threads (`encodeLines`), so the event loop
// only reads and finds a batch's last line end. A line longer than a batch is handed over in
// parts: a line of text cut where the tokenizer allows, a JSONL record's text as it is decoded
// (stream/long-record.js). Each batch carries a `source` ({ file, firstLine, rangeStart }) for error
// messages.

const fs = require('node:fs')
const zlib = require('node:zlib')
const { Readable, Transform } = require('node:stream')
const { isUtf8 } = require('node:buffer')
const { InputError, placeOf } = require('./errors')
const { MAGIC_BYTES, compressionOfHead, unreadCompression } = require('./inputs')
const { INCOMPLETE_BYTES, keptLineAsks, keptLineRest, textParts } = require('../stream/cuts')
const { utf8Check } = require('../stream/utf8-check')
const { openColumn } = require('./parquet')
const { LongRecord } = require('../stream/long-record')
const { zstdDecompressor } = require('./zstd')

/** Read size: large reads keep the event loop's share of the work small. */
const READ_CHUNK_BYTES = 1 << 20

/** Plain files up to this size are read whole at once, on the event loop (`byteSource`, `wholeFile`). */
const SMALL_FILE_BYTES = 64 << 10

/** Whether `input` is a file read whole at once: a size of 0 is also a pipe's (`<(zcat …)`),
 * which is read as it comes. */
const isSmallFile = (input) => !input.pipe && input.size > 0 && input.size <= SMALL_FILE_BYTES

const NEWLINE = 10
/** U+FEFF as UTF-8. */
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf])

/**
 * The decompressed bytes of `input` from `start` (raw bytes, uncompressed files only), as an
 * async iterable of Buffers. `progress.rawBytes` grows by the file bytes read. Stdin has no name
 * to tell its compression, so its first bytes tell it, and `input.compression` is set from them.
 */
function openBytes(input, start, progress) {
  // A pipe cannot seek: it is read from where it is, which is its start.
  const raw = input.stdin
    ? process.stdin
    : fs.createReadStream(input.path, input.pipe ? { highWaterMark: READ_CHUNK_BYTES } : { start, highWaterMark: READ_CHUNK_BYTES })
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
  if (input.pipe) return Readable.from(sniffed(counted, input), { objectMode: false })
  return decompressed(counted, input.compression)
}

/** `bytes` (a readable stream) decompressed as `compression` says. */
function decompressed(bytes, compression) {
  if (compression === 'none') return bytes
  const decompressor = compression === 'gzip' ? zlib.createGunzip({ chunkSize: READ_CHUNK_BYTES }) : zstdDecompressor(READ_CHUNK_BYTES)
  bytes.on('error', (error) => decompressor.destroy(error))
  return bytes.pipe(decompressor)
}

/** The bytes of `counted`, decompressed as their first bytes say; sets `input.compression`. */
async function* sniffed(counted, input) {
  const chunks = counted[Symbol.asyncIterator]()
  const head = []
  let headBytes = 0
  while (headBytes < MAGIC_BYTES) {
    const { value, done } = await chunks.next()
    if (done) break
    head.push(value)
    headBytes += value.length
  }
  const first = Buffer.concat(head)
  const unread = unreadCompression(input.path, first, true)
  if (unread !== null) throw new InputError(unread)
  input.compression = compressionOfHead(first)
  async function* rest() {
    yield* head
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value
  }
  yield* decompressed(Readable.from(rest(), { objectMode: false }), input.compression)
}

/**
 * Buffers a plain file is read into, in turn. A batch of lines is a view of one of them; it is
 * valid until this many more reads, and the addon copies a batch when it is handed over
 * (`encodeLines`), one read ahead at most (cli/pipeline.js).
 */
const READ_BUFFERS = 4

/**
 * A buffer for a line longer than a read, which grows at every read until its end comes: `room(
 * carry, more)` is a buffer that begins with `carry`'s bytes and has `more` bytes free after them.
 * While the carry is the line so far, it is the front of the last buffer given, which has room or
 * is replaced by one twice the size: the line's bytes are copied about once, and held at most
 * twice, where a new buffer at every read would copy them at every read.
 */
function growingLine() {
  let line = null
  return (carry, more) => {
    const inPlace = line !== null && carry.buffer === line.buffer && carry.byteOffset === line.byteOffset
    if (!inPlace || line.length < carry.length + more) {
      const grown = Buffer.allocUnsafe(Math.max(2 * carry.length, carry.length + more))
      carry.copy(grown, 0)
      line = grown
    }
    return line
  }
}

/**
 * The bytes of `input` from `start` as a source for `lineBatches`: `next(carry)` resolves to the
 * next bytes read with `carry` (the partial line left over) in front of them, or to `null` at the
 * end; `close()` lets go of the file. A plain file is read straight into a few buffers reused in
 * turn, the carry copied to the front of the next: no read stream, and no copy of the bytes read.
 * Anything else (stdin, compressed) is read as a stream, each chunk joined to the carry. A carry
 * longer than a read (a long line) grows in place instead (`growingLine`).
 */
function byteSource(input, start, progress, readBytes) {
  const room = growingLine()
  if (input.pipe || input.compression !== 'none') {
    const stream = openBytes(input, start, progress)
    const chunks = stream[Symbol.asyncIterator]()
    return {
      async next(carry) {
        const { value, done } = await chunks.next()
        if (done) return null
        if (!carry) return value
        if (carry.length < readBytes) return Buffer.concat([carry, value])
        const line = room(carry, value.length)
        value.copy(line, carry.length)
        return line.subarray(0, carry.length + value.length)
      },
      close: () => stream.destroy(),
      reusesBuffers: false,
    }
  }
  if (isSmallFile(input)) {
    // Read whole on the event loop: an open, a read and a close on libuv's threads cost more than
    // the read itself, and those threads are busy encoding.
    let read = false
    return {
      // The first read is the whole file, so no carry comes with it.
      async next() {
        if (read) return null
        read = true
        const bytes = fs.readFileSync(input.path).subarray(start)
        if (bytes.length === 0) return null
        progress.rawBytes += bytes.length
        return bytes
      },
      close: () => {},
      reusesBuffers: false,
    }
  }
  const buffers = []
  let turn = 0
  let position = start
  let fd = null
  return {
    async next(carry) {
      fd ??= await fs.promises.open(input.path, 'r')
      const carried = carry ? carry.length : 0
      let buffer
      if (carried >= readBytes) {
        buffer = room(carry, readBytes)
      } else {
        turn = (turn + 1) % READ_BUFFERS
        if (!buffers[turn] || buffers[turn].length < carried + readBytes) {
          buffers[turn] = Buffer.allocUnsafe(carried + readBytes)
        }
        buffer = buffers[turn]
        if (carry) carry.copy(buffer, 0)
      }
      const { bytesRead } = await fd.read(buffer, carried, readBytes, position)
      if (bytesRead === 0) return null
      position += bytesRead
      progress.rawBytes += bytesRead
      return buffer.subarray(0, carried + bytesRead)
    },
    close: () => {
      fd?.close().catch(() => {})
    },
    reusesBuffers: true,
  }
}

/** Rewrites an error from reading `input` into one that names the file and says what to do. */
function readError(input, error) {
  // An error about a line (a long record's: stream/long-record.js) is placed where it comes in order.
  if (error instanceof InputError || typeof error?.lineIndex === 'number') return error
  const what = error.code === 'ENOENT' || error.code === 'EACCES' ? `cannot read it (${error.code})` : error.message
  const hint =
    input.compression === 'none' ? 'check the path and its permissions' : `check that it is a whole ${input.compression} file`
  return new InputError(`${input.path}: ${what}; ${hint}`)
}

/**
 * Where a batch of lines starts, for messages. Its first line number is known only once the
 * lines of the batches before it are counted, which the addon does as it encodes them
 * (`encodeLines`'s `lines`): `settle(lines)` records this batch's count, in batch order, and a
 * settled batch lets go of the one before it.
 */
class LineSource {
  /**
   * @param {string} file
   * @param {number} rangeStart the raw byte where the part starts (a shard's range)
   * @param {LineSource | null} previous the batch before this one in the same part
   * @param {number} [start] the number of the batch's first line, where it is known
   */
  constructor(file, rangeStart, previous, start) {
    this.file = file
    this.rangeStart = rangeStart
    this.previous = previous
    this.knownStart = start
    /** Lines at the batch's start that a resumed run does not hand over (`skipDocuments`). */
    this.skipped = 0
    /** The batch's lines, once settled. */
    this.lines = undefined
  }

  /** The number of the batch's first line as read (counted from the part's start). */
  get start() {
    if (this.knownStart === undefined) {
      this.knownStart = this.previous.start + this.previous.lines
      this.previous = null
    }
    return this.knownStart
  }

  /** The number of the first line handed over, which `placeOf` counts from. */
  get firstLine() {
    return this.start + this.skipped
  }

  /** Records that the lines handed over were `lines` lines. */
  settle(lines) {
    this.lines = this.skipped + lines
    void this.start
  }

  /** Where the line `index` of those handed over is, for messages. */
  place(index) {
    return placeOf(this, index)
  }
}

/** How many lines `bytes` holds: its newlines, and a last line without one. */
function countLines(bytes) {
  let lines = 0
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) lines++
  return bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE ? lines + 1 : lines
}

/**
 * The source of a batch joined from the batches of several whole files (cli/plan.js), for
 * messages: a line is placed in its file by counting the lines of the files before it, which is
 * done only for a message. Nothing is settled: no batch after a whole file counts from its lines.
 */
class JoinedLineSource {
  /** @param {{ lines: Buffer, source: LineSource }[]} batches the files' batches, in order */
  constructor(batches) {
    this.parts = batches.map(({ lines, source }) => ({ lines, source }))
    /** Lines at the batch's start that a resumed run does not hand over (`skipDocuments`). */
    this.skipped = 0
  }

  settle() {}

  /** Where the line `index` of those handed over is, for messages. */
  place(index) {
    let line = this.skipped + index
    for (const { lines, source } of this.parts) {
      const count = countLines(lines)
      if (line < count) return source.place(line)
      line -= count
    }
    throw new RangeError(`line ${this.skipped + index} is past the joined batch's lines`)
  }
}

/**
 * The lines of `input` whose first byte lies in `[start, end)` (raw byte positions; a range other
 * than the whole file only for uncompressed files), in batches of whole lines of about
 * `batchBytes`, as read: the addon cuts them (`encodeLines`), on the scheduler's threads.
 *
 * A line that grows past `batchBytes` is handed over a part at a time where `cutLine` (a
 * tokenizer's `lastSafeCut`) finds a place: the batch ends with the part and says `continues`,
 * and the next batch starts with the rest of that line, so no line is held whole. Where
 * `keptLine` (a tokenizer's `keptByTruncation`) finds a start whose ids its truncation keeps are
 * the line's, the line is handed over as that start, a line of its own, and the rest of it is
 * read past, only checked to be UTF-8 (where it is not, the line is refused as any such line
 * is). A line with neither is held whole. With `longLine` instead, such a line goes to the
 * reader it makes for it (a `LongRecord`) as it is read, and the batches that reader gives are
 * handed over.
 * @returns {AsyncGenerator<object>}
 */
async function* lineBatches(input, { start = 0, end = Infinity, batchBytes, progress, skipByteOrderMark = false, cutLine, keptLine, longLine }) {
  // From `start - 1`, so that a line starting exactly at `start` is seen to start there.
  const readFrom = start > 0 ? start - 1 : 0
  /** Whether the bytes up to the next line's end are read past: the line before the range, or
   * the rest of a line handed over as its start (`keepCarryStart`). */
  let skipping = start > 0
  let position = readFrom
  let carry = null
  /** Where the line the carry holds the end of began (raw position): before `end`, it is read. */
  let carryLineStart = 0
  /** Where, in the carry, a search for a place to cut it has not looked yet. */
  let carryUnsearched = 0
  const keptAsks = keptLineAsks(keptLine, batchBytes)
  /** The line being read past after its start (`keepCarryStart`). */
  let readPast = null
  let pieces = []
  let pieceBytes = 0
  let source = null
  let done = false
  /** The reader of the long line being read (`longLine`), if one is. */
  let streamed = null
  const emit = (continues = false) => {
    const lines = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, pieceBytes)
    pieces = []
    pieceBytes = 0
    source = new LineSource(input.path, start, source, source ? undefined : 1)
    return continues ? { lines, source, continues } : { lines, source }
  }
  /**
   * Moves the carry's bytes up to the last place `cutLine` finds onto the batch, where the carry
   * has reached `batchBytes` and its line is one this range reads; says whether it did.
   */
  const cutCarry = () => {
    if (!cutLine || carry.length < batchBytes || carryLineStart >= end) return false
    const cut = cutLine(carry, carryUnsearched)
    if (cut <= 0) {
      carryUnsearched = Math.max(0, carry.length - INCOMPLETE_BYTES)
      return false
    }
    pieces.push(carry.subarray(0, cut))
    pieceBytes += cut
    carry = Buffer.from(carry.subarray(cut))
    carryUnsearched = 0
    // What the carry holds of the line from here on is no start of it.
    keptAsks.reset(Infinity)
    return true
  }
  /**
   * Takes the start of the carry's line that `keptLine` finds for the line, where the carry has
   * reached `batchBytes` and its line is one this range reads: the rest of the line is then read
   * past (`skipping`), only checked to be UTF-8 (`readPast`), and the start goes onto the batch,
   * as a whole line, at its end. Says whether it did.
   */
  const keepCarryStart = () => {
    if (carryLineStart >= end) return false
    const kept = keptAsks.ask(carry)
    if (kept <= 0) return false
    // The batch is now held past the next read, which may reuse the buffer its lines are in.
    if (reader.reusesBuffers) pieces = pieces.map((piece) => Buffer.from(piece))
    readPast = keptLineRest(carry.subarray(0, kept), carry.subarray(kept))
    carry = null
    skipping = true
    return true
  }
  /** Puts the start of the line read past onto the batch, as a line. */
  const endReadPast = () => {
    const line = readPast.line()
    pieces.push(line)
    pieceBytes += line.length
    readPast = null
  }
  /** Whether the carry goes to a reader of its own: it has reached `batchBytes`, and its line is
   * one this range reads. */
  const streamsCarry = () => longLine !== undefined && carry.length >= batchBytes && carryLineStart < end
  /** Hands the line the carry holds the start of to a reader of its own (`longLine`), after the
   * whole lines before it. */
  function* streamCarry() {
    if (pieceBytes > 0) yield emit()
    source = new LineSource(input.path, start, source, source ? undefined : 1)
    streamed = longLine(source)
    yield* streamed.push(carry)
    carry = null
  }
  // A plain file is read a batch at a time (see the emit rule below).
  const reader = byteSource(input, readFrom, progress, Math.max(READ_CHUNK_BYTES, batchBytes))
  try {
    for (let data = await reader.next(null); data !== null; data = await reader.next(carry)) {
      if (skipping) {
        const newline = readPast ? readPast.read(data) : data.indexOf(NEWLINE)
        if (newline === -1) {
          position += data.length
          continue
        }
        if (readPast) endReadPast()
        position += newline + 1
        data = data.subarray(newline + 1)
        skipping = false
      }
      if (streamed) {
        const { batches, rest } = streamed.pushToLineEnd(data)
        yield* batches
        position += data.length - (rest === null ? 0 : rest.length)
        if (rest === null) continue
        streamed = null
        data = rest
      }
      // `data` is the carry, then the bytes just read.
      let dataStart = position - (carry ? carry.length : 0)
      if (skipByteOrderMark && dataStart === 0 && data.subarray(0, BYTE_ORDER_MARK.length).equals(BYTE_ORDER_MARK)) {
        data = data.subarray(BYTE_ORDER_MARK.length)
        dataStart = BYTE_ORDER_MARK.length
      }
      position = dataStart + data.length
      // The first line of `data` began with the carry's line, or at `dataStart`.
      const firstLineStart = carry ? carryLineStart : dataStart
      const lastNewline = data.lastIndexOf(NEWLINE)
      if (lastNewline === -1) {
        carry = data
        carryLineStart = firstLineStart
        // No batch is handed over while a line's rest is read past (`keepCarryStart`): its start
        // goes at the batch's end once the rest is read.
        if (cutCarry()) yield emit(true)
        else if (!keepCarryStart() && streamsCarry()) yield* streamCarry()
        continue
      }
      let whole = data.subarray(0, lastNewline + 1)
      carry = data.subarray(lastNewline + 1)
      carryLineStart = dataStart + lastNewline + 1
      carryUnsearched = 0
      keptAsks.reset()
      if (dataStart + whole.length > end) {
        // Keep the lines that start before `end`: up to the newline at or after `end - 1`, or the
        // first line's end where only it (begun in a batch before) started before `end`.
        whole = firstLineStart >= end ? whole.subarray(0, 0) : whole.subarray(0, whole.indexOf(NEWLINE, Math.max(0, end - 1 - dataStart)) + 1)
        carry = null
        done = true
      }
      // The carry's bytes are referenced until the next chunk; copy it out of the chunk so a
      // batch never pins a whole read buffer for a few bytes.
      if (carry) carry = Buffer.from(carry)
      // A batch is emitted once its lines and the carry, which starts the next, reach
      // `batchBytes`: a full read of that size emits the lines it completes, whatever the carry.
      if (pieceBytes + whole.length + (carry ? carry.length : 0) < batchBytes && reader.reusesBuffers) {
        // Held past the next read, which may reuse the buffer: copy it out (a short read, at the
        // end of the file).
        whole = Buffer.from(whole)
      }
      if (whole.length > 0) {
        pieces.push(whole)
        pieceBytes += whole.length
      }
      if (!done && cutCarry()) yield emit(true)
      else if (!done && keepCarryStart()) continue
      else if (!done && streamsCarry()) yield* streamCarry()
      else if (pieceBytes + (carry ? carry.length : 0) >= batchBytes) yield emit()
      if (done) break
    }
  } catch (error) {
    throw readError(input, error)
  } finally {
    reader.close()
  }
  if (streamed) yield* streamed.end()
  if (readPast) endReadPast()
  if (!done && carry && carry.length > 0 && carryLineStart < end) {
    pieces.push(carry)
    pieceBytes += carry.length
  }
  if (pieceBytes > 0) yield emit()
}

/** Text input: one document per line; a long line is handed over in parts (`lineBatches`). */
async function* textBatches(input, options) {
  for await (const batch of lineBatches(input, options)) yield { ...batch, format: 'lines' }
}

/**
 * JSONL input: the string field `options.field` of each line's record; blank lines are skipped,
 * and so is a byte order mark at the start of the file, which JSON allows a reader to ignore (RFC
 * 8259) and editors on Windows write.
 */
async function* jsonlBatches(input, options) {
  const { field } = options
  let first = !options.start
  // A record longer than a batch is read as it comes (stream/long-record.js): its raw bytes are JSON,
  // which cannot be cut where a line of text can.
  const partBytes = options.textBatchBytes ?? options.batchBytes
  const longLine = (source) => new LongRecord({ field, batchBytes: partBytes, cutLine: options.cutLine, keptLine: options.keptLine, source })
  for await (const batch of lineBatches(input, { ...options, skipByteOrderMark: true, cutLine: undefined, keptLine: undefined, longLine })) {
    if (first && batch.lines) {
      first = false
      checkNotJson(input.path, batch.lines)
    }
    yield batch.lines && !batch.format ? { ...batch, format: 'jsonl', field } : batch
  }
}

/** JSON's white space (RFC 8259): space, tab, line feed, carriage return. */
const JSON_WHITE_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d])

/**
 * Throws where the first `lines` of the file `path` show JSON written for people rather than JSON
 * Lines: an array (no record starts with `[`, a record being an object), or an object spread over
 * lines (a first line of `{` alone), each with the jq command that writes one record per line.
 */
function checkNotJson(path, lines) {
  // jq reads stdin when named no file.
  const file = path === '-' ? '' : ` ${path}`
  const at = lines.findIndex((byte) => !JSON_WHITE_SPACE.has(byte))
  if (lines[at] === 0x5b) {
    throw new InputError(`${path} holds a JSON array, not JSON Lines (a record per line); write its records one per line, e.g. jq -c '.[]'${file} > records.jsonl`)
  }
  const lineEnd = lines.indexOf(NEWLINE, at)
  if (lines[at] === 0x7b && lineEnd !== -1 && lines.subarray(at + 1, lineEnd).every((byte) => JSON_WHITE_SPACE.has(byte))) {
    throw new InputError(`${path} holds JSON spread over lines, not JSON Lines (a record per line); write each record on one line, e.g. jq -c .${file} > records.jsonl`)
  }
}

/** What to do about a line that gives no document, by `encodeLines`'s error code. */
const LINE_ADVICE = {
  ERR_NOT_UTF8: 'convert the file to UTF-8 (iconv -f <encoding> -t utf-8)',
  ERR_MALFORMED_JSON: 'fix or remove the line',
  ERR_MISSING_FIELD: 'name the text field with --field',
  // A null (a record without text) or a number: the line is at fault, or the field named.
  ERR_FIELD_NOT_STRING: 'fix or remove the line, or name the text field with --field',
}

/**
 * The InputError for `encodeLines`'s `error` on a batch from `source`, naming the file and line;
 * `null` when the error names no line.
 */
function lineError(error, source) {
  if (!(source instanceof LineSource || source instanceof JoinedLineSource) || typeof error?.lineIndex !== 'number') return null
  const advice = LINE_ADVICE[error.code] ?? 'fix or remove the line'
  let reason = error.code === 'ERR_NOT_UTF8' ? 'the text is not UTF-8' : error.reason
  // A long record's outline (stream/long-record.js) answers for the record.
  if (source.reasonOf) reason = source.reasonOf(reason)
  return new InputError(`${source.place(error.lineIndex)}: ${reason}; ${advice}`)
}

/**
 * How many documents and lines the first `documents` documents of a lines batch take, and where
 * they end: for a resumed run, which skips the documents it has written. Read in JS, once per
 * run, so kept simple: a line of JSONL is a document unless blank. The part of a line a batch
 * ends inside (`continues`) is skipped with the batch and counted, as a line and a document,
 * where the next batch ends it.
 * @returns {{ documents: number, lines: number, end: number }}
 */
function skipLines(batch, documents) {
  const bytes = batch.lines
  let read = 0
  let lines = 0
  let counted = 0
  while (read < bytes.length && counted < documents) {
    const newline = bytes.indexOf(NEWLINE, read)
    if (newline === -1 && batch.continues) return { documents: counted, lines, end: bytes.length }
    const next = newline === -1 ? bytes.length : newline + 1
    if (batch.format === 'lines' || bytes.toString('utf8', read, next).trim() !== '') counted++
    lines++
    read = next
  }
  return { documents: counted, lines, end: read }
}

/** A batch of documents given as byte `pieces` (`bytes` in all), joined, with their offsets; one
 * piece is taken as it is, so a large file read whole is not copied again. */
function bytesBatch(pieces, bytes, source) {
  const offsets = new Uint32Array(pieces.length + 1)
  pieces.forEach((piece, i) => (offsets[i + 1] = offsets[i] + piece.length))
  return { bytes: pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, bytes), offsets, source }
}

/** The decompressed bytes of `input`, whole. A plain file is read into one buffer of its size;
 * anything else is gathered from its stream. */
async function wholeFile(input, progress) {
  if (!input.pipe && input.compression === 'none') {
    // A small file at once, as `byteSource` reads one.
    const bytes = isSmallFile(input) ? fs.readFileSync(input.path) : await fs.promises.readFile(input.path)
    progress.rawBytes += bytes.length
    return bytes
  }
  const chunks = []
  for await (const chunk of openBytes(input, 0, progress)) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/**
 * The document `input` holds, in parts: each but the last ends where `cutLine` finds a place
 * once `batchBytes` are held (see `lineBatches`), the last is the rest. A document with no such
 * place is one part. The chunks read are joined only to cut them, so a long stretch with no place
 * to cut is copied once, not at every read. Where, before any place, `keptLine` finds a start
 * whose ids its truncation keeps are the document's, that start is the one part, and the rest is
 * read past, only checked to be UTF-8.
 * @returns {AsyncGenerator<Buffer>}
 */
async function* documentParts(input, { batchBytes, progress, cutLine, keptLine }) {
  const parts = textParts(cutLine, batchBytes, keptLine)
  /** The check that the rest is UTF-8, once a start is kept. */
  let restUtf8 = null
  for await (const chunk of openBytes(input, 0, progress)) {
    if (restUtf8) {
      restUtf8.check(chunk)
      continue
    }
    const part = parts.add(chunk)
    if (part) {
      yield part
      continue
    }
    const kept = parts.keptStart()
    if (kept === null) continue
    yield kept.start
    restUtf8 = utf8Check()
    restUtf8.check(kept.rest)
  }
  if (!restUtf8) yield parts.rest()
  else if (!restUtf8.end()) throw notUtf8File(input)
}

/** The error for a file, one document, that is not UTF-8. */
const notUtf8File = (input) => new InputError(`${input.path}: the text is not UTF-8; convert the file to UTF-8`)

/**
 * Whole files as documents (`--doc-per-file`), several small files to a batch. A file larger
 * than a batch is read in parts where `options.cutLine` allows (`documentParts`), each ending a
 * batch that `continues`, or up to the start `options.keptLine` finds; without either, or with
 * none found, it is read whole.
 */
async function* fileBatches(inputs, options) {
  let pieces = []
  let names = []
  let bytes = 0
  const emit = (continues = false) => {
    const batch = bytesBatch(pieces, bytes, { file: names[0], firstLine: 1, rangeStart: 0, files: names })
    pieces = []
    names = []
    bytes = 0
    return continues ? { ...batch, continues } : batch
  }
  for (const input of inputs) {
    const inParts = options.cutLine !== undefined && (input.pipe || input.compression !== 'none' || input.size > options.batchBytes)
    const parts = inParts ? documentParts(input, options) : (async function* () { yield await wholeFile(input, options.progress) })()
    let named = false
    try {
      let part = await parts.next()
      while (!part.done) {
        // The part after is read first: whether there is one says whether the batch continues.
        const next = await parts.next()
        if (!isUtf8(part.value)) throw notUtf8File(input)
        // Each batch names the files it holds, this one once, whichever of its parts it holds.
        if (!named || pieces.length === 0) names.push(input.path)
        named = true
        pieces.push(part.value)
        bytes += part.value.length
        if (!next.done) yield emit(true)
        part = next
      }
    } catch (error) {
      throw readError(input, error)
    } finally {
      await parts.return()
    }
    if (bytes >= options.batchBytes) yield emit()
  }
  if (pieces.length > 0) yield emit()
}

/**
 * Parquet input: the string column `options.field` of the row groups that start in
 * `[options.start, options.end)`, read a page at a time as UTF-8 bytes (cli/parquet.js) and
 * handed over in batches of about `options.batchBytes` bytes.
 */
async function* parquetBatches(input, options) {
  const column = await openColumn(input.path, options.field, { size: input.size })
  let values = []
  let bytes = 0
  /** The file's row number of the batch's first value. */
  let firstRow = 0
  const emit = () => {
    const batch = bytesBatch(values, bytes, { file: input.path, firstLine: firstRow + 1, rangeStart: 0 })
    if (!isUtf8(batch.bytes)) {
      const bad = values.findIndex((value) => !isUtf8(value))
      throw new InputError(`${input.path}: row ${firstRow + bad} has a "${options.field}" that is not UTF-8; convert the column to UTF-8`)
    }
    values = []
    bytes = 0
    return batch
  }
  try {
    for await (const { values: page, rowStart, compressedBytes } of column.pages(options)) {
      for (let i = 0; i < page.length; i++) {
        // A string column gives its bytes (cli/parquet.js); a type hyparquet writes as text (a
        // UUID) gives a string.
        const value = typeof page[i] === 'string' ? Buffer.from(page[i]) : page[i]
        if (value === null || value === undefined) {
          throw new InputError(`${input.path}: row ${rowStart + i} has no "${options.field}" (null); drop the rows without one, or pick another column with --field`)
        }
        if (!(value instanceof Uint8Array)) {
          throw new InputError(`${input.path}: row ${rowStart + i} has a "${options.field}" that is ${typeof value}, not a string; pick a string column with --field`)
        }
        if (values.length === 0) firstRow = rowStart + i
        values.push(value)
        bytes += value.length
        if (bytes >= options.batchBytes) yield emit()
      }
      options.progress.rawBytes += compressedBytes
    }
  } finally {
    await column.close()
  }
  if (values.length > 0) yield emit()
}

module.exports = { lineBatches, textBatches, jsonlBatches, fileBatches, parquetBatches, openBytes, LineSource, JoinedLineSource, lineError, skipLines, NEWLINE }
