//! batchtok's parallel batch scheduler: runs a [`Batch`] of independent items on several
//! threads and returns per-thread output buffers plus an ordered index of where each item's
//! output sits. It knows nothing of tokenizers or N-API.
//!
//! # Invariants
//!
//! The protocols that uphold these are numbered (P1–P7) and argued in `README.md` beside this
//! file, together with a glossary of worker states.
//!
//! 1. **Exactly once, in order.** A successful [`Scheduler::run`] processed every index exactly
//!    once; [`BatchOutput::chunks`] is sorted by start and tiles `0..len`.
//! 2. **Borrow safety.** `run` never returns, nor unwinds, while a thread other than the caller
//!    can still touch the batch: every pool worker that joined it has left (P6). This is what
//!    justifies handing the caller's borrowed `&B` to pool threads (`pool.rs`, `chunked.rs`).
//! 3. **Own sinks.** Every sink is created and filled by one thread; only whole sinks cross
//!    threads, once, when the batch is assembled.
//! 4. **Bounded stop.** Cancellation, item errors and panics are checked at every claim, so each
//!    participant stops within one chunk; a panic is caught per chunk and never kills a worker.
//! 5. **O(1) claims.** A chunked claim is one `fetch_add` on one of the batch's claim cursors
//!    (one, or one per [`THREADS_PER_CURSOR`] threads in pools over [`ONE_CURSOR_MAX_THREADS`])
//!    over a precomputed plan; a participant makes at most one empty claim per cursor, and
//!    `shared_atomic_ops <= chunks + c(G) * participants` with G cursors, c(1) = 20.
//! 6. **Progress.** The calling thread alone can finish its batch; helpers only speed it up, so
//!    every batch ends whether or not any worker wakes.
//! 7. **No lost wake-ups, no idle CPU.** A worker parks only after checking for work under the
//!    registry lock, and every publish and every join checks for sleepers under the same lock;
//!    idle workers spin a bounded time, then park without timeout.
//! 8. **Wake-ups fan out, bounded by the work.** A publish or a join wakes at most
//!    [`WAKE_FANOUT`] sleepers, so helpers arrive as a tree (~log_f p wake-up latencies for a
//!    fan-out f), and workers woken but not yet joined never outnumber the chunks left beyond one
//!    per participant, so small batches wake few workers.
//!
//! # Policies
//!
//! See [`Policy`]: `serial`, `rayon` (one rayon task per item, as Hugging Face tokenizers do),
//! `rayon-min-len`, and the default `chunked` (cost-based guided chunks with heavy items first,
//! claimed from cursors by the caller and the helpers of a persistent, shared pool).

mod batch;
mod cancel;
mod chunked;
mod config;
mod fold;
pub mod plan;
mod pool;
mod queue;
mod rayon_policies;
mod serial;
mod sleep;
mod stats;
#[cfg(test)]
mod testing;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

pub use batch::{Batch, BatchError, BatchOutput, Chunk, ItemError};
pub use cancel::CancelToken;
pub use config::{
    ConfigError, DEFAULT_GUIDED_DIVISOR, DEFAULT_INLINE_BELOW_BYTES, DEFAULT_MAX_CHUNK_BYTES,
    DEFAULT_MIN_CHUNK_BYTES, ENV_CHUNK_BYTES, ENV_POLICY, ENV_THREADS, MAX_GUIDED_DIVISOR,
    MAX_THREADS, Policy, SchedulerConfig,
};
pub use queue::{ONE_CURSOR_MAX_THREADS, THREADS_PER_CURSOR, claim_cursors};
pub use rayon_policies::min_len as rayon_min_len;
pub use sleep::WAKE_FANOUT;
pub use stats::BatchStats;

use batch::Outcome;
use pool::Pool;
use stats::nanos;

/// Runs batches under one validated configuration. Cheap to clone (an `Arc` inside); clones
/// share `last_stats`. All schedulers of a process share one chunked worker pool.
#[derive(Clone)]
pub struct Scheduler {
    inner: Arc<Inner>,
}

struct Inner {
    config: SchedulerConfig,
    last_stats: Mutex<Option<BatchStats>>,
}

impl Scheduler {
    /// A scheduler for `config`, after [`SchedulerConfig::validate`].
    pub fn new(config: SchedulerConfig) -> Result<Scheduler, ConfigError> {
        config.validate()?;
        Ok(Scheduler {
            inner: Arc::new(Inner {
                config,
                last_stats: Mutex::new(None),
            }),
        })
    }

    /// The configuration this scheduler was built with.
    pub fn config(&self) -> &SchedulerConfig {
        &self.inner.config
    }

    /// How many sinks a run makes at most, where that is known before it starts: one per
    /// thread for the chunked policy, one for the serial one, and `None` for the rayon policies,
    /// whose leaf jobs (one sink each) are decided as rayon splits the batch. Work that sizes its
    /// sinks up front divides its estimate by this.
    pub fn max_sinks(&self) -> Option<usize> {
        let config = &self.inner.config;
        match config.policy {
            Policy::Serial => Some(1),
            Policy::Chunked => Some(config.threads),
            Policy::Rayon | Policy::RayonMinLen => None,
        }
    }

    /// Processes every item of `batch` and returns the sinks and the chunk index, or the first
    /// error. Synchronous: the calling thread works on the batch and returns once it is done,
    /// cancelled or failed, and (invariant 2) once no other thread touches `batch` any more.
    /// Empty batches return at once with no chunks.
    pub fn run<B: Batch>(
        &self,
        batch: &B,
        cancel: &CancelToken,
    ) -> Result<BatchOutput<B>, BatchError> {
        self.run_recording(batch, cancel, true)
    }

    /// [`run`](Self::run) for work that follows a batch (putting its output together): leaves
    /// `last_stats` describing the batch.
    pub fn run_untracked<B: Batch>(
        &self,
        batch: &B,
        cancel: &CancelToken,
    ) -> Result<BatchOutput<B>, BatchError> {
        self.run_recording(batch, cancel, false)
    }

    fn run_recording<B: Batch>(
        &self,
        batch: &B,
        cancel: &CancelToken,
        record: bool,
    ) -> Result<BatchOutput<B>, BatchError> {
        let (result, stats) = self.run_measured(batch, cancel);
        if record {
            self.record(stats.clone());
        }
        result.map(|(sinks, chunks)| BatchOutput {
            sinks,
            chunks,
            stats,
        })
    }

    /// Runs `batch` under the configured policy and measures it, whether it succeeds or not.
    fn run_measured<B: Batch>(
        &self,
        batch: &B,
        cancel: &CancelToken,
    ) -> (Result<batch::SinksAndChunks<B>, BatchError>, BatchStats) {
        let started = Instant::now();
        let config = &self.inner.config;
        let Outcome { result, mut stats } = if batch.is_empty() {
            Outcome {
                result: Ok((Vec::new(), Vec::new())),
                stats: BatchStats::empty(config.policy),
            }
        } else {
            match config.policy {
                Policy::Serial => serial::run(batch, cancel),
                Policy::Rayon => rayon_policies::run(config.threads, false, batch, cancel),
                Policy::RayonMinLen => rayon_policies::run(config.threads, true, batch, cancel),
                Policy::Chunked => chunked::run(Pool::global, config, batch, cancel),
            }
        };
        stats.wall_ns = nanos(started.elapsed());
        if let Ok((sinks, _)) = &result {
            stats.work_locks = sinks.iter().map(|sink| batch.locks_taken(sink)).sum();
        }
        (result, stats)
    }

    fn record(&self, stats: BatchStats) {
        *self
            .inner
            .last_stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(stats);
    }

    /// Stats of the most recent batch this scheduler (or a clone) finished, failed ones included.
    pub fn last_stats(&self) -> Option<BatchStats> {
        self.inner
            .last_stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests;
