//! The serial policy: one chunk, one sink, a plain loop on the calling thread.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use super::batch::{Batch, BatchError, Chunk, Outcome, panic_message};
use super::cancel::CancelToken;
use super::config::Policy;
use super::stats::{BatchStats, nanos};

/// Runs every item in order on the calling thread. With a single chunk there is only one claim,
/// so the cancel token is checked before every item instead (one relaxed load each).
pub(super) fn run<B: Batch>(batch: &B, cancel: &CancelToken) -> Outcome<B> {
    let started = Instant::now();
    let len = batch.len();
    let mut stats = BatchStats {
        policy: Policy::Serial,
        inline: true,
        claims: 1,
        ..BatchStats::default()
    };
    let mut current = 0;
    let mut bytes = 0usize;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut sink = batch.new_sink();
        let start = batch.mark(&sink);
        for i in 0..len {
            if cancel.is_cancelled() {
                return Err(BatchError::Cancelled);
            }
            current = i;
            bytes = bytes.saturating_add(batch.cost(i));
            batch
                .process(i, &mut sink)
                .map_err(|message| BatchError::ItemFailed { index: i, message })?;
        }
        let end = batch.mark(&sink);
        Ok((
            sink,
            Chunk {
                items: 0..len,
                sink: 0,
                start,
                end,
            },
        ))
    }));
    let result = match outcome {
        Ok(Ok((sink, chunk))) => {
            stats.items = len;
            // An empty batch has no chunk: chunks never cover an empty range.
            let chunks = if len == 0 { Vec::new() } else { vec![chunk] };
            Ok((vec![sink], chunks))
        }
        Ok(Err(error)) => Err(error),
        Err(payload) => Err(BatchError::Panicked {
            index: current,
            message: panic_message(&*payload),
        }),
    };
    stats.bytes = bytes;
    stats.chunks = 1;
    stats.threads_used = 1;
    stats.participants = 1;
    stats.per_worker_busy_ns = vec![nanos(started.elapsed())];
    stats.imbalance = 1.0;
    Outcome { result, stats }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::testing::{TestBatch, check_outcome};

    #[test]
    fn one_chunk_one_sink() {
        let batch = TestBatch::new(vec![5; 100]);
        let stats = check_outcome(&batch, run(&batch, &CancelToken::new()));
        assert_eq!((stats.chunks, stats.claims, stats.threads_used), (1, 1, 1));
        assert_eq!(stats.bytes, 500);
    }

    #[test]
    fn errors_name_the_item() {
        let batch = TestBatch::new(vec![5; 100]).with_hook(|i| {
            if i >= 42 {
                Err(format!("bad {i}"))
            } else {
                Ok(())
            }
        });
        let err = run(&batch, &CancelToken::new()).result.err().unwrap();
        assert_eq!(
            err,
            BatchError::ItemFailed {
                index: 42,
                message: "bad 42".into()
            }
        );
    }
}
