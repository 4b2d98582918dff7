//! A batch of texts and the work of tokenizing it, in the shape the scheduler runs.
//!
//! This is the glue between the two plain-Rust layers: it knows the engine's `Tokenizer` and the
//! scheduler's `Batch` trait, and nothing of napi.

mod assemble;
mod count;
mod encode;
mod texts;

pub use count::{CountBatch, count_all};
pub use encode::{EncodeBatch, Encoded, encode_all};
pub use texts::{Texts, Utf8BatchError};

use crate::scheduler::BatchError;

/// Why a batch produced no result.
#[derive(Debug)]
pub enum Failure {
    /// The scheduler stopped: cancelled, or an item failed or panicked.
    Batch(BatchError),
    /// The batch's ids do not fit the `u32` offsets of a `BatchEncoding`.
    TooLarge { ids: usize },
}

impl From<BatchError> for Failure {
    fn from(error: BatchError) -> Self {
        Failure::Batch(error)
    }
}
