//! The one place where failures become JS errors, each of the class a JS user expects.

use std::ffi::CStr;
use std::ptr;

use napi::bindgen_prelude::Unknown;
use napi::{Env, Status, sys};

use crate::batch::Failure;
use crate::engine::{self, ErrorKind};
use crate::scheduler::BatchError;

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
    match create(env, class, message) {
        Ok(error) => error,
        // Creating the error object failed (the environment is shutting down): a plain error is
        // all that can still be said.
        Err(error) => error,
    }
}

fn create(env: &Env, class: ErrorClass, message: &str) -> napi::Result<napi::Error> {
    let raw_env = env.raw();
    let mut text = ptr::null_mut();
    let mut error = ptr::null_mut();
    // SAFETY: `raw_env` is the live environment of the current call; `message` is a valid buffer
    // of `message.len()` bytes; the out-pointers are valid for writes.
    let status = unsafe {
        let status = sys::napi_create_string_utf8(
            raw_env,
            message.as_ptr().cast(),
            message.len() as isize,
            &mut text,
        );
        if status != sys::Status::napi_ok {
            status
        } else {
            match class {
                ErrorClass::Type => {
                    sys::napi_create_type_error(raw_env, ptr::null_mut(), text, &mut error)
                }
                ErrorClass::Range => {
                    sys::napi_create_range_error(raw_env, ptr::null_mut(), text, &mut error)
                }
                ErrorClass::Error | ErrorClass::Abort => {
                    sys::napi_create_error(raw_env, ptr::null_mut(), text, &mut error)
                }
            }
        }
    };
    if status != sys::Status::napi_ok {
        return Err(napi::Error::new(Status::from(status), message.to_owned()));
    }
    if class == ErrorClass::Abort {
        set_string(raw_env, error, c"name", "AbortError")?;
        set_string(raw_env, error, c"code", "ABORT_ERR")?;
    }
    // SAFETY: `error` was just created in `raw_env` and is a valid value of it.
    Ok(napi::Error::from(unsafe {
        Unknown::from_raw_unchecked(raw_env, error)
    }))
}

fn set_string(
    env: sys::napi_env,
    object: sys::napi_value,
    key: &CStr,
    value: &str,
) -> napi::Result<()> {
    let mut js_value = ptr::null_mut();
    // SAFETY: `env` is live, `object` is one of its values, `key` is NUL-terminated and `value` is a
    // valid buffer of `value.len()` bytes.
    let status = unsafe {
        let status = sys::napi_create_string_utf8(
            env,
            value.as_ptr().cast(),
            value.len() as isize,
            &mut js_value,
        );
        if status != sys::Status::napi_ok {
            status
        } else {
            sys::napi_set_named_property(env, object, key.as_ptr(), js_value)
        }
    };
    match status {
        sys::Status::napi_ok => Ok(()),
        status => Err(napi::Error::new(
            Status::from(status),
            "cannot set an error property".to_owned(),
        )),
    }
}

/// An engine error as a JS error.
pub fn from_engine(env: &Env, error: &engine::Error) -> napi::Error {
    let class = match error.kind() {
        ErrorKind::Load | ErrorKind::Engine => ErrorClass::Error,
        ErrorKind::OutOfRange => ErrorClass::Range,
        ErrorKind::InvalidOption => ErrorClass::Type,
    };
    js_error(env, class, error.message())
}

/// A failed batch as a JS error.
pub fn from_failure(env: &Env, failure: &Failure) -> napi::Error {
    match failure {
        Failure::Batch(BatchError::Cancelled) => {
            js_error(env, ErrorClass::Abort, "The operation was aborted")
        }
        Failure::Batch(BatchError::ItemFailed { index, message }) => js_error(
            env,
            ErrorClass::Error,
            &format!("item {index} of the batch failed: {message}"),
        ),
        Failure::Batch(BatchError::Panicked { index, message }) => js_error(
            env,
            ErrorClass::Error,
            &format!(
                "item {index} of the batch hit an internal error ({message}); the batch was abandoned, \
                 the tokenizer is still usable. Please report this input"
            ),
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
