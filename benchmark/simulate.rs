//! A discrete-event model of the scheduler policies, fed with the real chunk planner and with
//! per-item encode times of o200k_base measured on this machine; validated against the measured
//! efficiencies at 1 and 2 threads, then asked what happens at 16, 64 and 192 cores.
//!
//! `cargo run --release --example simulate` (this file is `benchmark/simulate.rs`). Run
//! `--example scheduler` first: its medians (`benchmark/results/scheduler-measured.tsv`) are the
//! measured side of the validation. Writes `benchmark/results/scheduler-scaling.svg`.
//!
//! # What is measured here, on this machine
//!
//! * the encode time of every item of each workload: the fastest of `COST_PASSES` serial
//!   passes, because the machine is shared and noise only ever adds time;
//! * the time the real planners take for each predicted batch at its own thread count
//!   (`plan_cumulative`, what the chunked policy runs on texts, and the per-item `plan` it ran
//!   before), the fastest of `PLAN_RUNS` runs: the owner's serial work before the publish;
//! * each policy's dispatch cost per item (trivial items at 1 thread, over a plain loop);
//! * the cost of assembling the output (`encode_all` time minus the scheduler's own wall time);
//! * the thread wake-up latency (park/unpark ping-pong) and the cost of the `unpark` call.
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
//!   predicts *scheduling* efficiency; memory bandwidth, shared caches and frequency are not in it.
//!   The measured `static` ceiling (two threads, half the bytes each, no scheduler) says how far
//!   the 2-core VM is from that.
//!
//! # The policies as modelled
//!
//! * `chunked`: the plan is `batchtok::scheduler::plan::plan_cumulative`, the real planner, and
//!   the owner spends the measured plan time before publishing. It then publishes, wakes up to
//!   `WAKE_FANOUT` sleepers and claims at once; every joining helper takes the registry lock
//!   (`REGISTRY_LINES` line transfers, serialized with every other publish and join) and wakes up
//!   to `WAKE_FANOUT` more, as many as the job wants helpers beyond those already woken (P1, P3,
//!   P5 of `src/scheduler/README.md`), so helpers arrive as a tree. The plan is dealt to
//!   `claim_cursors(p)` cursors, as the code deals it (one up to 64 cores, else one per 32); a
//!   participant claims from its home cursor (the owner 0, a helper its place among the helpers
//!   mod G), then from the others in turn, each until it comes back empty once (P2). Participants
//!   are not pinned, so every transfer costs the mean over the `p` cores, as elsewhere. A claim is
//!   one `fetch_add` on its cursor's line: claims on one line are serialized, each costing one
//!   line transfer when the previous claimant was another core. A join reads cursor 0 on the
//!   control line, and the other cursors one after another only while the chunks counted do not
//!   exceed the helper cap, as `JobControl::joinable` does; each read waits for the claims
//!   queued on its line. The owner spins, then parks, until its last helper leaves (P6). Every
//!   worker's time is accounted for (`Losses`): plan, ramp, claims, dispatch, work, tail, drain.
//!   Baseline: the same with the per-item planner's time (`chunked, per-item plan (before)`).
//!   The wake-ramp table varies the fan-out (2, 3, 4, 8) and the registry's critical section; the
//!   cursors table, the number of cursors and how a join reads them.
//! * `rayon` / `rayon-min-len`: rayon's adaptive splitting as in `rayon::iter::plumbing`
//!   (a job splits while `len / 2 >= min` and its split budget, initially the thread count and
//!   halved per split, lasts; a stolen job's budget is reset to at least the thread count). Each
//!   split pushes the right half on the worker's deque (`RAYON_JOIN_NS`) and wakes one sleeper if
//!   no worker is idle and awake; idle workers steal the oldest job of a random non-empty deque,
//!   paying one line read per deque probed plus `RAYON_STEAL_LINES` transfers and an epoch pin,
//!   serialized per victim. The caller injects the root job, sleeps, and is woken at the end.
//!   `rayon-min-len` is the same with `min = ceil(n / (4 p)).clamp(1, 8)`.

#[path = "corpus.rs"]
mod corpus;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use batchtok::batch::encode_all;
use batchtok::engine::{AllowedSpecial, Ids, Scratch, Tokenizer};
use batchtok::scheduler::plan::{PlanParams, plan, plan_cumulative, running_totals};
use batchtok::scheduler::{
    Batch, CancelToken, Policy, Scheduler, SchedulerConfig, WAKE_FANOUT, claim_cursors,
    rayon_min_len,
};

/// Assumed same-socket cache-line transfer (middle of the published 40–100 ns).
const LINE_SAME_SOCKET_NS: f64 = 70.0;
/// Assumed cross-socket cache-line transfer (middle of the published 100–300 ns).
const LINE_CROSS_SOCKET_NS: f64 = 200.0;
/// Cores per socket of the modelled machines: a 192-core server as two 96-core sockets.
const CORES_PER_SOCKET: usize = 96;
/// An atomic on a line the core already owns.
const LOCAL_ATOMIC_NS: f64 = 5.0;
/// Assumed wake-up latency of a parked thread on an idle server core (futex wake, IPI, context
/// switch, no deep idle state).
const WAKE_LATENCY_NS: f64 = 5_000.0;
/// Assumed cost to the waker of one `unpark` of a parked thread on a server (a futex wake
/// system call); on this VM it is measured, and several times higher (the IPI is virtualized).
const UNPARK_NS: f64 = 2_000.0;
/// Line transfers of one registry critical section, serialized: the lines it touches that other
/// cores write during the wake ramp. A join takes the lock word, whose line holds the registry's
/// fields (`waking`, the lists' lengths), and reads and enters the batch's control line, which
/// holds claim cursor 0 beside the drain latch (`queue::JobControl`); claims move that line
/// too, so the model queues the join's access with theirs. The lists' buffers, the generation
/// and the spinner count are only read during a ramp and are not counted. Until 2026-11-24 the
/// cursor and the latch were on two lines: 3.
const REGISTRY_LINES: f64 = 2.0;
/// How long a batch's owner spins for its last helpers before parking: `DRAIN_SPIN_ROUNDS`
/// (1024) pause instructions of roughly 20 ns each.
const DRAIN_SPIN_NS: f64 = 20_000.0;
/// A rayon join that is not stolen: push on and pop from the worker's own deque.
const RAYON_JOIN_NS: f64 = 20.0;
/// Line transfers of a steal: the deque's front index (CAS), the buffer slot and the job itself.
const RAYON_STEAL_LINES: f64 = 3.0;
/// crossbeam-epoch pin and unpin around a steal (a fence and a thread-local update).
const EPOCH_PIN_NS: f64 = 30.0;
/// Serial work per worker in the predictions: the issue's "at least 1 ms of work per worker",
/// and ten times that.
const WORK_PER_WORKER_NS: [f64; 2] = [1e6, 1e7];
/// Core counts of the predictions.
const PREDICT_CORES: [usize; 3] = [16, 64, 192];
/// Core counts on the chart.
const CHART_CORES: [usize; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 192];
/// Serial passes over each workload when measuring item costs (the fastest of them is kept):
/// enough that every item has some pass undisturbed by the neighbour, ~2 s for the three
/// workloads on the 2-core VM.
const COST_PASSES: usize = 9;

/// The machine-dependent inputs of the model.
#[derive(Clone, Copy)]
struct Machine {
    /// Mean line transfer between two of the `p` cores.
    line_ns: f64,
    wake_ns: f64,
    unpark_ns: f64,
    /// Dispatch cost per item, by policy, measured at 1 thread.
    chunked_item_ns: f64,
    rayon_item_ns: f64,
    rayon_min_len_item_ns: f64,
}

impl Machine {
    fn with_cores(self, p: usize) -> Machine {
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
struct Items {
    /// Estimated cost (UTF-8 bytes), what the per-item planner sees.
    bytes: Vec<usize>,
    /// Running totals of `bytes`: the texts' end offsets, what the chunked policy plans from.
    ends: Vec<usize>,
    /// Measured encode time.
    ns: Vec<f64>,
}

impl Items {
    fn new(bytes: Vec<usize>, ns: Vec<f64>) -> Items {
        let ends = running_totals(&bytes);
        Items { bytes, ends, ns }
    }

    fn work_ns(&self) -> f64 {
        self.ns.iter().sum()
    }
}

/// Deterministic xorshift, so every run of the model is the same.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// How helpers arrive in the model of the chunked policy (P1, P3, P5).
#[derive(Clone, Copy)]
struct Ramp {
    /// Most sleepers one publish or one join wakes: `WAKE_FANOUT` is batchtok's rule.
    fanout: usize,
    /// Line transfers of one registry critical section (publish or join), serialized.
    registry_lines: f64,
    /// What-if: the owner wakes up to `fanout` sleepers before it plans; they search, find
    /// nothing, and spin until the publish.
    prewake: bool,
    /// What-if: the lower clamp of the chunk target, if not the default.
    min_chunk: Option<usize>,
    /// Claim cursors of a batch at `p` threads (P2): chunk k is claimed through cursor k mod G.
    cursors: fn(usize) -> usize,
    /// How a join reads the cursors' lines.
    reads: Reads,
    /// A claim on a cursor other than the worker's home first loads it and skips it if it is
    /// empty, rather than always `fetch_add`ing.
    peek: bool,
}

/// How a join (under the registry lock) reads a batch's cursors to tell how many chunks are
/// left.
#[derive(Clone, Copy, PartialEq)]
enum Reads {
    /// What-if: every cursor, the loads all in flight at once.
    Parallel,
    /// What-if: every cursor, one after another.
    Serial,
    /// In order from cursor 0 (on the control line), one after another, stopping once the
    /// cursors read hold more chunks than the helper cap can use (`JobControl::joinable`).
    Lazy,
}

/// batchtok's wake rule as the code has it.
const RAMP: Ramp = Ramp {
    fanout: WAKE_FANOUT,
    registry_lines: REGISTRY_LINES,
    prewake: false,
    min_chunk: None,
    cursors: claim_cursors,
    reads: Reads::Lazy,
    peek: false,
};

/// Where the `p` workers' time goes in one modelled chunked batch, in ns summed over workers:
/// the parts add up to `p` times the makespan (plan included).
#[derive(Clone, Copy, Default)]
struct Losses {
    /// Every worker idle while the owner plans (the helpers are not woken yet).
    plan: f64,
    /// From the publish to a worker's first claim: wake-up latency, waiting for and holding the
    /// registry lock, and the `unpark` calls the worker makes for the tree (the owner's too).
    ramp: f64,
    /// Claims: one line transfer each, plus waiting while another core holds the cursor.
    claims: f64,
    /// The policy's per-item dispatch cost.
    dispatch: f64,
    /// Encoding: the batch's serial work.
    work: f64,
    /// From a worker's last chunk to the end of the last chunk anyone runs (imbalance).
    tail: f64,
    /// From the end of the last chunk to the owner returning: the last helper's leave, and the
    /// owner's wake-up if it had parked (P6), for every worker.
    drain: f64,
}

impl Losses {
    fn total(&self) -> f64 {
        self.plan + self.ramp + self.claims + self.dispatch + self.work + self.tail + self.drain
    }
}

/// One modelled chunked batch.
struct ChunkedRun {
    /// Makespan, from the start of the plan to the owner returning.
    makespan: f64,
    /// When the last helper joined, after the publish.
    last_join: f64,
    losses: Losses,
    /// The chunk that ended last: its items, and its encode time.
    last_chunk: (std::ops::Range<usize>, f64),
}

/// The chunk planner's parameters of a default scheduler with `p` threads.
fn default_plan_params(p: usize) -> PlanParams {
    PlanParams::from_config(&SchedulerConfig {
        threads: p,
        ..SchedulerConfig::default()
    })
}

/// The chunked policy at `p` threads: the owner plans for `plan_ns` (measured by the caller on
/// the real planner), publishes and claims; helpers arrive as `ramp` says.
fn simulate_chunked(items: &Items, p: usize, m: &Machine, ramp: Ramp, plan_ns: f64) -> ChunkedRun {
    let mut params = default_plan_params(p);
    if let Some(min) = ramp.min_chunk {
        params.min_chunk = min;
    }
    let plan = plan_cumulative(&items.ends, &params);
    let work_of = |r: &std::ops::Range<usize>| r.clone().map(|i| items.ns[i]).sum::<f64>();
    let chunk_ns: Vec<f64> = plan
        .chunks
        .iter()
        .map(|r| work_of(r) + r.len() as f64 * m.chunked_item_ns)
        .collect();
    let mut losses = Losses {
        plan: p as f64 * plan_ns,
        work: items.work_ns(),
        dispatch: items.ns.len() as f64 * m.chunked_item_ns,
        ..Losses::default()
    };
    let inline = p == 1
        || plan.chunks.len() < 2
        || plan.total_bytes < batchtok::scheduler::DEFAULT_INLINE_BELOW_BYTES;
    if inline {
        let claims = chunk_ns.len() as f64 * LOCAL_ATOMIC_NS;
        let span = chunk_ns.iter().sum::<f64>() + claims;
        losses.claims = claims;
        // The other p - 1 threads are never used.
        losses.ramp = (p - 1) as f64 * span;
        let last = plan.chunks.last().cloned().unwrap_or(0..0);
        return ChunkedRun {
            makespan: plan_ns + span,
            last_join: 0.0,
            losses,
            last_chunk: (last.clone(), work_of(&last)),
        };
    }

    // Times are from the start of `run`; the owner plans for `plan_ns` of it.
    #[derive(Clone, Copy)]
    enum Event {
        Claim,
        /// A woken worker's search: join, or (before the publish) spin until it.
        Join,
        /// The owner's publish.
        Publish,
    }
    let mut heap: BinaryHeap<Reverse<(u64, usize, u8)>> = BinaryHeap::new();
    let key = |t: f64| (t * 16.0) as u64;
    let push = |heap: &mut BinaryHeap<_>, t: f64, w: usize, e: Event| {
        heap.push(Reverse((key(t), w, e as u8)));
    };
    let registry_ns = ramp.registry_lines * m.line_ns;
    let mut lock_free = 0.0f64;
    // P2: cursor g hands out chunks g, g + G, g + 2G, ... Each is on its own line: when it is
    // free again, and which worker last wrote it (a claim by the same core costs no transfer).
    let groups = (ramp.cursors)(p).max(1);
    let mut cursor = vec![0usize; groups];
    let mut cursor_free = vec![0.0f64; groups];
    let mut last_claimant = vec![usize::MAX; groups];
    // Chunks not handed out yet, summed over the cursors as `JobControl::remaining` does.
    let remaining = |cursor: &[usize]| {
        (0..groups)
            .map(|g| {
                let len = plan.chunks.len().saturating_sub(g).div_ceil(groups);
                len.saturating_sub(cursor[g])
            })
            .sum::<usize>()
    };
    // Each worker's cursor now, and how many cursors it has found empty.
    let mut at = vec![0usize; p];
    let mut empty = vec![0usize; p];
    let mut sleepers = p - 1;
    let mut helpers = 0usize;
    // Woken workers that have not searched yet (the registry's `waking`), and woken workers
    // that found nothing and spin until the publish (counted in the registry's `spinners`).
    let mut waking = 0usize;
    let mut spinning: Vec<usize> = Vec::new();
    let mut published: Option<f64> = None;
    let mut finish = vec![0.0f64; p];
    let mut times = vec![0.0f64; p];
    // When each worker's first claim starts (`None`: never woken, or joined too late).
    let mut first_claim: Vec<Option<f64>> = vec![None; p];
    // Who ran which chunk, and when it ended, to name the chunk that ends last.
    let mut last_end = (0.0f64, 0usize);
    // P5: how many sleepers the wake rule pops, as `Registry::sleepers_to_wake` decides it.
    let to_wake = |remaining: usize, helpers: usize, on_their_way: usize, sleepers: usize| {
        let wanted = (p - 1 - helpers).min(remaining.saturating_sub(helpers + 1));
        wanted
            .saturating_sub(on_their_way)
            .min(ramp.fanout)
            .min(sleepers)
    };
    let mut next_worker = 1;
    // Pops `count` sleepers at `t` (the waker's time); returns when the waker is done unparking.
    let mut wake = |heap: &mut BinaryHeap<_>,
                    times: &mut Vec<f64>,
                    sleepers: &mut usize,
                    waking: &mut usize,
                    count: usize,
                    mut t: f64| {
        for _ in 0..count {
            *sleepers -= 1;
            *waking += 1;
            t += m.unpark_ns;
            times[next_worker] = t + m.wake_ns;
            push(heap, times[next_worker], next_worker, Event::Join);
            next_worker += 1;
        }
        t
    };

    let mut plan_start = 0.0;
    if ramp.prewake {
        // The owner's pre-wake: under the lock, before the plan; the batch's chunks are not
        // known yet, only that it will be published.
        lock_free = registry_ns;
        let count = to_wake(plan.chunks.len(), 0, 0, sleepers);
        plan_start = wake(
            &mut heap,
            &mut times,
            &mut sleepers,
            &mut waking,
            count,
            lock_free,
        );
        // Every worker waits while the owner wakes the first sleepers.
        losses.ramp += p as f64 * plan_start;
    }
    times[0] = plan_start + plan_ns;
    push(&mut heap, times[0], 0, Event::Publish);
    let mut last_join = 0.0f64;

    while let Some(Reverse((_, w, e))) = heap.pop() {
        let t = times[w];
        if e == Event::Publish as u8 {
            // P1: publish under the lock and run the wake rule; spinners see the generation.
            let start = t.max(lock_free);
            lock_free = start + registry_ns;
            published = Some(lock_free);
            let count = to_wake(remaining(&cursor), 0, waking + spinning.len(), sleepers);
            let go = wake(
                &mut heap,
                &mut times,
                &mut sleepers,
                &mut waking,
                count,
                lock_free,
            );
            for s in spinning.drain(..) {
                waking += 1;
                times[s] = lock_free + m.line_ns;
                push(&mut heap, times[s], s, Event::Join);
            }
            times[0] = go;
            push(&mut heap, go, 0, Event::Claim);
            continue;
        }
        if e == Event::Join as u8 {
            // P3: join under the registry lock and run the wake rule (P5) again. The last line
            // of the critical section is the batch's control line, which holds cursor 0; the
            // other cursors' lines are read too, all at once (independent loads) or, as a
            // what-if, one after another. Each read waits for the claims queued on its line.
            let start = t.max(lock_free);
            if ramp.registry_lines >= 2.0 {
                let mut reach = start + (ramp.registry_lines - 1.0) * m.line_ns;
                let mut done = reach;
                let mut seen = 0;
                for g in 0..groups {
                    let read = reach.max(cursor_free[g]) + m.line_ns;
                    cursor_free[g] = read;
                    last_claimant[g] = usize::MAX;
                    done = done.max(read);
                    if ramp.reads != Reads::Parallel {
                        reach = read;
                    }
                    let len = plan.chunks.len().saturating_sub(g).div_ceil(groups);
                    seen += len.saturating_sub(cursor[g]);
                    if ramp.reads == Reads::Lazy && seen > p - 1 {
                        break;
                    }
                }
                lock_free = done;
            } else {
                lock_free = start + registry_ns;
            }
            waking -= 1;
            if published.is_none_or(|at| at > start) {
                // Nothing published yet: spin until the generation moves.
                spinning.push(w);
                continue;
            }
            let remaining = remaining(&cursor);
            if remaining == 0 {
                // Not joinable: it never enters the latch, so the owner does not wait for it.
                continue;
            }
            helpers += 1;
            // The helper's home cursor: its place among the helpers when it entered.
            at[w] = helpers % groups;
            last_join = last_join.max(lock_free);
            let count = to_wake(remaining, helpers, waking, sleepers);
            let go = wake(
                &mut heap,
                &mut times,
                &mut sleepers,
                &mut waking,
                count,
                lock_free,
            );
            times[w] = go;
            push(&mut heap, go, w, Event::Claim);
            continue;
        }
        first_claim[w].get_or_insert(t);
        // P2: one fetch_add on the worker's cursor line, serialized with every other claim on
        // that line.
        let g = at[w];
        let t = if ramp.peek && empty[w] > 0 {
            // A load of another cursor: it waits for the claim that holds the line, but loads
            // share the line and do not queue behind one another.
            let seen = t.max(cursor_free[g]) + m.line_ns;
            if last_claimant[g] != w {
                last_claimant[g] = usize::MAX;
            }
            let len = plan.chunks.len().saturating_sub(g).div_ceil(groups);
            if cursor[g] >= len {
                losses.claims += seen - t;
                empty[w] += 1;
                if empty[w] < groups {
                    at[w] = (g + 1) % groups;
                    times[w] = seen;
                    push(&mut heap, seen, w, Event::Claim);
                } else {
                    finish[w] = seen;
                }
                continue;
            }
            // Chunks are left: the claim follows the load.
            losses.claims += seen - t;
            seen
        } else {
            t
        };
        let transfer = if last_claimant[g] == w {
            LOCAL_ATOMIC_NS
        } else {
            m.line_ns
        };
        let done = t.max(cursor_free[g]) + transfer;
        losses.claims += done - t;
        cursor_free[g] = done;
        last_claimant[g] = w;
        let k = g + cursor[g] * groups;
        cursor[g] += 1;
        match chunk_ns.get(k) {
            Some(&work) => {
                times[w] = done + work;
                if times[w] > last_end.0 {
                    last_end = (times[w], k);
                }
                push(&mut heap, times[w], w, Event::Claim);
            }
            None => {
                // This cursor is empty: try the next, until every one has come back empty.
                empty[w] += 1;
                if empty[w] < groups {
                    at[w] = (g + 1) % groups;
                    times[w] = done;
                    push(&mut heap, done, w, Event::Claim);
                } else {
                    finish[w] = done;
                }
            }
        }
    }
    // P6: the owner waits for the last helper; past its spin it parks and must be woken.
    let owner = finish[0];
    let last_helper = finish[1..].iter().copied().fold(0.0, f64::max) + 2.0 * m.line_ns;
    let end = if last_helper <= owner {
        owner
    } else if last_helper - owner <= DRAIN_SPIN_NS {
        last_helper + m.line_ns
    } else {
        last_helper + m.unpark_ns + m.wake_ns
    };
    // Every worker's time from the end of the plan to `end`, by cause; the busy parts (claims,
    // dispatch, work) are already summed. A worker that was never woken, or joined to find
    // nothing left, counts as ramp until `end`: it never arrived.
    let plan_end = plan_start + plan_ns;
    let last_done = finish.iter().copied().fold(0.0, f64::max);
    for w in 0..p {
        match first_claim[w] {
            Some(first) => {
                losses.ramp += first - plan_end;
                losses.tail += last_done - finish[w];
            }
            None => losses.ramp += last_done - plan_end,
        }
    }
    losses.drain = p as f64 * (end - last_done);
    let accounted = losses.total() / (p as f64 * end);
    assert!(
        (accounted - 1.0).abs() < 1e-9,
        "losses must add up, got {accounted}"
    );
    let last = plan.chunks[last_end.1].clone();
    ChunkedRun {
        makespan: end,
        last_join: (last_join - plan_end).max(0.0),
        losses,
        last_chunk: (last.clone(), work_of(&last)),
    }
}

/// A rayon job: a range of items and its splitter state.
#[derive(Clone, Copy)]
struct Job {
    lo: usize,
    hi: usize,
    splits: usize,
    migrated: bool,
}

/// Makespan of rayon's adaptive splitting with `min` as `with_min_len`, on `p` workers, from
/// the caller's injection to the caller's wake-up.
fn simulate_rayon(items: &Items, p: usize, min: usize, item_ns: f64, m: &Machine) -> f64 {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Busy,
        Idle,
        Asleep,
    }
    let n = items.ns.len();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ p as u64);
    let mut deques: Vec<VecDeque<Job>> = vec![VecDeque::new(); p];
    let mut steal_free = vec![0.0f64; p];
    let mut state = vec![State::Asleep; p];
    // Events carry a per-worker generation so superseded ones are skipped.
    let mut generation = vec![0u64; p];
    let mut current: Vec<Option<Job>> = vec![None; p];
    let mut heap: BinaryHeap<Reverse<(u64, usize, u64)>> = BinaryHeap::new();
    let key = |t: f64| (t * 16.0) as u64;
    let mut times = vec![0.0f64; p];
    let mut done_items = 0usize;
    let mut end = 0.0f64;

    // The caller injects the root job and wakes one worker.
    let root = Job {
        lo: 0,
        hi: n,
        splits: p,
        migrated: false,
    };
    current[0] = Some(root);
    state[0] = State::Busy;
    times[0] = m.unpark_ns + m.wake_ns + m.line_ns;
    heap.push(Reverse((key(times[0]), 0, 0)));

    while let Some(Reverse((_, w, g))) = heap.pop() {
        if g != generation[w] {
            continue;
        }
        let mut t = times[w];
        if state[w] == State::Idle && current[w].is_none() && deques[w].is_empty() {
            // Idle: steal, or give up and sleep once the idle period has passed.
            let mut probes = 0.0;
            let start = rng.below(p);
            let victim = (0..p)
                .map(|k| (start + k) % p)
                .filter(|&v| v != w)
                .find(|&v| {
                    probes += 1.0;
                    !deques[v].is_empty()
                });
            match victim {
                Some(v) => {
                    let begin = (t + probes * m.line_ns).max(steal_free[v]);
                    let stolen_at = begin + RAYON_STEAL_LINES * m.line_ns + EPOCH_PIN_NS;
                    steal_free[v] = stolen_at;
                    let mut job = deques[v].pop_front().expect("non-empty");
                    job.migrated = true;
                    current[w] = Some(job);
                    state[w] = State::Busy;
                    times[w] = stolen_at;
                    heap.push(Reverse((key(stolen_at), w, generation[w])));
                }
                None => {
                    // Nothing to steal. Real rayon searches for some tens of µs (rounds of
                    // steal attempts and yields) before it sleeps; the model sleeps at once and
                    // is woken by the next push. At the start of a batch every worker is asleep
                    // anyway, and at its end nothing is pushed any more, so the difference
                    // hardly shows where it matters.
                    state[w] = State::Asleep;
                }
            }
            continue;
        }
        let job = match current[w].take() {
            Some(job) => job,
            None => match deques[w].pop_back() {
                Some(job) => {
                    t += LOCAL_ATOMIC_NS;
                    job
                }
                None => {
                    state[w] = State::Idle;
                    times[w] = t + m.line_ns;
                    generation[w] += 1;
                    heap.push(Reverse((key(times[w]), w, generation[w])));
                    continue;
                }
            },
        };
        // Split as rayon's LengthSplitter does, pushing right halves.
        let mut job = job;
        loop {
            let len = job.hi - job.lo;
            if len / 2 < min {
                break;
            }
            let splits = if job.migrated {
                p.max(job.splits / 2)
            } else if job.splits > 0 {
                job.splits / 2
            } else {
                break;
            };
            let mid = job.lo + len / 2;
            deques[w].push_back(Job {
                lo: mid,
                hi: job.hi,
                splits,
                migrated: false,
            });
            t += RAYON_JOIN_NS;
            job = Job {
                lo: job.lo,
                hi: mid,
                splits,
                migrated: false,
            };
            // An idle, awake worker sees the push while searching; otherwise wake a sleeper.
            if let Some(idle) = (0..p).find(|&v| state[v] == State::Idle) {
                state[idle] = State::Idle;
                times[idle] = t + m.line_ns;
                generation[idle] += 1;
                heap.push(Reverse((key(times[idle]), idle, generation[idle])));
            } else if let Some(sleeper) = (0..p).find(|&v| state[v] == State::Asleep) {
                t += m.unpark_ns;
                state[sleeper] = State::Idle;
                times[sleeper] = t + m.wake_ns;
                generation[sleeper] += 1;
                heap.push(Reverse((key(times[sleeper]), sleeper, generation[sleeper])));
            }
        }
        // The leaf: one fold over the range.
        t += (job.lo..job.hi).map(|i| items.ns[i] + item_ns).sum::<f64>();
        done_items += job.hi - job.lo;
        end = end.max(t);
        state[w] = State::Busy;
        times[w] = t;
        generation[w] += 1;
        heap.push(Reverse((key(t), w, generation[w])));
        if done_items == n {
            break;
        }
    }
    // Joins complete up the tree, then the caller's latch wakes it.
    end + m.unpark_ns + m.wake_ns
}

/// Predicted makespan of `policy` at `p` threads, scheduling only (no output assembly); the
/// chunked owner plans for `plan_ns` first.
fn makespan(policy: Policy, items: &Items, p: usize, m: &Machine, plan_ns: f64) -> f64 {
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

/// Encode time of every item: the fastest of `COST_PASSES` serial passes. The machine is shared
/// and noise only ever adds time (a neighbour's work, an interrupt, a descheduled vCPU), so the
/// minimum is the estimate least disturbed by it; a median of three still let one document read
/// 151 µs in one run and 42 µs in the next. What the minimum keeps is the real variation between
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
    fn process(&self, index: usize, sink: &mut Vec<u32>) -> Result<(), String> {
        sink.push(index as u32);
        Ok(())
    }
}

fn scheduler(policy: Policy, threads: usize) -> Scheduler {
    Scheduler::new(SchedulerConfig {
        policy,
        threads,
        ..SchedulerConfig::default()
    })
    .expect("valid")
}

/// Dispatch ns per item of `policy` at 1 thread, over a plain loop of the same pushes.
fn dispatch_ns(policy: Policy) -> f64 {
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
fn measure_wake() -> (f64, f64) {
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

/// The measured efficiencies written by `--example scheduler`.
fn read_measured() -> HashMap<(String, String, usize), f64> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmark/results/scheduler-measured.tsv"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("{path} not found: run `cargo run --release --example scheduler` first");
        return HashMap::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            Some((
                (f[0].to_owned(), f[1].to_owned(), f[2].parse().ok()?),
                f[5].parse().ok()?,
            ))
        })
        .collect()
}

/// The measured items repeated in order until their serial work reaches `target_ns`.
fn scaled(items: &Items, target_ns: f64) -> Items {
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

/// Runs of each planner when timing it; the fastest is kept (the machine is shared, and noise
/// only ever adds time).
const PLAN_RUNS: usize = 15;

/// Time the real planners take for `items` at `p` threads, on this machine: the chunked
/// policy's (`plan_cumulative`, from the running totals its texts keep) and the per-item one
/// it used before (`plan`, one pass over every item's cost).
fn plan_ns(items: &Items, p: usize) -> (f64, f64) {
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

const POLICIES: [Policy; 3] = [Policy::Chunked, Policy::Rayon, Policy::RayonMinLen];

/// One line of the chart: label, colour, dash pattern, (cores, efficiency) points.
type Series = (String, &'static str, &'static str, Vec<(usize, f64)>);

fn svg(series: &[Series]) -> String {
    let (w, h, left, right, top, bottom) = (830.0, 440.0, 60.0, 280.0, 40.0, 50.0);
    let x = |p: usize| left + (p as f64).log2() / 192f64.log2() * (w - left - right);
    let y = |e: f64| top + (1.0 - e) * (h - top - bottom);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{mid}" y="16" text-anchor="middle" font-size="14">batchtok scheduler: predicted efficiency vs cores (model)</text><text x="{mid}" y="{}" text-anchor="middle" font-size="11">1 ms of serial work per worker; {} µs wake-up, {} µs unpark; fan-out {WAKE_FANOUT}; solid: documents, dashed: short items</text>"#,
        top - 2.0,
        WAKE_LATENCY_NS / 1000.0,
        UNPARK_NS / 1000.0,
        mid = (w - right + left) / 2.0,
    );
    for e in [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0] {
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{e:.1}</text>"##,
            w - right,
            left - 6.0,
            y(e) + 4.0,
            y = y(e)
        );
    }
    for p in CHART_CORES {
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle">{p}</text>"##,
            h - bottom,
            h - bottom + 16.0,
            x = x(p)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">cores (log scale)</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">efficiency T1 / (p · Tp)</text>"#,
        (w - right + left) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    );
    for (k, (label, color, dash, points)) in series.iter().enumerate() {
        let path: Vec<String> = points
            .iter()
            .map(|&(p, e)| format!("{:.1},{:.1}", x(p), y(e.clamp(0.0, 1.0))))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
            path.join(" ")
        );
        let ly = top + 10.0 + 20.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{}">{label}</text>"#,
            w - right + 10.0,
            w - right + 40.0,
            w - right + 46.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// One predicted case: a workload scaled to `work` ns per worker at `p` cores, with the time
/// the real planners take for it here.
struct Case<'a> {
    name: &'a str,
    work: f64,
    p: usize,
    batch: Items,
    /// `plan_cumulative`, the chunked policy's planner.
    plan_ns: f64,
    /// `plan`, the per-item planner it had before.
    per_item_plan_ns: f64,
}

impl Case<'_> {
    /// A what-if: this case's chunked batch under `ramp` on `m`, and its efficiency T1 / (p · Tp).
    fn what_if(&self, m: Machine, ramp: Ramp) -> (f64, ChunkedRun) {
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
const FANOUTS: [usize; 4] = [2, 3, 4, 8];
/// Registry critical sections compared in the wake-ramp table: the code until 2026-11-24 (the
/// lock's line, the latch's, the cursor's), the code now (the lock's line, the batch's control
/// line), and a what-if where a join touches no line of the batch.
const JOIN_LINES: [f64; 3] = [3.0, 2.0, 1.0];
/// Lower clamps of the chunk target compared in the claims table (the default is 4 KiB).
const MIN_CHUNKS: [usize; 4] = [4096, 6144, 8192, 12288];

/// A column of the cursors table: its name, the cursors at `p` threads, how a join reads them,
/// and whether a claim on another cursor than the home loads it first.
type CursorChoice = (&'static str, fn(usize) -> usize, Reads, bool);

/// Claim cursors compared in the cursors table.
const CURSOR_CHOICES: [CursorChoice; 10] = [
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

fn main() {
    println!("machine: {}", corpus::machine());
    let tokenizer = Tokenizer::from_encoding("o200k_base").expect("o200k_base loads");
    // Every text timed here goes to the release-candidate engine, not to the rank engine that
    // serves an encoding's first texts while it is built.
    batchtok::engine::openai::find("o200k_base")
        .and_then(|encoding| encoding.model.wait_for_full_engine())
        .expect("o200k_base's engine builds");
    let text = corpus::big_txt();
    let workloads = corpus::workloads(&text);

    let (wake_measured, unpark_measured) = measure_wake();
    let base = Machine {
        line_ns: LINE_SAME_SOCKET_NS,
        wake_ns: WAKE_LATENCY_NS,
        unpark_ns: UNPARK_NS,
        chunked_item_ns: dispatch_ns(Policy::Chunked),
        rayon_item_ns: dispatch_ns(Policy::Rayon),
        rayon_min_len_item_ns: dispatch_ns(Policy::RayonMinLen),
    };
    println!(
        "\nmeasured here: wake-up latency {:.1} µs (one way, park/unpark ping-pong), unpark call {:.2} µs; \
         dispatch per item at 1 thread: chunked {:.1} ns, rayon {:.1} ns, rayon-min-len {:.1} ns",
        wake_measured / 1e3,
        unpark_measured / 1e3,
        base.chunked_item_ns,
        base.rayon_item_ns,
        base.rayon_min_len_item_ns
    );

    // Item costs and the output assembly, measured on the real workloads.
    let mut measured_items = Vec::new();
    for workload in &workloads {
        let ns = measure_item_ns(&tokenizer, &workload.items);
        let texts = corpus::texts(&workload.items);
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let s = scheduler(Policy::Serial, 1);
        let assembly: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                black_box(encode_all(&s, &tokenizer, &texts, &mode, &CancelToken::new()).ok());
                let total = t.elapsed().as_nanos() as f64;
                (total - s.last_stats().unwrap().wall_ns as f64).max(0.0)
            })
            .collect();
        let items = Items::new(workload.items.iter().map(String::len).collect(), ns);
        let (plan_now, plan_before) = plan_ns(&items, 2);
        println!(
            "{}: {} items ({:.2} MiB), serial work {:.1} ms ({:.1} µs/item, max {:.1} ms, {:.2} ns/B), assembly {:.2} ms, plan at 2 threads {:.1} µs (per-item planner: {:.1} µs)",
            workload.name,
            items.ns.len(),
            workload.bytes() as f64 / (1 << 20) as f64,
            items.work_ns() / 1e6,
            items.work_ns() / items.ns.len() as f64 / 1e3,
            items.ns.iter().copied().fold(0.0, f64::max) / 1e6,
            items.work_ns() / workload.bytes() as f64,
            corpus::median(&assembly) / 1e6,
            plan_now / 1e3,
            plan_before / 1e3,
        );
        measured_items.push((workload.name, items, corpus::median(&assembly)));
    }

    // Validation at 1 and 2 threads: end-to-end as `--example scheduler` measures it (plan,
    // scheduling, then the serial output assembly), with this VM's measured wake-up.
    let measured = read_measured();
    let vm = Machine {
        wake_ns: wake_measured,
        unpark_ns: unpark_measured,
        ..base
    };
    println!("\n### Validation (model with this VM's measured wake-up vs measured medians)\n");
    println!(
        "| workload | policy | threads | predicted | measured | measured static ceiling | measured / ceiling |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    for (name, items, assembly) in &measured_items {
        let t1 = items.work_ns() + assembly;
        let ceiling = measured
            .get(&(name.to_string(), "static (ceiling)".to_owned(), 2))
            .copied();
        for policy in POLICIES {
            for p in [1, 2] {
                let tp = makespan(policy, items, p, &vm, plan_ns(items, p).0) + assembly;
                let predicted = t1 / (p as f64 * tp);
                let got = measured
                    .get(&(name.to_string(), policy.to_string(), p))
                    .copied();
                let ceil = if p == 2 { ceiling } else { Some(1.0) };
                let fmt = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.3}"));
                println!(
                    "| {name} | {policy} | {p} | {predicted:.3} | {} | {} | {} |",
                    fmt(got),
                    fmt(ceil),
                    fmt(got.zip(ceil).map(|(g, c)| g / c))
                );
            }
        }
    }

    // The predicted cases: the measured items repeated until every worker has the given serial
    // work, each planned by the real planners at its own thread count.
    let mut cases = Vec::new();
    for (name, items, _) in measured_items.iter().take(2) {
        for work in WORK_PER_WORKER_NS {
            for p in PREDICT_CORES {
                let batch = scaled(items, work * p as f64);
                let (plan_ns, per_item_plan_ns) = plan_ns(&batch, p);
                cases.push(Case {
                    name,
                    work,
                    p,
                    batch,
                    plan_ns,
                    per_item_plan_ns,
                });
            }
        }
    }
    println!("\n### Plan time on this machine (the owner's serial work before the publish)\n");
    println!(
        "| workload | work per worker | cores | items | per-item planner (before) | planner from running totals (now) | chunks |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for c in &cases {
        let params = default_plan_params(c.p);
        println!(
            "| {} | {:.0} ms | {} | {} | {:.1} µs | {:.1} µs | {} |",
            c.name,
            c.work / 1e6,
            c.p,
            c.batch.ns.len(),
            c.per_item_plan_ns / 1e3,
            c.plan_ns / 1e3,
            plan_cumulative(&c.batch.ends, &params).chunks.len(),
        );
    }

    for m in [base, vm] {
        let label = if m.wake_ns == base.wake_ns && m.unpark_ns == base.unpark_ns {
            "assumed server"
        } else {
            "this VM's measured"
        };
        println!(
            "\n### Predicted scheduling efficiency, {label} wake-up ({:.1} µs latency, {:.1} µs unpark)\n",
            m.wake_ns / 1e3,
            m.unpark_ns / 1e3
        );
        println!(
            "| workload | work per worker | cores | items | chunked | rayon | rayon-min-len | chunked, per-item plan (before) | where chunked's p · Tp goes (%): plan, ramp, claims, dispatch, tail, drain; last join; the chunk that ends last |"
        );
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
        for c in &cases {
            let t1 = c.batch.work_ns();
            let eff = |tp: f64| t1 / (c.p as f64 * tp);
            let cells: Vec<String> = POLICIES
                .iter()
                .map(|&policy| {
                    format!("{:.3}", eff(makespan(policy, &c.batch, c.p, &m, c.plan_ns)))
                })
                .collect();
            let mp = m.with_cores(c.p);
            let run = simulate_chunked(&c.batch, c.p, &mp, RAMP, c.plan_ns);
            let before = simulate_chunked(&c.batch, c.p, &mp, RAMP, c.per_item_plan_ns);
            let l = run.losses;
            let pct = |x: f64| 100.0 * x / l.total();
            let (last, last_ns) = &run.last_chunk;
            let last_bytes = c.batch.ends[last.end - 1]
                - last.start.checked_sub(1).map_or(0, |i| c.batch.ends[i]);
            let mean_ns_per_byte = t1 / *c.batch.ends.last().unwrap() as f64;
            println!(
                "| {} | {:.0} ms | {} | {} | {} | {:.3} | {:.1}, {:.1}, {:.1}, {:.1}, {:.1}, {:.1}; {:.0} µs; items {:?}, {:.0} µs, {:.1}x the batch's ns/B |",
                c.name,
                c.work / 1e6,
                c.p,
                c.batch.ns.len(),
                cells.join(" | "),
                eff(before.makespan),
                pct(l.plan),
                pct(l.ramp),
                pct(l.claims),
                pct(l.dispatch),
                pct(l.tail),
                pct(l.drain),
                run.last_join / 1e3,
                last,
                last_ns / 1e3,
                last_ns / last_bytes.max(1) as f64 / mean_ns_per_byte,
            );
        }

        // The wake ramp: fan-out and the registry's critical section, at 1 ms per worker.
        println!(
            "\n#### Wake ramp, {label} wake-up: chunked efficiency (last join, µs) by fan-out, 1 ms per worker\n"
        );
        let header: Vec<String> = FANOUTS.iter().map(|f| format!("fan-out {f}")).collect();
        println!(
            "| workload | cores | registry lines | pre-wake | {} |",
            header.join(" | ")
        );
        println!(
            "| --- | ---: | ---: | --- |{}",
            " ---: |".repeat(FANOUTS.len())
        );
        for c in cases
            .iter()
            .filter(|c| c.work == WORK_PER_WORKER_NS[0] && c.p >= 64)
        {
            for lines in JOIN_LINES {
                for prewake in [false, true] {
                    let cells: Vec<String> = FANOUTS
                        .iter()
                        .map(|&fanout| {
                            let ramp = Ramp {
                                fanout,
                                registry_lines: lines,
                                prewake,
                                ..RAMP
                            };
                            let (efficiency, run) = c.what_if(m, ramp);
                            format!("{efficiency:.3} ({:.0})", run.last_join / 1e3)
                        })
                        .collect();
                    println!(
                        "| {} | {} | {lines} | {} | {} |",
                        c.name,
                        c.p,
                        if prewake { "yes" } else { "no" },
                        cells.join(" | ")
                    );
                }
            }
        }

        // The claims: the lower clamp of the chunk target, at 1 ms per worker.
        println!(
            "\n#### Claims, {label} wake-up: chunked efficiency by the chunk target's lower clamp, 1 ms per worker\n"
        );
        println!(
            "| workload | cores |{}",
            MIN_CHUNKS
                .iter()
                .map(|b| format!(" min {} KiB |", b / 1024))
                .collect::<String>()
        );
        println!("| --- | ---: |{}", " ---: |".repeat(MIN_CHUNKS.len()));
        for c in cases
            .iter()
            .filter(|c| c.work == WORK_PER_WORKER_NS[0] && c.p >= 64)
        {
            let cells: Vec<String> = MIN_CHUNKS
                .iter()
                .map(|&min| {
                    let ramp = Ramp {
                        min_chunk: Some(min),
                        ..RAMP
                    };
                    let (efficiency, run) = c.what_if(m, ramp);
                    let l = run.losses;
                    format!(
                        "{efficiency:.3} ({:.1}, {:.1})",
                        100.0 * l.claims / l.total(),
                        100.0 * l.tail / l.total()
                    )
                })
                .collect();
            println!("| {} | {} | {} |", c.name, c.p, cells.join(" | "));
        }

        // The claims: cursors per batch, at 1 ms per worker.
        println!(
            "\n#### Claims, {label} wake-up: chunked efficiency (claims, ramp, tail % of p · Tp; last join µs) by claim cursors, 1 ms per worker\n"
        );
        println!(
            "| workload | cores |{}",
            CURSOR_CHOICES
                .iter()
                .map(|(name, ..)| format!(" {name} |"))
                .collect::<String>()
        );
        println!("| --- | ---: |{}", " ---: |".repeat(CURSOR_CHOICES.len()));
        for c in cases.iter().filter(|c| c.work == WORK_PER_WORKER_NS[0]) {
            let cells: Vec<String> = CURSOR_CHOICES
                .iter()
                .map(|&(_, cursors, reads, peek)| {
                    let ramp = Ramp {
                        cursors,
                        reads,
                        peek,
                        ..RAMP
                    };
                    let (efficiency, run) = c.what_if(m, ramp);
                    let l = run.losses;
                    format!(
                        "{efficiency:.3} ({:.1}, {:.1}, {:.1}; {:.0})",
                        100.0 * l.claims / l.total(),
                        100.0 * l.ramp / l.total(),
                        100.0 * l.tail / l.total(),
                        run.last_join / 1e3
                    )
                })
                .collect();
            println!("| {} | {} | {} |", c.name, c.p, cells.join(" | "));
        }
    }

    // The chart: the server assumptions, 1 ms per worker, documents and short items.
    let colors = [
        (Policy::Chunked, "#1f77b4"),
        (Policy::Rayon, "#d62728"),
        (Policy::RayonMinLen, "#2ca02c"),
    ];
    let mut series = Vec::new();
    for (k, (name, items, _)) in measured_items.iter().take(2).enumerate() {
        let dash = if k == 0 { "" } else { "6 4" };
        let batches: Vec<(usize, Items, (f64, f64))> = CHART_CORES
            .iter()
            .map(|&p| {
                let batch = scaled(items, WORK_PER_WORKER_NS[0] * p as f64);
                let plans = plan_ns(&batch, p);
                (p, batch, plans)
            })
            .collect();
        for (policy, color) in colors {
            let points = batches
                .iter()
                .map(|(p, batch, (plan_now, _))| {
                    let tp = makespan(policy, batch, *p, &base, *plan_now);
                    (*p, batch.work_ns() / (*p as f64 * tp))
                })
                .collect();
            series.push((format!("{policy}, {name}"), color, dash, points));
        }
        // The per-item planner chunked had before, as a baseline.
        let points = batches
            .iter()
            .map(|(p, batch, (_, plan_before))| {
                let tp = makespan(Policy::Chunked, batch, *p, &base, *plan_before);
                (*p, batch.work_ns() / (*p as f64 * tp))
            })
            .collect();
        series.push((
            format!("per-item plan (before), {name}"),
            "#999999",
            dash,
            points,
        ));
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmark/results/scheduler-scaling.svg"
    );
    std::fs::write(path, svg(&series)).expect("write the chart");
    println!("\nchart written to {path}");
}
