//! The chunked policy as modelled.
//!
//! The plan is `batchtok::scheduler::plan::plan_cumulative`, the real planner, and the owner
//! spends the measured plan time before publishing. It then publishes, wakes up to
//! `WAKE_FANOUT` sleepers and claims at once; every joining helper takes the registry lock
//! (`REGISTRY_LINES` line transfers, serialized with every other publish and join) and wakes up
//! to `WAKE_FANOUT` more, as many as the job wants helpers beyond those already woken (P1, P3,
//! P5 of `src/scheduler/README.md`), so helpers arrive as a tree. The plan is dealt to
//! `claim_cursors(p)` cursors, as the code deals it (one up to 64 cores, else one per 32); a
//! participant claims from its home cursor (the owner 0, a helper its place among the helpers
//! mod G), then from the others in turn, each until it comes back empty once (P2). Participants
//! are not pinned, so every transfer costs the mean over the `p` cores, as elsewhere. A claim is
//! one `fetch_add` on its cursor's line: claims on one line are serialized, each costing one
//! line transfer when the previous claimant was another core. A join reads cursor 0 on the
//! control line, and the other cursors one after another only while the chunks counted do not
//! exceed the helper cap, as `JobControl::joinable` does; each read waits for the claims
//! queued on its line. The owner spins, then parks, until its last helper leaves (P6). Every
//! worker's time is accounted for ([`Losses`]): plan, ramp, claims, dispatch, work, tail, drain.
//! Baseline: the same with the per-item planner's time (`chunked, per-item plan (before)`).
//! The wake-ramp table varies the fan-out (2, 3, 4, 8) and the registry's critical section; the
//! cursors table, the number of cursors and how a join reads them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use batchtok::scheduler::plan::plan_cumulative;
use batchtok::scheduler::{WAKE_FANOUT, claim_cursors};

use super::{DRAIN_SPIN_NS, Items, LOCAL_ATOMIC_NS, Machine, REGISTRY_LINES, default_plan_params};

/// How helpers arrive in the model of the chunked policy (P1, P3, P5).
#[derive(Clone, Copy)]
pub struct Ramp {
    /// Most sleepers one publish or one join wakes: `WAKE_FANOUT` is batchtok's rule.
    pub fanout: usize,
    /// Line transfers of one registry critical section (publish or join), serialized.
    pub registry_lines: f64,
    /// What-if: the owner wakes up to `fanout` sleepers before it plans; they search, find
    /// nothing, and spin until the publish.
    pub prewake: bool,
    /// What-if: the lower clamp of the chunk target, if not the default.
    pub min_chunk: Option<usize>,
    /// Claim cursors of a batch at `p` threads (P2): chunk k is claimed through cursor k mod G.
    pub cursors: fn(usize) -> usize,
    /// How a join reads the cursors' lines.
    pub reads: Reads,
    /// A claim on a cursor other than the worker's home first loads it and skips it if it is
    /// empty, rather than always `fetch_add`ing.
    pub peek: bool,
}

/// How a join (under the registry lock) reads a batch's cursors to tell how many chunks are
/// left.
#[derive(Clone, Copy, PartialEq)]
pub enum Reads {
    /// What-if: every cursor, the loads all in flight at once.
    Parallel,
    /// What-if: every cursor, one after another.
    Serial,
    /// In order from cursor 0 (on the control line), one after another, stopping once the
    /// cursors read hold more chunks than the helper cap can use (`JobControl::joinable`).
    Lazy,
}

/// batchtok's wake rule as the code has it.
pub const RAMP: Ramp = Ramp {
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
pub struct Losses {
    /// Every worker idle while the owner plans (the helpers are not woken yet).
    pub plan: f64,
    /// From the publish to a worker's first claim: wake-up latency, waiting for and holding the
    /// registry lock, and the `unpark` calls the worker makes for the tree (the owner's too).
    pub ramp: f64,
    /// Claims: one line transfer each, plus waiting while another core holds the cursor.
    pub claims: f64,
    /// The policy's per-item dispatch cost.
    pub dispatch: f64,
    /// Encoding: the batch's serial work.
    pub work: f64,
    /// From a worker's last chunk to the end of the last chunk anyone runs (imbalance).
    pub tail: f64,
    /// From the end of the last chunk to the owner returning: the last helper's leave, and the
    /// owner's wake-up if it had parked (P6), for every worker.
    pub drain: f64,
}

impl Losses {
    pub fn total(&self) -> f64 {
        self.plan + self.ramp + self.claims + self.dispatch + self.work + self.tail + self.drain
    }
}

/// One modelled chunked batch.
pub struct ChunkedRun {
    /// Makespan, from the start of the plan to the owner returning.
    pub makespan: f64,
    /// When the last helper joined, after the publish.
    pub last_join: f64,
    pub losses: Losses,
    /// The chunk that ended last: its items, and its encode time.
    pub last_chunk: (std::ops::Range<usize>, f64),
}

/// The chunked policy at `p` threads: the owner plans for `plan_ns` (measured by the caller on
/// the real planner), publishes and claims; helpers arrive as `ramp` says.
pub fn simulate_chunked(
    items: &Items,
    p: usize,
    m: &Machine,
    ramp: Ramp,
    plan_ns: f64,
) -> ChunkedRun {
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
