//! The engine layer's one error type.

use std::any::Any;
use std::cell::Cell;
use std::fmt;
use std::panic::AssertUnwindSafe;

/// What went wrong, so the layer above can pick the JS error class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A tokenizer could not be loaded: unknown name, unreadable or malformed file.
    Load,
    /// A value the caller passed is outside what the tokenizer accepts (an id not in the vocabulary).
    OutOfRange,
    /// An option does not apply to this tokenizer or has an invalid value.
    InvalidOption,
    /// Encoding or decoding failed inside an engine.
    Engine,
    /// A text holds a special token the caller disallowed (tiktoken's `disallowed_special`).
    Disallowed,
    /// The call needs something the tokenizer does not define (a pad token, a maximum length).
    NotConfigured,
}

/// The special token that made a text an [`ErrorKind::Disallowed`] error, for callers that
/// report it in their own words (the drop-in modules, in their peer's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisallowedToken {
    /// The token's text.
    pub text: String,
    /// Where it starts in the text, in UTF-16 code units (a JS string's index).
    pub index: usize,
}

/// An engine-layer error: what failed, why, and (where there is one) what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    disallowed: Option<Box<DisallowedToken>>,
}

impl Error {
    /// An error of `kind` with a message for the user.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            disallowed: None,
        }
    }

    /// An [`ErrorKind::Disallowed`] error about `token`, with a message for the user.
    pub fn disallowed(token: DisallowedToken, message: impl Into<String>) -> Self {
        Error {
            disallowed: Some(Box::new(token)),
            ..Error::new(ErrorKind::Disallowed, message)
        }
    }

    /// Which class of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message for the user.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The special token a disallowed-token error is about.
    pub fn disallowed_token(&self) -> Option<&DisallowedToken> {
        self.disallowed.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// What a caught panic said: its payload where that is a `&str` or a `String` (as `panic!`
/// makes it), else `None`.
pub fn panic_text(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

thread_local! {
    /// How many [`refusing_panics`] calls the thread is inside.
    static REFUSING: Cell<u32> = const { Cell::new(0) };
}

/// Runs `read`, catching a panic of the reference code it calls on input it cannot take (a
/// malformed tokenizer.json, a post-processor set-up it leaves unfinished) as the payload, which
/// the caller turns into an error that says what the panic said ([`with_panic_text`]). While
/// `read` runs, [`panic_becomes_an_error`] is true on this thread.
///
/// The caller reads nothing after a panic that `read` may have left half-changed (what `read`
/// builds is dropped with the panic; a tokenizer it only reads is unchanged), which is why `read`
/// need not be [`std::panic::UnwindSafe`].
pub(super) fn refusing_panics<T>(read: impl FnOnce() -> T) -> Result<T, Box<dyn Any + Send>> {
    /// Leaves the count as it found it, however `read` ends.
    struct Inside;
    impl Drop for Inside {
        fn drop(&mut self) {
            REFUSING.with(|depth| depth.set(depth.get() - 1));
        }
    }
    REFUSING.with(|depth| depth.set(depth.get() + 1));
    let _inside = Inside;
    std::panic::catch_unwind(AssertUnwindSafe(read))
}

/// Whether a panic raised now, on this thread, is one that [`refusing_panics`] catches and turns
/// into an error carrying its text: a panic hook need not report it.
pub fn panic_becomes_an_error() -> bool {
    REFUSING.with(|depth| depth.get() > 0)
}

/// `message`, then what a caught panic said ([`panic_text`]) in parentheses, so that the error
/// replacing the panic says what went wrong inside the engine.
pub(super) fn with_panic_text(message: &str, payload: &(dyn Any + Send)) -> String {
    match panic_text(payload) {
        Some(said) if !said.is_empty() => format!("{message} ({said})"),
        _ => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_says_what_it_said_after_the_message() {
        let caught = |panic: fn()| std::panic::catch_unwind(panic).unwrap_err();
        let said = caught(|| panic!("a {} payload", "String"));
        assert_eq!(
            with_panic_text("it panicked", &*said),
            "it panicked (a String payload)"
        );
        let said = caught(|| std::panic::panic_any("a str payload"));
        assert_eq!(
            with_panic_text("it panicked", &*said),
            "it panicked (a str payload)"
        );
        let said = caught(|| std::panic::panic_any(7_u8));
        assert_eq!(with_panic_text("it panicked", &*said), "it panicked");
    }

    #[test]
    fn a_refused_panic_is_known_as_one_only_while_it_is_caught() {
        assert!(!panic_becomes_an_error());
        let inside = refusing_panics(|| refusing_panics(panic_becomes_an_error).unwrap());
        assert_eq!(inside.ok(), Some(true));
        assert!(!panic_becomes_an_error());
        let said = refusing_panics(|| {
            assert!(panic_becomes_an_error());
            panic!("refused")
        })
        .unwrap_err();
        assert_eq!(panic_text(&*said), Some("refused"));
        assert!(!panic_becomes_an_error(), "the count is back after a panic");
    }
}
