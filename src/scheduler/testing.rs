//! Test support shared by the modules' tests: an instrumented batch with a sequential
//! reference, output checks, and bounded waits (deadlines only catch hangs; no test asserts on
//! timing).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::BatchOutput;
use super::batch::{Batch, Chunk, ItemError, Outcome, tiles};
use super::config::{MAX_THREADS, Policy};
use super::plan::running_totals;
use super::pool::PUBLISH_OPS;
use super::queue::{HELPER_JOIN_LEAVE_OPS, STOP_FLAG_OPS, WAKE_OPS, claim_cursors};
use super::sleep::WAKE_FANOUT;
use super::stats::BatchStats;

/// Per-participant bound on non-claim shared atomics (join, leave, publish, wake, stop) of a
/// batch dealt to `cursors` claim cursors: a helper's join and leave, its empty claims (at most
/// one per cursor), `WAKE_FANOUT` wake-ups and a stop (the flag, one store per cursor); the
/// owner's publication (`PUBLISH_OPS`) is cheaper than a join and leave. 20 for one cursor (every
/// pool of up to `ONE_CURSOR_MAX_THREADS` threads), 30 for the 6 cursors of 192 threads. See
/// `queue.rs` and `pool.rs`.
pub const fn ops_per_participant(cursors: usize) -> u64 {
    HELPER_JOIN_LEAVE_OPS + WAKE_FANOUT as u64 * WAKE_OPS + STOP_FLAG_OPS + 2 * cursors as u64
}
/// [`ops_per_participant`] of the largest pool a configuration allows.
pub const MAX_OPS_PER_PARTICIPANT: u64 = ops_per_participant(claim_cursors(MAX_THREADS));
const _: () = assert!(
    ops_per_participant(1) == 20,
    "one cursor: the bound invariant 5 states"
);
const _: () = assert!(
    PUBLISH_OPS <= HELPER_JOIN_LEAVE_OPS,
    "the owner's share must fit too"
);

/// `normal` test cases natively, `miri` under Miri (which is ~1000x slower).
pub fn case_count(normal: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { normal }
}

/// The policies end-to-end tests cover. Under Miri the rayon policies are left out: rayon's
/// deques use crossbeam-epoch, whose intrusive list fails Stacked Borrows inside rayon itself
/// (an upstream issue that our code cannot affect).
pub fn tested_policies() -> Vec<Policy> {
    if cfg!(miri) {
        vec![Policy::Serial, Policy::Chunked]
    } else {
        Policy::ALL.to_vec()
    }
}

/// Random costs: mostly small, some zero, about 1 % heavy (100 KB – 3 MB).
pub fn random_costs(rng: &mut fastrand::Rng, n: usize) -> Vec<usize> {
    (0..n)
        .map(|_| match rng.u32(0..100) {
            0 => rng.usize(100_000..3_000_000),
            1..=9 => 0,
            _ => rng.usize(1..600),
        })
        .collect()
}

/// Polls `condition` until it holds; panics after a generous deadline (a hang, not slowness).
pub fn wait_for(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_micros(200));
    }
}

type Hook<'h> = Box<dyn Fn(usize) -> Result<(), String> + Sync + 'h>;

/// A batch whose item `i` appends `i % 3` values `(i << 8) | k` to a `Vec<u64>` sink, counting
/// how often each item ran and how many are running; `hook` runs first and may block, fail or
/// panic. It offers the running totals of its costs, as batches of texts do, unless built
/// [`without_cumulative_costs`](TestBatch::without_cumulative_costs).
pub struct TestBatch<'h> {
    pub costs: Vec<usize>,
    /// Running totals of `costs`, or `None` to make the planner ask item by item.
    ends: Option<Vec<usize>>,
    runs: Vec<AtomicU32>,
    started: AtomicUsize,
    in_flight: AtomicUsize,
    /// Sinks made, and `seal_sink` calls.
    sinks_made: AtomicUsize,
    sinks_sealed: AtomicUsize,
    hook: Hook<'h>,
}

struct Decrement<'a>(&'a AtomicUsize);

impl Drop for Decrement<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst); // SeqCst: test bookkeeping, clarity over speed
    }
}

impl<'h> TestBatch<'h> {
    pub fn new(costs: Vec<usize>) -> Self {
        let runs = costs.iter().map(|_| AtomicU32::new(0)).collect();
        let ends = running_totals(&costs);
        TestBatch {
            costs,
            ends: Some(ends),
            runs,
            started: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            sinks_made: AtomicUsize::new(0),
            sinks_sealed: AtomicUsize::new(0),
            hook: Box::new(|_| Ok(())),
        }
    }

    /// The same batch, but the planner must call `cost` for every item (the fallback path).
    pub fn without_cumulative_costs(mut self) -> Self {
        self.ends = None;
        self
    }

    pub fn with_hook(mut self, hook: impl Fn(usize) -> Result<(), String> + Sync + 'h) -> Self {
        self.hook = Box::new(hook);
        self
    }

    /// Items whose processing started so far.
    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst) // SeqCst: test bookkeeping
    }

    /// Items being processed right now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst) // SeqCst: test bookkeeping
    }

    /// The sequential reference: all outputs in input order.
    pub fn expected(&self) -> Vec<u64> {
        (0..self.costs.len())
            .flat_map(|i| (0..i % 3).map(move |k| ((i as u64) << 8) | k as u64))
            .collect()
    }
}

impl Batch for TestBatch<'_> {
    type Sink = Vec<u64>;
    type Mark = usize;

    fn len(&self) -> usize {
        self.costs.len()
    }

    fn cost(&self, index: usize) -> usize {
        self.costs[index]
    }

    fn cumulative_costs(&self) -> Option<&[usize]> {
        self.ends.as_deref()
    }

    fn new_sink(&self) -> Vec<u64> {
        self.sinks_made.fetch_add(1, Ordering::SeqCst); // SeqCst: test bookkeeping
        Vec::new()
    }

    fn mark(&self, sink: &Vec<u64>) -> usize {
        sink.len()
    }

    fn process(&self, index: usize, sink: &mut Vec<u64>) -> Result<(), ItemError> {
        // SeqCst: test bookkeeping, clarity over speed.
        self.started.fetch_add(1, Ordering::SeqCst);
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let _running = Decrement(&self.in_flight);
        self.runs[index].fetch_add(1, Ordering::SeqCst);
        (self.hook)(index)?;
        sink.extend((0..index % 3).map(|k| ((index as u64) << 8) | k as u64));
        Ok(())
    }

    fn seal_sink(&self, _sink: &mut Vec<u64>) {
        self.sinks_sealed.fetch_add(1, Ordering::SeqCst); // SeqCst: test bookkeeping
    }
}

/// Asserts a successful, complete, exactly-once, in-order result; returns the stats.
pub fn check_parts(
    batch: &TestBatch<'_>,
    sinks: &[Vec<u64>],
    chunks: &[Chunk<usize>],
    stats: &BatchStats,
) {
    let n = batch.len();
    assert_eq!(
        batch.in_flight(),
        0,
        "an item is still running after run returned"
    );
    assert!(
        tiles(chunks, n),
        "chunks do not tile 0..{n}: {:?}",
        chunks.iter().map(|c| c.items.clone()).collect::<Vec<_>>()
    );
    let mut output = Vec::new();
    for chunk in chunks {
        output.extend_from_slice(&sinks[chunk.sink][chunk.start..chunk.end]);
    }
    assert!(
        output == batch.expected(),
        "assembled output differs from the sequential reference"
    );
    for (i, runs) in batch.runs.iter().enumerate() {
        assert_eq!(
            runs.load(Ordering::SeqCst),
            1,
            "item {i} ran a wrong number of times"
        );
    }
    assert_eq!(
        batch.sinks_sealed.load(Ordering::SeqCst),
        batch.sinks_made.load(Ordering::SeqCst),
        "every sink of a successful run is sealed once"
    );
    assert_eq!(stats.items, n);
    assert_eq!(stats.bytes, batch.costs.iter().sum::<usize>());
    assert_eq!(stats.per_worker_busy_ns.len(), stats.threads_used);
    if stats.policy == Policy::Chunked {
        check_atomics(stats);
    }
}

/// The chunked policy's bounds on claims and shared atomics (invariant 5), which hold for a
/// failed or cancelled batch too: `claims <= chunks + G · participants` and
/// `shared_atomic_ops <= chunks + ops_per_participant(G) · participants`, G the batch's cursors.
pub fn check_atomics(stats: &BatchStats) {
    // An empty batch reports 0 cursors: it never claimed.
    let cursors = stats.cursors.max(1);
    let per_participant = ops_per_participant(cursors);
    assert!(per_participant <= MAX_OPS_PER_PARTICIPANT);
    let bound = stats.chunks as u64 + per_participant * stats.participants as u64;
    assert!(
        stats.shared_atomic_ops <= bound,
        "{} shared atomics > bound {bound}",
        stats.shared_atomic_ops
    );
    assert!(stats.shared_atomic_ops >= stats.claims as u64);
    assert!(
        stats.claims <= stats.chunks + cursors * stats.participants,
        "{} claims > {} chunks + {cursors} per participant ({})",
        stats.claims,
        stats.chunks,
        stats.participants
    );
}

/// [`check_parts`] for an internal policy outcome.
pub fn check_outcome(batch: &TestBatch<'_>, outcome: Outcome<TestBatch<'_>>) -> BatchStats {
    let (sinks, chunks) = outcome
        .result
        .unwrap_or_else(|e| panic!("batch failed: {e}"));
    check_parts(batch, &sinks, &chunks, &outcome.stats);
    outcome.stats
}

/// [`check_parts`] for a public `run` result.
pub fn check_output(batch: &TestBatch<'_>, output: &BatchOutput<TestBatch<'_>>) {
    check_parts(batch, &output.sinks, &output.chunks, &output.stats);
}
