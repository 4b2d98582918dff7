'use strict'
// A JSONL record longer than a batch, read as it streams in instead of held whole.
//
// The record's text field is decoded as its bytes come and handed over in parts, cut where the
// tokenizer allows (`lastSafeCut`, as a long line of text is), so that its memory is a batch's
// whatever its length; under a truncation that keeps a text's first ids, as the one start of it
// that `keptByTruncation` finds, the text after it decoded (and so checked) and dropped. What is
// held of the rest is the record's *outline*: its bytes with the content of every string value
// taken out, its keys, numbers, literals, brackets and white space kept. At the record's end the
// outline goes to the addon's JSONL reader as a batch of one line (`recordOutline`), which checks
// the record's grammar, finds the field's last value and lists the keys in an error, as it does
// for every other record; the field is empty there, and the batch is encoded without template
// tokens where it goes on the document, so that it ends the document without adding ids.
//
// The invariants that make the outline's answer the record's:
// - A string with its content taken out is still a string: the outline is well-formed JSON where
//   the record is, with the same keys in the same order and the same kind of value under each.
//   A grammar error the reader finds in it is the record's, at the column that the removals,
//   added back, give (`reasonOf`).
// - What the outline no longer holds is checked here as it passes, with the reader's messages and
//   columns: each removed string's escapes and control characters, and the record's UTF-8. As the
//   reader checks a line's UTF-8 before its grammar, and its grammar from the start, a string that
//   is not JSON is reported once the whole line is read, and only where the line is UTF-8 and the
//   outline up to that string has no error before it.
// - The text handed over is the field's last string value at the record's top level, as
//   JSON.parse reads it. Where the field comes again after parts of an earlier value were handed
//   over, the next batch says `restarts`: its reader drops the ids of the document it holds open
//   (the CLI's writer, a consumer of `encodeLineStream`).
//
// The readers of lines that hand such a record over are the CLI's (`lineBatches`) and the
// stream's (`batchLines`); each gives the reader a `source` of its own, on which `end()` leaves
// `reasonOf`, for the error the addon gives the outline.

const { textParts } = require('./cuts')
const { utf8Check } = require('./utf8-check')

const QUOTE = 0x22
const NEWLINE = 0x0a
const BACKSLASH = 0x5c
const FIRST_PRINTABLE = 0x20

/** Room for decoded text beyond the bytes read: a high surrogate read before them, written as
 * U+FFFD where they show it has no low half, is 3 bytes. */
const DECODED_SLACK = 4

/** The byte each one-character escape stands for (`\n` → 0x0a), by the character after `\`. */
const SIMPLE_ESCAPES = new Map([
  [0x22, 0x22],
  [0x5c, 0x5c],
  [0x2f, 0x2f],
  [0x62, 0x08],
  [0x66, 0x0c],
  [0x6e, 0x0a],
  [0x72, 0x0d],
  [0x74, 0x09],
])

/** The reader's words for what may follow a backslash. */
const ESCAPES_EXPECTED = 'an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX'

/** What a string is to the record, which decides what happens to its content. */
const KEY = 0
const VALUE = 1
const FIELD = 2

/** Where the reader is: outside strings, in a string's plain text, after `\`, in `\u`'s digits. */
const OUTSIDE = 0
const TEXT = 1
const ESCAPE = 2
const HEX = 3

/** The column in a message of the addon's JSONL reader. */
const COLUMN = /at column (\d+)\)$/

/** An error about the record the reader is on, placed as the addon places a line's. */
function recordError(source, code, reason) {
  return Object.assign(new Error(reason), { code, reason, lineIndex: 0, source })
}

/**
 * Reads one long JSONL record as its bytes come: `push(bytes)` takes the next bytes of the line
 * (its newline not included) and `end()` its end, each returning the batches that are ready (see
 * the module's comment). Throws on bytes that are not UTF-8, as the addon's reader does before it
 * reads any JSON; a string that is not JSON is reported through the outline (`end`).
 */
class LongRecord {
  /**
   * @param {{ field: string, batchBytes: number, cutLine: (bytes: Uint8Array, from: number) => number,
   *   keptLine?: (bytes: Uint8Array) => number, source: object }} options `source`: an object of
   *   the caller's for this record, which its batches and errors carry, and on which `end()` leaves
   *   `reasonOf`; `keptLine`: the start of the field's text whose ids a truncation keeps, asked
   *   where `cutLine` finds no place
   */
  constructor({ field, batchBytes, cutLine, keptLine, source }) {
    this.field = field
    this.batchBytes = batchBytes
    this.cutLine = cutLine
    this.keptLine = keptLine
    this.source = source
    this.utf8 = utf8Check()
    /** Bytes of the record read so far. */
    this.read = 0

    this.state = OUTSIDE
    /** Open objects (`{`) and arrays (`[`), innermost last. */
    this.open = []
    /** Whether the next string in the innermost object is a key. */
    this.expectKey = false
    /** Whether the value after the next `:` is the field's (its key read at the top level). */
    this.fieldKeyRead = false
    /** Whether the next value starts the field's. */
    this.fieldValueNext = false
    this.role = VALUE
    /** The raw bytes of a top-level key being read. */
    this.keyBytes = []
    /** The record column of a control character in the string being read, or -1. */
    this.controlColumn = -1
    /** The escape's `\u` digits read so far, and their value. */
    this.hexDigits = 0
    this.hexValue = 0
    /** A high surrogate whose low half may follow (the field's text only), or -1. */
    this.highSurrogate = -1
    /** Where the string being read opened: the record offset of its quote, and the outline's
     * length through that quote. */
    this.stringAt = 0
    this.stringOutlineEnd = 0
    /** The first string found not to be JSON: the reader's message for it, and where it opened. */
    this.failure = null

    /** The outline's pieces; each removal's outline offset and length, in order. */
    this.outline = []
    this.outlineBytes = 0
    this.removedAt = []
    this.removedBytes = []
    /** Where the string whose content is being removed opened (record offset of its quote). */
    this.removalStart = -1

    /** The field's text decoded from the bytes being read: `decoded[0..decodedBytes]`. Never
     * longer than those bytes (an escape is longer than what it stands for), but for a U+FFFD. */
    this.decoded = null
    this.decodedBytes = 0
    this.startField()
    /** Whether parts of the field's text were handed over, and whether the next batch restarts. */
    this.handedOver = false
    this.restartNext = false
    this.ready = []
  }

  /**
   * Takes the next bytes of the record.
   * @param {Buffer} bytes valid until the caller's next read: whatever is kept is copied
   * @returns {object[]} the batches ready
   */
  push(bytes) {
    if (!this.utf8.check(bytes)) throw recordError(this.source, 'ERR_NOT_UTF8', 'the text is not UTF-8')
    // Past a string that is not JSON only the UTF-8 is checked, and no more text handed over.
    if (this.failure === null) {
      this.decoded = Buffer.allocUnsafe(bytes.length + DECODED_SLACK)
      this.scan(bytes)
      if (this.failure === null) this.flushDecoded()
    }
    this.read += bytes.length
    return this.take()
  }

  /**
   * Takes the next bytes read, up to the record's line end where they hold it.
   * @param {Buffer} bytes as `push` takes them
   * @returns {{ batches: object[], rest: Buffer | null }} the batches ready (the record's last ones
   *   where its line ends here), and the bytes after its line end (null where it goes on)
   */
  pushToLineEnd(bytes) {
    const newline = bytes.indexOf(NEWLINE)
    if (newline === -1) return { batches: this.push(bytes), rest: null }
    const batches = this.push(bytes.subarray(0, newline))
    return { batches: batches.concat(this.end()), rest: bytes.subarray(newline + 1) }
  }

  /**
   * The record's end: the rest of its text, then its outline, which ends the document. After a
   * string that is not JSON, the outline up to that string alone, which the reader finds an error
   * in, at that string at the latest.
   * @returns {object[]}
   */
  end() {
    if (!this.utf8.end()) throw recordError(this.source, 'ERR_NOT_UTF8', 'the text is not UTF-8')
    // The line ended inside a string, as the addon's reader says it: where an escape or its
    // digits were due, or (a control character before it or not) where the quote was.
    if (this.failure === null && this.state !== OUTSIDE) {
      if (this.state === ESCAPE) this.fail(ESCAPES_EXPECTED, this.read + 1)
      else if (this.state === HEX) this.fail('four hex digits after \\u', this.read + 1 - this.hexDigits)
      else this.fail("'\"' to end the string", this.read + 1)
    }
    let outline = Buffer.concat(this.outline, this.outlineBytes)
    this.outline = []
    if (this.failure === null) {
      const rest = this.parts.rest()
      if (rest.length > 0) this.handOver(rest)
    } else {
      outline = outline.subarray(0, this.stringOutlineEnd)
    }
    this.source.reasonOf = this.reasonOf.bind(this)
    this.ready.push(this.batch({ lines: outline, format: 'jsonl', field: this.field, recordOutline: true }))
    return this.take()
  }

  /**
   * The record's reason for the reason the addon's reader gave for its outline: the column the
   * record has; after a string that is not JSON, that string's error unless the reader's is before
   * it.
   * @param {string} reason
   */
  reasonOf(reason) {
    const match = COLUMN.exec(reason)
    if (match === null) return reason
    const outlineColumn = Number(match[1])
    let column = outlineColumn
    for (let i = 0; i < this.removedAt.length && this.removedAt[i] < outlineColumn; i++) column += this.removedBytes[i]
    if (this.failure !== null && column > this.failure.stringAt + 1) return this.failure.reason
    return reason.replace(COLUMN, `at column ${column})`)
  }

  /** Records that the string being read is not JSON: what the reader expected, at which column. */
  fail(expected, column) {
    this.failure = { reason: `malformed JSON (expected ${expected} at column ${column})`, stringAt: this.stringAt }
  }

  /** Reads `bytes`: the structure, each string's content, the outline's pieces. */
  scan(bytes) {
    const length = bytes.length
    /** Where in `bytes` the outline's next piece starts; -1 while a string's content is removed. */
    let keepFrom = this.removalStart === -1 ? 0 : -1
    let i = 0
    scanning: while (i < length) {
      switch (this.state) {
        case OUTSIDE: {
          const byte = bytes[i]
          if (byte === QUOTE) {
            this.stringAt = this.read + i
            this.stringOutlineEnd = this.outlineBytes + i + 1 - keepFrom
            this.openString()
            if (this.role !== KEY) {
              this.keep(bytes, keepFrom, i + 1)
              this.removalStart = this.read + i
              keepFrom = -1
            }
          } else {
            this.structure(byte)
          }
          i++
          break
        }
        case TEXT: {
          const runStart = i
          let byte = bytes[i]
          if (this.role === FIELD) {
            // The text is copied as it is read: most of a long record's bytes are here.
            if (this.highSurrogate !== -1 && byte >= FIRST_PRINTABLE && byte !== QUOTE && byte !== BACKSLASH) this.lowSurrogateMissing()
            const decoded = this.decoded
            let written = this.decodedBytes
            while (byte >= FIRST_PRINTABLE && byte !== QUOTE && byte !== BACKSLASH) {
              decoded[written++] = byte
              if (++i === length) break
              byte = bytes[i]
            }
            this.decodedBytes = written
          } else {
            while (byte >= FIRST_PRINTABLE && byte !== QUOTE && byte !== BACKSLASH) {
              if (++i === length) break
              byte = bytes[i]
            }
            if (this.role === KEY && i > runStart) this.keyBytes.push(Buffer.from(bytes.subarray(runStart, i)))
          }
          if (i === length) break
          if (byte < FIRST_PRINTABLE) {
            if (this.controlColumn === -1) this.controlColumn = this.read + i + 1
            i++
            break
          }
          if (this.controlColumn !== -1) {
            this.fail('no control character in a string (write it escaped)', this.controlColumn)
            break scanning
          }
          if (byte === BACKSLASH) {
            this.state = ESCAPE
            i++
            break
          }
          // The closing quote.
          this.lowSurrogateMissing()
          if (this.role === KEY) this.closeKey()
          else {
            this.removedAt.push(this.outlineBytes)
            this.removedBytes.push(this.read + i - this.removalStart - 1)
            this.removalStart = -1
            keepFrom = i
          }
          this.state = OUTSIDE
          i++
          break
        }
        case ESCAPE: {
          const byte = bytes[i]
          if (byte === 0x75 && i + 4 < length) {
            // `\uXXXX` whole in this read, as nearly every one is: read at once.
            const first = hexDigit(bytes[i + 1])
            const second = hexDigit(bytes[i + 2])
            const third = hexDigit(bytes[i + 3])
            const fourth = hexDigit(bytes[i + 4])
            // A digit that is not one is -1, and makes the `or` negative.
            if ((first | second | third | fourth) >= 0) {
              this.codeUnit((first << 12) | (second << 8) | (third << 4) | fourth)
              this.state = TEXT
              i += 5
              break
            }
          }
          if (byte === 0x75) {
            this.state = HEX
            this.hexDigits = 0
            this.hexValue = 0
          } else {
            const decoded = SIMPLE_ESCAPES.get(byte)
            if (decoded === undefined) {
              this.fail(ESCAPES_EXPECTED, this.read + i + 1)
              break scanning
            }
            this.lowSurrogateMissing()
            if (this.role === FIELD) this.decodedByte(decoded)
            else if (this.role === KEY) this.keyBytes.push(Buffer.from([BACKSLASH, byte]))
            this.state = TEXT
          }
          i++
          break
        }
        case HEX: {
          const digit = hexDigit(bytes[i])
          if (digit === -1) {
            this.fail('four hex digits after \\u', this.read + i + 1 - this.hexDigits)
            break scanning
          }
          this.hexValue = this.hexValue * 16 + digit
          if (++this.hexDigits === 4) {
            this.codeUnit(this.hexValue)
            this.state = TEXT
          }
          i++
          break
        }
      }
    }
    this.keep(bytes, keepFrom, length)
  }

  /** Appends `bytes[from..to]` to the outline (a copy), unless `from` is -1. */
  keep(bytes, from, to) {
    if (from === -1 || to <= from) return
    this.outline.push(Buffer.from(bytes.subarray(from, to)))
    this.outlineBytes += to - from
  }

  /** A byte outside strings: follows the nesting, and which value is the field's. */
  structure(byte) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) return
    if (byte === 0x3a) {
      // `:` after a key: the value after it is the field's where the key was, at the top.
      this.fieldValueNext = this.fieldKeyRead
      this.fieldKeyRead = false
      this.expectKey = false
      return
    }
    this.fieldValueNext = false
    if (byte === 0x7b) {
      this.open.push(byte)
      this.expectKey = true
    } else if (byte === 0x5b) {
      this.open.push(byte)
      this.expectKey = false
    } else if (byte === 0x7d || byte === 0x5d) {
      this.open.pop()
      this.expectKey = false
    } else if (byte === 0x2c) {
      this.expectKey = this.open[this.open.length - 1] === 0x7b
    }
  }

  /** A string opens (its quote read): what it is to the record. */
  openString() {
    this.state = TEXT
    this.controlColumn = -1
    this.highSurrogate = -1
    if (this.expectKey && this.open[this.open.length - 1] === 0x7b) {
      this.role = KEY
      this.keyBytes = []
      this.expectKey = false
    } else {
      this.role = this.fieldValueNext ? FIELD : VALUE
      this.fieldValueNext = false
    }
  }

  /** A key closes: at the top level, whether it names the field. */
  closeKey() {
    if (this.open.length !== 1) return
    const raw = Buffer.concat(this.keyBytes).toString('utf8')
    // The key's escapes were checked as it was read, so it parses.
    if (JSON.parse(`"${raw}"`) !== this.field) return
    this.fieldKeyRead = true
    // The field again: its earlier value no longer counts.
    this.startField()
    this.decodedBytes = 0
    if (this.handedOver) {
      this.restartNext = true
      this.handedOver = false
    }
  }

  /** A `\uXXXX` escape's code unit: a character, or half of one. */
  codeUnit(unit) {
    if (this.role === KEY) {
      this.keyBytes.push(Buffer.from(`\\u${unit.toString(16).padStart(4, '0')}`))
      return
    }
    if (this.role !== FIELD) return
    if (this.highSurrogate !== -1) {
      if (unit >= 0xdc00 && unit <= 0xdfff) {
        this.decodedCharacter(0x10000 + ((this.highSurrogate - 0xd800) << 10) + (unit - 0xdc00))
        this.highSurrogate = -1
        return
      }
      this.lowSurrogateMissing()
    }
    if (unit >= 0xd800 && unit <= 0xdbff) this.highSurrogate = unit
    else this.decodedCharacter(unit >= 0xdc00 && unit <= 0xdfff ? 0xfffd : unit)
  }

  /** A high surrogate not followed by a low one is U+FFFD, as V8 writes a lone one as UTF-8. */
  lowSurrogateMissing() {
    if (this.highSurrogate === -1) return
    this.highSurrogate = -1
    this.decodedCharacter(0xfffd)
  }

  /** Writes `codePoint` as UTF-8 (JSON written by Python escapes every character past ASCII, so
   * this is as hot as the plain text can be). */
  decodedCharacter(codePoint) {
    const decoded = this.decoded
    let at = this.decodedBytes
    if (codePoint < 0x80) {
      decoded[at++] = codePoint
    } else if (codePoint < 0x800) {
      decoded[at++] = 0xc0 | (codePoint >> 6)
      decoded[at++] = 0x80 | (codePoint & 0x3f)
    } else if (codePoint < 0x10000) {
      decoded[at++] = 0xe0 | (codePoint >> 12)
      decoded[at++] = 0x80 | ((codePoint >> 6) & 0x3f)
      decoded[at++] = 0x80 | (codePoint & 0x3f)
    } else {
      decoded[at++] = 0xf0 | (codePoint >> 18)
      decoded[at++] = 0x80 | ((codePoint >> 12) & 0x3f)
      decoded[at++] = 0x80 | ((codePoint >> 6) & 0x3f)
      decoded[at++] = 0x80 | (codePoint & 0x3f)
    }
    this.decodedBytes = at
  }

  decodedByte(byte) {
    this.decoded[this.decodedBytes++] = byte
  }

  /** Holds the text decoded from the bytes read (a buffer of their own, not copied again), and
   * hands over a part of what is held once a batch of it has a place to cut. */
  flushDecoded() {
    if (this.decodedBytes > 0 && !this.startKept) {
      const part = this.parts.add(this.decoded.subarray(0, this.decodedBytes))
      if (part !== null) this.handOver(part)
      else this.keepStart()
    }
    this.decoded = null
    this.decodedBytes = 0
  }

  /** For a field's value beginning: none of its text held, no start of it kept. */
  startField() {
    /** The field's text held, not yet handed over. */
    this.parts = textParts(this.cutLine, this.batchBytes, this.keptLine)
    /** Whether the start of the field's text that `keptLine` found was handed over: the text
     * after it is decoded (and so checked) but dropped. */
    this.startKept = false
  }

  /** Hands over the start of the field's text held that `keptLine` finds, where it is asked now
   * and finds one, as the one part of the document (the outline ends it). */
  keepStart() {
    const kept = this.parts.keptStart()
    if (kept === null) return
    this.handOver(kept.start)
    this.startKept = true
  }

  /** Hands over `text`, a part of the field's value, as a batch that `continues`. */
  handOver(text) {
    this.ready.push(this.batch({ bytes: text, offsets: Uint32Array.of(0, text.length), continues: true }))
    this.handedOver = true
  }

  /** `batch` with the record's source, saying `restarts` where the field came again. */
  batch(batch) {
    const placed = { ...batch, source: this.source }
    if (this.restartNext) {
      placed.restarts = true
      this.restartNext = false
    }
    return placed
  }

  take() {
    const ready = this.ready
    this.ready = []
    return ready
  }
}

/** The value of a hex digit's byte, or -1. */
function hexDigit(byte) {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30
  const lower = byte | 0x20
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10
  return -1
}

module.exports = { LongRecord }
