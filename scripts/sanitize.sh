#!/usr/bin/env bash
# Memory safety of the Rust code that has `unsafe` (issue 8): the library's unit tests under
# AddressSanitizer, and the scheduler's under Miri. Both need the nightly toolchain (with the
# rust-src and miri components). Slow: a cold AddressSanitizer build takes several minutes, Miri
# several more. Not part of `npm test`; run by hand or with `npm run test:sanitize`.
#
# Neither disturbs the main build: AddressSanitizer builds into .cache/asan, and cargo-miri keeps
# its artifacts in target/miri of its own accord.
set -euo pipefail
cd "$(dirname "$0")/.."

host=x86_64-unknown-linux-gnu

echo "== AddressSanitizer: cargo +nightly test --lib (target dir .cache/asan)"
# The sanitizer needs every crate instrumented the same way, hence a target dir of its own.
# -Zbuild-std is not used: the prebuilt std is not instrumented, which costs some reach into std's
# own code but none into batchtok's or its dependencies', and saves building std.
# detect_leaks=0: the tests keep process-wide singletons (the embedded encodings, the global
# scheduler pool) alive until exit on purpose.
# mimalloc is left out (--no-default-features): ASan must see every allocation through the system
# allocator to catch misuse of it. engine::differential is skipped: it runs the tokenizer crates'
# safe code over 80,000 texts and takes over 20 minutes under ASan, while the unsafe code is the
# scheduler's, the batch buffers' and the id buffer's, which the other tests drive.
RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address" \
ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=1" \
  nice cargo +nightly test --no-default-features --lib --target "$host" \
    --target-dir .cache/asan -- --test-threads 2 --skip engine::differential

echo "== Miri: cargo +nightly miri test --lib scheduler (target dir target/miri)"
# -Zmiri-ignore-leaks: the pool's worker threads outlive the tests that start them.
MIRIFLAGS="-Zmiri-ignore-leaks" \
  nice cargo +nightly miri test --no-default-features --lib scheduler

echo "sanitize: AddressSanitizer and Miri found nothing"
