//! The discrete-event model: the machine's inputs, a batch as the model sees it, and the
//! predicted makespan of each policy (`chunked` in [`chunked`], `rayon` and `rayon-min-len` in
//! [`rayon`]).
//!
//! # What is assumed (no many-core machine is available)
//!
//! * A contended cache line moves between cores in `LINE_SAME_SOCKET_NS` within a socket and
//!   `LINE_CROSS_SOCKET_NS` across sockets. Published core-to-core measurements on recent server
//!   parts put the first at roughly 40–100 ns and the second at roughly 100–300 ns (Chips and
//!   Cheese, "Core to Core Latency Data on Large Systems", 2023-11-07, which measures Sapphire
//!   Rapids, Genoa and other large systems with a compare-and-exchange ping-pong, comparable to
//!   AnandTech's core-to-core test); the model takes the middle of each range.
//! * 192 cores are two sockets of 96; 16 and 64 cores are one socket.
//! * A parked thread on an idle core runs `WAKE_LATENCY_NS` after it is unparked, and the waker
//!   spends `UNPARK_NS` in the `unpark` call, in the server case (no virtualization, shallow idle
//!   states); the figures measured on this VM are reported beside them as a second case.
//! * Hardware scaling is perfect: a core encodes as fast alone as beside 191 others. The model
//!   predicts *scheduling* efficiency; memory bandwidth, shared caches, frequency and word caches
//!   that each thread fills apart are not in it. On a machine where the work at each thread count
//!   is measured (`sharded-shared` of `--example scheduler`: the batch hand-sharded on one shared
//!   engine, no scheduler), the validation scales every item's cost to that work
//!   ([`Items::with_work_factor`]) and predicts the policies' wall time on it: on 16 cores the
//!   work grows 1.15-1.6x from 1 to 16 threads on cold caches (`results/many-cores.md`).

pub mod chunked;
pub mod rayon;

use batchtok::scheduler::plan::{PlanParams, running_totals};
use batchtok::scheduler::{Policy, SchedulerConfig, rayon_min_len};

use chunked::{RAMP, simulate_chunked};
use rayon::simulate_rayon;

/// Assumed same-socket cache-line transfer (middle of the published 40–100 ns).
pub const LINE_SAME_SOCKET_NS: f64 = 70.0;
/// Assumed cross-socket cache-line transfer (middle of the published 100–300 ns).
pub const LINE_CROSS_SOCKET_NS: f64 = 200.0;
/// Cores per socket of the modelled machines: a 192-core server as two 96-core sockets.
pub const CORES_PER_SOCKET: usize = 96;
/// An atomic on a line the core already owns.
pub const LOCAL_ATOMIC_NS: f64 = 5.0;
/// Assumed wake-up latency of a parked thread on an idle server core (futex wake, IPI, context
/// switch, no deep idle state).
pub const WAKE_LATENCY_NS: f64 = 5_000.0;
/// Assumed cost to the waker of one `unpark` of a parked thread on a server (a futex wake
/// system call); on this VM it is measured, and several times higher (the IPI is virtualized).
pub const UNPARK_NS: f64 = 2_000.0;
/// Line transfers of one registry critical section, serialized: the lines it touches that other
/// cores write during the wake ramp. A join takes the lock word, whose line holds the registry's
/// fields (`waking`, the lists' lengths), and reads and enters the batch's control line, which
/// holds claim cursor 0 beside the drain latch (`queue::JobControl`); claims move that line
/// too, so the model queues the join's access with theirs. The lists' buffers, the generation
/// and the spinner count are only read during a ramp and are not counted.
pub const REGISTRY_LINES: f64 = 2.0;
/// How long a batch's owner spins for its last helpers before parking: `DRAIN_SPIN_ROUNDS`
/// (1024) pause instructions of roughly 20 ns each.
pub const DRAIN_SPIN_NS: f64 = 20_000.0;
/// A rayon join that is not stolen: push on and pop from the worker's own deque.
pub const RAYON_JOIN_NS: f64 = 20.0;
/// Line transfers of a steal: the deque's front index (CAS), the buffer slot and the job itself.
pub const RAYON_STEAL_LINES: f64 = 3.0;
/// crossbeam-epoch pin and unpin around a steal (a fence and a thread-local update).
pub const EPOCH_PIN_NS: f64 = 30.0;

/// The machine-dependent inputs of the model.
#[derive(Clone, Copy)]
pub struct Machine {
    /// Mean line transfer between two of the `p` cores.
    pub line_ns: f64,
    /// From `unpark` to the parked thread running.
    pub wake_ns: f64,
    /// The waker's cost of one `unpark` call.
    pub unpark_ns: f64,
    /// Dispatch cost per item, by policy, measured at 1 thread.
    pub chunked_item_ns: f64,
    pub rayon_item_ns: f64,
    pub rayon_min_len_item_ns: f64,
}

impl Machine {
    /// This machine with `line_ns` the mean transfer between two of `p` cores.
    pub fn with_cores(self, p: usize) -> Machine {
        // Fraction of random core pairs on different sockets.
        let a = p.min(CORES_PER_SOCKET) as f64;
        let b = p.saturating_sub(CORES_PER_SOCKET) as f64;
        let cross = 2.0 * a * b / (p as f64 * p as f64);
        Machine {
            line_ns: (1.0 - cross) * LINE_SAME_SOCKET_NS + cross * LINE_CROSS_SOCKET_NS,
            ..self
        }
    }
}

/// One batch as the model sees it.
#[derive(Clone)]
pub struct Items {
    /// Estimated cost (UTF-8 bytes), what the per-item planner sees.
    pub bytes: Vec<usize>,
    /// Running totals of `bytes`: the texts' end offsets, what the chunked policy plans from.
    pub ends: Vec<usize>,
    /// Measured encode time.
    pub ns: Vec<f64>,
}

impl Items {
    /// A batch of items with these estimated costs and measured encode times.
    pub fn new(bytes: Vec<usize>, ns: Vec<f64>) -> Items {
        let ends = running_totals(&bytes);
        Items { bytes, ends, ns }
    }

    /// The batch's serial work: the sum of its encode times.
    pub fn work_ns(&self) -> f64 {
        self.ns.iter().sum()
    }

    /// The same batch with every encode time multiplied by `factor`: for the work measured on a
    /// machine at a thread count, where "a core encodes as fast alone as beside the others" does
    /// not hold.
    pub fn with_work_factor(&self, factor: f64) -> Items {
        Items {
            ns: self.ns.iter().map(|ns| ns * factor).collect(),
            ..self.clone()
        }
    }
}

/// The chunk planner's parameters of a default scheduler with `p` threads.
pub fn default_plan_params(p: usize) -> PlanParams {
    PlanParams::from_config(&SchedulerConfig {
        threads: p,
        ..SchedulerConfig::default()
    })
}

/// Predicted makespan of `policy` at `p` threads, scheduling only (no output assembly); the
/// chunked owner plans for `plan_ns` first.
pub fn makespan(policy: Policy, items: &Items, p: usize, m: &Machine, plan_ns: f64) -> f64 {
    let m = m.with_cores(p);
    match policy {
        Policy::Serial => items.work_ns(),
        Policy::Chunked => simulate_chunked(items, p, &m, RAMP, plan_ns).makespan,
        Policy::Rayon => simulate_rayon(items, p, 1, m.rayon_item_ns, &m),
        Policy::RayonMinLen => simulate_rayon(
            items,
            p,
            rayon_min_len(items.ns.len(), p),
            m.rayon_min_len_item_ns,
            &m,
        ),
    }
}
