//! The chunked policy: plan the batch, publish it to the pool unless it is small enough to run
//! inline, work on it from the calling thread, wait for the helpers, assemble the output.

use std::iter;
use std::time::Instant;

use super::batch::{Batch, Outcome};
use super::cancel::CancelToken;
use super::config::{Policy, SchedulerConfig};
use super::fold::OutcomeFold;
use super::plan::{PlanParams, plan, plan_cumulative};
use super::pool::Pool;
use super::queue::{Job, Participation, claim_cursors};
use super::stats::{BatchStats, nanos};

/// Runs `batch` under the chunked policy. `pool` is called only if the batch is published.
pub(super) fn run<'p, B: Batch>(
    pool: impl FnOnce() -> &'p Pool,
    config: &SchedulerConfig,
    batch: &B,
    cancel: &CancelToken,
) -> Outcome<B> {
    let len = batch.len();
    let params = PlanParams::from_config(config);
    // Running totals make the plan O(threads · log len) instead of a serial pass over the batch.
    let mut plan = match batch.cumulative_costs() {
        Some(ends) => {
            assert_eq!(
                ends.len(),
                len,
                "cumulative_costs must have one total per item"
            );
            plan_cumulative(ends, &params)
        }
        None => plan(len, |i| batch.cost(i), &params),
    };
    let inline = config.threads == 1
        || plan.chunks.len() < 2
        || plan.total_bytes < config.inline_below_bytes;
    if inline {
        // Heavy-first order balances threads; one thread gains nothing from it, and in input
        // order its single sink is the batch's output as it stands (no reassembly).
        plan.chunks.sort_unstable_by_key(|chunk| chunk.start);
    }
    // A batch that is never published has one participant: one cursor, claimed in plan order.
    let cursors = if inline {
        1
    } else {
        claim_cursors(config.threads)
    };
    let job = Job::new(batch, cancel, &plan, cursors, config.threads - 1);
    let started = Instant::now();
    let mut owner = Participation::new();
    let mut publication_ops = 0;
    if !inline {
        let pool = pool();
        pool.ensure_workers(config.threads - 1);
        // SAFETY: `publication` is a local that is retired three lines below, or dropped while
        // unwinding, in both cases before `job` (declared earlier) goes out of scope; it is
        // never leaked.
        let publication = unsafe { pool.publish(&job) };
        job.claim_until(&mut owner, || false);
        owner.output.wakeups = publication.wakeups;
        publication_ops = publication.retire();
    } else {
        job.claim_until(&mut owner, || false);
    }
    owner.output.busy_ns = nanos(started.elapsed());
    if let Some(sink) = &mut owner.output.sink {
        batch.seal_sink(sink);
    }
    // Every helper has left: the job and the batch are ours alone again.
    let (helpers, failure, cancelled) = job.finish();

    let owner_chunks = owner.output.executed as usize;
    let mut fold = OutcomeFold::new(BatchStats {
        policy: Policy::Chunked,
        bytes: plan.total_bytes,
        inline,
        cursors: job.cursors(),
        shared_atomic_ops: publication_ops,
        ..BatchStats::default()
    });
    // Each participation is a worker slot of its own, the owner's first.
    for (slot, result) in iter::once(owner).chain(helpers).enumerate() {
        fold.add(slot, result.output);
    }
    let mut outcome = fold.finish(len, failure, cancelled);
    outcome.stats.helper_chunks = outcome.stats.chunks - owner_chunks;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::testing::{TestBatch, check_outcome};

    #[test]
    fn small_batches_run_inline_and_wake_nobody() {
        let config = SchedulerConfig {
            threads: 4,
            ..SchedulerConfig::default()
        };
        let batch = TestBatch::new(vec![10; 20]);
        let outcome = run(
            || unreachable!("an inline batch must not touch the pool"),
            &config,
            &batch,
            &CancelToken::new(),
        );
        let stats = check_outcome(&batch, outcome);
        assert!(stats.inline);
        assert_eq!(
            (stats.wakeups, stats.participants, stats.threads_used),
            (0, 1, 1)
        );
    }

    #[test]
    fn heavy_items_alone_are_published() {
        let config = SchedulerConfig {
            threads: 2,
            ..SchedulerConfig::default()
        };
        let batch = TestBatch::new(vec![1 << 20; 3]);
        let stats = check_outcome(
            &batch,
            run(Pool::global, &config, &batch, &CancelToken::new()),
        );
        assert!(!stats.inline);
        assert_eq!(stats.chunks, 3);
    }
}
