'use strict'
// When a bulk job waits for its tokenizer's fastest engine.
//
// A tokenizer encodes as soon as it is loaded, on its first engine, while its fastest engine is
// built on a thread of lower priority (`whenReady()` resolves once it is: an encoding's full
// engine, a tokenizer.json's release candidate; src/engine/loading.rs). A job that keeps every
// core encoding leaves that thread almost no core, so the build is put off and the job runs on the
// first engine for as long as it keeps them busy. Below a size of input the first engine, on every
// core, ends the job sooner than the build would; from about it on, waiting is faster:
//
// - an encoding's first engine (tiktoken's BPE over the rank table) runs at half or more of the
//   full engine's speed, which is built in about half a second: from 32 MiB;
// - a tokenizer.json's first engine is the stable `tokenizers` crate, a tenth to a twentieth of
//   the release candidate's speed, whose build takes longer the larger the vocabulary (a tenth of
//   a second for Llama 2's 32,000 tokens, over a second for Gemma 3's 262,145): from 16 bytes per
//   token of the vocabulary (0.5 MiB for Llama 2's, 2 MiB for Llama 3's, 4 MiB for Gemma 3's).
//
// Measured on 2 cores with `node benchmark/engine-wait.mjs` (benchmark/results/engine-wait.md):
// from twice these sizes the CLI that waits was faster on every file measured, 1.3 to 4.9 times at
// 16-64 MiB of a tokenizer.json's input; about them, the two ways were within 0.15 s.

/** Bytes of input from which a job waits, by the kind of tokenizer (see the module's docs): for a
 * tokenizer.json, per token of its vocabulary. */
const WAIT_FOR_ENGINE_BYTES = { encoding: 32 << 20, tokenizerJsonPerToken: 16 }

/**
 * The bytes of input from which a job on `tokenizer` waits for its fastest engine: a Hugging Face
 * tokenizer.json's, by its vocabulary, or an encoding's (OpenAI's, a rank file's, a tekken.json's).
 * @param {import('../index').Tokenizer} tokenizer
 */
function waitForEngineBytes(tokenizer) {
  if (tokenizer.name === 'tokenizer.json') return WAIT_FOR_ENGINE_BYTES.tokenizerJsonPerToken * tokenizer.vocabSize
  return WAIT_FOR_ENGINE_BYTES.encoding
}

/**
 * A stream's wait. A stream does not know its length, only what it has read; one that has read
 * half of `waitForEngineBytes` is taken to go on past it, a guess that costs little where it is
 * wrong: waiting too soon costs a stream at most the build's time, waiting too late the first
 * engine's slower speed on all it encodes until the build, starved of cores, is done. So the batch
 * with which the bytes handed over reach half of it waits for `whenReady()` before it starts, and
 * the build, once done, is not waited for again.
 */
class EngineWait {
  /** @param {import('../index').Tokenizer} tokenizer */
  constructor(tokenizer) {
    this.tokenizer = tokenizer
    this.limit = waitForEngineBytes(tokenizer) / 2
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

module.exports = { EngineWait, WAIT_FOR_ENGINE_BYTES, waitForEngineBytes }
