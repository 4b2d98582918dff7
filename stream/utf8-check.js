'use strict'
// Whether bytes that arrive in chunks cut anywhere are UTF-8, without decoding them: for the rest
// of a long line that a reader reads past (its start is what a truncation keeps), which no engine
// sees but which must be UTF-8 as every line must.
const { isUtf8 } = require('node:buffer')

/**
 * A check of chunks in order: `push(chunk)` each, then `end()`, which says whether they were
 * UTF-8 together (a character may be cut between two chunks, not left unfinished at the end).
 */
function utf8Check() {
  /** The start of the character the chunks so far end inside. */
  let unfinished = Buffer.alloc(0)
  let valid = true
  return {
    /** @param {Uint8Array} chunk */
    push(chunk) {
      if (!valid) return
      const bytes = unfinished.length === 0 ? chunk : Buffer.concat([unfinished, chunk])
      const whole = finishedLength(bytes)
      valid = isUtf8(bytes.subarray(0, whole))
      unfinished = Buffer.from(bytes.subarray(whole))
    },
    end: () => valid && unfinished.length === 0,
  }
}

/** The length of `bytes` before a character that its last three bytes begin and do not finish. */
function finishedLength(bytes) {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]
    // A continuation byte: the character began further back.
    if ((byte & 0xc0) === 0x80) continue
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return length > back ? bytes.length - back : bytes.length
  }
  return bytes.length
}

module.exports = { utf8Check }
