#!/usr/bin/env bash
# The Rust tests and a check of the Rust benchmarks, as `npm test` runs them.
#
# `napi build` always passes `--target <triple>`, which puts its artifacts under
# target/<triple>/release rather than target/release. Naming the host's triple here too lets the
# tests reuse the dependencies the addon build compiled instead of compiling all of them again.
set -euo pipefail
cd "$(dirname "$0")/.."
host="$(rustc -vV | sed -n 's/^host: //p')"
cargo test --release --target "$host" --lib --tests
cargo check --release --target "$host" --examples
