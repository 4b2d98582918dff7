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

/**
 * `EncodeOptions`, where the special tokens may also be given as a `Set`, as gpt-tokenizer takes
 * them.
 */
export type ReadyEncodeOptions = Omit<EncodeOptions, 'allowedSpecial' | 'disallowedSpecial'> & {
  allowedSpecial?: EncodeOptions['allowedSpecial'] | ReadonlySet<string>
  disallowedSpecial?: EncodeOptions['disallowedSpecial'] | ReadonlySet<string>
}

/** The ready functions over one tokenizer; each works unbound. */
export interface ReadyFunctions {
  readonly tokenizer: Tokenizer
  encode(text: string, options?: ReadyEncodeOptions): Uint32Array
  /** `tokenizer.decode`; `ids` may also be any iterable of ids. */
  decode(ids: Uint32Array | readonly number[] | Iterable<number>, options?: DecodeOptions): string
  /** `tokenizer.decodeBytes`; `ids` may also be any iterable of ids. */
  decodeBytes(ids: Uint32Array | readonly number[] | Iterable<number>, options?: DecodeOptions): Uint8Array
  count(text: string, options?: ReadyEncodeOptions): number
  /**
   * The number of tokens of a text, or of a conversation as `encodeChat` lays it out, where it is
   * at most `limit`; else `false`.
   */
  isWithinTokenLimit(input: string | Iterable<ChatMessage>, limit: number, options?: ReadyEncodeOptions): number | false
  truncate(text: string, maxTokens: number, options?: TruncateOptions): string
  /**
   * `tokenizer.encodeChat`; the model may also be given as a string, as gpt-tokenizer takes it,
   * with the options after it. The contents' special-token text is ordinary text: gpt-tokenizer's
   * `allowedSpecial` there is refused with a `TypeError`.
   */
  encodeChat(messages: Iterable<ChatMessage>, modelOrOptions?: string | ChatOptions, options?: ChatOptions): Uint32Array
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
  /**
   * gpt-tokenizer's `countTokens`: `count` of a text, or the length of `encodeChat` of a
   * conversation (not OpenAI's accounting, which is `countChat`).
   */
  countTokens(input: string | Iterable<ChatMessage>, options?: ReadyEncodeOptions): number
  /** gpt-tokenizer's `encodeGenerator`: the ids of `encode`, yielded as one array. */
  encodeGenerator(text: string, options?: ReadyEncodeOptions): Generator<number[], void, undefined>
  /** gpt-tokenizer's `encodeChatGenerator`: the ids of `encodeChat`, yielded as one array. */
  encodeChatGenerator(messages: Iterable<ChatMessage>, modelOrOptions?: string | ChatOptions, options?: ChatOptions): Generator<number[], void, undefined>
  /** gpt-tokenizer's `decodeGenerator`: the text of `ids`, a piece of whole characters at a time. */
  decodeGenerator(ids: Iterable<number>, options?: DecodeOptions): Generator<string, void, undefined>
  /** gpt-tokenizer's `decodeAsyncGenerator`: `decodeStream`. */
  decodeAsyncGenerator(
    source: AsyncIterable<Uint32Array | readonly number[] | number> | Iterable<Uint32Array | readonly number[] | number>,
    options?: DecodeOptions,
  ): AsyncGenerator<string, void, undefined>
  /** The special tokens' texts, under gpt-tokenizer's names for them. */
  readonly EndOfText: '<|endoftext|>'
  readonly FimPrefix: '<|fim_prefix|>'
  readonly FimMiddle: '<|fim_middle|>'
  readonly FimSuffix: '<|fim_suffix|>'
  readonly ImStart: '<|im_start|>'
  readonly ImEnd: '<|im_end|>'
  readonly ImSep: '<|im_sep|>'
  readonly EndOfPrompt: '<|endofprompt|>'
  readonly HarmonyStartOfText: '<|startoftext|>'
  readonly HarmonyStart: '<|start|>'
  readonly HarmonyEnd: '<|end|>'
  readonly HarmonyMessage: '<|message|>'
  readonly HarmonyChannel: '<|channel|>'
  readonly HarmonyReturn: '<|return|>'
  readonly HarmonyConstrain: '<|constrain|>'
  readonly HarmonyCall: '<|call|>'
  /** `allowedSpecial` or `disallowedSpecial` for every special token. */
  readonly ALL_SPECIAL_TOKENS: 'all'
}

export declare function forEncoding(name: string): ReadyFunctions
export declare function forModel(model: string): ReadyFunctions
