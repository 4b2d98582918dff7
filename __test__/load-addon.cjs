// The addon under test: the regular build through its loader, or the .node file BATCHTOK_ADDON
// names (scripts/test-mimalloc.sh tests a second build this way; NAPI_RS_NATIVE_LIBRARY_PATH
// would also redirect every other napi-rs addon in the process, vitest's bundler included).
module.exports = process.env.BATCHTOK_ADDON ? require(process.env.BATCHTOK_ADDON) : require('../index.js')
