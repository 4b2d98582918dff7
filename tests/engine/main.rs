//! The engine against independent oracles and hostile input: one test binary.
//!
//! - [`differential_fuzz`]: generated hostile text, batchtok's ids against `tiktoken-rs` and the
//!   stable `tokenizers` crate.
//! - [`parse_fuzz`]: mutated tokenizer.json files and id lists, which must give `Ok` or `Err`,
//!   never a panic or a hang.
//! - [`oracle_openai`]: every OpenAI encoding against `tiktoken-rs` over the real corpora.
//!
//! One binary rather than one per file: each test binary links the whole dependency graph with
//! the release profile's LTO, which is most of the test build's time.
//!
//! Run one part with its module path as the filter, for example
//! `cargo test --release --test engine differential_fuzz::`.

mod differential_fuzz;
mod fuzz;
mod oracle_openai;
mod parse_fuzz;
