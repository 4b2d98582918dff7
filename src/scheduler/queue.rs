//! One chunked batch in flight: its plan, the claim cursors, failure and cancellation state, and
//! the loop every participant (the submitting thread or a pool helper) runs over it (P2 claim).

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use super::batch::{Batch, BatchError, Chunk, FailureSlot, panic_message};
use super::cancel::CancelToken;
use super::fold::WorkerOutput;
use super::plan::Plan;
use super::sleep::DrainLatch;
use super::stats::nanos;

/// Shared atomics a helper's join and leave cost, for `shared_atomic_ops`: registry lock and
/// unlock (2), latch enter (1), latch leave (1), owner-handle clone and drop (2), result-list
/// lock and unlock (2).
pub(super) const HELPER_JOIN_LEAVE_OPS: u64 = 8;
/// Shared atomics of one wake-up: the sleeper's flag store and the unpark.
pub(super) const WAKE_OPS: u64 = 2;
/// Shared atomics of stopping a batch besides the cursor stores (one per cursor): the stop flag,
/// or the failure lock and unlock.
pub(super) const STOP_FLAG_OPS: u64 = 2;

/// Pools of up to this many threads claim every batch through one cursor: there a single line
/// serves every claim with room to spare, and the end of a batch balances best when every
/// participant takes the next chunk of one guided order. The model's comparison of cursor
/// counts is in `benchmark/results/scheduler.md#what-ifs`.
pub const ONE_CURSOR_MAX_THREADS: usize = 64;

/// Threads per claim cursor in larger pools. The end of a batch is claimed in `min`-sized
/// chunks, so one cursor's line carries `threads / t_min` claims per second, and one line
/// transfer per claim: past some hundred-odd short-item claimants that is more than a line can
/// serve, while 32 claimants leave it room to spare
/// (`benchmark/results/scheduler.md#what-ifs`).
pub const THREADS_PER_CURSOR: usize = 32;

/// Claim cursors of a published batch run by `threads` threads (P2): 1 up to
/// [`ONE_CURSOR_MAX_THREADS`], else one per [`THREADS_PER_CURSOR`] threads.
pub const fn claim_cursors(threads: usize) -> usize {
    if threads <= ONE_CURSOR_MAX_THREADS {
        1
    } else {
        threads.div_ceil(THREADS_PER_CURSOR)
    }
}

/// The type-independent part of a batch that the pool's registry inspects: the control line,
/// and the claim cursors beyond the first.
///
/// The plan's chunks are dealt to G = [`claim_cursors`] cursors: cursor g hands out chunks g,
/// g + G, g + 2G, …, so each cursor keeps the plan's order (heavy items first, then guided
/// chunks shrinking) and holds about a G-th of every part of it. A claim touches one cursor;
/// cursor 0 is on the control line, every other one on a line of its own.
///
/// A join (under the registry lock) reads the helper count and the two bounds, then enters the
/// latch, all on the control line; it reads cursor 0 there too, and the other cursors only if
/// the chunks counted so far do not already exceed the helper cap (see [`remaining_up_to`]
/// (Self::remaining_up_to)), which in a large batch they do until its end. So a join fetches one
/// line of the batch, and its enter finds it already in its cache. Claims on cursor 0 pay for
/// sharing the line with at most one extra transfer per join or leave, O(threads) per batch
/// (`benchmark/results/scheduler.md#what-ifs`).
pub(super) struct JobControl {
    line: CachePadded<ControlLine>,
}

/// The fields of [`JobControl`], kept within one 64-byte line (a test checks the size; the
/// `CachePadded` alignment keeps it from straddling two).
struct ControlLine {
    /// Cursor 0: claims made through it so far (its next chunk is `claims · G`, see
    /// [`JobControl`]); the only atomic of this line written per claim.
    cursor: AtomicUsize,
    /// Helpers inside the batch (P6).
    latch: DrainLatch,
    plan_len: usize,
    max_helpers: usize,
    /// Cursors 1 to G − 1, a line each, written only by claims through them and by a stop.
    /// Empty (no allocation) for a batch with one cursor.
    more_cursors: Box<[CachePadded<AtomicUsize>]>,
}

/// A participant's view of a batch's cursors, taken once per participation so that a claim
/// reads no line but its cursor's (the control line holds the slice's address).
#[derive(Clone, Copy)]
struct Cursors<'a> {
    first: &'a AtomicUsize,
    more: &'a [CachePadded<AtomicUsize>],
}

impl<'a> Cursors<'a> {
    /// G.
    #[inline]
    fn count(&self) -> usize {
        self.more.len() + 1
    }

    #[inline]
    fn get(&self, g: usize) -> &'a AtomicUsize {
        match g {
            0 => self.first,
            _ => &self.more[g - 1],
        }
    }

    /// One claim through cursor `g`: the plan index of the chunk it hands out, which is past the
    /// plan once that cursor's chunks are all handed out.
    #[inline]
    fn claim(&self, g: usize) -> usize {
        // Relaxed: the RMW's total order alone makes each index go to one claimant; the
        // plan is immutable and outputs are published by the drain latch (P6).
        let claims = self.get(g).fetch_add(1, Ordering::Relaxed);
        claims.saturating_mul(self.count()).saturating_add(g)
    }
}

impl JobControl {
    /// The control of a batch of `plan_len` chunks, dealt to `cursors` cursors, that allows
    /// `max_helpers` helpers besides its owner.
    fn new(plan_len: usize, cursors: usize, max_helpers: usize) -> Self {
        assert!(cursors >= 1, "a batch needs a cursor");
        JobControl {
            line: CachePadded::new(ControlLine {
                cursor: AtomicUsize::new(0),
                latch: DrainLatch::new(),
                plan_len,
                max_helpers,
                more_cursors: (1..cursors)
                    .map(|_| CachePadded::new(AtomicUsize::new(0)))
                    .collect(),
            }),
        }
    }

    fn cursors(&self) -> Cursors<'_> {
        Cursors {
            first: &self.line.cursor,
            more: &self.line.more_cursors,
        }
    }

    /// Plan chunks not handed out yet (none once the batch stopped), summed over the cursors:
    /// what a join reads, without its early stop (tests compare the two).
    #[cfg(test)]
    pub fn remaining(&self) -> usize {
        self.remaining_up_to(usize::MAX)
    }

    /// [`remaining`](Self::remaining) if it is at most `limit`, else some count above `limit`:
    /// sums the cursors in order, from cursor 0 on the control line, and stops once the sum
    /// exceeds `limit`, so a join into a large batch reads no other cursor's line.
    fn remaining_up_to(&self, limit: usize) -> usize {
        let cursors = self.cursors();
        let count = cursors.count();
        let plan_len = self.line.plan_len;
        let mut sum = 0usize;
        for g in 0..count {
            // Cursor g deals chunks g, g + G, …: ceil((plan_len − g) / G) of them.
            let dealt = plan_len.saturating_sub(g).div_ceil(count);
            sum += dealt.saturating_sub(cursors.get(g).load(Ordering::Relaxed));
            if sum > limit {
                break;
            }
        }
        sum
    }

    /// Helpers inside the batch (P6).
    pub fn latch(&self) -> &DrainLatch {
        &self.line.latch
    }

    /// `Some` if another helper may join: chunks are left and the helper cap is not reached.
    /// Reads the latch once and the cursors once each, in order, only until the chunks counted
    /// exceed the helper cap: past that, the cap alone sets `wanted` (chunks left ≥ cap + 1
    /// makes `remaining − (helpers + 1) ≥ cap − helpers`), so the result is the one a full sum
    /// gives. Exact only under the registry lock (joins happen under it); concurrent claims and
    /// leaves can only make the true figures smaller, which costs at most a wake-up that finds
    /// nothing.
    pub fn joinable(&self) -> Option<Joinable> {
        let remaining = self.remaining_up_to(self.line.max_helpers);
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
    /// moves past `joined_generation` (a newer batch was published: rotate, P3). `place` is the
    /// helper count when it entered, itself included: its home cursor is `place mod G`. Records
    /// the helper's results in the batch. Never unwinds.
    fn help(&self, generation: &AtomicU64, joined_generation: u64, place: usize, wakeups: u64);
}

/// One participation in a batch (P2): what it produced so far, and where it claims next.
pub(super) struct Participation<B: Batch> {
    /// Its output. The sink is created on the first chunk, so a helper that found nothing left
    /// adds none; chunks are in execution order, their `sink` fields set by the fold.
    pub output: WorkerOutput<B>,
    /// The cursor this participation claims from next: its home until that comes back empty.
    /// Kept across calls of `claim_until`, so a second call goes on where the first left.
    cursor: usize,
    /// Cursors that came back empty to this participation; each does so once, and stays empty.
    empty_cursors: usize,
}

impl<B: Batch> Participation<B> {
    /// Nothing claimed yet, from cursor 0.
    pub fn new() -> Self {
        Participation {
            output: WorkerOutput::new(),
            cursor: 0,
            empty_cursors: 0,
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
    helper_results: Mutex<Vec<Participation<B>>>,
}

impl<'a, B: Batch> Job<'a, B> {
    /// A batch owned by the calling thread, its plan dealt to `cursors` claim cursors
    /// ([`claim_cursors`]), allowing `max_helpers` helpers besides it.
    pub fn new(
        batch: &'a B,
        cancel: &'a CancelToken,
        plan: &'a Plan,
        cursors: usize,
        max_helpers: usize,
    ) -> Self {
        Job {
            control: JobControl::new(plan.chunks.len(), cursors, max_helpers),
            batch,
            cancel,
            plan,
            cancelled: AtomicBool::new(false),
            failure: FailureSlot::default(),
            helper_results: Mutex::new(Vec::new()),
        }
    }

    /// Plan chunks not handed out yet (none once the batch stopped).
    #[cfg(test)]
    pub fn remaining(&self) -> usize {
        self.control.remaining()
    }

    /// Claim cursors the plan is dealt to.
    pub fn cursors(&self) -> usize {
        self.control.cursors().count()
    }

    /// The P2 claim loop, starting from cursor `home mod G`. `rotation` is `None` for the owner
    /// (home 0), which stays until the end; a helper passes the pool generation and the value
    /// it joined at.
    pub fn participate(
        &self,
        home: usize,
        rotation: Option<(&AtomicU64, u64)>,
    ) -> Participation<B> {
        let started = Instant::now();
        let mut result = Participation::new();
        result.cursor = home % self.cursors();
        self.claim_until(&mut result, || {
            // Relaxed: a stale value only delays the rotation by one chunk.
            rotation
                .is_some_and(|(generation, joined)| generation.load(Ordering::Relaxed) != joined)
        });
        result.output.busy_ns = nanos(started.elapsed());
        result
    }

    /// Claims and runs chunks into `result` until the plan is exhausted, the batch stops, or
    /// `leave()` says so after a chunk. Claims go to the participation's cursor (at first its
    /// home; the owner's is 0) until it comes back empty, then to the next cursor, in turn, until
    /// each has come back empty once: at most G empty claims per participation, however many
    /// calls it makes.
    pub fn claim_until(&self, result: &mut Participation<B>, leave: impl Fn() -> bool) {
        let cursors = self.control.cursors();
        if result.empty_cursors == cursors.count() {
            return;
        }
        loop {
            if self.cancel.is_cancelled() {
                self.cancelled.store(true, Ordering::Relaxed);
                self.stop(result);
                break;
            }
            result.output.claims += 1;
            result.output.atomic_ops += 1;
            let Some(items) = self.plan.chunks.get(cursors.claim(result.cursor)) else {
                // Every chunk of this cursor is handed out (or the batch stopped); a cursor that
                // came back empty stays empty, so each is tried once.
                result.empty_cursors += 1;
                if result.empty_cursors == cursors.count() {
                    break;
                }
                result.cursor = (result.cursor + 1) % cursors.count();
                continue;
            };
            result.output.executed += 1;
            if !self.run_chunk(items.clone(), result) || leave() {
                break;
            }
        }
    }

    /// Runs one chunk into the participant's sink; false if an item failed or panicked.
    fn run_chunk(&self, items: Range<usize>, result: &mut Participation<B>) -> bool {
        let batch = self.batch;
        let mut current = items.start;
        let sink_slot = &mut result.output.sink;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let sink = sink_slot.get_or_insert_with(|| batch.new_sink());
            let start = batch.mark(sink);
            for i in items.clone() {
                current = i;
                batch
                    .process(i, sink)
                    .map_err(|error| BatchError::ItemFailed { index: i, error })?;
            }
            Ok((start, batch.mark(sink)))
        }));
        let error = match outcome {
            Ok(Ok((start, end))) => {
                result.output.items += items.len() as u64;
                match result.output.chunks.last_mut() {
                    // Consecutive chunks of one participant merge: nothing was appended to its
                    // sink between the previous end mark and this start mark.
                    Some(last) if last.items.end == items.start => {
                        last.items.end = items.end;
                        last.end = end;
                    }
                    _ => result.output.chunks.push(Chunk {
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

    /// Stops handing out chunks: every later claim, through any cursor, lands past the end of
    /// the plan (cursor g's next index becomes `plan_len · G + g`).
    fn stop(&self, result: &mut Participation<B>) {
        let cursors = self.control.cursors();
        result.output.atomic_ops += STOP_FLAG_OPS + cursors.count() as u64;
        let plan_len = self.control.line.plan_len;
        for g in 0..cursors.count() {
            cursors.get(g).store(plan_len, Ordering::Relaxed);
        }
    }

    /// After every helper left: the helpers' results, the failure if any, and whether a claim
    /// observed the cancel token.
    pub fn finish(&self) -> (Vec<Participation<B>>, Option<BatchError>, bool) {
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

    fn help(&self, generation: &AtomicU64, joined_generation: u64, place: usize, wakeups: u64) {
        let mut result = self.participate(place, Some((generation, joined_generation)));
        if let Some(sink) = &mut result.output.sink {
            self.batch.seal_sink(sink);
        }
        result.output.atomic_ops += HELPER_JOIN_LEAVE_OPS + wakeups * WAKE_OPS;
        result.output.wakeups = wakeups;
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
        let job = Job::new(&batch, &cancel, &plan, 1, 0);
        let result = job.participate(0, None);
        assert_eq!(result.output.executed as usize, plan.chunks.len());
        assert_eq!(result.output.claims as usize, plan.chunks.len() + 1);
        assert_eq!(result.output.chunks.len(), 1, "consecutive chunks merge");
        assert_eq!(result.output.chunks[0].items, 0..40);
        assert_eq!(result.output.sink.unwrap(), batch.expected());
        assert!(job.finish().1.is_none());
    }

    #[test]
    fn failure_stops_the_cursor() {
        let batch = TestBatch::new(vec![50; 40])
            .with_hook(|i| if i == 7 { Err("seven".into()) } else { Ok(()) });
        let plan = small_plan(&batch);
        let cancel = CancelToken::new();
        let job = Job::new(&batch, &cancel, &plan, 1, 0);
        let result = job.participate(0, None);
        // Weight 114 per item, 300 per chunk: three items per chunk, item 7 is in the third.
        assert_eq!(
            result.output.executed, 3,
            "stops in the chunk holding item 7"
        );
        assert!(job.control.joinable().is_none());
        let (_, failure, cancelled) = job.finish();
        assert_eq!(
            failure,
            Some(BatchError::ItemFailed {
                index: 7,
                error: "seven".into()
            })
        );
        assert!(!cancelled);
    }

    #[test]
    fn small_pools_keep_one_cursor() {
        for threads in 1..=ONE_CURSOR_MAX_THREADS {
            assert_eq!(claim_cursors(threads), 1, "{threads}");
        }
        assert_eq!(claim_cursors(ONE_CURSOR_MAX_THREADS + 1), 3);
        assert_eq!(claim_cursors(192), 6);
        assert_eq!(claim_cursors(crate::scheduler::MAX_THREADS), 32);
    }

    #[test]
    fn cursors_deal_the_plan_in_turn_and_each_comes_back_empty_once() {
        let batch = TestBatch::new(vec![50; 40]);
        let plan = small_plan(&batch);
        let len = plan.chunks.len();
        assert!(len > 6);
        for cursors in 1..=4 {
            for home in 0..cursors {
                let cancel = CancelToken::new();
                let job = Job::new(&batch, &cancel, &plan, cursors, 0);
                assert_eq!(job.remaining(), len);
                let result = job.participate(home, None);
                assert_eq!(result.output.executed as usize, len);
                assert_eq!(
                    result.output.claims as usize,
                    len + cursors,
                    "one empty claim per cursor"
                );
                assert_eq!(job.remaining(), 0);
                // The first chunk is the home cursor's first, then every G-th.
                let mut order: Vec<usize> =
                    result.output.chunks.iter().map(|c| c.items.start).collect();
                assert_eq!(order[0], plan.chunks[home].start);
                order.sort_unstable();
                let merged: Vec<usize> =
                    result.output.chunks.iter().map(|c| c.items.len()).collect();
                assert_eq!(merged.iter().sum::<usize>(), 40);
                assert_eq!(order.len(), if cursors == 1 { 1 } else { len });
            }
        }
    }

    #[test]
    fn an_owner_claiming_in_two_loops_tries_each_cursor_once() {
        // The first loop leaves after a chunk of cursor 1, past an empty cursor 0; the second
        // goes on from cursor 1, not from cursor 0 again.
        let batch = TestBatch::new(vec![50; 40]);
        let plan = small_plan(&batch);
        let len = plan.chunks.len();
        let cursors = 3;
        let cancel = CancelToken::new();
        let job = Job::new(&batch, &cancel, &plan, cursors, 0);
        let mut owner = Participation::new();
        let first = plan.chunks.len().div_ceil(cursors);
        let claimed = std::cell::Cell::new(0);
        job.claim_until(&mut owner, || {
            claimed.set(claimed.get() + 1);
            claimed.get() == first + 1
        });
        assert_eq!(
            (owner.output.executed as usize, owner.empty_cursors),
            (first + 1, 1)
        );
        job.claim_until(&mut owner, || false);
        assert_eq!(owner.output.executed as usize, len);
        assert_eq!(owner.output.claims as usize, len + cursors);
        // Nothing left, and no further claim.
        job.claim_until(&mut owner, || false);
        assert_eq!(owner.output.claims as usize, len + cursors);
    }

    #[test]
    fn joinable_reads_cursors_until_the_cap_is_covered_with_the_full_sum_result() {
        let batch = TestBatch::new(vec![50; 40]);
        let plan = small_plan(&batch);
        let len = plan.chunks.len();
        for cursors in 1..=4 {
            for max_helpers in [0, 1, 2, 5, 100] {
                let control = JobControl::new(len, cursors, max_helpers);
                let c = control.cursors();
                let mut rng = fastrand::Rng::with_seed(cursors as u64 * 101 + max_helpers as u64);
                for _ in 0..50 {
                    for g in 0..cursors {
                        c.get(g).store(rng.usize(0..=len), Ordering::Relaxed);
                    }
                    let full = control.remaining();
                    let read = control.remaining_up_to(max_helpers);
                    assert!(read == full || (read > max_helpers && full > max_helpers));
                    let helpers = control.latch().helpers();
                    let expected = (full > 0 && helpers < max_helpers)
                        .then(|| (max_helpers - helpers).min(full.saturating_sub(helpers + 1)));
                    assert_eq!(control.joinable().map(|j| j.wanted), expected);
                }
            }
        }
    }

    #[test]
    fn failure_stops_every_cursor() {
        let batch = TestBatch::new(vec![50; 40])
            .with_hook(|i| if i == 7 { Err("seven".into()) } else { Ok(()) });
        let plan = small_plan(&batch);
        let cancel = CancelToken::new();
        let job = Job::new(&batch, &cancel, &plan, 3, 2);
        // Home 2 deals chunks 2, 5, …: item 7 is in chunk 2 (three items per chunk).
        let result = job.participate(2, None);
        assert_eq!(result.output.executed, 1);
        assert_eq!(job.remaining(), 0);
        assert!(job.control.joinable().is_none());
        // Another participant finds every cursor empty: one empty claim each.
        let late = job.participate(0, None);
        assert_eq!((late.output.claims, late.output.executed), (3, 0));
        assert!(job.finish().1.is_some());
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
        let job = Job::new(&batch, &cancel, &plan, 1, 1);
        let result = job.participate(0, None);
        assert_eq!((result.output.claims, result.output.executed), (0, 0));
        assert!(job.finish().2);
    }
}
