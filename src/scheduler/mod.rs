//! Placeholder seam with the scheduler's API; replaced by the real scheduler.
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy { Serial, Rayon, RayonMinLen, Chunked }
impl std::str::FromStr for Policy {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s { "serial" => Ok(Policy::Serial), "rayon" => Ok(Policy::Rayon), "rayon-min-len" => Ok(Policy::RayonMinLen), "chunked" | "auto" => Ok(Policy::Chunked), _ => Err(ConfigError(format!("unknown policy {s}"))) }
    }
}
impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(match self { Policy::Serial => "serial", Policy::Rayon => "rayon", Policy::RayonMinLen => "rayon-min-len", Policy::Chunked => "chunked" }) }
}
#[derive(Debug)]
pub struct ConfigError(pub String);
impl std::fmt::Display for ConfigError { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(&self.0) } }
impl std::error::Error for ConfigError {}
#[derive(Debug, Clone)]
pub struct SchedulerConfig { pub threads: usize, pub policy: Policy, pub chunk_bytes: Option<usize> }
impl Default for SchedulerConfig { fn default() -> Self { SchedulerConfig { threads: 1, policy: Policy::Chunked, chunk_bytes: None } } }
impl SchedulerConfig { pub fn from_env() -> Result<Self, ConfigError> { Ok(Self::default()) } }
#[derive(Debug, Clone, Default)]
pub struct BatchStats { pub items: usize, pub chunks: usize }
pub trait Batch: Sync {
    type Sink: Send;
    type Mark: Copy + Send;
    fn len(&self) -> usize;
    fn cost(&self, index: usize) -> usize;
    fn new_sink(&self) -> Self::Sink;
    fn mark(&self, sink: &Self::Sink) -> Self::Mark;
    fn process(&self, index: usize, sink: &mut Self::Sink) -> Result<(), String>;
}
pub struct Chunk<M> { pub items: Range<usize>, pub sink: usize, pub start: M, pub end: M }
pub struct BatchOutput<B: Batch> { pub sinks: Vec<B::Sink>, pub chunks: Vec<Chunk<B::Mark>>, pub stats: BatchStats }
#[derive(Debug)]
pub enum BatchError { Cancelled, ItemFailed { index: usize, message: String }, Panicked { index: usize, message: String } }
#[derive(Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);
impl CancelToken { pub fn cancel(&self) { self.0.store(true, Ordering::Relaxed) } pub fn is_cancelled(&self) -> bool { self.0.load(Ordering::Relaxed) } }
#[derive(Clone)]
pub struct Scheduler { config: SchedulerConfig }
impl Scheduler {
    pub fn new(config: SchedulerConfig) -> Result<Scheduler, ConfigError> { Ok(Scheduler { config }) }
    pub fn config(&self) -> &SchedulerConfig { &self.config }
    pub fn last_stats(&self) -> Option<BatchStats> { None }
    pub fn run<B: Batch>(&self, batch: &B, cancel: &CancelToken) -> Result<BatchOutput<B>, BatchError> {
        let mut sink = batch.new_sink();
        let start = batch.mark(&sink);
        for i in 0..batch.len() {
            if cancel.is_cancelled() { return Err(BatchError::Cancelled); }
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| batch.process(i, &mut sink))) {
                Ok(Ok(())) => {}
                Ok(Err(message)) => return Err(BatchError::ItemFailed { index: i, message }),
                Err(_) => return Err(BatchError::Panicked { index: i, message: "panic".into() }),
            }
        }
        let end = batch.mark(&sink);
        Ok(BatchOutput { sinks: vec![sink], chunks: vec![Chunk { items: 0..batch.len(), sink: 0, start, end }], stats: BatchStats { items: batch.len(), chunks: 1 } })
    }
}
