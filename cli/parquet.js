'use strict'
// Reading one string column of a Parquet file a page at a time, as UTF-8 bytes.
//
// hyparquet's row readers take a row group's column chunk into memory whole and decode all of it
// before handing over a row, and a row group can hold hundreds of MB of text (a group of ~400 MB
// takes 1.7 GiB that way). Here the column chunk is read page by page from the file and
// each data page's values are handed over as soon as they are decoded, with hyparquet's own page
// header and page decoders, so memory holds one page and the column's dictionary, whatever the
// size of the groups. The values are handed over as the bytes the page holds, not as JS strings.
// The page functions are hyparquet's internal modules (`hyparquet/src/*.js`, which its package
// exports but does not document), so package.json pins its version.

const fs = require('node:fs')
const zlib = require('node:zlib')
const { InputError } = require('./errors')

/** Bytes first read to find a page header: headers are tens of bytes, up to a few KB with a page's
 * minimum and maximum strings; where one is longer, the read grows (fourfold) until it fits. */
const HEADER_PROBE_BYTES = 16 << 10

/** The read past which a header that does not parse is taken as corrupt. */
const MAX_HEADER_BYTES = 64 << 20

/**
 * The page decompressors: Node's own zlib for gzip and Brotli, and for zstd where Node has it
 * (22.15 / 23.8 on), two to five times as fast as the pure JS ones of hyparquet-compressors, which
 * serve the rest (Snappy is hyparquet's own).
 */
async function pageCompressors() {
  const { compressors } = await import('hyparquet-compressors')
  const native = {
    // gzip as the format says, or the zlib stream some writers put there.
    GZIP: (input) => zlib.unzipSync(input),
    BROTLI: (input) => zlib.brotliDecompressSync(input),
  }
  if (typeof zlib.zstdDecompressSync === 'function') native.ZSTD = (input) => zlib.zstdDecompressSync(input)
  return { ...compressors, ...native }
}

/**
 * Opens `path` for reading the column `field`: its metadata read, its column checked to be a flat
 * one. `headerProbeBytes` is the first read for each page header (tests make it tiny, so that
 * every header takes the growing reads).
 * @returns {Promise<{ pages(): AsyncGenerator<{ values: unknown[], rowStart: number, compressedBytes: number }>, close(): Promise<void> }>}
 */
async function openColumn(path, field, { headerProbeBytes = HEADER_PROBE_BYTES } = {}) {
  const compressors = await pageCompressors()
  const { asyncBufferFromFile, parquetMetadataAsync, parquetSchema } = await import('hyparquet')
  const { parquetHeader, readPage } = await import('hyparquet/src/column.js')
  const { convert, DEFAULT_PARSERS } = await import('hyparquet/src/convert.js')
  const { getTreePath, isFlatColumn } = await import('hyparquet/src/schema.js')
  let metadata
  try {
    metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  } catch (error) {
    throw new InputError(`${path}: not a Parquet file that can be read (${error.message}); check the file`)
  }
  const columns = metadata.schema.slice(1).map((element) => element.name)
  if (!columns.includes(field)) {
    throw new InputError(`${path}: no column "${field}" (it has: ${columns.join(', ')}); name the text column with --field`)
  }
  const schemaPath = getTreePath(parquetSchema(metadata), [field])
  if (!isFlatColumn(schemaPath)) {
    throw new InputError(`${path}: the column "${field}" holds lists or groups, not strings; pick a string column with --field`)
  }
  const file = await fs.promises.open(path, 'r')

  /** `length` bytes of the file from `position`; fewer only at its end. */
  async function read(position, length) {
    const buffer = Buffer.allocUnsafe(length)
    const { bytesRead } = await file.read(buffer, 0, length, position)
    return buffer.subarray(0, bytesRead)
  }

  /** The pages of one row group's chunk of the column, decoded. */
  async function* groupPages(chunk, rowStart) {
    const meta = chunk.meta_data
    if (chunk.file_path || !meta) throw new Error('the column chunk lies in another file')
    const decoder = {
      pathInSchema: meta.path_in_schema,
      element: schemaPath[schemaPath.length - 1].element,
      schemaPath,
      ...meta,
      compressors,
      // A string's bytes as they are in the page: the addon checks and reads the UTF-8 itself
      // (encodeUtf8Batch), so no JS string is made of it.
      parsers: { ...DEFAULT_PARSERS, stringFromBytes: (bytes) => bytes },
    }
    // As hyparquet: a writer may leave the dictionary offset 0 where there is no dictionary.
    let position = Number(meta.dictionary_page_offset || meta.data_page_offset)
    const end = position + Number(meta.total_compressed_size)
    let dictionary
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
      const pageBytes = reader.offset + header.compressed_page_size
      if (pageBytes > bytes.length) {
        bytes = await read(position, pageBytes)
        if (bytes.length < pageBytes) throw new Error('the file ends inside a page')
        reader.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
      }
      position += pageBytes
      if (header.type === 'INDEX_PAGE') continue
      const { data } = readPage(reader, header, decoder, dictionary, undefined, 0)
      if (header.type === 'DICTIONARY_PAGE') {
        dictionary = data && convert(data, decoder)
        continue
      }
      if (data && data.length > 0) {
        yield { values: data, rowStart, compressedBytes: pageBytes }
        rowStart += data.length
      }
    }
  }

  return {
    async *pages() {
      let rowStart = 0
      for (const group of metadata.row_groups) {
        const chunk = group.columns.find((column) => column.meta_data?.path_in_schema.join('.') === field)
        try {
          yield* groupPages(chunk, rowStart)
        } catch (error) {
          if (error instanceof InputError) throw error
          throw new InputError(`${path}: the column "${field}" cannot be read (${error.message}); check the file`)
        }
        rowStart += Number(group.num_rows)
      }
    },
    close: () => file.close(),
  }
}

module.exports = { openColumn }
