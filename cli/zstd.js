'use strict'
// Decompressing a zstd stream of any number of frames, as the zstd command does.
//
// A .zst file may hold several frames back to back (files joined with `cat`, pzstd's output,
// which is a frame per part) and skippable frames between them. Node's own zstd decompressor
// (22.15 / 23.8 on) ends its output at the end of the first frame and drops the rest without an
// error, and takes a file cut inside a frame, or followed by bytes that are no frame, as
// complete. So the frames are found here first, by their headers and block headers, which give
// every frame's length without decoding it, and each frame is decoded by a fresh decompressor of
// Node's: every frame is read, a cut frame and bytes that are no frame are errors, and a
// skippable frame is passed over. fzstd, the decompressor where Node has none, reads frames back
// to back itself.

const { Transform } = require('node:stream')
const { finished } = require('node:stream/promises')
const zlib = require('node:zlib')

const FRAME_MAGIC = 0xfd2fb528
/** Skippable frames have the magic numbers 0x184D2A50 to 0x184D2A5F. */
const SKIPPABLE_MAGIC = 0x184d2a50
const SKIPPABLE_MAGIC_MASK = 0xfffffff0
/** A block type that the format reserves: no valid frame has one. */
const RESERVED_BLOCK = 3
const RLE_BLOCK = 1

/** What the walker expects next. */
const MAGIC = 'magic'
const FRAME_HEADER_DESCRIPTOR = 'frame header descriptor'
const BLOCK_HEADER = 'block header'
const SKIPPABLE_SIZE = 'skippable size'
/** Bytes passed over (the rest of a frame header, a block's payload, a checksum, a skippable
 * frame's data), then `after`. */
const PASS = 'pass'
const FRAME_END = 'frame end'

/**
 * Finds the frames of a zstd stream fed to it a chunk at a time. `pieces(chunk)` gives the
 * chunk cut where frames end: `{ bytes, skippable, frameEnds }`, `bytes` a view of the chunk;
 * `end()` throws where the stream stops inside a frame. Bytes where a frame should start that
 * are no frame's magic number throw, naming their place.
 */
class ZstdFrames {
  constructor() {
    /** Bytes walked from the stream's start. */
    this.position = 0
    this.frameStart = 0
    this.skippable = false
    this.expect(MAGIC, 4)
  }

  /** Expects `state`, whose field is `bytes` long (for PASS: passed over), then `after`. */
  expect(state, bytes, after = null) {
    this.state = state
    this.need = bytes
    this.field = []
    this.after = after
    if (state === PASS && bytes === 0) this.expect(...after)
  }

  /** The field `this.field` complete: what it says comes next. */
  read() {
    const f = this.field
    switch (this.state) {
      case MAGIC: {
        const magic = (f[0] | (f[1] << 8) | (f[2] << 16) | (f[3] << 24)) >>> 0
        this.frameStart = this.position - 4
        if (magic === FRAME_MAGIC) {
          this.skippable = false
          return this.expect(FRAME_HEADER_DESCRIPTOR, 1)
        }
        if (((magic & SKIPPABLE_MAGIC_MASK) >>> 0) === SKIPPABLE_MAGIC) {
          this.skippable = true
          return this.expect(SKIPPABLE_SIZE, 4)
        }
        throw new Error(`bytes that are not a zstd frame at byte ${this.frameStart}`)
      }
      case FRAME_HEADER_DESCRIPTOR: {
        const descriptor = f[0]
        const contentSizeFlag = descriptor >> 6
        const singleSegment = (descriptor >> 5) & 1
        this.checksum = (descriptor >> 2) & 1
        const windowBytes = singleSegment ? 0 : 1
        const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]
        const contentSizeBytes = contentSizeFlag === 0 ? singleSegment : [0, 2, 4, 8][contentSizeFlag]
        return this.expect(PASS, windowBytes + dictionaryBytes + contentSizeBytes, [BLOCK_HEADER, 3])
      }
      case BLOCK_HEADER: {
        const header = f[0] | (f[1] << 8) | (f[2] << 16)
        const last = header & 1
        const type = (header >> 1) & 3
        if (type === RESERVED_BLOCK) throw new Error(`a zstd block of the reserved type in the frame at byte ${this.frameStart}`)
        // An RLE block's size is that of its output; its payload is the one byte repeated.
        const payload = type === RLE_BLOCK ? 1 : header >>> 3
        const next = !last ? [BLOCK_HEADER, 3] : this.checksum ? [PASS, 4, [FRAME_END, 0]] : [FRAME_END, 0]
        return this.expect(PASS, payload, next)
      }
      case SKIPPABLE_SIZE:
        return this.expect(PASS, (f[0] | (f[1] << 8) | (f[2] << 16) | (f[3] << 24)) >>> 0, [FRAME_END, 0])
    }
  }

  /** `chunk` cut where frames end (see the class). */
  *pieces(chunk) {
    let at = 0
    let from = 0
    while (at < chunk.length || this.state === FRAME_END) {
      if (this.state === FRAME_END) {
        yield { bytes: chunk.subarray(from, at), skippable: this.skippable, frameEnds: true }
        from = at
        this.expect(MAGIC, 4)
        continue
      }
      if (this.state === PASS) {
        const taken = Math.min(this.need, chunk.length - at)
        at += taken
        this.position += taken
        this.need -= taken
        if (this.need === 0) this.expect(...this.after)
        continue
      }
      this.field.push(chunk[at++])
      this.position++
      if (this.field.length === this.need) this.read()
    }
    if (from < at) yield { bytes: chunk.subarray(from, at), skippable: this.skippable, frameEnds: false }
  }

  /** Throws where the stream ends inside a frame. */
  end() {
    if (this.state !== MAGIC || this.field.length > 0) throw new Error('unexpected end of file')
  }
}

/** `bytes` written to `decoder`, resolved once it has taken them, rejected on its error. */
function written(decoder, bytes) {
  return new Promise((resolve, reject) => {
    decoder.once('error', reject)
    decoder.write(bytes, (error) => {
      decoder.off('error', reject)
      if (error) reject(error)
      else resolve()
    })
  })
}

/**
 * A Transform that decompresses a zstd stream of any number of frames with Node's decompressor
 * (see the module's docs), a fresh one for each frame.
 * @param {number} chunkSize the decompressor's output chunk size
 */
function nodeZstdFrames(chunkSize) {
  const frames = new ZstdFrames()
  let decoder = null
  const endFrame = async () => {
    const ending = decoder
    decoder = null
    ending.end()
    await finished(ending)
  }
  const stream = new Transform({
    async transform(chunk, _encoding, callback) {
      try {
        for (const { bytes, skippable, frameEnds } of frames.pieces(chunk)) {
          if (skippable) continue
          if (decoder === null) {
            decoder = zlib.createZstdDecompress({ chunkSize })
            decoder.on('data', (output) => stream.push(output))
            // Its errors come while a write or its end is awaited, which reject with them.
            decoder.on('error', () => {})
          }
          if (bytes.length > 0) await written(decoder, bytes)
          if (frameEnds) await endFrame()
        }
        callback()
      } catch (error) {
        callback(error)
      }
    },
    flush(callback) {
      try {
        frames.end()
        callback()
      } catch (error) {
        callback(error)
      }
    },
    destroy(error, callback) {
      decoder?.destroy()
      callback(error)
    },
  })
  return stream
}

/** fzstd's streaming `Decompress` as a Transform. */
function fzstdTransform() {
  const { Decompress } = require('fzstd')
  let decoder
  return new Transform({
    construct(callback) {
      decoder = new Decompress((chunk) => this.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length)))
      callback()
    },
    transform(chunk, _encoding, callback) {
      try {
        decoder.push(chunk)
        callback()
      } catch (error) {
        callback(error)
      }
    },
    flush(callback) {
      try {
        decoder.push(new Uint8Array(0), true)
        callback()
      } catch (error) {
        callback(error)
      }
    },
  })
}

/**
 * A zstd decompressor as a Node Transform: Node's own where it has one, a frame at a time, else
 * fzstd's, pure JS (the napi zstd packages fetch their binary at install, which offline installs
 * refuse); fzstd is the slower (benchmark/results/cli.md).
 * @param {number} chunkSize the output chunk size of Node's decompressor
 */
function zstdDecompressor(chunkSize) {
  return typeof zlib.createZstdDecompress === 'function' ? nodeZstdFrames(chunkSize) : fzstdTransform()
}

module.exports = { zstdDecompressor, ZstdFrames }
