// `batchtok encode` and `batchtok merge`, run as a user runs them: a child process on files in a
// temporary folder. Outputs are read back by a reader written here from Megatron-LM's layout and
// compared with the addon's own encodeBatch; the Python reader's view of the same layout is in
// fixtures/cli/megatron-read.json (scripts/cli-fixtures.py).
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { CLI, cli, encode, lines, readMegatron, sha256, texts } from './cli-helpers'
import { batchtok, corpus, FIXTURES, fixture, rankFileOf, TEKKEN_FILE } from './helpers'

const { openColumn } = createRequire(import.meta.url)('../cli/parquet.js')
const { ZstdFrames, zstdDecompressor } = createRequire(import.meta.url)('../cli/zstd.js')
const CLI_FIXTURES = join(FIXTURES, 'cli')

const o200k = batchtok.Tokenizer.fromEncoding('o200k_base')
const r50k = batchtok.Tokenizer.fromEncoding('r50k_base')
const EOT = 50256

let work: string
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'batchtok-cli-'))
  writeFileSync(join(work, 'lines.txt'), lines.join('\n') + '\n')
  writeFileSync(join(work, 'docs.jsonl'), texts.map((text, i) => JSON.stringify({ id: i, body: text })).join('\n') + '\n')
  writeFileSync(join(work, 'docs.jsonl.gz'), gzipSync(readFileSync(join(work, 'docs.jsonl'))))
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('encode: inputs decode back to the documents', () => {
  it('text, one document per line: ids equal encodeBatch, decode equals each line', async () => {
    const summary = encode(work, ['encode', 'lines.txt', '--encoding', 'o200k_base', '-o', 'out/lines'])
    expect(summary.documents).toBe(lines.length)
    const ids = readMegatron(join(work, 'out/lines'))
    expect(ids).toEqual((await o200k.encodeBatch(lines)).toArrays())
    expect(ids.map((list) => o200k.decode(list))).toEqual(lines)
  })

  it('text with --doc-per-file and \\r\\n line ends', async () => {
    mkdirSync(join(work, 'files'), { recursive: true })
    writeFileSync(join(work, 'files/a.txt'), 'first\r\nfile\n')
    writeFileSync(join(work, 'files/b.txt'), 'second file')
    encode(work, ['encode', 'files/*.txt', '--doc-per-file', '--encoding', 'r50k_base', '-o', 'out/files'])
    expect(readMegatron(join(work, 'out/files')).map((list) => r50k.decode(list))).toEqual(['first\r\nfile\n', 'second file'])
    encode(work, ['encode', 'files/a.txt', '--encoding', 'r50k_base', '-o', 'out/crlf'])
    expect(readMegatron(join(work, 'out/crlf')).map((list) => r50k.decode(list))).toEqual(['first', 'file'])
  })

  it.each([
    ['JSONL', 'docs.jsonl'],
    ['gzip JSONL', 'docs.jsonl.gz'],
  ])('%s with --field: ids equal encodeBatch of the field', async (_name, file) => {
    encode(work, ['encode', file, '--field', 'body', '--encoding', 'o200k_base', '-o', `out/${file}`])
    const ids = readMegatron(join(work, `out/${file}`))
    expect(ids).toEqual((await o200k.encodeBatch(texts)).toArrays())
    expect(ids.map((list) => o200k.decode(list))).toEqual(texts)
  })

  it('JSONL escapes, duplicate keys and blank lines: ids equal encodeBatch of JSON.parse', async () => {
    // Each text is written back as UTF-8 over its own line (cli/readers.js): escapes that shrink
    // (\u, surrogate pairs, a lone surrogate), text longer than a short line, a key given twice.
    const jsonl = [
      String.raw`{"text":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t\r\b\f"}`,
      '',
      String.raw`  {"text" : "lone \ud800 surrogate", "id": 1}  `,
      String.raw`{"text":"first","text":"second, the one JSON.parse keeps"}`,
      JSON.stringify({ text: 'é'.repeat(300) + '日本語'.repeat(100) }),
      '   ',
      JSON.stringify({ text: '' }),
      JSON.stringify({ text: 'raw 😀 and control characters: ' + '\u0001\u001f'.repeat(50) }),
    ]
    writeFileSync(join(work, 'escapes.jsonl'), jsonl.join('\n'))
    const expected = jsonl.filter((line) => line.trim() !== '').map((line) => JSON.parse(line).text as string)
    encode(work, ['encode', 'escapes.jsonl', '--encoding', 'o200k_base', '--batch-mib', '0.0001', '-o', 'out/escapes'])
    encode(work, ['encode', 'escapes.jsonl', '--encoding', 'o200k_base', '-o', 'out/escapes-one'])
    const want = (await o200k.encodeBatch(expected)).toArrays()
    expect(readMegatron(join(work, 'out/escapes'))).toEqual(want)
    expect(readMegatron(join(work, 'out/escapes-one'))).toEqual(want)
  })

  const read = fixture<{ cases: number[]; command: Record<string, string[]>; read: Record<string, { ids: number[][]; binSha256: string; idxSha256: string }> }>(
    'cli/megatron-read.json',
  )
  const fixtureDocs = read.cases.map((i) => texts[i])

  it('zstd JSONL (written by Python zstandard)', async () => {
    encode(CLI_FIXTURES, ['encode', 'docs.jsonl.zst', '--field', 'content', '--encoding', 'o200k_base', '-o', join(work, 'out/zst')])
    expect(readMegatron(join(work, 'out/zst'))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
  })

  it('zstd JSONL of several frames, a skippable one among them: every frame is read', async () => {
    encode(CLI_FIXTURES, ['encode', 'frames.jsonl.zst', '--field', 'content', '--encoding', 'o200k_base', '-o', join(work, 'out/frames')])
    expect(readMegatron(join(work, 'out/frames'))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
    // From stdin, where its first bytes say it is zstd.
    encode(work, ['encode', '-', '--format', 'jsonl', '--field', 'content', '--encoding', 'o200k_base', '-o', 'out/frames-stdin'], readFileSync(join(CLI_FIXTURES, 'frames.jsonl.zst')))
    expect(readMegatron(join(work, 'out/frames-stdin'))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
  })

  it('gzip of several members (files joined with cat): every member is read', async () => {
    const records = fixtureDocs.map((text, id) => JSON.stringify({ id, content: text }) + '\n')
    const half = records.length >> 1
    writeFileSync(join(work, 'members.jsonl.gz'), Buffer.concat([gzipSync(records.slice(0, half).join('')), gzipSync(records.slice(half).join(''))]))
    encode(work, ['encode', 'members.jsonl.gz', '--field', 'content', '--encoding', 'o200k_base', '-o', 'out/members'])
    expect(readMegatron(join(work, 'out/members'))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
  })

  it.each([
    ['cut inside its last frame', (zst: Buffer) => zst.subarray(0, zst.length - 100), /unexpected (end of file|EOF)/],
    ['followed by bytes that are no frame', (zst: Buffer) => Buffer.concat([zst, Buffer.from('not zstd')]), /(bytes that are not a zstd frame at byte 14891|invalid zstd data)/],
  ])('a zstd file %s is an error, with no output', (name, damage, message) => {
    const file = `damaged-${name.split(' ')[0]}.jsonl.zst`
    writeFileSync(join(work, file), damage(readFileSync(join(CLI_FIXTURES, 'frames.jsonl.zst'))))
    const run = cli(work, ['encode', file, '--field', 'content', '--encoding', 'o200k_base', '-o', `out/${file}`])
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(new RegExp(`^batchtok: ${file.replace(/\./g, '\\.')}: ${message.source}; check that it is a whole zstd file\n$`))
    expect(existsSync(join(work, `out/${file}.bin`))).toBe(false)
  })

  it('ZstdFrames finds the same frame ends whatever the chunks it is fed', () => {
    const zst = readFileSync(join(CLI_FIXTURES, 'frames.jsonl.zst'))
    const frameEnds = (chunkBytes: (i: number) => number) => {
      const frames = new ZstdFrames()
      const ends: Array<[number, boolean]> = []
      let position = 0
      for (let at = 0, i = 0; at < zst.length; i++) {
        const chunk = zst.subarray(at, at + chunkBytes(i))
        at += chunk.length
        for (const { bytes, skippable, frameEnds } of frames.pieces(chunk)) {
          position += bytes.length
          if (frameEnds) ends.push([position, skippable])
        }
      }
      frames.end()
      return ends
    }
    // Where zstandard's own reader puts them (the fixture's frames: scripts/cli-fixtures.py).
    const expected = [
      [4043, false],
      [4056, true],
      [9447, false],
      [14891, false],
    ]
    expect(frameEnds(() => zst.length)).toEqual(expected)
    expect(frameEnds(() => 1)).toEqual(expected)
    expect(frameEnds((i) => 1 + ((i * 7919) % 4099))).toEqual(expected)
    const cut = new ZstdFrames()
    for (const _ of cut.pieces(zst.subarray(0, 4045))) {
      // walked
    }
    expect(() => cut.end()).toThrow('unexpected end of file')
  })

  it('a frame of raw and RLE blocks, with a one-byte content size, decodes', async () => {
    const text = Buffer.from('raw block, then an RLE block: ')
    const run = 70
    const blockHeader = (size: number, type: number, last: boolean) => {
      const header = (size << 3) | (type << 1) | (last ? 1 : 0)
      return Buffer.from([header & 0xff, (header >> 8) & 0xff, header >> 16])
    }
    const frame = Buffer.concat([
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd]),
      // Single segment, no checksum, no dictionary: the content size in one byte.
      Buffer.from([0x20, text.length + run]),
      blockHeader(text.length, 0, false),
      text,
      blockHeader(run, 1, true),
      Buffer.from('z'),
    ])
    const decoder = zstdDecompressor(1 << 16)
    const output: Buffer[] = []
    decoder.on('data', (bytes: Buffer) => output.push(bytes))
    const ended = new Promise((resolve, reject) => decoder.on('end', resolve).on('error', reject))
    decoder.end(Buffer.concat([frame, frame]))
    await ended
    const once = Buffer.concat([text, Buffer.alloc(run, 'z')]).toString()
    expect(Buffer.concat(output).toString()).toBe(once + once)
  })

  it.each(['brotli', 'lz4', 'snappy', 'none'])('Parquet with %s pages (written by pyarrow): ids equal encodeBatch', async (codec) => {
    encode(CLI_FIXTURES, ['encode', `docs-${codec}.parquet`, '--encoding', 'o200k_base', '-o', join(work, `out/parquet-${codec}`)])
    expect(readMegatron(join(work, `out/parquet-${codec}`))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
  })

  it.each(['delta-length', 'delta-bytes'])('Parquet with %s values (written by pyarrow): ids equal encodeBatch', async (encoding) => {
    encode(CLI_FIXTURES, ['encode', `docs-${encoding}.parquet`, '--encoding', 'o200k_base', '-o', join(work, `out/parquet-${encoding}`)])
    expect(readMegatron(join(work, `out/parquet-${encoding}`))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
  })

  it('a Parquet UUID column is encoded as its text', () => {
    encode(CLI_FIXTURES, ['encode', 'uuid.parquet', '--encoding', 'o200k_base', '--count-only', '-o', join(work, 'out/uuid')])
    const uuids = [0, 1, 2].map((i) => Buffer.from(Array.from({ length: 16 }, (_, k) => i + k)).toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-'))
    const counts = readFileSync(join(work, 'out/uuid.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line).tokens)
    expect(counts).toEqual(uuids.map((uuid) => o200k.count(uuid)))
  })

  it('Parquet in one row group of many pages (gzip, a dictionary, then plain values): read a page at a time, ids equal encodeBatch', async () => {
    const readPages = async (options?: { headerProbeBytes: number }) => {
      const column = await openColumn(join(CLI_FIXTURES, 'pages.parquet'), 'text', options)
      const pages: string[][] = []
      try {
        for await (const page of column.pages()) pages.push(page.values.map((bytes: Uint8Array) => Buffer.from(bytes).toString('utf8')))
      } finally {
        await column.close()
      }
      return pages
    }
    const pages = await readPages()
    expect(pages.length).toBeGreaterThan(10)
    expect(pages.flat()).toEqual(fixtureDocs)
    // Every page header read in growing pieces, as a header longer than the first read is.
    expect(await readPages({ headerProbeBytes: 3 })).toEqual(pages)
    encode(CLI_FIXTURES, ['encode', 'pages.parquet', '--encoding', 'o200k_base', '--batch-mib', '0.001', '-o', join(work, 'out/pages')])
    expect(readMegatron(join(work, 'out/pages'))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
  })

  it('Parquet in data pages of version 2 (levels, then snappy values; a dictionary, then plain values), written by pyarrow: ids equal encodeBatch', async () => {
    const column = await openColumn(join(CLI_FIXTURES, 'pages-v2.parquet'), 'text')
    const pages: string[][] = []
    try {
      for await (const page of column.pages()) pages.push(page.values.map((bytes: Uint8Array) => Buffer.from(bytes).toString('utf8')))
    } finally {
      await column.close()
    }
    expect(pages.length).toBeGreaterThan(10)
    expect(pages.flat()).toEqual(fixtureDocs)
    encode(CLI_FIXTURES, ['encode', 'pages-v2.parquet', '--encoding', 'o200k_base', '--batch-mib', '0.001', '-o', join(work, 'out/pages-v2')])
    expect(readMegatron(join(work, 'out/pages-v2'))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
  })

  it('Parquet with LZ4 pages that hold a raw block, as fastparquet writes them: ids equal encodeBatch', async () => {
    // A raw LZ4 block of literals alone: valid LZ4 that, like most raw blocks, starts with more
    // than 8 literals, which a reader of Hadoop frames alone takes for a frame.
    const literalsOnly = (bytes: Uint8Array): Uint8Array => {
      const head = [Math.min(bytes.length, 15) << 4]
      if (bytes.length >= 15) {
        let rest = bytes.length - 15
        for (; rest >= 255; rest -= 255) head.push(255)
        head.push(rest)
      }
      return Buffer.concat([Buffer.from(head), bytes])
    }
    const docs = ['a'.repeat(200), 'b'.repeat(100)]
    const { parquetWriteFile } = await import('hyparquet-writer')
    await parquetWriteFile({
      filename: join(work, 'lz4-block.parquet'),
      columnData: [{ name: 'text', data: docs, type: 'STRING', encoding: 'PLAIN' }],
      codec: 'LZ4',
      compressors: { LZ4: literalsOnly },
    })
    encode(work, ['encode', 'lz4-block.parquet', '--encoding', 'o200k_base', '-o', 'out/lz4-block'])
    expect(readMegatron(join(work, 'out/lz4-block'))).toEqual((await o200k.encodeBatch(docs)).toArrays())
  })

  it.runIf(process.platform === 'linux')('a pipe named as a file (<(cat …)): read as it comes, compression from its first bytes; no --shard', async () => {
    const run = (args: string) =>
      spawnSync('bash', ['-c', `"${process.execPath}" "${CLI}" encode <(cat docs.jsonl.gz) ${args}`], { cwd: work, encoding: 'utf8' })
    const piped = run('--format jsonl --field body --encoding o200k_base -q -o out/piped')
    expect(piped.stderr).toBe('')
    expect(piped.status).toBe(0)
    expect(readMegatron(join(work, 'out/piped'))).toEqual((await o200k.encodeBatch(texts)).toArrays())
    const sharded = run('--format jsonl --field body --encoding o200k_base -q --shard 0/2 -o out/piped-shard')
    expect(sharded.status).toBe(2)
    expect(sharded.stderr).toBe('batchtok: --shard needs named files; stdin and pipes cannot be split\n')
  })

  it('compression read from the first bytes where no name says it: gzip on stdin, zstd in a file named without .zst', async () => {
    encode(work, ['encode', '-', '--format', 'jsonl', '--field', 'body', '--encoding', 'o200k_base', '-o', 'out/stdin-gzip'], readFileSync(join(work, 'docs.jsonl.gz')))
    expect(readMegatron(join(work, 'out/stdin-gzip'))).toEqual((await o200k.encodeBatch(texts)).toArrays())
    copyFileSync(join(CLI_FIXTURES, 'docs.jsonl.zst'), join(work, 'docs-zstd.jsonl'))
    encode(work, ['encode', 'docs-zstd.jsonl', '--field', 'content', '--encoding', 'o200k_base', '-o', 'out/sniffed-zstd'])
    expect(readMegatron(join(work, 'out/sniffed-zstd'))).toEqual((await o200k.encodeBatch(fixtureDocs)).toArrays())
    const truncated = cli(work, ['encode', '-', '--encoding', 'o200k_base', '-q', '-o', 'out/truncated'], readFileSync(join(work, 'docs.jsonl.gz')).subarray(0, 200))
    expect(truncated.status).toBe(1)
    expect(truncated.stderr).toMatch(/^batchtok: -: .*; check that it is a whole gzip file\n$/)
  })

  it('a byte order mark starting a JSONL file is skipped, in a file, on stdin and in shards; in text it is text', async () => {
    const bom = '\ufeff'
    writeFileSync(join(work, 'bom.jsonl'), bom + readFileSync(join(work, 'docs.jsonl'), 'utf8'))
    const want = (await o200k.encodeBatch(texts)).toArrays()
    const args = ['--field', 'body', '--encoding', 'o200k_base']
    encode(work, ['encode', 'bom.jsonl', ...args, '-o', 'out/bom'])
    expect(readMegatron(join(work, 'out/bom'))).toEqual(want)
    encode(work, ['encode', '-', '--format', 'jsonl', ...args, '-o', 'out/bom-stdin'], bom + readFileSync(join(work, 'docs.jsonl'), 'utf8'))
    expect(readMegatron(join(work, 'out/bom-stdin'))).toEqual(want)
    const shards = [0, 1, 2].map((i) => {
      encode(work, ['encode', 'bom.jsonl', ...args, '--shard', `${i}/3`, '-o', `out/bom-shard${i}`])
      return `out/bom-shard${i}`
    })
    expect(cli(work, ['merge', ...shards, '-o', 'out/bom-merged']).stderr).toBe('')
    expect(sha256(join(work, 'out/bom-merged.bin'))).toBe(sha256(join(work, 'out/bom.bin')))
    writeFileSync(join(work, 'bom.txt'), bom + 'first\nsecond\n')
    encode(work, ['encode', 'bom.txt', '--encoding', 'o200k_base', '-o', 'out/bom-text'])
    expect(readMegatron(join(work, 'out/bom-text')).map((list) => o200k.decode(list))).toEqual([bom + 'first', 'second'])
  })

  it.each(['r50k_base', 'o200k_base'])('Parquet (written by pyarrow), %s: the Python reader saw encodeBatch + EOS, and the CLI writes those bytes', async (encoding) => {
    const tokenizer = batchtok.Tokenizer.fromEncoding(encoding)
    const eos = tokenizer.encode('<|endoftext|>', { allowedSpecial: 'all' })[0]
    const expected = (await tokenizer.encodeBatch(fixtureDocs)).toArrays().map((ids) => [...ids, eos])
    expect(read.read[encoding].ids).toEqual(expected)
    const prefix = join(work, `out/parquet-${encoding}`)
    encode(CLI_FIXTURES, [...read.command[encoding].filter((arg) => arg !== '-q'), '-o', prefix])
    expect(readMegatron(prefix)).toEqual(expected)
    expect(sha256(`${prefix}.bin`)).toBe(read.read[encoding].binSha256)
    expect(sha256(`${prefix}.idx`)).toBe(read.read[encoding].idxSha256)
  })

  it('stdin, flat .bin with --append-eos, and --count-only', async () => {
    const summary = encode(work, ['encode', '-', '--encoding', 'r50k_base', '--output-format', 'flat', '--append-eos', '-o', 'out/flat'], lines.join('\n'))
    expect(summary.dtype).toBe('uint16')
    const flat = readFileSync(join(work, 'out/flat.bin'))
    const expected = (await r50k.encodeBatch(lines)).toArrays().flatMap((ids) => [...ids, EOT])
    expect(Array.from(new Uint16Array(flat.buffer, flat.byteOffset, flat.length / 2))).toEqual(expected)
    encode(work, ['encode', 'lines.txt', '--encoding', 'r50k_base', '--count-only', '-o', 'out/counts'])
    const counts = readFileSync(join(work, 'out/counts.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line).tokens)
    expect(counts).toEqual(Array.from(await r50k.countBatch(lines)))
  })
})

describe('encode: many small files', () => {
  const { planBatches, shardParts } = createRequire(import.meta.url)('../cli/plan.js')
  const { resolveInputs } = createRequire(import.meta.url)('../cli/inputs.js')
  const { skipDocuments } = createRequire(import.meta.url)('../cli/encode.js')
  const { lineError } = createRequire(import.meta.url)('../cli/readers.js')

  /** Writes `count` small files into `folder`, one empty and, unless `everyLineEnded`, some
   * ending without a newline; returns their contents in order. */
  const writeSmallFiles = (folder: string, count: number, extension: string, line: (text: string, i: number) => string, everyLineEnded = false) => {
    mkdirSync(join(work, folder), { recursive: true })
    const contents: string[] = []
    for (let f = 0; f < count; f++) {
      const picked = f === 5 ? [] : lines.slice((f * 7) % lines.length, ((f * 7) % lines.length) + 1 + (f % 4))
      const text = picked.map(line).join('\n') + (picked.length > 0 && (everyLineEnded || f % 3 !== 0) ? '\n' : '')
      writeFileSync(join(work, folder, `f${String(f).padStart(3, '0')}.${extension}`), text)
      contents.push(text)
    }
    return contents
  }
  /** The files' contents as one file holds them: a newline after each that lacks one. */
  const asOneFile = (contents: string[]) => contents.map((text) => (text === '' || text.endsWith('\n') ? text : `${text}\n`)).join('')

  it.each([
    ['text', 'txt', (text: string) => text],
    ['JSONL', 'jsonl', (text: string, i: number) => JSON.stringify({ text, i })],
  ])('%s: the documents of every file in order, the same bytes as one file of their lines', (_name, extension, line) => {
    const contents = writeSmallFiles(`small-${extension}`, 60, extension, line)
    writeFileSync(join(work, `small-one.${extension}`), asOneFile(contents))
    for (const batchMiB of ['1', '0.002']) {
      const summary = encode(work, ['encode', `small-${extension}/*.${extension}`, '--encoding', 'o200k_base', '--batch-mib', batchMiB, '-o', `out/small-${extension}-${batchMiB}`])
      encode(work, ['encode', `small-one.${extension}`, '--encoding', 'o200k_base', '--batch-mib', batchMiB, '-o', `out/small-one-${extension}-${batchMiB}`])
      expect(summary.documents).toBe(asOneFile(contents).split('\n').length - 1)
      for (const suffix of ['bin', 'idx']) {
        expect(sha256(join(work, `out/small-${extension}-${batchMiB}.${suffix}`))).toBe(sha256(join(work, `out/small-one-${extension}-${batchMiB}.${suffix}`)))
      }
    }
  })

  it('Parquet: the rows of every file in order, the same bytes as one file of them', async () => {
    const { parquetWriteFile } = await import('hyparquet-writer')
    mkdirSync(join(work, 'small-parquet'), { recursive: true })
    const all: string[] = []
    for (let f = 0; f < 40; f++) {
      const rows = f === 9 ? [] : texts.slice((f * 11) % texts.length, ((f * 11) % texts.length) + 1 + (f % 5))
      all.push(...rows)
      await parquetWriteFile({ filename: join(work, 'small-parquet', `f${String(f).padStart(3, '0')}.parquet`), columnData: [{ name: 'text', data: rows, type: 'STRING' }] })
    }
    await parquetWriteFile({ filename: join(work, 'small-parquet-one.parquet'), columnData: [{ name: 'text', data: all, type: 'STRING' }] })
    for (const batchMiB of ['1', '0.002']) {
      const summary = encode(work, ['encode', 'small-parquet/*.parquet', '--encoding', 'o200k_base', '--batch-mib', batchMiB, '-o', `out/small-parquet-${batchMiB}`])
      encode(work, ['encode', 'small-parquet-one.parquet', '--encoding', 'o200k_base', '--batch-mib', batchMiB, '-o', `out/small-parquet-one-${batchMiB}`])
      expect(summary.documents).toBe(all.length)
      for (const suffix of ['bin', 'idx']) {
        expect(sha256(join(work, `out/small-parquet-${batchMiB}.${suffix}`))).toBe(sha256(join(work, `out/small-parquet-one-${batchMiB}.${suffix}`)))
      }
      expect(readMegatron(join(work, `out/small-parquet-${batchMiB}`))).toEqual((await o200k.encodeBatch(all)).toArrays())
    }
  })

  it('a bad line in a joined batch is named by its own file and line', () => {
    const contents = writeSmallFiles('small-bad', 30, 'jsonl', (text, i) => JSON.stringify({ text, i }))
    const bad = join('small-bad', 'f017.jsonl')
    const lineCount = contents[17].split('\n').filter((l) => l !== '').length
    writeFileSync(join(work, bad), `${contents[17]}${contents[17].endsWith('\n') ? '' : '\n'}{"text": "cut\n`)
    const run = cli(work, ['encode', 'small-bad/*.jsonl', '--encoding', 'o200k_base', '-q', '-o', 'out/small-bad'])
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(new RegExp(`^batchtok: small-bad/f017\\.jsonl:${lineCount + 1}: .*malformed JSON`))
  })

  it('a resumed run skips documents inside a joined batch, and still names a later bad line by its file', async () => {
    const contents = writeSmallFiles('small-resume', 20, 'txt', (text) => text, true)
    writeFileSync(join(work, 'small-resume', 'f012.txt'), Buffer.concat([Buffer.from(asOneFile([contents[12]])), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]))
    const documents = asOneFile(contents.slice(0, 12)).split('\n').length - 1
    const parts = shardParts(resolveInputs([join(work, 'small-resume', '*.txt')], 'auto'), { index: 0, count: 1 }, false)
    const planned = planBatches(parts, { docPerFile: false, field: 'text', batchBytes: () => 1 << 20, progress: { rawBytes: 0 } })
    const batches = []
    for await (const batch of skipDocuments(planned, documents - 2)) batches.push(batch)
    expect(batches).toHaveLength(1)
    const [batch] = batches
    expect(batch.lines.toString('utf8').split('\n').slice(0, 2)).toEqual(asOneFile(contents.slice(0, 12)).split('\n').slice(-3, -1))
    const error = await o200k.encodeLines(batch.lines, { format: 'lines' }).then(
      () => null,
      (thrown: Error) => thrown,
    )
    const lineOfBad = asOneFile([contents[12]]).split('\n').length
    expect(lineError(error, batch.source).message).toBe(`${join(work, 'small-resume', 'f012.txt')}:${lineOfBad}: the text is not UTF-8; convert the file to UTF-8 (iconv -f <encoding> -t utf-8)`)
  })
})

describe('encode: a rank file in tiktoken’s format', () => {
  // r50k_base's ranks as a .tiktoken file, with Llama 3's spelling of cl100k_base's pattern and a
  // special token of its own as the end of text.
  const pattern = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
  const specialTokens = { '<|end_of_text|>': 50300 }
  const ranks = rankFileOf('r50k_base')

  it('--tiktoken with --pattern and --special-tokens: ids equal fromTiktoken’s encodeBatch, and --append-eos appends the token named', async () => {
    writeFileSync(join(work, 'r50k.tiktoken'), ranks)
    const args = ['encode', 'lines.txt', '--tiktoken', 'r50k.tiktoken', '--pattern', pattern, '--special-tokens', JSON.stringify(specialTokens)]
    const summary = encode(work, [...args, '--append-eos', '--eos-token', '<|end_of_text|>', '-o', 'out/tiktoken'])
    expect(summary.dtype).toBe('uint16')
    const tokenizer = batchtok.Tokenizer.fromTiktoken(ranks, { pattern, specialTokens })
    const expected = (await tokenizer.encodeBatch(lines)).toArrays().map((ids) => [...ids, 50300])
    expect(readMegatron(join(work, 'out/tiktoken'))).toEqual(expected)
  })

  it('names what is missing or wrong', () => {
    writeFileSync(join(work, 'r50k.tiktoken'), ranks)
    const stderr = (args: string[]) => cli(work, ['encode', 'lines.txt', ...args, '-o', 'out/tiktoken-bad']).stderr
    expect(stderr(['--tiktoken', 'r50k.tiktoken'])).toMatch(/--tiktoken needs --pattern, the regex that splits text/)
    expect(stderr(['--encoding', 'o200k_base', '--pattern', pattern])).toMatch(/--pattern goes with --tiktoken, which the command does not give/)
    expect(stderr(['--tiktoken', 'r50k.tiktoken', '--pattern', pattern, '--special-tokens', '{x'])).toMatch(/--special-tokens is not JSON .*; give an object of each token and its id/)
    expect(stderr(['--tiktoken', 'missing.tiktoken', '--pattern', pattern])).toMatch(/--tiktoken: cannot read missing\.tiktoken/)
    expect(stderr(['--tiktoken', 'lines.txt', '--pattern', pattern])).toMatch(/--tiktoken lines\.txt: line 1 of the rank file .*; is it a rank file\?/)
    expect(stderr(['--tiktoken', 'r50k.tiktoken', '--pattern', pattern, '--append-eos'])).toMatch(/--eos-token <\|endoftext\|>/)
  })
})

describe('encode: a tokenizer.json alone, which names no end-of-sequence token', () => {
  it('--append-eos asks for --eos-token, suggesting one of its special tokens; given, it is appended', async () => {
    const file = join(FIXTURES, 'tokenizers', 'gpt2.json')
    const run = cli(work, ['encode', 'lines.txt', '--tokenizer', file, '--append-eos', '-o', 'out/gpt2-no-eos'])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/--append-eos: this tokenizer names no end-of-sequence token .*; give it with --eos-token, e\.g\. --eos-token "<\|endoftext\|>" \(its special tokens: <\|endoftext\|>\)/)
    const bert = cli(work, ['encode', 'lines.txt', '--tokenizer', join(FIXTURES, 'tokenizers', 'bert.json'), '--append-eos', '-o', 'out/bert-no-eos'])
    expect(bert.stderr).toMatch(/--eos-token "\[SEP\]" \(its special tokens: .*\[SEP\]/)
    encode(work, ['encode', 'lines.txt', '--tokenizer', file, '--append-eos', '--eos-token', '<|endoftext|>', '-o', 'out/gpt2-eos'])
    const tokenizer = batchtok.Tokenizer.fromFile(file)
    const expected = (await tokenizer.encodeBatch(lines)).toArrays().map((ids) => [...ids, tokenizer.tokenToId('<|endoftext|>')])
    expect(readMegatron(join(work, 'out/gpt2-eos'))).toEqual(expected)
  })

  it('a model folder whose end-of-sequence token is in the vocabulary, not added (InternLM2’s shape): its id is appended, as transformers’ eos_token_id', async () => {
    const json = JSON.parse(readFileSync(join(FIXTURES, 'tokenizers', 'sentencepiece.json'), 'utf8'))
    json.added_tokens = json.added_tokens.filter((token: { content: string }) => token.content !== '</s>')
    json.post_processor = null
    mkdirSync(join(work, 'eos-in-vocabulary'), { recursive: true })
    writeFileSync(join(work, 'eos-in-vocabulary', 'tokenizer.json'), JSON.stringify(json))
    writeFileSync(join(work, 'eos-in-vocabulary', 'tokenizer_config.json'), JSON.stringify({ eos_token: '</s>' }))
    const tokenizer = batchtok.Tokenizer.fromFile(join(work, 'eos-in-vocabulary', 'tokenizer.json'))
    const eos = tokenizer.tokenToId('</s>')!
    // No text encodes to it: its text is ordinary text.
    expect(Array.from(tokenizer.encode('</s>', { addSpecialTokens: false }))).not.toEqual([eos])
    encode(work, ['encode', 'lines.txt', '--tokenizer', 'eos-in-vocabulary', '--append-eos', '-o', 'out/eos-in-vocabulary'])
    const expected = (await tokenizer.encodeBatch(lines)).toArrays().map((ids) => [...ids, eos])
    expect(readMegatron(join(work, 'out/eos-in-vocabulary'))).toEqual(expected)
  })
})

describe('encode: Mistral’s tekken.json', () => {
  it('--tekken: ids equal fromTekken’s encodeBatch, and --append-eos appends </s>', async () => {
    const summary = encode(work, ['encode', 'lines.txt', '--tekken', TEKKEN_FILE, '--append-eos', '-o', 'out/tekken'])
    expect(summary.dtype).toBe('int32')
    const tekken = batchtok.Tokenizer.fromTekken(readFileSync(TEKKEN_FILE))
    const expected = (await tekken.encodeBatch(lines)).toArrays().map((ids) => [...ids, tekken.tokenToId('</s>')])
    expect(readMegatron(join(work, 'out/tekken'))).toEqual(expected)
    // A Mistral model's folder in Mistral's format, through --tokenizer.
    mkdirSync(join(work, 'mistral-model'), { recursive: true })
    copyFileSync(TEKKEN_FILE, join(work, 'mistral-model', 'tekken.json'))
    encode(work, ['encode', 'lines.txt', '--tokenizer', 'mistral-model', '--append-eos', '-o', 'out/tekken-folder'])
    expect(readMegatron(join(work, 'out/tekken-folder'))).toEqual(expected)
    const stderr = (args: string[]) => cli(work, ['encode', 'lines.txt', ...args, '-o', 'out/tekken-bad']).stderr
    expect(stderr(['--tekken', 'missing.json'])).toMatch(/--tekken: cannot read missing\.json/)
    expect(stderr(['--tekken', 'lines.txt'])).toMatch(/--tekken lines\.txt: the tekken file is not one/)
    expect(stderr(['--tekken', TEKKEN_FILE, '--encoding', 'o200k_base'])).toMatch(/name one tokenizer: .*--tekken path\/to\/tekken\.json/)
  })
})

describe('progress', () => {
  it('the plain line off a terminal counts the text encoded, not the compressed bytes read', () => {
    const corpus = lines.join('\n') + '\n'
    writeFileSync(join(work, 'progress.txt.gz'), gzipSync(corpus.repeat(Math.ceil((2 << 20) / corpus.length))))
    const run = cli(work, ['encode', 'progress.txt.gz', '--encoding', 'o200k_base', '--summary', '-o', 'out/progress'])
    expect(run.status).toBe(0)
    const summary = JSON.parse(run.stdout)
    const mib = (bytes: number) => (bytes / (1 << 20)).toFixed(1)
    expect(mib(summary.bytes)).not.toBe(mib(summary.inputBytes))
    // The last line; a slow machine may print progress lines before it.
    expect(run.stderr.trimEnd().split('\n').pop()).toMatch(
      new RegExp(`^batchtok: done: ${summary.documents} documents, ${summary.tokens} tokens, ${mib(summary.bytes).replace('.', '\\.')} MiB of text, [\\d.]+ MiB/s$`),
    )
  })
})

describe('shards and merge', () => {
  it.each([1, 2, 3, 5])('%i shards of several files (one gzip, one large) merge into the single run', (count) => {
    mkdirSync(join(work, 'shards'), { recursive: true })
    writeFileSync(join(work, 'shards/a.txt'), lines.slice(0, 40).join('\n'))
    writeFileSync(join(work, 'shards/b.txt.gz'), gzipSync(lines.slice(40, 80).join('\n') + '\n'))
    writeFileSync(join(work, 'shards/c.txt'), lines.concat(lines).join('\n') + '\n')
    const args = ['encode', 'shards/*', '--encoding', 'r50k_base', '--append-eos']
    encode(work, [...args, '-o', `out/single${count}`])
    const parts = Array.from({ length: count }, (_, i) => {
      encode(work, [...args, '--shard', `${i}/${count}`, '-o', `out/shard${count}-${i}`])
      return `out/shard${count}-${i}`
    })
    const merged = cli(work, ['merge', ...parts, '-o', `out/merged${count}`])
    expect(merged.stderr).toBe('')
    for (const extension of ['bin', 'idx']) {
      expect(sha256(join(work, `out/merged${count}.${extension}`))).toBe(sha256(join(work, `out/single${count}.${extension}`)))
    }
    expect(readMegatron(join(work, `out/merged${count}`)).length).toBe(40 + 40 + 2 * lines.length)
  })

  it.each([2, 3, 4])('%i shards of a Parquet file of two row groups: split between the groups, merged into the single run', (count) => {
    const args = ['encode', join(CLI_FIXTURES, 'docs.parquet'), '--encoding', 'o200k_base']
    const single = encode(work, [...args, '-o', `out/pq-single${count}`])
    const documents = Array.from({ length: count }, (_, i) => encode(work, [...args, '--shard', `${i}/${count}`, '-o', `out/pq-shard${count}-${i}`]).documents as number)
    // Each group goes to one shard, and two shards get one group each.
    expect(documents.filter((n) => n > 0).length).toBe(2)
    expect(documents.reduce((sum, n) => sum + n, 0)).toBe(single.documents)
    const merged = cli(work, ['merge', ...documents.map((_, i) => `out/pq-shard${count}-${i}`), '-o', `out/pq-merged${count}`])
    expect(merged.stderr).toBe('')
    for (const extension of ['bin', 'idx']) {
      expect(sha256(join(work, `out/pq-merged${count}.${extension}`))).toBe(sha256(join(work, `out/pq-single${count}.${extension}`)))
    }
  })

  it('merge creates the folders of its output, and names a file in the way', () => {
    encode(work, ['encode', 'lines.txt', '--encoding', 'r50k_base', '-o', 'out/to-merge'])
    expect(cli(work, ['merge', 'out/to-merge', '-o', 'merged/new/folders/m']).stderr).toBe('')
    expect(sha256(join(work, 'merged/new/folders/m.bin'))).toBe(sha256(join(work, 'out/to-merge.bin')))
    writeFileSync(join(work, 'in-the-way'), '')
    const run = cli(work, ['merge', 'out/to-merge', '-o', 'in-the-way/m'])
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(/cannot write .*in-the-way \(EEXIST\); part of the --output path is a file, not a folder/)
  })
})

describe('resume', () => {
  it('kill -9 mid-run, then the same command: byte-identical to an uninterrupted run', async () => {
    const corpus = lines.join('\n') + '\n'
    writeFileSync(join(work, 'long.txt'), corpus.repeat(Math.ceil((4 << 20) / corpus.length)))
    const args = ['encode', 'long.txt', '--encoding', 'o200k_base', '-q', '--checkpoint-seconds', '0', '--batch-mib', '0.05']
    encode(work, [...args, '-o', 'out/whole'])
    const child = spawn(process.execPath, [CLI, ...args, '-o', 'out/resumed'], { cwd: work, stdio: 'ignore' })
    let finished = false
    const exited = new Promise((resolve) => child.on('exit', resolve)).then(() => (finished = true))
    const checkpoint = join(work, 'out/resumed.checkpoint.json')
    while (!existsSync(checkpoint) && !finished) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(finished, 'the run ended before its first checkpoint; give it a larger input').toBe(false)
    child.kill('SIGKILL')
    await exited
    expect(existsSync(join(work, 'out/resumed.bin'))).toBe(false)
    const early = cli(work, ['merge', 'out/resumed', '-o', 'out/early'])
    expect(early.status).toBe(2)
    expect(early.stderr).toMatch(/out\/resumed: a checkpoint is there, so that shard has not finished; run its command again/)
    const summary = encode(work, [...args, '-o', 'out/resumed'])
    expect(summary.resumedFrom).toBeGreaterThan(0)
    for (const extension of ['bin', 'idx']) {
      // Digests: a deep equality of megabytes of Buffers takes vitest minutes.
      expect(sha256(join(work, `out/resumed.${extension}`))).toBe(sha256(join(work, `out/whole.${extension}`)))
    }
    expect(readdirSync(join(work, 'out')).filter((name) => name.startsWith('resumed.'))).toEqual(['resumed.bin', 'resumed.idx'])
  })

  const STOP_HOOK = join(__dirname, 'stop-while-publishing.cjs')
  /** The command run with the process killed at `stopAt` (stop-while-publishing.cjs). */
  const stoppedAt = (stopAt: string, args: string[]) =>
    spawnSync(process.execPath, ['--require', STOP_HOOK, CLI, ...args], { cwd: work, env: { ...process.env, BATCHTOK_TEST_STOP_AT: stopAt } })

  it.each([
    ['megatron', 'before-rename-1', []],
    ['megatron', 'after-rename-1', []],
    ['megatron', 'after-rename-2', []],
    ['megatron', 'before-checkpoint-removal', []],
    ['flat', 'after-rename-1', ['--output-format', 'flat']],
    ['counts', 'before-rename-1', ['--count-only']],
  ])('%s: killed %s while publishing its files, the same command finishes the run', (format, stopAt, extra) => {
    const args = ['encode', 'lines.txt', '--encoding', 'o200k_base', '-q', ...extra]
    const name = `stopped-${format}-${stopAt}`
    encode(work, [...args, '-o', `out/${name}-whole`])
    const stopped = stoppedAt(stopAt, [...args, '-o', `out/${name}`])
    expect(stopped.signal).toBe('SIGKILL')
    expect(existsSync(join(work, `out/${name}.checkpoint.json`))).toBe(true)
    const summary = encode(work, [...args, '-o', `out/${name}`])
    expect(summary.documents).toBe(lines.length)
    const outputs = readdirSync(join(work, 'out')).filter((file) => file.startsWith(`${name}.`)).sort()
    expect(outputs).toEqual(format === 'megatron' ? [`${name}.bin`, `${name}.idx`] : [`${name}.${format === 'flat' ? 'bin' : 'jsonl'}`])
    for (const output of outputs) {
      expect(sha256(join(work, 'out', output))).toBe(sha256(join(work, 'out', output.replace(name, `${name}-whole`))))
    }
  })

  it('a finished run whose files are gone is not taken as finished; --force starts over', () => {
    const args = ['encode', 'lines.txt', '--encoding', 'o200k_base', '-q', '-o', 'out/gone']
    expect(stoppedAt('after-rename-1', args).signal).toBe('SIGKILL')
    rmSync(join(work, 'out/gone.bin.partial'))
    const refused = cli(work, args)
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/out\/gone\.bin is not the file the finished run's checkpoint records \(\d+ bytes\); pass --force to start over/)
    expect(cli(work, [...args, '--force']).status).toBe(0)
    expect(readMegatron(join(work, 'out/gone'))).toEqual(lines.map((line) => Array.from(o200k.encode(line))))
    expect(existsSync(join(work, 'out/gone.checkpoint.json'))).toBe(false)
  })

  it("a checkpoint of another CLI version is refused, naming the versions; --force starts over", () => {
    const args = ['encode', 'lines.txt', '--encoding', 'o200k_base', '-q', '-o', 'out/old']
    mkdirSync(join(work, 'out'), { recursive: true })
    // A checkpoint as the CLI wrote it before checkpoints carried a version: format 1.
    writeFileSync(join(work, 'out/old.checkpoint.json'), JSON.stringify({ fingerprint: 'x', documents: 1, tokens: 1, textBytes: 1, sizes: {} }))
    const refused = cli(work, args)
    expect(refused.status).toBe(2)
    expect(refused.stderr).toMatch(/out\/old\.checkpoint\.json was written by another version of batchtok's CLI \(checkpoint format 1, this CLI writes \d+\) and cannot be resumed; .*--force/)
    expect(existsSync(join(work, 'out/old.bin'))).toBe(false)
    expect(cli(work, [...args, '--force']).status).toBe(0)
    expect(readMegatron(join(work, 'out/old'))).toEqual(lines.map((line) => Array.from(o200k.encode(line))))
  })

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])('%s mid-run stops at a batch with a checkpoint of it; the same command resumes from there, byte-identical', async (signal, code) => {
    const corpus = lines.join('\n') + '\n'
    writeFileSync(join(work, 'signalled.txt'), corpus.repeat(Math.ceil((4 << 20) / corpus.length)))
    // No timed checkpoint: what the rerun resumes from is the one the signal wrote.
    const args = ['encode', 'signalled.txt', '--encoding', 'o200k_base', '--threads', '1', '--checkpoint-seconds', '1000', '--batch-mib', '0.05']
    const prefix = `out/${signal}`
    encode(work, [...args, '-o', `${prefix}-whole`])
    const child = spawn(process.execPath, [CLI, ...args, '-q', '-o', prefix], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (data) => (stderr += data))
    let finished = false
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve)).then((status) => ((finished = true), status))
    const partial = join(work, `${prefix}.bin.partial`)
    while (!(existsSync(partial) && readFileSync(partial).length > 0) && !finished) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(finished, 'the run ended before its first batch was written; give it a larger input').toBe(false)
    child.kill(signal)
    expect(await exited).toBe(code)
    expect(stderr).toMatch(new RegExp(`stopped by ${signal}; \\d+ documents are in .*${signal}\\.checkpoint\\.json: run the same command again to resume`))
    const checkpoint = JSON.parse(readFileSync(join(work, `${prefix}.checkpoint.json`), 'utf8'))
    expect(checkpoint.documents).toBeGreaterThan(0)
    expect(existsSync(join(work, `${prefix}.bin`))).toBe(false)
    const summary = encode(work, [...args, '-o', prefix])
    expect(summary.resumedFrom).toBe(checkpoint.documents)
    for (const extension of ['bin', 'idx']) {
      expect(sha256(join(work, `${prefix}.${extension}`))).toBe(sha256(join(work, `${prefix}-whole.${extension}`)))
    }
    expect(readdirSync(join(work, 'out')).filter((name) => name.startsWith(`${signal}.`))).toEqual([`${signal}.bin`, `${signal}.idx`])
  })

  it('a Ctrl-C that arrives twice at once, as through npx, still stops at a batch with a checkpoint', () => {
    const corpus = lines.join('\n') + '\n'
    const copies = Math.ceil((4 << 20) / corpus.length)
    writeFileSync(join(work, 'twice.txt'), corpus.repeat(copies))
    // Many batches, so that the run is far from its end when the signals are handled.
    const args = ['encode', 'twice.txt', '--encoding', 'o200k_base', '--threads', '1', '--batch-mib', '0.05', '--checkpoint-seconds', '1000', '-o', 'out/twice']
    const run = spawnSync(process.execPath, ['--require', join(__dirname, 'signal-twice.cjs'), CLI, ...args], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, BATCHTOK_TEST_SIGNAL: 'SIGINT' },
    })
    expect(run.signal).toBe(null)
    expect(run.status).toBe(130)
    expect(run.stderr).toMatch(/stopped by SIGINT; \d+ documents are in out\/twice\.checkpoint\.json/)
    const saved = JSON.parse(readFileSync(join(work, 'out/twice.checkpoint.json'), 'utf8')).documents
    expect(saved).toBeGreaterThan(0)
    expect(saved).toBeLessThan(copies * lines.length)
    const summary = encode(work, [...args, '-q'])
    expect(summary.resumedFrom).toBe(saved)
    expect(summary.documents).toBe(copies * lines.length)
  })

  it('a finished output is not overwritten without --force', () => {
    const args = ['encode', 'lines.txt', '--encoding', 'o200k_base', '-o', 'out/kept']
    expect(cli(work, [...args, '-q']).status).toBe(0)
    const run = cli(work, args)
    expect(run.status).toBe(2)
    expect(run.stderr).toMatch(/out\/kept\.bin exists; pass --force/)
  })
})

describe('bad input: a message naming the file and line, non-zero exit, no output under a final name', () => {
  const cases: [string, string, string[], RegExp][] = [
    ['missing field', '{"text":"a"}\n\n{"body":"b"}\n', ['--format', 'jsonl'], /bad:3: the record has no "text" field \(it has: body\); name the text field with --field/],
    ['malformed JSON', '{"text":"a"}\n{"text": oops}\n', ['--format', 'jsonl'], /bad:2: malformed JSON .*; fix or remove the line/],
    ['a field that is not a string', '{"text":3}\n', ['--format', 'jsonl'], /bad:1: the record has a "text" that is number, not a string \(it has: text\); fix or remove the line, or name the text field with --field/],
    ['a record without text (null)', '{"text":"a"}\n{"text":null,"id":7}\n', ['--format', 'jsonl'], /bad:2: the record has a "text" that is null, not a string \(it has: text, id\); fix or remove the line/],
    ['a JSON array, not JSON Lines', '\n [\n  {"text": "a"}\n]\n', ['--format', 'jsonl'], /bad holds a JSON array, not JSON Lines \(a record per line\); .*jq -c '\.\[\]' bad > records\.jsonl/],
    ['JSON objects spread over lines', '{\r\n  "text": "a"\r\n}\r\n{\r\n  "text": "b"\r\n}\r\n', ['--format', 'jsonl'], /bad holds JSON spread over lines, not JSON Lines .*jq -c \. bad > records\.jsonl/],
  ]
  it.each(cases)('%s', (_name, content, args, message) => {
    writeFileSync(join(work, 'bad'), content)
    const run = cli(work, ['encode', 'bad', '--encoding', 'o200k_base', '-o', 'out/bad', ...args])
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(message)
    expect(existsSync(join(work, 'out/bad.bin'))).toBe(false)
  })

  it('a Parquet value that is not UTF-8 is named by its row', () => {
    const run = cli(CLI_FIXTURES, ['encode', 'not-utf8.parquet', '--encoding', 'o200k_base', '-o', join(work, 'out/not-utf8')])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe('batchtok: not-utf8.parquet: row 3 has a "text" that is not UTF-8; convert the column to UTF-8\n')
    expect(existsSync(join(work, 'out/not-utf8.bin'))).toBe(false)
  })

  it('a Parquet field nested in a group is no column, and the group is no text column', () => {
    const field = cli(CLI_FIXTURES, ['encode', 'nested.parquet', '--encoding', 'o200k_base', '-o', join(work, 'out/nested')])
    expect(field.status).toBe(1)
    expect(field.stderr).toBe('batchtok: nested.parquet: no column "text" (it has: id, meta); name the text column with --field\n')
    const group = cli(CLI_FIXTURES, ['encode', 'nested.parquet', '--field', 'meta', '--encoding', 'o200k_base', '-o', join(work, 'out/nested')])
    expect(group.status).toBe(1)
    expect(group.stderr).toBe('batchtok: nested.parquet: the column "meta" holds lists or groups, not strings; pick a string column with --field\n')
    expect(existsSync(join(work, 'out/nested.bin'))).toBe(false)
  })

  it('a Parquet row without text (null) is named by its row, with what to do', async () => {
    const { parquetWriteFile } = await import('hyparquet-writer')
    await parquetWriteFile({ filename: join(work, 'nulls.parquet'), columnData: [{ name: 'text', data: ['a', 'b', null, 'c'], type: 'STRING' }] })
    const run = cli(work, ['encode', 'nulls.parquet', '--encoding', 'o200k_base', '-o', 'out/nulls'])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe('batchtok: nulls.parquet: row 2 has no "text" (null); drop the rows without one, or pick another column with --field\n')
    expect(existsSync(join(work, 'out/nulls.bin'))).toBe(false)
  })

  it('a damaged Snappy page names the file and what is wrong, and leaves no output', async () => {
    // The first data page's Snappy block says it holds one byte more than its page header does
    // (a page of dictionary indices: its length is a one-byte varint).
    const { parquetMetadata } = await import('hyparquet')
    const { parquetHeader } = await import('hyparquet/src/column.js')
    const bytes = readFileSync(join(CLI_FIXTURES, 'docs-snappy.parquet'))
    const chunk = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)).row_groups[0].columns[0].meta_data!
    const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.length), offset: Number(chunk.data_page_offset) }
    const header = parquetHeader(reader)
    expect(header.type).toBe('DATA_PAGE')
    expect(bytes[reader.offset]).toBe(header.uncompressed_page_size)
    expect(header.uncompressed_page_size).toBeLessThan(127)
    bytes[reader.offset] += 1
    writeFileSync(join(work, 'damaged.parquet'), bytes)
    const run = cli(work, ['encode', 'damaged.parquet', '--encoding', 'o200k_base', '-o', 'out/damaged'])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe(
      `batchtok: damaged.parquet: the column "text" cannot be read (the Snappy block decodes to ${header.uncompressed_page_size + 1} bytes, but its page header says ${header.uncompressed_page_size}; the file is damaged); check the file\n`,
    )
    expect(existsSync(join(work, 'out/damaged.bin'))).toBe(false)
  })

  it('a bad line deep in a file read in many batches, and in a shard, is named by its line', () => {
    // Small batches: the line number is counted across batches the addon cut.
    const records = Array.from({ length: 6000 }, (_, i) => (i % 5 === 4 ? '' : JSON.stringify({ id: i, text: `document ${i}` })))
    records[4321] = '{"id": 4321, "text": oops}'
    writeFileSync(join(work, 'deep.jsonl'), records.join('\r\n') + '\r\n')
    const whole = cli(work, ['encode', 'deep.jsonl', '--field', 'text', '--batch-mib', '0.01', '--encoding', 'o200k_base', '-o', 'out/deep'])
    expect(whole.status).toBe(1)
    expect(whole.stderr).toMatch(/deep\.jsonl:4322: malformed JSON .*; fix or remove the line/)
    // The second of two shards counts its lines from the first line that starts in its range.
    const bytes = readFileSync(join(work, 'deep.jsonl'))
    const rangeStart = Math.floor(bytes.length / 2)
    const firstLineAt = bytes.indexOf(10, rangeStart - 1) + 1
    const badAt = bytes.indexOf('{"id": 4321')
    const line = bytes.subarray(firstLineAt, badAt).toString().split('\n').length
    const shard = cli(work, ['encode', 'deep.jsonl', '--field', 'text', '--batch-mib', '0.01', '--shard', '1/2', '--encoding', 'o200k_base', '-o', 'out/deep1'])
    expect(shard.status).toBe(1)
    expect(shard.stderr).toMatch(new RegExp(`deep\\.jsonl: line ${line} after byte ${rangeStart}: malformed JSON`))
  })

  it('invalid UTF-8 names the line', () => {
    writeFileSync(join(work, 'latin1.txt'), Buffer.concat([Buffer.from('fine\nalso fine\n'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]))
    const run = cli(work, ['encode', 'latin1.txt', '--encoding', 'o200k_base', '-o', 'out/latin1'])
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(/latin1\.txt:3: the text is not UTF-8; convert the file to UTF-8/)
    expect(existsSync(join(work, 'out/latin1.bin'))).toBe(false)
  })

  it.each([
    ['a missing file', 'absent.txt', /absent\.txt: cannot read it \(ENOENT\); check the path/],
    ['a truncated gzip file', 'cut.txt.gz', /cut\.txt\.gz: unexpected end of file; check that it is a whole gzip file/],
    ['a glob that matches nothing', 'none/*.jsonl', /none\/\*\.jsonl matches no file/],
  ])('%s', (_name, file, message) => {
    writeFileSync(join(work, 'cut.txt.gz'), gzipSync(Buffer.from(lines.join('\n'))).subarray(0, 100))
    const run = cli(work, ['encode', file, '--encoding', 'o200k_base', '-o', 'out/unreadable'])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(message)
    expect(existsSync(join(work, 'out/unreadable.bin'))).toBe(false)
  })

  it.each([
    ['xz, by its name', 'docs.jsonl.xz', Buffer.from('{"text": "a"}\n'), 'docs.jsonl.xz is compressed with xz', 'xz -dc docs.jsonl.xz | npx batchtok encode - --format jsonl ...'],
    ['xz, by its first bytes', 'docs.txt', Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04]), 'docs.txt is compressed with xz', 'xz -dc docs.txt | npx batchtok encode - ...'],
    ['bzip2, by its first bytes', 'docs', Buffer.from('BZh91AY&SY\x00\x01', 'latin1'), 'docs is compressed with bzip2', 'bzip2 -dc docs | npx batchtok encode - ...'],
    ['zip, by its name', 'docs.zip', Buffer.from('PK\x03\x04', 'latin1'), 'docs.zip is compressed with zip', 'unzip -p docs.zip | npx batchtok encode - ...'],
  ])('a file compressed in a way the CLI does not read (%s) is refused with what to do', (_name, file, bytes, what, todo) => {
    writeFileSync(join(work, file), bytes)
    const run = cli(work, ['encode', file, '--encoding', 'o200k_base', '-o', 'out/unread'])
    expect(run.status).toBe(2)
    expect(run.stderr).toBe(`batchtok: ${what}, which batchtok does not read (it reads gzip and zstd); decompress it into the command: ${todo}\n`)
    expect(existsSync(join(work, 'out/unread.bin'))).toBe(false)
  })

  it('stdin compressed in a way the CLI does not read is refused; text that starts as bzip2 does is read', () => {
    const run = cli(work, ['encode', '-', '--encoding', 'o200k_base', '-o', 'out/unread-stdin'], Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7]))
    expect(run.status).toBe(1)
    expect(run.stderr).toBe('batchtok: stdin is compressed with LZ4, which batchtok does not read (it reads gzip and zstd); decompress it into the command: lz4 -dc FILE | npx batchtok encode - ...\n')
    const text = 'BZh9 is how this document starts'
    const summary = encode(work, ['encode', '-', '--encoding', 'o200k_base', '-o', 'out/bzh-text'], `${text}\n`)
    expect(summary.tokens).toBe(o200k.count(text))
  })

  it('an output path through a file', () => {
    writeFileSync(join(work, 'plainfile'), '')
    const run = cli(work, ['encode', 'lines.txt', '--encoding', 'o200k_base', '-o', 'plainfile/x'])
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(/part of the --output path is a file, not a folder/)
  })

  it.runIf(process.platform === 'linux')('an output folder that cannot be made (under /proc) is an error, not a hang', () => {
    const run = spawnSync(process.execPath, [CLI, 'encode', 'lines.txt', '--encoding', 'o200k_base', '-o', '/proc/batchtok/x'], {
      cwd: work,
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(run.signal).toBeNull()
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(/cannot write \/proc\/batchtok \(ENOENT\)/)
  })

  it('a full disk (a 64 KiB tmpfs, where mounting is allowed), else a read-only output folder', (context) => {
    const folder = join(work, 'small')
    mkdirSync(folder, { recursive: true })
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', folder]).status === 0
    // root writes into a read-only folder all the same: without a mount there is nothing to test.
    if (!mounted && process.getuid?.() === 0) context.skip()
    // Ids of far more than 64 KiB, whatever ran before.
    const corpus = lines.join('\n') + '\n'
    writeFileSync(join(work, 'full-disk.txt'), corpus.repeat(Math.ceil((1 << 20) / corpus.length)))
    try {
      if (!mounted) chmodSync(folder, 0o500)
      const run = cli(work, ['encode', 'full-disk.txt', '--encoding', 'o200k_base', '-o', 'small/x'])
      expect(run.status).toBe(1)
      expect(run.stderr).toMatch(mounted ? /cannot write small\/x\.bin\.partial \(ENOSPC\); free some space/ : /cannot write .* \(EACCES\)/)
      expect(existsSync(join(folder, 'x.bin'))).toBe(false)
    } finally {
      if (mounted) spawnSync('umount', [folder])
      else chmodSync(folder, 0o700)
    }
  })

  it('usage errors name the option', () => {
    expect(cli(work, ['encode', 'lines.txt', '-o', 'out/u']).stderr).toMatch(/name one tokenizer: --encoding o200k_base/)
    expect(cli(work, ['encode', 'lines.txt', '--encoding', 'o200k_base', '--shard', '3/3', '-o', 'out/u']).stderr).toMatch(/--shard 3\/3 is not a shard; write i\/n with 0 <= i < n/)
    expect(cli(work, ['encode', 'lines.txt', '--encoding', 'nope', '-o', 'out/u']).status).toBe(2)
    // commander's own checks exit as the CLI's usage errors do.
    const batchMib = cli(work, ['encode', 'lines.txt', '--encoding', 'o200k_base', '--batch-mib', '0', '-o', 'out/u'])
    expect([batchMib.status, batchMib.stderr]).toEqual([2, expect.stringMatching(/--batch-mib <mib>' argument '0' is invalid\. expected a number above 0/)])
    expect(cli(work, ['encode', 'lines.txt', '--encoding', 'o200k_base', '--no-such-option', '-o', 'out/u']).status).toBe(2)
    expect(cli(work, ['encode', '--help']).status).toBe(0)
    // The addon's message, with its advice as options rather than JS calls.
    const model = cli(work, ['encode', 'lines.txt', '--model', 'gpt-4oo', '-o', 'out/u'])
    expect(model.status).toBe(2)
    expect(model.stderr).toMatch(/^batchtok: --model: unknown model "gpt-4oo": did you mean 'gpt-4o'.*? batchtok knows .*--encoding o200k_base for current OpenAI models/)
    expect(model.stderr).not.toMatch(/fromEncoding|modelEncodings/)
    expect(cli(work, ['merge', 'out/missing', '-o', 'out/u']).stderr).toMatch(/out\/missing: no finished output/)
  })

  it('a tokenizer.json the reference panics on reading is one line naming it, with what the panic said', () => {
    const file = {
      version: '1.0',
      normalizer: { type: 'Precompiled', precompiled_charsmap: null },
      model: { type: 'WordLevel', vocab: { a: 0 }, unk_token: 'a' },
    }
    writeFileSync(join(work, 'precompiled-null.json'), JSON.stringify(file))
    const run = cli(work, ['encode', 'lines.txt', '--tokenizer', 'precompiled-null.json', '-o', 'out/u'])
    expect(run.status).toBe(2)
    expect(run.stderr).toMatch(/^batchtok: --tokenizer: tokenizer file 'precompiled-null\.json' is not a tokenizer\.json .*\(Precompiled: .*invalid type: null.*\)\n$/)
  })
})

describe('snappyUncompress: the Snappy pages of the Parquet reader', () => {
  const block = async (bytes: Uint8Array): Promise<Uint8Array> => (await import('hyparquet-writer/src/snappy.js')).snappyCompress(bytes)

  it('gives back the bytes a Snappy writer compressed, into a buffer of its own', async () => {
    const text = Buffer.from(corpus.bigTxt().slice(0, 300_000))
    const compressed = await block(text)
    expect(compressed.length).toBeLessThan(text.length)
    const pending = batchtok.snappyUncompress(compressed, text.length)
    // The block is copied at the call: the caller may reuse it at once.
    compressed.fill(0)
    const bytes = await pending
    expect(bytes).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(bytes).equals(text)).toBe(true)
    expect((await batchtok.snappyUncompress(await block(new Uint8Array(0)), 0)).length).toBe(0)
  })

  it('rejects a block cut short, or of another length than asked, saying which', async () => {
    const text = Buffer.from('no repeats: the quick brown fox jumps over the lazy dog, 0123456789')
    const compressed = await block(text)
    await expect(batchtok.snappyUncompress(compressed, text.length + 1)).rejects.toThrow(
      `the Snappy block decodes to ${text.length} bytes, but its page header says ${text.length + 1}; the file is damaged`,
    )
    await expect(batchtok.snappyUncompress(compressed.subarray(0, compressed.length - 10), text.length)).rejects.toThrow(/^the Snappy block is damaged \(.+\)$/)
  })

  it('rejects arguments of the wrong kind with TypeError and RangeError', async () => {
    const compressed = await block(Buffer.from('text'))
    await expect(batchtok.snappyUncompress('text' as never, 4)).rejects.toThrow(new TypeError('block is a string; expected a Uint8Array or a Buffer'))
    await expect(batchtok.snappyUncompress(new Uint16Array(4) as never, 4)).rejects.toThrow(TypeError)
    await expect(batchtok.snappyUncompress(compressed, -1)).rejects.toThrow(RangeError)
    await expect(batchtok.snappyUncompress(compressed, 1.5)).rejects.toThrow(RangeError)
    await expect(batchtok.snappyUncompress(compressed, '4' as never)).rejects.toThrow(TypeError)
  })
})
