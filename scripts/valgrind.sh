#!/usr/bin/env bash
# The addon under valgrind's memcheck (issue 8): scripts/valgrind-exercise.js drives every JS entry
# point (sync and async encode, count, decode, cancellation, a scheduler of its own) through
# index.js, and the run fails if memcheck reports an error. Slow (minutes); not part of
# `npm test`; run by hand or with `npm run test:sanitize`.
#
# Node runs with --jitless: V8's JIT writes and runs code at run time, which memcheck reports as
# noise and which slows it further; batchtok's code is the same either way. scripts/valgrind.supp
# holds two suppressions, each with its reason: V8's conservative stack scan, and napi-rs's
# once-per-load references to the class constructors. Any added there must say why, and must never
# match batchtok's own code.
set -euo pipefail
cd "$(dirname "$0")/.."

addon=${BATCHTOK_ADDON:-$PWD/batchtok.linux-x64-gnu.node}
[[ -f $addon ]] || { echo "no addon at $addon: run npm run build first" >&2; exit 1; }
log=$(mktemp -t batchtok-valgrind.XXXXXX)

status=0
BATCHTOK_ADDON=$addon nice valgrind --tool=memcheck --error-exitcode=1 \
  --suppressions=scripts/valgrind.supp --track-origins=yes --num-callers=40 \
  --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=none \
  --log-file="$log" \
  node --jitless --expose-gc scripts/valgrind-exercise.js || status=$?

grep -E "ERROR SUMMARY|definitely lost|indirectly lost" "$log" || true
# Leaks do not fail the run by themselves (Node leaks a little at exit by design); a leak or an
# error with a batchtok frame in its stack does.
if grep -q "batchtok" "$log"; then
  echo "valgrind: reports name batchtok frames; see $log" >&2
  grep -n -B2 -A20 "batchtok" "$log" | head -80 >&2
  status=1
fi
if [[ $status -ne 0 ]]; then
  echo "valgrind: failed with status $status; the full log is $log" >&2
  exit "$status"
fi
echo "valgrind: no memcheck errors (log: $log)"
