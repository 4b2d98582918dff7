'use strict'
// Megatron-LM's indexed dataset (megatron/core/datasets/indexed_dataset.py): a `.bin` of every
// document's ids back to back, and an `.idx`:
//
//   9 bytes  "MMIDIDX\0\0"
//   u64 LE   version, 1
//   u8       dtype code of the .bin (uint16 = 8, int32 = 4, Megatron's DType enum)
//   u64 LE   sequence count S
//   u64 LE   document count D (= S + 1 here: one sequence per document)
//   i32 × S  sequence lengths, in tokens
//   i64 × S  sequence pointers, byte offsets into the .bin
//   i64 × D  document indices: 0, then the sequence index where each document ends
//
// Megatron has no uint32 code: ids of a vocabulary of 65500 or more are written as int32, as its
// own `DType.optimal_dtype` chooses (no id reaches 2^31).

const fs = require('node:fs')
const { writing } = require('./errors')

const MAGIC = Buffer.from('MMIDIDX\x00\x00', 'latin1')
const VERSION = 1n
const DTYPE_CODES = { uint16: 8, int32: 4 }
/** Megatron's `optimal_dtype` threshold: below it, uint16. */
const UINT16_VOCABULARY_LIMIT = 65500
/** The bytes before an `.idx`'s sequence lengths: the header. */
const INDEX_HEADER_BYTES = 34
/** Rows of the index written per step: bounds memory for any number of documents. */
const INDEX_ROWS_PER_STEP = 1 << 16

/** The `.bin` element type Megatron picks for a vocabulary of `vocabSize` ids. */
function megatronDtype(vocabSize) {
  return vocabSize < UINT16_VOCABULARY_LIMIT ? 'uint16' : 'int32'
}

/** The header of an `.idx` with `sequences` sequences, one per document. */
function indexHeader(dtype, sequences) {
  const header = Buffer.alloc(INDEX_HEADER_BYTES)
  MAGIC.copy(header, 0)
  header.writeBigUInt64LE(VERSION, 9)
  header.writeUInt8(DTYPE_CODES[dtype], 17)
  header.writeBigUInt64LE(BigInt(sequences), 18)
  header.writeBigUInt64LE(BigInt(sequences + 1), 26)
  return header
}

/**
 * Reads an `.idx` header.
 * @returns {{ dtype: string, sequences: number, documents: number, headerBytes: number }}
 */
function readIndexHeader(fd, name) {
  const header = Buffer.alloc(INDEX_HEADER_BYTES)
  if (fs.readSync(fd, header, 0, INDEX_HEADER_BYTES, 0) !== INDEX_HEADER_BYTES || !header.subarray(0, 9).equals(MAGIC)) {
    throw new Error(`${name} is not a Megatron .idx file (bad header); check the path`)
  }
  const code = header.readUInt8(17)
  const dtype = Object.keys(DTYPE_CODES).find((key) => DTYPE_CODES[key] === code)
  if (!dtype) throw new Error(`${name} holds dtype code ${code}; batchtok merges uint16 (8) and int32 (4) datasets`)
  return {
    dtype,
    sequences: Number(header.readBigUInt64LE(18)),
    documents: Number(header.readBigUInt64LE(26)),
    headerBytes: INDEX_HEADER_BYTES,
  }
}

/**
 * The sequence pointers of an index, a step of rows at a time: the running sum of the lengths, in
 * bytes. Int64s are written as two uint32 halves (little-endian), the high one carried by hand:
 * exact below 2^53 bytes, with neither a BigInt nor a division per row.
 */
class PointerRows {
  constructor(dtype) {
    this.itemBytes = dtype === 'uint16' ? 2 : 4
    this.low = 0
    this.high = 0
  }

  /** Fills `rows64` (two uint32 halves a row) with the pointers of the next `lengths`. */
  fill(lengths, rows64) {
    const { itemBytes } = this
    let { low, high } = this
    for (let i = 0; i < lengths.length; i++) {
      rows64[2 * i] = low
      rows64[2 * i + 1] = high
      low += lengths[i] * itemBytes
      if (low >= 0x100000000) {
        // One length is below 2^31 tokens, so this carries up to 2: divided only then.
        const carried = Math.floor(low / 0x100000000)
        low -= carried * 0x100000000
        high += carried
      }
    }
    this.low = low
    this.high = high
  }
}

/**
 * Fills `rows64` with the document indices `first, first + 1, …` (`rows` of them). A step starts
 * at a multiple of its row count, which divides 2^32, so the high half is the same for all its
 * rows (the indices are below 2^53: the halves are exact).
 */
function fillDocumentRows(first, rows, rows64) {
  const firstHigh = Math.floor(first / 0x100000000)
  const firstLow = first - firstHigh * 0x100000000
  for (let i = 0; i < rows; i++) {
    rows64[2 * i] = firstLow + i
    rows64[2 * i + 1] = firstHigh
  }
}

/**
 * Writes an `.idx` for the sequence lengths read from `lengthSources` in order (each
 * `{ fd, position, count }`: `count` little-endian int32 lengths at `position`), streaming, so
 * memory stays bounded for any number of documents.
 */
function writeIndex(path, dtype, lengthSources) {
  const sequences = lengthSources.reduce((sum, source) => sum + source.count, 0)
  const out = writing(path, () => fs.openSync(path, 'w'))
  try {
    let at = 0
    const put = (buffer) => {
      writing(path, () => fs.writeSync(out, buffer, 0, buffer.length, at))
      at += buffer.length
    }
    put(indexHeader(dtype, sequences))
    const step = Buffer.alloc(INDEX_ROWS_PER_STEP * 8)
    const eachLengths = (visit) => {
      for (const { fd, position, count } of lengthSources) {
        for (let done = 0; done < count; done += INDEX_ROWS_PER_STEP) {
          const rows = Math.min(INDEX_ROWS_PER_STEP, count - done)
          const bytes = fs.readSync(fd, step, 0, rows * 4, position + done * 4)
          if (bytes !== rows * 4) throw new Error(`a lengths file ended early; the dataset is incomplete`)
          visit(step.subarray(0, rows * 4), rows)
        }
      }
    }
    // Sequence lengths, copied as they are.
    eachLengths((lengths) => put(lengths))
    const rows64 = new Uint32Array(INDEX_ROWS_PER_STEP * 2)
    const put64 = (rows) => put(Buffer.from(rows64.buffer, 0, rows * 8))
    const pointers = new PointerRows(dtype)
    eachLengths((lengths, rows) => {
      pointers.fill(new Int32Array(lengths.buffer, lengths.byteOffset, rows), rows64)
      put64(rows)
    })
    for (let first = 0; first <= sequences; first += INDEX_ROWS_PER_STEP) {
      const rows = Math.min(INDEX_ROWS_PER_STEP, sequences + 1 - first)
      fillDocumentRows(first, rows, rows64)
      put64(rows)
    }
    writing(path, () => fs.fsyncSync(out))
  } finally {
    fs.closeSync(out)
  }
}

/** Writes all of `buffer` to `fd` at `position`, on a libuv thread. */
async function writeAllAt(fd, buffer, position) {
  let written = 0
  while (written < buffer.length) {
    const bytesWritten = await new Promise((resolve, reject) =>
      fs.write(fd, buffer, written, buffer.length - written, position + written, (error, bytes) => (error ? reject(error) : resolve(bytes))),
    )
    written += bytesWritten
  }
}

/** Index writes handed to libuv threads at once by `completeIndex`: the next step is computed on
 * the event loop while they are written. */
const INDEX_WRITES_IN_FLIGHT = 4

/**
 * Completes an `.idx` whose sequence lengths are already in place: the open file `fd` holds
 * `INDEX_HEADER_BYTES` (any bytes) and then `sequences` int32 lengths, as a run writes them batch
 * by batch. Appends the sequence pointers and the document indices, and writes the header. The
 * rows are computed on the event loop and written on libuv threads meanwhile; nothing is synced.
 */
async function completeIndex(fd, dtype, sequences) {
  const pending = new Set()
  let failure = null
  const put = (buffer, position) => {
    const write = writeAllAt(fd, buffer, position).then(
      () => pending.delete(write),
      (error) => {
        pending.delete(write)
        failure ??= error
      },
    )
    pending.add(write)
  }
  const room = async () => {
    while (pending.size >= INDEX_WRITES_IN_FLIGHT) await Promise.race(pending)
    if (failure) throw failure
  }
  const lengthsStep = Buffer.alloc(INDEX_ROWS_PER_STEP * 4)
  const pointers = new PointerRows(dtype)
  let at = INDEX_HEADER_BYTES + 4 * sequences
  for (let done = 0; done < sequences; done += INDEX_ROWS_PER_STEP) {
    const rows = Math.min(INDEX_ROWS_PER_STEP, sequences - done)
    const bytes = fs.readSync(fd, lengthsStep, 0, rows * 4, INDEX_HEADER_BYTES + done * 4)
    if (bytes !== rows * 4) throw new Error(`the index's lengths ended early; the dataset is incomplete`)
    await room()
    const rows64 = new Uint32Array(rows * 2)
    pointers.fill(new Int32Array(lengthsStep.buffer, lengthsStep.byteOffset, rows), rows64)
    put(Buffer.from(rows64.buffer), at)
    at += rows * 8
  }
  for (let first = 0; first <= sequences; first += INDEX_ROWS_PER_STEP) {
    const rows = Math.min(INDEX_ROWS_PER_STEP, sequences + 1 - first)
    await room()
    const rows64 = new Uint32Array(rows * 2)
    fillDocumentRows(first, rows, rows64)
    put(Buffer.from(rows64.buffer), at)
    at += rows * 8
  }
  put(indexHeader(dtype, sequences), 0)
  while (pending.size > 0) await Promise.race(pending)
  if (failure) throw failure
}

module.exports = { megatronDtype, writeIndex, completeIndex, readIndexHeader, indexHeader, INDEX_HEADER_BYTES, UINT16_VOCABULARY_LIMIT }
