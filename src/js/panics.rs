//! What a panic prints on stderr.
//!
//! A panic of the reference code on input it cannot take (a tokenizer.json it cannot read, a
//! post-processor set-up it leaves unfinished) is caught in the engine and becomes the error the
//! caller sees, carrying what the panic said. Rust's default report of it (the thread, the source
//! location, a note on `RUST_BACKTRACE`) would only repeat that above a CLI's own message or in a
//! server's log, once per refused file. The addon's hook leaves those out and passes every other
//! panic, which is a bug in batchtok, to the hook it replaced.
//!
//! The hook is the addon's own: a Rust `cdylib` carries its own standard library, so neither Node
//! nor another addon shares it.

use std::sync::Once;

use crate::engine;

/// Installs the hook, once per process however many times the module loads.
pub fn report_only_unexpected_panics() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |panic| {
            if !engine::panic_becomes_an_error() {
                report(panic);
            }
        }));
    });
}
