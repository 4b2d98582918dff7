'use strict'
// Searching a long line or document for a place to cut it, for the readers that hand one over in
// parts (the stream's `batchLines`, the CLI's `lineBatches` and `documentParts`), and reading past
// the rest of a long line whose start a truncation keeps.
// `Tokenizer.lastSafeCut` reads the character before a place and the character at it, so a
// search reads a few bytes before where it looks, and a place whose character was incomplete
// where the bytes read ended is found once the rest of it comes.

const { utf8Check } = require('./utf8-check')

const NEWLINE = 0x0a
/** A line's end, put after the start of a line that `keptLine` finds. */
const LINE_END = Buffer.from('\n')
/** A line end after a byte that is not UTF-8 (see `keptLineRest`). */
const NOT_UTF8_LINE_END = Buffer.from([0xff, NEWLINE])

/** How far before the end of the bytes searched a search starts again once more bytes come: a
 * place reads to the end of the character at it, or of the one after a space at it (`afterCut`),
 * and the last character may have been incomplete (a UTF-8 character is up to 4 bytes). */
const INCOMPLETE_BYTES = 4

/** The bytes before a chunk that a place in it, or one whose character began before it, reads. */
const CONTEXT_BYTES = 4 + INCOMPLETE_BYTES

/**
 * A cheap look at each new chunk of a line before searching all that is held of it: `in(chunk)`
 * says whether `cutLine` finds a place in the chunk or where it meets the bytes before it;
 * `read(chunk)` takes the chunk as the bytes before the next one. Every chunk is read, in order.
 * @param {(bytes: Uint8Array, from: number) => number} cutLine a tokenizer's `lastSafeCut`
 */
function chunkPlaces(cutLine) {
  let before = Buffer.alloc(0)
  return {
    /** @param {Uint8Array} chunk */
    in: (chunk) => cutLine(before.length === 0 ? chunk : Buffer.concat([before, chunk]), 0) > 0,
    /** @param {Uint8Array} chunk */
    read(chunk) {
      const kept = Buffer.concat([before, chunk.subarray(Math.max(0, chunk.length - CONTEXT_BYTES))])
      before = kept.subarray(Math.max(0, kept.length - CONTEXT_BYTES))
    },
  }
}

/**
 * One long text gathered a chunk at a time and handed on in parts: `add(chunk)` returns the part
 * ready to hand over, the text held up to the last place `cutLine` finds once `batchBytes` are held,
 * or null; text held with no place in it is searched again only once a new chunk may hold one
 * (`chunkPlaces`). Given `keptLine`, `keptStart()` is the start of the text whose ids its
 * truncation keeps, where it is asked now (`keptLineAsks`) and finds one, before any part was
 * handed over (a part leaves the text's start behind). `rest()` is the text held.
 * @param {(bytes: Uint8Array, from: number) => number} cutLine a tokenizer's `lastSafeCut`
 * @param {number} batchBytes
 * @param {(bytes: Uint8Array) => number} [keptLine] a tokenizer's `keptByTruncation`
 */
function textParts(cutLine, batchBytes, keptLine) {
  let held = []
  let heldBytes = 0
  /** Whether the text held has no place to cut: then only a new chunk is searched. */
  let searched = false
  const places = chunkPlaces(cutLine)
  const keptAsks = keptLineAsks(keptLine, batchBytes)
  /** The text held, as one buffer, which is then all that is held. */
  const joined = () => {
    if (held.length !== 1) held = [Buffer.concat(held, heldBytes)]
    return held[0]
  }
  return {
    /** @param {Buffer} chunk kept (not copied) until a part or the rest holds it */
    add(chunk) {
      held.push(chunk)
      heldBytes += chunk.length
      const skip = heldBytes < batchBytes || (searched && !places.in(chunk))
      places.read(chunk)
      if (skip) return null
      const text = joined()
      const cut = cutLine(text, 0)
      searched = cut <= 0
      if (cut <= 0) return null
      held = [text.subarray(cut)]
      heldBytes = held[0].length
      keptAsks.reset(Infinity)
      return text.subarray(0, cut)
    },
    /**
     * `{ start, rest }`: the start `keptLine` finds (a copy) and the text held after it, which is
     * then let go of; or null, where it is not asked now or finds none.
     */
    keptStart() {
      if (!keptAsks.due(heldBytes)) return null
      const text = joined()
      const kept = keptAsks.ask(text)
      if (kept <= 0) return null
      held = []
      heldBytes = 0
      return { start: Buffer.from(text.subarray(0, kept)), rest: text.subarray(kept) }
    },
    rest: () => Buffer.concat(held, heldBytes),
  }
}

/**
 * When a reader asks `keptLine` (a tokenizer's `keptByTruncation`) about a long text still being
 * read: once `batchBytes` of it are held, then only once what is held has doubled since an ask
 * found no start, so that a text with none is read through about once more, not at every chunk.
 * Never without `keptLine`.
 * @param {((bytes: Uint8Array) => number) | undefined} keptLine
 * @param {number} batchBytes
 */
function keptLineAsks(keptLine, batchBytes) {
  let from = batchBytes
  const due = (heldBytes) => keptLine !== undefined && heldBytes >= from
  return {
    /** Whether a text of which `heldBytes` are held is asked about now. */
    due,
    /** `keptLine(bytes)` where `bytes.length` is due, else -1. */
    ask(bytes) {
      if (!due(bytes.length)) return -1
      const kept = keptLine(bytes)
      from = kept > 0 ? batchBytes : 2 * bytes.length
      return kept
    },
    /** Starts over for the next text, or (`Infinity`) asks no more about this one. */
    reset(at = batchBytes) {
      from = at
    },
  }
}

/**
 * The rest of a long line whose start a reader hands over as the line (the start `keptLine`
 * found), read up to the line's end only to check that it is UTF-8: `read(bytes)` takes the next
 * bytes read and says where in them the line ends (-1: not in them); `line()` is then the start
 * as a line of its own, with a byte that is not UTF-8 before its end where the rest was not, so
 * that `encodeLines` refuses the line, and names it, as any such line.
 * @param {Uint8Array} start the start kept (copied: the reader's buffers may be reused)
 * @param {Uint8Array} rest the bytes of the line held after it
 */
function keptLineRest(start, rest) {
  const held = Buffer.from(start)
  const utf8 = utf8Check()
  utf8.check(rest)
  return {
    /** @param {Uint8Array} bytes */
    read(bytes) {
      const end = bytes.indexOf(NEWLINE)
      utf8.check(end === -1 ? bytes : bytes.subarray(0, end))
      return end
    },
    line: () => Buffer.concat([held, utf8.end() ? LINE_END : NOT_UTF8_LINE_END]),
  }
}

module.exports = { INCOMPLETE_BYTES, chunkPlaces, keptLineAsks, keptLineRest, textParts }
