//! The predicted cases (the measured workloads scaled to a work per worker and a core count)
//! and the what-ifs the tables compare against the code's choices.

use batchtok::scheduler::claim_cursors;

use crate::measure::{MeasuredWorkload, plan_ns};
use crate::model::chunked::{ChunkedRun, Ramp, Reads, simulate_chunked};
use crate::model::{Items, Machine};

/// Serial work per worker in the predictions: 1 ms, the smallest batch worth spreading over
/// every core, and ten times that.
pub const WORK_PER_WORKER_NS: [f64; 2] = [1e6, 1e7];
/// Core counts of the predictions.
pub const PREDICT_CORES: [usize; 3] = [16, 64, 192];

/// The measured items repeated in order until their serial work reaches `target_ns`.
pub fn scaled(items: &Items, target_ns: f64) -> Items {
    let (mut bytes, mut ns) = (Vec::new(), Vec::new());
    let mut total = 0.0;
    let mut i = 0;
    while total < target_ns {
        bytes.push(items.bytes[i]);
        ns.push(items.ns[i]);
        total += items.ns[i];
        i = (i + 1) % items.ns.len();
    }
    Items::new(bytes, ns)
}

/// The predicted cases: the measured items of the first two workloads (documents and short
/// items) repeated until every worker has the given serial work, each planned by the real
/// planners at its own thread count.
pub fn predicted(measured: &[MeasuredWorkload]) -> Vec<Case<'_>> {
    let mut cases = Vec::new();
    for workload in measured.iter().take(2) {
        for work in WORK_PER_WORKER_NS {
            for p in PREDICT_CORES {
                let batch = scaled(&workload.items, work * p as f64);
                let (plan_ns, per_item_plan_ns) = plan_ns(&batch, p);
                cases.push(Case {
                    name: workload.name,
                    work,
                    p,
                    batch,
                    plan_ns,
                    per_item_plan_ns,
                });
            }
        }
    }
    cases
}

/// One predicted case: a workload scaled to `work` ns per worker at `p` cores, with the time
/// the real planners take for it here.
pub struct Case<'a> {
    pub name: &'a str,
    pub work: f64,
    pub p: usize,
    pub batch: Items,
    /// `plan_cumulative`, the chunked policy's planner.
    pub plan_ns: f64,
    /// `plan`, the per-item planner, for batches without running totals: the baseline.
    pub per_item_plan_ns: f64,
}

impl Case<'_> {
    /// A what-if: this case's chunked batch under `ramp` on `m`, and its efficiency T1 / (p · Tp).
    pub fn what_if(&self, m: Machine, ramp: Ramp) -> (f64, ChunkedRun) {
        let run = simulate_chunked(
            &self.batch,
            self.p,
            &m.with_cores(self.p),
            ramp,
            self.plan_ns,
        );
        (self.batch.work_ns() / (self.p as f64 * run.makespan), run)
    }
}

/// Fan-outs compared in the wake-ramp table.
pub const FANOUTS: [usize; 4] = [2, 3, 4, 8];
/// Registry critical sections compared in the wake-ramp table: 3 lines (the lock's, the drain
/// latch's and cursor 0's, the latch and the cursor on lines of their own), 2 as the code has it
/// (the lock's line and the batch's control line, `REGISTRY_LINES`), and 1, a what-if where a
/// join touches no line of the batch.
pub const JOIN_LINES: [f64; 3] = [3.0, 2.0, 1.0];
/// Lower clamps of the chunk target compared in the claims table (the default is 4 KiB).
pub const MIN_CHUNKS: [usize; 4] = [4096, 6144, 8192, 12288];

/// A column of the cursors table: its name, the cursors at `p` threads, how a join reads them,
/// and whether a claim on another cursor than the home loads it first.
pub type CursorChoice = (&'static str, fn(usize) -> usize, Reads, bool);

/// Claim cursors compared in the cursors table.
pub const CURSOR_CHOICES: [CursorChoice; 10] = [
    ("1 cursor (before)", |_| 1, Reads::Lazy, false),
    (
        "now: 1 to 64 threads, else ⌈p/32⌉",
        claim_cursors,
        Reads::Lazy,
        false,
    ),
    ("⌈p/64⌉", |p| p.div_ceil(64), Reads::Lazy, false),
    ("⌈p/32⌉", |p| p.div_ceil(32), Reads::Lazy, false),
    ("⌈p/16⌉", |p| p.div_ceil(16), Reads::Lazy, false),
    (
        "⌈p/32⌉ all reads",
        |p| p.div_ceil(32),
        Reads::Parallel,
        false,
    ),
    (
        "⌈p/32⌉ all serial",
        |p| p.div_ceil(32),
        Reads::Serial,
        false,
    ),
    ("⌈p/64⌉ peek", |p| p.div_ceil(64), Reads::Lazy, true),
    ("⌈p/32⌉ peek", |p| p.div_ceil(32), Reads::Lazy, true),
    ("⌈p/16⌉ peek", |p| p.div_ceil(16), Reads::Lazy, true),
];
