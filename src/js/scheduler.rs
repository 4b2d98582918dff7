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
}

/// Spreads each batch over threads with one of several policies.
#[napi]
pub struct Scheduler {
    scheduler: scheduler::Scheduler,
}

/// The scheduler a batch uses when its options name none; set with `Scheduler.setDefault`.
static DEFAULT: OnceLock<RwLock<Option<scheduler::Scheduler>>> = OnceLock::new();

/// The default scheduler: the one set by `Scheduler.setDefault`, else one configured from the
/// environment (`BATCHTOK_THREADS`, `BATCHTOK_POLICY`); a bad environment value is a `RangeError`.
pub fn default_scheduler(env: &Env) -> napi::Result<scheduler::Scheduler> {
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
    *slot = Some(scheduler.clone());
    Ok(scheduler)
}

impl Scheduler {
    /// The scheduler behind the JS object.
    pub fn scheduler(&self) -> &scheduler::Scheduler {
        &self.scheduler
    }
}

#[napi]
impl Scheduler {
    /// A scheduler; unset options take their defaults. An invalid value throws a `RangeError`.
    #[napi(constructor)]
    pub fn new(env: Env, options: Option<SchedulerOptions>) -> napi::Result<Self> {
        let range = |message: String| js_error(&env, ErrorClass::Range, &message);
        let mut config = SchedulerConfig::from_env().map_err(|e| range(e.to_string()))?;
        if let Some(options) = options {
            if let Some(threads) = options.threads {
                if threads.fract() != 0.0 || !(1.0..=u32::MAX as f64).contains(&threads) {
                    return Err(range(format!("threads is {threads}; expected a whole number of at least 1")));
                }
                config.threads = threads as usize;
            }
            if let Some(policy) = options.policy {
                config.policy = policy.parse::<Policy>().map_err(|e| range(e.to_string()))?;
            }
        }
        let scheduler = scheduler::Scheduler::new(config).map_err(|e| range(e.to_string()))?;
        Ok(Scheduler { scheduler })
    }

    /// Makes `scheduler` the one batches use when their options name none.
    #[napi]
    pub fn set_default(scheduler: &Scheduler) {
        let slot = DEFAULT.get_or_init(|| RwLock::new(None));
        *slot.write().unwrap_or_else(|e| e.into_inner()) = Some(scheduler.scheduler.clone());
    }

    /// The scheduler batches use when their options name none.
    #[napi]
    pub fn get_default(env: Env) -> napi::Result<Scheduler> {
        Ok(Scheduler { scheduler: default_scheduler(&env)? })
    }

    /// Threads a batch may use, the calling thread included.
    #[napi(getter)]
    pub fn threads(&self) -> u32 {
        self.scheduler.config().threads as u32
    }

    /// The policy's name.
    #[napi(getter)]
    pub fn policy(&self) -> String {
        self.scheduler.config().policy.to_string()
    }
}
