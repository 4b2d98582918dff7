//! The napi surface: argument checks, conversion to and from JS, and nothing else.
//!
//! One file per exported class (`tokenizer.rs`, `batch_encoding.rs`, `scheduler.rs`); the options
//! objects (`options.rs`), the reading of JS strings (`texts.rs`), the async tasks (`tasks.rs`), their
//! listener on the caller's `AbortSignal` (`signal.rs`) and the mapping of failures to JS error
//! classes (`errors.rs`) beside them.

mod allocator;
mod batch_encoding;
mod errors;
mod options;
mod profile;
mod scheduler;
mod signal;
mod tasks;
mod testing;
mod texts;
mod tokenizer;
