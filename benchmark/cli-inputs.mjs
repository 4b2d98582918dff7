// The inputs of the CLI benchmarks (benchmark/cli.mjs, benchmark/cli-timeline.mjs), built from the
// four corpora of scripts/corpus.js (prose, code, multilingual, chat), their items taken in turn
// so that the kinds mix, repeated to size: `lines.txt`, every line of every item a document (text
// input), `docs.jsonl`, every item one record `{"id", "text", "corpus"}` (JSONL input,
// `--field text`), and `docs.parquet`, every item's text in a `text` column of one row group
// (written by hyparquet-writer: snappy pages of plain values, no dictionary, so that repeating the
// items to size does not shrink the file to a dictionary).

import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

const require = createRequire(import.meta.url)
const { CORPUS_NAMES, corpus } = require('../scripts/corpus.js')

/** The corpora's items, taken in turn (one of each corpus, then the next of each…). */
function mixedItems() {
  const lists = CORPUS_NAMES.map((name) => ({ name, items: corpus(name) }))
  const longest = Math.max(...lists.map((list) => list.items.length))
  const mixed = []
  for (let i = 0; i < longest; i++) {
    for (const { name, items } of lists) if (i < items.length) mixed.push({ corpus: name, id: `${name}-${i}`, text: items[i] })
  }
  return mixed
}

/** Writes `piece` repeated until the file reaches `bytes`; returns the file's size. */
function writeRepeated(file, piece, bytes) {
  const fd = fs.openSync(file, 'w')
  let size = 0
  while (size < bytes) size += fs.writeSync(fd, piece)
  fs.closeSync(fd)
  return size
}

/** Writes the items' texts in turn, repeated until they hold `bytes` of UTF-8, as the `text`
 * column of one row group; returns the texts. */
async function writeParquet(file, items, bytes) {
  const { parquetWriteFile } = await import('hyparquet-writer')
  const texts = []
  for (let size = 0; size < bytes; ) {
    for (const item of items) {
      texts.push(item.text)
      size += Buffer.byteLength(item.text)
    }
  }
  await parquetWriteFile({ filename: file, columnData: [{ name: 'text', data: texts, type: 'STRING', encoding: 'PLAIN' }], rowGroupSize: texts.length })
  return texts
}

/**
 * The three inputs in `folder`, each `{ kind, name, file, args }` (`args`: the CLI's options for
 * it); `write(input, bytes)` writes one of about `bytes` and resolves to its size (for Parquet,
 * the size of its texts in UTF-8), and `parquetTexts()` gives the texts the Parquet file holds.
 */
export function cliInputs(folder) {
  let pieces = null
  let items = null
  let parquetTexts = null
  const piecesOf = () => {
    if (pieces) return pieces
    items ??= mixedItems()
    pieces = {
      lines: items.map((item) => item.text.replace(/\n$/, '')).join('\n') + '\n',
      jsonl: items.map((item) => JSON.stringify({ id: item.id, text: item.text, corpus: item.corpus })).join('\n') + '\n',
    }
    return pieces
  }
  return {
    inputs: [
      { kind: 'lines', name: 'text, a document per line', file: path.join(folder, 'lines.txt'), args: [] },
      { kind: 'jsonl', name: 'JSONL, a document per record', file: path.join(folder, 'docs.jsonl'), args: ['--field', 'text'] },
      { kind: 'parquet', name: 'Parquet, one row group', file: path.join(folder, 'docs.parquet'), args: ['--field', 'text'] },
    ],
    write: async (input, bytes) => {
      if (input.kind !== 'parquet') return writeRepeated(input.file, piecesOf()[input.kind], bytes)
      items ??= mixedItems()
      parquetTexts = await writeParquet(input.file, items, bytes)
      return parquetTexts.reduce((size, text) => size + Buffer.byteLength(text), 0)
    },
    parquetTexts: () => parquetTexts,
  }
}
