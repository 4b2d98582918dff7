#!/usr/bin/env bash
# The mimalloc build on this machine, tested: build.rs leaves Linux on the system allocator (see
# the reason there), so `npm test` would otherwise never load a mimalloc addon here. Builds the
# variant with BATCHTOK_ALLOCATOR=mimalloc beside the regular build and runs the allocator and
# worker_threads specs against it (BATCHTOK_ADDON points the specs at it; see __test__/load-addon.cjs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUT=.cache/allocator/mimalloc
mkdir -p "$OUT"
BATCHTOK_ALLOCATOR=mimalloc npx napi build --platform --release --output-dir "$OUT" --no-js --dts index.d.ts
binary="$(ls "$OUT"/*.node)"
BATCHTOK_ADDON="$ROOT/$binary" BATCHTOK_ALLOCATOR=mimalloc \
  npx vitest run __test__/allocator.spec.ts __test__/workers.spec.ts
