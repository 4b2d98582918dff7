'use strict'
// Whether bytes that arrive in chunks cut anywhere are UTF-8, without decoding them: a long JSONL
// record's bytes as they are read (`long-record.js`), and the rest of a long line that a reader
// reads past after its start (what a truncation keeps), which no engine sees but which must be
// UTF-8 as every line must.

const { isUtf8 } = require('node:buffer')

/**
 * A streaming check that bytes are UTF-8: `check(chunk)` says whether the bytes so far are, a
 * character cut by a chunk's end being checked once the next completes it (once false, it stays
 * false); `end()` says whether they are and no character is left cut.
 */
function utf8Check() {
  /** The first bytes of a character the last chunk ended inside. */
  let cut = Buffer.alloc(0)
  let valid = true
  const check = (chunk) => {
    let from = 0
    if (cut.length > 0) {
      from = Math.min(chunk.length, characterLength(cut[0]) - cut.length)
      const joined = Buffer.concat([cut, chunk.subarray(0, from)])
      if (joined.length < characterLength(cut[0])) {
        cut = joined
        return true
      }
      if (!isUtf8(joined)) return false
    }
    const end = from + completeLength(chunk.subarray(from))
    if (!isUtf8(chunk.subarray(from, end))) return false
    cut = Buffer.from(chunk.subarray(end))
    return true
  }
  return {
    /** @param {Uint8Array} chunk */
    check(chunk) {
      valid = valid && check(chunk)
      return valid
    },
    end: () => valid && cut.length === 0,
  }
}

/** The length of the UTF-8 character that `lead` begins (1 for a byte that begins none). */
function characterLength(lead) {
  return lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
}

/** How many bytes of `bytes` come before a last character its end cuts (all, where none is cut). */
function completeLength(bytes) {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]
    if (byte < 0x80) break
    if (byte >= 0xc0) return characterLength(byte) > back ? bytes.length - back : bytes.length
  }
  return bytes.length
}

module.exports = { utf8Check }
