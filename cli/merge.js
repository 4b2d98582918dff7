'use strict'
// `batchtok merge`: shard outputs, in shard order, joined into one dataset equal to a single run's.

const fs = require('node:fs')
const { readIndexHeader, writeIndex } = require('./megatron')
const { UsageError, writing } = require('./errors')
const { makeOutputFolder } = require('./output')
const { syncFolder } = require('./checkpoint')
const path = require('node:path')

/** Bytes copied per step. */
const COPY_BYTES = 8 << 20

/** The format of the output at `prefix`: the files that exist there. */
function formatAt(prefix) {
  if (fs.existsSync(`${prefix}.checkpoint.json`)) {
    throw new UsageError(`${prefix}: a checkpoint is there, so that shard has not finished; run its command again to finish it`)
  }
  if (fs.existsSync(`${prefix}.idx`) && fs.existsSync(`${prefix}.bin`)) return 'megatron'
  if (fs.existsSync(`${prefix}.bin`)) return 'flat'
  if (fs.existsSync(`${prefix}.jsonl`)) return 'counts'
  throw new UsageError(`${prefix}: no finished output (${prefix}.bin, .idx or .jsonl); run that shard's command`)
}

/**
 * Appends the whole of `from` to the open file `out` (named `outName`) at `position`; returns the
 * new position.
 */
function appendFile(out, outName, from, position) {
  const fd = fs.openSync(from, 'r')
  const buffer = Buffer.alloc(COPY_BYTES)
  try {
    for (let read; (read = fs.readSync(fd, buffer, 0, COPY_BYTES, null)) > 0; ) {
      writing(outName, () => fs.writeSync(out, buffer, 0, read, position))
      position += read
    }
  } finally {
    fs.closeSync(fd)
  }
  return position
}

/**
 * Joins the outputs at `prefixes` (in order) into `output`, written under `.partial` names and
 * renamed when whole.
 * @returns {{ documents: number | null, shards: number, outputs: string[] }}
 */
function runMerge(prefixes, { output, force }) {
  if (prefixes.length === 0) throw new UsageError('name the shard outputs to merge, in shard order')
  const formats = new Set(prefixes.map(formatAt))
  if (formats.size !== 1) throw new UsageError(`the shards are of different formats (${[...formats].join(', ')}); merge outputs of one command`)
  const [format] = formats
  const extensions = format === 'megatron' ? ['bin', 'idx'] : format === 'flat' ? ['bin'] : ['jsonl']
  for (const extension of extensions) {
    if (!force && fs.existsSync(`${output}.${extension}`)) throw new UsageError(`${output}.${extension} exists; pass --force to overwrite it`)
  }
  const dataExtension = format === 'counts' ? 'jsonl' : 'bin'
  const dataPartial = `${output}.${dataExtension}.partial`
  let documents = null
  makeOutputFolder(output)
  const out = writing(dataPartial, () => fs.openSync(dataPartial, 'w'))
  const indexSources = []
  try {
    let position = 0
    let dtype = null
    for (const prefix of prefixes) {
      position = appendFile(out, dataPartial, `${prefix}.${dataExtension}`, position)
      if (format !== 'megatron') continue
      const fd = fs.openSync(`${prefix}.idx`, 'r')
      const header = readIndexHeader(fd, `${prefix}.idx`)
      if (dtype !== null && header.dtype !== dtype) {
        throw new UsageError(`${prefix}.idx holds ${header.dtype} ids but the shards before it ${dtype}; merge outputs of one tokenizer`)
      }
      dtype = header.dtype
      indexSources.push({ fd, position: header.headerBytes, count: header.sequences })
    }
    writing(dataPartial, () => fs.fsyncSync(out))
    if (format === 'megatron') {
      writeIndex(`${output}.idx.partial`, dtype, indexSources)
      documents = indexSources.reduce((sum, source) => sum + source.count, 0)
    }
  } finally {
    fs.closeSync(out)
    for (const { fd } of indexSources) fs.closeSync(fd)
  }
  // The index first, as `encode` publishes: a stop between the renames leaves no .bin alone, which
  // would pass for a flat output.
  if (format === 'megatron') fs.renameSync(`${output}.idx.partial`, `${output}.idx`)
  fs.renameSync(dataPartial, `${output}.${dataExtension}`)
  syncFolder(path.dirname(path.resolve(output)))
  return { documents, shards: prefixes.length, outputs: extensions.map((extension) => `${output}.${extension}`) }
}

module.exports = { runMerge }
