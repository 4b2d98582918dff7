//! What the model takes from this machine: every item's encode time, each policy's dispatch
//! cost per item, the output assembly, the planners' time, the wake-up latency and the cost of
//! `unpark`, and the measured efficiencies written by `--example scheduler`.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use batchtok::batch::encode_all;
use batchtok::engine::{AllowedSpecial, Ids, Scratch, Tokenizer};
use batchtok::scheduler::plan::{plan, plan_cumulative};
use batchtok::scheduler::{Batch, CancelToken, ItemError, Policy, Scheduler, SchedulerConfig};

use crate::corpus;
use crate::model::{Items, default_plan_params};

/// Serial passes over each workload when measuring item costs (the fastest of them is kept):
/// enough that every item has some pass undisturbed by the neighbour, ~2 s for the three
/// workloads on the 2-core VM.
const COST_PASSES: usize = 9;

/// Encode time of every item: the fastest of `COST_PASSES` serial passes. The machine is shared
/// and noise only ever adds time (a neighbour's work, an interrupt, a descheduled vCPU), so the
/// minimum is the estimate least disturbed by it (a median of a few passes still lets a single
/// document's time vary several-fold between runs). What the minimum keeps is the real variation between
/// items, e.g. the word lists at the end of big.txt that cost 2–3 times prose per byte.
fn measure_item_ns(tokenizer: &Tokenizer, items: &[String]) -> Vec<f64> {
    let mode = tokenizer
        .encode_mode(None, &AllowedSpecial::None)
        .expect("default mode");
    let mut ids = Ids::default();
    let mut scratch = Scratch::new();
    let clock = {
        let start = Instant::now();
        for _ in 0..1000 {
            black_box(Instant::now());
        }
        start.elapsed().as_nanos() as f64 / 1000.0
    };
    let mut fastest = vec![f64::INFINITY; items.len()];
    for _ in 0..COST_PASSES {
        for (item, best) in items.iter().zip(&mut fastest) {
            ids.clear();
            let start = Instant::now();
            tokenizer
                .encode_into(item, &mode, &mut scratch, &mut ids)
                .expect("encode");
            let ns = (start.elapsed().as_nanos() as f64 - clock).max(1.0);
            *best = best.min(ns);
        }
    }
    fastest
}

/// Trivial items: one push each, to measure what a policy costs per item. Like batchtok's texts
/// they offer the running totals of their costs, so the chunked policy plans without a pass
/// over the items, and the model adds the plan, timed apart, only once.
struct Trivial {
    ends: Vec<usize>,
}

impl Trivial {
    /// Cost of every trivial item.
    const COST: usize = 100;

    fn new(len: usize) -> Trivial {
        Trivial {
            ends: (1..=len).map(|i| i * Self::COST).collect(),
        }
    }
}

impl Batch for Trivial {
    type Sink = Vec<u32>;
    type Mark = usize;
    fn len(&self) -> usize {
        self.ends.len()
    }
    fn cost(&self, _: usize) -> usize {
        Self::COST
    }
    fn cumulative_costs(&self) -> Option<&[usize]> {
        Some(&self.ends)
    }
    fn new_sink(&self) -> Vec<u32> {
        Vec::new()
    }
    fn mark(&self, sink: &Vec<u32>) -> usize {
        sink.len()
    }
    fn process(&self, index: usize, sink: &mut Vec<u32>) -> Result<(), ItemError> {
        sink.push(index as u32);
        Ok(())
    }
}

/// A scheduler with `policy` on `threads` threads, the other settings default.
fn scheduler(policy: Policy, threads: usize) -> Scheduler {
    Scheduler::new(SchedulerConfig {
        policy,
        threads,
        ..SchedulerConfig::default()
    })
    .expect("valid")
}

/// Dispatch ns per item of `policy` at 1 thread, over a plain loop of the same pushes.
pub fn dispatch_ns(policy: Policy) -> f64 {
    const N: usize = 200_000;
    let batch = Trivial::new(N);
    let time = |f: &mut dyn FnMut()| {
        f();
        corpus::median(
            &(0..7)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_nanos() as f64
                })
                .collect::<Vec<_>>(),
        )
    };
    let plain = time(&mut || {
        let mut sink = Vec::new();
        for i in 0..N {
            batch.process(i, &mut sink).unwrap();
        }
        black_box(sink);
    });
    let s = scheduler(policy, 1);
    let cancel = CancelToken::new();
    let run = time(&mut || {
        black_box(s.run(&batch, &cancel).unwrap());
    });
    ((run - plain) / N as f64).max(0.0)
}

/// Wake-up latency (from `unpark` to the parked thread running) and the waker's cost of the
/// `unpark` call, medians over many wakes of a thread that is really parked.
pub fn measure_wake() -> (f64, f64) {
    const ROUNDS: usize = 2000;
    let epoch = Instant::now();
    let woken = Arc::new(AtomicBool::new(false));
    let woke_at = Arc::new(AtomicU64::new(0));
    let (w, at) = (woken.clone(), woke_at.clone());
    let other = std::thread::spawn(move || {
        for _ in 0..ROUNDS {
            while !w.load(Ordering::Acquire) {
                std::thread::park();
            }
            at.store(epoch.elapsed().as_nanos() as u64, Ordering::Release);
            w.store(false, Ordering::Release);
        }
    });
    let mut latencies = Vec::with_capacity(ROUNDS);
    let mut unparks = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        // Give the other thread time to park, so every wake is a real one.
        std::thread::sleep(std::time::Duration::from_micros(100));
        let start = epoch.elapsed().as_nanos() as f64;
        woken.store(true, Ordering::Release);
        other.thread().unpark();
        unparks.push(epoch.elapsed().as_nanos() as f64 - start);
        while woken.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
        latencies.push(woke_at.load(Ordering::Acquire) as f64 - start);
    }
    other.join().unwrap();
    (corpus::median(&latencies), corpus::median(&unparks))
}

/// Where `--example scheduler` writes its medians; `--measured PATH` names another file.
pub const MEASURED_TSV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/benchmark/results/scheduler-measured.tsv"
);

/// One contender's medians at one thread count, as `--example scheduler` writes them.
#[derive(Clone, Copy)]
pub struct MeasuredRow {
    /// The whole call: plan, scheduling and the output's assembly.
    pub seconds: f64,
    /// `T1 / (p · Tp)`, `T1` the serial policy's median of the same method and workload.
    pub efficiency: f64,
    /// The threads' summed encode time, where the contender tells it.
    pub busy_s: Option<f64>,
    /// A policy's own wall time: `seconds` less the assembly.
    pub scheduler_s: Option<f64>,
}

/// The medians of `--example scheduler`, by method, workload, contender and thread count.
pub type Measured = HashMap<(String, String, String, usize), MeasuredRow>;

/// Reads the medians `--example scheduler` wrote to `path`; empty, with a note, where there are
/// none.
pub fn read_measured(path: &str) -> Measured {
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!(
            "{path} not found: run `cargo run --release --features rc-parallel --example scheduler` first"
        );
        return HashMap::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let row = MeasuredRow {
                seconds: f.get(4)?.parse().ok()?,
                efficiency: f.get(6)?.parse().ok()?,
                busy_s: f.get(7).and_then(|b| b.parse().ok()),
                scheduler_s: f.get(8).and_then(|w| w.parse().ok()),
            };
            Some((
                (
                    f[0].to_owned(),
                    f[1].to_owned(),
                    f[2].to_owned(),
                    f[3].parse().ok()?,
                ),
                row,
            ))
        })
        .collect()
}

/// A workload as measured here: its items' estimated costs and encode times, the output
/// assembly, and the planners' time for it at 2 threads.
pub struct MeasuredWorkload {
    pub name: &'static str,
    pub items: Items,
    /// Output assembly, from [`assembly_ns`].
    pub assembly_ns: f64,
    /// [`plan_ns`] at 2 threads: the planner from running totals, and the per-item one.
    pub plan_at_two: (f64, f64),
}

impl MeasuredWorkload {
    /// Measures `workload` with `tokenizer`, the items first, then the assembly, then the plan.
    pub fn measure(tokenizer: &Tokenizer, workload: &corpus::Workload) -> MeasuredWorkload {
        let ns = measure_item_ns(tokenizer, &workload.items);
        let assembly_ns = assembly_ns(tokenizer, &workload.items);
        let items = Items::new(workload.items.iter().map(String::len).collect(), ns);
        let plan_at_two = plan_ns(&items, 2);
        MeasuredWorkload {
            name: workload.name,
            items,
            assembly_ns,
            plan_at_two,
        }
    }
}

/// Output assembly of one workload: `encode_all` time at 1 thread minus the scheduler's own
/// wall time, the median of five runs.
fn assembly_ns(tokenizer: &Tokenizer, items: &[String]) -> f64 {
    let texts = corpus::texts(items);
    let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
    let s = scheduler(Policy::Serial, 1);
    let assembly: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            black_box(encode_all(&s, tokenizer, &texts, &mode, &CancelToken::new()).ok());
            let total = t.elapsed().as_nanos() as f64;
            (total - s.last_stats().unwrap().wall_ns as f64).max(0.0)
        })
        .collect();
    corpus::median(&assembly)
}

/// Runs of each planner when timing it; the fastest is kept (the machine is shared, and noise
/// only ever adds time).
const PLAN_RUNS: usize = 15;

/// Time the real planners take for `items` at `p` threads, on this machine: the chunked
/// policy's on texts (`plan_cumulative`, from the running totals they keep) and the per-item
/// one for batches without them (`plan`, one pass over every item's cost).
pub fn plan_ns(items: &Items, p: usize) -> (f64, f64) {
    let params = default_plan_params(p);
    let fastest = |f: &mut dyn FnMut()| {
        (0..PLAN_RUNS)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_nanos() as f64
            })
            .fold(f64::INFINITY, f64::min)
    };
    let cumulative = fastest(&mut || {
        black_box(plan_cumulative(black_box(&items.ends), &params));
    });
    let per_item = fastest(&mut || {
        black_box(plan(items.bytes.len(), |i| items.bytes[i], &params));
    });
    (cumulative, per_item)
}
