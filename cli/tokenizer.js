'use strict'
// The tokenizer a command names, and its end-of-text id for --append-eos.

const fs = require('node:fs')
const path = require('node:path')
const { UsageError } = require('./errors')

/** The end-of-text token of the OpenAI encodings. */
const OPENAI_EOS = '<|endoftext|>'

/**
 * The tokenizer of `--encoding`, `--model`, `--tokenizer` (a tokenizer.json, or a folder that
 * holds one or a Mistral model's tekken.json), `--tiktoken` (a rank file, with `--pattern`) or
 * `--tekken` (Mistral's tekken.json); exactly one of them must be given. `openai`: an encoding of
 * tiktoken's kind, whose special tokens are named in `allowedSpecial`.
 * @returns {{ tokenizer: import('../index').Tokenizer, openai: boolean, description: string }}
 */
function loadTokenizer(options, batchtok) {
  const given = ['encoding', 'model', 'tokenizer', 'tiktoken', 'tekken'].filter((key) => options[key] !== undefined)
  if (given.length !== 1) {
    throw new UsageError(
      'name one tokenizer: --encoding o200k_base, --model gpt-4o, --tokenizer path/to/tokenizer.json (or its model folder, or a Hub id in the local cache), --tiktoken path/to/ranks.tiktoken --pattern REGEX, or --tekken path/to/tekken.json',
    )
  }
  if (options.tiktoken !== undefined) return loadRankFile(options, batchtok)
  for (const [key, flag] of [['pattern', '--pattern'], ['specialTokens', '--special-tokens']]) {
    if (options[key] !== undefined) throw new UsageError(`${flag} goes with --tiktoken, which the command does not give`)
  }
  if (options.tekken !== undefined) return loadTekken(options.tekken, batchtok)
  try {
    if (options.encoding !== undefined) {
      return { tokenizer: batchtok.Tokenizer.fromEncoding(options.encoding), openai: true, description: options.encoding }
    }
    if (options.model !== undefined) {
      return { tokenizer: batchtok.Tokenizer.fromModel(options.model), openai: true, description: options.model }
    }
  } catch (error) {
    throw new UsageError(unknownModelMessage(error.message) ?? error.message)
  }
  const source = options.tokenizer
  try {
    // A folder or a Hub id in the local cache brings its tokenizer_config.json (the end-of-sequence
    // token `--append-eos` uses); a file is a bare tokenizer.json.
    const isFile = fs.existsSync(source) && fs.statSync(source).isFile()
    const tokenizer = isFile ? batchtok.Tokenizer.fromFile(source) : batchtok.Tokenizer.fromPretrainedSync(source)
    // A Hugging Face tokenizer is named after its file; a folder's tekken.json is an encoding.
    return { tokenizer, openai: tokenizer.name !== 'tokenizer.json', description: tokenizer.source ?? path.resolve(source) }
  } catch (error) {
    throw new UsageError(`--tokenizer: ${error.message}`)
  }
}

/**
 * The addon's unknown-model error said for the command line: its first sentence (the name, and the
 * nearest known names) kept, its advice given as options instead of JS calls. `undefined` for any
 * other error.
 */
function unknownModelMessage(message) {
  const known = /^(unknown model .*?) batchtok knows/.exec(message)
  if (!known) return undefined
  return (
    `--model: ${known[1]} batchtok knows the models of tiktoken's table and gpt-tokenizer's, and their dated and fine-tuned names. ` +
    'For another model, name its encoding instead: --encoding o200k_base for current OpenAI models, ' +
    '--encoding cl100k_base for gpt-4 and gpt-3.5-turbo'
  )
}

/**
 * The encoding of `--tiktoken`'s rank file, `--pattern` and `--special-tokens`. Its description
 * (what a checkpoint is matched by) holds all three.
 */
function loadRankFile(options, batchtok) {
  if (options.pattern === undefined) {
    throw new UsageError("--tiktoken needs --pattern, the regex that splits text for its ranks (tiktoken's pat_str; for Llama 3's tokenizer.model, cl100k_base's)")
  }
  let specialTokens = {}
  if (options.specialTokens !== undefined) {
    try {
      specialTokens = JSON.parse(options.specialTokens)
    } catch (error) {
      throw new UsageError(`--special-tokens is not JSON (${error.message}); give an object of each token and its id, e.g. '{"<|end_of_text|>": 128001}'`)
    }
  }
  const contents = readFlagFile('--tiktoken', options.tiktoken)
  const file = path.resolve(options.tiktoken)
  try {
    const tokenizer = batchtok.Tokenizer.fromTiktoken(contents, { pattern: options.pattern, specialTokens, name: `tiktoken:${path.basename(file)}` })
    return { tokenizer, openai: true, description: JSON.stringify({ tiktoken: file, pattern: options.pattern, specialTokens }) }
  } catch (error) {
    throw new UsageError(`--tiktoken ${options.tiktoken}: ${error.message}`)
  }
}

/** The encoding of `--tekken`'s file. Its description (what a checkpoint is matched by) is the file. */
function loadTekken(source, batchtok) {
  const contents = readFlagFile('--tekken', source)
  const file = path.resolve(source)
  try {
    const tokenizer = batchtok.Tokenizer.fromTekken(contents, { name: `tekken:${path.basename(file)}` })
    return { tokenizer, openai: true, description: JSON.stringify({ tekken: file }) }
  } catch (error) {
    throw new UsageError(`--tekken ${source}: ${error.message}`)
  }
}

/** The bytes of the file `source` that `flag` names; a usage error naming both if it cannot be read. */
function readFlagFile(flag, source) {
  try {
    return fs.readFileSync(source)
  } catch (error) {
    throw new UsageError(`${flag}: cannot read ${source}: ${error.message}`)
  }
}

/**
 * The id `--append-eos` appends: that of `--eos-token`'s token, else of the tokenizer's own
 * end-of-sequence token (`<|endoftext|>` for the OpenAI encodings, `</s>` for a tekken file, a
 * model's from its config), else of `<|endoftext|>` for an encoding of tiktoken's kind. The token
 * is looked up as the model's config names it (transformers' `eos_token_id`): a SentencePiece
 * model's `</s>` is a token of its vocabulary that no text encodes to, where it is not an added
 * token (InternLM2's). Only a token not in the vocabulary is encoded, and must be one token.
 */
function eosIdOf({ tokenizer, openai }, eosToken) {
  let token = eosToken ?? tokenizer.specialTokens?.eos
  if (token == null && openai) token = OPENAI_EOS
  if (token == null) throw new UsageError(`--append-eos: ${noEosAdvice(tokenizer)}`)
  const id = tokenizer.tokenToId(token)
  if (id !== null) return id
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

/** Special tokens listed in the advice where a tokenizer names no end-of-sequence token. */
const LISTED_SPECIALS = 8

/**
 * What to do where a tokenizer.json names no end-of-sequence token (its model folder's
 * tokenizer_config.json would): give one with --eos-token, picked from its special tokens, an
 * end-of-text or separator one where it has one.
 */
function noEosAdvice(tokenizer) {
  const specials = tokenizer.addedTokens.filter((token) => token.special).map((token) => token.content)
  const example = specials.find((token) => /eos|end|<\/s>|sep/i.test(token)) ?? specials[0] ?? '</s>'
  const more = specials.length > LISTED_SPECIALS ? ` and ${specials.length - LISTED_SPECIALS} more` : ''
  const listed = specials.length === 0 ? 'it has no special token' : `its special tokens: ${specials.slice(0, LISTED_SPECIALS).join(' ')}${more}`
  return (
    'this tokenizer names no end-of-sequence token (a tokenizer.json alone does not; its model folder, with tokenizer_config.json, does); ' +
    `give it with --eos-token, e.g. --eos-token "${example}" (${listed})`
  )
}

module.exports = { loadTokenizer, eosIdOf }
