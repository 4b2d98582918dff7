'use strict'
// Reading one string column of a Parquet file a page at a time, as UTF-8 bytes.
//
// hyparquet's row readers take a row group's column chunk into memory whole and decode all of it
// before handing over a row, and a row group can hold hundreds of MB of text (a group of ~400 MB
// takes 1.7 GiB that way). Here the column chunk is read page by page from the file and
// each data page's values are handed over as soon as they are decoded, with hyparquet's own page
// header and page decoders, so memory holds a few pages (the one being read, and the next ones
// decompressing on libuv's threads) and the column's dictionary, whatever the size of the groups.
// The values are handed over as the bytes the page holds, not as JS strings.
// The page functions are hyparquet's internal modules (`hyparquet/src/*.js`, which its package
// exports but does not document), so package.json pins its version.

const fs = require('node:fs')
const { promisify } = require('node:util')
const zlib = require('node:zlib')
const { InputError } = require('./errors')

/** Bytes first read to find a page header: headers are tens of bytes, up to a few KB with a page's
 * minimum and maximum strings; where one is longer, the read grows (fourfold) until it fits. */
const HEADER_PROBE_BYTES = 16 << 10

/** The read past which a header that does not parse is taken as corrupt. */
const MAX_HEADER_BYTES = 64 << 20

/** Uncompressed bytes of the pages read and decompressing after the next one to read: one or two
 * of the usual ~1 MiB. The next page is taken whatever its size, those after it only while they
 * fit, so a file of large pages is read one page at a time (8 MiB raised the CLI's peak RSS by
 * 40-50 MiB). */
const AHEAD_BYTES = 2 << 20

/** Pages read and decompressing after the next one to read, at most, however small. */
const AHEAD_PAGES = 8

/**
 * The page decompressors that run on libuv's threads, by codec, each resolving to the bytes: the
 * addon's Snappy decoder (`snappyUncompress`; Node has none), and Node's own zlib for gzip, Brotli,
 * and zstd where Node has it (22.15 / 23.8 on), two to five times as fast as the pure JS ones of
 * hyparquet-compressors. Off the event loop, a column's pages decompress while the loop reads the
 * values of the one before and hands batches to the encoding threads: on a snappy column, the
 * loop's share of the reading is about half what it is with hysnappy's WASM decoding each page
 * in place (`benchmark/results/cli.md`).
 */
function threadedDecompressors() {
  const { snappyUncompress } = require('../index.js')
  // Node's decompressors take no length: `decompressedPart` checks it.
  const unzip = promisify(zlib.unzip)
  const brotli = promisify(zlib.brotliDecompress)
  const threaded = {
    SNAPPY: (input, length) => snappyUncompress(input, length),
    // gzip as the format says, or the zlib stream some writers put there.
    GZIP: (input) => unzip(input),
    BROTLI: (input) => brotli(input),
  }
  if (typeof zlib.zstdDecompress === 'function') {
    const zstd = promisify(zlib.zstdDecompress)
    threaded.ZSTD = (input) => zstd(input)
  }
  return threaded
}

/** The decompressors hyparquet calls on the event loop, for those of `codecs` with no threaded
 * one: hyparquet-compressors' LZ4 (its module alone: the package's index also loads a WASM
 * Snappy decoder, about 25 ms at every start), and fzstd for zstd on older Node. */
async function inlineDecompressors(codecs) {
  const inline = {}
  if (codecs.has('LZ4') || codecs.has('LZ4_RAW')) {
    const { decompressLz4, decompressLz4Raw } = await import('hyparquet-compressors/src/lz4.js')
    Object.assign(inline, { LZ4: hadoopOrRawLz4(decompressLz4, decompressLz4Raw), LZ4_RAW: decompressLz4Raw })
  }
  if (codecs.has('ZSTD')) inline.ZSTD = (input) => require('fzstd').decompress(input)
  return inline
}

/**
 * The decoder of the deprecated LZ4 codec, whose pages hold Hadoop-framed LZ4 or, from some
 * writers (fastparquet), a raw block: the framed reading, and where it fails, a raw block, as
 * Arrow reads the codec. `framed` alone falls back to a raw block only where a frame's lengths do
 * not fit the page, and it reads them as signed numbers, so a raw block that starts with 8 or
 * more literals (almost every one) passes for a frame and fails inside it.
 */
function hadoopOrRawLz4(framed, raw) {
  return (input, length) => {
    try {
      return framed(input, length)
    } catch (framedError) {
      try {
        return raw(input, length)
      } catch (rawError) {
        throw new Error(`LZ4 that reads neither as Hadoop frames (${framedError.message}) nor as a raw block (${rawError.message})`)
      }
    }
  }
}

/**
 * The compressed part of `page` (`{ header, body }`: a page header and the page's bytes as the
 * file holds them) decoded by `decompress`; `null` where the page has nothing compressed. A data
 * page of version 2 keeps its levels, which are never compressed, in front of its values. A part
 * that decodes to another length than the header gives is an error: Node's zstd decoder takes a
 * frame cut short as complete.
 */
async function decompressedPart(page, decompress) {
  const { header, body } = page
  const v2 = header.data_page_header_v2
  if (v2 && v2.is_compressed === false) return null
  const levels = v2 ? v2.repetition_levels_byte_length + v2.definition_levels_byte_length : 0
  const expected = header.uncompressed_page_size - levels
  const bytes = await decompress(body.subarray(levels), expected)
  if (bytes.length !== expected) throw new Error(`a page decompresses to ${bytes.length} bytes, but its header says ${expected}`)
  return bytes
}

/** Files up to this size are read whole at once (see `openColumn`). */
const SMALL_FILE_BYTES = 4 << 20

/** The size of the file at `path`; Infinity where it cannot be told, so that the reads tell why. */
function fileSize(path) {
  try {
    return fs.statSync(path).size
  } catch {
    return Infinity
  }
}

/** `bytes` (a file read whole) as the AsyncBuffer hyparquet reads metadata from. */
function memoryBuffer(bytes) {
  return {
    byteLength: bytes.length,
    slice: (start, end = bytes.length) => bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + end),
  }
}

/** Where a column chunk's first page starts in its file. As hyparquet reads it: a writer may leave
 * the dictionary page's offset 0 where there is none. */
function chunkStart(chunk) {
  return Number(chunk.meta_data.dictionary_page_offset || chunk.meta_data.data_page_offset)
}

/**
 * Opens `path` for reading the column `field`: its metadata read, its column checked to be a flat
 * one. `headerProbeBytes` is the first read for each page header (tests make it tiny, so that
 * every header takes the growing reads); `size` is the file's, where the caller has it.
 * @returns {Promise<{ pages(): AsyncGenerator<{ values: unknown[], rowStart: number, compressedBytes: number }>, close(): Promise<void> }>}
 */
async function openColumn(path, field, { headerProbeBytes = HEADER_PROBE_BYTES, size = fileSize(path) } = {}) {
  const threaded = threadedDecompressors()
  const { asyncBufferFromFile, parquetMetadataAsync, parquetSchema } = await import('hyparquet')
  const { parquetHeader, readPage } = await import('hyparquet/src/column.js')
  const { convert, DEFAULT_PARSERS } = await import('hyparquet/src/convert.js')
  const { getTreePath, isFlatColumn } = await import('hyparquet/src/schema.js')
  // A small file is read whole at once: its metadata and pages read from memory, without the
  // opens, reads and closes on libuv's threads that each read of a file costs (1,000 files of
  // 25 KB: 2.35 s read a read at a time, 1.6 s whole).
  let whole = null
  let metadata
  try {
    if (size <= SMALL_FILE_BYTES) whole = fs.readFileSync(path)
    metadata = await parquetMetadataAsync(whole === null ? await asyncBufferFromFile(path) : memoryBuffer(whole))
  } catch (error) {
    throw new InputError(`${path}: not a Parquet file that can be read (${error.message}); check the file`)
  }
  // The top-level columns: the flat schema list also holds the fields nested inside groups.
  const schema = parquetSchema(metadata)
  const columns = schema.children.map((child) => child.element.name)
  if (!columns.includes(field)) {
    throw new InputError(`${path}: no column "${field}" (it has: ${columns.join(', ')}); name the text column with --field`)
  }
  const schemaPath = getTreePath(schema, [field])
  if (!isFlatColumn(schemaPath)) {
    throw new InputError(`${path}: the column "${field}" holds lists or groups, not strings; pick a string column with --field`)
  }
  const file = whole === null ? await fs.promises.open(path, 'r') : null

  /** `length` bytes of the file from `position`; fewer only at its end. */
  async function read(position, length) {
    if (whole !== null) return whole.subarray(position, position + length)
    const buffer = Buffer.allocUnsafe(length)
    const { bytesRead } = await file.read(buffer, 0, length, position)
    return buffer.subarray(0, bytesRead)
  }

  /** The pages of one row group's chunk of the column as the file holds them, index pages left
   * out: `{ header, fileBytes, bodyAt, body }`, `fileBytes` the page's size in the file with its
   * header, `body` its bytes where the read of its header held them all, else `null` (`bodyOf`
   * reads them). */
  async function* filePages(chunk) {
    let position = chunkStart(chunk)
    const end = position + Number(chunk.meta_data.total_compressed_size)
    while (position < end) {
      let bytes
      let reader
      let header
      for (let probe = headerProbeBytes; header === undefined; probe *= 4) {
        bytes = await read(position, Math.min(probe, end - position))
        reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.length), offset: 0 }
        try {
          header = parquetHeader(reader)
        } catch (error) {
          // hyparquet's reader says "exceeds remaining" or fails otherwise on a header cut short
          // by the read: read more, unless the read already reaches the chunk's end.
          if (position + bytes.length >= end || probe >= MAX_HEADER_BYTES) throw error
        }
      }
      const fileBytes = reader.offset + header.compressed_page_size
      const body = fileBytes <= bytes.length ? bytes.subarray(reader.offset, fileBytes) : null
      if (header.type !== 'INDEX_PAGE') yield { header, fileBytes, bodyAt: position + reader.offset, body }
      position += fileBytes
    }
  }

  /** The compressed bytes of `page`, one of `filePages`. */
  async function bodyOf(page) {
    if (page.body) return page.body
    const body = await read(page.bodyAt, page.header.compressed_page_size)
    if (body.length < page.header.compressed_page_size) throw new Error('the file ends inside a page')
    return body
  }

  /** The pages of one row group's chunk of the column, decoded. Where the codec has a threaded
   * decompressor, the pages after the next one to read are read and decompressed meanwhile, as
   * many as `AHEAD_BYTES` holds, and hyparquet's page reader is handed each page's decompressed
   * part in place of decompressing it. */
  async function* groupPages(chunk, rowStart) {
    const meta = chunk.meta_data
    const decompress = threaded[meta.codec]
    /** The decompressed part of the page being read. */
    let decompressedAhead = null
    const decoder = {
      pathInSchema: meta.path_in_schema,
      element: schemaPath[schemaPath.length - 1].element,
      schemaPath,
      ...meta,
      compressors: decompress ? { [meta.codec]: () => decompressedAhead } : compressors,
      // A string's bytes as they are in the page: the addon checks and reads the UTF-8 itself
      // (encodeUtf8Batch), so no JS string is made of it.
      parsers: { ...DEFAULT_PARSERS, stringFromBytes: (bytes) => bytes },
    }
    const pages = filePages(chunk)
    /** Pages taken from the file, in order, each with its decompression under way: the next one to
     * read, then those after it. */
    const taken = []
    /** The uncompressed size of `taken`'s pages after the first. */
    const aheadBytes = () => taken.slice(1).reduce((sum, page) => sum + page.header.uncompressed_page_size, 0)
    let dictionary
    try {
      let next = await pages.next()
      for (;;) {
        while (!next.done) {
          if (taken.length > 0 && (taken.length > AHEAD_PAGES || aheadBytes() + next.value.header.uncompressed_page_size > AHEAD_BYTES)) break
          const page = next.value
          page.body = await bodyOf(page)
          if (decompress) {
            page.decompressed = decompressedPart(page, decompress)
            // Awaited when its turn comes; until then a failure must not count as unhandled.
            page.decompressed.catch(() => {})
          }
          taken.push(page)
          next = await pages.next()
        }
        const page = taken.shift()
        if (page === undefined) return
        decompressedAhead = decompress ? await page.decompressed : null
        const { header, body } = page
        const reader = { view: new DataView(body.buffer, body.byteOffset, body.length), offset: 0 }
        const { data } = readPage(reader, header, decoder, dictionary, undefined, 0)
        decompressedAhead = null
        if (header.type === 'DICTIONARY_PAGE') {
          dictionary = data && convert(data, decoder)
          continue
        }
        if (data && data.length > 0) {
          yield { values: data, rowStart, compressedBytes: page.fileBytes }
          rowStart += data.length
        }
      }
    } finally {
      await pages.return()
    }
  }

  const chunks = metadata.row_groups.map((group) => {
    const chunk = group.columns.find((column) => column.meta_data?.path_in_schema.join('.') === field)
    if (!chunk?.meta_data || chunk.file_path) throw new InputError(`${path}: the column "${field}" of a row group lies in another file; check the file`)
    return chunk
  })
  // Where each group's chunk starts says which part of a split file it belongs to; where the
  // chunks are not in the groups' order, no part but the first can be told apart, and the part
  // that starts the file takes every group.
  const starts = chunks.map(chunkStart)
  const inOrder = starts.every((start, i) => i === 0 || start > starts[i - 1])
  const compressors = await inlineDecompressors(new Set(chunks.map((chunk) => chunk.meta_data.codec).filter((codec) => !threaded[codec])))

  return {
    /**
     * The pages of the row groups whose chunk of the column starts in `[start, end)` (file
     * bytes), in order; rows are numbered from the file's first.
     */
    async *pages({ start = 0, end = Infinity } = {}) {
      let rowStart = 0
      for (const [i, group] of metadata.row_groups.entries()) {
        if (inOrder ? start <= starts[i] && starts[i] < end : start === 0) {
          try {
            yield* groupPages(chunks[i], rowStart)
          } catch (error) {
            if (error instanceof InputError) throw error
            throw new InputError(`${path}: the column "${field}" cannot be read (${error.message}); check the file`)
          }
        }
        rowStart += Number(group.num_rows)
      }
    },
    close: async () => file?.close(),
  }
}

module.exports = { openColumn }
