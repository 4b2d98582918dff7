// The CLI's encoding pipeline (cli/pipeline.js): several batches at once, results in input order,
// the start's narrower concurrency, and errors where their batch comes. A stand-in tokenizer
// whose batches end when a test says so drives it; the real addon runs the same code in
// cli.spec.ts. Also the input size by which a run decides to wait for the engine (cli/plan.js).
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const { encodeInOrder } = require('../cli/pipeline.js')
const { expectedTextBytes } = require('../cli/plan.js')

type Pending = { texts: string[]; resolve: (value: { ids: Uint32Array; offsets: Uint32Array }) => void; reject: (error: Error) => void }

/** A tokenizer whose `encodeBatch` calls wait until the test ends them; it counts how many run. */
function standIn() {
  const pending: Pending[] = []
  const state = { running: 0, most: 0 }
  const tokenizer = {
    encodeBatch(texts: string[]) {
      state.running++
      state.most = Math.max(state.most, state.running)
      return new Promise((resolve, reject) => {
        const done = () => state.running--
        pending.push({
          texts,
          resolve: (value) => {
            done()
            resolve(value)
          },
          reject: (error) => {
            done()
            reject(error)
          },
        })
      })
    },
  }
  /** Ends the running batch whose first text is `text` with one id per text (its number). */
  const end = (text: string, error?: Error) => {
    const at = pending.findIndex((p) => p.texts[0] === text)
    if (at === -1) throw new Error(`no batch of ${text} is running`)
    const [batch] = pending.splice(at, 1)
    if (error) batch.reject(error)
    else batch.resolve({ ids: Uint32Array.from(batch.texts, Number), offsets: Uint32Array.from({ length: batch.texts.length + 1 }, (_, i) => i) })
  }
  return { tokenizer, pending, state, end }
}

/** Batches of one text each, `"0"` to `"count - 1"`. */
async function* numbered(count: number, read: { count: number } = { count: 0 }) {
  for (let i = 0; i < count; i++) {
    read.count++
    yield { texts: [String(i)] }
  }
}

/** Lets every settled promise run its callbacks. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('encodeInOrder', () => {
  it('runs up to `concurrency` batches at once and yields them in input order, whatever order they end in', async () => {
    const { tokenizer, pending, state, end } = standIn()
    const out = encodeInOrder(tokenizer, numbered(6), { concurrency: 3 })
    const first = out.next()
    await settle()
    expect(pending.map((p) => p.texts[0])).toEqual(['0', '1', '2'])
    // The later batches end first: a slot frees and the next batch starts before the oldest ends.
    end('2')
    await settle()
    expect(pending.map((p) => p.texts[0])).toEqual(['0', '1', '3'])
    end('1')
    end('0')
    expect(Array.from((await first).value.ids)).toEqual([0])
    // The rest, each step's running batches ended newest first, while the consumer waits.
    const rest: number[] = []
    const consumed = (async () => {
      for await (const batch of { [Symbol.asyncIterator]: () => out }) rest.push(batch.ids[0])
    })()
    for (let step = 0; step < 20; step++) {
      await settle()
      for (const batch of [...pending].reverse()) end(batch.texts[0])
    }
    await consumed
    expect(rest).toEqual([1, 2, 3, 4, 5])
    expect(state.most).toBe(3)
  })

  it('runs `startConcurrency` batches until `ready` settles, then `concurrency`', async () => {
    const { tokenizer, pending, state, end } = standIn()
    let markReady = () => {}
    const ready = new Promise<void>((resolve) => (markReady = resolve))
    const out = encodeInOrder(tokenizer, numbered(4), { concurrency: 2, startConcurrency: 1, ready })
    const first = out.next()
    await settle()
    expect(pending.length).toBe(1)
    markReady()
    await settle()
    expect(pending.length).toBe(2)
    end('0')
    expect((await first).value.ids[0]).toBe(0)
    while (pending.length > 0 || state.running > 0) {
      await settle()
      if (pending.length > 0) end(pending[0].texts[0])
    }
    const rest = []
    for await (const batch of { [Symbol.asyncIterator]: () => out }) rest.push(batch.ids[0])
    expect(rest).toEqual([1, 2, 3])
    expect(state.most).toBe(2)
  })

  it('starts a batch larger than `startBatchBytes` only once `ready` settles, and the batches after it in order', async () => {
    const { tokenizer, pending, end } = standIn()
    let markReady = () => {}
    const ready = new Promise<void>((resolve) => (markReady = resolve))
    async function* sized() {
      yield { texts: ['0'] }
      yield { texts: ['1'.padEnd(100, '.')] }
      yield { texts: ['2'] }
    }
    const out = encodeInOrder(tokenizer, sized(), { concurrency: 2, startConcurrency: 2, startBatchBytes: 10, ready })
    const seen: string[] = []
    const run = (async () => {
      for await (const batch of { [Symbol.asyncIterator]: () => out }) seen.push(String(batch.ids.length))
    })()
    for (let i = 0; i < 5; i++) await settle()
    // The small first batch runs; the large one waits, and the one after it is not started.
    expect(pending.map((p) => p.texts[0][0])).toEqual(['0'])
    end('0')
    for (let i = 0; i < 5; i++) await settle()
    expect(pending.length).toBe(0)
    markReady()
    for (let i = 0; i < 5; i++) await settle()
    expect(pending.map((p) => p.texts[0][0])).toEqual(['1', '2'])
    end(pending[0].texts[0])
    end('2')
    await run
    expect(seen).toEqual(['1', '1', '1'])
  })

  it('throws a batch\'s error after the batches before it, and waits for the running ones before it returns', async () => {
    const { tokenizer, pending, state, end } = standIn()
    const out = encodeInOrder(tokenizer, numbered(5), { concurrency: 3 })
    const first = out.next()
    await settle()
    end('1', new Error('batch 1 failed'))
    end('0')
    expect((await first).value.ids[0]).toBe(0)
    const failed = out.next()
    await settle()
    // Batch 2 still runs: the error waits for it.
    expect(state.running).toBeGreaterThan(0)
    let thrown: unknown = null
    failed.catch((error: unknown) => (thrown = error))
    await settle()
    expect(thrown).toBe(null)
    while (pending.length > 0) end(pending[0].texts[0])
    await expect(failed).rejects.toThrow('batch 1 failed')
    expect(state.running).toBe(0)
  })

  it('throws a reading error once the batches read before it are yielded, and closes the input', async () => {
    const { tokenizer, pending, end } = standIn()
    let closed = false
    async function* failing() {
      try {
        yield { texts: ['0'] }
        yield { texts: ['1'] }
        throw new Error('cannot read')
      } finally {
        closed = true
      }
    }
    const out = encodeInOrder(tokenizer, failing(), { concurrency: 2 })
    const seen: number[] = []
    const run = (async () => {
      for await (const batch of { [Symbol.asyncIterator]: () => out }) seen.push(batch.ids[0])
    })()
    while (pending.length < 2) await settle()
    end('1')
    end('0')
    await expect(run).rejects.toThrow('cannot read')
    expect(seen).toEqual([0, 1])
    expect(closed).toBe(true)
  })

  it('reads at most one batch ahead of those it may start', async () => {
    const { tokenizer, pending } = standIn()
    const read = { count: 0 }
    const out = encodeInOrder(tokenizer, numbered(100, read), { concurrency: 2 })
    void out.next()
    for (let i = 0; i < 5; i++) await settle()
    expect(pending.length).toBe(2)
    expect(read.count).toBe(3)
  })
})

describe('expectedTextBytes', () => {
  const file = (size: number, compression = 'none') => ({ path: 'a', size, mtimeMs: 0, format: 'text', compression })

  it("counts a plain file's part as it is, a compressed file's three times over, and stdin or a pipe as unbounded", () => {
    expect(expectedTextBytes([{ input: file(1000), start: 100, end: 600 }])).toBe(500)
    // A part's end may run past the file (the last shard's).
    expect(expectedTextBytes([{ input: file(1000), start: 900, end: Infinity }])).toBe(100)
    expect(expectedTextBytes([{ input: file(1000), start: 0, end: 1000 }, { input: file(200, 'gzip'), start: 0, end: 200 }])).toBe(1600)
    expect(expectedTextBytes([{ input: file(200, 'zstd'), start: 0, end: 200 }, { input: { ...file(0), path: '-', pipe: true, stdin: true }, start: 0, end: Infinity }])).toBe(Infinity)
    expect(expectedTextBytes([{ input: { ...file(0), path: '/dev/fd/63', pipe: true }, start: 0, end: Infinity }])).toBe(Infinity)
  })
})
