#!/usr/bin/env bash
# Proves that `npm install batchtok` works with no Rust toolchain, the way users will get it: the
# root package (loader and types only) plus the one platform package that carries the binary.
#
#   npm run verify-install
#
# 1. builds the linux-x64-gnu binary (`npm run build`; cargo's cache makes a rebuild cheap) and
#    copies it into npm/linux-x64-gnu/, as the release does;
# 2. packs the root and that platform package, and checks what each tarball ships;
# 3. installs both tarballs into a new, empty project, offline and with an empty npm cache, so
#    nothing can come from the registry: the root's optional dependency on batchtok-linux-x64-gnu
#    is met by the local tarball, and the other platforms' optional packages fail to resolve,
#    which npm skips as it does for any optional dependency;
# 4. encodes a batch there with NAPI_RS_ENFORCE_VERSION_CHECK=1 and checks the ids;
# 5. installs the root alone and checks that loading it fails with an error naming the package
#    to install.
#
# BATCHTOK_BINARY=path/to/batchtok.linux-x64-gnu.node skips step 1's build and checks that binary
# instead (e.g. one built against an older glibc, see npm/README.md).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

PLATFORM=linux-x64-gnu
PLATFORM_DIR="npm/$PLATFORM"
BINARY_NAME="batchtok.$PLATFORM.node"
# o200k_base ids of 'hello world', as Python tiktoken gives them.
EXPECTED_IDS='[24912,2375]'

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'verify-install: FAIL: %s\n' "$*" >&2; exit 1; }

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]] || ldd --version 2>&1 | grep -qi musl; then
  # Part of `npm test`, which must pass on a developer's Mac too: say what was not checked.
  echo "verify-install: SKIPPED: this check installs the $PLATFORM package, so it runs on Linux x86_64 with glibc only"
  exit 0
fi

NAME="$(node -p 'require("./package.json").name')"
VERSION="$(node -p 'require("./package.json").version')"
PLATFORM_NAME="$(node -p "require('./$PLATFORM_DIR/package.json').name")"
PLATFORM_VERSION="$(node -p "require('./$PLATFORM_DIR/package.json').version")"
[[ "$PLATFORM_VERSION" == "$VERSION" ]] ||
  fail "$PLATFORM_DIR is at $PLATFORM_VERSION but the root is at $VERSION: run npm run version:bump -- $VERSION"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/batchtok-verify-install.XXXXXX")"
COPIED_BINARY="$ROOT/$PLATFORM_DIR/$BINARY_NAME"
cleanup() {
  rm -rf "$WORK"
  # The copy is only for packing; an ignored 8 MB file left in npm/ helps no one.
  rm -f "$COPIED_BINARY"
}
trap cleanup EXIT

# Runs a command quietly, keeping its output in a log that is shown only if it fails.
quiet() {
  local log="$WORK/last-command.log"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "command failed: $*"
  fi
}

step "1. binary"
if [[ -n "${BATCHTOK_BINARY:-}" ]]; then
  [[ -f "$BATCHTOK_BINARY" ]] || fail "BATCHTOK_BINARY=$BATCHTOK_BINARY does not exist"
  SOURCE_BINARY="$BATCHTOK_BINARY"
  echo "using $SOURCE_BINARY (BATCHTOK_BINARY), not building"
else
  quiet npm run build
  SOURCE_BINARY="$ROOT/$BINARY_NAME"
  echo "built $BINARY_NAME"
fi
cp "$SOURCE_BINARY" "$COPIED_BINARY"
# Informational: a host build links against the host's glibc, which is newer than the release's
# floor; scripts/build-linux-gnu.sh builds the release binary (see npm/README.md).
bash scripts/glibc-floor.sh "$COPIED_BINARY" || true

step "2. pack"
TARBALLS="$WORK/tarballs"
mkdir -p "$TARBALLS"
# The root is packed as the release packs it: its manifest with the platform packages pinned.
STAGED="$WORK/root"
mkdir -p "$STAGED"
cp package.json index.js index.d.ts README.md "$STAGED/"
cp -r entry encoding model stream cli "$STAGED/"
quiet node scripts/pin-platform-packages.js "$STAGED"
[[ "$(node -p "require('$STAGED/package.json').optionalDependencies['$PLATFORM_NAME']")" == "$VERSION" ]] ||
  fail "the packed root does not pin $PLATFORM_NAME at $VERSION"
# --ignore-scripts: the root's `prepare` fetches the test corpus, which is not part of the package.
quiet npm pack "$STAGED" --ignore-scripts --pack-destination "$TARBALLS"
quiet npm pack "./$PLATFORM_DIR" --pack-destination "$TARBALLS"
ROOT_TGZ="$TARBALLS/$NAME-$VERSION.tgz"
PLATFORM_TGZ="$TARBALLS/$PLATFORM_NAME-$VERSION.tgz"
[[ -f "$ROOT_TGZ" && -f "$PLATFORM_TGZ" ]] || fail "expected $(basename "$ROOT_TGZ") and $(basename "$PLATFORM_TGZ") in $TARBALLS"

# Every file a tarball holds must match one of the allowed patterns.
check_contents() {
  local tarball="$1" allowed="$2" file bad=0
  while IFS= read -r file; do
    if [[ ! "$file" =~ $allowed ]]; then
      echo "  unexpected: $file" >&2
      bad=1
    fi
  done < <(tar -tzf "$tarball")
  ((bad == 0)) || fail "$(basename "$tarball") ships files it should not"
  echo "$(basename "$tarball"): $(tar -tzf "$tarball" | sed 's|^package/||' | sort | tr '\n' ' ')"
}
check_contents "$ROOT_TGZ" '^package/(index\.js|index\.d\.ts|package\.json|README(\.md)?|LICEN[CS]E(\.md|\.txt)?|entry/[a-z0-9-]+\.(js|d\.ts)|stream/[a-z0-9-]+\.(js|d\.ts)|cli/[a-z0-9-]+\.js|(encoding|model)/[A-Za-z0-9._-]+\.(js|d\.ts))$'
tar -tzf "$ROOT_TGZ" | grep -x 'package/model/gpt-4o.js' >/dev/null || fail "$(basename "$ROOT_TGZ") lacks the entry point model/gpt-4o.js"
check_contents "$PLATFORM_TGZ" "^package/(${BINARY_NAME//./\\.}|package\\.json|README\\.md|LICEN[CS]E(\\.md|\\.txt)?)\$"
tar -tzf "$PLATFORM_TGZ" | grep -qx "package/$BINARY_NAME" || fail "$(basename "$PLATFORM_TGZ") lacks $BINARY_NAME"

# A new project with its own empty cache: `--offline` then means nothing can come from anywhere
# but the tarballs named on the command line.
new_project() {
  local dir="$1"
  mkdir -p "$dir"
  printf '{ "name": "verify-install-app", "version": "1.0.0", "private": true }\n' >"$dir/package.json"
}
npm_offline() {
  (cd "$1" && shift && npm install --offline --cache "$WORK/npm-cache" --no-audit --no-fund "$@")
}

# The root's runtime dependencies (the CLI's argument parser, progress bar, readers) and theirs,
# packed from this clone's node_modules: offline, they come from these tarballs, as the platform
# package does, at the versions package-lock.json pins.
DEPS="$WORK/deps"
mkdir -p "$DEPS"
while IFS= read -r dir; do
  [[ "$dir" == "$ROOT" ]] && continue
  quiet npm pack "$dir" --ignore-scripts --pack-destination "$DEPS"
done < <(npm ls --omit=dev --all --parseable)
DEP_TGZS=("$DEPS"/*.tgz)

step "3. install both tarballs into an empty project"
APP="$WORK/app"
new_project "$APP"
quiet npm_offline "$APP" "$PLATFORM_TGZ" "$ROOT_TGZ" "${DEP_TGZS[@]}"
[[ -f "$APP/node_modules/$PLATFORM_NAME/$BINARY_NAME" ]] || fail "the binary was not installed"
if compgen -G "$APP/node_modules/$NAME/*.node" >/dev/null; then
  fail "the root package installed a .node file; the binary must come from $PLATFORM_NAME only"
fi
for dir in "$APP/node_modules/$NAME"-*; do
  if [[ -e "$dir" && "$(basename "$dir")" != "$PLATFORM_NAME" ]]; then
    fail "another platform package was installed: $(basename "$dir")"
  fi
done
echo "installed $NAME@$VERSION with $PLATFORM_NAME@$VERSION; no other platform package"

step "4. encode a batch with NAPI_RS_ENFORCE_VERSION_CHECK=1"
cat >"$APP/check.js" <<EOF
'use strict'
const assert = require('node:assert/strict')
const path = require('node:path')

async function main() {
  const { Tokenizer } = require('$NAME')
  // The addon must be the platform package's, not a file beside the loader.
  const loaded = Object.keys(require.cache).filter((file) => file.endsWith('.node'))
  assert.deepEqual(loaded, [require.resolve('$PLATFORM_NAME')])
  assert.ok(loaded[0].includes(path.join('node_modules', '$PLATFORM_NAME')))

  const tokenizer = Tokenizer.fromEncoding('o200k_base')
  const batch = await tokenizer.encodeBatch(['hello world', '', 'hello world'])
  assert.equal(batch.length, 3)
  assert.deepEqual(Array.from(batch.get(0)), $EXPECTED_IDS)
  assert.deepEqual(Array.from(batch.get(1)), [])
  // The entry points, through the package's exports.
  const { count, tokenizer: gpt4o } = require('$NAME/model/gpt-4o')
  assert.deepEqual(['hello world', ''].map(count), [2, 0])
  assert.equal(gpt4o.name, 'o200k_base')
  assert.deepEqual(Array.from(require('$NAME/encoding/cl100k_base').encode('hello world')), [15339, 1917])
  assert.deepEqual(Array.from(batch.get(2)), $EXPECTED_IDS)
  // applyChatTemplate, defined in JavaScript by the package's main entry, rendered by its
  // dependency @huggingface/jinja.
  const chat = tokenizer.applyChatTemplate([{ role: 'user', content: 'hello world' }], {
    chatTemplate: '{% for m in messages %}{{ m.content }}{% endfor %}',
    tokenize: true,
  })
  assert.deepEqual(Array.from(chat), $EXPECTED_IDS)
  const esm = await import('$NAME')
  assert.equal(typeof esm.Tokenizer.prototype.applyChatTemplate, 'function')
  console.log('ids of "hello world": ' + JSON.stringify(Array.from(batch.get(0))) + ' from ' + loaded[0])
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
EOF
(cd "$APP" && NAPI_RS_ENFORCE_VERSION_CHECK=1 node check.js) || fail "the installed package did not encode as expected"

# The command, through the package's bin entry: two lines to a Megatron dataset of 2 documents.
printf 'hello world\nhello world\n' >"$APP/two.txt"
(cd "$APP" && npx --offline batchtok encode two.txt --encoding o200k_base -o out/two -q --summary) >"$WORK/cli.json" ||
  fail "npx batchtok encode failed in the installed package"
node -e "const s = require('$WORK/cli.json'); if (s.documents !== 2 || s.tokens !== 4) process.exit(1)" ||
  fail "npx batchtok encode wrote $(cat "$WORK/cli.json"); expected 2 documents of 2 tokens"
echo "npx batchtok encode: $(cat "$WORK/cli.json")"

step "5. root package alone: the error must name $PLATFORM_NAME"
BARE="$WORK/bare"
new_project "$BARE"
quiet npm_offline "$BARE" "$ROOT_TGZ" "${DEP_TGZS[@]}"
[[ ! -e "$BARE/node_modules/$PLATFORM_NAME" ]] || fail "$PLATFORM_NAME was installed without its tarball"
cat >"$BARE/check.js" <<EOF
'use strict'
// Prints what a user sees: the loader's message, then its cause chain.
try {
  require('$NAME')
} catch (error) {
  const chain = []
  for (let e = error; e; e = e.cause) chain.push(e.message)
  const inMessage = error.message.includes('$PLATFORM_NAME')
  const inChain = chain.some((message) => message.includes('$PLATFORM_NAME'))
  console.log('message: ' + error.message)
  for (const message of chain.slice(1)) console.log('  cause: ' + message.split('\n')[0])
  console.log('names $PLATFORM_NAME in the message: ' + inMessage + '; in message or causes: ' + inChain)
  process.exit(inChain ? 0 : 2)
}
console.error('require succeeded without $PLATFORM_NAME')
process.exit(1)
EOF
(cd "$BARE" && NAPI_RS_ENFORCE_VERSION_CHECK=1 node check.js) ||
  fail "loading without $PLATFORM_NAME did not fail with an error naming it"

printf '\nverify-install: PASS: %s@%s installs from its tarballs with %s and encodes o200k_base; without it, the error names %s\n' \
  "$NAME" "$VERSION" "$PLATFORM_NAME" "$PLATFORM_NAME"
