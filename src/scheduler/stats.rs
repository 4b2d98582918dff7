//! Per-batch statistics, filled by every policy as far as it can observe.

use super::config::Policy;

/// What happened while running one batch. Counters a policy cannot observe stay 0 and are
/// documented as such.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BatchStats {
    /// Items processed successfully (the batch length on success).
    pub items: usize,
    /// Sum of the estimated costs (`Batch::cost`) of the batch's items; rayon policies sum
    /// only the items that ran, which is all of them on success.
    pub bytes: usize,
    /// Chunks executed: plan chunks (chunked), rayon leaf jobs (rayon policies), 1 (serial).
    pub chunks: usize,
    /// Claim attempts: chunked counts every cursor `fetch_add` including the empty ones that end
    /// a participation (one per claim cursor at most); rayon policies count one claim per item
    /// (one task per item).
    pub claims: usize,
    /// Chunked: claim cursors the batch's chunks were dealt to (`queue::claim_cursors`; 1 for
    /// an inline batch). Others: 0.
    pub cursors: usize,
    /// Chunked: chunks executed by pool helpers rather than the submitting thread. Serial and
    /// rayon: 0 (rayon does not say which thread submitted).
    pub helper_chunks: usize,
    /// Chunked: workers woken (unparked) on behalf of this batch. Others: 0 (not observable).
    pub wakeups: usize,
    /// Threads that executed at least one chunk; `per_worker_busy_ns` has one entry per thread.
    pub threads_used: usize,
    /// Chunked: joins of the batch (the submitting thread plus every helper join, also those
    /// that found no chunk left). Others: equal to `threads_used`.
    pub participants: usize,
    /// Busy time per thread that executed chunks, submitting thread first (chunked, serial):
    /// time between joining and leaving the batch; rayon: summed leaf-job durations.
    pub per_worker_busy_ns: Vec<u64>,
    /// `max(per_worker_busy_ns) / mean(per_worker_busy_ns)`; 1.0 is perfect balance.
    pub imbalance: f64,
    /// The policy that ran the batch (serial if a rayon pool could not be built).
    pub policy: Policy,
    /// Shared atomic read-modify-write operations (and shared stores) issued by batchtok's own
    /// code for this batch: claims, stop flags, lock acquisitions, join/leave bookkeeping and
    /// wake-ups. Rayon policies report 0: their per-item scheduling atomics live inside rayon.
    pub shared_atomic_ops: u64,
    /// Locks the work itself took on state shared between threads (`Batch::locks_taken`, summed
    /// over the sinks): `None` when the work cannot tell, or the batch failed.
    pub work_locks: Option<u64>,
    /// True when the batch ran entirely on the calling thread without waking any worker.
    pub inline: bool,
    /// Wall-clock time of `run`, in nanoseconds.
    pub wall_ns: u64,
}

impl BatchStats {
    /// Stats of a batch with no items under `policy`.
    pub fn empty(policy: Policy) -> Self {
        BatchStats {
            policy,
            imbalance: 1.0,
            inline: true,
            ..BatchStats::default()
        }
    }
}

/// `max / mean` of the busy times, or 1.0 when there is nothing to compare.
pub fn imbalance(busy_ns: &[u64]) -> f64 {
    let total: u128 = busy_ns.iter().map(|&b| u128::from(b)).sum();
    let max = busy_ns.iter().copied().max().unwrap_or(0);
    if total == 0 {
        return 1.0;
    }
    max as f64 * busy_ns.len() as f64 / total as f64
}

/// Nanoseconds in `d`, saturating (a u64 of ns lasts 584 years).
pub(super) fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imbalance_is_max_over_mean() {
        assert_eq!(imbalance(&[]), 1.0);
        assert_eq!(imbalance(&[0, 0]), 1.0);
        assert_eq!(imbalance(&[5]), 1.0);
        assert_eq!(imbalance(&[10, 10]), 1.0);
        assert_eq!(imbalance(&[30, 10]), 1.5);
    }

    #[test]
    fn empty_stats() {
        let stats = BatchStats::empty(Policy::Rayon);
        assert_eq!(
            (stats.items, stats.chunks, stats.policy),
            (0, 0, Policy::Rayon)
        );
        assert_eq!(stats.imbalance, 1.0);
    }
}
