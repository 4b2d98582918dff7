//! The one place where failures become JS errors, each of the class a JS user expects.

use std::ffi::CStr;

use napi::Env;
use napi::bindgen_prelude::Unknown;

use super::raw::{self, ErrorConstructor};
use crate::batch::Failure;
use crate::engine::{self, DisallowedToken, ErrorKind};
use crate::scheduler::{BatchError, ItemError};

/// The JS class of an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// A value of the wrong type: `TypeError`.
    Type,
    /// A value of the right type outside what is accepted: `RangeError`.
    Range,
    /// Anything else: `Error`.
    Error,
    /// A cancelled operation: an `Error` named `AbortError` with code `ABORT_ERR`, as Node's own.
    Abort,
}

/// A JS error of `class` with `message`, ready to throw or to reject a promise with.
pub fn js_error(env: &Env, class: ErrorClass, message: &str) -> napi::Error {
    error_with(env, class, message, &[])
}

/// [`js_error`] about item `index` of a batch, which it carries as `itemIndex`, so that a caller
/// who cut the batch from a larger whole can say which of its items failed.
pub fn item_error(env: &Env, class: ErrorClass, message: &str, index: usize) -> napi::Error {
    error_with(
        env,
        class,
        message,
        &[(c"itemIndex", Property::Number(index as f64))],
    )
}

/// The value of a named property set on an error.
#[derive(Clone, Copy)]
pub enum Property<'a, 'env> {
    /// A string.
    Text(&'a str),
    /// A number.
    Number(f64),
    /// A JS value as it is (a `cause`).
    Value(&'a Unknown<'env>),
}

/// [`js_error`] with `properties` set on it, in order. Where the error object cannot be made (the
/// environment is shutting down), the plain error napi-rs gives instead says what it can.
pub fn error_with(
    env: &Env,
    class: ErrorClass,
    message: &str,
    properties: &[(&CStr, Property)],
) -> napi::Error {
    let made = || -> napi::Result<napi::Error> {
        let constructor = match class {
            ErrorClass::Type => ErrorConstructor::Type,
            ErrorClass::Range => ErrorConstructor::Range,
            ErrorClass::Error | ErrorClass::Abort => ErrorConstructor::Plain,
        };
        let error = raw::create_error(env, constructor, message)?;
        // Node's own `AbortError`s are named so, with this code.
        let class_properties: &[(&CStr, Property)] = match class {
            ErrorClass::Abort => &[
                (c"name", Property::Text("AbortError")),
                (c"code", Property::Text("ABORT_ERR")),
            ],
            _ => &[],
        };
        for (key, value) in class_properties.iter().chain(properties) {
            let value = match value {
                Property::Text(text) => raw::create_string(env, text)?,
                Property::Number(number) => raw::create_number(env, *number)?,
                Property::Value(value) => **value,
            };
            raw::set_named_property(env, &error, key, &value)?;
        }
        Ok(napi::Error::from(error))
    };
    made().unwrap_or_else(|error| error)
}

/// A `TypeError`.
pub fn type_error(env: &Env, message: &str) -> napi::Error {
    js_error(env, ErrorClass::Type, message)
}

/// A `RangeError`.
pub fn range_error(env: &Env, message: &str) -> napi::Error {
    js_error(env, ErrorClass::Range, message)
}

/// The error for a napi call that read `what` and answered `status`, not `napi_ok`. Where JS code
/// ran and threw (a getter, a proxy), napi-rs leaves the exception that is still pending in place
/// when the error says so, so the caller sees what that code threw; else an `Error` naming `what`.
pub fn read_failed(env: &Env, status: napi::sys::napi_status, what: &str) -> napi::Error {
    if raw::exception_pending(env) {
        napi::Error::new(
            napi::Status::PendingException,
            format!("reading {what} threw"),
        )
    } else {
        js_error(
            env,
            ErrorClass::Error,
            &format!("cannot read {what} (napi status {status})"),
        )
    }
}

/// An engine error as a JS error. A disallowed special token's carries its
/// [`disallowed_properties`], which the drop-in modules read to say it in their peer's words.
pub fn from_engine(env: &Env, error: &engine::Error) -> napi::Error {
    let class = match error.kind() {
        ErrorKind::Load | ErrorKind::Engine | ErrorKind::Disallowed | ErrorKind::NotConfigured => {
            ErrorClass::Error
        }
        ErrorKind::OutOfRange => ErrorClass::Range,
        ErrorKind::InvalidOption => ErrorClass::Type,
    };
    match error.disallowed_token() {
        Some(token) => error_with(env, class, error.message(), &disallowed_properties(token)),
        None => js_error(env, class, error.message()),
    }
}

/// The `code` of an error about a disallowed special token.
pub const DISALLOWED_CODE: &str = "ERR_DISALLOWED_SPECIAL_TOKEN";

/// What an error about a disallowed special token carries besides its message: `code`
/// ([`DISALLOWED_CODE`]), `token` and `index` (in the text, in UTF-16 units).
pub fn disallowed_properties<'a>(
    token: &'a DisallowedToken,
) -> [(&'static CStr, Property<'a, 'a>); 3] {
    [
        (c"code", Property::Text(DISALLOWED_CODE)),
        (c"token", Property::Text(&token.text)),
        (c"index", Property::Number(token.index as f64)),
    ]
}

/// The disallowed special token that failed an item of a batch, if that is what failed it.
pub fn disallowed_token_of(error: &ItemError) -> Option<&DisallowedToken> {
    error
        .downcast_ref::<engine::Error>()
        .and_then(engine::Error::disallowed_token)
}

/// A failed batch as a JS error; an aborted one carries `abort_reason` (the signal's `reason`)
/// as its `cause`, as Node's own `AbortError`s do, and an item's failure its `itemIndex` (with
/// the [`disallowed_properties`] where a disallowed special token failed it).
pub fn from_failure(env: &Env, failure: &Failure, abort_reason: Option<&Unknown>) -> napi::Error {
    match failure {
        Failure::Batch(BatchError::Cancelled) => {
            let cause = abort_reason.map(|reason| (c"cause", Property::Value(reason)));
            error_with(
                env,
                ErrorClass::Abort,
                "The operation was aborted",
                cause.as_slice(),
            )
        }
        Failure::Batch(BatchError::ItemFailed { index, error }) => {
            let message = format!("item {index} of the batch failed: {error}");
            let item = (c"itemIndex", Property::Number(*index as f64));
            match disallowed_token_of(error) {
                Some(token) => {
                    let [code, text, at] = disallowed_properties(token);
                    error_with(env, ErrorClass::Error, &message, &[item, code, text, at])
                }
                None => error_with(env, ErrorClass::Error, &message, &[item]),
            }
        }
        Failure::Batch(BatchError::Panicked { index, message }) => item_error(
            env,
            ErrorClass::Error,
            &format!(
                "item {index} of the batch hit an internal error ({message}); the batch was abandoned, \
                 the tokenizer is still usable. Please report this input"
            ),
            *index,
        ),
        Failure::TooLarge { ids } => js_error(
            env,
            ErrorClass::Range,
            &format!(
                "the batch produced {ids} ids, more than a BatchEncoding holds (2^32 - 1); split it"
            ),
        ),
    }
}
