'use strict'
// The tokenizer a command names, and its end-of-text id for --append-eos.

const fs = require('node:fs')
const path = require('node:path')
const { UsageError } = require('./errors')

/** The end-of-text token of the OpenAI encodings. */
const OPENAI_EOS = '<|endoftext|>'

/**
 * The tokenizer of `--encoding`, `--model` or `--tokenizer` (a tokenizer.json, or a folder that
 * holds one); exactly one of them must be given.
 * @returns {{ tokenizer: import('../index').Tokenizer, openai: boolean, description: string }}
 */
function loadTokenizer(options, batchtok) {
  const given = ['encoding', 'model', 'tokenizer'].filter((key) => options[key] !== undefined)
  if (given.length !== 1) {
    throw new UsageError('name one tokenizer: --encoding o200k_base, --model gpt-4o, or --tokenizer path/to/tokenizer.json (or its model folder, or a Hub id in the local cache)')
  }
  try {
    if (options.encoding !== undefined) {
      return { tokenizer: batchtok.Tokenizer.fromEncoding(options.encoding), openai: true, description: options.encoding }
    }
    if (options.model !== undefined) {
      return { tokenizer: batchtok.Tokenizer.fromModel(options.model), openai: true, description: options.model }
    }
  } catch (error) {
    throw new UsageError(error.message)
  }
  const source = options.tokenizer
  try {
    // A folder or a Hub id in the local cache brings its tokenizer_config.json (the end-of-sequence
    // token `--append-eos` uses); a file is a bare tokenizer.json.
    const isFile = fs.existsSync(source) && fs.statSync(source).isFile()
    const tokenizer = isFile ? batchtok.Tokenizer.fromFile(source) : batchtok.Tokenizer.fromPretrainedSync(source)
    return { tokenizer, openai: false, description: tokenizer.source ?? path.resolve(source) }
  } catch (error) {
    throw new UsageError(`--tokenizer: ${error.message}`)
  }
}

/**
 * The id `--append-eos` appends: `--eos-token`'s, else `<|endoftext|>` for an OpenAI encoding,
 * else the tokenizer's own end-of-sequence token where it names one.
 */
function eosIdOf({ tokenizer, openai }, eosToken) {
  let token = eosToken
  if (token === undefined) token = openai ? OPENAI_EOS : tokenizer.specialTokens?.eos
  if (token === undefined || token === null) {
    throw new UsageError('--append-eos: this tokenizer names no end-of-sequence token; give it with --eos-token, e.g. --eos-token "</s>"')
  }
  let ids
  try {
    ids = openai ? tokenizer.encode(token, { allowedSpecial: [token] }) : tokenizer.encode(token, { addSpecialTokens: false })
  } catch (error) {
    throw new UsageError(`--eos-token ${token}: ${error.message}`)
  }
  if (ids.length !== 1) {
    throw new UsageError(`--eos-token ${token} is ${ids.length} tokens, not one; name a special token of the tokenizer`)
  }
  return ids[0]
}

module.exports = { loadTokenizer, eosIdOf }
