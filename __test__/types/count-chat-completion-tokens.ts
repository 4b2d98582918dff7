// Compiled by function-calls.spec.ts with `tsc --noEmit --strict`, never run: a request typed
// as gpt-tokenizer's ChatCompletionRequest is one batchtok takes, and the ready function exists
// where gpt-tokenizer's model module has it.
import type { ChatCompletionRequest as GptTokenizerRequest } from 'gpt-tokenizer/GptEncoding'
import { Tokenizer, type ChatCompletionRequest } from 'batchtok'
import { countChatCompletionTokens } from 'batchtok/model/gpt-4o'
import { countChatCompletionTokens as onEncoding } from 'batchtok/encoding/cl100k_base'
// @ts-expect-error: gpt-tokenizer's gpt-4 module has no countChatCompletionTokens, nor has batchtok's
import { countChatCompletionTokens as onGpt4 } from 'batchtok/model/gpt-4'

declare const theirs: GptTokenizerRequest
const request: ChatCompletionRequest = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    { role: 'function', name: 'get_weather', content: '{"temperature":21}' },
  ],
  functions: [
    {
      name: 'get_weather',
      description: 'The weather now',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] }, days: { type: ['integer', 'null'] } },
        required: ['city'],
      },
    },
  ],
  function_call: { name: 'get_weather' },
}
export const counts: number[] = [
  Tokenizer.fromModel('gpt-4o').countChatCompletionTokens(request),
  Tokenizer.fromModel('gpt-4o').countChatCompletionTokens(theirs),
  countChatCompletionTokens(theirs),
  onEncoding(request),
  onGpt4,
]
// @ts-expect-error: function_call is 'auto', 'none' or { name }
Tokenizer.fromModel('gpt-4o').countChatCompletionTokens({ messages: [], function_call: 'required' })
