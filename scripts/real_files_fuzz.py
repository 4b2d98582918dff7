"""The reference's answers for `scripts/real-files-fuzz.js`: random texts on real model files.

`real-files-fuzz.js` checks the whole of batchtok (the JS calls, the routing between engines, both
engines) against the Python libraries its users know, on the real tokenizer.json files of
`scripts/real-tokenizers.js` and the OpenAI encodings, with texts nobody picked. This script makes
the texts and writes what Python `tokenizers` and `tiktoken` answer; the JS side asks batchtok the
same and compares.

The texts are slices of the four corpora (`node scripts/corpus.js corpora`: prose, code, the UDHR
in many languages, chat-sized items), cut at any character, with pieces pushed in where
tokenizers tend to part ways: runs of white space of every kind, digits of several scripts,
contractions, emoji sequences, combining marks, characters Unicode 17 adds, special-token text
of every file, control characters.

Run by `real-files-fuzz.js` (which says how to run it); by hand:
    scripts/.venv/bin/python scripts/real_files_fuzz.py --seed 1 --texts 2000 --out DIR
writes DIR/texts.json, and per file DIR/hf-<name>.json (ids with and without the template's
tokens, `decode` with and without special tokens of every seventh text's ids, model inputs under
random truncation and padding) and per encoding DIR/openai-<name>.json (`encode_ordinary`, and
`encode` with every special token allowed). With `--files FOLDER`, the tokenizer.json files there
instead of the real ones, and no encodings.
"""

import argparse
import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path

from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).parent))
import fixtures  # noqa: E402  (the verified tiktoken assets, as the fixtures load them)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / ".cache" / "corpus"
REAL = ROOT / ".cache" / "real-tokenizers"

# Pieces pushed into the texts: each a place where two tokenizers' rules tend to differ.
PIECES = [
    " ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", "  \n  ", " \t ", "\u00a0", "\u3000", "\u2028",
    "\u200b", "\u200d", "\ufeff", "\u0301", "\u0308\u0301", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "\U0001fac8",
    "\u20c1", "1234567", "٣٤٥", "१२३", "½", "²", "'s", "'S", "’s", "'ll", "'VE", "HELLOworld",
    "ÀÉÎ", "ǅ", "ﬁ", "Ⅻ", "𝕏", "...", "!!!", "—", "«»", "`", "\\", "/*", "=>", "::", "__init__",
    "https://example.com/a?b=c&d", "\x00", "\x1b[0m", "\u202e", "ـ", "ﷺ", "ㄱㅏ", "가각", "ก่",
    "क्षि", "中文字符", "かな", "カナ", "İ", "ı", "ς", "ß", "𓀀", "▁", "ＡＢＣ",
]
# Special-token text of the files and encodings, and look-alikes.
SPECIAL_TEXT = [
    "<s>", "</s>", "<unk>", "<pad>", "[CLS]", "<|endoftext|>", "<|im_start|>", "<|fim_prefix|>",
    "<|begin_of_text|>", "<|eot_id|>", "<start_of_turn>", "<｜begin▁of▁sentence｜>", "<|start|>",
    "<|message|>", "<|endoftext|", "x<s>y",
]
# Model-input settings drawn per file: maximum lengths and Python's strategy names. Cutting only
# one text of a pair is refused where the other alone is too long, so those draw longer maxima.
MAX_LENGTHS = {"longest_first": [9, 17, 40, 128], "only_first": [64, 128], "only_second": [64, 128]}


def corpus_items():
    items = []
    for name in ["prose", "code", "multilingual", "chat"]:
        path = CORPUS / f"{name}.jsonl"
        if not path.is_file():
            sys.exit(f"{path} is missing; run `node scripts/corpus.js corpora`")
        with open(path, encoding="utf-8") as f:
            items.append([json.loads(line) for line in f])
    return items


def make_text(rng, items, longest):
    text = rng.choice(rng.choice(items))
    if len(text) > longest:
        start = rng.randrange(len(text) - longest)
        text = text[start : start + rng.randrange(1, longest)]
    if rng.random() < 0.3:
        return text
    chars = list(text)
    for _ in range(rng.randrange(1, 8)):
        piece = rng.choice(PIECES if rng.random() < 0.8 else SPECIAL_TEXT)
        if rng.random() < 0.2:
            piece *= rng.randrange(2, 30)
        at = rng.randrange(len(chars) + 1)
        chars[at:at] = [piece]
    text = "".join(chars)
    if rng.random() < 0.1:
        start = rng.randrange(len(text) + 1)
        text = text[start : rng.randrange(start, len(text) + 1)]
    return text


def utf16_index(text, chars):
    """A character offset as a JS string counts it (UTF-16 code units)."""
    return len(text[:chars].encode("utf-16-le")) // 2


def model_inputs(path, rng, singles, pairs):
    """Rows of `encode_batch` under random truncation and padding, or the error it raises."""
    reference = Tokenizer.from_file(str(path))
    # An added token where the file has one, else the vocabulary's first (internlm2's has none).
    added = sorted(t.content for t in reference.get_added_tokens_decoder().values())
    pad = added[0] if added else reference.id_to_token(0)
    cases = []
    for _ in range(3):
        strategy = rng.choice(list(MAX_LENGTHS))
        settings = {
            "maxLength": rng.choice(MAX_LENGTHS[strategy]),
            "strategy": strategy,
            "truncationSide": rng.choice(["right", "left"]),
            "padSide": rng.choice(["right", "left"]),
            "padToken": pad,
        }
        for kind, inputs in [("singles", singles), ("pairs", pairs)]:
            tokenizer = Tokenizer.from_file(str(path))
            tokenizer.enable_padding(pad_id=tokenizer.token_to_id(pad), pad_token=pad, direction=settings["padSide"])
            tokenizer.enable_truncation(
                max_length=settings["maxLength"], strategy=settings["strategy"], direction=settings["truncationSide"]
            )
            case = {"kind": kind, **settings}
            try:
                encodings = tokenizer.encode_batch([tuple(i) if isinstance(i, list) else i for i in inputs])
            except Exception as error:  # the reference refuses the batch: batchtok must too
                case["error"] = str(error)
                cases.append(case)
                continue
            rows = []
            for item, encoding in zip(inputs, encodings):
                texts = item if isinstance(item, list) else [item]
                offsets = [
                    [0, 0] if sequence is None else [utf16_index(texts[sequence], a), utf16_index(texts[sequence], b)]
                    for sequence, (a, b) in zip(encoding.sequence_ids, encoding.offsets)
                ]
                rows.append(
                    {
                        "inputIds": encoding.ids,
                        "tokenTypeIds": encoding.type_ids,
                        "attentionMask": encoding.attention_mask,
                        "specialTokensMask": encoding.special_tokens_mask,
                        "offsets": offsets,
                    }
                )
            case["rows"] = rows
            cases.append(case)
    return cases


# encode_with_unstable runs on every this many texts: an end of white space has tens of thousands
# of completions, each encoded anew.
UNSTABLE_EVERY = 20


def unstable(encoding, text):
    """`encode_with_unstable(text)` with every special token allowed: the stable ids, and a SHA-256
    of the completions in ascending order as compact JSON (what JSON.stringify writes)."""
    stable, completions = encoding.encode_with_unstable(text, allowed_special="all", disallowed_special=())
    ordered = json.dumps(sorted(list(c) for c in completions), separators=(",", ":"))
    return {"stable": stable, "completions": hashlib.sha256(ordered.encode()).hexdigest()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--texts", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--files", type=Path, help="a folder of tokenizer.json files to check instead of the real ones")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    items = corpus_items()
    texts = [make_text(rng, items, 2000) for _ in range(args.texts)]
    # Model inputs run on shorter texts and fewer of them: a batch is refused whole when one of
    # its inputs cannot be truncated, and short texts keep most batches within reach.
    inputs = max(20, args.texts // 20)
    singles = [make_text(rng, items, 200) for _ in range(inputs)]
    pairs = [[make_text(rng, items, 120), make_text(rng, items, 120)] for _ in range(inputs)]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "texts.json").write_text(json.dumps({"texts": texts, "singles": singles, "pairs": pairs}))

    folder = args.files or REAL
    files = sorted(p for p in folder.glob("*.json") if not p.name.endswith(".tokenizer_config.json"))
    if not files:
        sys.exit(f"no tokenizer files in {folder}" + ("" if args.files else "; run `node scripts/real-tokenizers.js`"))
    for path in files:
        tokenizer = Tokenizer.from_file(str(path))
        with_template = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=True)]
        sampled = with_template[::7]
        answers = {
            "with": with_template,
            "without": [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)],
            "decode": tokenizer.decode_batch(sampled, skip_special_tokens=False),
            "decodeSkipping": tokenizer.decode_batch(sampled, skip_special_tokens=True),
            "modelInputs": model_inputs(path, rng, singles, pairs),
        }
        (args.out / f"hf-{path.stem}.json").write_text(json.dumps(answers))
    if args.files:
        return

    with tempfile.TemporaryDirectory(prefix="batchtok-fuzz-") as work:
        encodings, _ = fixtures.load_openai_encodings(fixtures.tiktoken_rs_assets(), Path(work))
    for name, encoding in encodings.items():
        answers = {
            "ordinary": encoding.encode_ordinary_batch(texts),
            "all": encoding.encode_batch(texts, allowed_special="all", disallowed_special=()),
            "unstable": [unstable(encoding, text) for text in texts[::UNSTABLE_EVERY]],
        }
        (args.out / f"openai-{name}.json").write_text(json.dumps(answers))


if __name__ == "__main__":
    main()
