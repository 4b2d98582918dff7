//! The napi surface: argument checks, conversion to and from JS, and nothing else.
//!
//! One file per exported class (`tokenizer.rs`, `batch_encoding.rs`, `stream_decoder.rs`,
//! `scheduler.rs`; `pretrained.rs` adds the `Tokenizer`'s model-folder loaders and vocabulary) and for
//! the module functions (`models.rs`: encodings and models;
//! `allocator.rs`: the allocator; `snappy.rs`: the Snappy pages of the CLI's Parquet input). Beside them: the readers of arguments and options
//! (`args.rs`, `options.rs`; `chat_completion.rs` for `countChatCompletionTokens`'s request), the reading of texts (`texts.rs`), the calls behind the batch
//! methods and their async tasks (`tasks.rs`; `lines.rs` for `encodeLines`, with the object it
//! returns and the errors that name a line; `model_inputs.rs` for `encodeForModel`, with the
//! object it returns, and `model_input_options.rs` for its own options), the listener on a caller's `AbortSignal`
//! (`signal.rs`), the mapping of failures to JS error classes (`errors.rs`), what a panic prints
//! (`panics.rs`), and `raw.rs`, the only file with `unsafe`: every direct Node-API call, behind a
//! safe function.
//!
//! Dependencies run one way: `raw` ← `errors` ← `args` ← `texts`, `signal`, `scheduler` ←
//! `options` ← `tasks` ← `tokenizer`.

mod allocator;
mod args;
mod batch_encoding;
mod chat_completion;
mod errors;
mod model_input_options;
mod model_inputs;
mod models;
mod options;
mod panics;
#[cfg(feature = "testing")]
mod profile;
mod raw;
mod scheduler;
mod signal;
mod snappy;
mod stream_decoder;
mod tasks;
#[cfg(feature = "testing")]
mod testing;
mod texts;
mod tokenizer;
// After `tokenizer`: their `#[napi] impl`s extend the class declared there, which napi-derive must
// have seen first.
mod lines;
mod pretrained;
mod vocabulary;

use napi::Env;
use napi::bindgen_prelude::Object;
use napi_derive::napi;

/// Runs when Node loads the module, before JS sees its `exports`.
#[napi(module_exports)]
pub fn on_load(env: Env, exports: Object) -> napi::Result<()> {
    panics::report_only_unexpected_panics();
    batch_encoding::register_inspect(env, exports)
}
