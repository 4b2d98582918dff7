//! A call's tie to its caller's `AbortSignal`: an `abort` listener added with `addEventListener`
//! when the call starts and removed with `removeEventListener` once the call has settled.
//!
//! batchtok does not use napi-rs's `AbortSignal` conversion: it `napi_wrap`s the signal and never
//! deletes the wrap's reference (72 bytes lost per call, found with valgrind, FUZZING.md), and it
//! listens by assigning the signal's `onabort`, which replaces the caller's own handler. A
//! listener of our own leaves `onabort` and every other listener alone, and its removal keeps a
//! signal reused for many calls from collecting listeners.
//!
//! Each call adds its own listener, as Node's own APIs do (`timers/promises`): more than ten
//! calls in flight on one signal make Node print `MaxListenersExceededWarning`, which
//! `events.setMaxListeners(n, signal)` raises.

use napi::bindgen_prelude::Unknown;
use napi::{Env, ValueType};

use super::raw::{self, Persistent};
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
        let function =
            raw::function_with_data(env, LISTENER_NAME, cancel.clone(), CancelToken::cancel)?;
        let listener = AbortListener {
            signal: Persistent::new(env, &self.signal)?,
            function: Persistent::new(env, &function)?,
        };
        let abort = raw::create_string(env, "abort")?;
        raw::call_method(env, &self.signal, c"addEventListener", &[abort, function])?;
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
    match raw::named_property(env, signal, c"aborted") {
        Ok(value) if value.get_type()? == ValueType::Boolean => raw::boolean(env, &value),
        _ => Ok(false),
    }
}

/// The `abort` listener a call keeps on its caller's signal while it runs. Dropping it removes
/// the listener and releases both references; the listener function itself, and the token it
/// holds, are freed when V8 collects it.
///
/// An async call's listener lives in its task, so it is dropped when napi-rs drops the task: on
/// the JS thread, in the completion callback, once the promise has settled (or when queueing the
/// task failed). That covers every way a task ends, unlike napi-rs's `Task::finally`, which is
/// skipped when settling the promise fails.
pub struct AbortListener {
    signal: Persistent,
    function: Persistent,
}

impl AbortListener {
    /// The signal's `reason`: what the caller passed to `abort(reason)`, or the `DOMException`
    /// Node makes when it passed nothing. `None` if it cannot be read.
    pub fn reason<'env>(&self, env: &'env Env) -> Option<Unknown<'env>> {
        let signal = self.signal.value(env)?;
        raw::named_property(env, &signal, c"reason").ok()
    }
}

impl Drop for AbortListener {
    fn drop(&mut self) {
        // Nothing to report a failure to: the call has settled. A throwing `removeEventListener`
        // of the caller's own leaves its exception pending, and Node reports it as uncaught.
        Persistent::with_values(&[&self.signal, &self.function], |env, values| {
            if let Ok(abort) = raw::create_string(env, "abort") {
                let listener = values[1];
                let _ =
                    raw::call_method(env, &values[0], c"removeEventListener", &[abort, listener]);
            }
        });
    }
}
