'use strict'
// js-tiktoken's API over batchtok's tokenizers: code that requires `js-tiktoken` (or
// `js-tiktoken/lite`) runs on `batchtok/js-tiktoken` with the same arguments, defaults and results.
// `encode(text, allowedSpecial = [], disallowedSpecial = 'all')` returns a `number[]` and throws on
// special-token text that is not allowed, as js-tiktoken's does (batchtok's own `encode` encodes
// such text as ordinary text). A model's encoding is tiktoken's, which js-tiktoken gives otherwise
// for `davinci-002` and `babbage-002`. Its errors begin with js-tiktoken's messages
// (`peer-errors.js`).

// Through the package's main entry, as the other entry points.
const { Tokenizer, encodingForModel: encodingNameForModel } = require('./index.js')
const { capitalized, knownEncoding, knownModel, sayingDisallowed } = require('./peer-errors.js')

/** Where a `Tiktoken` keeps its tokenizer: not a field a caller's code would meet by accident. */
const TOKENIZER = Symbol('batchtok tokenizer')

/** `ranks`, checked to be js-tiktoken's rank object, as a batchtok tokenizer. */
function fromRanks(ranks, extendedSpecialTokens) {
  const shaped =
    ranks !== null &&
    typeof ranks === 'object' &&
    typeof ranks.bpe_ranks === 'string' &&
    typeof ranks.pat_str === 'string' &&
    ranks.special_tokens !== null &&
    typeof ranks.special_tokens === 'object'
  if (!shaped) {
    throw new TypeError(
      "ranks is not js-tiktoken's rank object; expected { bpe_ranks, special_tokens, pat_str }, " +
        "as js-tiktoken/ranks/<name> exports it, or a batchtok Tokenizer",
    )
  }
  return Tokenizer.fromTiktoken(ranks.bpe_ranks, {
    pattern: ranks.pat_str,
    specialTokens: { ...ranks.special_tokens, ...extendedSpecialTokens },
  })
}

/** An encoding with js-tiktoken's `encode` and `decode`. */
class Tiktoken {
  /**
   * `ranks`: js-tiktoken's rank object (`js-tiktoken/ranks/<name>`), with `extendedSpecialTokens`
   * added to its special tokens; or a batchtok `Tokenizer` of an OpenAI-family encoding.
   */
  constructor(ranks, extendedSpecialTokens) {
    this[TOKENIZER] = ranks instanceof Tokenizer ? ranks : fromRanks(ranks, extendedSpecialTokens)
  }

  /** The batchtok tokenizer underneath, for its batch methods (`encodeBatch`, `countBatch`...). */
  get tokenizer() {
    return this[TOKENIZER]
  }

  /**
   * The ids of `text`. Special-token text in `allowedSpecial` (`'all'` or a list) becomes its id;
   * other special-token text in `disallowedSpecial` (`'all'`: every special token not allowed)
   * throws; any other is ordinary text.
   */
  encode(text, allowedSpecial = [], disallowedSpecial = 'all') {
    const ids = sayingDisallowed(
      () => this[TOKENIZER].encode(text, { allowedSpecial, disallowedSpecial }),
      (token, index) =>
        `The text contains a special token that is not allowed: ${token} (at index ${index}; pass it in ` +
        'allowedSpecial to encode it as its id, or [] as disallowedSpecial to encode it as ordinary text)',
    )
    return Array.from(ids)
  }

  /** The text of `tokens`; bytes that are part of a character become U+FFFD. */
  decode(tokens) {
    return this[TOKENIZER].decode(tokens)
  }
}

/** The named encoding, with `extendSpecialTokens` added to its special tokens. */
function getEncoding(encoding, extendSpecialTokens) {
  const tokenizer = knownEncoding(encoding, capitalized, () =>
    Tokenizer.fromEncoding(encoding, extendSpecialTokens && { specialTokens: extendSpecialTokens }),
  )
  return new Tiktoken(tokenizer)
}

/** The encoding of `model` (tiktoken's table), with `extendSpecialTokens` added. */
function encodingForModel(model, extendSpecialTokens) {
  const tokenizer = knownModel(model, capitalized, () =>
    Tokenizer.fromModel(model, extendSpecialTokens && { specialTokens: extendSpecialTokens }),
  )
  return new Tiktoken(tokenizer)
}

/** The name of `model`'s encoding (tiktoken's table). */
function getEncodingNameForModel(model) {
  return knownModel(model, capitalized, () => encodingNameForModel(model))
}

module.exports = { Tiktoken, getEncoding, encodingForModel, getEncodingNameForModel }
