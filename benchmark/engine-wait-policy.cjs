'use strict'
// Preloaded by benchmark/engine-wait.mjs (`node --require`) into a child that runs `batchtok
// encode` or `encodeLineStream`: BATCHTOK_BENCH_WAIT=always makes it wait for the tokenizer's
// fastest engine from its first byte, `never` never, and `batchtok` leaves batchtok's own
// thresholds. It sets the thresholds of stream/engine-wait.js, the module both then require and
// read them from when a run or a stream starts.

const thresholds = require('../stream/engine-wait').WAIT_FOR_ENGINE_BYTES
const policy = process.env.BATCHTOK_BENCH_WAIT
if (!['always', 'never', 'batchtok'].includes(policy)) {
  throw new Error(`BATCHTOK_BENCH_WAIT is ${JSON.stringify(policy)}; expected always, never or batchtok`)
}
if (policy !== 'batchtok') {
  for (const kind of Object.keys(thresholds)) thresholds[kind] = policy === 'always' ? 0 : Infinity
}
