'use strict'
// The encoding of a run's batches: several batches at once, each encoded whole by one thread, and
// their ids handed on in input order.
//
// A batch spread over every thread ends with a tail where some threads wait for the last
// segments. One thread per batch, `concurrency` batches at once (the threads, and a spare one
// when they take every core: cli/encode.js), keeps the cores encoding without such tails, each
// thread with its own working memory for a whole batch; and a batch starts as soon as a running
// one ends, not when the writer takes the oldest, so the encoding threads do not wait for the
// reading or the writing either.

const { bytesIn, encodeChecked, followsCut } = require('../stream/encode-batch')
const timeline = require('./timeline')

/**
 * Encodes `batches` and yields their `TokenBatch`es in input order. At most `concurrency`
 * batches encode at once (`startConcurrency` until `ready` settles: while an engine is built on a
 * core of its own), each on `scheduler`; at most twice that many are held, encoding or waiting to
 * be taken, and one more is read ahead. An error (reading, or encoding a batch) is thrown where
 * its batch comes in order, after the batches before it have been yielded.
 *
 * A batch larger than `startBatchBytes` waits for `ready` too: a long document handed over while
 * the engine is built is encoded by the slower first engine, for much or all of its length (one of
 * 200 MB took twice as long).
 * @param {import('../index').Tokenizer} tokenizer
 * @param {AsyncIterable<object>} batches `DocumentBatch`es (see batchtok/stream)
 * @param {{ encoding?: object, concurrency: number, startConcurrency?: number,
 *   startBatchBytes?: number, ready?: Promise<unknown> }} options `encoding`: how each batch is
 *   encoded (the stream's `encodeChecked`: `scheduler`, `encodeOptions`, `template`, `eosId`);
 *   a batch that goes on the document the batch before left open is encoded with `afterCut`
 * @returns {AsyncGenerator<object>}
 */
async function* encodeInOrder(
  tokenizer,
  batches,
  { encoding = {}, concurrency, startConcurrency = concurrency, startBatchBytes = Infinity, ready = Promise.resolve() },
) {
  const iterator = batches[Symbol.asyncIterator]()
  /** Started batches in input order, each a promise of its `TokenBatch`. */
  const started = []
  let running = 0
  /** A batch read and not yet started. */
  let next = null
  /** Whether `next` goes on the document the batch read before it left open. */
  let nextAfterCut = false
  const afterCut = followsCut()
  /** The read in progress, if one is. */
  let reading = null
  let ended = false
  let readError = null
  let engineReady = false
  let readyError = null
  let stopped = false
  /** Batches read, and batches started: a batch's number, for the timeline. */
  let readCount = 0
  let startedCount = 0

  const limit = () => (engineReady ? concurrency : startConcurrency)
  /** Starts what may start, and reads the batch after. Called whenever a batch ends or is read. */
  const pump = () => {
    if (stopped) return
    while (next !== null && running < limit() && started.length < 2 * limit() && (engineReady || bytesIn(next) <= startBatchBytes)) {
      const batch = startedCount++
      timeline.mark('encode', { batch }, batch === 0)
      const encoded = encodeChecked(tokenizer, next, encoding, nextAfterCut)
      next = null
      running++
      // A rejection is taken where the consumer awaits it, in order; until then it must not
      // count as unhandled.
      encoded.catch(() => {}).finally(() => {
        timeline.mark('encoded', { batch })
        running--
        pump()
      })
      started.push(encoded)
    }
    if (next === null && reading === null && !ended) {
      reading = iterator.next().then(
        ({ value, done }) => {
          reading = null
          if (done) {
            ended = true
          } else {
            timeline.mark('read', { batch: readCount++ })
            next = value
            nextAfterCut = afterCut(value)
          }
          pump()
        },
        (error) => {
          reading = null
          ended = true
          readError = error
        },
      )
    }
  }
  ready.then(
    () => {
      engineReady = true
      pump()
    },
    (error) => {
      engineReady = true
      readyError = error
    },
  )

  try {
    while (true) {
      pump()
      if (readyError !== null) throw readyError
      if (started.length > 0) {
        const batch = await started[0]
        started.shift()
        yield batch
      } else if (reading !== null) {
        await reading
      } else if (next !== null) {
        // Read and too large to start before the engine is ready.
        await ready.catch(() => {})
      } else if (readError !== null) {
        throw readError
      } else {
        // Nothing started, nothing read and no read under way: the input has ended.
        return
      }
    }
  } finally {
    // An early return or an error leaves batches running and perhaps a read: wait for them, so
    // that no work outlives the generator, then close the input.
    stopped = true
    await Promise.allSettled(started)
    if (reading !== null) await reading
    await iterator.return?.()
  }
}

module.exports = { encodeInOrder }
