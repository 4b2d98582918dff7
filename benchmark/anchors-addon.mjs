// Per core from JS: addon builds side by side on the four corpora, one thread, text the process
// has not seen, so that an engine choice (the `fastokens` cargo feature) is judged where users
// meet it, next to the Rust anchors of `anchors.rs` (`results/anchors.md`).
//
// node benchmark/anchors-addon.mjs --addon NAME=PATH [--addon NAME=PATH ...] [--runs N]
//   [--encodings o200k_base,cl100k_base] [--corpora prose,code,multilingual,chat] [--out FILE]
//   [--warm-threads]
//
// Each round starts one Node process per addon and encoding (addons in an order rotated by one
// per round), so every engine meets the corpora cold. In it: `Tokenizer.fromEncoding`,
// `await whenReady()` (every engine built), one short text, then one `encodeBatch` of each whole
// corpus (in an order rotated by one per round) on `new Scheduler({ threads: 1 })`, timed. Each
// process reports seconds per corpus and a digest of every id; the digests of all addons must be
// equal, or the run stops: the first addon named is the reference (the default build, which the
// parity tests hold equal to tiktoken). Medians over rounds; MiB/s and the ratio to the first
// addon. Appends a table to `--out` (default: prints only).

import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const MIB = 1024 * 1024

function flag(name, fallback) {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : fallback
}

/** FNV-1a over the ids, as 32-bit words: equal ids give equal digests. */
function digest(ids) {
  let h = 0x811c9dc5
  for (let i = 0; i < ids.length; i++) {
    h = Math.imul(h ^ ids[i], 0x01000193) >>> 0
  }
  return `${ids.length}:${h.toString(16)}`
}

async function child() {
  const [addonPath, encoding, order] = args.slice(1)
  const { corpus } = require('../scripts/corpus.js')
  const names = order.split(',')
  const texts = names.map((name) => corpus(name))
  const batchtok = require(path.resolve(addonPath))
  const started = performance.now()
  const tokenizer = batchtok.Tokenizer.fromEncoding(encoding)
  await tokenizer.whenReady()
  const scheduler = new batchtok.Scheduler({ threads: 1 })
  // One short text; with --warm-threads, sixteen at once, so that every thread of libuv's pool
  // (4) has encoded before the clock starts: what a long-running server's threads have done.
  const warmups = process.env.ANCHORS_WARM_THREADS === '1' ? 16 : 1
  await Promise.all(
    Array.from({ length: warmups }, () => tokenizer.encodeBatch(['Hello, world!'], { scheduler })),
  )
  const loadMs = performance.now() - started
  const result = { loadMs, rss: process.memoryUsage().rss, seconds: {}, digests: {} }
  for (let k = 0; k < names.length; k++) {
    const t0 = performance.now()
    const batch = await tokenizer.encodeBatch(texts[k], { scheduler })
    result.seconds[names[k]] = (performance.now() - t0) / 1000
    result.digests[names[k]] = digest(batch.ids)
  }
  process.stdout.write(JSON.stringify(result))
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function main() {
  const addons = []
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--addon') {
      const [name, file] = args[i + 1].split('=')
      addons.push({ name, file })
    }
  }
  if (addons.length === 0) throw new Error('name at least one addon: --addon NAME=PATH')
  const runs = Number(flag('--runs', '5'))
  const encodings = flag('--encodings', 'o200k_base,cl100k_base').split(',')
  const corpora = flag('--corpora', 'prose,code,multilingual,chat').split(',')
  const { corpus } = require('../scripts/corpus.js')
  const bytes = Object.fromEntries(
    corpora.map((name) => [name, corpus(name).reduce((n, t) => n + Buffer.byteLength(t), 0)]),
  )
  const lines = []
  const out = (line) => {
    console.log(line)
    lines.push(line)
  }
  out(`# Per core from JS: ${addons.map((a) => a.name).join(' vs ')}\n`)
  out(`- Machine: nproc=${os.availableParallelism()}, cpu=${os.cpus()[0].model}, node ${process.version}`)
  out(`- Command: \`node benchmark/anchors-addon.mjs ${args.join(' ')}\``)
  out(`- ${runs} rounds; one process per addon, encoding and round; \`encodeBatch\` of each whole corpus on one thread; all ids equal to the first addon's`)
  out(`- Before the clock: ${args.includes('--warm-threads') ? 'sixteen concurrent one-text calls, so every libuv pool thread has encoded (a warm server)' : 'one one-text call (a fresh process)'}`)
  for (const encoding of encodings) {
    const seconds = addons.map(() => Object.fromEntries(corpora.map((c) => [c, []])))
    const loads = addons.map(() => [])
    const rss = addons.map(() => [])
    let reference = null
    for (let round = 0; round < runs; round++) {
      const order = corpora.map((_, i) => corpora[(i + round) % corpora.length])
      for (let k = 0; k < addons.length; k++) {
        const a = (k + round) % addons.length
        const run = spawnSync(
          process.execPath,
          [fileURLToPath(import.meta.url), '--child', addons[a].file, encoding, order.join(',')],
          {
            encoding: 'utf8',
            maxBuffer: 1 << 26,
            cwd: path.join(here, '..'),
            env: { ...process.env, ANCHORS_WARM_THREADS: args.includes('--warm-threads') ? '1' : '0' },
          },
        )
        if (run.status !== 0) throw new Error(`${addons[a].name}: ${run.stderr}`)
        const result = JSON.parse(run.stdout)
        if (a === 0) reference ??= result.digests
        for (const c of corpora) {
          seconds[a][c].push(result.seconds[c])
          if (reference && result.digests[c] !== reference[c] && a !== 0) {
            throw new Error(`${addons[a].name}, ${encoding}, ${c}: ids differ from ${addons[0].name}'s`)
          }
        }
        loads[a].push(result.loadMs)
        rss[a].push(result.rss)
      }
      console.error(`${encoding}: round ${round + 1} of ${runs}`)
    }
    out(`\n## ${encoding}\n`)
    out(`MiB/s (ratio to \`${addons[0].name}\`)\n`)
    out(`| addon | ${corpora.join(' | ')} | ready | RSS when ready |`)
    out(`| --- | ${corpora.map(() => '---:').join(' | ')} | ---: | ---: |`)
    const rate = (a, c) => bytes[c] / MIB / median(seconds[a][c])
    addons.forEach((addon, a) => {
      const cells = corpora.map((c) => `${rate(a, c).toFixed(1)} (${(rate(a, c) / rate(0, c)).toFixed(2)}x)`)
      out(`| \`${addon.name}\` | ${cells.join(' | ')} | ${median(loads[a]).toFixed(0)} ms | ${(median(rss[a]) / MIB).toFixed(0)} MiB |`)
    })
  }
  out('\n`ready`: `fromEncoding` to `whenReady()` and one short text, in a fresh process (the corpora already read); `RSS when ready`: the process\'s resident memory then.')
  const file = flag('--out', null)
  if (file) fs.appendFileSync(file, `\n${lines.join('\n')}\n`)
}

if (args[0] === '--child') {
  await child()
} else {
  main()
}
