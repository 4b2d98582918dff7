// Runs inside a worker_thread for the churn runs (scripts/reliability.js): loads the addon, and
// on each 'encode' encodes the texts it was started with and posts the digest of the ids. The
// parent terminates many of these in the middle of a batch. Each batch carries a signal that never
// fires, so a terminated worker also tears down a task still holding its abort listener
// (src/js/signal.rs).
const { parentPort, workerData } = require('node:worker_threads')
const { Tokenizer } = require('./load-addon.cjs')
const { digest } = require('../scripts/reliability.js')

const tokenizer = Tokenizer.fromEncoding(workerData.encoding)
const { signal } = new AbortController()
parentPort.on('message', async () => {
  const batch = await tokenizer.encodeBatch(workerData.texts, { signal })
  parentPort.postMessage(digest(batch))
})
parentPort.postMessage('ready')
