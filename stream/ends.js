'use strict'
// The ids put around each document of an encoded batch: an end-of-text id after each (`eosId`),
// and the template tokens of a tokenizer.json where a caller encodes the documents without them
// and adds them itself (`templateEnds`: the CLI and `encodeLineStream`, so that a long document
// can be cut into parts). A document cut into parts gets the ids before it with its first part
// and those after it with its last.

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

/** Texts whose ids with and without the template show the template's tokens around a text. */
const TEMPLATE_PROBES = ['a b', 'Hello, world! 123']

/**
 * The template tokens a tokenizer.json puts before and after each text (`{ before, after }`),
 * for a caller that adds them itself and encodes the documents without them, so that a long
 * document can be cut into parts (`lastSafeCut` with `addSpecialTokens: false` and `afterCut`;
 * each part would get them otherwise): a file that is cut so and not with its template, whose
 * template adds the same tokens before and after every text, as the probes show. `null`
 * otherwise (an OpenAI encoding, a file cut with its template or not at all): the engine adds
 * them, and a long document is read whole where it is not cut.
 * @param {import('../index').Tokenizer} tokenizer
 * @returns {{ before: number[], after: number[] } | null}
 */
function templateEnds(tokenizer) {
  const gap = Buffer.from('a b')
  const cutsWith = (addSpecialTokens) => tokenizer.lastSafeCut(gap, 0, { addSpecialTokens, afterCut: true }) !== -1
  if (cutsWith(true) || !cutsWith(false)) return null
  /** Each way of reading `whole` as some tokens, `plain`, then some more. */
  const readings = (whole, plain) => {
    const found = []
    for (let at = 0; at + plain.length <= whole.length; at++) {
      if (plain.every((id, k) => whole[at + k] === id)) found.push(JSON.stringify([whole.slice(0, at), whole.slice(at + plain.length)]))
    }
    return found
  }
  const [first, ...others] = TEMPLATE_PROBES.map((text) =>
    readings(Array.from(tokenizer.encode(text)), Array.from(tokenizer.encode(text, { addSpecialTokens: false }))),
  )
  const common = first.filter((reading) => others.every((found) => found.includes(reading)))
  if (common.length !== 1) return null
  const [before, after] = JSON.parse(common[0])
  return { before, after }
}

module.exports = { withEnds, templateEnds }
