// A process whose main thread never loads the addon: worker_threads load it, one after another and
// side by side, and exit. The first worker to load it is the thread that initialised the allocator
// compiled into it, and the process must outlive that thread. Prints the texts and the ids each
// worker gave them, as JSON, and exits 0; a crash shows as a signal or another exit code.
const { startEncodeWorker, askWorker } = require('./worker-client.cjs')

const texts = ['hello world', 'Ünïcödé and 中文 text', ' '.repeat(50)]

async function main() {
  const ids = []
  // One after another: each worker loads the addon after the one before has exited.
  for (let round = 0; round < 3; round++) {
    const worker = await startEncodeWorker('o200k_base')
    ids.push(await askWorker(worker, texts))
    await worker.terminate()
  }
  // Side by side: the first exits while the second goes on encoding.
  const first = await startEncodeWorker('o200k_base')
  const second = await startEncodeWorker('o200k_base')
  ids.push(await askWorker(first, texts))
  await first.terminate()
  ids.push(await askWorker(second, texts))
  await second.terminate()
  process.stdout.write(JSON.stringify({ texts, ids }))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
