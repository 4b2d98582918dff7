// One text at a time, as an LLM app counts a prompt: the latency of `count` for texts of 20 B,
// 1 KB and 100 KB, of `isWithinTokenLimit` on a 10 MB text with a limit of 100, and of
// `encodeChat`, against the Node tokenizers people use (o200k_base / gpt-4o everywhere).
//
// Each scenario is one tinybench `Bench`; each call takes the next text of a pool of distinct
// texts cut from big.txt, so no contender sees the same text twice in a row. Every contender's
// answer is checked equal to batchtok's on the whole pool before anything is timed. The table
// gives the median and the fastest call of each, and each peer's median over batchtok's.
//
//   node benchmark/single-text.mjs [--quick]
// writes benchmark/results/single-text.md.

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Bench } from 'tinybench'
import { describeMachine, packageVersion } from './machine.mjs'

const require = createRequire(import.meta.url)
const HERE = path.dirname(fileURLToPath(import.meta.url))
const QUICK = process.argv.includes('--quick')

const { Tokenizer } = require('../index.js')
const corpus = require('../scripts/corpus.js')
const gptTokenizer = require('gpt-tokenizer')
const { Tiktoken: JsTiktoken } = require('js-tiktoken/lite')
const jsTiktokenRanks = require('js-tiktoken/ranks/o200k_base')
const wasm = require('tiktoken')

const batchtok = Tokenizer.fromModel('gpt-4o')
const jsTiktoken = new JsTiktoken(jsTiktokenRanks)
const tiktokenWasm = wasm.get_encoding('o200k_base')

/** `count` of each contender: the number of tokens of one text, special-token text as text. */
const counters = {
  batchtok: (text) => batchtok.count(text),
  'gpt-tokenizer': (text) => gptTokenizer.countTokens(text),
  'js-tiktoken': (text) => jsTiktoken.encode(text, [], []).length,
  'tiktoken (WASM)': (text) => tiktokenWasm.encode_ordinary(text).length,
}

/** `count` texts of `bytes` bytes each: distinct slices of big.txt, cut at character boundaries. */
function pool(text, bytes, count) {
  const step = Math.max(1, Math.floor((text.length - bytes) / count))
  return Array.from({ length: count }, (_, i) => text.slice(i * step, i * step + bytes))
}

function check(name, texts, answer) {
  for (const [contender, run] of Object.entries(answer)) {
    for (const text of texts) {
      const got = JSON.stringify(run(text))
      const want = JSON.stringify(answer.batchtok(text))
      if (got !== want) throw new Error(`${name}: ${contender} gives ${got}, batchtok ${want}, for ${JSON.stringify(text.slice(0, 40))}`)
    }
  }
}

async function timeScenario(name, texts, contenders, { time, iterations }) {
  check(name, texts.slice(0, QUICK ? 5 : texts.length), contenders)
  const bench = new Bench({ name, time, iterations, warmup: true })
  for (const [contender, run] of Object.entries(contenders)) {
    let next = 0
    bench.add(contender, () => {
      run(texts[next])
      next = (next + 1) % texts.length
    })
  }
  await bench.run()
  const medianOf = (task) => task.result.latency.p50
  const base = medianOf(bench.tasks.find((t) => t.name === 'batchtok'))
  return bench.tasks.map((task) => ({
    scenario: name,
    contender: task.name,
    medianUs: medianOf(task) * 1e3,
    minUs: task.result.latency.min * 1e3,
    ratio: medianOf(task) / base,
  }))
}

function format(us) {
  return us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(us < 10 ? 2 : 1)} µs`
}

async function main() {
  const text = corpus.bigDocuments().join('')
  const time = QUICK ? 200 : 1500
  const rows = []
  for (const [label, bytes, count] of [
    ['count, 20 B', 20, 2000],
    ['count, 1 KB', 1024, 500],
    ['count, 100 KB', 100 * 1024, 40],
  ]) {
    rows.push(...(await timeScenario(label, pool(text, bytes, count), counters, { time, iterations: 20 })))
  }

  // A 10 MB text and a limit of 100: the answer is `false` as soon as the limit is passed.
  const huge = text.repeat(Math.ceil(10e6 / text.length)).slice(0, 10e6)
  rows.push(
    ...(await timeScenario(
      'isWithinTokenLimit, 10 MB, limit 100',
      [huge],
      {
        batchtok: (t) => batchtok.isWithinTokenLimit(t, 100),
        'gpt-tokenizer': (t) => gptTokenizer.isWithinTokenLimit(t, 100),
      },
      { time: QUICK ? 100 : 1000, iterations: 3 },
    )),
  )

  // A conversation of four messages, distinct each call.
  const chats = pool(text, 300, 200).map((t, i) => [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: t },
    { role: 'assistant', content: t.slice(0, 120) },
    { role: 'user', name: 'reader', content: `And item ${i}?` },
  ])
  rows.push(
    ...(await timeScenario(
      'encodeChat, 4 messages (gpt-4o)',
      chats,
      {
        batchtok: (chat) => Array.from(batchtok.encodeChat(chat)),
        'gpt-tokenizer': (chat) => gptTokenizer.encodeChat(chat, 'gpt-4o'),
      },
      { time, iterations: 20 },
    )),
  )

  const machine = describeMachine()
  const versions = ['gpt-tokenizer', 'js-tiktoken', 'tiktoken', 'tinybench'].map((n) => `${n} ${packageVersion(n)}`).join(', ')
  const lines = [
    '# One text at a time',
    '',
    `Machine: ${machine.cpu}, \`nproc\` ${machine.nproc}, ${machine.os}, Node ${machine.node}. Peers: ${versions}.`,
    `Command: \`node benchmark/single-text.mjs${QUICK ? ' --quick' : ''}\` (\`benchmark/single-text.mjs\` says how it measures).`,
    '',
    '| scenario | contender | median | fastest | median / batchtok |',
    '| --- | --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.scenario} | ${r.contender} | ${format(r.medianUs)} | ${format(r.minUs)} | ${r.ratio.toFixed(2)} |`),
    '',
  ]
  const out = path.join(HERE, 'results', 'single-text.md')
  fs.writeFileSync(out, lines.join('\n'))
  console.log(lines.join('\n'))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
