// Types of the ready functions that `batchtok/encoding/<name>` and `batchtok/model/<model>` export.
import type {
  ChatCompletionRequest,
  ChatMessage,
  ChatOptions,
  BatchEncoding,
  BatchOptions,
  DecodeOptions,
  EncodeOptions,
  StreamDecoder,
  Tokenizer,
  TruncateOptions,
} from '../index'

/** Text pieces of `source` as they arrive: whole characters each, joined equal to `decode` of all ids. */
export declare function decodeStream(
  tokenizer: Tokenizer,
  source: AsyncIterable<Uint32Array | readonly number[] | number> | Iterable<Uint32Array | readonly number[] | number>,
  options?: DecodeOptions,
): AsyncGenerator<string, void, undefined>

/** The ready functions over one tokenizer; each works unbound. */
export interface ReadyFunctions {
  readonly tokenizer: Tokenizer
  encode(text: string, options?: EncodeOptions): Uint32Array
  decode(ids: Uint32Array | readonly number[], options?: DecodeOptions): string
  decodeBytes(ids: Uint32Array | readonly number[], options?: DecodeOptions): Uint8Array
  count(text: string, options?: EncodeOptions): number
  isWithinTokenLimit(text: string, limit: number, options?: EncodeOptions): number | false
  truncate(text: string, maxTokens: number, options?: TruncateOptions): string
  encodeChat(messages: readonly ChatMessage[], options?: ChatOptions): Uint32Array
  countChat(messages: readonly ChatMessage[], options?: ChatOptions): number
  /**
   * The prompt tokens of a chat completion request with functions (`Tokenizer.countChatCompletionTokens`);
   * only where gpt-tokenizer offers it: the function-calling models and their encodings.
   */
  countChatCompletionTokens?(request: ChatCompletionRequest): number
  encodeBatch(texts: readonly string[], options?: BatchOptions): Promise<BatchEncoding>
  countBatch(texts: readonly string[], options?: BatchOptions): Promise<Uint32Array>
  decodeBatch(lists: ReadonlyArray<Uint32Array | readonly number[]>, options?: DecodeOptions): Promise<string[]>
  decoder(options?: DecodeOptions): StreamDecoder
  decodeStream(
    source: AsyncIterable<Uint32Array | readonly number[] | number> | Iterable<Uint32Array | readonly number[] | number>,
    options?: DecodeOptions,
  ): AsyncGenerator<string, void, undefined>
}

export declare function forEncoding(name: string): ReadyFunctions
export declare function forModel(model: string): ReadyFunctions
