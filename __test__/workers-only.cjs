// A process whose main thread never loads the addon: worker_threads load it, one after another and
// side by side, and exit. The first worker to load it is the thread that initialised the allocator
// compiled into it, and the process must outlive that thread. Prints the ids each worker got, as
// JSON, and exits 0; a crash shows as a signal or another exit code.
const { Worker } = require('node:worker_threads')
const { join } = require('node:path')

const script = join(__dirname, 'worker-encode.cjs')
const texts = ['hello world', 'Ünïcödé and 中文 text', ' '.repeat(50)]

function start() {
  const worker = new Worker(script, { workerData: { encoding: 'o200k_base' } })
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => (m === 'ready' ? resolve(worker) : reject(new Error(String(m)))))
    worker.once('error', reject)
  })
}

function ask(worker) {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.postMessage(texts)
  })
}

async function main() {
  const ids = []
  // One after another: each worker loads the addon after the one before has exited.
  for (let round = 0; round < 3; round++) {
    const worker = await start()
    ids.push(await ask(worker))
    await worker.terminate()
  }
  // Side by side: the first exits while the second goes on encoding.
  const first = await start()
  const second = await start()
  ids.push(await ask(first))
  await first.terminate()
  ids.push(await ask(second))
  await second.terminate()
  process.stdout.write(JSON.stringify(ids))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
