//! The chunk planner: a pure function from item costs, a thread count and the chunking
//! tunables to the list of chunks the chunked policy hands out, in claim order.
//!
//! The plan combines two classic rules:
//!
//! * **Heavy items first, largest first.** Any item whose weight exceeds the initial chunk
//!   target becomes a chunk of its own, and these chunks are claimed first in decreasing weight:
//!   Graham's *Longest Processing Time first* rule (R. L. Graham, "Bounds on Multiprocessing
//!   Timing Anomalies", SIAM J. Appl. Math. 17(2), 1969), which bounds the makespan at 4/3 of
//!   optimal and, more to the point, keeps a huge item from starting last.
//! * **Guided, shrinking chunks for the rest.** The remaining items are cut, in index order,
//!   into contiguous ranges whose target weight is `remaining / (k * threads)` clamped to
//!   `[min, max]`: guided self-scheduling (C. D. Polychronopoulos and D. J. Kuck, "Guided
//!   Self-Scheduling: A Practical Scheduling Scheme for Parallel Supercomputers", IEEE Trans.
//!   Computers 36(12), 1987) for `k = 1`, and close to factoring (S. F. Hummel, E. Schonberg,
//!   L. E. Flynn, "Factoring: A Method for Scheduling Parallel Loops", CACM 35(8), 1992) for
//!   `k = 2`. Early chunks are large (few claims), late ones small, so workers finish together.
//!
//! Weights are `cost + ITEM_OVERHEAD_BYTES`.
//!
//! # Invariants
//!
//! * The plan is a function of the costs and [`PlanParams`] alone: [`plan`] (costs item by item)
//!   and [`plan_cumulative`] (running totals of the costs) return the same [`Plan`] for the same
//!   costs (a property test compares them), so which one a batch gets changes nothing but time.
//! * Sorted by start, the chunks tile `0..len`; heavy chunks are single items, light chunks never
//!   contain a heavy item; a light chunk ends at the first item where its weight reaches its
//!   target, or at a heavy item, or at the end of the batch.
//!
//! # Cost
//!
//! The planner runs on the submitting thread before any helper is woken, so all of it is serial.
//! [`plan`] calls `cost` at most twice per item: O(n), which for a large batch of short texts on
//! many cores is a noticeable share of the batch. [`plan_cumulative`] never visits every item:
//!
//! * the total weight is one read of the running total;
//! * heavy items are found by bisecting `0..n`, not entering any range whose weight is at most
//!   the heavy threshold `T` (it cannot hold an item heavier than itself): the ranges entered at
//!   one depth are children of disjoint ranges heavier than `T`, so there are fewer than
//!   `2 W / T` of them, which is `2 k p` unless the `max` clamp lowers `T`; O(p log n) reads;
//! * each light chunk's end is found by galloping from a guess (the previous chunk's length)
//!   and bisecting: O(log d) reads, all near the guess, for a guess d items off; there are
//!   O(k p log(W / (k p min)) + k p) light chunks.
//!
//! So its time grows with the number of chunks, not of items
//! (`benchmark/results/scheduler.md#plan-time` times both planners). Both allocate only the
//! output plus the list of heavy items.

use std::ops::Range;

use super::config::SchedulerConfig;

/// Fixed weight added to every item's byte cost. Per-item work that does not scale with length
/// (building an encoding, setting up normalization) costs about as much as tokenizing a few
/// dozen bytes; counting it also keeps a batch of empty strings from collapsing into one chunk.
pub const ITEM_OVERHEAD_BYTES: usize = 64;

/// The planner's inputs besides the costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanParams {
    /// Threads expected to share the batch (`p`).
    pub threads: usize,
    /// Lower clamp of the chunk target, in weight units (bytes).
    pub min_chunk: usize,
    /// Upper clamp of the chunk target.
    pub max_chunk: usize,
    /// `k` in `remaining / (k * p)`.
    pub divisor: usize,
}

impl PlanParams {
    /// Parameters for a validated config: guided between the clamps, or a fixed target when
    /// `chunk_bytes` is set.
    pub fn from_config(config: &SchedulerConfig) -> Self {
        let (min_chunk, max_chunk) = match config.chunk_bytes {
            Some(fixed) => (fixed, fixed),
            None => (config.min_chunk_bytes, config.max_chunk_bytes),
        };
        PlanParams {
            threads: config.threads,
            min_chunk,
            max_chunk,
            divisor: config.guided_divisor,
        }
    }

    /// Target weight of the next light chunk when `remaining` light weight is left.
    pub fn target(&self, remaining: usize) -> usize {
        let share = remaining.div_ceil(self.divisor.max(1).saturating_mul(self.threads.max(1)));
        let min = self.min_chunk.max(1);
        share.clamp(min, self.max_chunk.max(min))
    }
}

/// The chunks of one batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Chunks in claim order: `heavy` single-item chunks by decreasing weight, then light
    /// ranges in increasing index order. Sorted by start they tile `0..len`.
    pub chunks: Vec<Range<usize>>,
    /// How many leading chunks are heavy items.
    pub heavy: usize,
    /// Items with a weight above this are heavy (the initial guided target).
    pub heavy_threshold: usize,
    /// Sum of `cost` over all items.
    pub total_bytes: usize,
    /// Sum of weights (`cost + ITEM_OVERHEAD_BYTES`) over all items.
    pub total_weight: usize,
}

/// Weight of an item of estimated cost `cost`.
pub fn weight(cost: usize) -> usize {
    cost.saturating_add(ITEM_OVERHEAD_BYTES)
}

/// Plans a batch of `len` items whose estimated costs `cost(i)` returns: the per-item planner,
/// for batches that cannot tell the cost of a range of items at once. Two passes over the items.
pub fn plan(len: usize, cost: impl Fn(usize) -> usize, params: &PlanParams) -> Plan {
    // Pass 1: totals, and every item that could be heavy. The heavy threshold is at least
    // `min_chunk`, so only items above it need remembering.
    let mut total_bytes = 0usize;
    let mut total_weight = 0usize;
    let mut heavy: Vec<(usize, usize)> = Vec::new();
    for i in 0..len {
        let c = cost(i);
        let w = weight(c);
        total_bytes = total_bytes.saturating_add(c);
        total_weight = total_weight.saturating_add(w);
        if w > params.min_chunk {
            heavy.push((i, w));
        }
    }
    let heavy_threshold = params.target(total_weight);
    heavy.retain(|&(_, w)| w > heavy_threshold);
    let mut plan = Plan::with_heavy(&heavy, heavy_threshold, total_bytes, total_weight);

    // Pass 2: cut the light items between heavy ones into guided chunks, in index order.
    let mut remaining = plan.light_weight(&heavy);
    let mut heavy_indices = heavy.iter().map(|&(i, _)| i).peekable();
    let mut i = 0;
    while i < len {
        if heavy_indices.peek() == Some(&i) {
            heavy_indices.next();
            i += 1;
            continue;
        }
        let segment_end = heavy_indices.peek().copied().unwrap_or(len);
        let target = params.target(remaining);
        let start = i;
        let mut acc = 0usize;
        while i < segment_end && acc < target {
            acc = acc.saturating_add(weight(cost(i)));
            i += 1;
        }
        remaining = remaining.saturating_sub(acc);
        plan.chunks.push(start..i);
    }
    plan
}

/// Plans a batch from the running totals of its costs (`ends[i]` = `cost(0) + … + cost(i)`,
/// non-decreasing, one per item): the same [`Plan`] as [`plan`] gives for those costs, without a
/// pass over the items. It reads O(p log n) of the totals, p = `params.threads`, n = items
/// (see the module docs); a batch of texts in one buffer has them as its end offsets.
pub fn plan_cumulative(ends: &[usize], params: &PlanParams) -> Plan {
    plan_by_prefix(
        ends.len(),
        |end| if end == 0 { 0 } else { ends[end - 1] },
        params,
    )
}

/// The running totals [`plan_cumulative`] takes, from per-item costs: `totals[i]` = `costs[0] +
/// … + costs[i]`. For batches that hold costs item by item (tests, benchmarks); batches of texts
/// have the totals already, as their end offsets.
pub fn running_totals(costs: &[usize]) -> Vec<usize> {
    costs
        .iter()
        .scan(0usize, |total, &cost| {
            *total += cost;
            Some(*total)
        })
        .collect()
}

/// [`plan_cumulative`] with the totals behind a function: `bytes_before(end)` is the summed
/// cost of items `0..end`, for `end` in `0..=len`.
fn plan_by_prefix(len: usize, bytes_before: impl Fn(usize) -> usize, params: &PlanParams) -> Plan {
    // Summed weight of items `0..end`. Weights are at least `ITEM_OVERHEAD_BYTES`, so this is
    // strictly increasing, which the searches below rely on.
    let before =
        |end: usize| bytes_before(end).saturating_add(end.saturating_mul(ITEM_OVERHEAD_BYTES));
    let total_bytes = bytes_before(len);
    let total_weight = before(len);
    let heavy_threshold = params.target(total_weight);
    let mut heavy: Vec<(usize, usize)> = Vec::new();
    find_heavy(
        &before,
        0,
        len,
        0,
        total_weight,
        heavy_threshold,
        &mut heavy,
    );
    let mut plan = Plan::with_heavy(&heavy, heavy_threshold, total_bytes, total_weight);

    // The light items between heavy ones, cut where the running weight first reaches the target.
    let mut remaining = plan.light_weight(&heavy);
    // The length of the chunk cut last guesses the next one's: targets shrink by a factor
    // `1 - 1 / (k p)` per chunk and neighbouring items tend to be alike, so it is close. (Scaling
    // it by the targets' ratio guesses better but costs more: a division in every chunk's
    // dependency chain, slower than the reads it saves; `benchmark/results/scheduler.md#plan-time`.)
    let mut last_len = 1;
    let mut start = 0;
    let segment_ends = heavy.iter().map(|&(i, _)| i).chain(std::iter::once(len));
    for segment_end in segment_ends {
        let mut at = before(start);
        while start < segment_end {
            let goal = at.saturating_add(params.target(remaining));
            let end = first_reaching(&before, start, segment_end, goal, start + last_len);
            let next = before(end);
            last_len = end - start;
            remaining = remaining.saturating_sub(next - at);
            plan.chunks.push(start..end);
            (start, at) = (end, next);
        }
        // Skip the heavy item that ends the segment (past the last segment this is `len + 1`).
        start = segment_end + 1;
    }
    plan
}

/// Appends to `heavy`, in index order, every item of `start..end` whose weight exceeds
/// `threshold`, as `(index, weight)`; `from` and `to` are `before(start)` and `before(end)`.
/// A range that weighs no more than the threshold holds no heavy item and is not entered, so
/// each level of the recursion enters fewer than `2 * total / threshold` ranges (their parents
/// are disjoint and each weighs more than the threshold), ~`2 k p` ranges at most.
fn find_heavy(
    before: &impl Fn(usize) -> usize,
    start: usize,
    end: usize,
    from: usize,
    to: usize,
    threshold: usize,
    heavy: &mut Vec<(usize, usize)>,
) {
    if to - from <= threshold {
        return;
    }
    if end - start == 1 {
        heavy.push((start, to - from));
        return;
    }
    let mid = start + (end - start) / 2;
    let at_mid = before(mid);
    find_heavy(before, start, mid, from, at_mid, threshold, heavy);
    find_heavy(before, mid, end, at_mid, to, threshold, heavy);
}

/// The first `end` in `start + 1..=limit` with `before(end) >= goal`, or `limit` if there is
/// none: where a chunk starting at `start` reaches its target weight (`before(start) < goal`).
/// Starts at `guess`, gallops away from it (1, 2, 4, … items) until the answer is bracketed,
/// then bisects: a guess d items off costs O(log d) reads, all near the guess, so a chunk costs
/// a few reads of one or two cache lines of the totals however many items it holds.
fn first_reaching(
    before: &impl Fn(usize) -> usize,
    start: usize,
    limit: usize,
    goal: usize,
    guess: usize,
) -> usize {
    // Invariant: `before(below) < goal`, and `above` reaches the goal or is `limit`.
    let guess = guess.clamp(start + 1, limit);
    let (mut below, mut above);
    let mut step = 1usize;
    if before(guess) >= goal {
        (below, above) = (start, guess);
        while let Some(probe) = above.checked_sub(step).filter(|&probe| probe > start) {
            if before(probe) < goal {
                below = probe;
                break;
            }
            above = probe;
            step = step.saturating_mul(2);
        }
    } else {
        (below, above) = (guess, limit);
        loop {
            let probe = below.saturating_add(step);
            if probe >= limit {
                break;
            }
            if before(probe) >= goal {
                above = probe;
                break;
            }
            below = probe;
            step = step.saturating_mul(2);
        }
    }
    while above - below > 1 {
        let mid = below + (above - below) / 2;
        if before(mid) >= goal {
            above = mid;
        } else {
            below = mid;
        }
    }
    above
}

impl Plan {
    /// A plan holding only the heavy chunks: `heavy` is every heavy item as `(index, weight)`
    /// in index order; they are claimed heaviest first (index order on ties).
    fn with_heavy(
        heavy: &[(usize, usize)],
        heavy_threshold: usize,
        total_bytes: usize,
        total_weight: usize,
    ) -> Plan {
        let mut by_weight = heavy.to_vec();
        by_weight.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut chunks: Vec<Range<usize>> = Vec::with_capacity(heavy.len() + 16);
        chunks.extend(by_weight.iter().map(|&(i, _)| i..i + 1));
        Plan {
            chunks,
            heavy: heavy.len(),
            heavy_threshold,
            total_bytes,
            total_weight,
        }
    }

    /// The weight left for light chunks once the `heavy` items are set aside.
    fn light_weight(&self, heavy: &[(usize, usize)]) -> usize {
        let heavy_weight = heavy
            .iter()
            .fold(0usize, |acc, &(_, w)| acc.saturating_add(w));
        self.total_weight.saturating_sub(heavy_weight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::testing::{case_count, random_costs};

    fn params(threads: usize) -> PlanParams {
        PlanParams {
            threads,
            min_chunk: 4096,
            max_chunk: 256 * 1024,
            divisor: 2,
        }
    }

    /// Checks every structural property of `plan` against `costs`.
    fn check(costs: &[usize], p: &PlanParams, plan: &Plan) {
        let w = |i: usize| weight(costs[i]);
        // Tiling.
        let mut sorted = plan.chunks.clone();
        sorted.sort_by_key(|r| r.start);
        let mut next = 0;
        for r in &sorted {
            assert_eq!(r.start, next, "gap or overlap at {next}");
            assert!(r.end > r.start, "empty chunk");
            next = r.end;
        }
        assert_eq!(next, costs.len());
        assert_eq!(plan.total_bytes, costs.iter().sum::<usize>());
        // Heavy chunks: single items above the threshold, heaviest first.
        let heavy = &plan.chunks[..plan.heavy];
        for pair in heavy.windows(2) {
            assert!(
                w(pair[0].start) >= w(pair[1].start),
                "heavy chunks not largest first"
            );
        }
        for r in heavy {
            assert_eq!(r.len(), 1);
            assert!(w(r.start) > plan.heavy_threshold);
        }
        // Light chunks: in index order, no heavy item inside, guided sizes.
        let light = &plan.chunks[plan.heavy..];
        let heavy_weight: usize = heavy.iter().map(|r| w(r.start)).sum();
        let mut remaining = plan.total_weight - heavy_weight;
        let mut last_target = usize::MAX;
        for (j, r) in light.iter().enumerate() {
            if j > 0 {
                assert!(
                    light[j - 1].end <= r.start,
                    "light chunks out of index order"
                );
            }
            let target = p.target(remaining);
            assert!(target <= last_target, "targets must shrink");
            last_target = target;
            let chunk_weight: usize = r.clone().map(w).sum();
            assert!(
                r.clone().all(|i| w(i) <= plan.heavy_threshold),
                "heavy item in a light chunk"
            );
            // Cut as soon as the target is reached ...
            assert!(
                chunk_weight - w(r.end - 1) < target,
                "chunk {r:?} overshoots"
            );
            // ... and never earlier, unless a heavy item or the end of the batch follows.
            let at_segment_end = r.end == costs.len() || w(r.end) > plan.heavy_threshold;
            assert!(
                chunk_weight >= target || at_segment_end,
                "chunk {r:?} cut early"
            );
            remaining -= chunk_weight;
        }
        assert_eq!(remaining, 0);
    }

    #[test]
    fn empty_and_single() {
        let p = params(2);
        let plan = plan(0, |_| 0, &p);
        assert!(plan.chunks.is_empty());
        assert_eq!(plan_cumulative(&[], &p), plan);
        let one = super::plan(1, |_| 10_000_000, &p);
        assert_eq!(one.chunks, vec![0..1]);
    }

    #[test]
    fn random_plans_hold_invariants() {
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9);
        for _ in 0..case_count(200, 3) {
            let n = rng.usize(0..if cfg!(miri) { 200 } else { 5000 });
            let costs = random_costs(&mut rng, n);
            for threads in [1, 2, 3, 8, 64] {
                let mut p = params(threads);
                if rng.bool() {
                    let fixed = rng.usize(1..20_000);
                    p.min_chunk = fixed;
                    p.max_chunk = fixed;
                }
                p.divisor = rng.usize(1..4);
                let plan = plan(n, |i| costs[i], &p);
                check(&costs, &p, &plan);
            }
        }
    }

    /// Costs drawn from a few values around the chunk clamps, so that item weights equal to a
    /// heavy threshold or a chunk target (the boundaries of every comparison) are common.
    fn tied_costs(rng: &mut fastrand::Rng, n: usize) -> Vec<usize> {
        const VALUES: [usize; 6] = [0, 36, 936, 4032, 4033, 262_080];
        (0..n).map(|_| VALUES[rng.usize(..VALUES.len())]).collect()
    }

    #[test]
    fn cumulative_plans_equal_per_item_plans() {
        let mut rng = fastrand::Rng::with_seed(0x2545_f491);
        for case in 0..case_count(300, 4) {
            let n = rng.usize(0..if cfg!(miri) { 200 } else { 5000 });
            let costs = if case % 3 == 0 {
                tied_costs(&mut rng, n)
            } else {
                random_costs(&mut rng, n)
            };
            let ends = running_totals(&costs);
            for threads in [1, 2, 3, 8, 64, 192] {
                let mut p = params(threads);
                if rng.bool() {
                    let fixed = rng.usize(1..20_000);
                    p.min_chunk = fixed;
                    p.max_chunk = fixed;
                } else if rng.bool() {
                    p.min_chunk = rng.usize(0..8192);
                    p.max_chunk = rng.usize(p.min_chunk..300_000);
                }
                p.divisor = rng.usize(1..4);
                let expected = plan(n, |i| costs[i], &p);
                let got = plan_cumulative(&ends, &p);
                assert_eq!(got, expected, "{n} items, {p:?}");
                check(&costs, &p, &got);
            }
        }
    }

    #[test]
    fn cumulative_plans_read_few_totals() {
        // 1 ms of short texts per worker at 192 cores: ~100,000 items, a few heavy ones.
        let n = case_count(100_000, 2_000);
        let mut costs = vec![140; n];
        for i in [7, n / 3, n - 1] {
            costs[i] = 1 << 20;
        }
        let ends = running_totals(&costs);
        let p = params(192);
        let reads = std::cell::Cell::new(0usize);
        let got = plan_by_prefix(
            n,
            |end| {
                reads.set(reads.get() + 1);
                if end == 0 { 0 } else { ends[end - 1] }
            },
            &p,
        );
        assert_eq!(got, plan(n, |i| costs[i], &p));
        assert_eq!(got.heavy, 3);
        // Heavy search: fewer than 2 W / T ranges per level, two reads each at most; light
        // chunks: a gallop and a bisection each.
        let levels = usize::BITS - n.leading_zeros();
        let per_level = 2 * got.total_weight / got.heavy_threshold + 2;
        let bound = 2 * per_level * levels as usize + 4 * levels as usize * got.chunks.len();
        assert!(
            reads.get() <= bound && reads.get() < n,
            "{} reads of the totals for {n} items ({} chunks)",
            reads.get(),
            got.chunks.len()
        );
    }

    #[test]
    fn heavy_items_go_first_largest_first() {
        let mut costs = vec![100; 1000];
        costs[10] = 1_000_000;
        costs[500] = 3_000_000;
        costs[999] = 2_000_000;
        let plan = plan(costs.len(), |i| costs[i], &params(2));
        assert_eq!(plan.heavy, 3);
        assert_eq!(&plan.chunks[..3], &[500..501, 999..1000, 10..11]);
        check(&costs, &params(2), &plan);
        assert_eq!(plan_cumulative(&running_totals(&costs), &params(2)), plan);
    }

    #[test]
    fn uniform_chunks_shrink_toward_the_end() {
        let costs = vec![200; case_count(20_000, 2_000)];
        let p = params(4);
        let plan = plan(costs.len(), |i| costs[i], &p);
        assert_eq!(plan.heavy, 0);
        let sizes: Vec<usize> = plan.chunks.iter().map(|r| r.len()).collect();
        // Every chunk but the last (which takes whatever is left) is no larger than the previous.
        for pair in sizes[..sizes.len() - 1].windows(2) {
            assert!(pair[0] >= pair[1], "sizes grew: {sizes:?}");
        }
        assert!(
            sizes[0] > sizes[sizes.len() - 2],
            "sizes never shrank: {sizes:?}"
        );
        check(&costs, &p, &plan);
    }

    #[test]
    fn fixed_chunk_bytes_cuts_evenly() {
        let costs = vec![36; 1000]; // weight 100
        let p = PlanParams {
            threads: 2,
            min_chunk: 1000,
            max_chunk: 1000,
            divisor: 2,
        };
        let plan = plan(costs.len(), |i| costs[i], &p);
        assert_eq!(plan.chunks.len(), 100);
        assert!(plan.chunks.iter().all(|r| r.len() == 10));
    }

    #[test]
    fn from_config_maps_chunk_bytes() {
        let mut config = SchedulerConfig::default();
        let auto = PlanParams::from_config(&config);
        assert_eq!(
            (auto.min_chunk, auto.max_chunk),
            (config.min_chunk_bytes, config.max_chunk_bytes)
        );
        config.chunk_bytes = Some(777);
        let fixed = PlanParams::from_config(&config);
        assert_eq!(
            (fixed.min_chunk, fixed.max_chunk, fixed.threads),
            (777, 777, config.threads)
        );
    }
}
