'use strict'
// tiktoken's JavaScript API (the `tiktoken` package, WASM) over batchtok's tokenizers: code that
// requires `tiktoken` (or `tiktoken/lite`) runs on `batchtok/tiktoken` with the same arguments,
// defaults and results: `encode(text, allowed_special = [], disallowed_special = 'all')` returns a
// `Uint32Array` and throws on special-token text that is not allowed, and `decode` returns bytes.
// Its errors begin with tiktoken's messages (`peer-errors.js`).
// `free()` is there and frees nothing: a tokenizer's memory belongs to the garbage collector, and
// the encoding stays usable. `encode_with_unstable` returns `[tokens, completions]` as tiktoken's
// does, its completions in ascending order where tiktoken's come in the order of its hash set.

// Through the package's main entry, as the other entry points.
const { Tokenizer, encodingForModel: encodingNameForModel } = require('./index.js')
const { knownEncoding, knownModel, sayingDisallowed } = require('./peer-errors.js')

/** Where a `Tiktoken` keeps its tokenizer: not a field a caller's code would meet by accident. */
const TOKENIZER = Symbol('batchtok tokenizer')
/** Where it keeps the id of each token's bytes, made on the first `encode_single_token`. */
const TOKEN_IDS = Symbol('batchtok token ids')

/** The bytes of a token as a `Map` key. */
const keyOf = (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')

/** The bytes of every id below `tokenizer.idLimit` that a token has. */
function* tokensOf(tokenizer) {
  for (let id = 0; id < tokenizer.idLimit; id++) {
    const bytes = tokenizer.tokenBytes(id)
    if (bytes !== null) yield [id, bytes]
  }
}

/** An encoding with tiktoken's methods. */
class Tiktoken {
  /**
   * `tiktoken_bfe`: the ranks, as a `.tiktoken` file holds them (or js-tiktoken's packed
   * `bpe_ranks`), with its special tokens and pattern; or a batchtok `Tokenizer` of an
   * OpenAI-family encoding, alone.
   */
  constructor(tiktoken_bfe, special_tokens, pat_str) {
    this[TOKENIZER] =
      tiktoken_bfe instanceof Tokenizer
        ? tiktoken_bfe
        : Tokenizer.fromTiktoken(tiktoken_bfe, { pattern: pat_str, specialTokens: special_tokens })
  }

  /** The batchtok tokenizer underneath, for its batch methods (`encodeBatch`, `countBatch`...). */
  get tokenizer() {
    return this[TOKENIZER]
  }

  /** The encoding's name. */
  get name() {
    return this[TOKENIZER].name
  }

  /** Frees nothing: the garbage collector owns the tokenizer (see the module comment). */
  free() {}

  /**
   * The ids of `text`. Special-token text in `allowed_special` (`'all'` or a list) becomes its id;
   * other special-token text in `disallowed_special` (`'all'`: every special token not allowed)
   * throws; any other is ordinary text.
   */
  encode(text, allowed_special = [], disallowed_special = 'all') {
    const options = specialOptions(allowed_special, disallowed_special)
    return sayingDisallowed(
      () => this[TOKENIZER].encode(text, options),
      notAllowed(', or encode it with encode_ordinary as ordinary text'),
    )
  }

  /**
   * The ids of `text` that no text appended to it changes, and every sequence of ids its rest can
   * become: `[tokens, completions]`, plain arrays. Special tokens as `encode` takes them.
   */
  encode_with_unstable(text, allowed_special = [], disallowed_special = 'all') {
    const options = specialOptions(allowed_special, disallowed_special)
    const { stable, completions } = sayingDisallowed(() => this[TOKENIZER].encodeWithUnstable(text, options), notAllowed(''))
    return [Array.from(stable), completions.map((ids) => Array.from(ids))]
  }

  /** The ids of `text`, special-token text as ordinary text. */
  encode_ordinary(text) {
    return this[TOKENIZER].encode(text)
  }

  /**
   * The id of the token whose bytes are `bytes` (a `Uint8Array`, or an array of byte values as
   * tiktoken also takes; a special token's too); throws where none is.
   */
  encode_single_token(bytes) {
    if (Array.isArray(bytes)) bytes = Uint8Array.from(bytes)
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError("encode_single_token takes a token's bytes as a Uint8Array or an array of byte values; for a string, pass new TextEncoder().encode(text)")
    }
    this[TOKEN_IDS] ??= new Map(Array.from(tokensOf(this[TOKENIZER]), ([id, token]) => [keyOf(token), id]))
    const id = this[TOKEN_IDS].get(keyOf(bytes))
    if (id === undefined) throw new Error(`no token of ${this.name} has the bytes [${Array.from(bytes)}]`)
    return id
  }

  /** The bytes of `tokens`. */
  decode(tokens) {
    return this[TOKENIZER].decodeBytes(tokens)
  }

  /** The bytes of the token `token`; throws where no token has that id. */
  decode_single_token_bytes(token) {
    const bytes = this[TOKENIZER].tokenBytes(token)
    if (bytes === null) throw new RangeError(`no token of ${this.name} has the id ${token}`)
    return bytes
  }

  /** The bytes of every ordinary token (special tokens left out), in byte order, as arrays. */
  token_byte_values() {
    // The added tokens of an OpenAI encoding's vocabulary are its special tokens.
    const ordinary = new Set(Object.values(this[TOKENIZER].getVocab(false)))
    const special = new Set(Object.values(this[TOKENIZER].getVocab(true)).filter((id) => !ordinary.has(id)))
    const values = []
    for (const [id, bytes] of tokensOf(this[TOKENIZER])) if (!special.has(id)) values.push(Buffer.from(bytes))
    return values.sort(Buffer.compare).map((bytes) => Array.from(bytes))
  }
}

/** tiktoken's check of `encode`'s special-token arguments: a string other than `'all'` is refused
 * in its words (batchtok's own message names its options, not these arguments). */
function checkSpecialArgument(name, value) {
  if (typeof value === 'string' && value !== 'all') {
    throw new TypeError(`Invalid value for ${name}: ${JSON.stringify(value)}; expected 'all' or an array of special tokens such as ['<|endoftext|>']`)
  }
}

/** `encode`'s special-token arguments, checked as tiktoken checks them, as batchtok's options. */
function specialOptions(allowed_special, disallowed_special) {
  checkSpecialArgument('allowed_special', allowed_special)
  checkSpecialArgument('disallowed_special', disallowed_special)
  return { allowedSpecial: allowed_special, disallowedSpecial: disallowed_special }
}

/** tiktoken's words for special-token text not allowed, then where it is and what else to do. */
const notAllowed = (otherwise) => (token, index) =>
  `The text contains a special token that is not allowed: ${token} (at index ${index}; pass it in allowed_special to encode it as its id${otherwise})`

/** tiktoken's message for a model its table does not hold, then batchtok's. */
const invalidModel = (model) => (message) => `Invalid model: ${model} (${message})`

/** The named encoding, with `extend_special_tokens` added to its special tokens. */
function get_encoding(encoding, extend_special_tokens) {
  const tokenizer = knownEncoding(
    encoding,
    (message) => `Invalid encoding (${message})`,
    () => Tokenizer.fromEncoding(encoding, extend_special_tokens && { specialTokens: extend_special_tokens }),
  )
  return new Tiktoken(tokenizer)
}

/** The encoding of `model` (tiktoken's table), with `extend_special_tokens` added. */
function encoding_for_model(model, extend_special_tokens) {
  const tokenizer = knownModel(model, invalidModel(model), () =>
    Tokenizer.fromModel(model, extend_special_tokens && { specialTokens: extend_special_tokens }),
  )
  return new Tiktoken(tokenizer)
}

/** The name of `model`'s encoding (tiktoken's table). */
function get_encoding_name_for_model(model) {
  return knownModel(model, invalidModel(model), () => encodingNameForModel(model))
}

module.exports = { Tiktoken, get_encoding, encoding_for_model, get_encoding_name_for_model }
