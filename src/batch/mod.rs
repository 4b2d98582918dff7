//! A batch of texts and the work of tokenizing it, in the shape the scheduler runs.
//!
//! This is the glue between the two plain-Rust layers: it knows the engine's `Tokenizer` and the
//! scheduler's `Batch` trait, and nothing of napi.

mod assemble;
mod count;
mod encode;
mod handover;
mod texts;

pub use count::{CountBatch, count_all, count_parts};
pub use encode::{EncodeBatch, Encoded, encode_all, encode_parts};
pub use handover::{PartReceiver, PartSender, handover};
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
    use crate::scheduler::{CancelToken, Gate, Policy, Scheduler, SchedulerConfig};

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
    fn a_batch_in_parts_gives_the_ids_and_counts_of_the_whole() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let mut rng = fastrand::Rng::with_seed(0x7a27);
        let items = sample_texts(&mut rng, 3000);
        let whole = texts_of(&items);
        for policy in Policy::ALL {
            for threads in [1, 2, 5] {
                let scheduler = Scheduler::new(SchedulerConfig {
                    policy,
                    threads,
                    ..SchedulerConfig::default()
                })
                .unwrap();
                let cancel = CancelToken::new();
                let expected = encode_all(&scheduler, &tokenizer, &whole, &mode, &cancel).unwrap();
                let expected_counts =
                    count_all(&scheduler, &tokenizer, &whole, &mode, &cancel).unwrap();
                // Cut points at random, empty parts included.
                let mut cuts: Vec<usize> =
                    (0..rng.usize(1..8)).map(|_| rng.usize(0..=3000)).collect();
                cuts.extend([0, 0, 3000]);
                cuts.sort_unstable();
                let parts: Vec<Texts> = cuts
                    .windows(2)
                    .map(|w| texts_of(&items[w[0]..w[1]]))
                    .collect();
                let encoded =
                    encode_parts(&scheduler, &tokenizer, &parts, &mode, &cancel, None).unwrap();
                assert_eq!(encoded.offsets, expected.offsets, "{policy} x{threads}");
                assert_eq!(encoded.ids, expected.ids, "{policy} x{threads}");
                let counts =
                    count_parts(&scheduler, &tokenizer, &parts, &mode, &cancel, None).unwrap();
                assert_eq!(counts, expected_counts, "{policy} x{threads}");
                // Parts kept to the calling thread while their producer works.
                let reading = Gate::new();
                let encoded = encode_parts(
                    &scheduler,
                    &tokenizer,
                    &parts,
                    &mode,
                    &cancel,
                    Some(&reading),
                )
                .unwrap();
                assert_eq!(encoded.ids, expected.ids, "{policy} x{threads}, gated");
                assert_eq!(
                    encoded.offsets, expected.offsets,
                    "{policy} x{threads}, gated"
                );
                let stats = scheduler.last_stats().unwrap();
                assert_eq!((stats.items, stats.parts), (3000, parts.len()));
            }
        }
    }

    #[test]
    fn a_cancelled_batch_in_parts_stops() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let items = sample_texts(&mut fastrand::Rng::with_seed(3), 500);
        let parts = [texts_of(&items[..200]), texts_of(&items[200..])];
        let scheduler = Scheduler::new(SchedulerConfig::default()).unwrap();
        let cancel = CancelToken::new();
        cancel.cancel();
        let result = encode_parts(&scheduler, &tokenizer, &parts, &mode, &cancel, None);
        assert!(matches!(
            result,
            Err(Failure::Batch(crate::scheduler::BatchError::Cancelled))
        ));
    }
}
