//! Scheduler configuration: the policy, the thread count and the chunking tunables, with
//! their defaults, validation and the `BATCHTOK_*` environment overrides.

use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

/// Largest accepted `threads`. Far above any sensible oversubscription; it exists so that a
/// typo such as `BATCHTOK_THREADS=10000000` is rejected instead of spawning millions of threads.
pub const MAX_THREADS: usize = 1024;

/// Default lower clamp of the guided chunk size, in estimated bytes. Tokenizing 4 KiB takes
/// roughly 50–200 µs, so the single atomic claim per chunk (tens of ns) stays below 0.1 % of the
/// work, while the end-of-batch imbalance (at most about one such chunk per worker) stays small.
pub const DEFAULT_MIN_CHUNK_BYTES: usize = 4 * 1024;

/// Default upper clamp of the guided chunk size, in estimated bytes. Bounds how long a worker
/// is committed to one chunk (a few ms of tokenization), which bounds the latency of
/// cancellation, of failure propagation and of rotating a helper to a newly submitted batch.
pub const DEFAULT_MAX_CHUNK_BYTES: usize = 256 * 1024;

/// Default `k` of the guided rule `target = remaining / (k * threads)`. `k = 1` is classic
/// guided self-scheduling, whose first chunk is a whole per-thread share: one slow or late
/// worker then decides the finish time. `k = 2` hands out half of the remaining work per round,
/// as factoring does, which tolerates late helpers at the price of a few more claims.
pub const DEFAULT_GUIDED_DIVISOR: usize = 2;

/// Largest accepted guided divisor: beyond it the first chunks are already at the lower clamp
/// for any batch where parallelism matters, so larger values only signal a mistake.
pub const MAX_GUIDED_DIVISOR: usize = 64;

/// Default total estimated cost below which a chunked batch runs inline on the calling thread
/// and wakes nobody. Such a batch yields at most two minimum-size chunks, so at most one chunk
/// could go to a helper, and waking one costs a futex call plus tens of µs of wake-up latency,
/// comparable to the work it would take over.
pub const DEFAULT_INLINE_BELOW_BYTES: usize = 2 * DEFAULT_MIN_CHUNK_BYTES;

/// Environment variable overriding [`SchedulerConfig::threads`].
pub const ENV_THREADS: &str = "BATCHTOK_THREADS";
/// Environment variable overriding [`SchedulerConfig::policy`].
pub const ENV_POLICY: &str = "BATCHTOK_POLICY";
/// Environment variable overriding [`SchedulerConfig::chunk_bytes`] (`auto` or a byte count).
pub const ENV_CHUNK_BYTES: &str = "BATCHTOK_CHUNK_BYTES";

/// How a batch is spread over threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// A plain loop on the calling thread.
    Serial,
    /// One rayon task per item on a dedicated rayon pool (what Hugging Face `encode_batch` does).
    Rayon,
    /// Like `Rayon`, with `with_min_len(ceil(n / (threads * 4)).clamp(1, 8))`.
    RayonMinLen,
    /// batchtok's own cost-aware chunked queue on a persistent pool (the default).
    #[default]
    Chunked,
}

impl Policy {
    /// Every policy, in the order used by reports and tests.
    pub const ALL: [Policy; 4] = [
        Policy::Serial,
        Policy::Rayon,
        Policy::RayonMinLen,
        Policy::Chunked,
    ];

    /// The name accepted by [`FromStr`] and printed by [`fmt::Display`].
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Serial => "serial",
            Policy::Rayon => "rayon",
            Policy::RayonMinLen => "rayon-min-len",
            Policy::Chunked => "chunked",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Policy {
    type Err = ConfigError;

    /// Parses `serial`, `rayon`, `rayon-min-len`, `chunked` or `auto` (= `chunked` with its
    /// tuned defaults), ignoring ASCII case and surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "serial" => Ok(Policy::Serial),
            "rayon" => Ok(Policy::Rayon),
            "rayon-min-len" => Ok(Policy::RayonMinLen),
            "chunked" | "auto" => Ok(Policy::Chunked),
            _ => Err(ConfigError::UnknownPolicy {
                value: s.to_owned(),
            }),
        }
    }
}

/// A rejected configuration value; the message names the value and what to use instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// A policy name that [`Policy::from_str`] does not know.
    UnknownPolicy {
        /// The rejected text.
        value: String,
    },
    /// A `BATCHTOK_*` environment variable whose value cannot be used.
    InvalidEnv {
        /// The variable's name.
        variable: &'static str,
        /// Its value (lossily decoded if it was not UTF-8).
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// A [`SchedulerConfig`] field outside its valid range.
    OutOfRange {
        /// The field's name.
        field: &'static str,
        /// Its value.
        value: usize,
        /// What would have been accepted.
        expected: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownPolicy { value } => write!(
                f,
                "unknown scheduler policy {value:?}: use one of serial, rayon, rayon-min-len, chunked, auto"
            ),
            ConfigError::InvalidEnv {
                variable,
                value,
                expected,
            } => write!(
                f,
                "environment variable {variable}={value:?} is invalid: expected {expected}; fix it or unset it to use the default"
            ),
            ConfigError::OutOfRange {
                field,
                value,
                expected,
            } => {
                write!(
                    f,
                    "SchedulerConfig.{field} = {value} is out of range: expected {expected}"
                )
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// Everything a [`super::Scheduler`] needs to know; validated by [`super::Scheduler::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// Threads working on one batch, the calling thread included (`1..=MAX_THREADS`).
    /// Default: `std::thread::available_parallelism()`. More than the core count is allowed
    /// (oversubscription): the chunked pool grows to `threads - 1` workers on demand.
    pub threads: usize,
    /// The scheduling policy. Default: [`Policy::Chunked`].
    pub policy: Policy,
    /// Chunked policy: fixed target chunk size in estimated bytes, replacing the guided rule.
    /// Default `None` (auto): guided sizes between `min_chunk_bytes` and `max_chunk_bytes`.
    pub chunk_bytes: Option<usize>,
    /// Chunked policy: lower clamp of guided chunk sizes. Default [`DEFAULT_MIN_CHUNK_BYTES`].
    pub min_chunk_bytes: usize,
    /// Chunked policy: upper clamp of guided chunk sizes, and the heavy-item threshold's
    /// ceiling. Default [`DEFAULT_MAX_CHUNK_BYTES`].
    pub max_chunk_bytes: usize,
    /// Chunked policy: `k` in `target = remaining / (k * threads)`, `1..=MAX_GUIDED_DIVISOR`.
    /// Default [`DEFAULT_GUIDED_DIVISOR`].
    pub guided_divisor: usize,
    /// Chunked policy: batches whose total estimated cost is below this run on the calling
    /// thread without waking any worker. Default [`DEFAULT_INLINE_BELOW_BYTES`].
    pub inline_below_bytes: usize,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            threads: default_threads(),
            policy: Policy::Chunked,
            chunk_bytes: None,
            min_chunk_bytes: DEFAULT_MIN_CHUNK_BYTES,
            max_chunk_bytes: DEFAULT_MAX_CHUNK_BYTES,
            guided_divisor: DEFAULT_GUIDED_DIVISOR,
            inline_below_bytes: DEFAULT_INLINE_BELOW_BYTES,
        }
    }
}

/// `available_parallelism()`, or 1 when the platform cannot tell.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(MAX_THREADS)
}

impl SchedulerConfig {
    /// The defaults with `BATCHTOK_THREADS`, `BATCHTOK_POLICY` and `BATCHTOK_CHUNK_BYTES`
    /// applied. Unset or empty variables keep the default; anything unparsable or out of range
    /// is an error naming the variable and the accepted values.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// [`Self::from_env`] reading variables through `lookup`, so callers and tests can supply
    /// their own environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut config = SchedulerConfig::default();
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        if let Some(value) = get(ENV_THREADS) {
            config.threads = match value.trim().parse::<usize>() {
                Ok(n) if (1..=MAX_THREADS).contains(&n) => n,
                _ => {
                    return Err(ConfigError::InvalidEnv {
                        variable: ENV_THREADS,
                        value,
                        expected: format!("an integer from 1 to {MAX_THREADS}"),
                    });
                }
            };
        }
        if let Some(value) = get(ENV_POLICY) {
            config.policy = value.parse().map_err(|_| ConfigError::InvalidEnv {
                variable: ENV_POLICY,
                value: value.clone(),
                expected: "one of serial, rayon, rayon-min-len, chunked, auto".to_owned(),
            })?;
        }
        if let Some(value) = get(ENV_CHUNK_BYTES) {
            config.chunk_bytes = match value.trim() {
                v if v.eq_ignore_ascii_case("auto") => None,
                v => match v.parse::<usize>() {
                    Ok(n) if n > 0 => Some(n),
                    _ => {
                        return Err(ConfigError::InvalidEnv {
                            variable: ENV_CHUNK_BYTES,
                            value,
                            expected: "\"auto\" or a positive integer number of bytes".to_owned(),
                        });
                    }
                },
            };
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks every field's range; [`super::Scheduler::new`] calls this.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let out_of_range = |field, value, expected: &str| ConfigError::OutOfRange {
            field,
            value,
            expected: expected.to_owned(),
        };
        if !(1..=MAX_THREADS).contains(&self.threads) {
            return Err(out_of_range(
                "threads",
                self.threads,
                &format!("1..={MAX_THREADS}"),
            ));
        }
        if self.chunk_bytes == Some(0) {
            return Err(out_of_range(
                "chunk_bytes",
                0,
                "None (auto) or Some(n) with n >= 1",
            ));
        }
        if self.min_chunk_bytes == 0 {
            return Err(out_of_range("min_chunk_bytes", 0, ">= 1"));
        }
        if self.max_chunk_bytes < self.min_chunk_bytes {
            return Err(out_of_range(
                "max_chunk_bytes",
                self.max_chunk_bytes,
                &format!(">= min_chunk_bytes ({})", self.min_chunk_bytes),
            ));
        }
        if !(1..=MAX_GUIDED_DIVISOR).contains(&self.guided_divisor) {
            return Err(out_of_range(
                "guided_divisor",
                self.guided_divisor,
                &format!("1..={MAX_GUIDED_DIVISOR}"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn policy_names_round_trip() {
        for policy in Policy::ALL {
            assert_eq!(policy.to_string().parse::<Policy>().unwrap(), policy);
        }
        assert_eq!("auto".parse::<Policy>().unwrap(), Policy::Chunked);
        assert_eq!(
            " Rayon-Min-Len ".parse::<Policy>().unwrap(),
            Policy::RayonMinLen
        );
        let err = "fast".parse::<Policy>().unwrap_err();
        assert!(
            err.to_string()
                .contains("serial, rayon, rayon-min-len, chunked, auto"),
            "{err}"
        );
    }

    #[test]
    fn defaults_are_valid() {
        let config = SchedulerConfig::default();
        config.validate().unwrap();
        assert_eq!(config.policy, Policy::Chunked);
        assert_eq!(config.threads, default_threads());
        assert_eq!(SchedulerConfig::from_lookup(env(&[])).unwrap(), config);
    }

    #[test]
    fn env_overrides_apply() {
        let config = SchedulerConfig::from_lookup(env(&[
            (ENV_THREADS, "64"),
            (ENV_POLICY, "rayon"),
            (ENV_CHUNK_BYTES, "8192"),
        ]))
        .unwrap();
        assert_eq!(
            (config.threads, config.policy, config.chunk_bytes),
            (64, Policy::Rayon, Some(8192))
        );
        let auto =
            SchedulerConfig::from_lookup(env(&[(ENV_POLICY, "auto"), (ENV_THREADS, "")])).unwrap();
        assert_eq!(auto, SchedulerConfig::default());
    }

    #[test]
    fn invalid_env_names_variable_and_range() {
        for (var, value) in [
            (ENV_THREADS, "0"),
            (ENV_THREADS, "abc"),
            (ENV_THREADS, "1025"),
        ] {
            let err = SchedulerConfig::from_lookup(env(&[(var, value)]))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(ENV_THREADS) && err.contains("1 to 1024"),
                "{err}"
            );
        }
        let err = SchedulerConfig::from_lookup(env(&[(ENV_POLICY, "fifo")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(ENV_POLICY) && err.contains("rayon-min-len"),
            "{err}"
        );
        let err = SchedulerConfig::from_lookup(env(&[(ENV_CHUNK_BYTES, "0")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(ENV_CHUNK_BYTES) && err.contains("auto"),
            "{err}"
        );
    }

    #[test]
    fn validate_rejects_bad_fields() {
        let bad = [
            SchedulerConfig {
                threads: 0,
                ..SchedulerConfig::default()
            },
            SchedulerConfig {
                threads: MAX_THREADS + 1,
                ..SchedulerConfig::default()
            },
            SchedulerConfig {
                chunk_bytes: Some(0),
                ..SchedulerConfig::default()
            },
            SchedulerConfig {
                min_chunk_bytes: 0,
                ..SchedulerConfig::default()
            },
            SchedulerConfig {
                min_chunk_bytes: 10,
                max_chunk_bytes: 9,
                ..SchedulerConfig::default()
            },
            SchedulerConfig {
                guided_divisor: 0,
                ..SchedulerConfig::default()
            },
        ];
        for config in bad {
            let err = config.validate().unwrap_err();
            assert!(matches!(err, ConfigError::OutOfRange { .. }), "{err}");
            assert!(err.to_string().contains("expected"), "{err}");
        }
    }
}
