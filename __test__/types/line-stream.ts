// Compiled by stream.spec.ts with `tsc --noEmit --strict`: batchtok/stream's line functions, as a
// TypeScript user calls them.
import { Tokenizer } from 'batchtok'
import { batchLines, encodeBatches, encodeLineStream, type TokenBatch } from 'batchtok/stream'

async function* chunks(): AsyncGenerator<string | Uint8Array> {
  yield '{"text": "a"}\n{"te'
  yield new TextEncoder().encode('xt": "b"}\n')
}

export async function countTokens(tokenizer: Tokenizer): Promise<number> {
  let tokens = 0
  const options = { format: 'jsonl', field: 'text', batchBytes: 1 << 20, eosId: 199999 } as const
  for await (const batch of encodeLineStream(tokenizer, chunks(), options)) tokens += batch.ids.length
  const prepared: AsyncGenerator<TokenBatch> = encodeBatches(tokenizer, batchLines(['a\n', 'b\n']))
  for await (const batch of prepared) tokens += batch.lines ?? 0
  // A long line in parts: a batch that continues ends inside a line.
  for await (const batch of encodeLineStream(tokenizer, chunks(), { longLines: 'parts' })) tokens += batch.continues ? 0 : batch.documents
  const cutLine = (bytes: Uint8Array, from: number) => tokenizer.lastSafeCut(bytes, from, { addSpecialTokens: false, afterCut: true })
  for await (const batch of batchLines(['a b\n'], { cutLine })) tokens += batch.continues ? 1 : 0
  return tokens
}

// @ts-expect-error batchDocuments does not apply to a stream of lines
encodeLineStream(Tokenizer.fromEncoding('o200k_base'), chunks(), { batchDocuments: 10 })
// @ts-expect-error a format is 'lines' or 'jsonl'
batchLines(chunks(), { format: 'csv' })
// @ts-expect-error long lines are read 'whole' or in 'parts'
encodeLineStream(Tokenizer.fromEncoding('o200k_base'), chunks(), { longLines: 'cut' })
