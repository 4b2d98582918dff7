"""Python `tokenizers`' encode_batch on the documents benchmark/fallback.rs encodes, per file.

The reference column of benchmark/results/fallback.md: the same files, the same documents (the
first BYTES of big.txt cut at lines into documents of at least DOCUMENT_BYTES, as
benchmark/corpus.rs cuts them), `encode_batch` with the template tokens, padding off. Its thread
count is rayon's global pool, which reads RAYON_NUM_THREADS once per process, so each count runs in
a process of its own:

    RAYON_NUM_THREADS=1 scripts/.venv/bin/python benchmark/fallback_python.py
    RAYON_NUM_THREADS=2 scripts/.venv/bin/python benchmark/fallback_python.py

Prints one line per file: name, MiB/s (median of RUNS, after one warm-up run).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT_BYTES = 6500
BYTES = int(os.environ.get("FALLBACK_BYTES", "1000000"))
RUNS = int(os.environ.get("FALLBACK_RUNS", "5"))
FILES = [
    ("gpt2", ROOT / "__test__/fixtures/tokenizers/gpt2.json"),
    ("bert", ROOT / "__test__/fixtures/tokenizers/bert.json"),
    ("unigram", ROOT / "__test__/fixtures/tokenizers/unigram.json"),
] + [
    (name, ROOT / ".cache/real-tokenizers" / f"{name}.json")
    for name in ["llama3", "qwen3", "deepseek_v3", "gemma3", "llama2", "gptoss", "gpt4o",
                 "gpt35turbo", "gemini"]
]


def documents() -> list[str]:
    """benchmark/corpus.rs `split_at_lines`, then the documents up to BYTES in all."""
    text = (ROOT / ".cache/corpus/big.txt").read_text(encoding="utf-8")
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    items, current = [], ""
    for line in lines:
        current += line
        if len(current.encode()) >= DOCUMENT_BYTES:
            items.append(current)
            current = ""
    if current:
        items.append(current)
    kept, total = [], 0
    for item in items:
        total += len(item.encode())
        if total > BYTES:
            break
        kept.append(item)
    return kept


def main() -> None:
    items = documents()
    mib = sum(len(t.encode()) for t in items) / (1 << 20)
    threads = os.environ.get("RAYON_NUM_THREADS", "all")
    print(f"# {len(items)} documents, {mib:.2f} MiB, RAYON_NUM_THREADS={threads}", file=sys.stderr)
    for name, path in FILES:
        if not path.exists():
            print(f"# {name}: skipped; `node scripts/real-tokenizers.js` fetches it", file=sys.stderr)
            continue
        tok = Tokenizer.from_file(str(path))
        tok.no_padding()
        tok.encode_batch(items, add_special_tokens=True)
        seconds = []
        for _ in range(RUNS):
            started = time.perf_counter()
            tok.encode_batch(items, add_special_tokens=True)
            seconds.append(time.perf_counter() - started)
        print(f"{name}\t{mib / statistics.median(seconds):.1f}", flush=True)


if __name__ == "__main__":
    main()
