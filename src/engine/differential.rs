//! The release candidate against the stable crate, input by input, over the fixture tokenizer.json
//! files: the fixture texts, the corpora, and seeded random texts built from the character classes
//! where engines tend to disagree. The routing in `routing.rs` must leave no disagreement.

use std::path::PathBuf;

use super::long_texts::Cuts;
use super::pipeline::PipelineEngine;
use super::stable::StableEngine;
use super::test_fixtures::corpus_texts;
use super::{Engine, Ids, Scratch, Tokenizer};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture_tokenizer(name: &str) -> String {
    std::fs::read_to_string(
        root()
            .join("__test__/fixtures/tokenizers")
            .join(format!("{name}.json")),
    )
    .unwrap()
}

/// A small seeded generator (xorshift64*), so a failure names a seed that reproduces it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Pieces random texts are made of: the classes where tokenizers differ most.
const PIECES: &[&str] = &[
    "hello",
    "World",
    "don't",
    "WE'LL",
    "naïve",
    "Ångström",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{2029}",
    "\u{200b}",
    "\u{feff}",
    "\u{1680}",
    "\u{2003}",
    "\u{85}",
    "\u{0}",
    "\u{1f}",
    "\u{7f}",
    "\u{9f}",
    "0",
    "12345",
    "3.14",
    "日本語",
    "中文字符",
    "한국어",
    "ไทย",
    "русский",
    "عربى",
    "עברית",
    "हिन्दी",
    "👨‍👩‍👧‍👦",
    "🇫🇷",
    "👍🏽",
    "1️⃣",
    "e\u{301}",
    "a\u{300}\u{301}\u{302}",
    "\u{378}",
    "\u{379}",
    "\u{530}",
    "\u{e000}",
    "\u{f8ff}",
    "\u{fffe}",
    "\u{ffff}",
    "\u{1fffe}",
    "\u{e0001}",
    "\u{10ffff}",
    // Regressions from the differential fuzz (FUZZING.md): characters of Unicode 16 and 17 the
    // engines' tables read differently, routed to the stable engine by `unicode_drift.rs`.
    "\u{a7d4}",
    "\u{1ccda}",
    "\u{1b4e}",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "<s>",
    "</s>",
    "<unk>",
    "<|endoftext|>",
    "<|second|>",
    "##",
    "▁",
    "Ġ",
    "!!!",
    "...",
    "—",
    "“quoted”",
    "ﬁ",
    "Ⅻ",
    "²",
];

fn random_text(rng: &mut Rng) -> String {
    let pieces = 1 + rng.below(12);
    (0..pieces)
        .map(|_| PIECES[rng.below(PIECES.len())])
        .collect()
}

/// The ids of `text` encoded on its own.
fn ids(engine: &dyn Engine, text: &str, add_special_tokens: bool) -> Vec<u32> {
    encode(
        engine,
        text,
        add_special_tokens,
        true,
        &mut Scratch::engine_pool(),
    )
    .unwrap()
}

/// The ids of `text`, or the engine's error in words.
fn encode<'e>(
    engine: &'e dyn Engine,
    text: &str,
    add_special_tokens: bool,
    split_special: bool,
    scratch: &mut Scratch<'e>,
) -> Result<Vec<u32>, String> {
    let mut out = Ids::default();
    engine
        .encode_into(text, add_special_tokens, split_special, scratch, &mut out)
        .map(|()| out.as_slice().to_vec())
        .map_err(|e| e.to_string())
}

/// Asserts that `routed` encodes each of `inputs` as `stable` does (the same ids, or the same
/// error) in the four ways a Hugging Face text is encoded: with and without template tokens, and
/// with special tokens' text split into their ids or encoded as text. Returns the encodings
/// checked.
fn assert_encodes_as(
    stable: &dyn Engine,
    routed: &Tokenizer,
    name: &str,
    inputs: &[String],
) -> usize {
    let mut scratch = Scratch::engine_pool();
    let mut checked = 0;
    for add_special_tokens in [true, false] {
        for split_special in [true, false] {
            let mode = routed
                .encode_mode(Some(add_special_tokens), &Default::default())
                .unwrap()
                .with_special_text_as_ordinary(!split_special);
            for text in inputs {
                let reference = encode(
                    stable,
                    text,
                    add_special_tokens,
                    split_special,
                    &mut scratch,
                );
                let ours = routed
                    .encode(text, &mode)
                    .map(|ids| ids.as_slice().to_vec())
                    .map_err(|e| e.to_string());
                assert_eq!(
                    ours, reference,
                    "{name}: add_special_tokens {add_special_tokens}, split_special \
                     {split_special}, text {text:?}"
                );
                checked += 1;
            }
        }
    }
    checked
}

/// Runs both engines, raw and routed, over every input; returns the inputs where the routed
/// tokenizer disagrees with the stable engine, and how many the raw engines disagreed on (none
/// where the release candidate reads only an equivalent form of the file).
fn disagreements(name: &str, json: &str) -> (Vec<String>, usize, usize) {
    let pipeline = PipelineEngine::from_json(json).ok();
    let stable = StableEngine::from_json(json).unwrap();
    let routed = Tokenizer::from_json(json, name).unwrap();
    routed.wait_until_ready().unwrap();
    let mode = routed.encode_mode(Some(true), &Default::default()).unwrap();
    let mut inputs = corpus_texts();
    let mut rng = Rng(0x5EED_0000 ^ name.len() as u64);
    inputs.extend((0..20_000).map(|_| random_text(&mut rng)));
    let mut raw = 0;
    let mut wrong = Vec::new();
    for text in &inputs {
        let reference = ids(&stable, text, true);
        if let Some(pipeline) = &pipeline
            && ids(pipeline, text, true) != reference
        {
            raw += 1;
        }
        if routed.encode(text, &mode).unwrap().as_slice() != reference.as_slice()
            && wrong.len() < 20
        {
            wrong.push(text.clone());
        }
    }
    (wrong, raw, inputs.len())
}

/// The unigram fixture with added tokens whose declared ids leave a gap, as OpenAI-style specials
/// do. Both engines number them densely from the vocabulary's end (the stable one too, so the
/// reference does), and must keep agreeing on it.
fn with_gapped_added_tokens() -> String {
    let mut json: serde_json::Value = serde_json::from_str(&fixture_tokenizer("unigram")).unwrap();
    let next = json["model"]["vocab"].as_array().unwrap().len() as u64;
    for (content, id) in [("<|first|>", next + 3), ("<|second|>", next + 40)] {
        json["added_tokens"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({
                "id": id, "content": content, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true,
            }));
    }
    json.to_string()
}

/// The unigram fixture (NFKC, then `Metaspace`) with the normalizers transformers' SentencePiece
/// converter writes after the character map: trailing spaces stripped, and each run of spaces
/// matching the regex `runs` made one word marker.
fn with_sentencepiece_normalizers(runs: &str) -> String {
    let mut json: serde_json::Value = serde_json::from_str(&fixture_tokenizer("unigram")).unwrap();
    json["normalizer"] = serde_json::json!({
        "type": "Sequence",
        "normalizers": [
            { "type": "NFKC" },
            { "type": "Strip", "strip_left": false, "strip_right": true },
            { "type": "Replace", "pattern": { "Regex": runs }, "content": "\u{2581}" },
        ],
    });
    json.to_string()
}

/// SentencePiece's normalizers with the `Metaspace` as the only member of a `Sequence`, as
/// transformers' DeBERTa-v2 converter writes it (`adapter.rs`).
fn with_lone_metaspace() -> String {
    let mut json: serde_json::Value =
        serde_json::from_str(&with_sentencepiece_normalizers(" {2,}")).unwrap();
    let metaspace = json["pre_tokenizer"].take();
    json["pre_tokenizer"] = serde_json::json!({ "type": "Sequence", "pretokenizers": [metaspace] });
    json.to_string()
}

/// The unigram fixture with its `Metaspace` prepending to the first piece only (transformers'
/// SentencePiece converters with `legacy: false`), behind `normalizer`, which can remove a text's
/// first characters (`leading_drop.rs`).
fn with_first_piece_metaspace(normalizer: serde_json::Value) -> String {
    let mut json: serde_json::Value = serde_json::from_str(&fixture_tokenizer("unigram")).unwrap();
    json["normalizer"] = normalizer;
    json["pre_tokenizer"]["prepend_scheme"] = "first".into();
    json["decoder"]["prepend_scheme"] = "first".into();
    json.to_string()
}

/// The GPT-2 fixture with an `end_of_word_suffix`, as GPT-1's and HerBERT's BPE models have: the
/// last character of each word is looked up with `</w>` after it.
fn with_end_of_word_suffix() -> String {
    let mut json: serde_json::Value = serde_json::from_str(&fixture_tokenizer("gpt2")).unwrap();
    json["model"]["end_of_word_suffix"] = "</w>".into();
    json.to_string()
}

#[test]
fn routed_tokenizers_agree_with_the_stable_reference() {
    let gapped = with_gapped_added_tokens();
    for (name, json) in [
        ("gpt2", fixture_tokenizer("gpt2")),
        ("bert", fixture_tokenizer("bert")),
        ("unigram", fixture_tokenizer("unigram")),
        ("unigram with gapped added tokens", gapped),
        (
            "unigram with SentencePiece's normalizers",
            with_sentencepiece_normalizers(" {2,}"),
        ),
        (
            "unigram collapsing runs of two to three spaces",
            with_sentencepiece_normalizers(" {2,3}"),
        ),
        (
            "unigram, its Metaspace in a Sequence",
            with_lone_metaspace(),
        ),
        ("sentencepiece", fixture_tokenizer("sentencepiece")),
        ("gpt2 with an end-of-word suffix", with_end_of_word_suffix()),
        (
            "unigram, a first-piece Metaspace behind a Strip",
            with_first_piece_metaspace(serde_json::json!({"type": "Sequence", "normalizers": [
                {"type": "Strip", "strip_left": true, "strip_right": true}, {"type": "NFKC"}]})),
        ),
        (
            "unigram, a first-piece Metaspace behind StripAccents",
            with_first_piece_metaspace(serde_json::json!({"type": "Sequence", "normalizers": [
                {"type": "NFD"}, {"type": "StripAccents"}]})),
        ),
    ] {
        let (wrong, raw, checked) = disagreements(name, &json);
        eprintln!(
            "{name}: {checked} inputs, {raw} raw disagreements, {} after routing",
            wrong.len()
        );
        assert!(
            wrong.is_empty(),
            "{name}: routed ids differ from the stable reference on {wrong:?}"
        );
    }
}

/// The BERT fixture with its truncation replaced by `truncation`.
fn bert_truncated(truncation: serde_json::Value) -> String {
    let mut json: serde_json::Value = serde_json::from_str(&fixture_tokenizer("bert")).unwrap();
    json["truncation"] = truncation;
    json.to_string()
}

/// A batch worker's path through the release candidate (its stages run with working memory the
/// worker holds) gives the ids, or the error, of the release candidate's own `encode_into`, for
/// every option a call can set, on files with and without normalizers, added tokens, template
/// tokens and truncation.
#[test]
fn the_worker_path_equals_the_release_candidates_own_encode() {
    let gapped = with_gapped_added_tokens();
    let truncation = |direction: &str, strategy: &str, max_length: u32| {
        bert_truncated(serde_json::json!({
            "direction": direction, "max_length": max_length, "strategy": strategy, "stride": 0,
        }))
    };
    let inputs = {
        let mut inputs = corpus_texts();
        let mut rng = Rng(0x5EED_1111);
        inputs.extend((0..5_000).map(|_| random_text(&mut rng)));
        inputs.extend(["[CLS] a [SEP]", "<|endoftext|>x", "<|first|><|second|>"].map(String::from));
        inputs
    };
    let files: Vec<(&str, PipelineEngine)> = [
        ("gpt2", fixture_tokenizer("gpt2")),
        ("bert", fixture_tokenizer("bert")),
        ("unigram", fixture_tokenizer("unigram")),
        ("unigram with gapped added tokens", gapped),
        ("sentencepiece", fixture_tokenizer("sentencepiece")),
        (
            "bert, no truncation",
            bert_truncated(serde_json::Value::Null),
        ),
        ("bert, truncated left", truncation("Left", "OnlyFirst", 7)),
        ("bert, only_second", truncation("Right", "OnlySecond", 9)),
        (
            "bert, no room beside [CLS] [SEP]",
            truncation("Right", "LongestFirst", 2),
        ),
    ]
    .into_iter()
    .map(|(name, json)| (name, PipelineEngine::from_json(&json).unwrap()))
    .collect();
    // The OpenAI encodings' engines have no added tokens and no normalizers: the plain path.
    let encodings = ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"]
        .map(|name| (name, Tokenizer::from_encoding(name).unwrap()));
    let engines = files
        .iter()
        .map(|(name, engine)| (*name, engine as &dyn Engine))
        .chain(
            encodings
                .iter()
                .map(|(name, tokenizer)| (*name, tokenizer.main_engine())),
        );
    for (name, engine) in engines {
        let mut worker = Scratch::new();
        let (mut equal, mut failed) = (0, 0);
        for text in &inputs {
            for (add_special_tokens, split_special) in
                [(true, true), (false, true), (true, false), (false, false)]
            {
                let own = encode(
                    engine,
                    text,
                    add_special_tokens,
                    split_special,
                    &mut Scratch::engine_pool(),
                );
                let worker_ids =
                    encode(engine, text, add_special_tokens, split_special, &mut worker);
                assert_eq!(
                    worker_ids, own,
                    "{name}: add_special_tokens {add_special_tokens}, split_special \
                     {split_special}, text {text:?}"
                );
                if own.is_ok() {
                    equal += 1;
                } else {
                    failed += 1;
                }
            }
        }
        // One lease for the whole run: two locks, however many texts.
        assert_eq!(worker.locks(), Some(2), "{name}");
        eprintln!("{name}: {equal} encodings equal, {failed} errors equal");
    }
}

/// The GPT-2 fixture's byte-level BPE vocabulary with its pre-tokenizer replaced by `Split`s of
/// `patterns` (each with its behavior and invert flag) followed by byte-level mapping: the shape of
/// Llama 3's, Qwen's and DeepSeek's files, and of fine-tuned models' own patterns.
fn byte_level_with_splits(patterns: &[(&str, &str, bool)]) -> String {
    let mut json: serde_json::Value = serde_json::from_str(&fixture_tokenizer("gpt2")).unwrap();
    let mut members: Vec<serde_json::Value> = patterns
        .iter()
        .map(|&(pattern, behavior, invert)| {
            serde_json::json!({
                "type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior,
                "invert": invert,
            })
        })
        .collect();
    members.push(serde_json::json!({
        "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false,
    }));
    json["pre_tokenizer"] = serde_json::json!({"type": "Sequence", "pretokenizers": members});
    json.to_string()
}

/// Llama 3's pattern (cl100k_base's, which the release candidate runs natively).
const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen's pattern: Llama 3's with single digits.
const QWEN_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// o200k_base's pattern.
const O200K_PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// DeepSeek V3's three patterns, which the release candidate runs as one native pass.
const DEEPSEEK_PATTERNS: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];

/// Pieces of patterns the generated ones are made of: classes, Unicode properties, CJK ranges,
/// lookarounds, counted repetition, case-insensitive groups and Oniguruma's own syntax.
const PATTERN_ATOMS: &[&str] = &[
    r"\s+",
    r"\w+",
    r"[^\s\w]+",
    r"\p{N}{1,3}",
    r"\p{L}+",
    r" ?\p{L}+",
    r"[\p{P}\p{S}]+",
    r"\p{Han}+",
    "[\u{4e00}-\u{9fa5}]+",
    "[\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    r"\s+(?!\S)",
    r"\d(?=\d)",
    r"(?<=\s)\p{Lu}",
    r"(?i:'s|'t|'re)",
    r"[A-Z][a-z]*",
    r"\d",
    r"[[:punct:]]+",
    r"\h+",
    r"[^\r\n\p{L}\p{N}]?\p{L}+",
    r".",
];

/// A test file: its name, and its Splits' patterns, behaviors and invert flags.
type SplitFile = (String, Vec<(String, &'static str, bool)>);

/// Every Split behavior, as the file spells it.
const BEHAVIORS: [&str; 5] = [
    "Isolated",
    "Removed",
    "MergedWithPrevious",
    "MergedWithNext",
    "Contiguous",
];

/// Texts for the pattern tests: the fixture texts, some corpus and seeded random texts.
fn pattern_inputs(seed: u64) -> Vec<String> {
    let texts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("__test__/fixtures/texts.json")).unwrap(),
    )
    .unwrap();
    let mut inputs: Vec<String> = texts["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| case["text"].as_str().unwrap().to_owned())
        .collect();
    if let Ok(text) = std::fs::read_to_string(root().join(".cache/corpus/big.txt")) {
        inputs.extend(text.split("\n\n").take(200).map(str::to_owned));
    }
    let mut rng = Rng(seed);
    inputs.extend((0..500).map(|_| random_text(&mut rng)));
    inputs
}

/// A Split pattern the release candidate does not run natively loads, says it goes to the
/// stable engine and why, and encodes every text with the reference's ids: generated patterns of
/// every behavior, inverted or not, on a byte-level BPE vocabulary. Patterns it runs natively stay
/// on it, with the same ids.
#[test]
fn split_patterns_encode_as_the_reference_on_either_engine() {
    let mut rng = Rng(0x5EED_2222);
    let mut files: Vec<SplitFile> = vec![
        (
            "generic".to_owned(),
            vec![(r"\s+|\w+|[^\s\w]+".to_owned(), "Isolated", false)],
        ),
        (
            "digit groups".to_owned(),
            vec![(r"\p{N}{1,3}".to_owned(), "Isolated", false)],
        ),
        (
            "CJK".to_owned(),
            vec![(DEEPSEEK_PATTERNS[1].to_owned(), "Isolated", false)],
        ),
        (
            "lookahead".to_owned(),
            vec![(r"\s+(?!\S)|\s+|\S+".to_owned(), "Isolated", false)],
        ),
    ];
    for n in 0..16 {
        let atoms = 1 + rng.below(4);
        let pattern = (0..atoms)
            .map(|_| PATTERN_ATOMS[rng.below(PATTERN_ATOMS.len())])
            .collect::<Vec<_>>()
            .join("|");
        let behavior = BEHAVIORS[rng.below(BEHAVIORS.len())];
        let invert = rng.below(4) == 0;
        files.push((format!("generated #{n}"), vec![(pattern, behavior, invert)]));
    }
    let native: Vec<SplitFile> = [
        ("Llama 3", LLAMA3_PATTERN),
        ("Qwen", QWEN_PATTERN),
        ("o200k", O200K_PATTERN),
    ]
    .iter()
    .map(|&(name, pattern)| {
        (
            name.to_owned(),
            vec![(pattern.to_owned(), "Isolated", false)],
        )
    })
    // The form tiktoken-converted files ship cl100k's pattern in: the release candidate rewrites it
    // to the native one, which cuts alike since the pattern leaves no gaps.
    .chain(std::iter::once((
        "Llama 3, inverted and removed".to_owned(),
        vec![(LLAMA3_PATTERN.to_owned(), "Removed", true)],
    )))
    .chain(std::iter::once((
        "DeepSeek V3".to_owned(),
        DEEPSEEK_PATTERNS
            .iter()
            .map(|&pattern| (pattern.to_owned(), "Isolated", false))
            .collect(),
    )))
    .collect();
    let inputs = pattern_inputs(0x5EED_3333);
    for (expect_native, (name, splits)) in native
        .iter()
        .map(|file| (true, file))
        .chain(files.iter().map(|file| (false, file)))
    {
        let splits: Vec<(&str, &str, bool)> = splits
            .iter()
            .map(|(pattern, behavior, invert)| (pattern.as_str(), *behavior, *invert))
            .collect();
        let json = byte_level_with_splits(&splits);
        let stable = StableEngine::from_json(&json).unwrap();
        let routed = Tokenizer::from_json(&json, name).unwrap();
        routed.wait_until_ready().unwrap();
        let routing = routed.routing();
        if expect_native {
            assert!(routing.starts_with("pipeline:"), "{name}: {routing}");
        } else {
            assert!(
                routing.contains("is not one of the patterns the release candidate runs natively"),
                "{name} {splits:?}: {routing}"
            );
            assert!(routed.stable_engine_built(), "{name}");
        }
        let mode = routed.encode_mode(Some(true), &Default::default()).unwrap();
        for text in &inputs {
            let reference = encode(&stable, text, true, true, &mut Scratch::engine_pool());
            let ours = routed
                .encode(text, &mode)
                .map(|ids| ids.as_slice().to_vec())
                .map_err(|e| e.to_string());
            assert_eq!(ours, reference, "{name} {splits:?}: text {text:?}");
        }
        eprintln!("{name}: {} texts agree; {routing}", inputs.len());
    }
}

/// A pattern that backtracks catastrophically fails with an error that says so, within
/// Oniguruma's retry limit, and the tokenizer goes on encoding other texts.
#[test]
fn a_catastrophic_pattern_fails_in_bounded_time_with_a_clear_error() {
    let json = byte_level_with_splits(&[(r"(a|b|ab)*bc", "Isolated", false)]);
    let tokenizer = Tokenizer::from_json(&json, "catastrophic").unwrap();
    tokenizer.wait_until_ready().unwrap();
    let mode = tokenizer
        .encode_mode(Some(true), &Default::default())
        .unwrap();
    let started = std::time::Instant::now();
    let error = tokenizer
        .encode(&format!("{}acbc", "ab".repeat(28)), &mode)
        .expect_err("the reference fails on this text too");
    assert!(error.message().contains("retry limit"), "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert!(tokenizer.encode("hello", &mode).is_ok());
}

/// The routing of every tokenizer.json at hand, and why: the fixtures, and the real model files
/// `node scripts/real-tokenizers.js` fetches (skipped, with a message, where they are absent).
/// A tokenizer the release candidate encodes loads without building the stable engine.
#[test]
fn each_file_is_routed_to_the_engine_that_encodes_it_exactly() {
    let expected: [(&str, Option<String>, &str); 19] = [
        ("gpt2", Some(fixture_tokenizer("gpt2")), "pipeline:"),
        ("bert", Some(fixture_tokenizer("bert")), "pipeline:"),
        ("unigram", Some(fixture_tokenizer("unigram")), "pipeline:"),
        (
            "sentencepiece",
            Some(fixture_tokenizer("sentencepiece")),
            "pipeline:",
        ),
        // A regex `Replace` of literals the two regex engines read alike, and one they may not.
        (
            "unigram, SentencePiece's normalizers",
            Some(with_sentencepiece_normalizers(" {2,}")),
            "pipeline:",
        ),
        (
            "unigram, white space collapsed by a class",
            Some(with_sentencepiece_normalizers("\\s{2,}")),
            "stable: tokenizers 0.23 encodes every text, because the 1.0 release candidate cannot \
             run it exactly (its Replace normalizer's pattern",
        ),
        (
            "gpt2 with an end-of-word suffix",
            Some(with_end_of_word_suffix()),
            "stable: tokenizers 0.23 encodes every text, because the 1.0 release candidate cannot \
             run it exactly (its BPE model's end_of_word_suffix \"</w>\"",
        ),
        (
            "unigram, its Metaspace in a Sequence",
            Some(with_lone_metaspace()),
            "pipeline: tokenizers 1.0.0-rc.3 encodes every text, reading an equivalent form",
        ),
        ("llama3", real_tokenizer("llama3"), "pipeline:"),
        ("llama3_1", real_tokenizer("llama3_1"), "pipeline:"),
        ("qwen3", real_tokenizer("qwen3"), "pipeline:"),
        ("deepseek_v3", real_tokenizer("deepseek_v3"), "pipeline:"),
        ("gemma3", real_tokenizer("gemma3"), "pipeline:"),
        ("llama2", real_tokenizer("llama2"), "pipeline:"),
        ("gptoss", real_tokenizer("gptoss"), "pipeline:"),
        ("gpt4o", real_tokenizer("gpt4o"), "pipeline:"),
        ("gpt35turbo", real_tokenizer("gpt35turbo"), "pipeline:"),
        ("claude", real_tokenizer("claude"), "pipeline:"),
        // Byte fallback without `<0x09>`, read in an equivalent form (`adapter.rs`).
        (
            "gemini",
            real_tokenizer("gemini"),
            "pipeline: tokenizers 1.0.0-rc.3 encodes every text, reading an equivalent form",
        ),
    ];
    for (name, json, route) in expected {
        let Some(json) = json else {
            eprintln!("{name}: skipped; `node scripts/real-tokenizers.js` fetches it");
            continue;
        };
        let tokenizer = Tokenizer::from_json(&json, name).unwrap();
        let texts = ["plain text", " \u{1f8d1} new in Unicode 17", "\u{20c1}100"];
        let mode = tokenizer
            .encode_mode(Some(true), &Default::default())
            .unwrap();
        // Encoded at once, on whichever engine is built by then (the stable engine while the
        // release candidate is being built).
        let early: Vec<Vec<u32>> = texts
            .iter()
            .map(|text| tokenizer.encode(text, &mode).unwrap().as_slice().to_vec())
            .collect();
        assert!(tokenizer.stable_engine_built(), "{name}");
        tokenizer.wait_until_ready().unwrap();
        let routing = tokenizer.routing();
        eprintln!("{name}: {routing}");
        assert!(routing.starts_with(route), "{name}: {routing}");
        // The ready tokenizer sends a text the release candidate reads otherwise than the
        // reference (characters new in Unicode 17) to the stable engine.
        let stable = StableEngine::from_json(&json).unwrap();
        for (text, early) in texts.iter().zip(early) {
            let reference = ids(&stable, text, true);
            assert_eq!(
                early,
                reference.as_slice(),
                "{name}: {text:?} before the build"
            );
            assert_eq!(
                tokenizer.encode(text, &mode).unwrap().as_slice(),
                reference.as_slice(),
                "{name}: {text:?}"
            );
        }
    }
}

/// A tokenizer encodes from the moment it is loaded, on the stable engine until the release
/// candidate is built, and a text gets the same ids before and after the build: the texts of the
/// fixture, encoded while a thread keeps encoding them across the build, all equal the ids the
/// ready tokenizer gives.
#[test]
fn a_text_gets_the_same_ids_before_and_after_the_release_candidate_is_built() {
    let texts = super::test_fixtures::fixture_texts();
    for name in ["gpt2", "bert", "unigram"] {
        let path = root()
            .join("__test__/fixtures/tokenizers")
            .join(format!("{name}.json"));
        let tokenizer = Tokenizer::from_file(&path).unwrap();
        let mode = tokenizer
            .encode_mode(Some(true), &Default::default())
            .unwrap();
        let encode_all = || -> Vec<Vec<u32>> {
            texts
                .iter()
                .map(|text| tokenizer.encode(text, &mode).unwrap().as_slice().to_vec())
                .collect()
        };
        let mut rounds = Vec::new();
        let (mut before, mut after) = (0, 0);
        // Rounds run until a round starts on a ready tokenizer.
        loop {
            let ready_at_start = tokenizer.is_ready();
            rounds.push(encode_all());
            if ready_at_start {
                after += 1;
                break;
            }
            before += 1;
        }
        assert!(tokenizer.routing().starts_with("pipeline:"), "{name}");
        let ready = encode_all();
        for (round, ids) in rounds.iter().enumerate() {
            assert_eq!(ids, &ready, "{name}: round {round}");
        }
        eprintln!("{name}: {before} rounds began before the build was done, {after} after");
    }
}

/// A real model's tokenizer.json from `.cache/real-tokenizers/`, if it has been fetched.
fn real_tokenizer(name: &str) -> Option<String> {
    std::fs::read_to_string(
        root()
            .join(".cache/real-tokenizers")
            .join(format!("{name}.json")),
    )
    .ok()
}

/// The tokenizers the Unicode probes run on: one per pattern class the release candidate runs
/// natively, and the fixtures' normalizers and pre-tokenizers.
fn unicode_probe_tokenizers() -> Vec<(&'static str, String)> {
    vec![
        (
            "DeepSeek V3 patterns",
            byte_level_with_splits(&DEEPSEEK_PATTERNS.map(|p| (p, "Isolated", false))),
        ),
        (
            "Llama 3 pattern",
            byte_level_with_splits(&[(LLAMA3_PATTERN, "Isolated", false)]),
        ),
        (
            "Qwen pattern",
            byte_level_with_splits(&[(QWEN_PATTERN, "Isolated", false)]),
        ),
        (
            "o200k pattern",
            byte_level_with_splits(&[(O200K_PATTERN, "Isolated", false)]),
        ),
        ("gpt2", fixture_tokenizer("gpt2")),
        ("bert", fixture_tokenizer("bert")),
        ("unigram", fixture_tokenizer("unigram")),
    ]
}

/// The contexts in which a character's class decides a cut: after a space, after a letter,
/// before a digit, beside itself.
fn probe_contexts(c: char) -> [String; 4] {
    [
        format!(" {c}"),
        format!("a{c}"),
        format!("{c}1"),
        format!("{c}{c}"),
    ]
}

/// Every code point Unicode 17 assigns and the reference's Unicode 16 does not, in each probe
/// context, encodes as the stable crate (the reference's code) encodes it, on every pattern class.
#[test]
fn unicode_probe_code_points_new_in_17_encode_as_the_reference() {
    let new_in_17 = super::unicode_drift::new_in_17_code_points();
    assert!(new_in_17.len() > 4000, "{}", new_in_17.len());
    for (name, json) in unicode_probe_tokenizers() {
        let stable = StableEngine::from_json(&json).unwrap();
        let routed = Tokenizer::from_json(&json, name).unwrap();
        routed.wait_until_ready().unwrap();
        let mode = routed.encode_mode(Some(true), &Default::default()).unwrap();
        let mut wrong = Vec::new();
        for &c in &new_in_17 {
            for text in probe_contexts(c) {
                if routed.encode(&text, &mode).unwrap().as_slice() != ids(&stable, &text, true) {
                    wrong.push(text);
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{name}: {} differ, first {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(10)]
        );
    }
}

/// The GPT-2 fixture with `normalizer` and `pre_tokenizer` in place of its own.
fn gpt2_with(normalizer: serde_json::Value, pre_tokenizer: serde_json::Value) -> String {
    let gpt2 = serde_json::from_str(&fixture_tokenizer("gpt2")).unwrap();
    with_components(gpt2, normalizer, pre_tokenizer)
}

/// The contexts a symbol is tried in: those of [`probe_contexts`], and beside a word, an
/// apostrophe, a line break, punctuation, an older emoji and a capital letter.
fn symbol_contexts(c: char) -> Vec<String> {
    let mut contexts = probe_contexts(c).to_vec();
    contexts.extend([
        format!("{c} a"),
        format!("'{c}"),
        format!("{c}\n"),
        format!("{c}."),
        format!("\u{1f600}{c}"),
        format!("A{c}b"),
    ]);
    contexts
}

/// Every symbol Unicode 17 adds, in every context, is encoded by the release candidate alone
/// (no routing) as the stable crate encodes it, on each tokenizer that `unicode_drift::symbols`
/// finds reading symbols as unassigned code points: the fixtures' normalizers and
/// pre-tokenizers (a SentencePiece table among them), the native patterns, `\w`, punctuation,
/// digits, NFKC and case. DeepSeek V3's patterns, which name `\p{S}`, are found telling them
/// apart, and they do.
#[test]
fn unicode_probe_new_symbols_read_alike() {
    use super::unicode_drift::symbols::file_tells_apart;
    let symbols = super::unicode_drift::new_symbols_in_17();
    let null = serde_json::Value::Null;
    let mut tokenizers = unicode_probe_tokenizers();
    tokenizers.extend([
        ("sentencepiece", fixture_tokenizer("sentencepiece")),
        (
            "Whitespace",
            gpt2_with(null.clone(), serde_json::json!({"type": "Whitespace"})),
        ),
        (
            "Punctuation and Digits",
            gpt2_with(
                null.clone(),
                serde_json::json!({"type": "Sequence", "pretokenizers": [
                    {"type": "Punctuation", "behavior": "Isolated"},
                    {"type": "Digits", "individual_digits": true},
                    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
                ]}),
            ),
        ),
        (
            "NFKC and Lowercase",
            gpt2_with(
                serde_json::json!({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}),
                serde_json::json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}),
            ),
        ),
    ]);
    for (name, json) in tokenizers {
        let tells_apart = file_tells_apart(&serde_json::from_str(&json).unwrap());
        assert_eq!(tells_apart, name.starts_with("DeepSeek"), "{name}");
        let stable = StableEngine::from_json(&json).unwrap();
        let pipeline = PipelineEngine::from_json(&json).unwrap();
        let wrong: Vec<String> = symbols
            .iter()
            .flat_map(|&c| symbol_contexts(c))
            .filter(|text| ids(&pipeline, text, true) != ids(&stable, text, true))
            .collect();
        if tells_apart {
            assert!(!wrong.is_empty(), "{name}: no symbol read otherwise");
        } else {
            assert!(
                wrong.is_empty(),
                "{name}: {} differ, first {:?}",
                wrong.len(),
                &wrong[..wrong.len().min(10)]
            );
        }
    }
}

/// The code points the reference's Unicode leaves unassigned (`\p{Cn}` to Oniguruma 6.9.10, the
/// stable crate's and Python's regex engine) in planes 0 to 3 and 14, and a sample of planes 4 to
/// 13, which are unassigned throughout.
fn unassigned_to_the_reference() -> Vec<char> {
    use tokenizers_stable::pre_tokenizers::split::{Split, SplitPattern};
    use tokenizers_stable::{OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer};
    let planes = (0..0x40000u32)
        .chain((0x40000..0xE0000).step_by(251))
        .chain(0xE0000..0xF0000);
    let all: String = planes.filter_map(char::from_u32).collect();
    // Inverted and removed: what is left are the runs the pattern matches.
    let split = Split::new(
        SplitPattern::Regex(r"\p{Cn}".to_owned()),
        tokenizers_stable::SplitDelimiterBehavior::Removed,
        true,
    )
    .unwrap();
    let mut pretokenized = PreTokenizedString::from(all.as_str());
    split.pre_tokenize(&mut pretokenized).unwrap();
    pretokenized
        .get_splits(OffsetReferential::Original, OffsetType::Byte)
        .into_iter()
        .flat_map(|(run, _, _)| run.chars().collect::<Vec<_>>())
        .collect()
}

/// The other side of the rule: on every code point the reference's Unicode leaves unassigned and
/// the routing table does not hold, the release candidate alone already gives the reference's ids,
/// so no character new in Unicode 17 (or later) is missing from the table.
#[test]
fn unicode_probe_the_release_candidate_agrees_on_every_other_unassigned_code_point() {
    let unassigned = unassigned_to_the_reference();
    let new_in_17 = super::unicode_drift::new_in_17_code_points();
    assert!(
        new_in_17
            .iter()
            .all(|c| unassigned.binary_search(c).is_ok())
    );
    let unrouted: Vec<char> = unassigned
        .into_iter()
        .filter(|&c| !super::unicode_drift::contains_drift(&c.to_string(), true))
        .collect();
    eprintln!(
        "{} unassigned code points outside the routing table",
        unrouted.len()
    );
    for (name, json) in unicode_probe_tokenizers() {
        let stable = StableEngine::from_json(&json).unwrap();
        let pipeline = PipelineEngine::from_json(&json).unwrap();
        let mut wrong = Vec::new();
        for &c in &unrouted {
            for text in probe_contexts(c) {
                if ids(&pipeline, &text, true) != ids(&stable, &text, true) {
                    wrong.push(text);
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{name}: {} differ, first {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(10)]
        );
    }
}

/// Adds `e▁` to a `byte_fallback_bpe` file's vocabulary and a merge of `e` with a following `▁`,
/// so that its model merges across a marker after an `e`.
fn merge_across_a_marker(file: &mut serde_json::Value) {
    let next = file["model"]["vocab"].as_object().unwrap().len();
    file["model"]["vocab"]["e▁"] = serde_json::json!(next);
    file["model"]["merges"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!("e ▁"));
}

/// `file` with its spaces written by a `Metaspace` pre-tokenizer in `prepend_scheme`, split at
/// its markers or not, and no normalizer: the shape transformers gives a SentencePiece model it
/// converts without the legacy normalizer (`"first"`, not split).
fn with_metaspace(file: serde_json::Value, prepend_scheme: &str, split: bool) -> String {
    let metaspace = serde_json::json!({
        "type": "Metaspace", "replacement": "▁", "prepend_scheme": prepend_scheme, "split": split,
    });
    with_components(file, serde_json::Value::Null, metaspace)
}

/// `file` with `normalizer` and `pre_tokenizer` in place of its own.
fn with_components(
    mut file: serde_json::Value,
    normalizer: serde_json::Value,
    pre_tokenizer: serde_json::Value,
) -> String {
    file["normalizer"] = normalizer;
    file["pre_tokenizer"] = pre_tokenizer;
    file.to_string()
}

/// `file` with a truncation section that keeps a text's first `max_length` tokens.
fn with_truncation(mut file: serde_json::Value, max_length: usize) -> String {
    file["truncation"] = serde_json::json!({"direction": "Right", "max_length": max_length,
        "strategy": "LongestFirst", "stride": 0});
    file.to_string()
}

/// A SentencePiece-style BPE (Llama 2's shape: `▁` for spaces, a space prepended, byte fallback)
/// over a small vocabulary: the letters, `▁`, the tab and the line feed, a few merges, and the
/// byte tokens `<0x00>` to `<0xFF>` except `missing`. `with_controls` puts the tab and the line
/// feed in the vocabulary.
fn byte_fallback_bpe(missing: &[u8], with_controls: bool) -> String {
    let mut vocab = serde_json::Map::new();
    let mut add = |token: String| {
        let id = vocab.len();
        vocab.entry(token).or_insert(serde_json::json!(id));
    };
    for special in ["<unk>", "<s>", "</s>"] {
        add(special.to_owned());
    }
    for byte in (0..=u8::MAX).filter(|byte| !missing.contains(byte)) {
        add(format!("<0x{byte:02X}>"));
    }
    for c in ('a'..='z').chain(['▁', 'é']) {
        add(c.to_string());
    }
    if with_controls {
        add("\t".to_owned());
        add("\n".to_owned());
    }
    let merges = [
        "▁ t", "h e", "▁t he", "i n", "▁ a", "a n", "▁a n", "▁an d", "e r", "o n",
    ];
    for merge in merges {
        add(merge.replace(' ', ""));
    }
    serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [
            {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false,
             "normalized": false, "special": true},
            {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false,
             "normalized": false, "special": true},
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ]},
        "pre_tokenizer": null,
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": null,
        "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>",
            "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": true,
            "byte_fallback": true, "ignore_merges": false, "vocab": vocab, "merges": merges},
    })
    .to_string()
}

/// GPT-2's fixture with `add_prefix_space` on its `ByteLevel` pre-tokenizer (RoBERTa's shape), its
/// added token matched in the text as written or (`normalized`) in the normalized text; with
/// `lowercase`, a normalizer lowercases first.
fn gpt2_with_prefix_space(normalized: bool, lowercase: bool) -> String {
    let mut json: serde_json::Value = serde_json::from_str(&fixture_tokenizer("gpt2")).unwrap();
    json["pre_tokenizer"]["add_prefix_space"] = serde_json::Value::Bool(true);
    json["added_tokens"][0]["normalized"] = serde_json::Value::Bool(normalized);
    if lowercase {
        json["normalizer"] = serde_json::json!({"type": "Sequence", "normalizers": [
            {"type": "NFC"}, {"type": "Lowercase"},
        ]});
    }
    json.to_string()
}

/// Texts that start with and without spaces, around added tokens, or are empty: where a prefix
/// space is or is not added.
fn prefix_space_inputs(rng: &mut Rng) -> Vec<String> {
    let mut inputs: Vec<String> = [
        "",
        " ",
        "  ",
        "a",
        " a",
        "\ta",
        "<|endoftext|>",
        "<|endoftext|>a",
    ]
    .map(str::to_owned)
    .to_vec();
    inputs.extend(
        [
            "a<|endoftext|> b",
            "<s>x</s>",
            "\t\ta",
            "\u{a0}a",
            "12345 678",
        ]
        .map(str::to_owned),
    );
    for _ in 0..2000 {
        let text = random_text(rng);
        inputs.push(format!(" {text}"));
        inputs.push(format!("<|endoftext|>{text}<|endoftext|> {text}"));
    }
    inputs
}

/// Files the release candidate refuses as written and reads in an equivalent form
/// (`adapter.rs`): they load on the fast engine, without the stable one, and every input gives the
/// stable reference's ids, with and without template tokens, splitting added tokens or not.
#[test]
fn rewritten_files_encode_as_the_reference() {
    let mut files = vec![
        (
            "byte fallback lacking <0x09> and <0x0A>",
            byte_fallback_bpe(&[9, 10], true),
        ),
        (
            "gpt2 with add_prefix_space",
            gpt2_with_prefix_space(false, false),
        ),
        (
            "gpt2 with add_prefix_space and a normalizer",
            gpt2_with_prefix_space(false, true),
        ),
    ];
    if let Some(gemini) = real_tokenizer("gemini") {
        files.push(("gemini", gemini));
    } else {
        eprintln!("gemini: skipped; `node scripts/real-tokenizers.js` fetches it");
    }
    for (name, json) in files {
        let stable = StableEngine::from_json(&json).unwrap();
        let routed = Tokenizer::from_json(&json, name).unwrap();
        routed.wait_until_ready().unwrap();
        let routing = routed.routing();
        assert!(
            routing.starts_with("pipeline:") && routing.contains("equivalent form"),
            "{name}: {routing}"
        );
        let mut inputs = corpus_texts();
        let mut rng = Rng(0x5EED_ADA9 ^ name.len() as u64);
        inputs.extend((0..20_000).map(|_| random_text(&mut rng)));
        inputs.extend(prefix_space_inputs(&mut rng));
        let checked = assert_encodes_as(&stable, &routed, name, &inputs);
        eprintln!("{name}: {checked} encodings equal; {routing}");
    }
}

/// SentencePiece-style files, whose pre-tokens the engine cuts before each word marker
/// (`marker_cuts.rs`, normalizing them in the same pass and finding added tokens with its own
/// search where the file allows), give the stable reference's ids in all four encode modes, on
/// texts with the file's own added tokens among them; a file with a merge across a marker (`e▁`:
/// not cut after an `e`) included.
#[test]
fn marker_cut_files_encode_as_the_reference() {
    let crossing = {
        let mut file: serde_json::Value =
            serde_json::from_str(&byte_fallback_bpe(&[], true)).unwrap();
        merge_across_a_marker(&mut file);
        file.to_string()
    };
    // A normalizer before the spaces-to-markers pair keeps the engine's own normalization and
    // cuts (the engine then cuts what the release candidate normalized).
    let normalized_first = {
        let mut file: serde_json::Value =
            serde_json::from_str(&byte_fallback_bpe(&[], true)).unwrap();
        file["normalizer"]["normalizers"]
            .as_array_mut()
            .unwrap()
            .insert(0, serde_json::json!({"type": "NFC"}));
        file.to_string()
    };
    // For each file: whether the release candidate's reader takes it as it is, and then whether
    // the engine normalizes and cuts in one pass (Gemini's is read through the adapter).
    let mut files = vec![
        (
            "byte fallback BPE",
            byte_fallback_bpe(&[], true),
            Some(true),
        ),
        // No token holds a tab or a line feed: both are cut off on either side.
        (
            "byte fallback BPE without control tokens",
            byte_fallback_bpe(&[], false),
            Some(true),
        ),
        ("a merge across a marker", crossing, Some(true)),
        (
            "normalized before the markers",
            normalized_first,
            Some(false),
        ),
    ];
    for name in ["llama2", "gemma3", "gemini"] {
        match real_tokenizer(name) {
            Some(json) => files.push((name, json, (name != "gemini").then_some(true))),
            None => eprintln!("{name}: skipped; `node scripts/real-tokenizers.js` fetches it"),
        }
    }
    for (name, json, marks_spaces) in files {
        if let Some(marks_spaces) = marks_spaces {
            let pipeline = PipelineEngine::from_json(&json).unwrap();
            assert!(pipeline.cuts_before_word_markers(), "{name}");
            assert_eq!(pipeline.marks_spaces_itself(), marks_spaces, "{name}");
            assert_eq!(
                pipeline.searches_added_tokens_itself(),
                marks_spaces,
                "{name}"
            );
        }
        let stable = StableEngine::from_json(&json).unwrap();
        let routed = Tokenizer::from_json(&json, name).unwrap();
        routed.wait_until_ready().unwrap();
        assert!(routed.routing().starts_with("pipeline:"), "{name}");
        let mut inputs = corpus_texts();
        let mut rng = Rng(0x5EED_C075 ^ name.len() as u64);
        inputs.extend((0..20_000).map(|_| random_text(&mut rng)));
        // The file's own added tokens among ordinary text: runs of line feeds and tabs, markup,
        // special tokens, and tokens that start another.
        let file: serde_json::Value = serde_json::from_str(&json).unwrap();
        let added: Vec<&str> = file["added_tokens"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|token| token["content"].as_str())
            .collect();
        inputs.extend((0..5_000).map(|_| {
            (0..1 + rng.below(10))
                .map(|_| match rng.below(3) {
                    0 => added[rng.below(added.len())],
                    _ => PIECES[rng.below(PIECES.len())],
                })
                .collect::<String>()
        }));
        assert_encodes_as(&stable, &routed, name, &inputs);
        eprintln!("{name}: {} texts equal, four ways", inputs.len());
    }
}

/// SentencePiece-style files that write each space as `▁` (Gemma's shape; Llama 2's, which also
/// puts one before each text; a `Metaspace` pre-tokenizer's in every prepend scheme) are cut at
/// a space after a letter no token joins to a `▁`
/// (`long_texts.rs`): their parts, encoded one after the other without template tokens, give the
/// stable reference's ids of the whole text; a file with a merge across a marker after `e` is
/// never cut after an `e`; Llama 2's shape drops the space at each cut and gives a reader none.
#[test]
fn files_that_write_spaces_as_markers_are_cut_at_spaces() {
    let without_prepend = |file: &str| {
        let mut file: serde_json::Value = serde_json::from_str(file).unwrap();
        file["normalizer"]["normalizers"]
            .as_array_mut()
            .unwrap()
            .retain(|normalizer| normalizer["type"] != "Prepend");
        file
    };
    let plain = without_prepend(&byte_fallback_bpe(&[], true));
    let mut crossing = plain.clone();
    merge_across_a_marker(&mut crossing);
    // Gemma's spelling: the replacement alone, a split on a space that never matches.
    let mut gemma_like = plain.clone();
    gemma_like["normalizer"] = gemma_like["normalizer"]["normalizers"][0].clone();
    gemma_like["pre_tokenizer"] = serde_json::json!({
        "type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
        "invert": false,
    });
    // Llama 2's: a `▁` prepended to each text, and an added token beginning with a letter.
    let mut llama2_like: serde_json::Value =
        serde_json::from_str(&byte_fallback_bpe(&[], true)).unwrap();
    llama2_like["added_tokens"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!(
        {"id": 500, "content": "the</s>", "single_word": false, "lstrip": false,
         "rstrip": false, "normalized": false, "special": false}));
    // Each file: its name, its text, the letter a token joins to a `▁`, whether it prepends one.
    let mut files = vec![
        ("byte fallback BPE", plain.to_string(), None, false),
        (
            "a merge across a marker",
            crossing.to_string(),
            Some('e'),
            false,
        ),
        ("Gemma's spelling", gemma_like.to_string(), None, false),
        ("llama2-like", llama2_like.to_string(), None, true),
    ];
    // The pre-tokenizer's spelling (`Metaspace`, no normalizer, not split at its markers: one that
    // splits is cut after any letter, `files_that_split_at_spaces_are_cut_at_spaces`), in each
    // prepend scheme; with the merge across a marker after `e`.
    for (name, scheme) in [
        ("Metaspace, always", "always"),
        ("Metaspace, first", "first"),
        ("Metaspace, never", "never"),
    ] {
        let metaspace = with_metaspace(crossing.clone(), scheme, false);
        files.push((name, metaspace, Some('e'), false));
    }
    for (name, prepends) in [("gemma3", false), ("gemini", false), ("llama2", true)] {
        match real_tokenizer(name) {
            Some(json) => files.push((name, json, None, prepends)),
            None => eprintln!("{name}: skipped; `node scripts/real-tokenizers.js` fetches it"),
        }
    }
    // Llama 2's file as transformers converts its SentencePiece model without the legacy
    // normalizer.
    if let Some(json) = real_tokenizer("llama2") {
        let file = with_metaspace(serde_json::from_str(&json).unwrap(), "first", false);
        files.push(("llama2, Metaspace", file, None, false));
    }
    let mut inputs: Vec<String> = corpus_texts().into_iter().step_by(3).collect();
    inputs.extend(
        [
            "the tree",
            "see the tree  here",
            "e e",
            "x e\te",
            "a  b",
            "café au lait",
            "a b ",
            "a <s>b c </s> d <unk>",
            "see the</s> here",
        ]
        .map(str::to_owned),
    );
    for (name, json, joined, prepends) in files {
        let routed = assert_cut_parts_encode_as_the_whole(name, &json, &inputs, |text, parts| {
            // Each part after the first begins at a space, or after it where the file
            // prepends a `▁`, and not after a letter a token joins to a `▁`.
            let mut rest = text;
            for pair in parts.windows(2) {
                rest = &rest[pair[0].len()..];
                assert!(rest.starts_with(' '), "{name}: {parts:?}");
                assert_ne!(pair[0].chars().next_back(), joined, "{name}: {parts:?}");
                if prepends {
                    rest = &rest[1..];
                    assert!(
                        !pair[1].starts_with('<') && !pair[1].is_empty(),
                        "{name}: {parts:?}"
                    );
                }
                assert!(rest.starts_with(pair[1]), "{name}: {parts:?}");
            }
        });
        assert!(routed.cuts(true).is_none(), "{name}: its template adds <s>");
        // A reader's parts are the text cut in two, which a file that prepends a `▁` is not: it
        // is cut for a reader that encodes the part from the cut without its space.
        assert_eq!(
            routed.last_safe_cut(b"a b", 0, false, false).is_some(),
            !prepends,
            "{name}"
        );
        assert_eq!(routed.last_safe_cut(b"a b", 0, false, true), Some(1));
    }
    // A token that begins with a space would lose it after a cut; one matched in the normalized
    // text, or that takes the space before it, would see another one.
    for (content, normalized, lstrip) in [
        (" the", false, false),
        ("the", true, false),
        ("the", false, true),
    ] {
        let mut file: serde_json::Value =
            serde_json::from_str(&byte_fallback_bpe(&[], true)).unwrap();
        let token = serde_json::json!({"id": 500, "content": content, "single_word": false,
            "lstrip": lstrip, "rstrip": false, "normalized": normalized, "special": false});
        file["added_tokens"]
            .as_array_mut()
            .unwrap()
            .push(token.clone());
        let tokenizer = Tokenizer::from_json(&file.to_string(), "prepend").unwrap();
        assert!(tokenizer.cuts(false).is_none(), "{token}");
    }
}

/// Files whose pre-tokenizer splits a text at every space into pieces its model encodes alone
/// (BERT's, `Whitespace`, `WhitespaceSplit`, a `Metaspace` that splits), behind normalizers that
/// read a character at a time, are cut at a space after any letter: their parts, encoded one
/// after the other without template tokens, give the stable reference's ids of the whole text,
/// WordPiece, Unigram and BPE alike, and a long text encoded whole (cut inside) too. BERT's
/// fixture is cut only without its truncation.
#[test]
fn files_that_split_at_spaces_are_cut_at_spaces() {
    let bert: serde_json::Value = serde_json::from_str(&fixture_tokenizer("bert")).unwrap();
    assert!(
        Tokenizer::from_json(&bert.to_string(), "bert")
            .unwrap()
            .cuts(false)
            .is_none(),
        "its truncation reads across a cut"
    );
    let mut untruncated = bert;
    untruncated["truncation"] = serde_json::Value::Null;
    // BERT's file with another normalizer and pre-tokenizer.
    let bert_with =
        |normalizer, pre_tokenizer| with_components(untruncated.clone(), normalizer, pre_tokenizer);
    let mut crossing: serde_json::Value =
        serde_json::from_str(&byte_fallback_bpe(&[], true)).unwrap();
    merge_across_a_marker(&mut crossing);
    let sentencepiece: serde_json::Value =
        serde_json::from_str(&fixture_tokenizer("sentencepiece")).unwrap();
    let sentencepiece_with = |normalizer, pre_tokenizer| {
        with_components(sentencepiece.clone(), normalizer, pre_tokenizer)
    };
    let files = [
        ("BERT's", untruncated.to_string()),
        (
            "BERT's normalizer stripping accents, not lowercasing",
            bert_with(
                serde_json::json!({"type": "BertNormalizer", "clean_text": true,
                    "handle_chinese_chars": true, "strip_accents": true, "lowercase": false}),
                serde_json::json!({"type": "BertPreTokenizer"}),
            ),
        ),
        (
            "NFD, accents stripped, lowercased; `Whitespace`",
            bert_with(
                serde_json::json!({"type": "Sequence", "normalizers": [
                    {"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]}),
                serde_json::json!({"type": "Whitespace"}),
            ),
        ),
        (
            "NFKC; `WhitespaceSplit`",
            bert_with(
                serde_json::json!({"type": "NFKC"}),
                serde_json::json!({"type": "WhitespaceSplit"}),
            ),
        ),
        (
            "the Unigram fixture (NFKC, a Metaspace that splits)",
            fixture_tokenizer("unigram"),
        ),
        (
            "a BPE with a merge across a marker, a Metaspace that splits",
            with_metaspace(crossing, "first", true),
        ),
        (
            "the SentencePiece fixture (XLM-RoBERTa's conversion: a character map, the end \
             stripped, runs of spaces as a `▁`; a Metaspace that splits)",
            sentencepiece.to_string(),
        ),
        (
            "T5's shape: a character map alone; WhitespaceSplit, then a Metaspace",
            sentencepiece_with(
                sentencepiece["normalizer"]["normalizers"][0].clone(),
                serde_json::json!({"type": "Sequence", "pretokenizers": [
                    {"type": "WhitespaceSplit"},
                    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                     "split": true}]}),
            ),
        ),
        (
            "a character map, runs of spaces as one; BERT's pre-tokenizer",
            sentencepiece_with(
                serde_json::json!({"type": "Sequence", "normalizers": [
                    sentencepiece["normalizer"]["normalizers"][0],
                    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}),
                serde_json::json!({"type": "BertPreTokenizer"}),
            ),
        ),
    ];
    let mut inputs: Vec<String> = corpus_texts().into_iter().step_by(3).collect();
    inputs.extend(
        [
            "the tree",
            "e e",
            "abc\u{1}def ghi",
            "ΟΔΟΣ ΚΑΙ ΟΔΟΣ",
            "İstanbul ĲK ﬀ x",
            "a\u{a0}b c",
            "x \u{308}y z",
            "中文 字 文字。字",
            "naïve café e\u{301} x",
            "see [SEP] the [MASK]ed word",
            "a  b\t c\n d ",
            "ab \u{301}cd\u{3000} ef\u{a0} gh   ij ",
            "\u{600}a b\u{d4e} c \u{915}\u{94d}\u{937} x",
            "\u{1f1ef}\u{1f1f5}a b \u{1f469}\u{200d}\u{1f52c}c d",
            "\u{ff21}\u{ff22} \u{ff23} ﬁx ﬂy",
        ]
        .map(str::to_owned),
    );
    for (name, json) in files {
        let routed = assert_cut_parts_encode_as_the_whole(name, &json, &inputs, |text, parts| {
            assert_eq!(parts.concat(), text, "{name}");
            for part in &parts[1..] {
                assert!(part.starts_with(' '), "{name}: {parts:?}");
            }
        });
        assert_eq!(
            routed.last_safe_cut(b"e b", 0, false, false),
            Some(1),
            "{name}"
        );
    }
}

/// A character map whose rules rewrite grapheme clusters unlike their characters one by one
/// (`CLUSTER_RULES` in scripts/fixtures.py: a space with a combining mark after it becomes `x`, a
/// prepended concatenation mark and `b` become `b `, Malayalam's dot reph and a space become the
/// dot reph, `q` becomes `q `) is cut only where the letter and the space are clusters the map
/// rewrites alone: the parts of each text encode as the whole, and the places each rule spoils
/// are not cuts. Each text here would encode otherwise, cut at every space after a letter.
#[test]
fn a_character_map_that_rewrites_clusters_is_cut_only_between_clusters_it_rewrites_alone() {
    let converted: serde_json::Value =
        serde_json::from_str(&fixture_tokenizer("charsmap-rules")).unwrap();
    // Runs of spaces are not joined here, so the space `q` ends in is one more `▁` in the whole
    // text, and stripped from the end of the part before a cut.
    let mut stripped = converted.clone();
    stripped["normalizer"]["normalizers"]
        .as_array_mut()
        .unwrap()
        .truncate(2);
    // The texts each rule spoils a cut of: the last two, whose letter's cluster ends in a space,
    // only where runs of spaces are not joined.
    let spoiled = ["ab \u{301}cd", "ab\u{d4e} cd", "\u{600}b c", "ab q c"];
    let mut inputs: Vec<String> = corpus_texts().into_iter().step_by(3).collect();
    inputs.extend(spoiled.map(str::to_owned));
    let cut_at_every_space = Cuts::EVERY_WORD_GAP.at_spaces_after_letters_but(Vec::new());
    for (name, file, spoiled) in [
        (
            "the rules, converted as XLM-RoBERTa's",
            converted,
            &spoiled[..2],
        ),
        (
            "the rules, the end stripped, runs of spaces as they are",
            stripped,
            &spoiled[..],
        ),
    ] {
        let json = file.to_string();
        let routed = assert_cut_parts_encode_as_the_whole(name, &json, &inputs, |text, parts| {
            assert_eq!(parts.concat(), text, "{name}");
        });
        let stable = &StableEngine::from_json(&json).unwrap();
        let mode = routed
            .encode_mode(Some(false), &Default::default())
            .unwrap();
        for text in spoiled {
            let by_every_space: Vec<u32> = cut_at_every_space
                .parts(text, 1)
                .flat_map(|part| routed.encode(part, &mode).unwrap().as_slice().to_vec())
                .collect();
            assert_ne!(
                by_every_space,
                ids(stable, text, false),
                "{name}: {text:?} encodes alike cut at every space"
            );
        }
    }
}

/// A long text under a truncation that keeps a text's first ids is encoded from a start of it
/// (`Tokenizer::start_kept_by_truncation`): its ids equal the reference's of the whole text, with
/// and without template tokens, under the file's own truncation and under others (lengths from
/// a few ids to more than the text has, a stride, every strategy), and under one that keeps the
/// last ids, which reads the whole.
#[test]
fn long_texts_under_a_truncation_give_the_whole_texts_ids() {
    use super::{Side, Truncation, TruncationChoice, TruncationStrategy};

    let file = |json: &str| serde_json::from_str(json).unwrap();
    let files = [
        (
            "BERT's (its own truncation, 128 tokens)",
            fixture_tokenizer("bert"),
        ),
        (
            "GPT-2's, 300 tokens",
            with_truncation(file(&fixture_tokenizer("gpt2")), 300),
        ),
        (
            "the SentencePiece fixture, 512 tokens",
            with_truncation(file(&fixture_tokenizer("sentencepiece")), 512),
        ),
        (
            "Llama 2's shape, 64 tokens",
            with_truncation(file(&byte_fallback_bpe(&[], true)), 64),
        ),
    ];
    let corpus = corpus_texts();
    let prose = corpus[..600].join(" ");
    let texts = [
        prose.clone(),
        corpus[corpus.len() - 600..].join("\n"),
        // No place to cut: read whole.
        "abc".repeat(40_000),
        // Few ids in the first bytes: a long run of spaces, then words.
        format!("{}{prose}", " ".repeat(70_000)),
    ];
    // Lengths of at least the template's tokens, as the JS options ask; each strategy, a stride
    // (shorter than what is kept) and the other direction at one of them.
    let truncation = |max_length, strategy, stride, direction| Truncation {
        max_length,
        strategy,
        stride,
        direction,
    };
    let mut truncations: Vec<Truncation> = [3, 128, 5_000, 10_000_000]
        .map(|max_length| truncation(max_length, TruncationStrategy::LongestFirst, 0, Side::Right))
        .into();
    truncations.extend([
        truncation(128, TruncationStrategy::OnlyFirst, 2, Side::Right),
        truncation(128, TruncationStrategy::OnlySecond, 0, Side::Right),
        truncation(128, TruncationStrategy::LongestFirst, 0, Side::Left),
    ]);
    for (name, json) in files {
        let stable = &StableEngine::from_json(&json).unwrap();
        let routed = Tokenizer::from_json(&json, name).unwrap();
        routed.wait_until_ready().unwrap();
        let mut scratch = Scratch::engine_pool();
        for text in &texts {
            assert!(text.len() > super::long_texts::PART_BYTES);
            for add in [true, false] {
                let mode = routed.encode_mode(Some(add), &Default::default()).unwrap();
                let by_file = routed
                    .encode(text, &mode)
                    .map(|ids| ids.as_slice().to_vec());
                assert_eq!(
                    by_file.unwrap(),
                    ids(stable, text, add),
                    "{name}, add {add}"
                );
                for truncation in &truncations {
                    let mode = mode
                        .clone()
                        .with_truncation(TruncationChoice::With(*truncation));
                    let by_parts = routed
                        .encode(text, &mode)
                        .map(|ids| ids.as_slice().to_vec())
                        .map_err(|e| e.to_string());
                    let mut whole = Ids::default();
                    let reference = stable
                        .encode_truncated(
                            text,
                            add,
                            true,
                            Some(truncation),
                            &mut scratch,
                            &mut whole,
                        )
                        .map(|()| whole.as_slice().to_vec())
                        .map_err(|e| e.to_string());
                    assert_eq!(by_parts, reference, "{name}, add {add}, {truncation:?}");
                    // Rows take the stable engine's details of the whole text: a few.
                    let rows_checked = text == &texts[0]
                        && truncation.strategy == TruncationStrategy::LongestFirst
                        && [3, 5_000].contains(&truncation.max_length);
                    if rows_checked {
                        for overflowing in [false, truncation.max_length == 5_000] {
                            assert_rows_as_the_whole_texts(
                                &routed,
                                stable,
                                text,
                                (add, overflowing),
                                truncation,
                            );
                        }
                    }
                }
            }
        }
    }
}

/// The start of a long text still being read that a file's truncation keeps
/// (`Tokenizer::kept_by_file_truncation`, `keptByTruncation` in JS) encodes, under that
/// truncation, to the reference's ids of the whole text, whatever the bytes held end in (a
/// character cut short included); none is found where the truncation keeps the last ids or the
/// file has none, and one is found once enough of a text is held.
#[test]
fn the_start_a_files_truncation_keeps_gives_the_whole_texts_ids() {
    let file = |json: &str| serde_json::from_str(json).unwrap();
    let left = |json: String| {
        let mut file: serde_json::Value = serde_json::from_str(&json).unwrap();
        file["truncation"]["direction"] = serde_json::json!("Left");
        file.to_string()
    };
    let gpt2 = with_truncation(file(&fixture_tokenizer("gpt2")), 300);
    let files = [
        (
            "BERT's (its own truncation, 128 tokens)",
            fixture_tokenizer("bert"),
            true,
        ),
        ("GPT-2's, 300 tokens", gpt2.clone(), true),
        (
            "the SentencePiece fixture, 512 tokens",
            with_truncation(file(&fixture_tokenizer("sentencepiece")), 512),
            true,
        ),
        (
            "Llama 2's shape, 64 tokens",
            with_truncation(file(&byte_fallback_bpe(&[], true)), 64),
            true,
        ),
        ("GPT-2's, the last 300 tokens", left(gpt2), false),
        ("GPT-2's, no truncation", fixture_tokenizer("gpt2"), false),
    ];
    let corpus = corpus_texts();
    let texts = [
        corpus[..600].join(" "),
        corpus[corpus.len() - 600..].join("\n"),
        // No place to cut in its first 40 KB (a run of Japanese with no space), then prose.
        format!(
            "{}{}",
            "日本語のテキスト".repeat(1_700),
            corpus[..300].join(" ")
        ),
        // Few ids a byte: each word is longer than BERT reads as a word (one unknown token).
        (0..3_000)
            .map(|i: u32| {
                format!(
                    "{}{}",
                    "x".repeat(150),
                    char::from_u32(97 + i % 26).unwrap()
                )
            })
            .collect::<Vec<_>>()
            .join(" "),
    ];
    for (name, json, kept) in files {
        let stable = &StableEngine::from_json(&json).unwrap();
        let routed = Tokenizer::from_json(&json, name).unwrap();
        let mode = routed.encode_mode(Some(true), &Default::default()).unwrap();
        for text in &texts {
            let whole = ids(stable, text, true);
            let mut found = false;
            for held in [1_000, 4_099, 30_001, 100_003, 250_007, text.len()] {
                let bytes = &text.as_bytes()[..held.min(text.len())];
                let Some(end) = routed.kept_by_file_truncation(bytes).unwrap() else {
                    continue;
                };
                found = true;
                assert!(kept && end > 0 && end <= bytes.len(), "{name}: {end}");
                let start = std::str::from_utf8(&bytes[..end]).unwrap();
                let by_start = routed.encode(start, &mode).unwrap();
                assert!(
                    by_start.as_slice() == whole.as_slice(),
                    "{name}, {held} bytes held: a start of {end}"
                );
            }
            assert_eq!(found, kept, "{name}: {}", &text[..40]);
        }
    }
}

/// Asserts that `routed`'s model-input rows of `text` under `truncation`, with every optional
/// part (overflowing windows where `overflowing`), are `stable`'s of the whole text.
fn assert_rows_as_the_whole_texts(
    routed: &Tokenizer,
    stable: &StableEngine,
    text: &str,
    (add_special_tokens, overflowing): (bool, bool),
    truncation: &super::Truncation,
) {
    let options = super::RowOptions {
        add_special_tokens,
        split_special: true,
        truncation: Some(*truncation),
        returns: super::Returns {
            offsets: true,
            tokens: true,
            word_ids: true,
            sequence_ids: true,
            special_tokens_mask: true,
            overflowing,
        },
    };
    let mut rows = super::Rows::default();
    let by_parts = routed
        .encode_rows(text, None, &options, &mut Scratch::new(), &mut rows)
        .map_err(|e| e.to_string());
    let mut whole = super::Rows::default();
    let reference = stable
        .encode_parts(text, None, add_special_tokens, true, Some(truncation), true)
        .map(|encoding| {
            let count = whole.push_stable(&encoding, [text, ""], options.returns);
            whole.rows_per_input.push(count);
        })
        .map_err(|e| e.to_string());
    assert_eq!(by_parts, reference, "{truncation:?}");
    let parts = |rows: &super::Rows| {
        (
            (rows.ends.clone(), rows.rows_per_input.clone()),
            rows.ids.clone(),
            rows.type_ids.clone(),
            rows.offsets.clone(),
            rows.tokens.clone(),
            rows.word_ids.clone(),
            rows.sequence_ids.clone(),
            rows.special.clone(),
        )
    };
    assert!(parts(&rows) == parts(&whole), "{truncation:?}");
}

/// Checks the cuts of `json`, the tokenizer.json `name`, against its stable reference on
/// `inputs`: it is cut, and each text cut everywhere it may (`Cuts::parts`), the parts encoded
/// one after the other without template tokens, gives the reference's ids of the whole text, as
/// does a reader's cut in its first half (`last_safe_cut` for parts after a cut) with the part
/// from it encoded as one; more than 100 texts are cut; and a text long enough for `encode` to
/// cut gives, with the template, the reference's ids. `check_parts(text, parts)` checks what the
/// file's kind says of where its parts begin. Returns the tokenizer, built, for the file's own
/// checks.
fn assert_cut_parts_encode_as_the_whole(
    name: &str,
    json: &str,
    inputs: &[String],
    check_parts: impl Fn(&str, &[&str]),
) -> Tokenizer {
    let stable = &StableEngine::from_json(json).unwrap();
    let routed = Tokenizer::from_json(json, name).unwrap();
    routed.wait_until_ready().unwrap();
    let cuts = routed
        .cuts(false)
        .unwrap_or_else(|| panic!("{name} is not cut"));
    let mode = routed
        .encode_mode(Some(false), &Default::default())
        .unwrap();
    let mut cut_texts = 0;
    for text in inputs {
        let parts: Vec<&str> = cuts.parts(text, 1).collect();
        let by_parts: Vec<u32> = parts
            .iter()
            .flat_map(|part| routed.encode(part, &mode).unwrap().as_slice().to_vec())
            .collect();
        assert_eq!(by_parts, ids(stable, text, false), "{name}: {parts:?}");
        check_parts(text, &parts);
        cut_texts += usize::from(parts.len() > 1);
        let half = &text.as_bytes()[..text.len() / 2];
        if let Some(cut) = routed.last_safe_cut(half, 0, false, true) {
            let (before, after) = text.split_at(cut);
            let after = &after[routed.left_out_after_cut(after.as_bytes())..];
            let mut by_reader = routed.encode(before, &mode).unwrap().as_slice().to_vec();
            by_reader.extend_from_slice(routed.encode(after, &mode).unwrap().as_slice());
            assert_eq!(by_reader, ids(stable, text, false), "{name}: cut at {cut}");
        }
    }
    assert!(cut_texts > 100, "{name}: only {cut_texts} texts were cut");
    eprintln!("{name}: {} texts, {cut_texts} cut", inputs.len());
    let long = inputs[..400].join(" ");
    assert!(long.len() > super::long_texts::PART_BYTES, "{name}");
    let with_template = routed.encode_mode(Some(true), &Default::default()).unwrap();
    let encoded = routed.encode(&long, &with_template).unwrap();
    assert!(encoded.as_slice() == ids(stable, &long, true), "{name}");
    routed
}

/// Where the rewrite would change ids, the file stays on the stable engine: a byte token missing
/// for a character the vocabulary lacks (U+0000 here, or any byte of a multi-byte character) is
/// the reference's way to the unknown token, and an added token matched in the normalized text
/// would follow a prepended space.
#[test]
fn files_the_rewrite_cannot_keep_exact_stay_on_the_stable_engine() {
    for (name, json, why) in [
        (
            "lacking <0x00>",
            byte_fallback_bpe(&[0], true),
            "Byte fallback",
        ),
        (
            "lacking <0x09> without the tab",
            byte_fallback_bpe(&[9], false),
            "Byte fallback",
        ),
        (
            "lacking <0xC3>",
            byte_fallback_bpe(&[0xC3], true),
            "Byte fallback",
        ),
        (
            "add_prefix_space with a normalized added token",
            gpt2_with_prefix_space(true, true),
            "add_prefix_space",
        ),
    ] {
        let routed = Tokenizer::from_json(&json, name).unwrap();
        routed.wait_until_ready().unwrap();
        let routing = routed.routing();
        assert!(routing.starts_with("stable:"), "{name}: {routing}");
        assert!(routing.contains(why), "{name}: {routing}");
        let stable = StableEngine::from_json(&json).unwrap();
        let mode = routed.encode_mode(Some(true), &Default::default()).unwrap();
        for text in [
            "a\u{0}b",
            "tab\there",
            "café",
            "the and",
            "<|endoftext|>",
            "x<|endoftext|>",
        ] {
            assert_eq!(
                routed.encode(text, &mode).unwrap().as_slice(),
                ids(&stable, text, true).as_slice(),
                "{name}: {text:?}"
            );
        }
    }
}
