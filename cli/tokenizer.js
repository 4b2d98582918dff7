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
    throw new UsageError('name one tokenizer: --encoding o200k_base, --model gpt-4o, or --tokenizer path/to/tokenizer.json (or its folder)')
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
  let file = options.tokenizer
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'tokenizer.json')
  try {
    return { tokenizer: batchtok.Tokenizer.fromFile(file), openai: false, description: path.resolve(file) }
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

/** How long `untilFullEngine` waits at most before encoding with the first engine anyway. */
const FULL_ENGINE_WAIT_MS = 30_000

/**
 * Waits until an OpenAI encoding's release-candidate engine has taken over. `fromEncoding`
 * returns once the rank table is read and builds that engine on a thread of its own; a bulk job
 * that starts at once runs its first batches on the slower rank engine while the build competes
 * for the same cores (measured: 50 MB took 9.7 s started at once, 2.8 s started after the build).
 * The addon has no call that says when the build is done; a batch's `engineLocks` stat is 0
 * while the rank engine encodes and positive once the release-candidate engine does.
 */
async function untilFullEngine(tokenizer, batchtok) {
  const scheduler = new batchtok.Scheduler({ threads: 1, policy: 'serial' })
  const deadline = Date.now() + FULL_ENGINE_WAIT_MS
  while (Date.now() < deadline) {
    await tokenizer.encodeBatch(['plain text'], { scheduler })
    if (scheduler.stats()?.engineLocks !== 0) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

module.exports = { loadTokenizer, eosIdOf, untilFullEngine }
