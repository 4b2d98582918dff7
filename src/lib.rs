#![deny(unsafe_op_in_unsafe_fn)]
//! batchtok: fast batch tokenization for Node.js.
//!
//! Three layers, one direction of dependency: `js` (the napi surface) depends on `batch`, which
//! joins `engine` (the tokenizers, no napi) and `scheduler` (the parallel work queue, plain Rust,
//! generic over the work). Beside them, `snappy` decodes the Snappy pages of the CLI's Parquet
//! input for `js`.

// napi-derive registers the JS exports only outside `cargo test`; there, the code only they call
// looks unused.
#[cfg_attr(test, allow(dead_code))]
mod allocator;
pub mod batch;
pub mod engine;
#[cfg_attr(test, allow(dead_code))]
mod js;
pub mod scheduler;
pub mod snappy;
