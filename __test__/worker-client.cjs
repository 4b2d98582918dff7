// The parent's side of worker-encode.cjs: starts a worker that loads the addon, and asks it to
// encode. Shared by workers.spec.ts and workers-only.cjs.
const { Worker } = require('node:worker_threads')
const { join } = require('node:path')

const script = join(__dirname, 'worker-encode.cjs')

/** A worker that encodes with `encoding`, once it has loaded the addon. */
function startEncodeWorker(encoding) {
  const worker = new Worker(script, { workerData: { encoding } })
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => (m === 'ready' ? resolve(worker) : reject(new Error(String(m)))))
    worker.once('error', reject)
  })
}

/** The ids `worker` gives each of `texts`. */
function askWorker(worker, texts) {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.postMessage(texts)
  })
}

module.exports = { startEncodeWorker, askWorker }
