// Compiled by entry-points.spec.ts with `tsc --noEmit --strict`, never run: code written against
// gpt-tokenizer's model module type-checks against batchtok's once the import path is changed.
import type { ChatMessage } from 'gpt-tokenizer/GptEncoding'
import {
  ALL_SPECIAL_TOKENS,
  EndOfText,
  countTokens,
  decode,
  decodeAsyncGenerator,
  decodeGenerator,
  encode,
  encodeChat,
  encodeChatGenerator,
  encodeGenerator,
  isWithinTokenLimit,
} from 'batchtok/model/gpt-4o'

declare const chat: ChatMessage[]
declare const arriving: AsyncIterable<number[]>

const ofText: number = countTokens('hello')
const ofChat: number = countTokens(chat)
const within: number | false = isWithinTokenLimit(chat, 100)
const allowed: Uint32Array = encode(`a${EndOfText}`, { allowedSpecial: new Set([EndOfText]) })
const all: Uint32Array = encode(`a${EndOfText}`, { allowedSpecial: ALL_SPECIAL_TOKENS, disallowedSpecial: new Set() })
const chatIds: Uint32Array = encodeChat(chat, 'gpt-4o')
const flat: number[] = [...encodeGenerator('hello'), ...encodeChatGenerator(chat)].flat()
const text: string = decode(new Set(flat)) + [...decodeGenerator(flat)].join('')

async function streamed(): Promise<string> {
  let out = ''
  for await (const piece of decodeAsyncGenerator(arriving)) out += piece
  return out
}

export { ofText, ofChat, within, allowed, all, chatIds, text, streamed }
