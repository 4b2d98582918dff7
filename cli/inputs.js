'use strict'
// Finding the input files and telling their format and compression.

const fs = require('node:fs')
const path = require('node:path')
const { globSync, isDynamicPattern } = require('tinyglobby')
const { UsageError } = require('./errors')

/** The formats `--format` takes; `auto` goes by the file name. */
const FORMATS = ['auto', 'text', 'jsonl', 'parquet']

/**
 * One input: a file (with its size and time, which the resume fingerprint records) or stdin.
 * @typedef {{ path: string, size: number, mtimeMs: number, format: string, compression: 'none'|'gzip'|'zstd', stdin?: boolean }} Input
 */

/** `gzip`, `zstd` or `none`, from the file name (`.gz`, `.zst`, `.zstd`). */
function compressionOf(file) {
  if (/\.gz$/i.test(file)) return 'gzip'
  if (/\.zstd?$/i.test(file)) return 'zstd'
  return 'none'
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
      inputs.push({ path: '-', size: 0, mtimeMs: 0, format: stdinFormat, compression: 'none', stdin: true })
      continue
    }
    let files
    if (fs.existsSync(pattern) || !isDynamicPattern(pattern)) files = [pattern]
    else {
      files = globSync(pattern, { onlyFiles: true, absolute: false, expandDirectories: false }).sort()
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
      inputs.push({ path: file, size: stat.size, mtimeMs: stat.mtimeMs, format: formatOf(file, format), compression: compressionOf(file) })
    }
  }
  if (inputs.length === 0) throw new UsageError('no input: name files, globs, or - for stdin')
  return inputs
}

module.exports = { resolveInputs, FORMATS, compressionOf, formatOf }
