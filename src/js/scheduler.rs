//! The JS `Scheduler` class: how a batch is spread over threads.

use std::sync::{OnceLock, RwLock};

use napi::Env;
use napi::bindgen_prelude::{This, Unknown};
use napi_derive::napi;

use super::args::{bool_option, choice_option, options_object, whole_number_option};
use super::errors::{range_error, type_error};
use super::raw;
use crate::scheduler::{self, MAX_THREADS, Policy, SchedulerConfig};

/// Options of `new Scheduler()`; each unset option takes its default (or the environment's).
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type for the options; `Scheduler::new` reads them by hand"
)]
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
    /// Chunks run by pool helpers rather than the submitting thread (chunked policy; 0 for the
    /// others).
    pub helper_chunks: f64,
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
    /// memory, leased from the release-candidate engine once per batch and given back, not per
    /// text (0 for texts an OpenAI encoding's rank engine encodes: it leases nothing); `null`
    /// where the stable fallback encoded a text with a Unigram model (its cache locks depend on
    /// the text), or for a failed batch.
    pub engine_locks: Option<f64>,
    /// The batch ran on the calling thread alone and woke no worker (it was small).
    pub inline: bool,
    /// Wall-clock time of the batch, in milliseconds.
    pub wall_ms: f64,
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
            helper_chunks: stats.helper_chunks as f64,
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

/// The keys `new Scheduler()` takes.
const SCHEDULER_KEYS: &[&str] = &["threads", "policy", "releaseMemory"];

/// The names `options.policy` accepts.
const POLICY_NAMES: &[&str] = &["chunked", "serial", "rayon", "rayon-min-len", "auto"];

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
        .map_err(|e| range_error(env, &e.to_string()))?;
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
    /// A scheduler; unset options take their defaults (or the environment's). A value of the
    /// wrong type throws a `TypeError`, one out of range a `RangeError`, each naming the option.
    #[napi(constructor, ts_args_type = "options?: SchedulerOptions")]
    pub fn new(env: Env, this: This, options: Option<Unknown>) -> napi::Result<Self> {
        // Called without `new`, `this` is the global object (or undefined), which napi-rs would
        // otherwise make a Scheduler of.
        if !raw::is_fresh_object(&env, &this)? {
            return Err(type_error(
                &env,
                "Class constructor Scheduler cannot be invoked without 'new'",
            ));
        }
        let mut config =
            SchedulerConfig::from_env().map_err(|e| range_error(&env, &e.to_string()))?;
        let mut release_memory = false;
        if let Some(object) = options_object(&env, options, "new Scheduler()", SCHEDULER_KEYS)? {
            if let Some(threads) =
                whole_number_option(&env, &object, c"threads", 1, MAX_THREADS as u32)?
            {
                config.threads = threads as usize;
            }
            if let Some(policy) = choice_option(&env, &object, c"policy", POLICY_NAMES)? {
                config.policy = policy
                    .parse::<Policy>()
                    .map_err(|e| range_error(&env, &e.to_string()))?;
            }
            release_memory = bool_option(&env, &object, c"releaseMemory")?.unwrap_or(false);
        }
        let scheduler =
            scheduler::Scheduler::new(config).map_err(|e| range_error(&env, &e.to_string()))?;
        Ok(Scheduler {
            runner: Runner {
                scheduler,
                release_memory,
            },
        })
    }

    /// Makes `scheduler` the one batches use when their options name none.
    #[napi(ts_args_type = "scheduler: Scheduler")]
    pub fn set_default(env: Env, scheduler: Unknown) -> napi::Result<()> {
        let Some(scheduler) = raw::class_instance::<Scheduler>(&env, &scheduler) else {
            return Err(type_error(
                &env,
                &format!(
                    "scheduler is {}; expected a Scheduler (new Scheduler({{ threads, policy }}))",
                    super::args::describe(&scheduler)
                ),
            ));
        };
        let slot = DEFAULT.get_or_init(|| RwLock::new(None));
        *slot.write().unwrap_or_else(|e| e.into_inner()) = Some(scheduler.runner.clone());
        Ok(())
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
