'use strict'
// Writes the OpenAI rank tables that batchtok embeds (src/engine/encodings/*.ranks.deflate) from
// the `.tiktoken` files shipped in the crates.io crate `tiktoken-rs` (the same files tiktoken
// downloads; scripts/fixtures.py has tiktoken verify their hashes).
//
// The compact form, raw-deflated: for each rank from 0 upwards, one length byte and the token's
// bytes; a length of 0 marks a rank that has no ordinary token (p50k_base keeps 50256 for
// `<|endoftext|>`). The base64 text files are 7 MB; this form is about a quarter of that.
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

function compact(tiktokenFile) {
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
  const parts = []
  for (let rank = 0; rank <= maxRank; rank++) {
    const bytes = ranks.get(rank)
    parts.push(Buffer.from([bytes ? bytes.length : 0]))
    if (bytes) parts.push(bytes)
  }
  return zlib.deflateRawSync(Buffer.concat(parts), { level: 9 })
}

const assets = findAssets()
fs.mkdirSync(OUT_DIR, { recursive: true })
for (const name of ENCODINGS) {
  const out = path.join(OUT_DIR, `${name}.ranks.deflate`)
  const data = compact(path.join(assets, `${name}.tiktoken`))
  fs.writeFileSync(out, data)
  console.log(`${path.relative(process.cwd(), out)}: ${data.length} bytes`)
}
