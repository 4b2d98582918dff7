//! The serial policy: one chunk, one sink, a plain loop on the calling thread.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use super::batch::{Batch, BatchError, Chunk, Outcome, panic_message};
use super::cancel::CancelToken;
use super::config::Policy;
use super::fold::{OutcomeFold, WorkerOutput};
use super::stats::{BatchStats, nanos};

/// Runs every item in order on the calling thread. With a single chunk there is only one claim,
/// so the cancel token is checked before every item instead (one relaxed load each).
pub(super) fn run<B: Batch>(batch: &B, cancel: &CancelToken) -> Outcome<B> {
    let started = Instant::now();
    let len = batch.len();
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
                .map_err(|error| BatchError::ItemFailed { index: i, error })?;
        }
        let end = batch.mark(&sink);
        batch.seal_sink(&mut sink);
        Ok((sink, start, end))
    }));
    // The one chunk is one claim, run by the calling thread (cancellation, checked per item, is
    // reported as the failure). A failed batch keeps no sink and counts no item.
    let mut output = WorkerOutput {
        executed: 1,
        claims: 1,
        busy_ns: nanos(started.elapsed()),
        ..WorkerOutput::new()
    };
    let failure = match outcome {
        Ok(Ok((sink, start, end))) => {
            output.sink = Some(sink);
            output.items = len as u64;
            // An empty batch has no chunk: chunks never cover an empty range.
            if len > 0 {
                output.chunks.push(Chunk {
                    items: 0..len,
                    sink: 0,
                    start,
                    end,
                });
            }
            None
        }
        Ok(Err(error)) => Some(error),
        Err(payload) => Some(BatchError::Panicked {
            index: current,
            message: panic_message(&*payload),
        }),
    };
    output.bytes = bytes;
    let mut fold = OutcomeFold::new(BatchStats {
        policy: Policy::Serial,
        inline: true,
        ..BatchStats::default()
    });
    fold.add(0, output);
    fold.finish(len, failure, false)
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
                error: "bad 42".into()
            }
        );
    }
}
