//! The options objects of the JS API: documented structs for `index.d.ts`, read by hand so that
//! every error names the option at fault and says what it accepts.

use std::ffi::CStr;
use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, JsValue, TypeTag, Unknown, validate_type_tag};
use napi::{Env, ValueType, sys};
use napi_derive::napi;

use super::errors::{ErrorClass, js_error};
use super::scheduler::{Runner, Scheduler as JsScheduler};
use super::signal::Signal;
use super::texts::describe;
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

/// Options of `decode` and `decodeBatch`.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct DecodeOptions {
    /// Leave special tokens out of the text.
    /// @default false
    pub skip_special_tokens: Option<bool>,
}

/// An object's property, `None` when it is `undefined`.
pub(super) fn property<'env>(
    env: &Env,
    object: &Unknown<'env>,
    key: &CStr,
) -> napi::Result<Option<Unknown<'env>>> {
    let mut value = ptr::null_mut();
    // SAFETY: `object` is an object value of the live `env`; `key` is NUL-terminated.
    let status =
        unsafe { sys::napi_get_named_property(env.raw(), object.raw(), key.as_ptr(), &mut value) };
    if status != sys::Status::napi_ok {
        return Err(js_error(
            env,
            ErrorClass::Error,
            &format!("cannot read option {key:?}"),
        ));
    }
    // SAFETY: `value` was just read from `env`.
    let value = unsafe { Unknown::from_raw_unchecked(env.raw(), value) };
    Ok(match value.get_type()? {
        ValueType::Undefined => None,
        _ => Some(value),
    })
}

fn type_error(env: &Env, message: String) -> napi::Error {
    js_error(env, ErrorClass::Type, &message)
}

fn bool_option(env: &Env, object: &Unknown, key: &CStr, name: &str) -> napi::Result<Option<bool>> {
    let Some(value) = property(env, object, key)? else {
        return Ok(None);
    };
    if value.get_type()? != ValueType::Boolean {
        return Err(type_error(
            env,
            format!(
                "options.{name} is {}; expected true or false",
                describe(&value)
            ),
        ));
    }
    // SAFETY: `value` is a boolean of `env`.
    Ok(Some(unsafe {
        bool::from_napi_value(env.raw(), value.raw())?
    }))
}

fn allowed_special_option(env: &Env, object: &Unknown) -> napi::Result<Option<AllowedSpecial>> {
    let Some(value) = property(env, object, c"allowedSpecial")? else {
        return Ok(None);
    };
    let expected = "expected 'all' or an array of special-token strings such as ['<|endoftext|>']";
    match value.get_type()? {
        ValueType::String => {
            // SAFETY: `value` is a string of `env`.
            let text = unsafe { String::from_napi_value(env.raw(), value.raw())? };
            if text == "all" {
                Ok(Some(AllowedSpecial::All))
            } else {
                Err(js_error(
                    env,
                    ErrorClass::Range,
                    &format!("options.allowedSpecial is {text:?}; {expected}"),
                ))
            }
        }
        ValueType::Object if value.is_array()? => {
            // SAFETY: `value` is an array of `env`.
            let items = unsafe { Vec::<Unknown>::from_napi_value(env.raw(), value.raw())? };
            let mut names = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                if item.get_type()? != ValueType::String {
                    return Err(type_error(
                        env,
                        format!(
                            "options.allowedSpecial[{index}] is {}; {expected}",
                            describe(item)
                        ),
                    ));
                }
                // SAFETY: `item` is a string of `env`.
                names.push(unsafe { String::from_napi_value(env.raw(), item.raw())? });
            }
            Ok(Some(AllowedSpecial::Only(names)))
        }
        _ => Err(type_error(
            env,
            format!("options.allowedSpecial is {}; {expected}", describe(&value)),
        )),
    }
}

fn signal_option<'env>(env: &Env, object: &Unknown<'env>) -> napi::Result<Option<Signal<'env>>> {
    let Some(value) = property(env, object, c"signal")? else {
        return Ok(None);
    };
    let mut global = ptr::null_mut();
    let mut constructor = ptr::null_mut();
    let mut is_signal = false;
    // SAFETY: `env` is live; the out-pointers are valid; `value` is a value of `env`.
    let status = unsafe {
        let mut status = sys::napi_get_global(env.raw(), &mut global);
        if status == sys::Status::napi_ok {
            status = sys::napi_get_named_property(
                env.raw(),
                global,
                c"AbortSignal".as_ptr(),
                &mut constructor,
            );
        }
        if status == sys::Status::napi_ok && value.get_type()? == ValueType::Object {
            status = sys::napi_instanceof(env.raw(), value.raw(), constructor, &mut is_signal);
        }
        status
    };
    if status != sys::Status::napi_ok || !is_signal {
        return Err(type_error(
            env,
            format!(
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
    let mut wrapped = ptr::null_mut();
    let is_scheduler = value.get_type()? == ValueType::Object
        // SAFETY: `value` is an object of `env`; the out-pointer is valid.
        && unsafe { sys::napi_unwrap(env.raw(), value.raw(), &mut wrapped) } == sys::Status::napi_ok
        // SAFETY: as above; the tag is the one napi-rs gives every `JsScheduler` it wraps.
        && unsafe { validate_type_tag(env.raw(), value.raw(), &JsScheduler::type_tag(), "Scheduler") }.is_ok();
    if !is_scheduler {
        return Err(type_error(
            env,
            format!(
                "options.scheduler is {}; expected a Scheduler (new Scheduler({{ threads, policy }}))",
                describe(&value)
            ),
        ));
    }
    // SAFETY: the type tag proves `wrapped` is the `JsScheduler` napi-rs wrapped in this object,
    // which lives as long as the object, and the object is alive for this whole call.
    let scheduler = unsafe { &*(wrapped as *const JsScheduler) };
    Ok(Some(scheduler.runner().clone()))
}

/// Reads an optional options object: `undefined` and `null` mean no options.
fn options_object<'env>(
    env: &Env,
    value: Option<Unknown<'env>>,
) -> napi::Result<Option<Unknown<'env>>> {
    let Some(value) = value else { return Ok(None) };
    match value.get_type()? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        ValueType::Object if !value.is_array()? => Ok(Some(value)),
        _ => Err(type_error(
            env,
            format!("options is {}; expected an object", describe(&value)),
        )),
    }
}

impl EncodeOptions {
    /// Reads `encode`'s options argument.
    pub fn read(env: &Env, value: Option<Unknown>) -> napi::Result<EncodeOptions> {
        let Some(object) = options_object(env, value)? else {
            return Ok(EncodeOptions {
                add_special_tokens: None,
                allowed_special: None,
            });
        };
        Ok(EncodeOptions {
            add_special_tokens: bool_option(env, &object, c"addSpecialTokens", "addSpecialTokens")?,
            allowed_special: allowed_special_option(env, &object)?,
        })
    }
}

impl<'env> BatchOptions<'env> {
    /// Reads a batch method's options argument.
    pub fn read(env: &Env, value: Option<Unknown<'env>>) -> napi::Result<BatchOptions<'env>> {
        let Some(object) = options_object(env, value)? else {
            return Ok(BatchOptions {
                add_special_tokens: None,
                allowed_special: None,
                signal: None,
                scheduler: None,
            });
        };
        Ok(BatchOptions {
            add_special_tokens: bool_option(env, &object, c"addSpecialTokens", "addSpecialTokens")?,
            allowed_special: allowed_special_option(env, &object)?,
            signal: signal_option(env, &object)?,
            scheduler: scheduler_option(env, &object)?,
        })
    }
}

impl DecodeOptions {
    /// Reads a decode method's options argument.
    pub fn read(env: &Env, value: Option<Unknown>) -> napi::Result<DecodeOptions> {
        let Some(object) = options_object(env, value)? else {
            return Ok(DecodeOptions {
                skip_special_tokens: None,
            });
        };
        Ok(DecodeOptions {
            skip_special_tokens: bool_option(
                env,
                &object,
                c"skipSpecialTokens",
                "skipSpecialTokens",
            )?,
        })
    }
}
