'use strict'
// When a stream waits for its tokenizer's fastest engine.
//
// A tokenizer encodes as soon as it is loaded, on its first engine, while its fastest engine is
// built on a thread of lower priority: a job that keeps every core encoding leaves the build almost
// no core, and runs on the first engine (a tenth to a twentieth of the speed for a tokenizer.json)
// for as long as it does. From `tokenizer.engineWaitBytes` of text (16 bytes per token of a
// tokenizer.json's vocabulary, 32 MiB for an encoding) waiting for `whenReady()` is faster; the
// addon's rule, in src/engine/engine_wait.rs, with the measurements. One batch call of that much
// waits by itself; a job of smaller calls decides on its total: the CLI on its input's size
// (cli/encode.js), a stream as it reads (here). Measured with `node benchmark/engine-wait.mjs`.

/**
 * A stream's wait. A stream does not know its length, only what it has read; one that has read
 * half of `engineWaitBytes` is taken to go on past it, a guess that costs little where it is
 * wrong: waiting too soon costs a stream at most the build's time, waiting too late the first
 * engine's slower speed on all it encodes until the build, starved of cores, is done. So the batch
 * with which the bytes handed over reach half of it waits for `whenReady()` before it starts, and
 * the build, once done, is not waited for again.
 */
class EngineWait {
  /** @param {import('../index').Tokenizer} tokenizer */
  constructor(tokenizer) {
    this.tokenizer = tokenizer
    this.limit = tokenizer.engineWaitBytes / 2
    this.handedOver = 0
    this.ready = false
  }

  /** Resolves once a batch of `bytes` may start; counts it as handed over. */
  async beforeBatch(bytes) {
    this.handedOver += bytes
    if (!this.ready && this.handedOver >= this.limit) {
      await this.tokenizer.whenReady()
      this.ready = true
    }
  }
}

module.exports = { EngineWait }
