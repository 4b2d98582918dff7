//! The work contract between the scheduler and its caller: the [`Batch`] trait, the output
//! layout, the error type, and the failure bookkeeping every policy shares.

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use super::stats::BatchStats;

/// The work: a batch of `len()` items, each with an estimated cost in bytes.
pub trait Batch: Sync {
    /// Per-worker output buffer. Each sink is created and filled by one thread only: serial and
    /// chunked create one per participating thread, rayon policies one per rayon leaf job.
    type Sink: Send;
    /// A position in a sink (e.g. `(ids.len(), lens.len())`); taken before and after each chunk.
    type Mark: Copy + Send;

    /// Number of items.
    fn len(&self) -> usize;

    /// Whether the batch has no items.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Estimated cost of item `index`, e.g. its UTF-8 length. Called once or twice per item by
    /// the planner, so it must be cheap and return the same value every time. The chunked and
    /// serial policies call it on the calling thread before any work is shared, so a panic here
    /// simply propagates out of `run`.
    fn cost(&self, index: usize) -> usize;

    /// The running totals of [`cost`](Self::cost), if the batch keeps them: `ends` with
    /// `ends.len() == len()` and `ends[i] = cost(0) + … + cost(i)`, so the cost of any range of
    /// items is one subtraction. A batch of texts stored back to back has exactly this, its end
    /// offsets. With them the chunked planner reads O(threads · log len) totals instead of every
    /// item's cost (`plan.rs`), and plans the same chunks; `None`, the default, makes it call
    /// `cost` for every item. Must agree with `cost`, or the plan is wrong (a length mismatch
    /// panics on the calling thread, out of `run`).
    fn cumulative_costs(&self) -> Option<&[usize]> {
        None
    }

    /// A fresh, empty sink.
    fn new_sink(&self) -> Self::Sink;

    /// The current end position of `sink`.
    fn mark(&self, sink: &Self::Sink) -> Self::Mark;

    /// Process item `index`, appending its output to `sink`. An `Err` fails the batch naming
    /// the index, and carries the error as it is (a `String` converts with `?` or `.into()`), so
    /// that whoever reports the failure can read its details back.
    fn process(&self, index: usize, sink: &mut Self::Sink) -> Result<(), ItemError>;

    /// Called on the thread that filled `sink` as soon as it takes no more items: when its rayon
    /// leaf job, its participation in a chunked batch or the serial loop ends, before the output
    /// is assembled. At most once per sink, and on every sink of a run that succeeds. The place
    /// to give back what a sink needs only while it is filled (an engine's working memory): under
    /// the rayon policies a batch has as many sinks as leaf jobs, thousands on many cores, all
    /// alive until the output is assembled. The default does nothing.
    fn seal_sink(&self, _sink: &mut Self::Sink) {}

    /// Locks the work took on state shared between threads while filling `sink`, or `None` when
    /// it cannot tell. Summed into [`BatchStats::work_locks`] after a batch succeeds.
    fn locks_taken(&self, _sink: &Self::Sink) -> Option<u64> {
        Some(0)
    }
}

/// One contiguous range of items processed by one worker, and where its output sits in that
/// worker's sink: between marks `start` and `end` of `sinks[sink]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk<M> {
    /// The items, processed in order.
    pub items: Range<usize>,
    /// Index into [`BatchOutput::sinks`].
    pub sink: usize,
    /// Mark of the sink before the first item.
    pub start: M,
    /// Mark of the sink after the last item.
    pub end: M,
}

/// A finished batch.
pub struct BatchOutput<B: Batch> {
    /// The sinks, each filled by a single thread.
    pub sinks: Vec<B::Sink>,
    /// Sorted by `items.start`; the ranges tile `0..len` exactly (every item once, in order).
    pub chunks: Vec<Chunk<B::Mark>>,
    /// What happened.
    pub stats: BatchStats,
}

/// What [`Batch::process`] fails with: any error, boxed, which the scheduler only carries.
pub type ItemError = Box<dyn std::error::Error + Send + Sync>;

/// Why a batch did not complete.
#[derive(Debug)]
pub enum BatchError {
    /// The batch's [`super::CancelToken`] was cancelled before all chunks were handed out.
    Cancelled,
    /// `process` returned `Err(error)` for item `index` (the lowest failing index observed).
    ItemFailed {
        /// The failing item.
        index: usize,
        /// What `process` returned.
        error: ItemError,
    },
    /// `process` panicked on item `index`.
    Panicked {
        /// The item being processed when the panic happened.
        index: usize,
        /// The panic payload if it was a string.
        message: String,
    },
}

impl BatchError {
    /// The item the error names, if any.
    pub fn index(&self) -> Option<usize> {
        match self {
            BatchError::Cancelled => None,
            BatchError::ItemFailed { index, .. } | BatchError::Panicked { index, .. } => {
                Some(*index)
            }
        }
    }
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::Cancelled => f.write_str("batch cancelled"),
            BatchError::ItemFailed { index, error } => write!(f, "item {index} failed: {error}"),
            BatchError::Panicked { index, message } => {
                write!(f, "panic while processing item {index}: {message}")
            }
        }
    }
}

impl std::error::Error for BatchError {}

/// Two failures are equal when they are of the same kind, name the same item and say the same
/// thing: an item's error is compared by its text, as nothing more is known of its type.
impl PartialEq for BatchError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (BatchError::Cancelled, BatchError::Cancelled) => true,
            (
                BatchError::ItemFailed { index, error },
                BatchError::ItemFailed {
                    index: other_index,
                    error: other_error,
                },
            ) => index == other_index && error.to_string() == other_error.to_string(),
            (
                BatchError::Panicked { index, message },
                BatchError::Panicked {
                    index: other_index,
                    message: other_message,
                },
            ) => index == other_index && message == other_message,
            _ => false,
        }
    }
}

impl Eq for BatchError {}

/// The sinks and the sorted chunk index of a finished batch.
pub(super) type SinksAndChunks<B> = (Vec<<B as Batch>::Sink>, Vec<Chunk<<B as Batch>::Mark>>);

/// What a policy hands back to `Scheduler::run`: the output parts or the error, plus the stats
/// in both cases (so `last_stats` also describes failed batches).
pub(super) struct Outcome<B: Batch> {
    pub result: Result<SinksAndChunks<B>, BatchError>,
    pub stats: BatchStats,
}

/// The lowest-index failure seen so far by any worker of a batch. Touched only when an item
/// fails, so a mutex costs nothing on the hot path.
#[derive(Default)]
pub(super) struct FailureSlot(Mutex<Option<BatchError>>);

impl FailureSlot {
    /// Keeps `error` if it names a lower index than the one already recorded.
    pub fn record(&self, error: BatchError) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let lower = match (&*slot, error.index()) {
            (None, _) => true,
            (Some(old), Some(new)) => old.index().is_none_or(|old| new < old),
            (Some(_), None) => false,
        };
        if lower {
            *slot = Some(error);
        }
    }

    /// The recorded failure, if any.
    pub fn take(&self) -> Option<BatchError> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The text of a panic payload (`&str` or `String`), or a placeholder.
pub(super) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Whether `chunks` (sorted by start) tile `0..len`; checked in debug builds and tests.
pub(super) fn tiles<M>(chunks: &[Chunk<M>], len: usize) -> bool {
    let mut next = 0;
    for chunk in chunks {
        if chunk.items.start != next || chunk.items.end <= chunk.items.start {
            return false;
        }
        next = chunk.items.end;
    }
    next == len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_slot_keeps_lowest_index() {
        let slot = FailureSlot::default();
        slot.record(BatchError::ItemFailed {
            index: 9,
            error: "a".into(),
        });
        slot.record(BatchError::Panicked {
            index: 3,
            message: "b".into(),
        });
        slot.record(BatchError::ItemFailed {
            index: 5,
            error: "c".into(),
        });
        assert_eq!(
            slot.take(),
            Some(BatchError::Panicked {
                index: 3,
                message: "b".into()
            })
        );
        assert_eq!(slot.take(), None);
    }

    #[test]
    fn display_and_panic_messages() {
        let e = BatchError::ItemFailed {
            index: 4,
            error: "bad utf-8".into(),
        };
        assert_eq!(e.to_string(), "item 4 failed: bad utf-8");
        assert_eq!(BatchError::Cancelled.to_string(), "batch cancelled");
        assert_eq!(panic_message(&"boom"), "boom");
        assert_eq!(panic_message(&String::from("bang")), "bang");
        assert_eq!(panic_message(&42_u32), "non-string panic payload");
    }

    #[test]
    fn tiling_check() {
        let c = |r: Range<usize>| Chunk {
            items: r,
            sink: 0,
            start: (),
            end: (),
        };
        assert!(tiles::<()>(&[], 0));
        assert!(tiles(&[c(0..2), c(2..5)], 5));
        assert!(!tiles(&[c(0..2), c(3..5)], 5));
        assert!(!tiles(&[c(0..2), c(2..5)], 6));
        assert!(!tiles(&[c(0..2), c(2..2), c(2..5)], 5));
    }
}
