'use strict'
// The CLI's error kinds: each is printed as its message alone (no stack) and exits non-zero.

/** The exit code of a mistake in the command line. */
const USAGE_EXIT_CODE = 2

/** A mistake in the command line or the files it names (exit code 2). */
class UsageError extends Error {
  constructor(message) {
    super(message)
    this.name = 'UsageError'
    this.exitCode = USAGE_EXIT_CODE
  }
}

/** Input that cannot be tokenized, naming the file and line (exit code 1). */
class InputError extends Error {
  constructor(message) {
    super(message)
    this.name = 'InputError'
    this.exitCode = 1
  }
}

/**
 * Where a document is, for messages: `file:line` from the start of a file, or the line counted
 * from the byte where a shard's range starts.
 * @param {{ file: string, firstLine: number, rangeStart: number }} at
 * @param {number} index the document's index in its batch
 */
function placeOf(at, index) {
  const line = at.firstLine + index
  return at.rangeStart > 0 ? `${at.file}: line ${line} after byte ${at.rangeStart}` : `${at.file}:${line}`
}

/**
 * A file-system error met while writing the output, as an error whose message says what to do
 * (exit code 1). `file` names the file where the error has no path of its own (a write to an open
 * file); an error that is not the file system's is returned as it is.
 */
function writeError(error, file) {
  if (!error.syscall) return error
  const advice = {
    ENOSPC: 'free some space or write elsewhere with --output',
    EROFS: 'the folder is read-only; write elsewhere with --output',
    EACCES: 'no permission to write there; write elsewhere with --output',
    EPERM: 'no permission to write there; write elsewhere with --output',
    EDQUOT: 'the disk quota is full; free some space or write elsewhere with --output',
    ENOTDIR: 'part of the --output path is a file, not a folder; choose another --output',
    EEXIST: 'part of the --output path is a file, not a folder; choose another --output',
  }[error.code]
  const message = `cannot write ${error.path ?? file ?? 'the output'} (${error.code}); ${advice ?? 'check the output folder'}`
  return Object.assign(new Error(message), { exitCode: 1 })
}

/** Runs `operation`, a write to `file`, with its file-system error rewritten by `writeError`. */
function writing(file, operation) {
  try {
    return operation()
  } catch (error) {
    throw writeError(error, file)
  }
}

module.exports = { USAGE_EXIT_CODE, UsageError, InputError, placeOf, writeError, writing }
