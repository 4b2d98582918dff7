'use strict'
// The CLI's error kinds: each is printed as its message alone (no stack) and exits non-zero.

/** A mistake in the command line or the files it names (exit code 2). */
class UsageError extends Error {
  constructor(message) {
    super(message)
    this.name = 'UsageError'
    this.exitCode = 2
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

module.exports = { UsageError, InputError, placeOf }
