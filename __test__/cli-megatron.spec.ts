// The Megatron-LM `.idx` writer (cli/megatron.js) on lengths no test corpus reaches: pointers past
// 2^32 and 2^33 bytes, checked against BigInt sums of the same lengths.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const { writeIndex } = require('../cli/megatron.js')

const work = mkdtempSync(join(tmpdir(), 'batchtok-megatron-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** The `.idx` `writeIndex` writes for `lengths`, read back: header counts, lengths, pointers, document indices. */
function indexOf(lengths: number[], dtype: 'uint16' | 'int32', sources = 1) {
  const file = join(work, 'lengths')
  writeFileSync(file, Buffer.from(Int32Array.from(lengths).buffer))
  const fd = openSync(file, 'r')
  try {
    // The lengths cut into `sources` consecutive sources (as `merge` hands over several shards).
    const cuts = Array.from({ length: sources + 1 }, (_, i) => Math.round((lengths.length * i) / sources))
    const parts = cuts.slice(1).map((end, i) => ({ fd, position: cuts[i] * 4, count: end - cuts[i] }))
    writeIndex(join(work, 'out.idx'), dtype, parts)
  } finally {
    closeSync(fd)
  }
  const index = readFileSync(join(work, 'out.idx'))
  const sequences = Number(index.readBigUInt64LE(18))
  let at = 34
  const read = (count: number, size: 4 | 8) =>
    Array.from({ length: count }, () => {
      const value = size === 4 ? BigInt(index.readInt32LE(at)) : index.readBigInt64LE(at)
      at += size
      return value
    })
  const lengthsRead = read(sequences, 4)
  const pointers = read(sequences, 8)
  const documents = read(sequences + 1, 8)
  expect(at).toBe(index.length)
  return { sequences, documentCount: Number(index.readBigUInt64LE(26)), lengths: lengthsRead, pointers, documents }
}

/** The pointers Megatron-LM expects: the running sum of the lengths in bytes, in BigInt. */
function expectedPointers(lengths: number[], itemBytes: bigint) {
  let sum = 0n
  return lengths.map((length) => {
    const pointer = sum
    sum += BigInt(length) * itemBytes
    return pointer
  })
}

describe('writeIndex', () => {
  it.each([
    ['int32', 4n, [2 ** 30, 2 ** 30, 2 ** 31 - 1, 7, 2 ** 31 - 1, 2 ** 31 - 1, 0, 3]],
    ['uint16', 2n, [2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1, 1, 2 ** 30, 5]],
    ['int32', 4n, Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 50_000)],
  ] as const)('writes %s pointers past 2^32 and 2^33 bytes exactly', (dtype, itemBytes, lengths) => {
    for (const sources of [1, 3]) {
      const index = indexOf([...lengths], dtype, sources)
      expect(index.sequences).toBe(lengths.length)
      expect(index.documentCount).toBe(lengths.length + 1)
      expect(index.lengths).toEqual(lengths.map(BigInt))
      expect(index.pointers).toEqual(expectedPointers([...lengths], itemBytes))
      expect(index.documents).toEqual(Array.from({ length: lengths.length + 1 }, (_, i) => BigInt(i)))
    }
  })
})
