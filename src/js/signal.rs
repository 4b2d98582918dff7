//! A batch's tie to its caller's `AbortSignal`: an `abort` listener added with `addEventListener`
//! when the call starts and removed with `removeEventListener` once the batch has settled.
//!
//! batchtok does not use napi-rs's `AbortSignal` conversion (napi-rs 3.16): it `napi_wrap`s the
//! signal and never deletes the wrap's reference, 72 bytes lost per call (valgrind, FUZZING.md), and
//! it listens by assigning the signal's `onabort`, which replaces the caller's own handler. A
//! listener of our own leaves `onabort` and every other listener alone, and its removal keeps a
//! signal reused for many calls from collecting listeners.
//!
//! Each call adds its own listener, as Node's own APIs do (`timers/promises`): more than ten
//! calls in flight on one signal make Node print `MaxListenersExceededWarning`, which
//! `events.setMaxListeners(n, signal)` raises.

use std::ffi::{CStr, c_void};
use std::ptr;
use std::thread::{self, ThreadId};

use napi::bindgen_prelude::{FromNapiValue, JsValue, Unknown};
use napi::{Env, Status, ValueType, sys};

use super::options::property;
use crate::scheduler::CancelToken;

/// The name of the listener function, as `getEventListeners(signal, 'abort')` shows it.
const LISTENER_NAME: &str = "batchtokAbort";

/// An `AbortSignal` read from a call's options.
pub struct Signal<'env> {
    /// The signal; the options reader has checked that it is `instanceof AbortSignal`.
    signal: Unknown<'env>,
}

impl<'env> Signal<'env> {
    /// `signal`, a value the caller has checked to be an `AbortSignal`.
    pub fn new(signal: Unknown<'env>) -> Self {
        Signal { signal }
    }

    /// Cancels `cancel` when the signal fires, or at once if it already has. The listener stays
    /// on the signal until the returned `AbortListener` is dropped.
    pub fn listen(self, env: &Env, cancel: &CancelToken) -> napi::Result<AbortListener> {
        let raw_env = env.raw();
        let function = abort_function(raw_env, cancel)?;
        let mut listener = AbortListener {
            env: raw_env,
            thread: thread::current().id(),
            signal: ptr::null_mut(),
            function: ptr::null_mut(),
        };
        // SAFETY: `raw_env` is the live environment of this call, on its JS thread; both values
        // belong to it; the out-pointers are valid. A failure leaves the field null, which
        // `Drop` skips.
        unsafe {
            check(
                sys::napi_create_reference(raw_env, self.signal.raw(), 1, &mut listener.signal),
                "hold the signal",
            )?;
            check(
                sys::napi_create_reference(raw_env, function, 1, &mut listener.function),
                "hold the abort listener",
            )?;
        }
        // SAFETY: as above; `self.signal` is an object of `raw_env`.
        unsafe { call_with_listener(raw_env, self.signal.raw(), c"addEventListener", function)? };
        // Read after the listener is in place, so that no abort can fall between the two: an
        // abort before this point shows here, one after it reaches the listener.
        if aborted(env, &self.signal)? {
            cancel.cancel();
        }
        Ok(listener)
    }
}

/// Whether the signal has fired (its `aborted` is `true`).
fn aborted(env: &Env, signal: &Unknown) -> napi::Result<bool> {
    match property(env, signal, c"aborted")? {
        // SAFETY: checked to be a boolean of `env`.
        Some(value) if value.get_type()? == ValueType::Boolean => unsafe {
            bool::from_napi_value(env.raw(), value.raw())
        },
        _ => Ok(false),
    }
}

/// A new JS function that cancels a clone of `cancel` when called.
fn abort_function(env: sys::napi_env, cancel: &CancelToken) -> napi::Result<sys::napi_value> {
    let token = Box::into_raw(Box::new(cancel.clone()));
    let mut function = ptr::null_mut();
    // SAFETY: `env` is the live environment of the current call; the name is a valid buffer of
    // the given length; `token` is a valid pointer that `cancel_on_abort` reads as a
    // `CancelToken`. The function borrows `token`; ownership passes to it below.
    let created = unsafe {
        sys::napi_create_function(
            env,
            LISTENER_NAME.as_ptr().cast(),
            LISTENER_NAME.len() as isize,
            Some(cancel_on_abort),
            token.cast(),
            &mut function,
        )
    };
    // SAFETY: `function` is the function just created in `env`, if `created` is ok. The
    // finalizer frees `token` once the function has been collected (or at the environment's
    // teardown), when it can no longer be called.
    let owned = created == sys::Status::napi_ok
        && unsafe {
            sys::napi_add_finalizer(
                env,
                function,
                token.cast(),
                Some(drop_token),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        } == sys::Status::napi_ok;
    if !owned {
        // SAFETY: `token` came from `Box::into_raw` above and no finalizer owns it. A function
        // created without its finalizer is not yet reachable from JS, so nothing can call it.
        drop(unsafe { Box::from_raw(token) });
        return Err(napi::Error::new(
            Status::GenericFailure,
            "cannot create the abort listener".to_owned(),
        ));
    }
    Ok(function)
}

/// The listener: cancels the token held in the function's data.
unsafe extern "C" fn cancel_on_abort(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut data = ptr::null_mut();
    // SAFETY: napi calls this with its own live `env` and `info`; only the data is asked for.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            &mut data,
        )
    };
    if status == sys::Status::napi_ok && !data.is_null() {
        // SAFETY: every function with this callback is made by `abort_function`, whose data is a
        // boxed `CancelToken` owned by the function and freed only by its finalizer, which cannot
        // run while the function is being called.
        let token = unsafe { &*data.cast::<CancelToken>() };
        token.cancel();
    }
    // A null result is `undefined` to JS.
    ptr::null_mut()
}

/// The finalizer of an `abort_function`: frees its token.
unsafe extern "C" fn drop_token(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the `Box<CancelToken>` leaked by `abort_function`, whose finalizer this
    // is; napi runs a finalizer once.
    drop(unsafe { Box::from_raw(data.cast::<CancelToken>()) });
}

/// Calls `object[method]('abort', listener)`.
///
/// # Safety
///
/// `env` is the live environment of the current thread, inside a handle scope; `object` and
/// `listener` are values of it.
unsafe fn call_with_listener(
    env: sys::napi_env,
    object: sys::napi_value,
    method: &CStr,
    listener: sys::napi_value,
) -> napi::Result<()> {
    const ABORT: &str = "abort";
    let mut function = ptr::null_mut();
    let mut event = ptr::null_mut();
    let mut result = ptr::null_mut();
    // SAFETY: the caller's contract; the name is NUL-terminated, the event name a valid buffer of
    // its length, the out-pointers valid. If the method throws, the exception stays pending and
    // the `PendingException` error below hands it on to JS unchanged.
    unsafe {
        check(
            sys::napi_get_named_property(env, object, method.as_ptr(), &mut function),
            "read the signal's event methods",
        )?;
        check(
            sys::napi_create_string_utf8(
                env,
                ABORT.as_ptr().cast(),
                ABORT.len() as isize,
                &mut event,
            ),
            "name the abort event",
        )?;
        let arguments = [event, listener];
        check(
            sys::napi_call_function(
                env,
                object,
                function,
                arguments.len(),
                arguments.as_ptr(),
                &mut result,
            ),
            "call the signal's event methods",
        )
    }
}

fn check(status: sys::napi_status, what: &str) -> napi::Result<()> {
    match status {
        sys::Status::napi_ok => Ok(()),
        status => Err(napi::Error::new(
            Status::from(status),
            format!("cannot {what} (options.signal)"),
        )),
    }
}

/// The `abort` listener a batch keeps on its caller's signal while it runs. Dropping it removes
/// the listener and releases both references; the listener function itself, and the token it
/// holds, are freed when V8 collects it.
///
/// An async batch's listener lives in its task, so it is dropped when napi-rs drops the task:
/// on the JS thread, in the completion callback, once the promise has settled (or when queueing
/// the task failed). That covers every way a task ends, unlike napi-rs's `Task::finally`, which
/// is skipped when settling the promise fails.
pub struct AbortListener {
    /// The environment the references belong to.
    env: sys::napi_env,
    /// The JS thread of `env`: the only thread that may use the references.
    thread: ThreadId,
    /// A strong reference to the signal, or null if it could not be made.
    signal: sys::napi_ref,
    /// A strong reference to the listener function, or null if it could not be made.
    function: sys::napi_ref,
}

// SAFETY: the references are used only on `thread` (see `Drop`). The listener crosses to another
// thread only inside its task, while `compute` runs there, and `compute` never touches it.
unsafe impl Send for AbortListener {}

impl Drop for AbortListener {
    fn drop(&mut self) {
        // napi-rs 3.16 drops a task only on the JS thread; were that to change, a leak of two
        // references beats napi calls from a thread that does not own them.
        if thread::current().id() != self.thread {
            return;
        }
        let env = self.env;
        let mut scope = ptr::null_mut();
        // SAFETY: this is `env`'s JS thread, and `env` is alive: napi-rs drops a task in the call
        // that made it or in `env`'s completion callback, which still runs during a worker's
        // teardown (the JS call below then fails, harmlessly, and the references are still
        // deleted). Each reference is non-null only if created in `env`, and is deleted once, here.
        // The scope bounds the handles these calls make.
        unsafe {
            if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
                scope = ptr::null_mut();
            }
            let mut signal = ptr::null_mut();
            let mut function = ptr::null_mut();
            if !self.signal.is_null()
                && !self.function.is_null()
                && sys::napi_get_reference_value(env, self.signal, &mut signal)
                    == sys::Status::napi_ok
                && sys::napi_get_reference_value(env, self.function, &mut function)
                    == sys::Status::napi_ok
            {
                // Nothing to report a failure to: the batch has settled. A throwing
                // `removeEventListener` of the caller's own leaves its exception pending, and Node
                // reports it as uncaught.
                let _ = call_with_listener(env, signal, c"removeEventListener", function);
            }
            for reference in [self.signal, self.function] {
                if !reference.is_null() {
                    sys::napi_delete_reference(env, reference);
                }
            }
            if !scope.is_null() {
                sys::napi_close_handle_scope(env, scope);
            }
        }
    }
}
