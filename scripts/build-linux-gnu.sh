#!/usr/bin/env bash
# Builds a release binary for a Linux glibc target against glibc 2.17, so that it loads on any
# distribution from 2014 on (the floor is checked, see npm/README.md), then checks its glibc floor.
#
#   bash scripts/build-linux-gnu.sh x86_64-unknown-linux-gnu            # into the repository root
#   bash scripts/build-linux-gnu.sh aarch64-unknown-linux-gnu --out DIR # into DIR, loader untouched
#
# A plain `npm run build` links against the host's glibc and inherits its symbol versions (2.34
# on Debian 12). This uses `napi build --use-napi-cross`: gcc with a glibc 2.17 sysroot, from the
# npm packages @napi-rs/cross-toolchain-x64-target-*. The CLI would download that toolchain
# itself, but two things stop it on some machines, so this script unpacks it where the CLI looks
# (~/.napi-rs/cross-toolchain/<version>/<target>) and the CLI then skips its download:
# - the CLI asks for the toolchain package at the version of @napi-rs/cross-toolchain (1.0.5 with
#   @napi-rs/cli 3.10), which the target packages have not all been published at; the pins below
#   are versions that exist;
# - its unpacker needs @napi-rs/lzma's native part, which requires Node >= 22.20.
# Runs on a Linux x64 host (the toolchain packages used here are x64-hosted).
set -euo pipefail

MAX_GLIBC=2.28

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

usage() {
  echo "usage: $0 <x86_64-unknown-linux-gnu|aarch64-unknown-linux-gnu> [--out DIR]" >&2
  exit 2
}
(($# >= 1)) || usage
target="$1"
shift
out=""
while (($#)); do
  case "$1" in
    --out) (($# >= 2)) || usage; out="$2"; shift 2 ;;
    *) usage ;;
  esac
done

case "$target" in
  x86_64-unknown-linux-gnu) toolchain_package='@napi-rs/cross-toolchain-x64-target-x86_64@1.0.0'; platform=linux-x64-gnu ;;
  aarch64-unknown-linux-gnu) toolchain_package='@napi-rs/cross-toolchain-x64-target-aarch64@1.0.3'; platform=linux-arm64-gnu ;;
  *) usage ;;
esac

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "build-linux-gnu: needs a Linux x86_64 host; elsewhere use \`npm run build\` (no glibc floor)" >&2
  exit 1
fi

# Where the CLI looks for an unpacked toolchain: keyed by the @napi-rs/cross-toolchain version
# that @napi-rs/cli resolves.
cross_version="$(node -p "require(require.resolve('@napi-rs/cross-toolchain/package.json', { paths: [require.resolve('@napi-rs/cli/package.json')] })).version")"
toolchain="$HOME/.napi-rs/cross-toolchain/$cross_version/$target"

if [[ ! -f "$toolchain/package.json" ]]; then
  echo "build-linux-gnu: fetching $toolchain_package into $toolchain"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # npm pack checks the tarball against the registry's integrity hash.
  tarball="$(cd "$work" && npm pack "$toolchain_package" --silent | tail -n 1)"
  tar -xzf "$work/$tarball" -C "$work"
  rm -rf "$toolchain"
  mkdir -p "$toolchain"
  tar -xJf "$work/package/$target.tar.xz" -C "$toolchain"
  [[ -f "$toolchain/package.json" ]] || { echo "build-linux-gnu: $toolchain_package did not unpack as expected" >&2; exit 1; }
fi

args=(build --platform --release --target "$target" --use-napi-cross)
if [[ -n "$out" ]]; then
  mkdir -p "$out"
  # Leave the committed loader and types alone: no loader, and the types (the CLI always writes
  # them) go beside the binary in DIR.
  args+=(--output-dir "$out" --no-js --dts index.d.ts)
else
  out="$ROOT"
fi
npx napi "${args[@]}"

bash scripts/glibc-floor.sh "$out/batchtok.$platform.node" "$MAX_GLIBC"
