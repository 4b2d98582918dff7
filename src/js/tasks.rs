//! The calls behind the batch methods: each `Sync` method runs its call on the calling thread,
//! and each promise-returning one runs the same call on a libuv thread and settles on the main
//! thread.

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
use crate::scheduler::{BatchError, CancelToken};

/// What a call's work produced, or why it produced nothing.
pub enum TaskOutput<T> {
    /// The work finished.
    Done(T),
    /// The batch failed or was cancelled.
    Failed(Failure),
    /// The engine refused the input.
    Refused(engine::Error),
    /// A panic escaped the work; the message, for the error.
    Panicked(String),
}

impl<T> TaskOutput<T> {
    /// Runs `work`, turning a panic into `Panicked` so it never unwinds into libuv.
    pub fn of(work: impl FnOnce() -> TaskOutput<T>) -> TaskOutput<T> {
        catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|panic| {
            let message = engine::panic_text(&*panic).unwrap_or("unknown panic");
            TaskOutput::Panicked(message.to_owned())
        })
    }

    /// The value, or the JS error to throw or reject with. An abort's error carries the signal's
    /// `reason` as its `cause`, when the call listened to one.
    pub fn into_result(self, env: &Env, listener: Option<&AbortListener>) -> napi::Result<T> {
        match self {
            TaskOutput::Done(value) => Ok(value),
            TaskOutput::Failed(failure) => {
                let reason = listener.and_then(|listener| listener.reason(env));
                Err(from_failure(env, &failure, reason.as_ref()))
            }
            TaskOutput::Refused(error) => Err(from_engine(env, &error)),
            TaskOutput::Panicked(message) => Err(js_error(
                env,
                ErrorClass::Error,
                &format!(
                    "batchtok hit an internal error ({message}); the call was abandoned. Please report it"
                ),
            )),
        }
    }
}

impl<T> From<Result<T, Failure>> for TaskOutput<T> {
    fn from(result: Result<T, Failure>) -> Self {
        match result {
            Ok(value) => TaskOutput::Done(value),
            Err(failure) => TaskOutput::Failed(failure),
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

impl BatchCall {
    /// Encodes the batch: the body of `encodeBatch` and `encodeBatchSync`.
    pub fn encode(&self) -> TaskOutput<Encoded> {
        let (scheduler, tokenizer) = (&self.runner.scheduler, &*self.tokenizer);
        self.run(|| batch::encode_all(scheduler, tokenizer, &self.texts, &self.mode, &self.cancel))
    }

    /// Counts the batch's tokens: the body of `countBatch` and `countBatchSync`.
    pub fn count(&self) -> TaskOutput<Vec<u32>> {
        let (scheduler, tokenizer) = (&self.runner.scheduler, &*self.tokenizer);
        self.run(|| batch::count_all(scheduler, tokenizer, &self.texts, &self.mode, &self.cancel))
    }

    fn run<T>(&self, work: impl FnOnce() -> Result<T, Failure>) -> TaskOutput<T> {
        // Aborted before it started: even an empty batch rejects, as the signal asked.
        if self.cancel.is_cancelled() {
            return TaskOutput::Failed(Failure::Batch(BatchError::Cancelled));
        }
        let output = TaskOutput::of(|| work().into());
        if self.runner.release_memory {
            allocator::release_memory();
        }
        output
    }

    /// The value of `output`, or the error to reject or throw with.
    pub fn settle<T>(&self, env: &Env, output: TaskOutput<T>) -> napi::Result<T> {
        output.into_result(env, self.abort_listener.as_ref())
    }
}

/// `encodeBatch`'s async work.
pub struct EncodeTask(pub BatchCall);

impl Task for EncodeTask {
    type Output = TaskOutput<Encoded>;
    type JsValue = BatchEncoding;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.0.encode())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        BatchEncoding::new(&env, self.0.settle(&env, output)?)
    }
}

/// `countBatch`'s async work.
pub struct CountTask(pub BatchCall);

impl Task for CountTask {
    type Output = TaskOutput<Vec<u32>>;
    type JsValue = Uint32Array;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.0.count())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        Ok(Uint32Array::new(self.0.settle(&env, output)?))
    }
}

/// A decode call once its arguments are read: the body of `decodeBatch` and `decodeBatchSync`.
pub struct DecodeCall {
    /// The tokenizer.
    pub tokenizer: Arc<Tokenizer>,
    /// The id lists, copied out of JS.
    pub lists: Vec<Vec<u32>>,
    /// Leave special tokens out.
    pub skip_special_tokens: bool,
    /// Take out the spaces transformers' `clean_up_tokenization` takes out.
    pub clean_up_tokenization_spaces: bool,
    /// Set when the caller's signal fires; checked between lists.
    pub cancel: CancelToken,
    /// As in [`BatchCall`].
    pub abort_listener: Option<AbortListener>,
}

impl DecodeCall {
    /// Decodes each id list, in order.
    pub fn decode(&self) -> TaskOutput<Vec<String>> {
        TaskOutput::of(|| {
            let mut texts = Vec::with_capacity(self.lists.len());
            for (index, ids) in self.lists.iter().enumerate() {
                if self.cancel.is_cancelled() {
                    return TaskOutput::Failed(Failure::Batch(BatchError::Cancelled));
                }
                let text = self.tokenizer.decode_cleaned(
                    ids,
                    self.skip_special_tokens,
                    self.clean_up_tokenization_spaces,
                );
                match text {
                    Ok(text) => texts.push(text),
                    Err(e) => {
                        return TaskOutput::Refused(engine::Error::new(
                            e.kind(),
                            format!("lists[{index}]: {}", e.message()),
                        ));
                    }
                }
            }
            TaskOutput::Done(texts)
        })
    }

    /// The value of `output`, or the error to reject or throw with.
    pub fn settle<T>(&self, env: &Env, output: TaskOutput<T>) -> napi::Result<T> {
        output.into_result(env, self.abort_listener.as_ref())
    }
}

/// `decodeBatch`'s async work.
pub struct DecodeTask(pub DecodeCall);

impl Task for DecodeTask {
    type Output = TaskOutput<Vec<String>>;
    type JsValue = Vec<String>;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.0.decode())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        self.0.settle(&env, output)
    }
}
