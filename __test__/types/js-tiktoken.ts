// Compiled by js-tiktoken.spec.ts with `tsc --noEmit --strict`, never run: code written against
// js-tiktoken type-checks against `batchtok/js-tiktoken` once the import path is changed.
import type { TiktokenBPE } from 'js-tiktoken/lite'
import { Tiktoken, encodingForModel, getEncoding, getEncodingNameForModel } from 'batchtok/js-tiktoken'

declare const ranks: TiktokenBPE

const encoding = getEncoding('cl100k_base', { '<|im_start|>': 100264 })
const ids: number[] = encoding.encode('hello', 'all', [])
const text: string = encoding.decode(ids)
const fromRanks = new Tiktoken(ranks)
const more: number[] = fromRanks.encode('hello', ['<|endoftext|>'])
const name: string = getEncodingNameForModel('gpt-4o')
const count: Promise<Uint32Array> = encodingForModel('gpt-4o').tokenizer.countBatch(['a', 'b'])

export { ids, text, more, name, count }
