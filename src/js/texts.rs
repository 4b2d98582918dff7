//! Reading the texts of a call into a [`Texts`]: one JS string, an array of them, or UTF-8 bytes
//! with the offsets between texts; errors name the offending value.

use std::mem::MaybeUninit;

use napi::bindgen_prelude::{JsValue, TypedArrayType, Unknown};
use napi::{Env, sys};

use super::args::{describe, expect_array, u32_list};
use super::errors::{ErrorClass, item_error, js_error, read_failed, type_error};
use super::raw;
use crate::batch::{Texts, TextsWriter, Utf8BatchError};

/// The spare room a string is first written into: enough for most strings in one napi call, and
/// small next to a batch, so a batch of short strings does not reserve much it never uses.
const MIN_ROOM: usize = 4096;

/// How many bytes of strings are checked to be UTF-8 at once: enough to make the check one
/// pass over many short strings, and few enough that the bytes are still in cache.
const CHECK_EVERY_BYTES: usize = 64 << 10;

/// Appends the JS string `value` to `texts`, or fails with a `TypeError` naming it as `what`.
///
/// The string is written straight into the batch buffer as UTF-8, in one napi call when it fits
/// the buffer's spare room (most strings: the buffer grows by doubling), else in two: its length,
/// then the write. V8 writes a lone surrogate as U+FFFD, as `TextEncoder` does; the writer checks
/// the UTF-8 afterwards, many strings at once. A value that is not a string is found by the
/// first call's status, so no call asks for its type beforehand.
fn push_string(
    env: &Env,
    value: &Unknown,
    what: &dyn Fn() -> String,
    texts: &mut TextsWriter,
) -> napi::Result<()> {
    if try_push_string(env, value, what, texts)? {
        Ok(())
    } else {
        Err(type_error(
            env,
            &format!("{} is {}; expected a string", what(), describe(value)),
        ))
    }
}

/// [`push_string`], answering `false` (and pushing nothing) where `value` is not a string.
fn try_push_string(
    env: &Env,
    value: &Unknown,
    what: &dyn Fn() -> String,
    texts: &mut TextsWriter,
) -> napi::Result<bool> {
    let status = std::cell::Cell::new(sys::Status::napi_ok);
    let write = |room: &mut [MaybeUninit<u8>], exact: bool| {
        let (code, written) = raw::write_utf8(env, value, room);
        status.set(code);
        // V8 writes whole characters only (at most 4 bytes each) and napi keeps one byte for the
        // NUL: a write that ends more than 4 bytes short of the room is the whole string.
        let whole = exact || written + 4 < room.len();
        (code == sys::Status::napi_ok && whole).then_some(written)
    };
    let pushed = texts.push_with(MIN_ROOM, |room| write(room, false));
    if status.get() == sys::Status::napi_string_expected {
        return Ok(false);
    }
    check(env, status.get(), what)?;
    if pushed {
        return Ok(true);
    }
    let len = raw::utf8_length(env, value).map_err(|code| failed(env, code, what))?;
    texts.push_with(len + 1, |room| write(&mut room[..len + 1], true));
    check(env, status.get(), what)?;
    Ok(true)
}

/// The error for a string `what` that V8 wrote as bytes that are not UTF-8.
fn not_utf8(env: &Env, what: &str, error: std::str::Utf8Error) -> napi::Error {
    js_error(
        env,
        ErrorClass::Error,
        &format!("{what} did not convert to UTF-8: {error}"),
    )
}

fn check(env: &Env, status: sys::napi_status, what: &dyn Fn() -> String) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(failed(env, status, what))
    }
}

/// The error for a napi call on `what` that answered `status`, not `napi_ok`.
fn failed(env: &Env, status: sys::napi_status, what: &dyn Fn() -> String) -> napi::Error {
    read_failed(env, status, &what())
}

/// The JS string `value` as a batch of one text, or a `TypeError` naming it as `what`.
pub fn text_from_string(env: &Env, value: &Unknown, what: &str) -> napi::Result<Texts> {
    let mut texts = Texts::with_capacity(1, 0);
    let mut writer = texts.writer();
    push_string(env, value, &|| what.to_owned(), &mut writer)?;
    writer.finish().map_err(|(_, e)| not_utf8(env, what, e))?;
    Ok(texts)
}

/// Reads a JS array of strings into one `Texts`; `what` names the argument in errors.
pub fn texts_from_array(env: &Env, value: &Unknown, what: &str) -> napi::Result<Texts> {
    expect_array(env, value, what, "strings")?;
    let len =
        raw::array_length(env, value).map_err(|code| failed(env, code, &|| what.to_owned()))?;
    let mut texts = Texts::with_capacity(len as usize, 0);
    let mut writer = texts.writer();
    for index in 0..len {
        let name = || format!("{what}[{index}]");
        // A shorter array now (a getter shrank it) yields `undefined`, which the push refuses.
        let element = raw::element(env, value, index).map_err(|code| failed(env, code, &name))?;
        push_string(env, &element, &name, &mut writer)?;
        if writer.unchecked_bytes() >= CHECK_EVERY_BYTES {
            writer
                .check()
                .map_err(|(i, e)| not_utf8(env, &format!("{what}[{i}]"), e))?;
        }
    }
    writer
        .finish()
        .map_err(|(i, e)| not_utf8(env, &format!("{what}[{i}]"), e))?;
    Ok(texts)
}

/// Reads UTF-8 `bytes` (a `Uint8Array` or `Buffer`) and the `offsets` between its texts into one
/// `Texts`, copying the bytes once.
pub fn texts_from_utf8(env: &Env, bytes: &Unknown, offsets: &Unknown) -> napi::Result<Texts> {
    if raw::typed_array_type(env, bytes)? != Some(TypedArrayType::Uint8) {
        return Err(type_error(
            env,
            &format!(
                "bytes is {}; expected a Uint8Array or a Buffer of UTF-8",
                describe(bytes)
            ),
        ));
    }
    let boundaries = u32_list(env, offsets, "offsets", "offsets")?;
    raw::with_uint8_bytes(env, bytes, |bytes| Texts::from_utf8(bytes, &boundaries))?
        .expect("checked to be a Uint8Array")
        .map_err(|e| match e {
            Utf8BatchError::NotUtf8 { text, .. } => {
                item_error(env, ErrorClass::Error, &e.to_string(), text)
            }
            _ => js_error(env, ErrorClass::Error, &e.to_string()),
        })
}

/// Reads `encodeForModel`'s inputs, an array whose elements are strings or pairs
/// `[text, textPair]`, into one `Texts` and where each input starts in it (`starts[i]..starts[i +
/// 1]`: one text, or two); `what` names the argument in errors.
pub fn inputs_from_array(
    env: &Env,
    value: &Unknown,
    what: &str,
) -> napi::Result<(Texts, Vec<u32>)> {
    let expected = "expected a string or a pair [text, textPair] of strings";
    expect_array(env, value, what, "strings or of pairs [text, textPair]")?;
    let len =
        raw::array_length(env, value).map_err(|code| failed(env, code, &|| what.to_owned()))?;
    let mut texts = Texts::with_capacity(len as usize, 0);
    let mut starts = Vec::with_capacity(len as usize + 1);
    starts.push(0u32);
    let mut count = 0u32;
    let mut writer = texts.writer();
    for index in 0..len {
        let name = || format!("{what}[{index}]");
        let element = raw::element(env, value, index).map_err(|code| failed(env, code, &name))?;
        // Most inputs are strings: the write's own status tells them apart, with no call
        // beforehand to ask the element's type.
        if try_push_string(env, &element, &name, &mut writer)? {
            count += 1;
        } else if element.get_type()? == napi::ValueType::Object && element.is_array()? {
            let pair_len =
                raw::array_length(env, &element).map_err(|code| failed(env, code, &name))?;
            if pair_len != 2 {
                return Err(type_error(
                    env,
                    &format!("{} is an array of {pair_len}; {expected}", name()),
                ));
            }
            for side in 0..2 {
                let name = || format!("{what}[{index}][{side}]");
                let text =
                    raw::element(env, &element, side).map_err(|code| failed(env, code, &name))?;
                push_string(env, &text, &name, &mut writer)?;
            }
            count += 2;
        } else {
            return Err(type_error(
                env,
                &format!("{} is {}; {expected}", name(), describe(&element)),
            ));
        }
        starts.push(count);
        if writer.unchecked_bytes() >= CHECK_EVERY_BYTES {
            writer
                .check()
                .map_err(|(i, e)| not_utf8(env, &format!("{what} (text {i})"), e))?;
        }
    }
    writer
        .finish()
        .map_err(|(i, e)| not_utf8(env, &format!("{what} (text {i})"), e))?;
    Ok((texts, starts))
}
