'use strict'
// The output of `encode`: written under `.partial` names and renamed into place only once whole,
// so a file under its final name is always complete. A checkpoint records how many bytes of
// each partial file are whole; a resumed run cuts them back to that and appends.

const fs = require('node:fs')
const path = require('node:path')
const { megatronDtype, writeIndex } = require('./megatron')
const timeline = require('./timeline')

/**
 * Bytes written to a file between two data syncs started in the background: the data is made
 * durable as it goes, on a libuv thread while the encoding runs, so the sync at the end of a run
 * (or at a checkpoint) has little left to write instead of the whole output.
 */
const SYNC_EVERY_BYTES = 64 << 20

/** The files and element type of each output format, for `prefix`. */
function outputLayout(format, prefix, vocabSize) {
  if (format === 'megatron') {
    const dtype = megatronDtype(vocabSize)
    return { dtype, finals: { bin: `${prefix}.bin`, idx: `${prefix}.idx` } }
  }
  if (format === 'flat') {
    // nanoGPT's prepare.py writes uint16 for GPT-2; a larger vocabulary needs uint32.
    return { dtype: vocabSize <= 65536 ? 'uint16' : 'uint32', finals: { bin: `${prefix}.bin` } }
  }
  return { dtype: null, finals: { counts: `${prefix}.jsonl` } }
}

/**
 * Writes token batches into the partial files of one output.
 */
class OutputWriter {
  /**
   * @param {'megatron' | 'flat' | 'counts'} format
   * @param {string} prefix
   * @param {number} vocabSize
   */
  constructor(format, prefix, vocabSize) {
    this.format = format
    const { dtype, finals } = outputLayout(format, prefix, vocabSize)
    this.dtype = dtype
    this.finals = finals
    this.partials = {}
    for (const [key, file] of Object.entries(finals)) this.partials[key] = `${file}.partial`
    if (format === 'megatron') this.partials.lengths = `${prefix}.lengths.partial`
    this.fds = {}
    this.sizes = {}
    this.unsynced = 0
    /** The background data sync running, if one is. */
    this.syncing = null
  }

  /** Opens the partial files: empty, or cut back to `sizes` (a checkpoint's) to resume. */
  open(sizes) {
    for (const [key, file] of Object.entries(this.partials)) {
      // The index is written whole by `finish`, from the lengths.
      if (key === 'idx') continue
      const size = sizes ? sizes[key] : 0
      if (sizes && !(fs.existsSync(file) && fs.statSync(file).size >= size)) {
        throw new Error(`${file} is shorter than its checkpoint says; delete the checkpoint and the .partial files to start over`)
      }
      this.fds[key] = fs.openSync(file, sizes ? 'r+' : 'w+')
      fs.ftruncateSync(this.fds[key], size)
      this.sizes[key] = size
    }
  }

  /** Appends one `TokenBatch`. */
  async write(batch) {
    const { ids, offsets, documents } = batch
    if (this.format === 'counts') {
      let text = ''
      for (let i = 0; i < documents; i++) text += `{"tokens":${offsets[i + 1] - offsets[i]}}\n`
      await this.append('counts', Buffer.from(text))
      return
    }
    const typed = this.dtype === 'uint16' ? new Uint16Array(ids.length) : null
    if (typed) typed.set(ids)
    const data = typed ?? ids
    await this.append('bin', Buffer.from(data.buffer, data.byteOffset, data.byteLength))
    if (this.format === 'megatron') {
      const lengths = new Int32Array(documents)
      for (let i = 0; i < documents; i++) lengths[i] = offsets[i + 1] - offsets[i]
      await this.append('lengths', Buffer.from(lengths.buffer))
    }
  }

  async append(key, buffer) {
    try {
      await this.appendAt(key, buffer)
    } catch (error) {
      error.path ??= this.partials[key]
      throw error
    }
  }

  async appendAt(key, buffer) {
    let written = 0
    while (written < buffer.length) {
      const { bytesWritten } = await new Promise((resolve, reject) =>
        fs.write(this.fds[key], buffer, written, buffer.length - written, this.sizes[key] + written, (error, bytesWritten) =>
          error ? reject(error) : resolve({ bytesWritten }),
        ),
      )
      written += bytesWritten
    }
    this.sizes[key] += buffer.length
    this.unsynced += buffer.length
    if (this.unsynced >= SYNC_EVERY_BYTES && this.syncing === null) {
      this.unsynced = 0
      const fd = this.fds[key]
      timeline.mark('sync-start', { key, size: this.sizes[key] })
      // An error here is met again, and reported, by the sync that counts (`sync`).
      this.syncing = new Promise((resolve) => fs.fdatasync(fd, () => resolve())).then(() => {
        timeline.mark('sync-end', { key })
        this.syncing = null
      })
    }
  }

  /** Waits for a background data sync to end (before the files are closed). */
  async settle() {
    if (this.syncing) await this.syncing
  }

  /** Makes what was written durable (before a checkpoint names it). */
  sync() {
    for (const fd of Object.values(this.fds)) fs.fdatasyncSync(fd)
  }

  /** The partial files' whole sizes, for a checkpoint. */
  state() {
    return { ...this.sizes }
  }

  /** Builds the index (Megatron), then renames every partial file to its final name. */
  finish() {
    // The files renamed into place; the lengths are read once more, for the index (itself synced),
    // and deleted: they need no sync here.
    timeline.mark('final-sync-start', { unsynced: this.unsynced, bin: this.sizes.bin ?? 0 })
    for (const [key, fd] of Object.entries(this.fds)) if (key !== 'lengths') fs.fdatasyncSync(fd)
    timeline.mark('final-sync-end', undefined, true)
    if (this.format === 'megatron') {
      const idxPartial = this.partials.idx
      writeIndex(idxPartial, this.dtype, [{ fd: this.fds.lengths, position: 0, count: this.sizes.lengths / 4 }])
      timeline.mark('index-written', undefined, true)
    }
    this.close()
    // The index first, the data last: `merge` takes a Megatron output only when both are there,
    // so a crash between the two renames leaves no .bin that could pass for a flat output.
    const keys = Object.keys(this.finals).sort((a, b) => (a === 'idx' ? -1 : b === 'idx' ? 1 : 0))
    for (const key of keys) fs.renameSync(this.partials[key], this.finals[key])
    if (this.partials.lengths) fs.rmSync(this.partials.lengths, { force: true })
    timeline.mark('renamed')
  }

  close() {
    for (const fd of Object.values(this.fds)) fs.closeSync(fd)
    this.fds = {}
  }
}

module.exports = { OutputWriter, outputLayout }
