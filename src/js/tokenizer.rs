//! The JS `Tokenizer` class.

use std::path::Path;
use std::sync::Arc;

use napi::bindgen_prelude::{JsValue, Uint32Array, Unknown};
use napi::{Env, Task};
use napi_derive::napi;

use super::args::{id_lists, string, u32_list};
use super::batch_encoding::BatchEncoding;
use super::errors::{from_engine, type_error};
use super::options::{BatchOptions, DecodeOptions, EncodeOptions};
use super::raw;
use super::scheduler::default_runner;
use super::tasks::{BatchCall, CountTask, DecodeCall, DecodeTask, EncodeTask};
use super::texts::{text_from_string, texts_from_array, texts_from_utf8};
use crate::batch::Texts;
use crate::engine::{self, Family};
use crate::scheduler::CancelToken;

/// A tokenizer: an embedded OpenAI encoding or a Hugging Face tokenizer.json.
///
/// One `Tokenizer` may serve any number of calls at once, from any number of batches.
#[napi]
pub struct Tokenizer {
    pub(super) tokenizer: Arc<engine::Tokenizer>,
}

impl Tokenizer {
    /// The call of a batch method over `texts`: its encode mode and scheduler from `options`,
    /// and, for an async method (`is_async`), its listener on the options' signal.
    ///
    /// The signal reaches the task only through the call's cancel token, which batchtok's own
    /// listener sets (`signal.rs`), not as napi-rs's task signal: napi-rs rejects a task aborted
    /// while still queued itself, with an error of its own (`code: 'Cancelled'`); through the
    /// token every abort rejects with batchtok's `AbortError`, before the first chunk when the
    /// task had not started. A `Sync` method takes no signal: it blocks until it returns.
    fn batch_call(
        &self,
        env: &Env,
        texts: Texts,
        options: BatchOptions,
        method: &str,
        is_async: bool,
    ) -> napi::Result<BatchCall> {
        if options.signal.is_some() && !is_async {
            return Err(type_error(
                env,
                &format!("options.signal needs the async method; {method} blocks until it returns"),
            ));
        }
        let mode = self
            .tokenizer
            .encode_mode(
                options.add_special_tokens,
                &options.allowed_special.unwrap_or_default(),
            )
            .map_err(|e| from_engine(env, &e))?;
        let runner = match options.scheduler {
            Some(runner) => runner,
            None => default_runner(env)?,
        };
        let cancel = CancelToken::default();
        let abort_listener = match options.signal {
            Some(signal) => Some(signal.listen(env, &cancel)?),
            None => None,
        };
        Ok(BatchCall {
            tokenizer: self.tokenizer.clone(),
            texts,
            mode,
            runner,
            cancel,
            abort_listener,
        })
    }

    /// The call of a decode method over `lists`.
    fn decode_call(
        &self,
        env: &Env,
        lists: Vec<Vec<u32>>,
        options: DecodeOptions,
        method: &str,
        is_async: bool,
    ) -> napi::Result<DecodeCall> {
        if options.signal.is_some() && !is_async {
            return Err(type_error(
                env,
                &format!("options.signal needs the async method; {method} blocks until it returns"),
            ));
        }
        let cancel = CancelToken::default();
        let abort_listener = match options.signal {
            Some(signal) => Some(signal.listen(env, &cancel)?),
            None => None,
        };
        Ok(DecodeCall {
            tokenizer: self.tokenizer.clone(),
            lists,
            skip_special_tokens: options.skip_special_tokens.unwrap_or(false),
            cancel,
            abort_listener,
        })
    }
}

#[napi]
impl Tokenizer {
    /// An OpenAI encoding embedded in batchtok: `'o200k_base'`, `'cl100k_base'`, `'p50k_base'`,
    /// `'r50k_base'` (alias `'gpt2'`). Nothing is downloaded. An unknown name throws an `Error`
    /// that lists the valid ones.
    #[napi(factory, catch_unwind, ts_args_type = "name: string")]
    pub fn from_encoding(env: Env, name: Unknown) -> napi::Result<Tokenizer> {
        let name = string(&env, &name, "name")?;
        let tokenizer =
            engine::Tokenizer::from_encoding(&name).map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer { tokenizer })
    }

    /// A Hugging Face `tokenizer.json` file (any version `tokenizers` reads). A missing file or
    /// invalid JSON throws an `Error` naming the path and the reason.
    #[napi(factory, catch_unwind, ts_args_type = "path: string")]
    pub fn from_file(env: Env, path: Unknown) -> napi::Result<Tokenizer> {
        let path = string(&env, &path, "path")?;
        let tokenizer =
            engine::Tokenizer::from_file(Path::new(&path)).map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer {
            tokenizer: Arc::new(tokenizer),
        })
    }

    /// A Hugging Face tokenizer from the text of a `tokenizer.json`.
    #[napi(
        factory,
        js_name = "fromJSON",
        catch_unwind,
        ts_args_type = "json: string"
    )]
    pub fn from_json(env: Env, json: Unknown) -> napi::Result<Tokenizer> {
        let json = string(&env, &json, "json")?;
        let tokenizer = engine::Tokenizer::from_json(&json, "the tokenizer JSON")
            .map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer {
            tokenizer: Arc::new(tokenizer),
        })
    }

    /// The encoding's name (`'o200k_base'`), or `'tokenizer.json'` for a Hugging Face tokenizer.
    #[napi(getter)]
    pub fn name(&self) -> String {
        match self.tokenizer.family() {
            Family::OpenAi(encoding) => encoding.name.to_owned(),
            Family::HuggingFace => "tokenizer.json".to_owned(),
        }
    }

    /// One more than the largest id in the vocabulary (added and special tokens included).
    #[napi(getter)]
    pub fn vocab_size(&self) -> u32 {
        self.tokenizer.vocab_size()
    }

    /// Which engine encodes which texts, and why.
    #[napi(getter)]
    pub fn routing(&self) -> String {
        self.tokenizer.routing()
    }

    /// The ids of one text, on the calling thread.
    #[napi(catch_unwind, ts_args_type = "text: string, options?: EncodeOptions")]
    pub fn encode(
        &self,
        env: Env,
        text: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let options = EncodeOptions::read(&env, options)?;
        let texts = text_from_string(&env, &text, "text")?;
        let mode = self
            .tokenizer
            .encode_mode(
                options.add_special_tokens,
                &options.allowed_special.unwrap_or_default(),
            )
            .map_err(|e| from_engine(&env, &e))?;
        let ids = self
            .tokenizer
            .encode(texts.get(0), &mode)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(Uint32Array::new(ids.as_slice().to_vec()))
    }

    /// The ids of every text, computed off the main thread: the event loop stays free. Every
    /// error rejects the promise, bad arguments included.
    #[napi(
        catch_unwind,
        ts_args_type = "texts: readonly string[], options?: BatchOptions",
        ts_return_type = "Promise<BatchEncoding>"
    )]
    pub fn encode_batch<'env>(
        &self,
        env: &'env Env,
        texts: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            let options = BatchOptions::read(env, options, "encodeBatch")?;
            let texts = texts_from_array(env, &texts, "texts")?;
            Ok(EncodeTask(self.batch_call(env, texts, options, "encodeBatch", true)?))
        })
    }

    /// `encodeBatch` on the calling thread (still spread over the scheduler's threads).
    #[napi(ts_args_type = "texts: readonly string[], options?: BatchOptions")]
    pub fn encode_batch_sync(
        &self,
        env: Env,
        texts: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<BatchEncoding> {
        let options = BatchOptions::read(&env, options, "encodeBatchSync")?;
        let texts = texts_from_array(&env, &texts, "texts")?;
        let call = self.batch_call(&env, texts, options, "encodeBatchSync", false)?;
        BatchEncoding::new(&env, call.settle(&env, call.encode())?)
    }

    /// How many tokens each text has, without keeping their ids.
    #[napi(
        catch_unwind,
        ts_args_type = "texts: readonly string[], options?: BatchOptions",
        ts_return_type = "Promise<Uint32Array>"
    )]
    pub fn count_batch<'env>(
        &self,
        env: &'env Env,
        texts: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            let options = BatchOptions::read(env, options, "countBatch")?;
            let texts = texts_from_array(env, &texts, "texts")?;
            Ok(CountTask(self.batch_call(env, texts, options, "countBatch", true)?))
        })
    }

    /// `countBatch` on the calling thread.
    #[napi(ts_args_type = "texts: readonly string[], options?: BatchOptions")]
    pub fn count_batch_sync(
        &self,
        env: Env,
        texts: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let options = BatchOptions::read(&env, options, "countBatchSync")?;
        let texts = texts_from_array(&env, &texts, "texts")?;
        let call = self.batch_call(&env, texts, options, "countBatchSync", false)?;
        Ok(Uint32Array::new(call.settle(&env, call.count())?))
    }

    /// `encodeBatch` for texts already held as UTF-8 bytes (a file read with `fs.readFile`): text
    /// `i` is `bytes.subarray(offsets[i], offsets[i + 1])`. No JS string is made per text; the
    /// bytes are copied once. Offsets that decrease, run past the end or split a character, and
    /// bytes that are not UTF-8, reject with an `Error` that names the place.
    #[napi(
        catch_unwind,
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | readonly number[], options?: BatchOptions",
        ts_return_type = "Promise<BatchEncoding>"
    )]
    pub fn encode_utf8_batch<'env>(
        &self,
        env: &'env Env,
        bytes: Unknown<'env>,
        offsets: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            let options = BatchOptions::read(env, options, "encodeUtf8Batch")?;
            let texts = texts_from_utf8(env, &bytes, &offsets)?;
            Ok(EncodeTask(self.batch_call(env, texts, options, "encodeUtf8Batch", true)?))
        })
    }

    /// `encodeUtf8Batch` on the calling thread.
    #[napi(
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | readonly number[], options?: BatchOptions"
    )]
    pub fn encode_utf8_batch_sync(
        &self,
        env: Env,
        bytes: Unknown,
        offsets: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<BatchEncoding> {
        let options = BatchOptions::read(&env, options, "encodeUtf8BatchSync")?;
        let texts = texts_from_utf8(&env, &bytes, &offsets)?;
        let call = self.batch_call(&env, texts, options, "encodeUtf8BatchSync", false)?;
        BatchEncoding::new(&env, call.settle(&env, call.encode())?)
    }

    /// `countBatch` for texts held as UTF-8 bytes, as `encodeUtf8Batch` reads them.
    #[napi(
        catch_unwind,
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | readonly number[], options?: BatchOptions",
        ts_return_type = "Promise<Uint32Array>"
    )]
    pub fn count_utf8_batch<'env>(
        &self,
        env: &'env Env,
        bytes: Unknown<'env>,
        offsets: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            let options = BatchOptions::read(env, options, "countUtf8Batch")?;
            let texts = texts_from_utf8(env, &bytes, &offsets)?;
            Ok(CountTask(self.batch_call(env, texts, options, "countUtf8Batch", true)?))
        })
    }

    /// `countUtf8Batch` on the calling thread.
    #[napi(
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | readonly number[], options?: BatchOptions"
    )]
    pub fn count_utf8_batch_sync(
        &self,
        env: Env,
        bytes: Unknown,
        offsets: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let options = BatchOptions::read(&env, options, "countUtf8BatchSync")?;
        let texts = texts_from_utf8(&env, &bytes, &offsets)?;
        let call = self.batch_call(&env, texts, options, "countUtf8BatchSync", false)?;
        Ok(Uint32Array::new(call.settle(&env, call.count())?))
    }

    /// The text of a list of ids. An id outside the vocabulary throws a `RangeError` naming it.
    #[napi(
        catch_unwind,
        ts_args_type = "ids: Uint32Array | readonly number[], options?: DecodeOptions"
    )]
    pub fn decode(&self, env: Env, ids: Unknown, options: Option<Unknown>) -> napi::Result<String> {
        let options = DecodeOptions::read(&env, options, "decode")?;
        if options.signal.is_some() {
            return Err(type_error(
                &env,
                "options.signal needs the async method; decode blocks until it returns",
            ));
        }
        let ids = u32_list(&env, &ids, "ids", "ids")?;
        self.tokenizer
            .decode(&ids, options.skip_special_tokens.unwrap_or(false))
            .map_err(|e| from_engine(&env, &e))
    }

    /// The texts of several lists of ids, decoded off the main thread.
    #[napi(
        catch_unwind,
        ts_args_type = "lists: ReadonlyArray<Uint32Array | readonly number[]>, options?: DecodeOptions",
        ts_return_type = "Promise<string[]>"
    )]
    pub fn decode_batch<'env>(
        &self,
        env: &'env Env,
        lists: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            let options = DecodeOptions::read(env, options, "decodeBatch")?;
            let lists = id_lists(env, &lists, "lists")?;
            Ok(DecodeTask(self.decode_call(env, lists, options, "decodeBatch", true)?))
        })
    }

    /// `decodeBatch` on the calling thread.
    #[napi(
        catch_unwind,
        ts_args_type = "lists: ReadonlyArray<Uint32Array | readonly number[]>, options?: DecodeOptions"
    )]
    pub fn decode_batch_sync(
        &self,
        env: Env,
        lists: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Vec<String>> {
        let options = DecodeOptions::read(&env, options, "decodeBatchSync")?;
        let lists = id_lists(&env, &lists, "lists")?;
        let call = self.decode_call(&env, lists, options, "decodeBatchSync", false)?;
        call.settle(&env, call.decode())
    }
}

/// The promise of an async method: `make`'s task queued on a libuv thread, or, if `make` fails
/// (a bad argument, a bad environment variable), a promise rejected with its error, so that an
/// async method reports every error the same way.
fn promise<'env, T: Task + 'env>(
    env: &'env Env,
    make: impl FnOnce() -> napi::Result<T>,
) -> napi::Result<Unknown<'env>> {
    match make() {
        Ok(task) => Ok(env.spawn(task)?.promise_object().to_unknown()),
        Err(error) => raw::rejected_promise(env, error),
    }
}
