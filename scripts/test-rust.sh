#!/usr/bin/env bash
# The Rust tests, a check of the Rust benchmarks and of the code's layout as rustfmt writes it,
# as `npm test` runs them.
#
# `napi build` always passes `--target <triple>`, which puts its artifacts under
# target/<triple>/release rather than target/release. Naming the host's triple here too lets the
# tests reuse the dependencies the addon build compiled instead of compiling all of them again.
set -euo pipefail
cd "$(dirname "$0")/.."
host="$(rustc -vV | sed -n 's/^host: //p')"
# rustfmt is part of rustup's default profile; a toolchain installed without it skips the check
# and says so.
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --check || { echo "scripts/test-rust.sh: run \`cargo fmt\` and commit the result" >&2; exit 1; }
else
  echo "scripts/test-rust.sh: rustfmt is not installed; the layout check is skipped (rustup component add rustfmt)" >&2
fi
cargo test --release --target "$host" --lib --tests
# `rc-parallel`: the scheduler benchmark requires it (Cargo.toml); checked, not built.
cargo check --release --target "$host" --examples --features rc-parallel
