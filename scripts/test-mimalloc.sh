#!/usr/bin/env bash
# The allocator the regular build does not use, tested on this machine: build.rs picks one per
# target (mimalloc on x86_64 Linux with musl, macOS and x86_64 Windows; see the reason there), so
# `npm test` would otherwise load only that one here. Builds the other variant
# (BATCHTOK_ALLOCATOR=system where build.rs picks mimalloc, =mimalloc elsewhere) beside the regular
# build and runs the allocator and worker_threads specs against it (BATCHTOK_ADDON points the
# specs at it; see __test__/load-addon.cjs). `bash scripts/test-mimalloc.sh mimalloc|system` tests
# the one named.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
variant="${1:-}"
if [[ -z "$variant" ]]; then
  regular="$(node -p "require('./index.js').allocator()")"
  if [[ "$regular" == mimalloc ]]; then variant=system; else variant=mimalloc; fi
fi
OUT=".cache/allocator/$variant"
mkdir -p "$OUT"
BATCHTOK_ALLOCATOR="$variant" npx napi build --platform --release --output-dir "$OUT" --no-js --dts index.d.ts
binary="$(ls "$OUT"/*.node)"
BATCHTOK_ADDON="$ROOT/$binary" BATCHTOK_ALLOCATOR="$variant" \
  npx vitest run __test__/allocator.spec.ts __test__/workers.spec.ts
