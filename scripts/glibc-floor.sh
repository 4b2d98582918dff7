#!/usr/bin/env bash
# Prints the oldest glibc a Linux binary can load on: the highest GLIBC_x.y version among the
# symbols it imports. With a second argument, fails when that floor is above it.
#
#   bash scripts/glibc-floor.sh batchtok.linux-x64-gnu.node 2.28
#
# Reads the dynamic symbol table with readelf, which understands every architecture's ELF (a
# host objdump may not read an aarch64 file). Set READELF to use another one.
set -euo pipefail

if (($# < 1 || $# > 2)); then
  echo "usage: $0 <file.node> [max-glibc, e.g. 2.28]" >&2
  exit 2
fi
file="$1"
max="${2:-}"
readelf="${READELF:-readelf}"

[[ -f "$file" ]] || { echo "glibc-floor: $file does not exist" >&2; exit 1; }

# Every version a symbol asks for, e.g. "2.17"; a musl or non-ELF file has none.
versions="$("$readelf" --dyn-syms --wide "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV || true)"
if [[ -z "$versions" ]]; then
  echo "glibc-floor: $file imports no versioned glibc symbol"
  exit 0
fi
floor="$(tail -n 1 <<<"$versions")"
echo "glibc-floor: $file needs glibc >= $floor"

if [[ -n "$max" ]]; then
  highest="$(printf '%s\n%s\n' "$floor" "$max" | sort -V | tail -n 1)"
  if [[ "$highest" != "$max" ]]; then
    echo "glibc-floor: FAIL: above the $max floor; the symbols that raise it:" >&2
    "$readelf" --dyn-syms --wide "$file" | grep -o 'UND [^ ]*@GLIBC_[0-9][0-9.]*' |
      sed 's/^UND //' | awk -F'@GLIBC_' -v max="$max" '{ print $2 " " $1 }' | sort -V | uniq |
      while read -r version symbol; do
        [[ "$(printf '%s\n%s\n' "$version" "$max" | sort -V | tail -n 1)" == "$max" ]] || echo "  $symbol (GLIBC_$version)" >&2
      done
    exit 1
  fi
fi
