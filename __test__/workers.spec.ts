// The addon in several worker_threads at once, including workers terminated mid-batch, and in
// worker_threads alone, the process's main thread never loading it.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'

import { batchtok, corpus } from './helpers'

const require = createRequire(import.meta.url)
const { startEncodeWorker, askWorker } = require('./worker-client.cjs') as {
  startEncodeWorker(encoding: string): Promise<Worker>
  askWorker(worker: Worker, texts: string[]): Promise<number[][]>
}

describe('worker_threads', () => {
  it('encode the same as the main thread in four workers at once', async () => {
    const texts = corpus.bigShortItems().slice(0, 3000)
    const expected = batchtok.Tokenizer.fromEncoding('cl100k_base').encodeBatchSync(texts).toArrays()
    const workers = await Promise.all([0, 1, 2, 3].map(() => startEncodeWorker('cl100k_base')))
    const results = await Promise.all(workers.map((w) => askWorker(w, texts)))
    results.forEach((result) => expect(result).toEqual(expected))
    await Promise.all(workers.map((w) => w.terminate()))
  })

  it('survive workers terminated in the middle of a batch', async () => {
    const docs = corpus.bigDocuments()
    for (let cycle = 0; cycle < 5; cycle++) {
      const worker = await startEncodeWorker('o200k_base')
      worker.postMessage(docs)
      await new Promise((resolve) => setImmediate(resolve))
      await worker.terminate()
    }
    // The process and the shared pool are still fine.
    const tokenizer = batchtok.Tokenizer.fromEncoding('o200k_base')
    const batch = await tokenizer.encodeBatch(docs.slice(0, 20))
    expect(batch.length).toBe(20)
  })

  it('load and encode in workers alone: a worker loads it after the first one to load it has exited', () => {
    // A process of its own: this one's main thread has the addon loaded, which hides the case.
    const run = spawnSync(process.execPath, [join(__dirname, 'workers-only.cjs')], { encoding: 'utf8', timeout: 60_000 })
    expect({ status: run.status, signal: run.signal, stderr: run.stderr }).toEqual({ status: 0, signal: null, stderr: '' })
    const { texts, ids } = JSON.parse(run.stdout) as { texts: string[]; ids: number[][][] }
    const expected = batchtok.Tokenizer.fromEncoding('o200k_base').encodeBatchSync(texts).toArrays()
    expect(ids).toHaveLength(5)
    for (const got of ids) expect(got).toEqual(expected)
  })
})
