// `batchtok encode` on documents longer than a batch: read and encoded in parts where the
// tokenizer allows it, joined back into one document; the ids of each run equal encodeBatch of the
// whole documents.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { CLI, cli, encode, lines, readMegatron, sha256 } from './cli-helpers'
import { batchtok, corpus, expectWordGap, fixture, FIXTURES, gpt2WithTemplate, llama2Shaped, metaspaceShaped } from './helpers'

const { lineBatches } = createRequire(import.meta.url)('../cli/readers.js')

const o200k = batchtok.Tokenizer.fromEncoding('o200k_base')
const r50k = batchtok.Tokenizer.fromEncoding('r50k_base')
const EOT = 50256

let work: string
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'batchtok-cli-long-'))
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('encode: a document longer than a batch is read in parts', () => {
  /** Prose on one line, about `bytes` long: big.txt with its line ends as spaces. */
  const prose = (bytes: number, from = 0) => corpus.bigTxt().slice(from, from + bytes).replace(/\s+/g, ' ').trim()
  // Lines longer than a read (1 MiB) and than a batch, among short ones: prose, cut at its word
  // gaps; a line with none (CJK letters alone, and one run of spaces), held whole; special-token
  // text; the declarations of every language of the UDHR, cut at their spaces and punctuation.
  const longLines = [
    ...lines.slice(0, 5),
    prose(2_500_000),
    '',
    '日本語のテキスト'.repeat(60_000),
    `${prose(1_200_000, 3_000_000)} <|endoftext|> tail`,
    ' '.repeat(1_100_000) + 'x',
    corpus
      .udhrDocuments()
      .map((document) => document.text.replace(/\s+/g, ' '))
      .join(' ')
      .slice(0, 1_200_000),
    ...lines.slice(5, 10),
  ]
  const BATCH_MIB = '0.05'
  beforeAll(() => {
    writeFileSync(join(work, 'long-lines.txt'), longLines.join('\n') + '\n')
    writeFileSync(join(work, 'long-lines.jsonl'), longLines.map((text) => JSON.stringify({ text })).join('\n') + '\n')
  })

  it('a long line is handed over in parts cut at word gaps; one with none, whole; every byte once', async () => {
    const file = join(work, 'long-lines.txt')
    const input = { path: file, size: readFileSync(file).length, format: 'text', compression: 'none' }
    const read = async (cutLine?: (bytes: Buffer, from: number) => number, keptLine?: (bytes: Buffer) => number) => {
      const batches: { lines: Buffer; continues?: true }[] = []
      for await (const batch of lineBatches(input, { batchBytes: 0.05 * (1 << 20), progress: { rawBytes: 0 }, cutLine, keptLine })) {
        batches.push({ ...batch, lines: Buffer.from(batch.lines) })
      }
      return batches
    }
    const cut = await read((bytes, from) => o200k.lastSafeCut(bytes, from))
    expect(Buffer.concat(cut.map((batch) => batch.lines)).equals(readFileSync(file))).toBe(true)
    const continuing = cut.filter((batch) => batch.continues)
    expect(continuing.length).toBeGreaterThanOrEqual(3)
    for (const [i, batch] of cut.entries()) {
      if (!batch.continues) continue
      expectWordGap(batch.lines.toString(), cut[i + 1].lines.toString())
      // A part (the batch's bytes after its last whole line) is at most a read and a batch.
      expect(batch.lines.length - (batch.lines.lastIndexOf(10) + 1)).toBeLessThanOrEqual((1 << 20) + 0.05 * (1 << 20))
    }
    // The lines with no word gap are each in one batch.
    for (const whole of [longLines[7], longLines[9]]) expect(cut.some((batch) => batch.lines.includes(Buffer.from(whole)))).toBe(true)
    // A tokenizer that cuts nowhere (BERT's tokenizer.json) gets every line whole.
    const bert = batchtok.Tokenizer.fromFile(join(FIXTURES, 'tokenizers/bert.json'))
    const whole = await read((bytes, from) => bert.lastSafeCut(bytes, from))
    expect(whole.some((batch) => batch.continues)).toBe(false)
    // Its truncation keeps each text's first 128 ids: a long line is handed over as a start that
    // holds them, a line of its own, and the rest of it is read past; every line is there, in
    // order, and the lines with no place to cut are whole.
    const starts = await read(
      (bytes, from) => bert.lastSafeCut(bytes, from),
      (bytes) => bert.keptByTruncation(bytes),
    )
    expect(starts.some((batch) => batch.continues)).toBe(false)
    const startLines = Buffer.concat(starts.map((batch) => batch.lines)).toString().split('\n').slice(0, -1)
    expect(startLines.length).toBe(longLines.length)
    for (const [i, line] of longLines.entries()) {
      expect(line.startsWith(startLines[i])).toBe(true)
      if (line.length > 0.05 * (1 << 20) && startLines[i] !== line) expect(startLines[i].length).toBeLessThan(20_000)
    }
    expect(startLines[5].length).toBeLessThan(longLines[5].length)
    for (const i of [7, 9]) expect(startLines[i]).toBe(longLines[i])
  })

  it('seeded random inputs: text and JSONL, plain and gzipped, under five tokenizer shapes, give the ids of encodeBatch', async () => {
    const files = {
      o200k_base: { args: ['--encoding', 'o200k_base'], tokenizer: o200k, eos: '<|endoftext|>' },
      gpt2: { args: ['--tokenizer', join(FIXTURES, 'tokenizers/gpt2.json')], eos: '<|endoftext|>' },
      'bert (truncates)': { args: ['--tokenizer', join(FIXTURES, 'tokenizers/bert.json')], eos: '[SEP]' },
      sentencepiece: { args: ['--tokenizer', join(FIXTURES, 'tokenizers/sentencepiece.json')], eos: '</s>' },
      "llama 2's shape": { file: llama2Shaped(), eos: '</s>' },
    } as Record<string, { args?: string[]; file?: object; tokenizer?: InstanceType<typeof batchtok.Tokenizer>; eos: string }>
    let state = 7_919
    const random = () => ((state = (state * 1_103_515_245 + 12_345) & 0x7fffffff) / 0x7fffffff)
    const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)]
    const big = corpus.bigTxt()
    const at = () => Math.floor(random() * (big.length - 1_300_000))
    const documentOf: (() => string)[] = [
      () => prose(Math.floor(random() * 80), at()),
      () => prose(500 + Math.floor(random() * 3_000), at()),
      () => prose(20_000 + Math.floor(random() * 200_000), at()),
      () => '日本語のテキスト'.repeat(100 + Math.floor(random() * 8_000)) + (random() < 0.5 ? ' tail words' : ''),
      () => '',
      () => prose(3_000, at()) + ' <|endoftext|> [SEP] </s> x',
    ]
    // Every tokenizer with each format; the rest drawn.
    const names = Object.keys(files)
    for (let round = 0; round < 2 * names.length; round++) {
      const name = names[round % names.length]
      const { args, file, eos } = files[name]
      const tokenizerArgs = args ?? ['--tokenizer', join(work, 'random-llama2-shaped.json')]
      if (file) writeFileSync(tokenizerArgs[1], JSON.stringify(file))
      const tokenizer = files[name].tokenizer ?? batchtok.Tokenizer.fromFile(tokenizerArgs[1])
      const documents = Array.from({ length: 2 + Math.floor(random() * 8) }, () => pick(documentOf)())
      // One line past a read (1 MiB) among the others: a read ends inside it.
      documents.splice(Math.floor(random() * documents.length), 0, prose(1_050_000 + Math.floor(random() * 200_000), at()))
      const jsonl = round >= names.length
      const text = (jsonl ? documents.map((text) => JSON.stringify({ text })) : documents).join('\n') + '\n'
      const gzipped = random() < 0.3
      const input = `random-${round}.${jsonl ? 'jsonl' : 'txt'}${gzipped ? '.gz' : ''}`
      writeFileSync(join(work, input), gzipped ? gzipSync(text) : text)
      const appendEos = random() < 0.4
      const extra = appendEos ? ['--append-eos', ...(args?.[0] === '--encoding' ? [] : ['--eos-token', eos])] : []
      const batchMiB = pick(['0.01', '0.05', '0.3'])
      encode(work, ['encode', input, ...tokenizerArgs, ...extra, '--batch-mib', batchMiB, '-o', `out/random-${round}`])
      const eosIds = appendEos ? [tokenizer.tokenToId(eos)!] : []
      const want = (await tokenizer.encodeBatch(documents)).toArrays().map((ids) => [...ids, ...eosIds])
      const got = readMegatron(join(work, `out/random-${round}`))
      const what = `round ${round}: ${name}, ${input}, --batch-mib ${batchMiB}${appendEos ? ' --append-eos' : ''}`
      expect(got.length, what).toBe(want.length)
      got.forEach((ids, i) => expect(ids, `${what}, document ${i}`).toEqual(want[i]))
    }
  })

  it('given cutLine and keptLine both, a line is asked for a kept start only before a part of it is handed over', async () => {
    // No tokenizer gives both (lastSafeCut finds no place under a truncation). Prose, then a run
    // of kana with no place to cut: what the carry holds of the line after a part is no start of it.
    const line = prose(1_200_000) + '日本語のテキスト'.repeat(100_000) + ' end'
    const file = join(work, 'cut-then-kana.txt')
    writeFileSync(file, `short\n${line}\nlast\n`)
    const input = { path: file, size: readFileSync(file).length, format: 'text', compression: 'none' }
    const asked: string[] = []
    const keptLine = (bytes: Buffer) => {
      asked.push(bytes.toString())
      return bytes.length
    }
    const batches: Buffer[] = []
    let parts = 0
    for await (const batch of lineBatches(input, { batchBytes: 0.05 * (1 << 20), progress: { rawBytes: 0 }, cutLine: (bytes: Buffer, from: number) => o200k.lastSafeCut(bytes, from), keptLine })) {
      batches.push(Buffer.from(batch.lines))
      parts += batch.continues ? 1 : 0
    }
    expect(parts).toBeGreaterThan(0)
    expect(Buffer.concat(batches).equals(readFileSync(file))).toBe(true)
    for (const held of asked) expect(line.startsWith(held)).toBe(true)
  })

  it.each([
    ['deep in the rest', 1_500_000],
    ['near where a read ends', 1 << 20],
    ['in its last byte', -1],
  ])('under a truncation, a long line that is not UTF-8 %s is refused and named, as under a file that is cut', (_, at) => {
    const line = Buffer.from(prose(2_500_000))
    const bad = Buffer.concat([line.subarray(0, at === -1 ? line.length : at - 1), Buffer.from([0xc3]), line.subarray(at === -1 ? line.length : at - 1)])
    writeFileSync(join(work, 'not-utf8-rest.txt'), Buffer.concat([Buffer.from('fine\n'), bad, Buffer.from('\nalso fine\n')]))
    for (const tokenizer of [join(FIXTURES, 'tokenizers/bert.json'), join(FIXTURES, 'tokenizers/gpt2.json')]) {
      const run = cli(work, ['encode', 'not-utf8-rest.txt', '--tokenizer', tokenizer, '--batch-mib', BATCH_MIB, '-o', 'out/not-utf8-rest', '-q', '--force'])
      expect(run.stderr).toMatch(/not-utf8-rest\.txt:2: the text is not UTF-8; convert the file to UTF-8/)
      expect(run.status).toBe(1)
    }
  })

  it.each([
    ['o200k_base, Megatron', ['--encoding', 'o200k_base']],
    ['r50k_base, Megatron with --append-eos', ['--encoding', 'r50k_base', '--append-eos']],
    ['a byte-level tokenizer.json (in parts)', ['--tokenizer', join(FIXTURES, 'tokenizers/gpt2.json')]],
    ['a WordPiece tokenizer.json with a truncation (each long line read to the start it keeps)', ['--tokenizer', join(FIXTURES, 'tokenizers/bert.json')]],
  ])('%s: ids equal encodeBatch of the lines', async (name, args) => {
    const prefix = `out/long-${name.replace(/\W+/g, '-')}`
    const summary = encode(work, ['encode', 'long-lines.txt', ...args, '--batch-mib', BATCH_MIB, '-o', prefix])
    expect(summary.documents).toBe(longLines.length)
    const tokenizer = args[0] === '--encoding' ? batchtok.Tokenizer.fromEncoding(args[1]) : batchtok.Tokenizer.fromFile(args[1])
    const eos = args.includes('--append-eos') ? [EOT] : []
    const want = (await tokenizer.encodeBatch(longLines)).toArrays().map((ids) => [...ids, ...eos])
    expect(readMegatron(join(work, prefix))).toEqual(want)
  })

  // Template tokens before and after each text (GPT-2's fixture given them): cut only where the
  // parts are encoded without them. Llama 2's shape, `<s>` before each text and a `▁` put before
  // each: cut only where, besides, each part after a cut is encoded without its space. The same
  // with a Metaspace pre-tokenizer, which puts no `▁` before a part that begins with a space,
  // and with BERT's pre-tokenizer, which splits at every space, as does XLM-RoBERTa's `Metaspace`
  // after its character map.
  const templatedFiles = [
    { name: 'template tokens around each text', file: gpt2WithTemplate({ after: true }), bos: EOT, eos: ['<|endoftext|>', EOT] as const, cut: { addSpecialTokens: false } },
    { name: "Llama 2's shape", file: llama2Shaped(), bos: 1, eos: ['</s>', 2] as const, cut: { addSpecialTokens: false, afterCut: true } },
    { name: 'a Metaspace pre-tokenizer', file: metaspaceShaped('first'), bos: 1, eos: ['</s>', 2] as const, cut: { addSpecialTokens: false } },
    { name: "BERT's pre-tokenizer (WordPiece, no truncation)", file: { ...fixture<object>('tokenizers/bert.json'), truncation: null }, bos: 101, eos: ['[SEP]', 102] as const, cut: { addSpecialTokens: false } },
    { name: "XLM-RoBERTa's character map", file: fixture<object>('tokenizers/sentencepiece.json'), bos: 0, eos: ['</s>', 2] as const, cut: { addSpecialTokens: false } },
  ]
  it.each(templatedFiles.flatMap((file) => [{ ...file, appendEos: false }, { ...file, appendEos: true }]))(
    'a tokenizer.json with $name (--append-eos: $appendEos): encoded without its template, cut, and given it once a document',
    async ({ name, file, bos, eos: [eosToken, eos], cut, appendEos }) => {
      const path = join(work, `${name.replace(/\W+/g, '-')}.json`)
      writeFileSync(path, JSON.stringify(file))
      const templated = batchtok.Tokenizer.fromFile(path)
      expect(templated.lastSafeCut(Buffer.from('a b'))).toBe(-1)
      expect(templated.lastSafeCut(Buffer.from('a b'), 0, cut)).toBe(1)
      // Its long lines are read in parts.
      const input = { path: join(work, 'long-lines.txt'), size: readFileSync(join(work, 'long-lines.txt')).length, format: 'text', compression: 'none' }
      let parts = 0
      const cutLine = (bytes: Buffer, from: number) => templated.lastSafeCut(bytes, from, cut)
      for await (const batch of lineBatches(input, { batchBytes: 0.05 * (1 << 20), progress: { rawBytes: 0 }, cutLine })) parts += batch.continues ? 1 : 0
      expect(parts).toBeGreaterThan(3)
      const extra = appendEos ? ['--append-eos', '--eos-token', eosToken] : []
      const prefix = `out/long-${name.replace(/\W+/g, '-')}${extra.length}`
      encode(work, ['encode', 'long-lines.txt', '--tokenizer', path, ...extra, '--batch-mib', BATCH_MIB, '-o', prefix])
      const want = (await templated.encodeBatch(longLines)).toArrays().map((ids) => (appendEos ? [...ids, eos] : [...ids]))
      expect(want[0].slice(0, 1)).toEqual([bos])
      expect(readMegatron(join(work, prefix))).toEqual(want)
    },
  )

  it('the same lines gzipped (read as a stream) and as JSONL records (read as they come): the same ids', async () => {
    writeFileSync(join(work, 'long-lines.txt.gz'), gzipSync(readFileSync(join(work, 'long-lines.txt'))))
    const want = (await o200k.encodeBatch(longLines)).toArrays().map((ids) => [...ids])
    for (const input of ['long-lines.txt.gz', 'long-lines.jsonl']) {
      const prefix = `out/long-${input.replace(/\W+/g, '-')}`
      encode(work, ['encode', input, '--encoding', 'o200k_base', '--batch-mib', BATCH_MIB, '-o', prefix])
      expect(readMegatron(join(work, prefix))).toEqual(want)
    }
  })

  /** A JSONL record whose text field is `text`, written with every kind of escape, among other
   * fields of every kind, a string of `noteBytes` included; `fieldTwice` gives the field an
   * earlier value. */
  const longRecord = (text: string, seed: number, { fieldTwice = '', noteBytes = 30_000 } = {}) => {
    let state = seed
    const random = (n: number) => (state = (state * 1103515245 + 12345) & 0x7fffffff) % n
    const escaped = (c: string) => c.split('').map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
    const written = JSON.stringify(text).replace(/[\u{80}-\u{10ffff}]|[ab]/gu, (c) => (random(4) === 0 ? escaped(c) : c))
    const before = `"id": ${seed}, "meta": {"tags": ["x", 1.5e-3, null, true, {"text": "nested, not the field"}], "note": ${JSON.stringify(prose(noteBytes, seed * 1000))}}`
    const twice = fieldTwice ? `"text": ${JSON.stringify(fieldTwice)}, ` : ''
    return `{${twice}${before}, "te\\u0078t" : ${written} , "after": "\\n\\t\\u00e9\\ud83d\\ude00", "n": -0.5E+2}`
  }
  // Texts with escapes everywhere a read may end: quotes, control characters written escaped,
  // surrogate pairs, lone surrogates of both halves (U+FFFD, as V8 writes them), a high one before
  // another escape.
  const escapedTexts = [
    prose(120_000, 10_000),
    `"quoted" \\ back\\slash /slash/ \b\f\n\r\t `.repeat(3000) + prose(40_000),
    `😀 \ud83d lone high, \udc00 lone low, \ud83d\n high then newline, é ü ß 中文。`.repeat(2500),
    corpus
      .udhrDocuments()
      .map((document) => document.text)
      .join('\n')
      .slice(0, 150_000),
  ]

  it('a JSONL record longer than a batch is read as its bytes come, a byte at a time or a read at a time: its text, in parts cut at word gaps', () => {
    const { LongRecord } = createRequire(import.meta.url)('../stream/long-record.js')
    const cutLine = (bytes: Buffer, from: number) => o200k.lastSafeCut(bytes, from)
    for (const [i, text] of escapedTexts.entries()) {
      const record = Buffer.from(longRecord(text, i + 1, { fieldTwice: prose(50_000, 7_000) }))
      for (const step of [1, 7, 4093, 1 << 20]) {
        const reader = new LongRecord({ field: 'text', batchBytes: 20_000, cutLine, source: {} })
        const batches = []
        for (let at = 0; at < record.length; at += step) batches.push(...reader.push(record.subarray(at, at + step)))
        batches.push(...reader.end())
        // The parts of the field's last value, from the batch that restarts where parts of its
        // first were handed over (not where a read held all of it), then the outline.
        const restart = batches.findIndex((batch) => batch.restarts)
        if (step < 20_000) expect(restart, `text ${i}, reads of ${step}: parts of the first value were handed over`).toBeGreaterThan(0)
        const parts = batches.slice(Math.max(0, restart), -1).map((batch) => Buffer.from(batch.bytes))
        expect(Buffer.concat(parts).toString()).toBe(Buffer.from(JSON.parse(record.toString()).text).toString())
        for (let k = 0; k + 1 < parts.length; k++) expectWordGap(parts[k].toString(), parts[k + 1].toString())
        const outline = batches[batches.length - 1]
        expect(outline.continues).toBeUndefined()
        expect(JSON.parse(outline.lines.toString()).text).toBe('')
        expect(outline.lines.length).toBeLessThan(500)
      }
    }
  })

  const bert = batchtok.Tokenizer.fromFile(join(FIXTURES, 'tokenizers/bert.json'))
  it.each([
    ['o200k_base', o200k, 400, 3000],
    // Texts long enough to hold 128 ids: read up to the start the truncation keeps.
    ["BERT's file, its truncation", bert, 150, 30_000],
  ] as const)('a JSONL record, whole or mangled, read as it comes (%s): the ids, or the error, the addon gives the whole record', async (_, tokenizer, records, textBytes) => {
    const { LongRecord } = createRequire(import.meta.url)('../stream/long-record.js')
    let state = 11
    const random = (n: number) => (state = (state * 1103515245 + 12345) & 0x7fffffff) % n
    const text = corpus.bigTxt()
    const inserts = ['{', '}', '[', ']', ',', ':', '"', '\\', 'u', '0', 'e', '-', '.', ' ', '\t', 'x', '\x01', 'é', '\ud83d', 'null']
    const outcome = async (read: () => Promise<{ ids: Uint32Array }[]>) => {
      try {
        return (await read()).map(({ ids }) => Array.from(ids)).flat().join(',')
      } catch (error) {
        return `${(error as { code: string }).code}: ${(error as { reason: string }).reason}`
      }
    }
    let errors = 0
    let kept = 0
    for (let n = 0; n < records; n++) {
      const fields: [string, unknown][] = [
        ['id', n],
        ['meta', { a: [1, 'x', null], b: 'y'.repeat(random(50)) }],
        ['text', text.substr(random(6_000_000), 200 + random(textBytes))],
      ]
      if (random(3) === 0) fields.push(['text', text.substr(random(6_000_000), random(500))])
      if (random(4) === 0) fields.splice(random(fields.length), 0, ['text', random(2) ? 5 : 'short'])
      let record = `{${fields.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`
      if (random(2) === 0) record = record.replace(/[\u0080-\uffff]|[ae]/g, (c) => (random(5) === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c))
      let bytes = Buffer.from(record)
      for (let m = random(3); m > 0; m--) {
        const at = random(bytes.length)
        const mangled = [Buffer.alloc(0), Buffer.from(inserts[random(inserts.length)]), Buffer.from([random(256)])][random(3)]
        bytes = Buffer.concat([bytes.subarray(0, at), mangled, bytes.subarray(at + (mangled.length === 1 ? 1 : 0))])
      }
      if (bytes.includes(10)) continue
      const jsonl = { format: 'jsonl', field: 'text' } as const
      const whole = await outcome(async () => [await tokenizer.encodeLines(bytes, jsonl)])
      const source: { reasonOf?: (reason: string) => string } = {}
      const streamed = await outcome(async () => {
        const cutLine = (b: Buffer, from: number) => tokenizer.lastSafeCut(b, from)
        const keptLine = (b: Buffer) => tokenizer.keptByTruncation(b)
        const reader = new LongRecord({ field: 'text', batchBytes: 500, cutLine, keptLine, source })
        const batches = []
        for (let at = 0; at < bytes.length; ) {
          const step = 1 + random(300)
          batches.push(...reader.push(bytes.subarray(at, at + step)))
          at += step
        }
        batches.push(...reader.end())
        let encoded: { ids: Uint32Array }[] = []
        // The outline goes on the document its text's parts left open, adding no ids (as
        // `encodeChecked` encodes it).
        let open = false
        for (const batch of batches) {
          if (batch.restarts) {
            encoded = []
            open = false
          }
          if (batch.bytes) {
            kept++
            encoded.push(await tokenizer.encodeUtf8Batch(batch.bytes, batch.offsets))
            open = true
          } else {
            try {
              encoded.push(await tokenizer.encodeLines(batch.lines, jsonl, open ? { afterCut: true, addSpecialTokens: false } : {}))
            } catch (error) {
              throw { code: (error as { code: string }).code, reason: source.reasonOf!((error as { reason: string }).reason) }
            }
          }
        }
        return encoded
      })
      if (/^ERR/.test(whole)) errors++
      // The addon's own message for bytes that are not UTF-8 also says where; the CLI's does not.
      expect(streamed, `record ${n}: ${bytes.toString('latin1').slice(0, 300)}`).toBe(whole.replace(/^(ERR_NOT_UTF8: the text is not UTF-8).*$/, '$1'))
    }
    expect(errors).toBeGreaterThan(records / 8)
    // Parts of texts were handed over as they came (o200k_base's) or as the start kept (BERT's).
    expect(kept).toBeGreaterThan(records / 4)
  })

  it.each([
    ['o200k_base, Megatron', ['--encoding', 'o200k_base'], 'jsonl'],
    ['o200k_base, gzip (read as a stream)', ['--encoding', 'o200k_base'], 'jsonl.gz'],
    ['a tokenizer.json with template tokens, --append-eos', ['--tokenizer', 'templated.json', '--append-eos', '--eos-token', '<|endoftext|>'], 'jsonl'],
    ['--count-only', ['--encoding', 'o200k_base', '--count-only'], 'jsonl'],
    // Not cut: each record's text read up to the start its truncation keeps, given the template by
    // the engine, once.
    ['a WordPiece tokenizer.json with a template and a truncation', ['--tokenizer', join(FIXTURES, 'tokenizers/bert.json')], 'jsonl'],
  ])('JSONL records longer than a read, the field given twice (%s): ids equal encodeBatch of JSON.parse', async (name, args, extension) => {
    writeFileSync(join(work, 'templated.json'), JSON.stringify(gpt2WithTemplate({ after: true })))
    const records = [
      JSON.stringify({ text: 'a short record first' }),
      // Longer than a read (1 MiB), so that each is read as it comes, not as a whole line of a read.
      ...escapedTexts.map((text, i) => longRecord(text, i + 1, i % 2 ? { fieldTwice: prose(1_100_000, 9_000) } : { noteBytes: 1_100_000 })),
      '{"text": "short, between long ones"}',
      // Long because of another field: the text is short.
      `{"html": ${JSON.stringify(prose(1_100_000, 100))}, "text": "only this"}`,
    ]
    const file = join(work, `long-records.${extension}`)
    const jsonl = Buffer.from(records.join('\n') + '\n')
    writeFileSync(file, extension.endsWith('.gz') ? gzipSync(jsonl) : jsonl)
    const prefix = `out/long-records-${name.replace(/\W+/g, '-')}`
    const summary = encode(work, ['encode', `long-records.${extension}`, ...args, '--batch-mib', BATCH_MIB, '-o', prefix])
    expect(summary.documents).toBe(records.length)
    const documents = records.map((record) => JSON.parse(record).text)
    const tokenizer = args[0] === '--tokenizer' ? batchtok.Tokenizer.fromFile(resolve(work, args[1])) : o200k
    const want = (await tokenizer.encodeBatch(documents)).toArrays().map((ids) => (args.includes('--append-eos') ? [...ids, EOT] : [...ids]))
    if (args.includes('--count-only')) {
      const counts = readFileSync(join(work, `${prefix}.jsonl`), 'utf8').trim().split('\n').map((line) => JSON.parse(line).tokens)
      expect(counts).toEqual(want.map((ids) => ids.length))
    } else {
      expect(readMegatron(join(work, prefix))).toEqual(want)
    }
    expect(summary.tokens).toBe(want.reduce((sum, ids) => sum + ids.length, 0))
  })

  it('a JSONL record longer than a read that is not right gets the message a short one gets, at its column', () => {
    const long = 'word '.repeat(250_000)
    const cases = [
      `{"a": 1 "text": "${long}"}`,
      `{"text": "${long}", "b": [1, 2,, 3]}`,
      `{"text": "${long}", "b": 01}`,
      `{"text": "${long}\u0001${long}"}`,
      `{"text": "${long}\u0001${long}`,
      `{"text": "${long}\\x${long}"}`,
      `{"text": "${long}\\u12G4${long}"}`,
      `{"text": "${long}`,
      `{"text": "${long}\\`,
      `{"text": "${long}\\u12`,
      `{"body": "${long}", "9": 1, "x": 2, "1": 3}`,
      `{"text": "${long}", "text": 5}`,
      `["${long}"]`,
      `"${long}"`,
      `{"text": "${long}"} x`,
      Buffer.concat([Buffer.from(`{"text": "${long}`), Buffer.from([0xff]), Buffer.from(`"}`)]),
      Buffer.concat([Buffer.from(`{"text": "a", "z": "${long}`), Buffer.from([0xe2, 0x82]), Buffer.from(`${long}"}`)]),
      // Two errors: the reader names the line's UTF-8 first, then the first in the grammar.
      Buffer.concat([Buffer.from(`{"text": "${long}\\x${long}`), Buffer.from([0xff]), Buffer.from(`"}`)]),
      `{"a": 1 "text": "${long}\\x${long}"}`,
      `{"a": [1, 2 "text": "${long}\\x"}`,
      `{"a": 1, "te\\qxt": "${long}"}`,
      `{"text": "${long}\\x", "a": 1 "b": 2}`,
      `{"a": "xxxxxxxx" "b": "c", "text": "${long}"}`,
    ]
    for (const [i, record] of cases.entries()) {
      writeFileSync(join(work, 'bad-long.jsonl'), Buffer.concat([Buffer.from('{"text": "ok"}\n'), Buffer.from(record), Buffer.from('\n{"text": "after"}\n')]))
      const args = ['encode', 'bad-long.jsonl', '--encoding', 'o200k_base', '--force', '-q', '-o', 'out/bad-long']
      // Read as it comes (a batch of 10 KiB), and held whole (a batch of 4 MiB).
      const streamed = cli(work, [...args, '--batch-mib', '0.01'])
      const whole = cli(work, [...args, '--batch-mib', '4'])
      expect(whole.stderr, `case ${i}`).toMatch(/^batchtok: bad-long\.jsonl:2: /)
      expect(streamed.stderr, `case ${i}`).toBe(whole.stderr)
      expect(streamed.status).toBe(1)
      expect(existsSync(join(work, 'out/bad-long.bin'))).toBe(false)
    }
  })

  it('flat .bin with --append-eos and --count-only', async () => {
    encode(work, ['encode', 'long-lines.txt', '--encoding', 'r50k_base', '--output-format', 'flat', '--append-eos', '--batch-mib', BATCH_MIB, '-o', 'out/long-flat'])
    const flat = readFileSync(join(work, 'out/long-flat.bin'))
    const want = (await r50k.encodeBatch(longLines)).toArrays().flatMap((ids) => [...ids, EOT])
    expect(Array.from(new Uint16Array(flat.buffer, flat.byteOffset, flat.length / 2))).toEqual(want)
    encode(work, ['encode', 'long-lines.txt', '--encoding', 'o200k_base', '--count-only', '--batch-mib', BATCH_MIB, '-o', 'out/long-counts'])
    const counts = readFileSync(join(work, 'out/long-counts.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line).tokens)
    expect(counts).toEqual(Array.from(await o200k.countBatch(longLines)))
  })

  it('--doc-per-file: a file larger than a batch, plain and gzip, in parts', async () => {
    mkdirSync(join(work, 'long-files'), { recursive: true })
    const documents = [prose(2_000_000, 500_000), 'a small file', prose(300_000, 4_000_000) + '\n']
    documents.forEach((text, i) => writeFileSync(join(work, `long-files/${i}.txt`), text))
    writeFileSync(join(work, 'long-files/3.txt.gz'), gzipSync(documents[0]))
    encode(work, ['encode', 'long-files/*', '--doc-per-file', '--encoding', 'cl100k_base', '--batch-mib', BATCH_MIB, '-o', 'out/long-files'])
    const cl100k = batchtok.Tokenizer.fromEncoding('cl100k_base')
    expect(readMegatron(join(work, 'out/long-files'))).toEqual((await cl100k.encodeBatch([...documents, documents[0]])).toArrays())
  })

  it("--doc-per-file under a truncation (BERT's file): a file larger than a batch, plain and gzip, read up to the start it keeps; one whose rest is not UTF-8 refused", async () => {
    mkdirSync(join(work, 'kept-files'), { recursive: true })
    const documents = [prose(2_000_000, 500_000), 'a small file', '日本語のテキスト'.repeat(40_000), prose(300_000, 4_000_000) + '\n']
    documents.forEach((text, i) => writeFileSync(join(work, `kept-files/${i}.txt`), text))
    writeFileSync(join(work, 'kept-files/4.txt.gz'), gzipSync(documents[0]))
    const bertPath = join(FIXTURES, 'tokenizers/bert.json')
    const summary = encode(work, ['encode', 'kept-files/*', '--doc-per-file', '--tokenizer', bertPath, '--batch-mib', BATCH_MIB, '-o', 'out/kept-files'])
    const bert = batchtok.Tokenizer.fromFile(bertPath)
    expect(readMegatron(join(work, 'out/kept-files'))).toEqual((await bert.encodeBatch([...documents, documents[0]])).toArrays())
    // The long prose files were read only to their start (the summary counts the text encoded).
    expect(summary.bytes).toBeLessThan(documents.reduce((sum, text) => sum + Buffer.byteLength(text), 0))
    writeFileSync(join(work, 'kept-files/5.txt'), Buffer.concat([Buffer.from(documents[0]), Buffer.from([0xff])]))
    const run = cli(work, ['encode', 'kept-files/5.txt', '--doc-per-file', '--tokenizer', bertPath, '--batch-mib', BATCH_MIB, '-o', 'out/kept-bad', '-q'])
    expect(run.stderr).toMatch(/kept-files\/5\.txt: the text is not UTF-8; convert the file to UTF-8/)
    expect(run.status).toBe(1)
  })

  const tokenizerArgs = {
    o200k_base: ['--encoding', 'o200k_base'],
    // A truncation: each long line read up to the start it keeps, the rest read past.
    "BERT's file": ['--tokenizer', join(FIXTURES, 'tokenizers/bert.json')],
  }
  it.each([
    [2, 'txt', 'o200k_base'],
    [3, 'txt', 'o200k_base'],
    [5, 'txt', 'o200k_base'],
    [3, 'jsonl', 'o200k_base'],
    [3, 'txt', "BERT's file"],
  ] as const)('%i shards of the .%s, %s, ranges starting inside the long lines: merged, the single run', (count, extension, tokenizer) => {
    const args = ['encode', `long-lines.${extension}`, ...tokenizerArgs[tokenizer], '--batch-mib', BATCH_MIB]
    const name = `${count}${extension}${tokenizer.replace(/\W+/g, '')}`
    encode(work, [...args, '-o', `out/long-single${name}`])
    const shards = Array.from({ length: count }, (_, i) => {
      encode(work, [...args, '--shard', `${i}/${count}`, '-o', `out/long-shard${name}-${i}`])
      return `out/long-shard${name}-${i}`
    })
    expect(cli(work, ['merge', ...shards, '-o', `out/long-merged${name}`]).stderr).toBe('')
    for (const output of ['bin', 'idx']) {
      expect(sha256(join(work, `out/long-merged${name}.${output}`))).toBe(sha256(join(work, `out/long-single${name}.${output}`)))
    }
  })

  it.each(['txt', 'jsonl'])('SIGINT inside a long document (%s): the checkpoint ends where a document ends, and the same command resumes, byte-identical', async (extension) => {
    const documents = [...lines.slice(0, 3), prose(6_000_000), ...lines.slice(3, 6)]
    const file = `one-long.${extension}`
    writeFileSync(join(work, file), documents.map((text) => (extension === 'txt' ? text : JSON.stringify({ text }))).join('\n') + '\n')
    const args = ['encode', file, '--encoding', 'o200k_base', '--threads', '1', '--checkpoint-seconds', '1000', '--batch-mib', BATCH_MIB]
    encode(work, [...args, '-o', `out/one-long-${extension}-whole`])
    const child = spawn(process.execPath, [CLI, ...args, '-q', '-o', `out/one-long-${extension}`], { cwd: work, stdio: 'ignore' })
    let finished = false
    const exited = new Promise((resolve) => child.on('exit', resolve)).then(() => (finished = true))
    const partial = join(work, `out/one-long-${extension}.bin.partial`)
    while (!(existsSync(partial) && readFileSync(partial).length > 0) && !finished) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(finished, 'the run ended before its first batch was written; give it a larger input').toBe(false)
    child.kill('SIGINT')
    await exited
    const checkpoint = JSON.parse(readFileSync(join(work, `out/one-long-${extension}.checkpoint.json`), 'utf8'))
    // The checkpoint's sizes are those of its first documents, whole, in the finished files.
    const lengths = readMegatron(join(work, `out/one-long-${extension}-whole`)).map((ids) => ids.length)
    const before = lengths.slice(0, checkpoint.documents)
    expect(checkpoint.sizes.bin).toBe(4 * before.reduce((sum, length) => sum + length, 0))
    expect(checkpoint.sizes.idx).toBe(34 + 4 * checkpoint.documents)
    expect(checkpoint.tokens).toBe(before.reduce((sum, length) => sum + length, 0))
    const summary = encode(work, [...args, '-o', `out/one-long-${extension}`])
    expect(summary.resumedFrom).toBe(checkpoint.documents)
    for (const output of ['bin', 'idx']) {
      expect(sha256(join(work, `out/one-long-${extension}.${output}`))).toBe(sha256(join(work, `out/one-long-${extension}-whole.${output}`)))
    }
  })
})
