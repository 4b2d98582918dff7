// Types of `batchtok/js-tiktoken`: js-tiktoken's API over batchtok's tokenizers.
import type { Tokenizer } from '../index'

/** The encodings batchtok embeds (js-tiktoken's, and o200k_harmony). */
export type TiktokenEncoding = 'gpt2' | 'r50k_base' | 'p50k_base' | 'p50k_edit' | 'cl100k_base' | 'o200k_base' | 'o200k_harmony'

/** A model name of tiktoken's table (`modelEncodings()` lists them). */
export type TiktokenModel = string

/** js-tiktoken's rank object, as `js-tiktoken/ranks/<name>` exports it. */
export interface TiktokenBPE {
  pat_str: string
  special_tokens: Record<string, number>
  bpe_ranks: string
}

/** An encoding with js-tiktoken's `encode` and `decode`. */
export declare class Tiktoken {
  /**
   * `ranks`: js-tiktoken's rank object, with `extendedSpecialTokens` added to its special tokens;
   * or a batchtok `Tokenizer` of an OpenAI-family encoding.
   */
  constructor(ranks: TiktokenBPE | Tokenizer, extendedSpecialTokens?: Record<string, number>)
  /** The batchtok tokenizer underneath, for its batch methods (`encodeBatch`, `countBatch`...). */
  readonly tokenizer: Tokenizer
  /**
   * The ids of `text`. Special-token text in `allowedSpecial` becomes its id; other special-token
   * text in `disallowedSpecial` (`'all'`: every special token not allowed) throws an `Error`
   * naming the token; any other is ordinary text.
   */
  encode(text: string, allowedSpecial?: readonly string[] | 'all', disallowedSpecial?: readonly string[] | 'all'): number[]
  /** The text of `tokens`; bytes that are part of a character become U+FFFD. */
  decode(tokens: readonly number[] | Uint32Array): string
}

/** The named encoding, with `extendSpecialTokens` added to its special tokens. */
export declare function getEncoding(encoding: TiktokenEncoding, extendSpecialTokens?: Record<string, number>): Tiktoken

/** The encoding of `model` (tiktoken's table), with `extendSpecialTokens` added. */
export declare function encodingForModel(model: TiktokenModel, extendSpecialTokens?: Record<string, number>): Tiktoken

/** The name of `model`'s encoding (tiktoken's table). */
export declare function getEncodingNameForModel(model: TiktokenModel): TiktokenEncoding
