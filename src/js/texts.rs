//! Reading JS strings and arrays of strings, with errors that name the offending value.

use std::ptr;

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, ValueType, sys};

use super::errors::{ErrorClass, js_error};
use crate::batch::Texts;

/// How a JS value is described in an error: its `typeof`, with `null` and arrays told apart.
pub fn describe(value: &Unknown) -> &'static str {
    match value.get_type() {
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::BigInt) => "a bigint",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::Object) if value.is_array().unwrap_or(false) => "an array",
        Ok(ValueType::Object) => "an object",
        _ => "a value of unknown type",
    }
}

/// Appends the JS string `value` to `texts`, or fails with a `TypeError` naming it as `what`.
///
/// The string is written straight into the batch buffer as UTF-8. V8 writes a lone surrogate as
/// U+FFFD, as `TextEncoder` does.
pub fn push_string(
    env: &Env,
    value: &Unknown,
    what: &dyn Fn() -> String,
    texts: &mut Texts,
) -> napi::Result<()> {
    if value.get_type()? != ValueType::String {
        return Err(js_error(
            env,
            ErrorClass::Type,
            &format!("{} is {}; expected a string", what(), describe(value)),
        ));
    }
    let raw_env = env.raw();
    let raw = value.raw();
    let mut len = 0usize;
    // SAFETY: `raw` is a string value of the live `raw_env`; a null buffer asks for the length only.
    let status =
        unsafe { sys::napi_get_value_string_utf8(raw_env, raw, ptr::null_mut(), 0, &mut len) };
    check(env, status, what)?;
    let mut status = sys::Status::napi_ok;
    let pushed = texts.push_with(len + 1, |room| {
        let mut written = 0usize;
        // SAFETY: `room` is `len + 1` writable bytes: the string's UTF-8 and the NUL napi adds.
        status = unsafe {
            sys::napi_get_value_string_utf8(
                raw_env,
                raw,
                room.as_mut_ptr().cast(),
                len + 1,
                &mut written,
            )
        };
        if status == sys::Status::napi_ok {
            written
        } else {
            0
        }
    });
    check(env, status, what)?;
    pushed.map_err(|e| {
        js_error(
            env,
            ErrorClass::Error,
            &format!("{} did not convert to UTF-8: {e}", what()),
        )
    })
}

fn check(env: &Env, status: sys::napi_status, what: &dyn Fn() -> String) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(js_error(
            env,
            ErrorClass::Error,
            &format!("cannot read {} (napi status {status})", what()),
        ))
    }
}

/// Reads a JS array of strings into one `Texts`; `what` names the argument in errors.
pub fn texts_from_array(env: &Env, value: &Unknown, what: &str) -> napi::Result<Texts> {
    if !value.is_array()? {
        return Err(js_error(
            env,
            ErrorClass::Type,
            &format!(
                "{what} is {}; expected an array of strings",
                describe(value)
            ),
        ));
    }
    let raw_env = env.raw();
    let mut len = 0u32;
    // SAFETY: `value` is an array of the live `raw_env`.
    let status = unsafe { sys::napi_get_array_length(raw_env, value.raw(), &mut len) };
    check(env, status, &|| what.to_owned())?;
    let mut texts = Texts::with_capacity(len as usize, 0);
    for index in 0..len {
        let mut element = ptr::null_mut();
        // SAFETY: `value` is an array of `raw_env` and `index` is below its length.
        let status = unsafe { sys::napi_get_element(raw_env, value.raw(), index, &mut element) };
        check(env, status, &|| format!("{what}[{index}]"))?;
        // SAFETY: `element` was just read from `raw_env`.
        let element = unsafe { Unknown::from_raw_unchecked(raw_env, element) };
        push_string(env, &element, &|| format!("{what}[{index}]"), &mut texts)?;
    }
    Ok(texts)
}
