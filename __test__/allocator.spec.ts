// The global allocator: what the build reports, its figures, and the addon running with it in
// several worker_threads beside another native addon.
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'

import { batchtok, corpus } from './helpers'

const { Tokenizer, Scheduler, allocator, memoryStats, releaseMemory } = batchtok

/** Whether this Node runs on glibc (musl's Node reports no glibc version). */
function isGlibc(): boolean {
  const report = process.report.getReport() as { header: { glibcVersionRuntime?: string } }
  return report.header.glibcVersionRuntime !== undefined
}

/** The allocator build.rs picks for this platform; a build that overrode it with
 * BATCHTOK_ALLOCATOR is tested with the same variable set. */
function expectedAllocator(): string {
  if (process.env.BATCHTOK_ALLOCATOR) return process.env.BATCHTOK_ALLOCATOR
  const mimallocByDefault =
    (process.platform === 'darwin' && ['x64', 'arm64'].includes(process.arch)) ||
    (process.platform === 'win32' && process.arch === 'x64') ||
    (process.platform === 'linux' && process.arch === 'x64' && !isGlibc())
  return mimallocByDefault ? 'mimalloc' : 'system'
}

describe('allocator', () => {
  it('reports the variant that was built', () => {
    expect(allocator()).toBe(expectedAllocator())
  })

  it('reports memory figures, and releases cached memory on demand', async () => {
    await Tokenizer.fromEncoding('o200k_base').encodeBatch(corpus.bigDocuments().slice(0, 100))
    const before = memoryStats()
    expect(before.resident).toBeGreaterThan(0)
    expect(before.peakResident).toBeGreaterThanOrEqual(before.resident!)
    if (allocator() === 'mimalloc') {
      expect(before.committed).toBeGreaterThan(0)
      expect(before.peakCommitted).toBeGreaterThanOrEqual(before.committed!)
    }
    releaseMemory()
    expect(memoryStats().resident).toBeGreaterThan(0)
  })

  it('runs batches on a scheduler that releases memory after each', async () => {
    const texts = corpus.bigShortItems().slice(0, 2000)
    const tokenizer = Tokenizer.fromEncoding('o200k_base')
    const releasing = new Scheduler({ threads: 2, releaseMemory: true })
    const batch = await tokenizer.encodeBatch(texts, { scheduler: releasing })
    expect(batch.toArrays()).toEqual(tokenizer.encodeBatchSync(texts).toArrays())
  })

  it('works in four worker_threads at once beside another native addon', async () => {
    const texts = corpus.bigShortItems().slice(0, 500)
    const expected = Tokenizer.fromEncoding('o200k_base').encodeBatchSync(texts).toArrays()
    const script = join(__dirname, 'worker-alongside.cjs')
    const results = await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise<any>((resolve, reject) => {
            const worker = new Worker(script, { workerData: { texts } })
            worker.once('message', (m) => worker.terminate().then(() => resolve(m)))
            worker.once('error', reject)
          }),
      ),
    )
    for (const result of results) {
      expect(result.tarLoaded).toBe(true)
      expect(result.allocator).toBe(expectedAllocator())
      expect(result.ids).toEqual(expected)
    }
  })
})
