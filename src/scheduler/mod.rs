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
mod cores;
mod gate;
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

pub use batch::{Batch, BatchError, BatchOutput, Chunk};
pub use cancel::CancelToken;
pub use config::{
    ConfigError, DEFAULT_GUIDED_DIVISOR, DEFAULT_INLINE_BELOW_BYTES, DEFAULT_MAX_CHUNK_BYTES,
    DEFAULT_MIN_CHUNK_BYTES, ENV_CHUNK_BYTES, ENV_POLICY, ENV_THREADS, MAX_GUIDED_DIVISOR,
    MAX_THREADS, Policy, SchedulerConfig,
};
pub use gate::Gate;
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
        let (result, stats) = self.run_measured(batch, cancel, None);
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
    /// Behind a shut `gate`, a chunked batch runs on the calling thread alone until it opens.
    fn run_measured<B: Batch>(
        &self,
        batch: &B,
        cancel: &CancelToken,
        gate: Option<&Gate>,
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
                Policy::Chunked => chunked::run_gated(Pool::global, config, batch, cancel, gate),
            }
        };
        stats.wall_ns = nanos(started.elapsed());
        stats.parts = 1;
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

    /// Starts a batch whose items arrive in parts: each part runs as soon as the caller has it,
    /// with [`PartedRun::run`], and `last_stats` describes all the parts run so far as one batch.
    pub fn parted(&self) -> PartedRun<'_> {
        PartedRun {
            scheduler: self,
            started: Instant::now(),
            so_far: None,
            gate: None,
        }
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

/// A batch run as a sequence of parts (see [`Scheduler::parted`]). Each part is a batch of its
/// own to the policy, and runs only after the previous one returned, so the invariants above hold
/// part by part; only the stats join them.
pub struct PartedRun<'s> {
    scheduler: &'s Scheduler,
    started: Instant,
    /// The merged stats of the parts run so far.
    so_far: Option<BatchStats>,
    /// Parts run on the calling thread alone while this is shut (chunked policy only).
    gate: Option<&'s Gate>,
}

impl<'s> PartedRun<'s> {
    /// Keeps the parts to the calling thread while `gate` is shut: for parts that arrive from a
    /// producer working on one of the same cores meanwhile, which opens the gate once it is done.
    /// A part running when the gate opens is shared with the pool from its next chunk on. The
    /// other policies ignore the gate. The calling thread first steps off the producer's core if
    /// it finds itself there ([`Gate::step_off_producer_core`]).
    pub fn alone_until(self, gate: &'s Gate) -> Self {
        gate.step_off_producer_core();
        PartedRun {
            gate: Some(gate),
            ..self
        }
    }

    /// Runs the next part, as [`Scheduler::run`] would; the output's stats are the part's own,
    /// while the scheduler's `last_stats` becomes the batch's so far, this part included.
    pub fn run<B: Batch>(
        &mut self,
        part: &B,
        cancel: &CancelToken,
    ) -> Result<BatchOutput<B>, BatchError> {
        let (result, stats) = self.scheduler.run_measured(part, cancel, self.gate);
        let mut merged = match self.so_far.take() {
            Some(so_far) => so_far.then(&stats),
            None => stats.clone(),
        };
        merged.wall_ns = nanos(self.started.elapsed());
        self.scheduler.record(merged.clone());
        self.so_far = Some(merged);
        result.map(|(sinks, chunks)| BatchOutput {
            sinks,
            chunks,
            stats,
        })
    }
}

#[cfg(test)]
mod tests;
