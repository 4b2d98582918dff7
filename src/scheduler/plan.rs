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
//! Weights are `cost + ITEM_OVERHEAD_BYTES`. The planner calls `cost` at most twice per item and
//! allocates only the output plus a list of the few items heavier than `min`.

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

/// Plans a batch of `len` items whose estimated costs `cost(i)` returns.
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
    let heavy_weight = heavy
        .iter()
        .fold(0usize, |acc, &(_, w)| acc.saturating_add(w));

    let mut by_weight = heavy.clone();
    by_weight.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chunks: Vec<Range<usize>> = Vec::with_capacity(heavy.len() + 16);
    chunks.extend(by_weight.iter().map(|&(i, _)| i..i + 1));

    // Pass 2: cut the light items between heavy ones into guided chunks, in index order.
    let mut remaining = total_weight.saturating_sub(heavy_weight);
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
        chunks.push(start..i);
    }
    Plan {
        chunks,
        heavy: by_weight.len(),
        heavy_threshold,
        total_bytes,
        total_weight,
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
