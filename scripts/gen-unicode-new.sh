#!/usr/bin/env bash
# Regenerates src/engine/unicode_drift/new_in_17.rs (see scripts/unicode-new.py): the code points
# that Unicode 17.0 assigns and the reference's Unicode 16.0 does not. The two `unicodedata2`
# releases install into throwaway folders under scripts/, one per Unicode version.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

for version in 16.0.0 17.0.0; do
  folder="scripts/.unicodedata2-$version"
  if [ ! -d "$folder/unicodedata2" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --target "$folder" \
      "unicodedata2==$version"
  fi
done

python3 scripts/unicode-new.py scripts/.unicodedata2-16.0.0 scripts/.unicodedata2-17.0.0
