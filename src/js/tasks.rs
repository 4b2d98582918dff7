//! The async work behind the promise-returning methods: each runs the same function as its `Sync`
//! form, on a libuv thread, and settles on the main thread.
//!
//! A batch of JS strings can start before the main thread has read them all: the texts are read
//! a part at a time and each part is handed to the queued work when it asks for one
//! ([`spawn_reading`]), so the reading, which only the main thread can do, overlaps the encoding
//! of the first parts instead of coming before all of it. Until the reading ends, the work runs
//! those parts on its own thread alone (a shut [`Gate`]): with one thread per core, a helper
//! beside it would put a thread more than there are cores on the machine while the main thread
//! reads.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use napi::bindgen_prelude::{PromiseRaw, Uint32Array};
use napi::{Env, Task};

use super::batch_encoding::BatchEncoding;
use super::errors::{ErrorClass, from_engine, from_failure, js_error};
use super::scheduler::Runner;
use super::signal::AbortListener;
use super::texts::StringArray;
use crate::allocator;
use crate::batch::{self, Encoded, Failure, PartReceiver, Texts, handover};
use crate::engine::{self, EncodeMode, Tokenizer};
use crate::scheduler::{BatchError, CancelToken, Gate};

/// What a task's work produced, or why it produced nothing.
pub enum Outcome<T> {
    /// The work finished.
    Done(T),
    /// The batch failed or was cancelled.
    Failed(Failure),
    /// The engine refused the input.
    Refused(engine::Error),
    /// A panic escaped the work; the message, for the error.
    Panicked(String),
}

impl<T> Outcome<T> {
    /// Runs `work`, turning a panic into `Panicked` so it never unwinds into libuv.
    pub fn of(work: impl FnOnce() -> Outcome<T>) -> Outcome<T> {
        catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Outcome::Panicked(message)
        })
    }

    /// The value, or the JS error to throw or reject with.
    pub fn into_result(self, env: &Env) -> napi::Result<T> {
        match self {
            Outcome::Done(value) => Ok(value),
            Outcome::Failed(failure) => Err(from_failure(env, &failure)),
            Outcome::Refused(error) => Err(from_engine(env, &error)),
            Outcome::Panicked(message) => Err(js_error(
                env,
                ErrorClass::Error,
                &format!(
                    "batchtok hit an internal error ({message}); the call was abandoned. Please report it"
                ),
            )),
        }
    }
}

impl<T> From<Result<T, Failure>> for Outcome<T> {
    fn from(result: Result<T, Failure>) -> Self {
        match result {
            Ok(value) => Outcome::Done(value),
            Err(failure) => Outcome::Failed(failure),
        }
    }
}

/// The texts of a batch call.
pub enum Input {
    /// Read whole before the work was queued.
    Read(Texts),
    /// Arriving in parts from the main thread, which reads them while the first parts encode.
    /// The channel closes after the last part.
    Arriving {
        /// The parts, in input order.
        parts: PartReceiver,
        /// Shut while the main thread is still reading: the parts that arrive meanwhile run on
        /// the work's own thread alone, so that the reading and the encoding share the cores
        /// without a third thread between them.
        reading: Arc<Gate>,
        /// Set (before the channel closes) if the reading failed: the call has thrown, nobody
        /// holds its promise, and the work only has to end quietly.
        abandoned: Arc<AtomicBool>,
    },
}

/// Everything a batch call needs once its arguments are read.
pub struct BatchCall {
    /// The tokenizer.
    pub tokenizer: Arc<Tokenizer>,
    /// The texts, copied out of JS.
    pub input: Input,
    /// How to encode them.
    pub mode: EncodeMode,
    /// Where to run the batch, and what to do when it ends.
    pub runner: Runner,
    /// Set when the caller's signal fires.
    pub cancel: CancelToken,
    /// The listener that sets `cancel`, kept on the caller's signal until the call is dropped:
    /// for an async call, on the JS thread once its promise has settled.
    pub abort_listener: Option<AbortListener>,
}

impl BatchCall {
    /// Encodes the batch: the body of `encodeBatch` and `encodeBatchSync`.
    pub fn encode(&self) -> Outcome<Encoded> {
        let (scheduler, tokenizer) = (&self.runner.scheduler, &*self.tokenizer);
        self.run(|| match &self.input {
            Input::Read(texts) => {
                batch::encode_all(scheduler, tokenizer, texts, &self.mode, &self.cancel)
            }
            Input::Arriving { parts, reading, .. } => batch::encode_parts(
                scheduler,
                tokenizer,
                parts,
                &self.mode,
                &self.cancel,
                Some(reading),
            ),
        })
    }

    /// Counts the batch's tokens: the body of `countBatch` and `countBatchSync`.
    pub fn count(&self) -> Outcome<Vec<u32>> {
        let (scheduler, tokenizer) = (&self.runner.scheduler, &*self.tokenizer);
        self.run(|| match &self.input {
            Input::Read(texts) => {
                batch::count_all(scheduler, tokenizer, texts, &self.mode, &self.cancel)
            }
            Input::Arriving { parts, reading, .. } => batch::count_parts(
                scheduler,
                tokenizer,
                parts,
                &self.mode,
                &self.cancel,
                Some(reading),
            ),
        })
    }

    fn run<T>(&self, work: impl FnOnce() -> Result<T, Failure>) -> Outcome<T> {
        // Aborted before it started: even an empty batch rejects, as the signal asked.
        if self.cancel.is_cancelled() {
            return Outcome::Failed(Failure::Batch(BatchError::Cancelled));
        }
        let outcome = Outcome::of(|| work().into());
        if self.runner.release_memory {
            allocator::release_memory();
        }
        outcome
    }

    /// Whether the call threw while its texts were still being read (see [`Input::Arriving`]).
    fn abandoned(&self) -> bool {
        match &self.input {
            Input::Read(_) => false,
            Input::Arriving { abandoned, .. } => abandoned.load(Ordering::Relaxed),
        }
    }
}

/// The first part of a batch read in parts: small, so that the work starts soon after the call.
/// Each later part holds what the main thread read until the work asked for more (`handover`),
/// so a batch that reads ten times faster than it encodes arrives in about three parts, each a
/// full run of the scheduler.
const FIRST_PART_BYTES: usize = 64 << 10;

/// How much the main thread reads (in bytes, as `StringArray::read_into` weighs them) between two
/// looks at whether the work wants a part. Reading 64 KiB of short JS strings takes it about
/// 40 µs, of long ones about 10 µs.
const HANDOVER_STEP_BYTES: usize = 64 << 10;

/// Texts longer than this many bytes per thread on average are read whole before the work
/// starts, because running in parts would cost more than it hides.
///
/// Reading a string costs the main thread about 100 ns plus 0.16 ns per byte, and encoding it
/// costs a worker 5 to 9 ns per byte (`benchmark/README.md`, "The JS boundary"), so the reading
/// is a share of about `p (100 / L + 0.16) / 6` of the encoding's time on `p` threads, for texts
/// of `L` bytes. Running in parts hides about half of it, and each part is a scheduler run of its
/// own (a publish, a drain, a tail). Measured at 2 threads: ~100-byte texts (reading 4.8 ms
/// against 21.2 ms of encoding, near a quarter) gain, while 6.5 KB documents (1.2 against 16 ms,
/// near 7%) lost 1 to 2 ms per 6 MiB in parts. With more threads the share grows, and so does
/// the length up to which parts pay.
const PARTS_MAX_MEAN_BYTES_PER_THREAD: usize = 512;

/// Queues `task` over the strings of `strings` and returns its promise.
///
/// With one thread, or texts long enough that reading them is a small share of the work
/// ([`PARTS_MAX_MEAN_BYTES_PER_THREAD`]), the strings are read whole first. Otherwise the first
/// part is read, the work queued with it, and what is read after it handed over whenever the
/// work runs out of texts, and at the end. Should reading fail then (a value that is not a
/// string), the error is thrown and the queued work is told to stop and settle quietly: its
/// promise never reached JS, and must not become an unhandled rejection.
pub fn spawn_reading<T: Task>(
    env: &Env,
    mut call: BatchCall,
    mut strings: StringArray,
    task: fn(BatchCall) -> T,
) -> napi::Result<PromiseRaw<'static, T::JsValue>> {
    let threads = call.runner.scheduler.config().threads;
    let mut first = strings.read_part(if threads > 1 {
        FIRST_PART_BYTES
    } else {
        usize::MAX
    })?;
    let longest_worth_parts = first
        .len()
        .saturating_mul(PARTS_MAX_MEAN_BYTES_PER_THREAD.saturating_mul(threads));
    if !strings.is_done() && first.total_bytes() > longest_worth_parts {
        strings.read_into(&mut first, usize::MAX)?;
    }
    if strings.is_done() {
        call.input = Input::Read(first);
        return Ok(env.spawn(task(call))?.promise_object());
    }
    let (sender, parts) = handover();
    let abandoned = Arc::new(AtomicBool::new(false));
    let reading = Arc::new(Gate::new());
    call.input = Input::Arriving {
        parts,
        reading: reading.clone(),
        abandoned: abandoned.clone(),
    };
    let cancel = call.cancel.clone();
    let promise = env.spawn(task(call))?.promise_object();
    // Declared after `sender`, so dropped before it: the work sees the flag once the channel
    // closes, whichever way this function leaves.
    let mut end_of_reading = EndOfReading {
        abandoned,
        cancel,
        reading,
        armed: true,
    };
    let mut part = strings.part_for_the_rest(&first);
    // A send fails only if the work has already ended (it was cancelled): the rest is moot.
    let _ = sender.send(first);
    while !strings.is_done() {
        strings.read_into(&mut part, HANDOVER_STEP_BYTES)?;
        if sender.is_wanted() && !strings.is_done() {
            let next = strings.part_for_the_rest(&part);
            let _ = sender.send(std::mem::replace(&mut part, next));
        }
    }
    let _ = sender.send(part);
    end_of_reading.armed = false;
    Ok(promise)
}

/// Ends the reading of a call's texts, whichever way it ends: opens the `reading` gate, and
/// abandons the call unless disarmed (see [`spawn_reading`]).
struct EndOfReading {
    abandoned: Arc<AtomicBool>,
    cancel: CancelToken,
    reading: Arc<Gate>,
    armed: bool,
}

impl Drop for EndOfReading {
    fn drop(&mut self) {
        self.reading.open();
        if self.armed {
            self.abandoned.store(true, Ordering::Relaxed);
            self.cancel.cancel();
        }
    }
}

/// `encodeBatch`'s async work.
pub struct EncodeTask(pub BatchCall);

impl Task for EncodeTask {
    type Output = Outcome<Encoded>;
    type JsValue = BatchEncoding;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.0.encode())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        if self.0.abandoned() {
            let nothing = Encoded {
                ids: Vec::new(),
                offsets: vec![0],
            };
            return BatchEncoding::new(&env, nothing);
        }
        BatchEncoding::new(&env, output.into_result(&env)?)
    }
}

/// `countBatch`'s async work.
pub struct CountTask(pub BatchCall);

impl Task for CountTask {
    type Output = Outcome<Vec<u32>>;
    type JsValue = Uint32Array;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.0.count())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        if self.0.abandoned() {
            return Ok(Uint32Array::new(Vec::new()));
        }
        Ok(Uint32Array::new(output.into_result(&env)?))
    }
}

/// Decodes each id list: the body of `decodeBatch`.
pub fn decode_all(
    tokenizer: &Tokenizer,
    lists: &[Vec<u32>],
    skip_special_tokens: bool,
) -> Outcome<Vec<String>> {
    Outcome::of(|| {
        let mut texts = Vec::with_capacity(lists.len());
        for (index, ids) in lists.iter().enumerate() {
            match tokenizer.decode(ids, skip_special_tokens) {
                Ok(text) => texts.push(text),
                Err(e) => {
                    return Outcome::Refused(engine::Error::new(
                        e.kind(),
                        format!("list {index}: {}", e.message()),
                    ));
                }
            }
        }
        Outcome::Done(texts)
    })
}

/// `decodeBatch`'s async work.
pub struct DecodeTask {
    /// The tokenizer.
    pub tokenizer: Arc<Tokenizer>,
    /// The id lists, copied out of JS.
    pub lists: Vec<Vec<u32>>,
    /// Leave special tokens out.
    pub skip_special_tokens: bool,
}

impl Task for DecodeTask {
    type Output = Outcome<Vec<String>>;
    type JsValue = Vec<String>;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(decode_all(
            &self.tokenizer,
            &self.lists,
            self.skip_special_tokens,
        ))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        output.into_result(&env)
    }
}
