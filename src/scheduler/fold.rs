//! The one place a policy's per-worker outputs become a batch's [`Outcome`]: the sinks and the
//! sorted chunk index, the stats every policy reports (`stats.rs` says what each field means
//! under each policy), and the choice between the output and the error. Every policy feeds it,
//! so the stats mean the same thing whichever policy ran.

use super::batch::{Batch, BatchError, Chunk, Outcome, tiles};
use super::stats::{BatchStats, imbalance};

/// What one worker contributed to a batch: one participation in a chunked batch, the serial
/// loop, or one rayon leaf job.
pub(super) struct WorkerOutput<B: Batch> {
    /// The worker's sink, if it made one (it does on its first item).
    pub sink: Option<B::Sink>,
    /// The chunks it ran into `sink`, in any order; their `sink` field is set by the fold.
    pub chunks: Vec<Chunk<B::Mark>>,
    /// Chunks it ran, failed ones included; a worker that ran one is a thread used.
    pub executed: u64,
    /// Claim attempts.
    pub claims: u64,
    /// Items it processed successfully.
    pub items: u64,
    /// Estimated cost of the items it ran, where the policy sums it per worker (rayon, serial).
    pub bytes: usize,
    /// Time it spent on the batch.
    pub busy_ns: u64,
    /// Workers it woke.
    pub wakeups: u64,
    /// Shared atomic operations it issued.
    pub atomic_ops: u64,
}

impl<B: Batch> WorkerOutput<B> {
    /// A worker that did nothing yet.
    pub fn new() -> Self {
        WorkerOutput {
            sink: None,
            chunks: Vec::new(),
            executed: 0,
            claims: 0,
            items: 0,
            bytes: 0,
            busy_ns: 0,
            wakeups: 0,
            atomic_ops: 0,
        }
    }
}

/// A batch's outcome as its workers' outputs are folded in.
pub(super) struct OutcomeFold<B: Batch> {
    stats: BatchStats,
    sinks: Vec<B::Sink>,
    chunks: Vec<Chunk<B::Mark>>,
    /// Per worker slot: `None` until a worker in that slot contributes, then whether it ran a
    /// chunk and its busy time, summed over its outputs.
    workers: Vec<Option<(bool, u64)>>,
}

impl<B: Batch> OutcomeFold<B> {
    /// A fold starting from `stats`, which holds what the policy knows of the whole batch
    /// (policy, total bytes, cursors, whether it ran inline, its own atomic operations).
    pub fn new(stats: BatchStats) -> Self {
        OutcomeFold {
            stats,
            sinks: Vec::new(),
            chunks: Vec::new(),
            workers: Vec::new(),
        }
    }

    /// Adds `output`, produced in worker slot `slot`. Outputs that share a slot are one worker
    /// (a rayon thread folds several leaf jobs): their busy times add up. Slots are reported in
    /// order, so the submitting thread's slot is 0.
    pub fn add(&mut self, slot: usize, output: WorkerOutput<B>) {
        let WorkerOutput {
            sink,
            chunks,
            executed,
            claims,
            items,
            bytes,
            busy_ns,
            wakeups,
            atomic_ops,
        } = output;
        let stats = &mut self.stats;
        stats.claims += claims as usize;
        stats.chunks += executed as usize;
        stats.items += items as usize;
        stats.bytes = stats.bytes.saturating_add(bytes);
        stats.wakeups += wakeups as usize;
        stats.shared_atomic_ops += atomic_ops;
        if self.workers.len() <= slot {
            self.workers.resize(slot + 1, None);
        }
        let (ran, busy) = self.workers[slot].get_or_insert((false, 0));
        *ran |= executed > 0;
        *busy += busy_ns;
        if let Some(sink) = sink {
            let index = self.sinks.len();
            self.sinks.push(sink);
            self.chunks
                .extend(chunks.into_iter().map(|c| Chunk { sink: index, ..c }));
        }
    }

    /// The outcome of a batch of `len` items: `failure` if a worker recorded one, else
    /// [`BatchError::Cancelled`] if a worker saw the cancel token, else the sinks and the chunks
    /// sorted by start. The stats describe the batch in every case.
    pub fn finish(self, len: usize, failure: Option<BatchError>, cancelled: bool) -> Outcome<B> {
        let OutcomeFold {
            mut stats,
            sinks,
            mut chunks,
            workers,
        } = self;
        let workers = workers.into_iter().flatten();
        stats.participants = workers.clone().count();
        stats.per_worker_busy_ns = workers
            .filter(|&(ran, _)| ran)
            .map(|(_, busy)| busy)
            .collect();
        stats.threads_used = stats.per_worker_busy_ns.len();
        stats.imbalance = imbalance(&stats.per_worker_busy_ns);
        let result = if let Some(error) = failure {
            Err(error)
        } else if cancelled {
            Err(BatchError::Cancelled)
        } else {
            chunks.sort_unstable_by_key(|c| c.items.start);
            debug_assert!(
                tiles(&chunks, len),
                "{} output must tile 0..{len}",
                stats.policy
            );
            Ok((sinks, chunks))
        };
        Outcome { result, stats }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::config::Policy;
    use crate::scheduler::testing::TestBatch;

    fn output(
        sink: Option<Vec<u64>>,
        chunks: &[(usize, usize)],
        busy_ns: u64,
    ) -> WorkerOutput<TestBatch<'static>> {
        WorkerOutput {
            sink,
            chunks: chunks
                .iter()
                .map(|&(start, end)| Chunk {
                    items: start..end,
                    sink: usize::MAX,
                    start: 0,
                    end: 0,
                })
                .collect(),
            executed: chunks.len() as u64,
            claims: chunks.len() as u64 + 1,
            items: chunks
                .iter()
                .map(|&(start, end)| (end - start) as u64)
                .sum(),
            busy_ns,
            ..WorkerOutput::new()
        }
    }

    #[test]
    fn sinks_are_numbered_and_chunks_sorted() {
        let mut fold = OutcomeFold::<TestBatch<'static>>::new(BatchStats::default());
        fold.add(0, output(Some(vec![]), &[(4, 6), (0, 2)], 30));
        fold.add(1, output(None, &[], 0));
        fold.add(2, output(Some(vec![]), &[(2, 4)], 10));
        let outcome = fold.finish(6, None, false);
        let stats = outcome.stats;
        assert_eq!((stats.chunks, stats.claims, stats.items), (3, 6, 6));
        assert_eq!((stats.participants, stats.threads_used), (3, 2));
        assert_eq!(stats.per_worker_busy_ns, vec![30, 10]);
        assert_eq!(stats.imbalance, 1.5);
        let (sinks, chunks) = outcome.result.unwrap();
        assert_eq!(sinks.len(), 2);
        let order: Vec<_> = chunks.iter().map(|c| (c.items.clone(), c.sink)).collect();
        assert_eq!(order, vec![(0..2, 0), (2..4, 1), (4..6, 0)]);
    }

    #[test]
    fn outputs_of_one_slot_are_one_worker() {
        let mut fold = OutcomeFold::<TestBatch<'static>>::new(BatchStats::default());
        fold.add(1, output(Some(vec![]), &[(0, 1)], 5));
        fold.add(1, output(Some(vec![]), &[(1, 2)], 7));
        fold.add(3, output(Some(vec![]), &[(2, 3)], 4));
        let stats = fold.finish(3, None, false).stats;
        assert_eq!(stats.per_worker_busy_ns, vec![12, 4]);
        assert_eq!((stats.participants, stats.threads_used), (2, 2));
    }

    #[test]
    fn failure_wins_over_cancellation_and_output() {
        let failed = || BatchError::ItemFailed {
            index: 1,
            error: "x".into(),
        };
        let start = || {
            let mut fold = OutcomeFold::<TestBatch<'static>>::new(BatchStats {
                policy: Policy::Rayon,
                ..BatchStats::default()
            });
            fold.add(0, output(Some(vec![]), &[(0, 1)], 1));
            fold
        };
        let outcome = start().finish(2, Some(failed()), true);
        assert_eq!(outcome.result.err(), Some(failed()));
        assert_eq!(outcome.stats.items, 1);
        let outcome = start().finish(2, None, true);
        assert_eq!(outcome.result.err(), Some(BatchError::Cancelled));
    }
}
