//! The chunked policy: plan the batch, publish it to the pool unless it is small enough to run
//! inline, work on it from the calling thread, wait for the helpers, assemble the output.

use std::iter;
use std::time::Instant;

use super::batch::{Batch, BatchError, Chunk, Outcome, tiles};
use super::cancel::CancelToken;
use super::config::{Policy, SchedulerConfig};
use super::plan::{PlanParams, plan, plan_cumulative};
use super::pool::Pool;
use super::queue::{Job, WorkerResult, claim_cursors};
use super::stats::{BatchStats, imbalance, nanos};

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
    let mut owner = WorkerResult::new();
    let mut publication_ops = 0;
    if !inline {
        let pool = pool();
        pool.ensure_workers(config.threads - 1);
        // SAFETY: `publication` is a local that is retired three lines below, or dropped while
        // unwinding, in both cases before `job` (declared earlier) goes out of scope; it is
        // never leaked.
        let publication = unsafe { pool.publish(&job) };
        job.claim_until(&mut owner, || false);
        owner.wakeups = publication.wakeups;
        publication_ops = publication.retire();
    } else {
        job.claim_until(&mut owner, || false);
    }
    owner.busy_ns = nanos(started.elapsed());
    // Every helper has left: the job and the batch are ours alone again.
    let (helpers, failure, cancelled) = job.finish();

    let mut stats = BatchStats {
        policy: Policy::Chunked,
        bytes: plan.total_bytes,
        inline,
        cursors: job.cursors(),
        ..BatchStats::default()
    };
    stats.shared_atomic_ops = publication_ops;
    let mut sinks = Vec::new();
    let mut chunks = Vec::new();
    for (position, result) in iter::once(owner).chain(helpers).enumerate() {
        let WorkerResult {
            sink,
            chunks: own_chunks,
            busy_ns,
            claims,
            executed,
            items,
            atomic_ops,
            wakeups,
            ..
        } = result;
        stats.participants += 1;
        stats.claims += claims as usize;
        stats.chunks += executed as usize;
        stats.items += items as usize;
        stats.wakeups += wakeups as usize;
        stats.shared_atomic_ops += atomic_ops;
        if position > 0 {
            stats.helper_chunks += executed as usize;
        }
        if executed > 0 {
            stats.per_worker_busy_ns.push(busy_ns);
        }
        if let Some(sink) = sink {
            let index = sinks.len();
            sinks.push(sink);
            chunks.extend(own_chunks.into_iter().map(|c| Chunk { sink: index, ..c }));
        }
    }
    stats.threads_used = stats.per_worker_busy_ns.len();
    stats.imbalance = imbalance(&stats.per_worker_busy_ns);
    let result = if let Some(error) = failure {
        Err(error)
    } else if cancelled {
        Err(BatchError::Cancelled)
    } else {
        chunks.sort_unstable_by_key(|c| c.items.start);
        debug_assert!(tiles(&chunks, len), "chunked output must tile 0..{len}");
        Ok((sinks, chunks))
    };
    Outcome { result, stats }
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
