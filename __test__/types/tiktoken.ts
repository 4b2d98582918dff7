// Compiled by tiktoken.spec.ts with `tsc --noEmit --strict`, never run: code written against the
// tiktoken package type-checks against `batchtok/tiktoken` once the import path is changed.
import { Tiktoken, encoding_for_model, get_encoding, get_encoding_name_for_model } from 'batchtok/tiktoken'

const encoding = get_encoding('cl100k_base', { '<|im_start|>': 100264 })
const ids: Uint32Array = encoding.encode('hello', 'all', [])
const bytes: Uint8Array = encoding.decode(ids)
const text: string = new TextDecoder().decode(bytes)
const one: number = encoding.encode_single_token(encoding.decode_single_token_bytes(ids[0]))
const values: number[][] = encoding.token_byte_values()
const [stable, completions] = encoding.encode_with_unstable('hello fan', 'all')
const continued: number[] = [...stable, ...completions[0]]
encoding.free()
const fromRanks = new Tiktoken('aGVsbG8= 0', { '<|endoftext|>': 1 }, '\\S+')
const name: string = get_encoding_name_for_model('gpt-4o') + encoding_for_model('gpt-4o').name + fromRanks.name

export { text, one, values, name, continued }
