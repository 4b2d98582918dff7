#!/usr/bin/env bash
# Lints the GitHub Actions workflows with actionlint (syntax, expressions, job graph, and the
# shell of every `run:` step through shellcheck when it is on PATH).
#
#   bash scripts/lint-workflows.sh
#
# actionlint is built from the Go module proxy into .cache/bin/ on first use, at the version
# pinned below, so CI and every machine lint with the same rules. Needs Go 1.24+ the first time.
set -euo pipefail

ACTIONLINT_VERSION=v1.7.12

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN_DIR="$ROOT/.cache/bin"
ACTIONLINT="$BIN_DIR/actionlint"

installed_version() {
  "$ACTIONLINT" -version 2>/dev/null | head -n 1
}

# The binary is rebuilt whenever the pin moves: `-version` prints the version it was built at.
if [[ ! -x "$ACTIONLINT" || "$(installed_version)" != "${ACTIONLINT_VERSION}" ]]; then
  command -v go >/dev/null || {
    echo "lint-workflows: FAIL: actionlint is not in $BIN_DIR and Go is not installed to build it" >&2
    exit 1
  }
  echo "lint-workflows: installing actionlint $ACTIONLINT_VERSION into ${BIN_DIR#"$ROOT"/}"
  mkdir -p "$BIN_DIR"
  GOBIN="$BIN_DIR" go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi

cd "$ROOT"
shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
if ((${#workflows[@]} == 0)); then
  echo "lint-workflows: FAIL: no workflow files in .github/workflows" >&2
  exit 1
fi
if ! command -v shellcheck >/dev/null; then
  echo "lint-workflows: shellcheck is not on PATH; run: steps are checked for syntax only"
fi
"$ACTIONLINT" -no-color "${workflows[@]}"
echo "lint-workflows: PASS: ${workflows[*]}"
