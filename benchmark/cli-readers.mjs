// The CLI's readers alone, without encoding: how fast each compressed or columnar input becomes
// text, against the encoder's own pace (benchmark/results/cli.md), so that reading is never what
// limits a run.
//
//   node benchmark/cli-readers.mjs [--mib 64] [--rounds 3]
//
// zstd: fzstd (pure JS, streaming) is the one candidate that installs offline: the napi zstd
// packages (zstd-napi, @mongodb-js/zstd) fetch a prebuilt binary from outside the registry at
// install, and Node's zlib has zstd only from Node 22.15/23.8. gzip (zlib) is the reference.
// Parquet: one string column read a page at a time with hyparquet's page decoders
// (cli/parquet.js), as UTF-8 bytes, on a file written by hyparquet-writer (snappy pages, row
// groups of 4,096 documents). The .zst input needs the `zstd` command; without it that row is
// skipped.

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { gzipSync } from 'node:zlib'

import { describeMachine, packageVersion } from './machine.mjs'
import { median, MiB } from './stats.mjs'

const require = createRequire(import.meta.url)
const corpus = require('../scripts/corpus.js')
const { openBytes, parquetBatches } = require('../cli/readers.js')

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`)
  return at === -1 ? fallback : Number(args[at + 1])
}
const targetMiB = option('mib', 64)
const rounds = option('rounds', 3)

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'batchtok-bench-readers-'))
try {
  const documents = []
  while (documents.length * 6500 < targetMiB * MiB) documents.push(...corpus.bigDocuments())
  const jsonl = Buffer.from(documents.map((text) => JSON.stringify({ text })).join('\n') + '\n')
  const plain = path.join(work, 'docs.jsonl')
  fs.writeFileSync(plain, jsonl)
  fs.writeFileSync(`${plain}.gz`, gzipSync(jsonl, { level: 6 }))
  const haveZstd = spawnSync('zstd', ['-q', '-3', plain, '-o', `${plain}.zst`]).status === 0
  const { parquetWriteFile } = await import('hyparquet-writer')
  const parquet = path.join(work, 'docs.parquet')
  await parquetWriteFile({ filename: parquet, columnData: [{ name: 'text', data: documents, type: 'STRING' }], rowGroupSize: 4096 })

  const decompress = (file, compression) => async () => {
    let bytes = 0
    const input = { path: file, compression, size: fs.statSync(file).size }
    for await (const chunk of openBytes(input, 0, { rawBytes: 0 })) bytes += chunk.length
    return bytes
  }
  const readParquet = async () => {
    let bytes = 0
    const input = { path: parquet, size: fs.statSync(parquet).size }
    for await (const batch of parquetBatches(input, { field: 'text', batchBytes: MiB, progress: { rawBytes: 0 } })) bytes += batch.bytes.length
    return bytes
  }
  const contenders = [
    ['plain file (fs read stream)', decompress(plain, 'none')],
    [`gzip (node:zlib)`, decompress(`${plain}.gz`, 'gzip')],
    ...(haveZstd ? [[`zstd (fzstd ${packageVersion('fzstd')})`, decompress(`${plain}.zst`, 'zstd')]] : []),
    [`Parquet text column (hyparquet ${packageVersion('hyparquet')}, a page at a time)`, readParquet],
  ]
  const samples = new Map(contenders.map(([name]) => [name, []]))
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length])
    for (const [name, run] of order) {
      const started = performance.now()
      await run()
      samples.get(name).push((performance.now() - started) / 1000)
    }
  }
  const machine = describeMachine()
  const textMiB = jsonl.length / MiB
  console.log(`Readers: ${textMiB.toFixed(0)} MiB of JSONL (big.txt documents); MiB/s of the uncompressed text, median of ${rounds} rotated rounds.`)
  console.log(`Command: \`node benchmark/cli-readers.mjs --mib ${targetMiB} --rounds ${rounds}\`; ${machine.cpu}, nproc ${machine.nproc}, Node ${machine.node}.`)
  console.log('')
  console.log('| reader | MiB/s |')
  console.log('| --- | ---: |')
  for (const [name] of contenders) console.log(`| ${name} | ${(textMiB / median(samples.get(name))).toFixed(0)} |`)
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
