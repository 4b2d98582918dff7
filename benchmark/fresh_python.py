"""One Python contender of the fresh-text benchmark, in a process of its own (fresh.mjs starts it).

    scripts/.venv/bin/python benchmark/fresh_python.py '<job as JSON>'

The same job and the same steps as benchmark/fresh-child.mjs: load, warm up on a slice of another
corpus, time each fresh slice once, time the first slice again `repeats` times, then print one
line: FRESH_RESULT and the JSON result, with a digest of each timed text's ids (the first 16 hex
digits of the SHA-1 of the ids as little-endian u32, as fresh-corpora.mjs computes it).

Contenders (the job's key):
- python/tiktoken/N: tiktoken's `encode_ordinary_batch(texts, num_threads=N)`. The OpenAI rank
  files are not downloaded: scripts/fixtures.py hands tiktoken the tiktoken-rs crate's copies,
  which tiktoken accepts only if their SHA-256 is the one it expects.
- python/tokenizers/2: `Tokenizer.from_file(...).encode_batch(texts)` and each result's `ids`, on
  rayon's pool of RAYON_NUM_THREADS threads (fresh.mjs sets 2).
- python/mistral_common/1: `Tekkenizer.from_file(...)`'s `encode(text, bos=False, eos=False)` per
  text, on the tekken.json `mistral_common` ships (the same tokens as the packed copy batchtok
  reads).
"""

from __future__ import annotations

import gc
import hashlib
import json
import sys
import tempfile
import time
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = ROOT / ".cache" / "corpus"
REAL = ROOT / ".cache" / "real-tokenizers"
RESULT_PREFIX = "FRESH_RESULT "

MODEL_FILES = {"o200k_base": "gpt4o", "cl100k_base": "gpt35turbo", "llama3": "llama3", "llama2": "llama2"}
OPENAI = {"o200k_base", "cl100k_base"}
TEKKEN_FILES = {"tekken": "tekken_240718.json"}

_corpora: dict[str, list[str]] = {}


def items(corpus: str, start: int, end: int) -> list[str]:
    if corpus not in _corpora:
        with open(CORPUS_DIR / f"{corpus}.jsonl", encoding="utf-8") as f:
            _corpora[corpus] = [json.loads(line) for line in f if line.strip()]
    return _corpora[corpus][start:end]


def digest(ids) -> str:
    return hashlib.sha1(array("I", ids).tobytes()).hexdigest()[:16]


def open_tiktoken(model: str, threads: int):
    sys.path.insert(0, str(ROOT / "scripts"))
    import fixtures  # scripts/fixtures.py: the verified, offline way to load tiktoken's encodings

    with tempfile.TemporaryDirectory(prefix="batchtok-fresh-") as work:
        encodings, _ = fixtures.load_openai_encodings(fixtures.tiktoken_rs_assets(), Path(work))
    enc = encodings[model]
    return lambda texts: enc.encode_ordinary_batch(texts, num_threads=threads)


def open_tokenizers(model: str):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(REAL / f"{MODEL_FILES[model]}.json"))
    return lambda texts: [encoding.ids for encoding in tokenizer.encode_batch(texts)]


def open_mistral_common(model: str):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    import mistral_common

    if model not in TEKKEN_FILES:
        sys.exit(f"python/mistral_common/1 runs Mistral's tekken files only, not {model}")
    tekkenizer = Tekkenizer.from_file(Path(mistral_common.__file__).parent / "data" / TEKKEN_FILES[model])
    return lambda texts: [tekkenizer.encode(text, bos=False, eos=False) for text in texts]


def timed(run, texts):
    gc.collect()
    cpu = time.process_time()
    start = time.perf_counter()
    result = run(texts)
    ms = (time.perf_counter() - start) * 1000
    return result, ms, (time.process_time() - cpu) * 1000


def main() -> None:
    job = json.loads(sys.argv[1])
    key, model = job["key"], job["model"]
    text_of = lambda s: items(s["corpus"], s["start"], s["end"])

    load_start = time.perf_counter()
    if key.startswith("python/tiktoken/"):
        if model not in OPENAI:
            sys.exit(f"{key} runs the OpenAI encodings only, not {model}")
        run = open_tiktoken(model, int(key.rsplit("/", 1)[1]))
    elif key == "python/tokenizers/2":
        run = open_tokenizers(model)
    elif key == "python/mistral_common/1":
        run = open_mistral_common(model)
    else:
        sys.exit(f"no Python contender {key}")
    load_ms = (time.perf_counter() - load_start) * 1000

    warmup = text_of(job["warmup"])
    calls, warm_start = 0, time.perf_counter()
    while calls < job["warmupCalls"] or (
        (time.perf_counter() - warm_start) * 1000 < job["warmupMs"] and calls < 2 * job["warmupCalls"]
    ):
        run(warmup)
        calls += 1

    fresh, kept = [], []
    for s in job["slices"]:
        result, ms, cpu_ms = timed(run, text_of(s))
        kept.append((s, result))
        fresh.append({**s, "ms": ms, "cpuMs": cpu_ms})

    repeated = []
    first = text_of(job["slices"][0])
    for _ in range(job["repeats"]):
        _, ms, cpu_ms = timed(run, first)
        repeated.append({**job["slices"][0], "ms": ms, "cpuMs": cpu_ms})

    checks = [{**s, "digests": [digest(ids) for ids in result]} for s, result in kept]
    print(RESULT_PREFIX + json.dumps({"loadMs": load_ms, "warmupCalls": calls, "fresh": fresh, "repeated": repeated, "checks": checks}))


if __name__ == "__main__":
    main()
