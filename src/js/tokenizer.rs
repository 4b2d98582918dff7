//! The JS `Tokenizer` class.

use std::path::Path;
use std::sync::Arc;

use napi::bindgen_prelude::{
    AsyncTask, FromNapiValue, JsValue, PromiseRaw, TypedArray, TypedArrayType, Uint32Array, Unknown,
};
use napi::{Env, Task, ValueType};
use napi_derive::napi;

use super::batch_encoding::BatchEncoding;
use super::errors::{ErrorClass, from_engine, js_error};
use super::options::{BatchOptions, DecodeOptions, EncodeOptions};
use super::scheduler::default_runner;
use super::tasks::{
    BatchCall, CountTask, DecodeTask, EncodeTask, Input, decode_all, spawn_reading,
};
use super::texts::{StringArray, describe, text_from_string, texts_from_array, texts_from_utf8};
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

/// Reads a string argument, or throws a `TypeError` naming it.
fn string_argument(env: &Env, value: &Unknown, what: &str) -> napi::Result<String> {
    if value.get_type()? != ValueType::String {
        return Err(js_error(
            env,
            ErrorClass::Type,
            &format!("{what} is {}; expected a string", describe(value)),
        ));
    }
    // SAFETY: `value` is a string of `env`.
    unsafe { String::from_napi_value(env.raw(), value.raw()) }
}

/// Reads a list of ids: a `Uint32Array`, or an array of whole numbers from 0 to 2^32 - 1.
fn ids_argument(env: &Env, value: &Unknown, what: &str) -> napi::Result<Vec<u32>> {
    u32_list_argument(env, value, what, "ids")
}

/// Reads a `Uint32Array`, or an array of whole numbers from 0 to 2^32 - 1; `noun` names what the
/// numbers are in errors.
pub(super) fn u32_list_argument(
    env: &Env,
    value: &Unknown,
    what: &str,
    noun: &str,
) -> napi::Result<Vec<u32>> {
    if value.is_typedarray()? {
        // SAFETY: `value` is a typed array of `env`.
        let array = unsafe { TypedArray::from_napi_value(env.raw(), value.raw())? };
        if array.typed_array_type == TypedArrayType::Uint32 {
            // SAFETY: checked to be a Uint32Array of `env`.
            return Ok(unsafe { Uint32Array::from_napi_value(env.raw(), value.raw())? }.to_vec());
        }
    } else if value.is_array()? {
        // SAFETY: `value` is an array of `env`.
        let items = unsafe { Vec::<Unknown>::from_napi_value(env.raw(), value.raw())? };
        let mut ids = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            if item.get_type()? != ValueType::Number {
                return Err(js_error(
                    env,
                    ErrorClass::Type,
                    &format!(
                        "{what}[{index}] is {}; {noun} are whole numbers",
                        describe(item)
                    ),
                ));
            }
            // SAFETY: `item` is a number of `env`.
            let id = unsafe { f64::from_napi_value(env.raw(), item.raw())? };
            if id.fract() != 0.0 || !(0.0..=u32::MAX as f64).contains(&id) {
                return Err(js_error(
                    env,
                    ErrorClass::Range,
                    &format!(
                        "{what}[{index}] is {}; {noun} are whole numbers from 0 to 4294967295",
                        as_js_prints(id)
                    ),
                ));
            }
            ids.push(id as u32);
        }
        return Ok(ids);
    }
    Err(js_error(
        env,
        ErrorClass::Type,
        &format!(
            "{what} is {}; expected a Uint32Array or an array of numbers",
            describe(value)
        ),
    ))
}

/// `number` as JS prints it where Rust's spelling differs (`Infinity`, not `inf`).
fn as_js_prints(number: f64) -> String {
    match number {
        f64::INFINITY => "Infinity".to_owned(),
        f64::NEG_INFINITY => "-Infinity".to_owned(),
        _ => number.to_string(),
    }
}

/// Reads a list of id lists, each as `ids_argument` reads one.
fn id_lists_argument(env: &Env, lists: &Unknown) -> napi::Result<Vec<Vec<u32>>> {
    if !lists.is_array()? {
        return Err(js_error(
            env,
            ErrorClass::Type,
            &format!(
                "lists is {}; expected an array of id lists",
                describe(lists)
            ),
        ));
    }
    // SAFETY: `lists` is an array of `env`.
    let items = unsafe { Vec::<Unknown>::from_napi_value(env.raw(), lists.raw())? };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| ids_argument(env, item, &format!("lists[{index}]")))
        .collect()
}

impl Tokenizer {
    fn batch_call(
        &self,
        env: &Env,
        input: Input,
        options: &mut BatchOptions,
    ) -> napi::Result<BatchCall> {
        let mode = self
            .tokenizer
            .encode_mode(
                options.add_special_tokens,
                &options.allowed_special.take().unwrap_or_default(),
            )
            .map_err(|e| from_engine(env, &e))?;
        let runner = match options.scheduler.take() {
            Some(runner) => runner,
            None => default_runner(env)?,
        };
        Ok(BatchCall {
            tokenizer: self.tokenizer.clone(),
            input,
            mode,
            runner,
            cancel: CancelToken::default(),
            abort_listener: None,
        })
    }

    /// The call of an async batch method, cancelled by the options' signal.
    ///
    /// The signal reaches the task only through the call's cancel token, which batchtok's own
    /// listener sets (`signal.rs`), not as napi-rs's task signal: napi-rs rejects a task aborted
    /// while still queued itself, with an error of its own (`code: 'Cancelled'`); through the
    /// token every abort rejects with batchtok's `AbortError`, before the first chunk when the
    /// task had not started.
    fn async_call(
        &self,
        env: &Env,
        input: Input,
        mut options: BatchOptions,
    ) -> napi::Result<BatchCall> {
        let mut call = self.batch_call(env, input, &mut options)?;
        if let Some(signal) = options.signal {
            call.abort_listener = Some(signal.listen(env, &call.cancel)?);
        }
        Ok(call)
    }

    /// The promise of an async batch method over a JS array of strings: `task` over the call,
    /// queued once the first part of the strings is read (`tasks::spawn_reading`).
    fn strings_task<T: Task>(
        &self,
        env: &Env,
        texts: &Unknown,
        options: BatchOptions,
        task: fn(BatchCall) -> T,
    ) -> napi::Result<PromiseRaw<'static, T::JsValue>> {
        let strings = StringArray::new(env, texts, "texts")?;
        // No text is read yet: `spawn_reading` sets the input once it knows how it reads them.
        let call = self.async_call(env, Input::Read(Texts::default()), options)?;
        spawn_reading(env, call, strings, task)
    }

    /// The call of a `Sync` batch method, which takes no signal: it blocks until it returns.
    fn sync_batch_call(
        &self,
        env: &Env,
        texts: Texts,
        mut options: BatchOptions,
        method: &str,
    ) -> napi::Result<BatchCall> {
        if options.signal.is_some() {
            return Err(js_error(
                env,
                ErrorClass::Type,
                &format!("options.signal needs the async method; {method} blocks until it returns"),
            ));
        }
        self.batch_call(env, Input::Read(texts), &mut options)
    }
}

#[napi]
impl Tokenizer {
    /// An OpenAI encoding embedded in batchtok: `'o200k_base'`, `'cl100k_base'`, `'p50k_base'`,
    /// `'r50k_base'` (alias `'gpt2'`). Nothing is downloaded. An unknown name throws an `Error`
    /// that lists the valid ones.
    #[napi(factory, catch_unwind, ts_args_type = "name: string")]
    pub fn from_encoding(env: Env, name: Unknown) -> napi::Result<Tokenizer> {
        let name = string_argument(&env, &name, "name")?;
        let tokenizer =
            engine::Tokenizer::from_encoding(&name).map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer { tokenizer })
    }

    /// A Hugging Face `tokenizer.json` file (any version `tokenizers` reads). A missing file or
    /// invalid JSON throws an `Error` naming the path and the reason.
    #[napi(factory, catch_unwind, ts_args_type = "path: string")]
    pub fn from_file(env: Env, path: Unknown) -> napi::Result<Tokenizer> {
        let path = string_argument(&env, &path, "path")?;
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
        let json = string_argument(&env, &json, "json")?;
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

    /// The ids of every text, computed off the main thread: the event loop stays free.
    #[napi(
        catch_unwind,
        ts_args_type = "texts: string[], options?: BatchOptions",
        ts_return_type = "Promise<BatchEncoding>"
    )]
    pub fn encode_batch(
        &self,
        env: Env,
        texts: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<PromiseRaw<'static, BatchEncoding>> {
        let options = BatchOptions::read(&env, options)?;
        self.strings_task(&env, &texts, options, EncodeTask)
    }

    /// `encodeBatch` on the calling thread (still spread over the scheduler's threads).
    #[napi(ts_args_type = "texts: string[], options?: BatchOptions")]
    pub fn encode_batch_sync(
        &self,
        env: Env,
        texts: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<BatchEncoding> {
        let options = BatchOptions::read(&env, options)?;
        let call = self.sync_batch_call(
            &env,
            texts_from_array(&env, &texts, "texts")?,
            options,
            "encodeBatchSync",
        )?;
        BatchEncoding::new(&env, call.encode().into_result(&env)?)
    }

    /// How many tokens each text has, without keeping their ids.
    #[napi(
        catch_unwind,
        ts_args_type = "texts: string[], options?: BatchOptions",
        ts_return_type = "Promise<Uint32Array>"
    )]
    pub fn count_batch(
        &self,
        env: Env,
        texts: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<PromiseRaw<'static, Uint32Array>> {
        let options = BatchOptions::read(&env, options)?;
        self.strings_task(&env, &texts, options, CountTask)
    }

    /// `countBatch` on the calling thread.
    #[napi(ts_args_type = "texts: string[], options?: BatchOptions")]
    pub fn count_batch_sync(
        &self,
        env: Env,
        texts: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let options = BatchOptions::read(&env, options)?;
        let call = self.sync_batch_call(
            &env,
            texts_from_array(&env, &texts, "texts")?,
            options,
            "countBatchSync",
        )?;
        Ok(Uint32Array::new(call.count().into_result(&env)?))
    }

    /// `encodeBatch` for texts already held as UTF-8 bytes (a file read with `fs.readFile`): text
    /// `i` is `bytes.subarray(offsets[i], offsets[i + 1])`. No JS string is made per text; the
    /// bytes are copied once. Offsets that decrease, run past the end or split a character, and
    /// bytes that are not UTF-8, throw an `Error` that names the place.
    #[napi(
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | number[], options?: BatchOptions",
        ts_return_type = "Promise<BatchEncoding>"
    )]
    pub fn encode_utf8_batch(
        &self,
        env: Env,
        bytes: Unknown,
        offsets: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<AsyncTask<EncodeTask>> {
        let options = BatchOptions::read(&env, options)?;
        let texts = texts_from_utf8(&env, &bytes, &offsets)?;
        let call = self.async_call(&env, Input::Read(texts), options)?;
        Ok(AsyncTask::new(EncodeTask(call)))
    }

    /// `encodeUtf8Batch` on the calling thread.
    #[napi(
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | number[], options?: BatchOptions"
    )]
    pub fn encode_utf8_batch_sync(
        &self,
        env: Env,
        bytes: Unknown,
        offsets: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<BatchEncoding> {
        let options = BatchOptions::read(&env, options)?;
        let call = self.sync_batch_call(
            &env,
            texts_from_utf8(&env, &bytes, &offsets)?,
            options,
            "encodeUtf8BatchSync",
        )?;
        BatchEncoding::new(&env, call.encode().into_result(&env)?)
    }

    /// `countBatch` for texts held as UTF-8 bytes, as `encodeUtf8Batch` reads them.
    #[napi(
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | number[], options?: BatchOptions",
        ts_return_type = "Promise<Uint32Array>"
    )]
    pub fn count_utf8_batch(
        &self,
        env: Env,
        bytes: Unknown,
        offsets: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<AsyncTask<CountTask>> {
        let options = BatchOptions::read(&env, options)?;
        let texts = texts_from_utf8(&env, &bytes, &offsets)?;
        let call = self.async_call(&env, Input::Read(texts), options)?;
        Ok(AsyncTask::new(CountTask(call)))
    }

    /// `countUtf8Batch` on the calling thread.
    #[napi(
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | number[], options?: BatchOptions"
    )]
    pub fn count_utf8_batch_sync(
        &self,
        env: Env,
        bytes: Unknown,
        offsets: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let options = BatchOptions::read(&env, options)?;
        let call = self.sync_batch_call(
            &env,
            texts_from_utf8(&env, &bytes, &offsets)?,
            options,
            "countUtf8BatchSync",
        )?;
        Ok(Uint32Array::new(call.count().into_result(&env)?))
    }

    /// The text of a list of ids. An id outside the vocabulary throws a `RangeError` naming it.
    #[napi(
        catch_unwind,
        ts_args_type = "ids: Uint32Array | number[], options?: DecodeOptions"
    )]
    pub fn decode(&self, env: Env, ids: Unknown, options: Option<Unknown>) -> napi::Result<String> {
        let options = DecodeOptions::read(&env, options)?;
        let ids = ids_argument(&env, &ids, "ids")?;
        self.tokenizer
            .decode(&ids, options.skip_special_tokens.unwrap_or(false))
            .map_err(|e| from_engine(&env, &e))
    }

    /// The texts of several lists of ids, decoded off the main thread.
    #[napi(
        ts_args_type = "lists: Array<Uint32Array | number[]>, options?: DecodeOptions",
        ts_return_type = "Promise<string[]>"
    )]
    pub fn decode_batch(
        &self,
        env: Env,
        lists: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<AsyncTask<DecodeTask>> {
        let options = DecodeOptions::read(&env, options)?;
        let lists = id_lists_argument(&env, &lists)?;
        Ok(AsyncTask::new(DecodeTask {
            tokenizer: self.tokenizer.clone(),
            lists,
            skip_special_tokens: options.skip_special_tokens.unwrap_or(false),
        }))
    }

    /// `decodeBatch` on the calling thread.
    #[napi(ts_args_type = "lists: Array<Uint32Array | number[]>, options?: DecodeOptions")]
    pub fn decode_batch_sync(
        &self,
        env: Env,
        lists: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Vec<String>> {
        let options = DecodeOptions::read(&env, options)?;
        let lists = id_lists_argument(&env, &lists)?;
        decode_all(
            &self.tokenizer,
            &lists,
            options.skip_special_tokens.unwrap_or(false),
        )
        .into_result(&env)
    }
}
