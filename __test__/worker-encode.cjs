// Runs inside a worker_thread: loads the addon, encodes what it is sent, posts the ids back.
const { parentPort, workerData } = require('node:worker_threads')
const { Tokenizer } = require('./load-addon.cjs')

const tokenizer = Tokenizer.fromEncoding(workerData.encoding)
parentPort.on('message', async (texts) => {
  const batch = await tokenizer.encodeBatch(texts)
  parentPort.postMessage(batch.toArrays())
})
parentPort.postMessage('ready')
