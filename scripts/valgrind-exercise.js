'use strict'
// The JS entry points of the addon, each used a little, for scripts/valgrind.sh: valgrind makes
// everything ~50x slower, so the inputs are small but reach every path that copies memory across
// the boundary (string batches, id buffers, the async tasks and their cancellation).
const assert = require('node:assert')
const path = require('node:path')
const { Tokenizer, Scheduler } = require(process.env.BATCHTOK_ADDON || path.join(__dirname, '..', 'index.js'))

const FIXTURES = path.join(__dirname, '..', '__test__', 'fixtures', 'tokenizers')
const texts = [
  'hello world',
  '',
  'naïve café 日本語 👨‍👩‍👧‍👦 <|endoftext|>',
  '\u{2028}\u{3000}  \t\n123456789',
  'x'.repeat(3000),
  '\u{a7d4}<M \u{1ccda}',
]

// VALGRIND_ROUNDS > 1 repeats the whole exercise: a leak that grows with the rounds is one per
// call, one that does not is what is still alive at exit.
const ROUNDS = Number(process.env.VALGRIND_ROUNDS || 1)

async function main() {
  for (let round = 0; round < ROUNDS; round++) await exercise()
  // Collect what the exercise left behind, so that memcheck's leak report holds only what was
  // never freed, not results still waiting for a collection at exit (each keeps two napi
  // references until its finalizer runs). Finalizers run after a collection, on a later turn.
  for (let pass = 0; pass < 3; pass++) {
    global.gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  console.log('valgrind exercise: done')
}

async function exercise() {
  for (const tokenizer of [
    Tokenizer.fromEncoding('cl100k_base'),
    Tokenizer.fromFile(path.join(FIXTURES, 'bert.json')),
    Tokenizer.fromFile(path.join(FIXTURES, 'unigram.json')),
  ]) {
    const batch = tokenizer.encodeBatchSync(texts)
    const counts = tokenizer.countBatchSync(texts)
    const asyncBatch = await tokenizer.encodeBatch(texts)
    const asyncCounts = await tokenizer.countBatch(texts)
    for (let i = 0; i < texts.length; i++) {
      const ids = batch.get(i)
      assert.strictEqual(ids.length, counts[i])
      assert.deepStrictEqual(Array.from(asyncBatch.get(i)), Array.from(ids))
      assert.strictEqual(asyncCounts[i], counts[i])
      assert.deepStrictEqual(Array.from(tokenizer.encode(texts[i])), Array.from(ids))
      tokenizer.decode(ids)
    }
    await tokenizer.decodeBatch(batch.toArrays())
    assert.throws(() => tokenizer.decode([tokenizer.idLimit]), RangeError)

    // Cancellation: one signal that never fires before its calls settle (its listener is added
    // and removed each time), one fired before the call, one during it.
    const idle = new AbortController()
    await tokenizer.encodeBatch(texts, { signal: idle.signal })
    await tokenizer.countBatch(texts, { signal: idle.signal })
    idle.abort()
    const fired = new AbortController()
    fired.abort()
    await assert.rejects(tokenizer.encodeBatch(texts, { signal: fired.signal }), { name: 'AbortError' })
    const midway = new AbortController()
    const many = Array.from({ length: 2000 }, (_, i) => texts[i % texts.length])
    const pending = tokenizer.countBatch(many, { signal: midway.signal })
    midway.abort()
    await pending.catch((e) => assert.strictEqual(e.name, 'AbortError'))
  }

  // A scheduler of its own, used and dropped.
  const scheduler = new Scheduler({ threads: 2 })
  const o200k = Tokenizer.fromEncoding('o200k_base')
  await o200k.encodeBatch(texts, { scheduler })
}

main().catch((e) => {
  console.error(e)
  process.exit(2)
})
