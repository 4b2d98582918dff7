#!/usr/bin/env bash
# The scheduler benchmark on many cores: every policy, the release candidate's own parallel batch
# and hand-sharded engines (one per thread, and one shared), at 1, 2, 4, 8, 12 and 16 threads, on
# documents, chat-sized items and a skewed batch, on cold word caches and on repeated text; then
# the discrete-event model's predictions for the same batches at the same thread counts, with
# that machine's own item costs, wake-up figures and work factor per thread count.
#
#   bash scripts/many-cores.sh            build here, stage, print the device invocation
#   bash scripts/many-cores.sh --local    build here, stage, run here at 1 and 2 threads
#   bash scripts/many-cores.sh --into DIR stage into DIR/.many-cores (see below)
#
# The 16-core machine (the `device` tool's) has no Rust toolchain and no network, so the two
# benchmark programs (`cargo build --release --example scheduler --example simulate`) are built
# here and travel as binaries, with big.txt, in the ignored folder `.many-cores/`. They need
# glibc 2.34 or newer there, and the same processor architecture (x86-64) as here. On the device,
# `.many-cores/run.sh` writes the tables to `$OUT`:
#   machine.txt              `nproc` and `/proc/cpuinfo`'s model name
#   scheduler.md             `scheduler`'s tables: each contender's median, efficiency T1/(p*Tp),
#                            threads' busy time, chunked vs rc.3 encode, per method, workload and
#                            thread count
#   scheduler-measured.tsv   the medians, as `simulate --measured` reads them
#   simulate.md              the model's inputs measured there and its predicted vs measured
#                            efficiency at every thread count, with and without the work factor
# `benchmark/results/many-cores.md` holds the latest such run.
#
# The device tool sends the checkout its session started in: a helper working in another
# worktree stages into that checkout with `--into /path/to/it`, where `.many-cores/` must be
# ignored too (it is in `.gitignore` once this script is merged; before, add `/.many-cores/` to
# that repository's `.git/info/exclude`).
#
# Environment: THREADS (default 1,2,4,8,12,16; --local: 1,2), RUNS (rounds per workload and
# method, default 15: about 5 minutes of the device's time for the three workloads and both
# methods), WORKLOADS (default documents,chat,skewed), METHODS (default cold,repeated).
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
runs=${RUNS:-15}
workloads=${WORKLOADS:-documents,chat,skewed}
methods=${METHODS:-cold,repeated}

cd "$root"
if [ ! -f .cache/corpus/big.txt ]; then
  node scripts/corpus.js
fi
cargo build --release --example scheduler --example simulate

stage=$into/.many-cores
mkdir -p "$stage"
if ! git -C "$into" check-ignore -q "$stage"; then
  echo "$stage is not ignored in $into: add /.many-cores/ to its .gitignore or .git/info/exclude" >&2
  exit 1
fi
rm -rf "${stage:?}"/*
cp target/release/examples/scheduler target/release/examples/simulate .cache/corpus/big.txt "$stage/"

# The driver that runs on the target machine, from the checkout's root, with the settings above
# written in, so the device command stays one short line.
cat >"$stage/run.sh" <<EOF
#!/bin/sh
# Written by scripts/many-cores.sh; runs the staged benchmark and writes its tables to \$OUT.
set -eu
here=\$(cd "\$(dirname "\$0")" && pwd)
out=\${OUT:-\$here/out}
mkdir -p "\$out"
export BATCHTOK_BIG_TXT="\$here/big.txt"
{
  echo "nproc: \$(nproc)"
  grep -m1 'model name' /proc/cpuinfo || true
  uname -sr
  # A CPU quota or a thread per core changes what 16 threads can get.
  echo "cgroup cpu.max: \$(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo none)"
  lscpu 2>/dev/null | grep -E '^(CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|L3)' || true
} | tee "\$out/machine.txt"
"\$here/scheduler" --threads $threads --runs $runs --workloads $workloads --methods $methods \\
  --tsv "\$out/scheduler-measured.tsv" | tee "\$out/scheduler.md"
"\$here/simulate" --measured "\$out/scheduler-measured.tsv" --validate-only | tee "\$out/simulate.md"
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

The tables come back as machine.txt, scheduler.md, scheduler-measured.tsv and simulate.md.
EOF
fi
