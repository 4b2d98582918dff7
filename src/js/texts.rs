//! Reading JS strings and arrays of strings, with errors that name the offending value.

use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, JsValue, TypedArray, TypedArrayType, Unknown};
use napi::{Env, ValueType, sys};

use super::errors::{ErrorClass, js_error};
use super::tokenizer::u32_list_argument;
use crate::batch::{Texts, TextsWriter};

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
    let raw_env = env.raw();
    let raw = value.raw();
    let status = std::cell::Cell::new(sys::Status::napi_ok);
    let write = |room: &mut [std::mem::MaybeUninit<u8>], exact: bool| {
        let mut written = 0usize;
        // SAFETY: `raw` is a string value of the live `raw_env`; `room` is `room.len()` writable
        // bytes, and napi writes at most that many (the UTF-8 and a NUL after it).
        let call = unsafe {
            sys::napi_get_value_string_utf8(
                raw_env,
                raw,
                room.as_mut_ptr().cast(),
                room.len(),
                &mut written,
            )
        };
        status.set(call);
        // V8 writes whole characters only (at most 4 bytes each) and napi keeps one byte for the
        // NUL: a write that ends more than 4 bytes short of the room is the whole string.
        let whole = exact || written + 4 < room.len();
        (call == sys::Status::napi_ok && whole).then_some(written)
    };
    let pushed = texts.push_with(MIN_ROOM, |room| write(room, false));
    if status.get() == sys::Status::napi_string_expected {
        return Err(js_error(
            env,
            ErrorClass::Type,
            &format!("{} is {}; expected a string", what(), describe(value)),
        ));
    }
    check(env, status.get(), what)?;
    if pushed {
        return Ok(());
    }
    let mut len = 0usize;
    // SAFETY: `raw` is a string value of the live `raw_env`; a null buffer asks for the length only.
    let status_of_len =
        unsafe { sys::napi_get_value_string_utf8(raw_env, raw, ptr::null_mut(), 0, &mut len) };
    check(env, status_of_len, what)?;
    texts.push_with(len + 1, |room| write(&mut room[..len + 1], true));
    check(env, status.get(), what)
}

/// The error for a string `what` that V8 wrote as bytes that are not UTF-8.
fn not_utf8(env: &Env, what: &str, error: std::str::Utf8Error) -> napi::Error {
    js_error(
        env,
        ErrorClass::Error,
        &format!("{what} did not convert to UTF-8: {error}"),
    )
}

/// The JS string `value` as a batch of one text, or a `TypeError` naming it as `what`.
pub fn text_from_string(env: &Env, value: &Unknown, what: &str) -> napi::Result<Texts> {
    let mut texts = Texts::with_capacity(1, 0);
    let mut writer = texts.writer();
    push_string(env, value, &|| what.to_owned(), &mut writer)?;
    writer.finish().map_err(|(_, e)| not_utf8(env, what, e))?;
    Ok(texts)
}

/// The spare room a string is first written into: enough for most strings in one napi call, and
/// small next to a batch, so a batch of short strings does not reserve much it never uses.
const MIN_ROOM: usize = 4096;

fn check(env: &Env, status: sys::napi_status, what: &dyn Fn() -> String) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else if exception_pending(env) {
        // JS code ran and threw (a getter on the array, say): napi-rs leaves an exception that is
        // still pending in place when the error says so, so the caller sees what that code threw.
        Err(napi::Error::new(
            napi::Status::PendingException,
            format!("reading {} threw", what()),
        ))
    } else {
        Err(js_error(
            env,
            ErrorClass::Error,
            &format!("cannot read {} (napi status {status})", what()),
        ))
    }
}

/// A JS array of strings, read into `Texts` a part at a time, so that the first parts can be
/// encoding while the main thread reads the rest (`Tokenizer::encode_batch`).
pub struct StringArray<'a> {
    env: &'a Env,
    array: sys::napi_value,
    what: &'a str,
    len: u32,
    /// The index of the first string not read yet.
    next: u32,
}

impl<'a> StringArray<'a> {
    /// The array `value`, or a `TypeError` naming it as `what` if it is not an array.
    pub fn new(env: &'a Env, value: &Unknown, what: &'a str) -> napi::Result<Self> {
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
        let mut len = 0u32;
        // SAFETY: `value` is an array of the live `env`.
        let status = unsafe { sys::napi_get_array_length(env.raw(), value.raw(), &mut len) };
        check(env, status, &|| what.to_owned())?;
        Ok(StringArray {
            env,
            array: value.raw(),
            what,
            len,
            next: 0,
        })
    }

    /// Whether every string has been read.
    pub fn is_done(&self) -> bool {
        self.next == self.len
    }

    /// Reads the next strings until they hold at least `bytes` of UTF-8 (counting
    /// [`PART_BYTES_PER_TEXT`] more for each string) or the array ends.
    pub fn read_part(&mut self, bytes: usize) -> napi::Result<Texts> {
        // A part's size is known up front, so its buffer need not grow by doubling: each growth
        // would copy what was read so far (a tenth of the reading time in a profile). A part read
        // to the end of the array (`usize::MAX`) has no such bound and grows.
        let room = if bytes == usize::MAX {
            0
        } else {
            bytes + MIN_ROOM
        };
        let count = ((self.len - self.next) as usize).min(bytes / PART_BYTES_PER_TEXT);
        let mut texts = Texts::with_capacity(count, room);
        self.read_into(&mut texts, bytes)?;
        Ok(texts)
    }

    /// An empty part with room for every string not read yet at the mean UTF-8 length of
    /// `sample`'s texts, plus a quarter: a part read to the end is then seldom regrown (each growth
    /// copies what was read so far), and room it never fills costs address space, not memory.
    pub fn part_for_the_rest(&self, sample: &Texts) -> Texts {
        let count = (self.len - self.next) as usize;
        let mean = sample.total_bytes() / sample.len().max(1);
        Texts::with_capacity(count, count.saturating_mul(mean) / 4 * 5 + MIN_ROOM)
    }

    /// Appends the next strings to `texts` until they add at least `bytes` (counted as
    /// [`read_part`](Self::read_part) counts them) or the array ends.
    pub fn read_into(&mut self, texts: &mut Texts, bytes: usize) -> napi::Result<()> {
        let raw_env = self.env.raw();
        let (first_index, first_text) = (self.next as usize, texts.len());
        let mut writer = texts.writer();
        let mut weight = 0usize;
        while self.next < self.len && weight < bytes {
            let index = self.next;
            let what = || format!("{}[{index}]", self.what);
            let mut element = ptr::null_mut();
            // SAFETY: `array` is an array of `raw_env` and `index` is below the length it had
            // when read; a shorter array now yields `undefined`, which the push refuses.
            let status = unsafe { sys::napi_get_element(raw_env, self.array, index, &mut element) };
            check(self.env, status, &what)?;
            // SAFETY: `element` was just read from `raw_env`.
            let element = unsafe { Unknown::from_raw_unchecked(raw_env, element) };
            let before = writer.total_bytes();
            push_string(self.env, &element, &what, &mut writer)?;
            weight += writer.total_bytes() - before + PART_BYTES_PER_TEXT;
            self.next += 1;
            if writer.unchecked_bytes() >= CHECK_EVERY_BYTES {
                writer
                    .check()
                    .map_err(|e| self.not_utf8(e, first_index, first_text))?;
            }
        }
        writer
            .finish()
            .map_err(|e| self.not_utf8(e, first_index, first_text))
    }

    /// The error for text `index` of a `Texts` whose text `first_text` is `first_index` of the
    /// array.
    fn not_utf8(
        &self,
        (index, error): (usize, std::str::Utf8Error),
        first_index: usize,
        first_text: usize,
    ) -> napi::Error {
        let what = format!("{}[{}]", self.what, first_index + (index - first_text));
        not_utf8(self.env, &what, error)
    }
}

/// How many bytes of strings are checked to be UTF-8 at once: enough to make the check one
/// pass over many short strings, and few enough that the bytes are still in cache.
const CHECK_EVERY_BYTES: usize = 64 << 10;

/// What a string costs a part besides its bytes: reading it is a few napi calls whatever its
/// length, so a part of many short strings ends after about as much reading as a part of long ones.
pub const PART_BYTES_PER_TEXT: usize = 64;

/// Whether a JS exception is pending in `env`.
fn exception_pending(env: &Env) -> bool {
    let mut pending = false;
    // SAFETY: `env` is the live environment of the current call; `pending` is valid for writes.
    let status = unsafe { sys::napi_is_exception_pending(env.raw(), &mut pending) };
    status == sys::Status::napi_ok && pending
}

/// Reads a JS array of strings into one `Texts`; `what` names the argument in errors.
pub fn texts_from_array(env: &Env, value: &Unknown, what: &str) -> napi::Result<Texts> {
    StringArray::new(env, value, what)?.read_part(usize::MAX)
}

/// Reads UTF-8 `bytes` (a `Uint8Array` or `Buffer`) and the `offsets` between its texts into one
/// `Texts`, copying the bytes once.
pub fn texts_from_utf8(env: &Env, bytes: &Unknown, offsets: &Unknown) -> napi::Result<Texts> {
    let not_bytes = || {
        js_error(
            env,
            ErrorClass::Type,
            &format!(
                "bytes is {}; expected a Uint8Array or a Buffer of UTF-8",
                describe(bytes)
            ),
        )
    };
    if !bytes.is_typedarray()? {
        return Err(not_bytes());
    }
    // SAFETY: `bytes` is a typed array of `env`.
    let array = unsafe { TypedArray::from_napi_value(env.raw(), bytes.raw())? };
    if array.typed_array_type != TypedArrayType::Uint8 {
        return Err(not_bytes());
    }
    let boundaries = u32_list_argument(env, offsets, "offsets", "offsets")?;
    // `array` borrows the JS array's memory, which nothing else runs on while this synchronous
    // call copies it.
    Texts::from_utf8(&array.arraybuffer, &boundaries)
        .map_err(|e| js_error(env, ErrorClass::Error, &e.to_string()))
}
