'use strict'
// The ids put around each document of an encoded batch: an end-of-text id after each (`eosId`),
// and the template tokens of a tokenizer.json where a caller encodes the documents without them
// and adds them itself (the CLI, so that a long document can be cut into parts: cli/tokenizer.js).
// A document cut into parts gets the ids before it with its first part and those after it with
// its last.

/**
 * `encoding`'s ids with `before` in front of every document's and `after` behind, but for the
 * first document where it goes on from the batch before (`continued`: nothing before it) and the
 * last where it goes on in the next (`continues`: nothing after it).
 * @param {{ ids: Uint32Array, offsets: Uint32Array }} encoding
 * @param {{ before?: number[], after?: number[], continued?: boolean, continues?: boolean }} ends
 * @returns {{ ids: Uint32Array, offsets: Uint32Array }}
 */
function withEnds({ ids, offsets }, { before = [], after = [], continued = false, continues = false }) {
  const documents = offsets.length - 1
  const begun = (i) => i > 0 || !continued
  const ended = (i) => i < documents - 1 || !continues
  let added = 0
  for (let i = 0; i < documents; i++) added += (begun(i) ? before.length : 0) + (ended(i) ? after.length : 0)
  const out = new Uint32Array(ids.length + added)
  const outOffsets = new Uint32Array(documents + 1)
  let at = 0
  for (let i = 0; i < documents; i++) {
    outOffsets[i] = at
    if (begun(i)) {
      out.set(before, at)
      at += before.length
    }
    out.set(ids.subarray(offsets[i], offsets[i + 1]), at)
    at += offsets[i + 1] - offsets[i]
    if (ended(i)) {
      out.set(after, at)
      at += after.length
    }
  }
  outOffsets[documents] = at
  return { ids: out, offsets: outOffsets }
}

module.exports = { withEnds }
