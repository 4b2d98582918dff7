// The addon under test: the package's main entry (the regular build through its loader, with the
// methods written in JavaScript), or the .node file BATCHTOK_ADDON names, given those methods too
// (scripts/test-mimalloc.sh tests a second build this way; NAPI_RS_NATIVE_LIBRARY_PATH would also
// redirect every other napi-rs addon in the process, vitest's bundler included).
if (process.env.BATCHTOK_ADDON) {
  const addon = require(process.env.BATCHTOK_ADDON)
  require('../entry/chat-template.js').defineApplyChatTemplate(addon.Tokenizer)
  module.exports = addon
} else {
  module.exports = require('../entry/index.js')
}
