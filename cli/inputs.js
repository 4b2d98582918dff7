'use strict'
// Finding the input files and telling their format and compression.

const fs = require('node:fs')
const path = require('node:path')
const { globSync, isDynamicPattern } = require('tinyglobby')
const { UsageError } = require('./errors')

/** The formats `--format` takes; `auto` goes by the file name. */
const FORMATS = ['auto', 'text', 'jsonl', 'parquet']

/**
 * One input: a file (with its size and time, which the resume fingerprint records), stdin, or a
 * named pipe (`<(zcat …)`, a FIFO). Stdin and pipes (`pipe`) are read once, from their start, as
 * they come: their compression is told by their first bytes when they are opened, they cannot be
 * split or resumed.
 * @typedef {{ path: string, size: number, mtimeMs: number, format: string, compression: 'none'|'gzip'|'zstd', pipe?: boolean, stdin?: boolean }} Input
 */

/** `gzip`, `zstd` or `none`, from the file name (`.gz`, `.zst`, `.zstd`). */
function compressionOf(file) {
  if (/\.gz$/i.test(file)) return 'gzip'
  if (/\.zstd?$/i.test(file)) return 'zstd'
  return 'none'
}

/**
 * The first bytes of every gzip member and zstd frame. Neither begins valid UTF-8 (0x8b and 0xb5
 * cannot follow an ASCII byte), so no text file is taken for a compressed one.
 */
const MAGIC = [
  { compression: 'gzip', bytes: Buffer.from([0x1f, 0x8b]) },
  { compression: 'zstd', bytes: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]) },
]

/** A test of a file's first bytes: do they begin with `bytes`? */
const startsWith = (bytes) => (head) => head.subarray(0, bytes.length).equals(bytes)

const BZIP2_BLOCK_MAGIC = Buffer.from([0x31, 0x41, 0x59, 0x26, 0x53, 0x59])

/** bzip2's first bytes: "BZh", a block size from 1 to 9, and the first block's magic number. */
function isBzip2Head(head) {
  return head.length >= 10 && head.toString('latin1', 0, 3) === 'BZh' && head[3] >= 0x31 && head[3] <= 0x39 && head.subarray(4, 10).equals(BZIP2_BLOCK_MAGIC)
}

/**
 * Compressions the CLI does not read, by the name's extension and the data's first bytes, so that
 * such a file is refused with what to do, not read as text that is not UTF-8. No text begins
 * with these bytes (0xfd is no UTF-8 byte; the others open with a control character, or are
 * bzip2's "BZh" with a block size and the first block's magic number after it).
 */
const UNREAD = [
  { name: 'xz', extension: /\.xz$/i, matches: startsWith(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])), tool: 'xz -dc' },
  { name: 'bzip2', extension: /\.bz2$/i, matches: isBzip2Head, tool: 'bzip2 -dc' },
  { name: 'LZ4', extension: /\.lz4$/i, matches: startsWith(Buffer.from([0x04, 0x22, 0x4d, 0x18])), tool: 'lz4 -dc' },
  { name: 'zip', extension: /\.zip$/i, matches: startsWith(Buffer.from([0x50, 0x4b, 0x03, 0x04])), tool: 'unzip -p' },
]

/** The most bytes `compressionOfHead` and `unreadCompression` look at. */
const MAGIC_BYTES = 10

/**
 * What to say of `file` (`-` for stdin; `pipe` where it is one) where its name or first bytes
 * `head` say it is compressed in a way the CLI does not read; else `null`.
 */
function unreadCompression(file, head, pipe = false) {
  const unread = UNREAD.find(({ extension, matches }) => (file !== '-' && extension.test(file)) || matches(head))
  if (unread === undefined) return null
  const source = pipe ? 'FILE' : file
  const format = pipe ? 'text' : formatOf(file.replace(unread.extension, ''), 'auto')
  const options = format === 'text' ? '' : ` --format ${format}`
  return `${file === '-' ? 'stdin' : file} is compressed with ${unread.name}, which batchtok does not read (it reads gzip and zstd); decompress it into the command: ${unread.tool} ${source} | npx batchtok encode -${options} ...`
}

/** `gzip`, `zstd` or `none`, from the first bytes of the data (at least `MAGIC_BYTES` of them, or all). */
function compressionOfHead(head) {
  return MAGIC.find(({ bytes }) => head.subarray(0, bytes.length).equals(bytes))?.compression ?? 'none'
}

/**
 * The compression of text or JSONL `file`: its name's, else its first bytes', for a compressed
 * file whose name does not say so. A compression the CLI does not read is a `UsageError` that
 * says what to do; an unreadable file is left to the reader to report.
 */
function compressionOfFile(file, format) {
  if (format === 'parquet') return compressionOf(file)
  const head = headOf(file)
  const unread = unreadCompression(file, head)
  if (unread !== null) throw new UsageError(unread)
  const named = compressionOf(file)
  return named !== 'none' ? named : compressionOfHead(head)
}

/** The first `MAGIC_BYTES` of `file`, fewer where it is shorter; none where it cannot be read,
 * which the reader then reports. */
function headOf(file) {
  let fd
  try {
    fd = fs.openSync(file, 'r')
    const head = Buffer.alloc(MAGIC_BYTES)
    return head.subarray(0, fs.readSync(fd, head, 0, MAGIC_BYTES, 0))
  } catch {
    return Buffer.alloc(0)
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** The format of `file` under `--format` (`auto` goes by the extension under any compression). */
function formatOf(file, format) {
  if (format !== 'auto') return format
  const name = file.replace(/\.(gz|zstd?)$/i, '')
  if (/\.(jsonl|ndjson|json)$/i.test(name)) return 'jsonl'
  if (/\.parquet$/i.test(name)) return 'parquet'
  return 'text'
}

/**
 * The inputs named by `patterns` (paths, globs, or `-` for stdin), each file once, in a fixed
 * order: the patterns' order, and within a glob sorted by path, so every run and every shard
 * sees the same list.
 * @param {string[]} patterns
 * @param {string} format one of FORMATS
 * @returns {Input[]}
 */
function resolveInputs(patterns, format) {
  if (!FORMATS.includes(format)) {
    throw new UsageError(`--format ${format} is not a format; use one of ${FORMATS.join(', ')}`)
  }
  const seen = new Set()
  const inputs = []
  for (const pattern of patterns) {
    if (pattern === '-') {
      const stdinFormat = format === 'auto' ? 'text' : format
      if (stdinFormat === 'parquet') throw new UsageError('Parquet cannot be read from stdin; name the file')
      // Its compression is read from its first bytes when it is opened (cli/readers.js).
      inputs.push({ path: '-', size: 0, mtimeMs: 0, format: stdinFormat, compression: 'none', pipe: true, stdin: true })
      continue
    }
    let files
    if (fs.existsSync(pattern) || !isDynamicPattern(pattern)) files = [pattern]
    else {
      // An absolute pattern gives absolute paths, a relative one paths relative to the folder.
      files = globSync(pattern, { onlyFiles: true, absolute: path.isAbsolute(pattern), expandDirectories: false }).sort()
      if (files.length === 0) throw new UsageError(`${pattern} matches no file; check the pattern (quote it so the shell does not expand it)`)
    }
    for (const file of files) {
      const resolved = path.resolve(file)
      if (seen.has(resolved)) continue
      seen.add(resolved)
      let stat
      try {
        stat = fs.statSync(file)
      } catch (error) {
        throw new UsageError(`${file}: cannot read it (${error.code ?? error.message}); check the path and its permissions`)
      }
      if (stat.isDirectory()) throw new UsageError(`${file} is a directory; name its files, or a glob such as '${path.join(file, '*.jsonl')}'`)
      const fileFormat = formatOf(file, format)
      if (!stat.isFile()) {
        // A pipe: its first bytes are read once, when it is opened (cli/readers.js).
        if (fileFormat === 'parquet') throw new UsageError(`${file}: Parquet cannot be read from a pipe; name the file`)
        inputs.push({ path: file, size: 0, mtimeMs: 0, format: fileFormat, compression: 'none', pipe: true })
        continue
      }
      inputs.push({ path: file, size: stat.size, mtimeMs: stat.mtimeMs, format: fileFormat, compression: compressionOfFile(file, fileFormat) })
    }
  }
  if (inputs.length === 0) throw new UsageError('no input: name files, globs, or - for stdin')
  return inputs
}

module.exports = { resolveInputs, FORMATS, MAGIC_BYTES, compressionOf, compressionOfHead, formatOf, unreadCompression }
