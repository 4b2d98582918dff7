//! A batch of texts and the work of tokenizing it, in the shape the scheduler runs.
//!
//! This is the glue between the two plain-Rust layers: it knows the engine's `Tokenizer` and the
//! scheduler's `Batch` trait, and nothing of napi. A batch whose text reaches the tokenizer's
//! `engine_wait_bytes` waits for its fastest engine before it starts (`engine/engine_wait.rs`).

mod assemble;
mod count;
mod encode;
mod jsonl;
mod lines;
mod model_inputs;
mod texts;

pub use count::{CountBatch, count_all};
pub use encode::{EncodeBatch, Encoded, encode_all};
pub use jsonl::RecordError;
pub use lines::{LineError, LineFormat, LinesEncoded, LinesFailure, encode_lines};
pub use model_inputs::{Inputs, model_inputs_all};
pub use texts::{Texts, TextsWriter, Utf8BatchError};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{AllowedSpecial, Tokenizer};
    use crate::scheduler::{CancelToken, Policy, Scheduler, SchedulerConfig};

    /// Texts of every size from empty to a few KB, in several scripts.
    fn sample_texts(rng: &mut fastrand::Rng, n: usize) -> Vec<String> {
        let words = [
            "the",
            "tokenizer",
            "日本語",
            "Ünïcödé",
            " ",
            "\n",
            "12345",
            "🙂",
            "don't",
        ];
        (0..n)
            .map(|_| {
                let len = match rng.u32(0..10) {
                    0 => 0,
                    1 => rng.usize(200..800),
                    _ => rng.usize(1..30),
                };
                (0..len).map(|_| words[rng.usize(0..words.len())]).collect()
            })
            .collect()
    }

    fn texts_of(items: &[String]) -> Texts {
        let mut texts = Texts::default();
        items.iter().for_each(|item| texts.push(item));
        texts
    }

    #[test]
    fn every_policy_gives_each_texts_own_ids_and_counts_in_input_order() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let items = sample_texts(&mut fastrand::Rng::with_seed(0x7a27), 3000);
        let texts = texts_of(&items);
        let alone: Vec<Vec<u32>> = items
            .iter()
            .map(|item| tokenizer.encode(item, &mode).unwrap().as_slice().to_vec())
            .collect();
        for policy in Policy::ALL {
            for threads in [1, 2, 5] {
                let scheduler = Scheduler::new(SchedulerConfig {
                    policy,
                    threads,
                    ..SchedulerConfig::default()
                })
                .unwrap();
                let cancel = CancelToken::new();
                let encoded = encode_all(&scheduler, &tokenizer, &texts, &mode, &cancel).unwrap();
                let counts = count_all(&scheduler, &tokenizer, &texts, &mode, &cancel).unwrap();
                assert_eq!(
                    encoded.offsets.len(),
                    items.len() + 1,
                    "{policy} x{threads}"
                );
                for (i, ids) in alone.iter().enumerate() {
                    let (start, end) =
                        (encoded.offsets[i] as usize, encoded.offsets[i + 1] as usize);
                    assert_eq!(
                        &encoded.ids[start..end],
                        ids.as_slice(),
                        "{policy} x{threads}: text {i}"
                    );
                    assert_eq!(
                        counts[i] as usize,
                        ids.len(),
                        "{policy} x{threads}: text {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_cancelled_batch_stops() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let texts = texts_of(&sample_texts(&mut fastrand::Rng::with_seed(3), 500));
        let scheduler = Scheduler::new(SchedulerConfig::default()).unwrap();
        let cancel = CancelToken::new();
        cancel.cancel();
        let result = encode_all(&scheduler, &tokenizer, &texts, &mode, &cancel);
        assert!(matches!(
            result,
            Err(Failure::Batch(crate::scheduler::BatchError::Cancelled))
        ));
    }
}
