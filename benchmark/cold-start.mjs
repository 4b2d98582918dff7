// Time to first token: how long a fresh Node process takes from loading a tokenizer library to
// holding the ids of its first text, for batchtok and its peers, per encoding.
//
// Each sample is its own process (`node -e`), as a serverless function or a CLI starts: the clock
// starts just before the first `require` of the library and stops when the first `encode` has
// returned. Node's own start-up is outside the clock, and reported apart: the whole process, from
// spawn to exit, is the second figure. Rounds interleave every contender and encoding in a rotated
// order, so load from other work on the machine falls on all of them alike; each cell is the
// median and the minimum over the rounds. Every contender's ids are checked equal to batchtok's
// before anything is timed.
//
//   node benchmark/cold-start.mjs [--rounds N] [--out FILE]
//
//   node benchmark/cold-start.mjs --baseline-addon OLD.node
//
// Writes benchmark/results/cold-start.md (or FILE). Run `npm run build` first. With
// `--baseline-addon`, the `whenReady` column is also measured, in the same rounds, for another
// build of the addon (a copy of a `batchtok.*.node` from another commit), to compare the two.

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeMachine, packageVersion } from './machine.mjs'
import { median } from './stats.mjs'

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

const ENCODINGS = ['o200k_base', 'o200k_harmony', 'cl100k_base', 'p50k_base', 'r50k_base']

/** The first text each process encodes: short, as a count or a chat message would be. */
const TEXT = 'Hello, world! Tokenize me too: 日本語も, and <|endoftext|> as plain text.'

// Each contender's child script: load the library and the encoding as its README shows (CommonJS
// everywhere, so every library loads the same way), encode TEXT with special-token text as
// ordinary text, and print the elapsed milliseconds and the ids. `ENCODING` and `TEXT` are
// defined before the script runs; `clock()` reads the monotonic clock in milliseconds. Scripts run
// in an async function, so they may `await`.
/**
 * Not a contender either: the same start, stopped when `whenReady()` resolves, i.e. when the
 * release-candidate engine is built; `addon` is the package entry or a bare `.node` file.
 */
function whenReadyContender(key, addon) {
  return {
    key,
    label: `${key}: the same start, stopped when \`tokenizer.whenReady()\` resolves (the release-candidate engine is built)`,
    encodings: ENCODINGS,
    script: `
      const { Tokenizer } = require(${JSON.stringify(addon)})
      const tokenizer = Tokenizer.fromEncoding(ENCODING)
      const ids = tokenizer.encode(TEXT)
      await tokenizer.whenReady()`,
  }
}

const CONTENDERS = [
  {
    key: 'batchtok',
    label: 'batchtok (`Tokenizer.fromEncoding(name).encode(text)`)',
    encodings: ENCODINGS,
    script: `
      const { Tokenizer } = require(${JSON.stringify(path.join(ROOT, 'index.js'))})
      const ids = Tokenizer.fromEncoding(ENCODING).encode(TEXT)`,
  },
  {
    // Not a contender: how long after the same start the release-candidate engine, built on a
    // thread, takes texts. Until then a batch takes none of its locks; polled every millisecond.
    key: 'batchtok handover',
    label:
      'batchtok handover: the same start, stopped once a one-text batch shows the release-candidate ' +
      "engine's locks (`scheduler.stats().engineLocks`), polled every millisecond",
    encodings: ENCODINGS,
    script: `
      const { Tokenizer, Scheduler } = require(${JSON.stringify(path.join(ROOT, 'index.js'))})
      const tokenizer = Tokenizer.fromEncoding(ENCODING)
      const ids = tokenizer.encode(TEXT)
      const scheduler = new Scheduler({ threads: 1, policy: 'serial' })
      const pause = new Int32Array(new SharedArrayBuffer(4))
      while (tokenizer.encodeBatchSync([TEXT], { scheduler }) && !(scheduler.stats().engineLocks > 0)) {
        Atomics.wait(pause, 0, 0, 1)
      }`,
  },
  whenReadyContender('batchtok whenReady', path.join(ROOT, 'index.js')),
  {
    key: 'gpt-tokenizer',
    label: 'gpt-tokenizer (`gpt-tokenizer/encoding/<name>`)',
    encodings: ENCODINGS,
    script: `
      const { encode } = require('gpt-tokenizer/encoding/' + ENCODING)
      const ids = encode(TEXT, { disallowedSpecial: new Set() })`,
  },
  {
    key: 'js-tiktoken',
    label: 'js-tiktoken (`js-tiktoken/lite` + `js-tiktoken/ranks/<name>`)',
    encodings: ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'],
    script: `
      const { Tiktoken } = require('js-tiktoken/lite')
      const ranks = require('js-tiktoken/ranks/' + ENCODING)
      const ids = new Tiktoken(ranks).encode(TEXT, [], [])`,
  },
  {
    key: 'tiktoken',
    label: 'tiktoken (WASM, `get_encoding`)',
    encodings: ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'],
    script: `
      const { get_encoding } = require('tiktoken')
      const ids = get_encoding(ENCODING).encode_ordinary(TEXT)`,
  },
]

function parseArgs(argv) {
  const args = { rounds: 15, out: path.join(ROOT, 'benchmark', 'results', 'cold-start.md'), baselineAddon: null }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--rounds') args.rounds = Number(argv[++i])
    else if (argv[i] === '--out') args.out = path.resolve(argv[++i])
    else if (argv[i] === '--baseline-addon') args.baselineAddon = path.resolve(argv[++i])
    else throw new Error(`unknown argument ${argv[i]}; expected --rounds N, --out FILE or --baseline-addon FILE`)
  }
  if (args.baselineAddon && !fs.existsSync(args.baselineAddon)) {
    throw new Error(`--baseline-addon ${args.baselineAddon} does not exist; copy a built batchtok.*.node there`)
  }
  if (!Number.isInteger(args.rounds) || args.rounds < 1) {
    throw new Error('--rounds takes a whole number of rounds, 1 or more')
  }
  return args
}

/** One fresh process: the in-process milliseconds, the whole process's, and the ids. */
function sample(contender, encoding) {
  const script = `
    const clock = () => Number(process.hrtime.bigint()) / 1e6
    const ENCODING = ${JSON.stringify(encoding)}
    const TEXT = ${JSON.stringify(TEXT)}
    ;(async () => {
      const started = clock()
      ${contender.script}
      const elapsed = clock() - started
      process.stdout.write(JSON.stringify({ elapsed, ids: Array.from(ids) }))
    })().catch((error) => {
      console.error(error)
      process.exitCode = 1
    })`
  const spawned = process.hrtime.bigint()
  const child = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })
  const whole = Number(process.hrtime.bigint() - spawned) / 1e6
  if (child.status !== 0) {
    throw new Error(`${contender.key} ${encoding} failed (exit ${child.status}):\n${child.stderr}`)
  }
  const { elapsed, ids } = JSON.parse(child.stdout)
  return { elapsed, whole, ids }
}

function formatMs(ms) {
  return ms < 100 ? ms.toFixed(1) : ms.toFixed(0)
}

function main() {
  const args = parseArgs(process.argv.slice(2))
  if (args.baselineAddon) {
    const batchtokAt = CONTENDERS.findIndex((c) => c.key === 'batchtok whenReady')
    CONTENDERS.splice(batchtokAt + 1, 0, whenReadyContender('baseline whenReady', args.baselineAddon))
  }
  const cells = []
  for (const contender of CONTENDERS) {
    for (const encoding of contender.encodings) cells.push({ contender, encoding, elapsed: [], whole: [] })
  }

  // The ids check: one process per cell, before the timed rounds.
  const expected = new Map()
  for (const cell of cells) {
    const { ids } = sample(cell.contender, cell.encoding)
    if (!expected.has(cell.encoding)) expected.set(cell.encoding, ids)
    if (JSON.stringify(ids) !== JSON.stringify(expected.get(cell.encoding))) {
      throw new Error(`${cell.contender.key} ${cell.encoding}: ids differ from batchtok's`)
    }
  }

  for (let round = 0; round < args.rounds; round++) {
    const shift = round % cells.length
    for (const cell of [...cells.slice(shift), ...cells.slice(0, shift)]) {
      const { elapsed, whole } = sample(cell.contender, cell.encoding)
      cell.elapsed.push(elapsed)
      cell.whole.push(whole)
    }
    process.stderr.write(`round ${round + 1}/${args.rounds}\n`)
  }

  const machine = describeMachine()
  const versions = CONTENDERS.filter((c) => !c.key.startsWith('batchtok') && !c.key.startsWith('baseline')).map((c) => `${c.key} ${packageVersion(c.key)}`)
  const lines = [
    '# Time to first token',
    '',
    'Milliseconds from the first `require` of the library to the ids of its first text, in a fresh',
    'Node process per sample (median / min); in brackets the whole process from spawn to exit, Node\'s',
    `own start-up included (median). ${args.rounds} rounds, every cell once per round in a rotated`,
    'order, so load from other work on the machine falls on every cell alike. Every contender\'s ids',
    'are checked equal to batchtok\'s first. The text, with',
    `special-token text as ordinary text: \`${TEXT}\`.`,
    '',
    '| encoding | ' + CONTENDERS.map((c) => c.key).join(' | ') + ' |',
    '| --- | ' + CONTENDERS.map(() => '---:').join(' | ') + ' |',
  ]
  for (const encoding of ENCODINGS) {
    const row = CONTENDERS.map((contender) => {
      const cell = cells.find((c) => c.contender === contender && c.encoding === encoding)
      if (!cell) return 'n/a'
      const min = Math.min(...cell.elapsed)
      return `${formatMs(median(cell.elapsed))} / ${formatMs(min)} (${formatMs(median(cell.whole))})`
    })
    lines.push(`| ${encoding} | ${row.join(' | ')} |`)
  }
  lines.push(
    '',
    'How each loads:',
    '',
    ...CONTENDERS.map((c) => `- ${c.label}`),
    '',
    'n/a: the package has no such encoding. batchtok encodes its first texts with tiktoken\'s own BPE',
    'on the embedded rank table while a thread builds the release-candidate engine, which takes the',
    'texts once it is ready (`src/engine/openai.rs`): the handover column says when, and the',
    '`whenReady` column when `whenReady()` resolves.',
    ...(args.baselineAddon ? ['', `baseline: \`${path.basename(args.baselineAddon)}\`, another build of the addon given with \`--baseline-addon\`.`] : []),
    '',
    `Machine: ${machine.cpu}, nproc ${machine.nproc}, ${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node};`,
    `${versions.join(', ')}.`,
    '',
    `Command: \`npm run build && node benchmark/cold-start.mjs --rounds ${args.rounds}${args.baselineAddon ? ' --baseline-addon BASELINE.node' : ''}\``,
    '',
  )
  fs.mkdirSync(path.dirname(args.out), { recursive: true })
  fs.writeFileSync(args.out, lines.join('\n'))
  process.stdout.write(lines.join('\n'))
}

main()
