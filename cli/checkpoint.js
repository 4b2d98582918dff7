'use strict'
// The checkpoint of a run: how far it got, written atomically (a temporary file, fsync, rename,
// fsync of the folder), so after a crash it is either the previous checkpoint or the new one.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

/** Bumped when the checkpoint's meaning changes, so an old one is never misread (2: a Megatron
 * run's lengths are in the `.idx` partial file, after room for its header). */
const CHECKPOINT_VERSION = 2

/**
 * A digest of everything that decides a run's output: the options that shape it and each input's
 * path, size and modification time. A resumed run must have the same fingerprint.
 */
function fingerprint(settings, inputs) {
  const hash = crypto.createHash('sha256')
  hash.update(JSON.stringify({ version: CHECKPOINT_VERSION, settings, inputs: inputs.map((i) => [i.path, i.size, i.mtimeMs]) }))
  return hash.digest('hex')
}

/** The checkpoint at `file`, or null when there is none. */
function readCheckpoint(file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    if (error.code === 'ENOENT') return null
    throw error
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`${file} is not a checkpoint batchtok wrote; delete it (and the .partial files beside it) to start over`)
  }
}

/** Writes `state` to `file` atomically and durably. */
function writeCheckpoint(file, state) {
  const temporary = `${file}.tmp`
  const fd = fs.openSync(temporary, 'w')
  try {
    fs.writeSync(fd, JSON.stringify(state))
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(temporary, file)
  syncFolder(path.dirname(file))
}

/** Makes a rename in `folder` durable (where the platform allows opening a folder). */
function syncFolder(folder) {
  let fd
  try {
    fd = fs.openSync(folder, 'r')
    fs.fsyncSync(fd)
  } catch {
    // Windows cannot open a folder; its renames are durable through the file system's journal.
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

module.exports = { fingerprint, readCheckpoint, writeCheckpoint, syncFolder, CHECKPOINT_VERSION }
