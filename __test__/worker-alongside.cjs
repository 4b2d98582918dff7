// Runs inside a worker_thread: loads another native addon (the napi-rs CLI's tar reader, a Rust
// cdylib with its own allocator) beside batchtok, uses both, and posts batchtok's ids back.
const { parentPort, workerData } = require('node:worker_threads')
const tar = require('@napi-rs/tar')
const { Tokenizer, allocator } = require('./load-addon.cjs')

const builder = new tar.Builder()
const tokenizer = Tokenizer.fromEncoding('o200k_base')
tokenizer.encodeBatch(workerData.texts).then((batch) => {
  parentPort.postMessage({ allocator: allocator(), ids: batch.toArrays(), tarLoaded: typeof builder === 'object' })
})
