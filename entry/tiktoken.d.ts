// Types of `batchtok/tiktoken`: the `tiktoken` package's API over batchtok's tokenizers.
import type { Tokenizer } from '../index'

/** The encodings batchtok embeds (tiktoken's, and o200k_harmony). */
export type TiktokenEncoding = 'gpt2' | 'r50k_base' | 'p50k_base' | 'p50k_edit' | 'cl100k_base' | 'o200k_base' | 'o200k_harmony'

/** A model name of tiktoken's table (`modelEncodings()` lists them). */
export type TiktokenModel = string

/** An encoding with tiktoken's methods. */
export declare class Tiktoken {
  /**
   * `tiktoken_bfe`: the ranks, as a `.tiktoken` file holds them (or js-tiktoken's packed
   * `bpe_ranks`), with its special tokens and pattern; or a batchtok `Tokenizer` of an
   * OpenAI-family encoding, alone.
   */
  constructor(tiktoken_bfe: string | Tokenizer, special_tokens?: Record<string, number>, pat_str?: string)
  /** The batchtok tokenizer underneath, for its batch methods (`encodeBatch`, `countBatch`...). */
  readonly tokenizer: Tokenizer
  /** The encoding's name. */
  readonly name: string
  /** Frees nothing: the garbage collector owns the tokenizer, which stays usable. */
  free(): void
  /**
   * The ids of `text`. Special-token text in `allowed_special` becomes its id; other
   * special-token text in `disallowed_special` (`'all'`: every special token not allowed) throws
   * an `Error` naming the token; any other is ordinary text.
   */
  encode(text: string, allowed_special?: 'all' | readonly string[], disallowed_special?: 'all' | readonly string[]): Uint32Array
  /**
   * The ids of a start of `text` that no text appended to it changes, and every sequence of ids the
   * rest can become once more text follows (tiktoken's, in ascending order: tiktoken's are a set).
   * Special tokens as `encode` takes them.
   */
  encode_with_unstable(text: string, allowed_special?: 'all' | readonly string[], disallowed_special?: 'all' | readonly string[]): [number[], number[][]]
  /** The ids of `text`, special-token text as ordinary text. */
  encode_ordinary(text: string): Uint32Array
  /**
   * The id of the token whose bytes are `bytes` (a special token's too); throws where none is, and a
   * `TypeError` for a string.
   */
  encode_single_token(bytes: Uint8Array | readonly number[]): number
  /** The bytes of `tokens`. */
  decode(tokens: Uint32Array | readonly number[]): Uint8Array
  /** The bytes of the token `token`; throws a `RangeError` where no token has that id. */
  decode_single_token_bytes(token: number): Uint8Array
  /** The bytes of every ordinary token (special tokens left out), in byte order, as arrays. */
  token_byte_values(): Array<Array<number>>
}

/** The named encoding, with `extend_special_tokens` added to its special tokens. */
export declare function get_encoding(encoding: TiktokenEncoding, extend_special_tokens?: Record<string, number>): Tiktoken

/** The encoding of `model` (tiktoken's table), with `extend_special_tokens` added. */
export declare function encoding_for_model(model: TiktokenModel, extend_special_tokens?: Record<string, number>): Tiktoken

/** The name of `model`'s encoding (tiktoken's table). */
export declare function get_encoding_name_for_model(model: TiktokenModel): TiktokenEncoding
