//! The `rayon` and `rayon-min-len` policies: one rayon task per item, as Hugging Face
//! tokenizers' `encode_batch` does, on dedicated rayon pools (never the global one) cached per
//! thread count. Each rayon leaf job (a contiguous run of items one thread folds in order) gets
//! its own sink and becomes one chunk, so the output contract is the same as the chunked one.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use rayon::prelude::*;

use super::batch::{Batch, BatchError, Chunk, FailureSlot, Outcome, panic_message};
use super::cancel::CancelToken;
use super::config::Policy;
use super::fold::{OutcomeFold, WorkerOutput};
use super::serial;
use super::stats::{BatchStats, nanos};

/// `with_min_len` of the `rayon-min-len` policy: `ceil(n / (threads * 4)).clamp(1, 8)`.
pub fn min_len(len: usize, threads: usize) -> usize {
    len.div_ceil(threads.max(1) * 4).clamp(1, 8)
}

/// The rayon pool with `threads` threads, built on first use and kept for the process.
fn cached_pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(pool) = pools.get(&threads) {
        return Some(pool.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("batchtok-rayon{threads}-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    pools.insert(threads, pool.clone());
    Some(pool)
}

/// One rayon leaf job's output.
struct Leaf<B: Batch> {
    sink: Option<B::Sink>,
    start: Option<B::Mark>,
    items: std::ops::Range<usize>,
    bytes: usize,
    thread: usize,
    began: Option<Instant>,
    busy_ns: u64,
}

impl<B: Batch> Leaf<B> {
    fn new() -> Self {
        Leaf {
            sink: None,
            start: None,
            items: 0..0,
            bytes: 0,
            thread: 0,
            began: None,
            busy_ns: 0,
        }
    }
}

/// Runs `batch` with one rayon task per item on a `threads`-thread pool; `with_min_len` as in
/// [`min_len`] when `bounded` (the `rayon-min-len` policy). Falls back to the serial policy, and
/// says so in the stats, if the pool cannot be built.
pub(super) fn run<B: Batch>(
    threads: usize,
    bounded: bool,
    batch: &B,
    cancel: &CancelToken,
) -> Outcome<B> {
    let Some(pool) = cached_pool(threads) else {
        return serial::run(batch, cancel);
    };
    let len = batch.len();
    let min = if bounded { min_len(len, threads) } else { 1 };
    let stop = AtomicBool::new(false);
    let cancelled = AtomicBool::new(false);
    let failure = FailureSlot::default();

    let item = |mut leaf: Leaf<B>, i: usize| -> Leaf<B> {
        // Relaxed: a stale read only runs one more item; results are joined by `install`.
        if stop.load(Ordering::Relaxed) {
            return leaf;
        }
        if cancel.is_cancelled() {
            cancelled.store(true, Ordering::Relaxed);
            stop.store(true, Ordering::Relaxed);
            return leaf;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if leaf.sink.is_none() {
                let sink = batch.new_sink();
                leaf.start = Some(batch.mark(&sink));
                leaf.sink = Some(sink);
                leaf.items = i..i;
                leaf.thread = rayon::current_thread_index().unwrap_or(0);
                leaf.began = Some(Instant::now());
            }
            debug_assert_eq!(leaf.items.end, i, "a rayon leaf folds consecutive items");
            leaf.bytes = leaf.bytes.saturating_add(batch.cost(i));
            let sink = leaf.sink.as_mut().expect("created above");
            batch
                .process(i, sink)
                .map_err(|error| BatchError::ItemFailed { index: i, error })
        }));
        match outcome {
            Ok(Ok(())) => leaf.items.end = i + 1,
            Ok(Err(error)) => {
                failure.record(error);
                stop.store(true, Ordering::Relaxed);
            }
            Err(payload) => {
                failure.record(BatchError::Panicked {
                    index: i,
                    message: panic_message(&*payload),
                });
                stop.store(true, Ordering::Relaxed);
            }
        }
        leaf
    };
    let finish = |mut leaf: Leaf<B>| {
        if let Some(sink) = &mut leaf.sink {
            batch.seal_sink(sink);
        }
        if let Some(began) = leaf.began {
            leaf.busy_ns = nanos(began.elapsed());
        }
        leaf
    };
    let leaves: Vec<Leaf<B>> = pool.install(|| {
        (0..len)
            .into_par_iter()
            .with_min_len(min)
            .fold(Leaf::new, item)
            .map(finish)
            .collect()
    });

    let mut fold = OutcomeFold::new(BatchStats {
        policy: if bounded {
            Policy::RayonMinLen
        } else {
            Policy::Rayon
        },
        ..BatchStats::default()
    });
    for leaf in leaves {
        let (Some(sink), Some(start)) = (leaf.sink, leaf.start) else {
            continue;
        };
        // A leaf that failed on its first item ran a chunk but has none to show.
        let chunks = if leaf.items.is_empty() {
            Vec::new()
        } else {
            let end = batch.mark(&sink);
            vec![Chunk {
                items: leaf.items.clone(),
                sink: 0,
                start,
                end,
            }]
        };
        // A rayon task is one item: a claim per item. The leaves a thread folds are one worker.
        let output = WorkerOutput {
            sink: Some(sink),
            chunks,
            executed: 1,
            claims: leaf.items.len() as u64,
            items: leaf.items.len() as u64,
            bytes: leaf.bytes,
            busy_ns: leaf.busy_ns,
            ..WorkerOutput::new()
        };
        fold.add(leaf.thread.min(threads - 1), output);
    }
    fold.finish(len, failure.take(), cancelled.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::testing::{TestBatch, check_outcome};

    #[test]
    fn min_len_formula() {
        assert_eq!(min_len(0, 2), 1);
        assert_eq!(min_len(10, 2), 2);
        assert_eq!(min_len(16, 2), 2);
        assert_eq!(min_len(17, 2), 3);
        assert_eq!(min_len(10_000, 2), 8);
        assert_eq!(min_len(100, 64), 1);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "rayon's crossbeam-epoch fails Stacked Borrows (upstream); passes with -Zmiri-tree-borrows"
    )]
    fn pools_are_cached_per_thread_count() {
        let a = cached_pool(3).unwrap();
        let b = cached_pool(3).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.current_num_threads(), 3);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "rayon's crossbeam-epoch fails Stacked Borrows (upstream); passes with -Zmiri-tree-borrows"
    )]
    fn leaves_become_chunks() {
        for bounded in [false, true] {
            let batch = TestBatch::new(vec![7; 300]);
            let stats = check_outcome(&batch, run(2, bounded, &batch, &CancelToken::new()));
            assert!(stats.chunks >= 1 && stats.chunks <= 300);
            assert_eq!(stats.claims, 300);
        }
    }
}
