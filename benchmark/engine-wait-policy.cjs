'use strict'
// Preloaded by benchmark/engine-wait.mjs (`node --require`) into a child that runs `batchtok
// encode` or `encodeLineStream`: BATCHTOK_BENCH_WAIT=always makes the job wait for the tokenizer's
// fastest engine from its first byte, `never` never, and `batchtok` leaves batchtok's own rule.
// It replaces the `engineWaitBytes` the CLI and the stream read, on the class both then use. A
// single batch call of at least the addon's own size still waits inside the addon, whatever the
// job's way.

const { Tokenizer } = require('../index.js')
const policy = process.env.BATCHTOK_BENCH_WAIT
if (!['always', 'never', 'batchtok'].includes(policy)) {
  throw new Error(`BATCHTOK_BENCH_WAIT is ${JSON.stringify(policy)}; expected always, never or batchtok`)
}
if (policy !== 'batchtok') {
  const bytes = policy === 'always' ? 0 : Infinity
  Object.defineProperty(Tokenizer.prototype, 'engineWaitBytes', { get: () => bytes, configurable: true })
}
