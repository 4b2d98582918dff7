'use strict'
// The drop-in modules' errors in their peer's words. Code written against js-tiktoken, tiktoken or
// gpt-tokenizer may match on the messages those throw (their own test suites do), so where batchtok
// refuses what the peer refuses, the drop-in's message starts with the peer's, word for word, and
// goes on with what batchtok says: where the token is and how to let it through, which names it
// knows.

const { encodingForModel, encodings } = require('./index.js')

/**
 * An `Error` saying `message`, for batchtok's `error`: the original is its `cause`, and a
 * disallowed special token's `code`, `token` and `index` stay on it.
 */
function reworded(message, error) {
  const worded = new Error(message, { cause: error })
  for (const key of ['code', 'token', 'index']) if (error[key] !== undefined) worded[key] = error[key]
  return worded
}

/**
 * `call()`; where it throws because a text holds a disallowed special token, throws instead an
 * error saying `say(token, index)` (`index`: where the token starts in the text).
 */
function sayingDisallowed(call, say) {
  try {
    return call()
  } catch (error) {
    if (error?.code !== 'ERR_DISALLOWED_SPECIAL_TOKEN') throw error
    throw reworded(say(error.token, error.index), error)
  }
}

/**
 * `load()`, where `encoding` names the encoding it loads; where that is a string that names no
 * embedded encoding, throws instead an error saying `lead` and then batchtok's message.
 */
function knownEncoding(encoding, lead, load) {
  try {
    return load()
  } catch (error) {
    if (typeof encoding !== 'string' || encodings().includes(encoding)) throw error
    throw reworded(lead(error.message), error)
  }
}

/**
 * `load()`, where `model` names the model it loads for; where that is a string that tiktoken's and
 * gpt-tokenizer's tables do not hold, throws instead an error saying `lead` and then batchtok's
 * message.
 */
function knownModel(model, lead, load) {
  if (typeof model === 'string') {
    try {
      encodingForModel(model)
    } catch (error) {
      throw reworded(lead(error.message), error)
    }
  }
  return load()
}

/** `message` with its first letter a capital: batchtok's `unknown model …` as js-tiktoken's
 * `Unknown model` begins. */
const capitalized = (message) => message.charAt(0).toUpperCase() + message.slice(1)

module.exports = { capitalized, knownEncoding, knownModel, sayingDisallowed }
