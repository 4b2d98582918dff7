// What the JS boundary benchmarks need around a batch: texts as one UTF-8 buffer with offsets, a
// file's line offsets, and the check that two ways of encoding gave the same result.

/** The texts as one UTF-8 buffer and the n + 1 offsets between them, as a file reader has them. */
export function asUtf8(texts) {
  const buffer = Buffer.from(texts.join(''), 'utf8')
  const offsets = new Uint32Array(texts.length + 1)
  let at = 0
  texts.forEach((text, i) => {
    at += Buffer.byteLength(text, 'utf8')
    offsets[i + 1] = at
  })
  return { buffer, offsets }
}

/** The offsets after each `\n` of `buffer` (plus its start and end): its lines, newline kept. */
export function lineOffsets(buffer) {
  const ends = [0]
  for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) ends.push(at + 1)
  if (ends[ends.length - 1] !== buffer.length) ends.push(buffer.length)
  return Uint32Array.from(ends)
}

const bytesOf = (array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength)

/** Whether two `BatchEncoding`s hold the same ids at the same offsets. */
export function sameIds(a, b) {
  return Buffer.compare(bytesOf(a.ids), bytesOf(b.ids)) === 0 && Buffer.compare(bytesOf(a.offsets), bytesOf(b.offsets)) === 0
}

/** Milliseconds since `since`, a `process.hrtime.bigint()` reading. */
export function msSince(since) {
  return Number(process.hrtime.bigint() - since) / 1e6
}
