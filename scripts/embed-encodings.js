'use strict'
// Writes the OpenAI rank tables that batchtok embeds (src/engine/encodings/*.ranks.deflate) from
// the `.tiktoken` files shipped in the crates.io crate `tiktoken-rs` (the same files tiktoken
// downloads; scripts/fixtures.py has tiktoken verify their hashes).
//
// The compact form, raw-deflated: for each rank from 0 upwards, one length byte and the token's
// bytes; a length of 0 marks a rank that has no ordinary token (p50k_base keeps 50256 for
// `<|endoftext|>`). The base64 text files are 7 MB; this form is about a quarter of that.
//
// Beside each table, its merges (`*.merges.deflate`), raw-deflated: for each rank, one byte, the
// length of the left part of the merge that forms the token, or 0 where no merge forms it (a
// single byte, a rank with no token, a token that tiktoken's BPE never produces from its own
// bytes). The release-candidate engine is built from these merges (src/engine/openai.rs explains
// why they reproduce tiktoken); deriving them takes it a few hundred milliseconds at every start,
// so they are derived here once. A Rust test checks them against its own derivation.
//
// Run after `cargo fetch` (tiktoken-rs is a dev-dependency): `node scripts/embed-encodings.js`.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')

const TIKTOKEN_RS = 'tiktoken-rs-0.12.1'
const ENCODINGS = ['r50k_base', 'p50k_base', 'cl100k_base', 'o200k_base']
const OUT_DIR = path.join(__dirname, '..', 'src', 'engine', 'encodings')

function findAssets() {
  const cargoHome = process.env.CARGO_HOME || path.join(os.homedir(), '.cargo')
  const registry = path.join(cargoHome, 'registry', 'src')
  for (const index of fs.readdirSync(registry)) {
    const assets = path.join(registry, index, TIKTOKEN_RS, 'assets')
    if (fs.existsSync(assets)) return assets
  }
  throw new Error(`${TIKTOKEN_RS} is not in ${registry}: run \`cargo fetch\` in the repository first`)
}

/** The tokens of a `.tiktoken` file: `tokens[rank]` is a Buffer, or undefined for a gap. */
function readTokens(tiktokenFile) {
  const ranks = new Map()
  let maxRank = -1
  for (const line of fs.readFileSync(tiktokenFile, 'utf8').split('\n')) {
    if (line === '') continue
    const [token, rank] = line.split(' ')
    const bytes = Buffer.from(token, 'base64')
    if (bytes.length === 0 || bytes.length > 255) throw new Error(`token of ${bytes.length} bytes`)
    ranks.set(Number(rank), bytes)
    maxRank = Math.max(maxRank, Number(rank))
  }
  return Array.from({ length: maxRank + 1 }, (_, rank) => ranks.get(rank))
}

/** The compact table of `tokens`, raw-deflated. */
function compact(tokens) {
  const parts = []
  for (const bytes of tokens) {
    parts.push(Buffer.from([bytes ? bytes.length : 0]))
    if (bytes) parts.push(bytes)
  }
  return zlib.deflateRawSync(Buffer.concat(parts), { level: 9 })
}

/**
 * For each rank, the length of the left part of the last merge of tiktoken's BPE on the token's
 * own bytes when that BPE ends as the token itself, else 0; raw-deflated. tiktoken's BPE: from
 * single bytes, join the adjacent pair whose concatenation has the lowest rank (the leftmost on a
 * tie) until no adjacent pair is a token.
 */
function mergeSplits(tokens) {
  // Tokens as latin1 strings: one character per byte, so a Map can key them.
  const rankOf = new Map()
  tokens.forEach((bytes, rank) => bytes && rankOf.set(bytes.toString('latin1'), rank))
  const splits = Buffer.alloc(tokens.length)
  tokens.forEach((bytes, rank) => {
    if (!bytes || bytes.length < 2) return
    const text = bytes.toString('latin1')
    const cuts = Array.from({ length: text.length + 1 }, (_, i) => i)
    let split = 0
    while (cuts.length > 2) {
      let best = -1
      let bestRank = Infinity
      for (let i = 0; i + 2 < cuts.length; i++) {
        const pairRank = rankOf.get(text.slice(cuts[i], cuts[i + 2]))
        if (pairRank !== undefined && pairRank < bestRank) {
          bestRank = pairRank
          best = i
        }
      }
      if (best === -1) break
      split = cuts[best + 1] - cuts[best]
      cuts.splice(best + 1, 1)
    }
    // Only a BPE that ends as the token itself forms it by a merge.
    if (cuts.length === 2) {
      if (split > 255) throw new Error(`rank ${rank}: a left part of ${split} bytes`)
      splits[rank] = split
    }
  })
  return zlib.deflateRawSync(splits, { level: 9 })
}

const assets = findAssets()
fs.mkdirSync(OUT_DIR, { recursive: true })
for (const name of ENCODINGS) {
  const tokens = readTokens(path.join(assets, `${name}.tiktoken`))
  for (const [kind, data] of [
    ['ranks', compact(tokens)],
    ['merges', mergeSplits(tokens)],
  ]) {
    const out = path.join(OUT_DIR, `${name}.${kind}.deflate`)
    fs.writeFileSync(out, data)
    console.log(`${path.relative(process.cwd(), out)}: ${data.length} bytes`)
  }
}
