//! The JS `Scheduler` class: how a batch is spread over threads.

use std::sync::{OnceLock, RwLock};

use napi::Env;
use napi_derive::napi;

use super::errors::{ErrorClass, js_error};
use crate::scheduler::{self, Policy, SchedulerConfig};

/// Options of `new Scheduler()`; each unset option takes its default (or the environment's).
#[napi(object)]
pub struct SchedulerOptions {
    /// Threads a batch may use, the calling thread included.
    /// @default `BATCHTOK_THREADS`, else the number of available cores
    pub threads: Option<f64>,
    /// `'chunked'` (batchtok's queue), `'serial'`, `'rayon'` (one task per item) or
    /// `'rayon-min-len'` (rayon with coarsened splitting); `'auto'` is `'chunked'`.
    /// @default `BATCHTOK_POLICY`, else `'chunked'`
    #[napi(ts_type = "'chunked' | 'serial' | 'rayon' | 'rayon-min-len' | 'auto'")]
    pub policy: Option<String>,
    /// Return the allocator's cached memory to the OS after every batch (`releaseMemory()`):
    /// lower resident memory between batches, for some speed.
    /// @default false
    pub release_memory: Option<bool>,
}

/// What the scheduler did with its most recent batch.
#[napi(object)]
pub struct BatchStats {
    /// The policy that ran the batch.
    pub policy: String,
    /// Items processed.
    pub items: f64,
    /// Their estimated cost: UTF-8 bytes.
    pub bytes: f64,
    /// Chunks executed (rayon: leaf jobs; serial: 1).
    pub chunks: f64,
    /// Chunk claims (rayon: one per item).
    pub claims: f64,
    /// Claim cursors the chunks were dealt to: 1, or one per 32 threads in pools of more than
    /// 64 threads, so that the claims at a batch's end do not all queue on one cache line (0 for
    /// the rayon and serial policies).
    pub cursors: f64,
    /// Chunks run by pool workers rather than the submitting thread.
    pub steals_or_retries: f64,
    /// Workers woken for the batch.
    pub wakeups: f64,
    /// Threads that ran at least one chunk.
    pub threads_used: f64,
    /// Busy time of each of those threads, in milliseconds, the submitting thread first.
    pub busy_ms: Vec<f64>,
    /// Longest busy time over the mean: 1 is a perfect balance.
    pub imbalance: f64,
    /// Shared atomic operations batchtok's own code issued for the batch.
    pub shared_atomic_ops: f64,
    /// Locks the tokenizer engine took on state its threads share: 2 for each worker's working
    /// memory, leased from the engine once per run of the batch (see `parts`) and given back, not
    /// per text (2 more where a worker's texts also go to an OpenAI encoding's exact engine);
    /// `null` where the stable fallback encoded a text (its cache locks depend on the text), or
    /// for a failed batch.
    pub engine_locks: Option<f64>,
    /// The batch ran on the calling thread alone and woke no worker: it was small, or, read in
    /// parts, it was done before the main thread finished reading.
    pub inline: bool,
    /// Wall-clock time of the batch, in milliseconds.
    pub wall_ms: f64,
    /// Scheduler runs the batch took: 1, or more when `encodeBatch` or `countBatch` handed a
    /// large array of strings over in parts, each encoding while the next was read.
    pub parts: f64,
}

impl From<scheduler::BatchStats> for BatchStats {
    fn from(stats: scheduler::BatchStats) -> Self {
        BatchStats {
            policy: stats.policy.to_string(),
            items: stats.items as f64,
            bytes: stats.bytes as f64,
            chunks: stats.chunks as f64,
            claims: stats.claims as f64,
            cursors: stats.cursors as f64,
            steals_or_retries: stats.steals_or_retries as f64,
            wakeups: stats.wakeups as f64,
            threads_used: stats.threads_used as f64,
            busy_ms: stats
                .per_worker_busy_ns
                .iter()
                .map(|&ns| ns as f64 / 1e6)
                .collect(),
            imbalance: stats.imbalance,
            shared_atomic_ops: stats.shared_atomic_ops as f64,
            engine_locks: stats.work_locks.map(|locks| locks as f64),
            inline: stats.inline,
            wall_ms: stats.wall_ns as f64 / 1e6,
            parts: stats.parts as f64,
        }
    }
}

/// Spreads each batch over threads with one of several policies.
#[napi]
pub struct Scheduler {
    runner: Runner,
}

/// A scheduler as a batch uses it: where the batch runs, and what happens when it ends.
#[derive(Clone)]
pub struct Runner {
    /// Where the batch runs.
    pub scheduler: scheduler::Scheduler,
    /// Release the allocator's cached memory when the batch ends.
    pub release_memory: bool,
}

/// The scheduler a batch uses when its options name none; set with `Scheduler.setDefault`.
static DEFAULT: OnceLock<RwLock<Option<Runner>>> = OnceLock::new();

/// The default runner: the scheduler set by `Scheduler.setDefault`, else one configured from the
/// environment (`BATCHTOK_THREADS`, `BATCHTOK_POLICY`); a bad environment value is a `RangeError`.
pub fn default_runner(env: &Env) -> napi::Result<Runner> {
    let slot = DEFAULT.get_or_init(|| RwLock::new(None));
    if let Some(scheduler) = slot.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return Ok(scheduler.clone());
    }
    let mut slot = slot.write().unwrap_or_else(|e| e.into_inner());
    if let Some(scheduler) = slot.as_ref() {
        return Ok(scheduler.clone());
    }
    let scheduler = SchedulerConfig::from_env()
        .and_then(scheduler::Scheduler::new)
        .map_err(|e| js_error(env, ErrorClass::Range, &e.to_string()))?;
    let runner = Runner {
        scheduler,
        release_memory: false,
    };
    *slot = Some(runner.clone());
    Ok(runner)
}

impl Scheduler {
    /// The scheduler behind the JS object, as batches use it.
    pub fn runner(&self) -> &Runner {
        &self.runner
    }
}

#[napi]
impl Scheduler {
    /// A scheduler; unset options take their defaults. An invalid value throws a `RangeError`.
    #[napi(constructor)]
    pub fn new(env: Env, options: Option<SchedulerOptions>) -> napi::Result<Self> {
        let range = |message: String| js_error(&env, ErrorClass::Range, &message);
        let mut config = SchedulerConfig::from_env().map_err(|e| range(e.to_string()))?;
        let release_memory = options
            .as_ref()
            .and_then(|o| o.release_memory)
            .unwrap_or(false);
        if let Some(options) = options {
            if let Some(threads) = options.threads {
                if threads.fract() != 0.0 || !(1.0..=u32::MAX as f64).contains(&threads) {
                    return Err(range(format!(
                        "threads is {threads}; expected a whole number of at least 1"
                    )));
                }
                config.threads = threads as usize;
            }
            if let Some(policy) = options.policy {
                config.policy = policy.parse::<Policy>().map_err(|e| range(e.to_string()))?;
            }
        }
        let scheduler = scheduler::Scheduler::new(config).map_err(|e| range(e.to_string()))?;
        Ok(Scheduler {
            runner: Runner {
                scheduler,
                release_memory,
            },
        })
    }

    /// Makes `scheduler` the one batches use when their options name none.
    #[napi]
    pub fn set_default(scheduler: &Scheduler) {
        let slot = DEFAULT.get_or_init(|| RwLock::new(None));
        *slot.write().unwrap_or_else(|e| e.into_inner()) = Some(scheduler.runner.clone());
    }

    /// The scheduler batches use when their options name none.
    #[napi]
    pub fn get_default(env: Env) -> napi::Result<Scheduler> {
        Ok(Scheduler {
            runner: default_runner(&env)?,
        })
    }

    /// Threads a batch may use, the calling thread included.
    #[napi(getter)]
    pub fn threads(&self) -> u32 {
        self.runner.scheduler.config().threads as u32
    }

    /// The policy's name.
    #[napi(getter)]
    pub fn policy(&self) -> String {
        self.runner.scheduler.config().policy.to_string()
    }

    /// What this scheduler did with its most recent batch, or `null` before its first.
    #[napi]
    pub fn stats(&self) -> Option<BatchStats> {
        self.runner.scheduler.last_stats().map(BatchStats::from)
    }
}
