'use strict'
// The output of `encode`: written under `.partial` names and renamed into place only once whole,
// so a file under its final name is always complete. A checkpoint records how many bytes of
// each partial file are whole; a resumed run cuts them back to that and appends. A Megatron
// `.idx` is written in place as the run goes: its sequence lengths, batch by batch, after room
// for the header; the pointers, document indices and header are added at the end. Once the files
// are whole and synced, a last checkpoint records their sizes before they are renamed, so a run
// stopped among the renames is finished by the next identical command (`publishFinished`).

const fs = require('node:fs')
const path = require('node:path')
const { megatronDtype, completeIndex, INDEX_HEADER_BYTES } = require('./megatron')
const timeline = require('./timeline')
const { writeError } = require('./errors')
const { syncFolder } = require('./checkpoint')

/**
 * Bytes written to a file between two data syncs started in the background: the data is made
 * durable as it goes, on a libuv thread while the encoding runs, so the sync at the end of a run
 * (or at a checkpoint) has little left to write instead of the whole output.
 */
const SYNC_EVERY_BYTES = 64 << 20

/**
 * Creates the folders the output `prefix` lies in that do not exist yet, one at a time from the
 * nearest one that does. (Node's `mkdirSync` with `recursive` spins forever where a parent
 * refuses new entries with ENOENT, as /proc does.)
 */
function makeOutputFolder(prefix) {
  const missing = []
  let folder = path.dirname(path.resolve(prefix))
  while (!fs.existsSync(folder) && path.dirname(folder) !== folder) {
    missing.push(folder)
    folder = path.dirname(folder)
  }
  try {
    // A file where a folder should be: mkdir fails on it with EEXIST, an error that names it.
    if (!fs.statSync(folder).isDirectory()) fs.mkdirSync(folder)
    for (const each of missing.reverse()) fs.mkdirSync(each)
  } catch (error) {
    throw writeError(error)
  }
}

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
    /** The folder the files are in, synced after they are renamed there. */
    this.folder = path.dirname(path.resolve(prefix))
    const { dtype, finals } = outputLayout(format, prefix, vocabSize)
    this.dtype = dtype
    this.finals = finals
    this.partials = {}
    for (const [key, file] of Object.entries(finals)) this.partials[key] = `${file}.partial`
    this.fds = {}
    this.sizes = {}
    /** The files' sizes where the last document written ends: a checkpoint's (`state`), so that
     * a resumed run starts a document cut into parts over from its first part. */
    this.endOfDocumentSizes = {}
    /** The ids so far of the document the last batch left open (`continues`): its length
     * counts from the next batch's first document. `null` where none is open. */
    this.openDocumentIds = null
    this.unsynced = 0
    /** The background data sync running, if one is. */
    this.syncing = null
  }

  /** Opens the partial files: empty, or cut back to `sizes` (a checkpoint's) to resume. */
  open(sizes) {
    for (const [key, file] of Object.entries(this.partials)) {
      // The index's lengths follow room for its header, written by `finish`.
      const size = sizes ? sizes[key] : key === 'idx' ? INDEX_HEADER_BYTES : 0
      if (sizes && !(fs.existsSync(file) && fs.statSync(file).size >= size)) {
        throw new Error(`${file} is shorter than its checkpoint says; delete the checkpoint and the .partial files to start over`)
      }
      this.fds[key] = fs.openSync(file, sizes ? 'r+' : 'w+')
      fs.ftruncateSync(this.fds[key], size)
      this.sizes[key] = size
    }
    this.endOfDocumentSizes = { ...this.sizes }
  }

  /**
   * Appends one `TokenBatch`. Where it `continues`, its last document's length is held until a
   * batch ends that document: only the lengths of whole documents are written. Where it
   * `restarts`, the open document's ids are dropped first.
   */
  async write(batch) {
    const { ids, offsets, documents, continues, restarts } = batch
    if (restarts && this.openDocumentIds !== null) await this.dropOpenDocument()
    const lengths = new Int32Array(documents)
    for (let i = 0; i < documents; i++) lengths[i] = offsets[i + 1] - offsets[i]
    if (this.openDocumentIds !== null && documents > 0) lengths[0] += this.openDocumentIds
    this.openDocumentIds = continues ? lengths[documents - 1] : null
    const ended = continues ? lengths.subarray(0, documents - 1) : lengths
    if (this.format === 'counts') {
      let text = ''
      for (const length of ended) text += `{"tokens":${length}}\n`
      await this.append('counts', Buffer.from(text))
    } else {
      const typed = this.dtype === 'uint16' ? new Uint16Array(ids.length) : null
      if (typed) typed.set(ids)
      const data = typed ?? ids
      await this.append('bin', Buffer.from(data.buffer, data.byteOffset, data.byteLength))
      if (this.format === 'megatron') await this.append('idx', Buffer.from(ended.buffer, ended.byteOffset, ended.byteLength))
    }
    if (!continues) this.endOfDocumentSizes = { ...this.sizes }
  }

  /** Cuts the files back to where the last whole document ends: the open one starts over. */
  async dropOpenDocument() {
    for (const [key, size] of Object.entries(this.endOfDocumentSizes)) {
      await new Promise((resolve, reject) => fs.ftruncate(this.fds[key], size, (error) => (error ? reject(error) : resolve())))
      this.sizes[key] = size
    }
    this.openDocumentIds = null
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
      timeline.mark('sync-start', { size: this.sizes[key] })
      // An error here is met again, and reported, by the sync that counts (`sync`, `finish`).
      this.syncing = Promise.all(Object.values(this.fds).map((fd) => dataSync(fd).catch(() => {}))).then(() => {
        timeline.mark('sync-end')
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

  /** The partial files' sizes where the last document written ends, for a checkpoint. */
  state() {
    return { ...this.endOfDocumentSizes }
  }

  /**
   * Completes the index (Megatron) and makes every partial file durable; returns each one's size,
   * for the checkpoint that says the run has finished.
   * @returns {Promise<Record<string, number>>}
   */
  async complete() {
    if (this.openDocumentIds !== null) throw new Error('the input ended inside a document cut into parts; this is a bug in batchtok, please report it')
    timeline.mark('final-sync-start', { unsynced: this.unsynced, bin: this.sizes.bin ?? 0 })
    // The data's last bytes are synced while the index is completed.
    const dataSynced = Promise.all(Object.entries(this.fds).filter(([key]) => key !== 'idx').map(([, fd]) => dataSync(fd)))
    // Waited for even when the index fails, so that no sync outlives the files' closing.
    dataSynced.catch(() => {})
    if (this.format === 'megatron') {
      await completeIndex(this.fds.idx, this.dtype, (this.sizes.idx - INDEX_HEADER_BYTES) / 4)
      timeline.mark('index-written', undefined, true)
      await dataSync(this.fds.idx)
    }
    await dataSynced
    timeline.mark('final-sync-end', undefined, true)
    const sizes = {}
    for (const [key, fd] of Object.entries(this.fds)) sizes[key] = fs.fstatSync(fd).size
    this.close()
    return sizes
  }

  /** Renames every partial file, whole and synced (`complete`), to its final name. */
  publish() {
    for (const key of this.publishOrder()) fs.renameSync(this.partials[key], this.finals[key])
    syncFolder(this.folder)
    timeline.mark('renamed')
  }

  /**
   * Finishes publishing the files of a run that completed them (`sizes`, from its last
   * checkpoint) and stopped before every rename was made: a file still under its partial name
   * is renamed; one already renamed is left. Throws where a file is neither, or not that size.
   * @param {Record<string, number>} sizes
   */
  publishFinished(sizes) {
    const sized = (file, key) => fs.existsSync(file) && fs.statSync(file).size === sizes[key]
    for (const key of this.publishOrder()) {
      if (sized(this.partials[key], key)) fs.renameSync(this.partials[key], this.finals[key])
      else if (fs.existsSync(this.partials[key]) || !sized(this.finals[key], key)) {
        throw new Error(`${this.finals[key]} is not the file the finished run's checkpoint records (${sizes[key]} bytes); pass --force to start over`)
      }
    }
    syncFolder(this.folder)
  }

  /**
   * The index first, the data last: `merge` takes a Megatron output only when both are there, so
   * a stop between the two renames leaves no .bin that could pass for a flat output.
   */
  publishOrder() {
    return Object.keys(this.finals).sort((a, b) => (a === 'idx' ? -1 : b === 'idx' ? 1 : 0))
  }

  close() {
    for (const fd of Object.values(this.fds)) fs.closeSync(fd)
    this.fds = {}
  }
}

/** `fdatasync` on a libuv thread. */
function dataSync(fd) {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())))
}

module.exports = { OutputWriter, outputLayout, makeOutputFolder }
