//! The options objects of the JS API: documented structs for `index.d.ts`, each read by hand with
//! the readers of `args.rs`, so that every error names the option at fault and says what it
//! accepts, and a key no method takes is refused rather than ignored.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;

use super::args::{bool_option, describe, options_object, property};
use super::errors::{range_error, type_error};
use super::raw;
use super::scheduler::{Runner, Scheduler as JsScheduler};
use super::signal::Signal;
use crate::engine::AllowedSpecial;

/// Options of `Tokenizer.encode`.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct EncodeOptions {
    /// Hugging Face tokenizers: add the post-processor's template tokens (`[CLS]` … `[SEP]`,
    /// `<s>` … `</s>`) around each text, as `tokenizers` does by default.
    /// @default true
    pub add_special_tokens: Option<bool>,
    /// OpenAI encodings: the special tokens whose text becomes their id, `'all'` or a list. Any
    /// other special-token text is encoded as ordinary text (tiktoken's `encode_ordinary`), so
    /// no text makes a call fail.
    /// @default none
    #[napi(ts_type = "'all' | string[]")]
    pub allowed_special: Option<AllowedSpecial>,
}

/// Options of `encodeBatch`, `countBatch` and their `Sync` forms.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct BatchOptions<'env> {
    /// As in `EncodeOptions`.
    /// @default true
    pub add_special_tokens: Option<bool>,
    /// As in `EncodeOptions`.
    /// @default none
    #[napi(ts_type = "'all' | string[]")]
    pub allowed_special: Option<AllowedSpecial>,
    /// Aborts the batch: the promise rejects with an `AbortError` within about one chunk's time.
    /// (Async methods only.)
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Signal<'env>>,
    /// The scheduler that runs this batch.
    /// @default the process-wide default scheduler (`Scheduler.getDefault()`)
    #[napi(ts_type = "Scheduler")]
    pub scheduler: Option<Runner>,
}

/// Options of `decode`, `decodeBatch` and `decodeBatchSync`.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct DecodeOptions<'env> {
    /// Leave special tokens out of the text.
    /// @default false
    pub skip_special_tokens: Option<bool>,
    /// Aborts `decodeBatch`: the promise rejects with an `AbortError`. (Async method only.)
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Signal<'env>>,
}

fn allowed_special_option(env: &Env, object: &Unknown) -> napi::Result<Option<AllowedSpecial>> {
    let Some(value) = property(env, object, c"allowedSpecial")? else {
        return Ok(None);
    };
    let expected = "expected 'all' or an array of special-token strings such as ['<|endoftext|>']";
    match value.get_type()? {
        ValueType::String => {
            let text = raw::string(env, &value)?;
            if text == "all" {
                Ok(Some(AllowedSpecial::All))
            } else {
                Err(range_error(
                    env,
                    &format!("options.allowedSpecial is {text:?}; {expected}"),
                ))
            }
        }
        ValueType::Object if value.is_array()? => {
            let items = raw::elements(env, &value)?;
            let mut names = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                if item.get_type()? != ValueType::String {
                    return Err(type_error(
                        env,
                        &format!(
                            "options.allowedSpecial[{index}] is {}; {expected}",
                            describe(item)
                        ),
                    ));
                }
                names.push(raw::string(env, item)?);
            }
            Ok(Some(AllowedSpecial::Only(names)))
        }
        _ => Err(type_error(
            env,
            &format!("options.allowedSpecial is {}; {expected}", describe(&value)),
        )),
    }
}

fn signal_option<'env>(env: &'env Env, object: &Unknown<'env>) -> napi::Result<Option<Signal<'env>>> {
    let Some(value) = property(env, object, c"signal")? else {
        return Ok(None);
    };
    let is_signal = value.get_type()? == ValueType::Object
        && raw::global(env, c"AbortSignal")
            .and_then(|constructor| raw::instance_of(env, &value, &constructor))
            .unwrap_or(false);
    if !is_signal {
        return Err(type_error(
            env,
            &format!(
                "options.signal is {}; expected an AbortSignal (new AbortController().signal)",
                describe(&value)
            ),
        ));
    }
    Ok(Some(Signal::new(value)))
}

fn scheduler_option(env: &Env, object: &Unknown) -> napi::Result<Option<Runner>> {
    let Some(value) = property(env, object, c"scheduler")? else {
        return Ok(None);
    };
    let scheduler = (value.get_type()? == ValueType::Object)
        .then(|| raw::class_instance::<JsScheduler>(env, &value))
        .flatten();
    match scheduler {
        Some(scheduler) => Ok(Some(scheduler.runner().clone())),
        None => Err(type_error(
            env,
            &format!(
                "options.scheduler is {}; expected a Scheduler (new Scheduler({{ threads, policy }}))",
                describe(&value)
            ),
        )),
    }
}

impl EncodeOptions {
    /// The keys `encode` takes.
    const KEYS: &'static [&'static str] = &["addSpecialTokens", "allowedSpecial"];

    /// Reads `encode`'s options argument.
    pub fn read(env: &Env, value: Option<Unknown>) -> napi::Result<EncodeOptions> {
        let Some(object) = options_object(env, value, "encode", Self::KEYS)? else {
            return Ok(EncodeOptions {
                add_special_tokens: None,
                allowed_special: None,
            });
        };
        Ok(EncodeOptions {
            add_special_tokens: bool_option(env, &object, c"addSpecialTokens")?,
            allowed_special: allowed_special_option(env, &object)?,
        })
    }
}

impl<'env> BatchOptions<'env> {
    /// The keys the batch methods take.
    const KEYS: &'static [&'static str] = &["addSpecialTokens", "allowedSpecial", "signal", "scheduler"];

    /// Reads the options argument of the batch method `call`.
    pub fn read(
        env: &'env Env,
        value: Option<Unknown<'env>>,
        call: &str,
    ) -> napi::Result<BatchOptions<'env>> {
        let Some(object) = options_object(env, value, call, Self::KEYS)? else {
            return Ok(BatchOptions {
                add_special_tokens: None,
                allowed_special: None,
                signal: None,
                scheduler: None,
            });
        };
        Ok(BatchOptions {
            add_special_tokens: bool_option(env, &object, c"addSpecialTokens")?,
            allowed_special: allowed_special_option(env, &object)?,
            signal: signal_option(env, &object)?,
            scheduler: scheduler_option(env, &object)?,
        })
    }
}

impl<'env> DecodeOptions<'env> {
    /// The keys the decode methods take.
    const KEYS: &'static [&'static str] = &["skipSpecialTokens", "signal"];

    /// Reads the options argument of the decode method `call`.
    pub fn read(
        env: &'env Env,
        value: Option<Unknown<'env>>,
        call: &str,
    ) -> napi::Result<DecodeOptions<'env>> {
        let Some(object) = options_object(env, value, call, Self::KEYS)? else {
            return Ok(DecodeOptions {
                skip_special_tokens: None,
                signal: None,
            });
        };
        Ok(DecodeOptions {
            skip_special_tokens: bool_option(env, &object, c"skipSpecialTokens")?,
            signal: signal_option(env, &object)?,
        })
    }
}
