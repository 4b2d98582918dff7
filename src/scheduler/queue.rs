//! One chunked batch in flight: its plan, the claim cursor, failure and cancellation state, and
//! the loop every participant (the submitting thread or a pool helper) runs over it (P2 claim).

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use super::batch::{Batch, BatchError, Chunk, FailureSlot, panic_message};
use super::cancel::CancelToken;
use super::plan::Plan;
use super::sleep::DrainLatch;
use super::stats::nanos;

/// Shared atomics a helper's join and leave cost, for `shared_atomic_ops`: registry lock and
/// unlock (2), latch enter (1), latch leave (1), owner-handle clone and drop (2), result-list
/// lock and unlock (2).
pub(super) const HELPER_JOIN_LEAVE_OPS: u64 = 8;
/// Shared atomics of one wake-up: the sleeper's flag store and the unpark.
pub(super) const WAKE_OPS: u64 = 2;
/// Shared atomics of stopping a batch: the stop flag (or failure lock and unlock) and the
/// cursor store.
pub(super) const STOP_OPS: u64 = 3;

/// The type-independent part of a batch that the pool's registry inspects: one cache line.
///
/// A claim touches only the cursor; a join (under the registry lock) reads the cursor, the
/// helper count and the two bounds, then enters the latch. With all of them on one line a join
/// fetches one line of the batch instead of two (the cursor's and the latch's), and its enter
/// finds that line already in its cache. Claims pay for it with at most one extra transfer per
/// join or leave, O(threads) per batch (model and figures: `benchmark/results/scheduler.md`).
pub(super) struct JobControl {
    line: CachePadded<ControlLine>,
}

/// The fields of [`JobControl`], kept within one 64-byte line (a test checks the size; the
/// `CachePadded` alignment keeps it from straddling two).
struct ControlLine {
    /// Index of the next plan chunk to hand out; the only atomic written per claim.
    cursor: AtomicUsize,
    /// Helpers inside the batch (P6).
    latch: DrainLatch,
    plan_len: usize,
    max_helpers: usize,
}

impl JobControl {
    /// Plan chunks not handed out yet (none once the batch stopped).
    pub fn remaining(&self) -> usize {
        self.line
            .plan_len
            .saturating_sub(self.line.cursor.load(Ordering::Relaxed))
    }

    /// Helpers inside the batch (P6).
    pub fn latch(&self) -> &DrainLatch {
        &self.line.latch
    }

    /// `Some` if another helper may join: chunks are left and the helper cap is not reached.
    /// Reads the cursor and the latch once each. Exact only under the registry lock (joins
    /// happen under it); concurrent claims and leaves can only make the true figures smaller,
    /// which costs at most a wake-up that finds nothing.
    pub fn joinable(&self) -> Option<Joinable> {
        let remaining = self.remaining();
        let helpers = self.line.latch.helpers();
        let max_helpers = self.line.max_helpers;
        if remaining == 0 || helpers >= max_helpers {
            return None;
        }
        let by_cap = max_helpers - helpers;
        let by_chunks = remaining.saturating_sub(helpers + 1);
        Some(Joinable {
            helpers,
            wanted: by_cap.min(by_chunks),
        })
    }
}

/// A batch another helper may join, as [`JobControl::joinable`] saw it.
#[derive(Clone, Copy)]
pub(super) struct Joinable {
    /// Helpers inside.
    pub helpers: usize,
    /// How many more helpers are worth waking for this batch (P5): as many as the helper cap
    /// allows, but never more than the chunks left beyond one per current participant (helpers
    /// plus the owner), so a small batch wakes few workers.
    pub wanted: usize,
}

/// A batch as the pool sees it: lifetime- and type-erased behind a pointer (see `pool.rs`).
pub(super) trait ErasedJob: Sync {
    /// The registry's view of the batch.
    fn control(&self) -> &JobControl;
    /// Runs chunks as a helper until the plan is exhausted, the batch stops, or `generation`
    /// moves past `joined_generation` (a newer batch was published: rotate, P3). Records the
    /// helper's results in the batch. Never unwinds.
    fn help(&self, generation: &AtomicU64, joined_generation: u64, wakeups: u64);
}

/// What one participation in a batch produced.
pub(super) struct WorkerResult<B: Batch> {
    /// Created lazily on the first chunk, so a helper that found nothing left adds no sink.
    pub sink: Option<B::Sink>,
    /// Chunks in execution order; `sink` fields are filled in by the owner when assembling.
    pub chunks: Vec<Chunk<B::Mark>>,
    pub busy_ns: u64,
    pub claims: u64,
    pub executed: u64,
    pub items: u64,
    pub atomic_ops: u64,
    pub wakeups: u64,
}

impl<B: Batch> WorkerResult<B> {
    /// Nothing claimed yet.
    pub fn new() -> Self {
        WorkerResult {
            sink: None,
            chunks: Vec::new(),
            busy_ns: 0,
            claims: 0,
            executed: 0,
            items: 0,
            atomic_ops: 0,
            wakeups: 0,
        }
    }
}

/// One chunked batch in flight. Lives on the stack of the `run` call that owns it.
pub(super) struct Job<'a, B: Batch> {
    control: JobControl,
    batch: &'a B,
    cancel: &'a CancelToken,
    plan: &'a Plan,
    cancelled: AtomicBool,
    failure: FailureSlot,
    /// Helpers' results, pushed once per participation.
    helper_results: Mutex<Vec<WorkerResult<B>>>,
}

impl<'a, B: Batch> Job<'a, B> {
    /// A batch owned by the calling thread, allowing `max_helpers` helpers besides it.
    pub fn new(batch: &'a B, cancel: &'a CancelToken, plan: &'a Plan, max_helpers: usize) -> Self {
        Job {
            control: JobControl {
                line: CachePadded::new(ControlLine {
                    cursor: AtomicUsize::new(0),
                    latch: DrainLatch::new(),
                    plan_len: plan.chunks.len(),
                    max_helpers,
                }),
            },
            batch,
            cancel,
            plan,
            cancelled: AtomicBool::new(false),
            failure: FailureSlot::default(),
            helper_results: Mutex::new(Vec::new()),
        }
    }

    /// Plan chunks not handed out yet (none once the batch stopped).
    pub fn remaining(&self) -> usize {
        self.control.remaining()
    }

    /// The P2 claim loop. `rotation` is `None` for the owner, which stays until the end; a
    /// helper passes the pool generation and the value it joined at.
    pub fn participate(&self, rotation: Option<(&AtomicU64, u64)>) -> WorkerResult<B> {
        let started = Instant::now();
        let mut result = WorkerResult::new();
        self.claim_until(&mut result, || {
            // Relaxed: a stale value only delays the rotation by one chunk.
            rotation
                .is_some_and(|(generation, joined)| generation.load(Ordering::Relaxed) != joined)
        });
        result.busy_ns = nanos(started.elapsed());
        result
    }

    /// Claims and runs chunks into `result` until the plan is exhausted, the batch stops, or
    /// `leave()` says so after a chunk.
    pub fn claim_until(&self, result: &mut WorkerResult<B>, leave: impl Fn() -> bool) {
        loop {
            if self.cancel.is_cancelled() {
                self.cancelled.store(true, Ordering::Relaxed);
                self.stop(result);
                break;
            }
            result.claims += 1;
            result.atomic_ops += 1;
            // Relaxed: the RMW's total order alone makes each index go to one claimant; the
            // plan is immutable and outputs are published by the drain latch (P6).
            let k = self.control.line.cursor.fetch_add(1, Ordering::Relaxed);
            let Some(items) = self.plan.chunks.get(k) else {
                break;
            };
            result.executed += 1;
            if !self.run_chunk(items.clone(), result) || leave() {
                break;
            }
        }
    }

    /// Runs one chunk into the participant's sink; false if an item failed or panicked.
    fn run_chunk(&self, items: Range<usize>, result: &mut WorkerResult<B>) -> bool {
        let batch = self.batch;
        let mut current = items.start;
        let sink_slot = &mut result.sink;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let sink = sink_slot.get_or_insert_with(|| batch.new_sink());
            let start = batch.mark(sink);
            for i in items.clone() {
                current = i;
                batch
                    .process(i, sink)
                    .map_err(|message| BatchError::ItemFailed { index: i, message })?;
            }
            Ok((start, batch.mark(sink)))
        }));
        let error = match outcome {
            Ok(Ok((start, end))) => {
                result.items += items.len() as u64;
                match result.chunks.last_mut() {
                    // Consecutive chunks of one participant merge: nothing was appended to its
                    // sink between the previous end mark and this start mark.
                    Some(last) if last.items.end == items.start => {
                        last.items.end = items.end;
                        last.end = end;
                    }
                    _ => result.chunks.push(Chunk {
                        items,
                        sink: 0,
                        start,
                        end,
                    }),
                }
                return true;
            }
            Ok(Err(error)) => error,
            Err(payload) => BatchError::Panicked {
                index: current,
                message: panic_message(&*payload),
            },
        };
        self.failure.record(error);
        self.stop(result);
        false
    }

    /// Stops handing out chunks: every later claim lands past the end of the plan.
    fn stop(&self, result: &mut WorkerResult<B>) {
        result.atomic_ops += STOP_OPS;
        let line = &self.control.line;
        line.cursor.store(line.plan_len, Ordering::Relaxed);
    }

    /// After every helper left: the helpers' results, the failure if any, and whether a claim
    /// observed the cancel token.
    pub fn finish(&self) -> (Vec<WorkerResult<B>>, Option<BatchError>, bool) {
        let results = std::mem::take(
            &mut *self
                .helper_results
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        (
            results,
            self.failure.take(),
            self.cancelled.load(Ordering::Relaxed),
        )
    }
}

impl<B: Batch> ErasedJob for Job<'_, B> {
    fn control(&self) -> &JobControl {
        &self.control
    }

    fn help(&self, generation: &AtomicU64, joined_generation: u64, wakeups: u64) {
        let mut result = self.participate(Some((generation, joined_generation)));
        result.atomic_ops += HELPER_JOIN_LEAVE_OPS + wakeups * WAKE_OPS;
        result.wakeups = wakeups;
        self.helper_results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plan::{PlanParams, plan};
    use crate::scheduler::testing::TestBatch;

    fn small_plan(batch: &TestBatch) -> Plan {
        let p = PlanParams {
            threads: 2,
            min_chunk: 300,
            max_chunk: 300,
            divisor: 2,
        };
        plan(batch.costs.len(), |i| batch.costs[i], &p)
    }

    #[test]
    fn owner_alone_drains_the_plan_and_merges_chunks() {
        let batch = TestBatch::new(vec![50; 40]);
        let plan = small_plan(&batch);
        assert!(plan.chunks.len() > 1);
        let cancel = CancelToken::new();
        let job = Job::new(&batch, &cancel, &plan, 0);
        let result = job.participate(None);
        assert_eq!(result.executed as usize, plan.chunks.len());
        assert_eq!(result.claims as usize, plan.chunks.len() + 1);
        assert_eq!(result.chunks.len(), 1, "consecutive chunks merge");
        assert_eq!(result.chunks[0].items, 0..40);
        assert_eq!(result.sink.unwrap(), batch.expected());
        assert!(job.finish().1.is_none());
    }

    #[test]
    fn failure_stops_the_cursor() {
        let batch = TestBatch::new(vec![50; 40])
            .with_hook(|i| if i == 7 { Err("seven".into()) } else { Ok(()) });
        let plan = small_plan(&batch);
        let cancel = CancelToken::new();
        let job = Job::new(&batch, &cancel, &plan, 0);
        let result = job.participate(None);
        // Weight 114 per item, 300 per chunk: three items per chunk, item 7 is in the third.
        assert_eq!(result.executed, 3, "stops in the chunk holding item 7");
        assert!(job.control.joinable().is_none());
        let (_, failure, cancelled) = job.finish();
        assert_eq!(
            failure,
            Some(BatchError::ItemFailed {
                index: 7,
                message: "seven".into()
            })
        );
        assert!(!cancelled);
    }

    #[test]
    fn a_batch_control_fits_one_cache_line() {
        // A join reads and writes only this line of the batch (see `JobControl`).
        assert!(std::mem::size_of::<ControlLine>() <= 64);
    }

    #[test]
    fn cancelled_token_stops_before_claiming() {
        let batch = TestBatch::new(vec![50; 40]);
        let plan = small_plan(&batch);
        let cancel = CancelToken::new();
        cancel.cancel();
        let job = Job::new(&batch, &cancel, &plan, 1);
        let result = job.participate(None);
        assert_eq!((result.claims, result.executed), (0, 0));
        assert!(job.finish().2);
    }
}
