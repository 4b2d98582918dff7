//! The async work behind the promise-returning methods: each runs the same function as its `Sync`
//! form, on a libuv thread, and settles on the main thread.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use napi::bindgen_prelude::Uint32Array;
use napi::{Env, Task};

use super::batch_encoding::BatchEncoding;
use super::errors::{ErrorClass, from_engine, from_failure, js_error};
use super::scheduler::Runner;
use super::signal::AbortListener;
use crate::allocator;
use crate::batch::{self, Encoded, Failure, Texts};
use crate::engine::{self, EncodeMode, Tokenizer};
use crate::scheduler::{BatchError, CancelToken, Scheduler};

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

/// Everything a batch call needs once its arguments are read.
pub struct BatchCall {
    /// The tokenizer.
    pub tokenizer: Arc<Tokenizer>,
    /// The texts, copied out of JS.
    pub texts: Texts,
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

/// The signature `batch::encode_all` and `batch::count_all` share.
type BatchFn<T> =
    fn(&Scheduler, &Tokenizer, &Texts, &EncodeMode, &CancelToken) -> Result<T, Failure>;

impl BatchCall {
    /// Encodes the batch: the body of `encodeBatch` and `encodeBatchSync`.
    pub fn encode(&self) -> Outcome<Encoded> {
        self.run(batch::encode_all)
    }

    /// Counts the batch's tokens: the body of `countBatch` and `countBatchSync`.
    pub fn count(&self) -> Outcome<Vec<u32>> {
        self.run(batch::count_all)
    }

    fn run<T>(&self, work: BatchFn<T>) -> Outcome<T> {
        // Aborted before it started: even an empty batch rejects, as the signal asked.
        if self.cancel.is_cancelled() {
            return Outcome::Failed(Failure::Batch(BatchError::Cancelled));
        }
        let outcome = Outcome::of(|| {
            work(
                &self.runner.scheduler,
                &self.tokenizer,
                &self.texts,
                &self.mode,
                &self.cancel,
            )
            .into()
        });
        if self.runner.release_memory {
            allocator::release_memory();
        }
        outcome
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
