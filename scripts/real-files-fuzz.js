'use strict'
// batchtok against Python `tokenizers` and `tiktoken` on random texts, from JS, on the real model
// files and every OpenAI encoding: the whole stack (the JS calls, the routing between the engines,
// both engines) against the libraries users compare it with. The Rust fuzz targets
// (FUZZING.md) check the engines against the stable crate and tiktoken-rs on fixture files; this
// check reaches what they cannot: the real files, decode, and model inputs under random
// truncation and padding.
//
//   node scripts/real-files-fuzz.js [--rounds 3] [--texts 2000] [--seed 1] [--files FOLDER]
//
// `--files FOLDER` checks every tokenizer.json in FOLDER instead of the real files and the
// encodings (`scripts/model_shapes.py` writes files in the shapes of other well-known models).
//
// Needs the built addon (`npm run build`), the references' virtualenv (`npm run fixtures` makes
// scripts/.venv), the corpora (`node scripts/corpus.js corpora`) and the real files (fetched here
// if missing). Each round, scripts/real_files_fuzz.py makes `--texts` texts with the round's seed
// and writes the references' answers to a temporary folder; this script asks batchtok the same
// and compares: ids with and without the template's tokens (`encodeBatch`, and `encode` on every
// 37th text), `decodeBatch` with and without special tokens, `encodeForModel` (ids, type ids,
// masks, offsets; a batch the reference refuses must be refused), and for the OpenAI encodings
// `encodeBatch` with no special token allowed and with all, and `encodeWithUnstable` of every 20th
// text against tiktoken's `encode_with_unstable`; and, where `lastSafeCut` cuts a text, the ids
// of its two sides (the second encoded with `afterCut`) joined against the reference's ids of the
// whole. Prints a line per target and round and the first differences, each text JSON-escaped;
// exits 1 if any answer differs.

const { execFileSync } = require('node:child_process')
const { createHash } = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')

const { Tokenizer } = require('..')
const { ensureRealTokenizers } = require('./real-tokenizers.js')

const ROOT = path.join(__dirname, '..')
const PYTHON = path.join(ROOT, 'scripts', '.venv', 'bin', 'python')
/** `encodeWithUnstable` runs on every this many texts (`UNSTABLE_EVERY` of real_files_fuzz.py). */
const UNSTABLE_EVERY = 20
/** Differences printed in full; the rest are counted. */
const SHOWN = 10

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    texts: { type: 'string', default: '2000' },
    seed: { type: 'string', default: '1' },
    files: { type: 'string' },
  },
})
const count = (name) => {
  const value = Number(values[name])
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${name} ${values[name]}: give a whole number above 0`)
  return value
}

let differences = 0

/** Records one difference, printing the first few: the two answers from a little before where
 * they part (a string's characters, a list's items), the input whole. */
function differ(target, what, input, want, got) {
  differences++
  if (differences > SHOWN) return
  let at = 0
  if (typeof want === typeof got && (typeof want === 'string' || Array.isArray(want))) {
    while (at < want.length && at < got.length && want[at] === got[at]) at++
  }
  const from = Math.max(0, at - 8)
  const shown = (value) => (from > 0 ? `(from ${from}) ` : '') + JSON.stringify(value.slice?.(from) ?? value).slice(0, 300)
  console.log(`  ${target}: ${what} of ${JSON.stringify(input)}\n    reference ${shown(want)}\n    batchtok  ${shown(got)}`)
}

const same = (a, b) => a.length === b.length && a.every((value, i) => value === b[i])

/** Compares a batch's ids with the reference's lists; returns how many texts differ. */
function compareIds(target, texts, want, batch) {
  const got = batch.toArrays()
  let differing = 0
  for (let i = 0; i < texts.length; i++) {
    const ids = Array.from(got[i])
    if (!same(ids, want[i])) {
      differing++
      differ(target, `ids of text ${i}`, texts[i], want[i], ids)
    }
  }
  return differing
}

/** Compares `encodeWithUnstable` of every `UNSTABLE_EVERY`th text (every special token allowed)
 * with the reference's stable ids and digest of its completions; returns how many texts differ. */
function compareUnstable(target, tokenizer, texts, want) {
  let differing = 0
  want.forEach((reference, k) => {
    const text = texts[k * UNSTABLE_EVERY]
    const got = tokenizer.encodeWithUnstable(text, { allowedSpecial: 'all' })
    const stable = Array.from(got.stable)
    const completions = createHash('sha256').update(JSON.stringify(got.completions.map((ids) => Array.from(ids)))).digest('hex')
    if (same(stable, reference.stable) && completions === reference.completions) return
    differing++
    differ(target, `text ${k * UNSTABLE_EVERY}`, text, reference, { stable, completions })
  })
  return differing
}

/**
 * Cuts each text where `lastSafeCut` finds a place (looking from its middle on) for parts encoded
 * with `options`, the part after the cut with `afterCut`, and compares the ids of the two sides,
 * joined, with the reference's ids of the whole text; returns how many differ and how many texts
 * were cut.
 */
async function compareCuts(target, tokenizer, texts, want, options) {
  const cutOptions = { afterCut: true, ...('addSpecialTokens' in options ? { addSpecialTokens: options.addSpecialTokens } : {}) }
  const cut = []
  const befores = []
  const afters = []
  texts.forEach((text, i) => {
    const bytes = Buffer.from(text)
    const at = tokenizer.lastSafeCut(bytes, bytes.length >> 1, cutOptions)
    if (at <= 0) return
    cut.push(i)
    befores.push(bytes.subarray(0, at).toString())
    afters.push(bytes.subarray(at).toString())
  })
  const got = (await tokenizer.encodeBatch(befores, options)).toArrays()
  let differing = 0
  cut.forEach((i, k) => {
    // `afterCut` is for a batch's first text: each part after a cut is encoded alone.
    const ids = [...got[k], ...tokenizer.encode(afters[k], { ...options, afterCut: true })]
    if (!same(ids, want[i])) {
      differing++
      differ(target, `ids of text ${i} cut at ${Buffer.byteLength(befores[k])}`, texts[i], want[i], ids)
    }
  })
  return { differing, cut: cut.length }
}

/** Checks `encodeForModel` against the reference's rows (or its refusal) for each case; returns
 * how many differ and how many batches both refused. */
async function compareModelInputs(target, tokenizer, inputs, cases) {
  let differing = 0
  let refused = 0
  for (const c of cases) {
    const strategy = { longest_first: 'longestFirst', only_first: 'onlyFirst', only_second: 'onlySecond' }[c.strategy]
    const options = {
      padding: 'longest',
      padToken: c.padToken,
      padSide: c.padSide,
      truncation: { maxLength: c.maxLength, strategy, direction: c.truncationSide },
      returnOffsets: true,
      returnSpecialTokensMask: true,
      dtype: 'int32',
    }
    const what = `model inputs of the ${c.kind} (${JSON.stringify(options.truncation)}, pad ${c.padSide})`
    const got = await tokenizer.encodeForModel(inputs[c.kind], options).catch((error) => error)
    if (got instanceof Error || c.error) {
      if (got instanceof Error && c.error) {
        refused++
      } else {
        differing++
        differ(target, what, '(the batch)', c.error ?? 'rows', got instanceof Error ? got.message : 'rows')
      }
      continue
    }
    const [rows, width] = got.dims
    if (rows !== c.rows.length || width !== c.rows[0].inputIds.length) {
      differing++
      differ(target, `${what}: dims`, '(the batch)', [c.rows.length, c.rows[0].inputIds.length], got.dims)
      continue
    }
    for (let r = 0; r < rows; r++) {
      for (const field of ['inputIds', 'tokenTypeIds', 'attentionMask', 'specialTokensMask', 'offsets']) {
        const per = field === 'offsets' ? 2 * width : width
        const mine = Array.from(got[field].subarray(r * per, (r + 1) * per))
        const theirs = field === 'offsets' ? c.rows[r].offsets.flat() : c.rows[r][field]
        if (!same(mine, theirs)) {
          differing++
          differ(target, `${what}: ${field} of row ${r}`, inputs[c.kind][r], theirs, mine)
          break
        }
      }
    }
  }
  return { differing, refused }
}

async function round(seed, texts, files) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-real-fuzz-'))
  try {
    const folder = values.files ? ['--files', path.resolve(values.files)] : []
    execFileSync(PYTHON, [path.join(__dirname, 'real_files_fuzz.py'), '--seed', String(seed), '--texts', String(texts), '--out', out, ...folder], {
      stdio: ['ignore', 'inherit', 'inherit'],
    })
    const read = (name) => JSON.parse(fs.readFileSync(path.join(out, name), 'utf8'))
    const inputs = read('texts.json')
    for (const [name, file] of Object.entries(files)) {
      const want = read(`hf-${name}.json`)
      const tokenizer = Tokenizer.fromFile(file)
      let differing = compareIds(`${name} with template`, inputs.texts, want.with, await tokenizer.encodeBatch(inputs.texts))
      differing += compareIds(`${name} without`, inputs.texts, want.without, await tokenizer.encodeBatch(inputs.texts, { addSpecialTokens: false }))
      for (let i = 0; i < inputs.texts.length; i += 37) {
        const ids = Array.from(tokenizer.encode(inputs.texts[i]))
        if (!same(ids, want.with[i])) {
          differing++
          differ(`${name} encode`, `ids of text ${i}`, inputs.texts[i], want.with[i], ids)
        }
      }
      const sampled = want.with.filter((_, i) => i % 7 === 0)
      for (const [key, skipSpecialTokens] of [['decode', false], ['decodeSkipping', true]]) {
        const got = await tokenizer.decodeBatch(sampled, { skipSpecialTokens })
        got.forEach((text, k) => {
          if (text !== want[key][k]) {
            differing++
            differ(`${name} ${key}`, `text ${k * 7}`, inputs.texts[k * 7], want[key][k], text)
          }
        })
      }
      const modelInputs = await compareModelInputs(name, tokenizer, inputs, want.modelInputs)
      differing += modelInputs.differing
      const cuts = await compareCuts(`${name} cut`, tokenizer, inputs.texts, want.with, {})
      differing += cuts.differing
      const cutsWithout = await compareCuts(`${name} cut, without`, tokenizer, inputs.texts, want.without, { addSpecialTokens: false })
      differing += cutsWithout.differing
      const batches = `${want.modelInputs.length} model-input batches, ${modelInputs.refused} refused by both; texts cut: ${cuts.cut} with the template's tokens, ${cutsWithout.cut} without`
      console.log(`${name}: ${differing === 0 ? 'equal' : `${differing} differ`} (${batches})`)
    }
    for (const name of fs.readdirSync(out).filter((f) => f.startsWith('openai-')).map((f) => f.slice(7, -5))) {
      const want = read(`openai-${name}.json`)
      const tokenizer = Tokenizer.fromEncoding(name)
      let differing = compareIds(`${name} ordinary`, inputs.texts, want.ordinary, await tokenizer.encodeBatch(inputs.texts))
      differing += compareIds(`${name} all special`, inputs.texts, want.all, await tokenizer.encodeBatch(inputs.texts, { allowedSpecial: 'all' }))
      const cuts = await compareCuts(`${name} cut`, tokenizer, inputs.texts, want.ordinary, {})
      differing += cuts.differing
      differing += (await compareCuts(`${name} cut, all special`, tokenizer, inputs.texts, want.all, { allowedSpecial: 'all' })).differing
      differing += compareUnstable(`${name} unstable`, tokenizer, inputs.texts, want.unstable)
      console.log(`encoding ${name}: ${differing === 0 ? 'equal' : `${differing} differ`} (${cuts.cut} texts cut; ${want.unstable.length} texts' unstable ends)`)
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true })
  }
}

/** The tokenizer.json files of `folder`, by name (a model folder's tokenizer_config.json left out). */
function tokenizerFiles(folder) {
  const names = fs.readdirSync(folder).filter((f) => f.endsWith('.json') && !f.endsWith('.tokenizer_config.json'))
  if (names.length === 0) throw new Error(`${folder} holds no tokenizer.json files`)
  return Object.fromEntries(names.map((f) => [f.slice(0, -5), path.join(folder, f)]))
}

async function main() {
  if (!fs.existsSync(PYTHON)) throw new Error(`${PYTHON} is missing; run \`npm run fixtures\` to make the references' virtualenv`)
  const files = values.files ? tokenizerFiles(values.files) : ensureRealTokenizers()
  const [rounds, texts, seed] = [count('rounds'), count('texts'), count('seed')]
  for (let r = 0; r < rounds; r++) {
    console.log(`round ${r + 1} of ${rounds}: seed ${seed + r}, ${texts} texts`)
    await round(seed + r, texts, files)
  }
  console.log(differences === 0 ? 'every answer equal' : `${differences} differences`)
  process.exitCode = differences === 0 ? 0 : 1
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 2
})
