//! Dispatch overhead and parallel efficiency of every policy.
//!
//! `cargo run --release --example dispatch [-- --quick]` (this file is `benchmark/dispatch.rs`)
//!
//! * Dispatch: trivial items (push one `u32`), reported as ns/item (median of several runs)
//!   and as overhead over a plain loop that does the same pushes with no scheduler.
//! * Small-batch latency: µs per 64-item batch, at 2 threads and at 4 (where the wake fan-out
//!   acts: the pool has more than one worker), back to back and, for chunked, after an idle
//!   pause (every worker parked, so the publish wakes them).
//! * Efficiency: items that busy-spin in proportion to a skewed cost model (some heavy items),
//!   `serial loop time / (threads * policy time)`, at 1 and 2 threads.

use std::hint::black_box;
use std::time::Instant;

use batchtok::scheduler::plan::running_totals;
use batchtok::scheduler::{Batch, CancelToken, ItemError, Policy, Scheduler, SchedulerConfig};

/// Items whose work is either a single push or busy work proportional to their cost.
struct Synthetic {
    costs: Vec<usize>,
    /// Running totals of `costs`, offered to the planner as batchtok's texts offer their end
    /// offsets, so the chunked policy plans here as it does for real batches.
    ends: Vec<usize>,
    /// Busy-loop iterations per cost byte; 0 = trivial work.
    spin_per_byte: usize,
}

impl Synthetic {
    fn new(costs: Vec<usize>, spin_per_byte: usize) -> Self {
        let ends = running_totals(&costs);
        Synthetic {
            costs,
            ends,
            spin_per_byte,
        }
    }
}

fn busy(iterations: usize) -> u64 {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..iterations {
        x = black_box(x.rotate_left(5) ^ 0x2545_f491_4f6c_dd1d).wrapping_mul(3);
    }
    x
}

impl Batch for Synthetic {
    type Sink = Vec<u32>;
    type Mark = usize;
    fn len(&self) -> usize {
        self.costs.len()
    }
    fn cost(&self, index: usize) -> usize {
        self.costs[index]
    }
    fn cumulative_costs(&self) -> Option<&[usize]> {
        Some(&self.ends)
    }
    fn new_sink(&self) -> Vec<u32> {
        Vec::with_capacity(1024)
    }
    fn mark(&self, sink: &Vec<u32>) -> usize {
        sink.len()
    }
    fn process(&self, index: usize, sink: &mut Vec<u32>) -> Result<(), ItemError> {
        let extra = if self.spin_per_byte == 0 {
            0
        } else {
            busy(self.costs[index] * self.spin_per_byte) as u32 & 1
        };
        sink.push(index as u32 + extra);
        Ok(())
    }
}

/// The same work with no scheduler at all.
fn plain_loop(batch: &Synthetic) -> Vec<u32> {
    let mut sink = batch.new_sink();
    for i in 0..batch.len() {
        batch.process(i, &mut sink).unwrap();
    }
    sink
}

/// Pause before each idle-start latency run: far longer than a worker's idle spin, so every
/// worker has parked.
const IDLE_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Median seconds of `runs` timed calls after one warm-up.
fn time(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

fn scheduler(policy: Policy, threads: usize) -> Scheduler {
    Scheduler::new(SchedulerConfig {
        policy,
        threads,
        ..SchedulerConfig::default()
    })
    .unwrap()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 5 } else { 11 };
    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("machine: nproc={nproc}, cpu={}", cpu_model());
    let cancel = CancelToken::new();

    // Dispatch overhead with trivial work.
    let n = if quick { 100_000 } else { 1_000_000 };
    let trivial = Synthetic::new(vec![32; n], 0);
    let base = time(runs, || {
        black_box(plain_loop(&trivial));
    });
    println!("\n== dispatch, {n} trivial items (median of {runs}) ==");
    println!(
        "plain loop (no scheduler): {:6.2} ns/item",
        base * 1e9 / n as f64
    );
    println!(
        "{:<14} {:>7} {:>10} {:>12} {:>8} {:>8}",
        "policy", "threads", "ns/item", "overhead/it", "chunks", "inline"
    );
    for policy in Policy::ALL {
        for threads in [1, 2] {
            let s = scheduler(policy, threads);
            let t = time(runs, || {
                black_box(s.run(&trivial, &cancel).unwrap());
            });
            let stats = s.last_stats().unwrap();
            println!(
                "{:<14} {:>7} {:>10.2} {:>12.2} {:>8} {:>8}",
                policy.to_string(),
                threads,
                t * 1e9 / n as f64,
                (t - base) * 1e9 / n as f64,
                stats.chunks,
                stats.inline
            );
        }
    }

    // Small-batch latency. At 2 threads the pool has one worker, so at most one is woken; at 4
    // (more threads than this machine may have cores) the wake fan-out decides how many the
    // publish wakes at once.
    let small = Synthetic::new(vec![200; 64], 0);
    for threads in [2, 4] {
        println!(
            "\n== latency of a 64-item batch, {threads} threads (200 B each; median of {}) ==",
            runs * 20
        );
        for policy in Policy::ALL {
            let s = scheduler(policy, threads);
            let t = time(runs * 20, || {
                black_box(s.run(&small, &cancel).unwrap());
            });
            let stats = s.last_stats().unwrap();
            println!(
                "{:<14} {:>8.2} µs  (inline: {}, wake-ups: {})",
                policy.to_string(),
                t * 1e6,
                stats.inline,
                stats.wakeups
            );
        }
        // Back to back, a spinning worker picks the batch up and nobody is woken; after an idle
        // pause every worker is parked and the publish wakes them, up to the fan-out.
        let s = scheduler(Policy::Chunked, threads);
        let (mut samples, mut wakeups) = (Vec::new(), 0);
        for _ in 0..runs * 20 {
            std::thread::sleep(IDLE_PAUSE);
            let t = Instant::now();
            black_box(s.run(&small, &cancel).unwrap());
            samples.push(t.elapsed().as_secs_f64());
            wakeups += s.last_stats().unwrap().wakeups;
        }
        println!(
            "{:<14} {:>8.2} µs  (after {} ms idle; wake-ups: {:.2} per batch)",
            "chunked",
            median(samples) * 1e6,
            IDLE_PAUSE.as_millis(),
            wakeups as f64 / (runs * 20) as f64
        );
    }

    // Efficiency with a skewed cost model.
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let items = if quick { 5_000 } else { 20_000 };
    let costs: Vec<usize> = (0..items)
        .map(|_| match next() % 1000 {
            0..=1 => 200_000 + (next() % 300_000) as usize, // ~0.2 % heavy items
            r => 20 + (r as usize * 7) % 1500,
        })
        .collect();
    let work = Synthetic::new(costs, 2);
    let serial = time(runs.min(5), || {
        black_box(plain_loop(&work));
    });
    println!(
        "\n== efficiency, {items} items, skewed costs, {:.1} ms serial ==",
        serial * 1e3
    );
    println!(
        "{:<14} {:>7} {:>9} {:>11} {:>10} {:>9}",
        "policy", "threads", "ms", "efficiency", "imbalance", "chunks"
    );
    for policy in Policy::ALL {
        for threads in [1, 2] {
            let s = scheduler(policy, threads);
            let t = time(runs.min(5), || {
                black_box(s.run(&work, &cancel).unwrap());
            });
            let stats = s.last_stats().unwrap();
            println!(
                "{:<14} {:>7} {:>9.2} {:>10.1}% {:>10.2} {:>9}",
                policy.to_string(),
                threads,
                t * 1e3,
                100.0 * serial / (threads as f64 * t),
                stats.imbalance,
                stats.chunks
            );
        }
    }
}
