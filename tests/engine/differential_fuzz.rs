//! Differential fuzz: batchtok against an independent oracle on generated hostile text.
//!
//! - The four OpenAI encodings against `tiktoken-rs`: with no special token allowed, batchtok must
//!   give `encode_ordinary`'s ids; with every special allowed, `encode_with_special_tokens`'s; and
//!   decoding either must give the text back.
//! - The fixture tokenizer.json files against the stable `tokenizers` 0.23 crate read straight
//!   from the file (not batchtok's fallback engine, which is built the same way but is batchtok's
//!   code path), with and without the template tokens.
//!
//! Each target runs for a time budget (`fuzz.rs`); the first disagreement is minimized
//! and fails the test with the seed that produced it. Results of the long runs are in FUZZING.md.

use std::fmt::Debug;
use std::time::Instant;

use crate::fuzz::{Settings, Tally, TextGen, catch, minimize};
use batchtok::engine::{AllowedSpecial, Tokenizer};

/// Distinct disagreements a keep-going run collects before it stops early: past this many the
/// run has found a class of bug, not a list of them.
const MOST_FINDINGS: usize = 20;

/// One disagreement: which check, and what each side said.
#[derive(Debug, Clone)]
struct Finding {
    check: &'static str,
    ours: String,
    theirs: String,
}

impl Finding {
    fn new(check: &'static str, ours: impl Debug, theirs: impl Debug) -> Finding {
        Finding {
            check,
            ours: format!("{ours:?}"),
            theirs: format!("{theirs:?}"),
        }
    }
}

/// What a check says about one text: agreement, a finding, or that the oracle itself failed (a
/// regex backtrack limit in the oracle is not batchtok's disagreement).
enum Verdict {
    Agree,
    Disagree(Finding),
    OracleFailed,
}

/// Feeds generated texts to `check` until the budget is spent; minimizes and reports what it
/// finds.
fn run(target: &str, check: impl Fn(&str) -> Verdict) {
    let settings = Settings::from_env();
    let seed = settings.seed_for(target);
    eprintln!(
        "fuzz {target}: seed {:#018x}, {:.0} s",
        settings.seed,
        settings.budget.as_secs_f64()
    );
    let mut generator = TextGen::new(seed);
    let mut tally = Tally::default();
    let mut oracle_failures = 0_u64;
    let mut findings: Vec<(u64, String, String, Finding)> = Vec::new();
    let started = Instant::now();
    while started.elapsed() < settings.budget && findings.len() < MOST_FINDINGS {
        let text = generator.text();
        tally.inputs += 1;
        tally.bytes += text.len() as u64;
        let finding = match check(&text) {
            Verdict::Agree => continue,
            Verdict::OracleFailed => {
                oracle_failures += 1;
                continue;
            }
            Verdict::Disagree(finding) => finding,
        };
        let minimized = minimize(
            &text,
            |candidate| matches!(check(candidate), Verdict::Disagree(f) if f.check == finding.check),
        );
        let Verdict::Disagree(small) = check(&minimized) else {
            unreachable!("the minimizer keeps only inputs that disagree")
        };
        if findings.iter().all(|(_, m, _, _)| *m != minimized) {
            findings.push((tally.inputs, minimized, text, small));
        }
        if !settings.keep_going {
            break;
        }
    }
    tally.summary(target, &settings, started, findings.len());
    if oracle_failures > 0 {
        eprintln!("fuzz {target}: the oracle failed on {oracle_failures} inputs (not compared)");
    }
    if findings.is_empty() {
        return;
    }
    let mut report = format!(
        "{target}: {} disagreement(s) with the oracle (BATCHTOK_FUZZ_SEED={:#x}):\n",
        findings.len(),
        settings.seed
    );
    for (index, minimized, original, finding) in &findings {
        let original = if original.len() <= 400 {
            format!("{original:?}")
        } else {
            format!("{} bytes", original.len())
        };
        report.push_str(&format!(
            "- input #{index}, {}: minimized to {minimized:?}\n  batchtok: {}\n  oracle:   {}\n  \
             original input: {original}\n",
            finding.check, finding.ours, finding.theirs
        ));
    }
    panic!("{report}");
}

/// An OpenAI encoding against `tiktoken-rs`, and decoding back to the text.
fn openai(name: &str, oracle: tiktoken_rs::CoreBPE) {
    check_openai(name, &Tokenizer::from_encoding(name).unwrap(), oracle);
}

/// Qwen's regex (`qwen.tiktoken`'s) and Mistral's Tekken regex (`tekken.json`'s), which a rank
/// file's encoding runs on the release candidate's own matcher: here on cl100k_base's and
/// o200k_base's ranks, whose classes they name.
const QWEN_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const TEKKEN_PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// cl100k_base's and o200k_base's patterns as js-tiktoken's `ranks/*` files write them: the
/// contraction suffixes with every case spelled out instead of `(?i:…)`. A rank file's encoding
/// runs these on the release candidate's matcher too; the oracle runs them as written.
const JS_CL100K_PATTERN: &str = r"('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const JS_O200K_PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Kimi K2's regex (its `tiktoken.model`'s): o200k_base's with runs of Han first, which the
/// release candidate also runs on a matcher of its own (FUZZING.md, finding 12).
const KIMI_PATTERN: &str = r"[\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The encoding of `ranks`' rank file read with `pattern` and `<|endoftext|>` after its last
/// rank, and tiktoken-rs's of the same ranks, pattern and token, once the release candidate is
/// built.
fn rank_file(ranks: &str, pattern: &str) -> (std::sync::Arc<Tokenizer>, tiktoken_rs::CoreBPE) {
    use base64::Engine as _;
    let ranks = batchtok::engine::openai::ranks_for_benchmarks(ranks).unwrap();
    let end = ranks.iter().map(|(_, rank)| rank + 1).max().unwrap();
    let contents: String = ranks
        .iter()
        .map(|(token, rank)| {
            format!(
                "{} {rank}\n",
                base64::engine::general_purpose::STANDARD.encode(token)
            )
        })
        .collect();
    let specials = [("<|endoftext|>".to_owned(), end)];
    let tokenizer =
        Tokenizer::from_rank_file(contents.as_bytes(), pattern, "fuzzed", &specials).unwrap();
    tokenizer.wait_until_ready().unwrap();
    let oracle = tiktoken_rs::CoreBPE::new(
        ranks.into_iter().collect(),
        specials.into_iter().collect(),
        pattern,
    )
    .unwrap();
    (tokenizer, oracle)
}

#[test]
fn qwen_pattern_matches_tiktoken_rs() {
    check_rank_file("qwen pattern", "cl100k_base", QWEN_PATTERN);
}

#[test]
fn tekken_pattern_matches_tiktoken_rs() {
    check_rank_file("tekken pattern", "o200k_base", TEKKEN_PATTERN);
}

#[test]
fn js_tiktoken_cl100k_pattern_matches_tiktoken_rs() {
    check_rank_file(
        "js-tiktoken cl100k pattern",
        "cl100k_base",
        JS_CL100K_PATTERN,
    );
}

#[test]
fn js_tiktoken_o200k_pattern_matches_tiktoken_rs() {
    check_rank_file("js-tiktoken o200k pattern", "o200k_base", JS_O200K_PATTERN);
}

#[test]
fn kimi_pattern_matches_tiktoken_rs() {
    check_rank_file("kimi pattern", "o200k_base", KIMI_PATTERN);
}

/// `ranks`' rank file read with `pattern` against tiktoken-rs with the same (see [`rank_file`]).
fn check_rank_file(name: &str, ranks: &str, pattern: &str) {
    let (tokenizer, oracle) = rank_file(ranks, pattern);
    check_openai(name, &tokenizer, oracle);
}

/// `tokenizer` against `oracle`, with no special token allowed and with all, and decoding back.
fn check_openai(name: &str, tokenizer: &Tokenizer, oracle: tiktoken_rs::CoreBPE) {
    let ordinary = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
    let all = tokenizer.encode_mode(None, &AllowedSpecial::All).unwrap();
    run(name, |text| {
        for (check, mode) in [("no specials", &ordinary), ("all specials", &all)] {
            let ours = catch(|| tokenizer.encode(text, mode));
            let theirs = catch(|| match check {
                "no specials" => oracle.encode_ordinary(text),
                _ => oracle.encode_with_special_tokens(text),
            });
            let Ok(theirs) = theirs else {
                return Verdict::OracleFailed;
            };
            let ours = match ours {
                Ok(Ok(ids)) => ids,
                other => return Verdict::Disagree(Finding::new(check, other, theirs)),
            };
            if ours.as_slice() != theirs.as_slice() {
                return Verdict::Disagree(Finding::new(check, ours.as_slice(), theirs));
            }
            let decoded = catch(|| tokenizer.decode(ours.as_slice(), false));
            if !matches!(&decoded, Ok(Ok(back)) if back == text) {
                let check = match check {
                    "no specials" => "decode(encode(no specials))",
                    _ => "decode(encode(all specials))",
                };
                return Verdict::Disagree(Finding::new(check, decoded, text));
            }
        }
        Verdict::Agree
    });
}

#[test]
fn o200k_base_matches_tiktoken_rs() {
    openai("o200k_base", tiktoken_rs::o200k_base().unwrap());
}

#[test]
fn cl100k_base_matches_tiktoken_rs() {
    openai("cl100k_base", tiktoken_rs::cl100k_base().unwrap());
}

#[test]
fn p50k_base_matches_tiktoken_rs() {
    openai("p50k_base", tiktoken_rs::p50k_base().unwrap());
}

#[test]
fn r50k_base_matches_tiktoken_rs() {
    openai("r50k_base", tiktoken_rs::r50k_base().unwrap());
}

/// A tokenizer.json against the stable crate reading the same JSON.
fn hugging_face(target: &str, json: &str) {
    let tokenizer = Tokenizer::from_json(json, target).unwrap();
    tokenizer.wait_until_ready().unwrap();
    let mut oracle: tokenizers_stable::Tokenizer = json.parse().unwrap();
    // batchtok never pads (its results are ragged, one id list per text); the comparison is of
    // the ids before padding. Truncation is the file's, on both sides.
    oracle.with_padding(None);
    let with_template = tokenizer
        .encode_mode(Some(true), &AllowedSpecial::None)
        .unwrap();
    let without = tokenizer
        .encode_mode(Some(false), &AllowedSpecial::None)
        .unwrap();
    eprintln!("fuzz {target}: {}", tokenizer.routing());
    run(target, |text| {
        for (check, mode, add) in [
            ("with template tokens", &with_template, true),
            ("without template tokens", &without, false),
        ] {
            let theirs = match catch(|| oracle.encode(text, add)) {
                Ok(Ok(encoding)) => encoding.get_ids().to_vec(),
                _ => return Verdict::OracleFailed,
            };
            match catch(|| tokenizer.encode(text, mode)) {
                Ok(Ok(ours)) if ours.as_slice() == theirs.as_slice() => {}
                Ok(Ok(ours)) => {
                    return Verdict::Disagree(Finding::new(check, ours.as_slice(), theirs));
                }
                other => return Verdict::Disagree(Finding::new(check, other, theirs)),
            }
        }
        Verdict::Agree
    });
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(crate::fuzz::fixture_path(name)).unwrap()
}

#[test]
fn gpt2_json_matches_the_stable_crate() {
    hugging_face("gpt2.json", &fixture("gpt2"));
}

#[test]
fn bert_json_matches_the_stable_crate() {
    hugging_face("bert.json", &fixture("bert"));
}

#[test]
fn unigram_json_matches_the_stable_crate() {
    hugging_face("unigram.json", &fixture("unigram"));
}

/// The GPT-2 fixture split by each of `regexes` in turn (`Split`s in a `Sequence`) before its
/// byte-level step, as a tokenizer.json converted from a tiktoken-style `tokenizer.model` is.
fn gpt2_split_by(regexes: &[&str]) -> String {
    let mut members: Vec<serde_json::Value> = regexes
        .iter()
        .map(|regex| {
            serde_json::json!({"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": false})
        })
        .collect();
    members.push(serde_json::json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}));
    let mut file: serde_json::Value = serde_json::from_str(&fixture("gpt2")).unwrap();
    file["pre_tokenizer"] = serde_json::json!({"type": "Sequence", "pretokenizers": members});
    file.to_string()
}

/// The GPT-2 fixture split by Kimi K2's regex, which the release candidate runs on a matcher of
/// its own (FUZZING.md, finding 12).
fn gpt2_with_kimi_regex() -> String {
    gpt2_split_by(&[KIMI_PATTERN])
}

/// The GPT-2 fixture split by cl100k_base's regex with `digits` as its digit rule, which the
/// release candidate recognises for any of four rules (FUZZING.md, finding 13).
fn gpt2_with_cl100k_digits(digits: &str) -> String {
    gpt2_split_by(&[&format!(
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|{digits}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )])
}

/// The GPT-2 fixture with `normalizer` in front: its byte-level vocabulary spells whatever the
/// normalizer makes of a text, so the ids show every difference between the engines' Unicode
/// normalization tables (FUZZING.md, finding 14).
fn gpt2_with_normalizer(normalizer: serde_json::Value) -> String {
    let mut file: serde_json::Value = serde_json::from_str(&fixture("gpt2")).unwrap();
    file["normalizer"] = normalizer;
    file.to_string()
}

#[test]
fn gpt2_json_with_nfkc_matches_the_stable_crate() {
    hugging_face(
        "gpt2.json+nfkc",
        &gpt2_with_normalizer(serde_json::json!({"type": "NFKC"})),
    );
}

#[test]
fn gpt2_json_with_kimi_regex_matches_the_stable_crate() {
    hugging_face("gpt2.json+kimi regex", &gpt2_with_kimi_regex());
}

/// The GPT-2 fixture with DeepSeek V3's pre-tokenizer (its tokenizer.json's): digits, then runs
/// of CJK and kana, then the rest, each a `Split`, before the byte-level step; the release
/// candidate runs the three as one native pass.
fn gpt2_with_deepseek_splits() -> String {
    gpt2_split_by(&[
        r"\p{N}{1,3}",
        "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    ])
}

#[test]
fn gpt2_json_with_deepseek_splits_matches_the_stable_crate() {
    hugging_face("gpt2.json+deepseek splits", &gpt2_with_deepseek_splits());
}

#[test]
fn sentencepiece_json_matches_the_stable_crate() {
    hugging_face("sentencepiece.json", &fixture("sentencepiece"));
}

/// The GPT-2 fixture with chat-style added tokens carrying every flag an added token can have
/// (stripping to the left or right, whole words only, matched before or after normalization,
/// special or not). The fixtures' own added tokens set none of them, and the engines match added
/// tokens with their own code.
fn gpt2_with_flagged_added_tokens() -> String {
    let mut json: serde_json::Value = serde_json::from_str(&fixture("gpt2")).unwrap();
    let next = json["model"]["vocab"].as_object().unwrap().len() as u64;
    let tokens = [
        ("<|im_start|>", false, false, false, false, true),
        ("<|im_end|>", false, false, true, false, true),
        ("<mask>", false, true, false, false, true),
        ("[TOOL]", true, false, false, true, false),
        (" hello", false, false, false, true, false),
    ];
    for (offset, (content, single_word, lstrip, rstrip, normalized, special)) in
        tokens.into_iter().enumerate()
    {
        json["added_tokens"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({
                "id": next + offset as u64, "content": content, "single_word": single_word,
                "lstrip": lstrip, "rstrip": rstrip, "normalized": normalized, "special": special,
            }));
    }
    json.to_string()
}

#[test]
fn gpt2_json_with_flagged_added_tokens_matches_the_stable_crate() {
    hugging_face("gpt2.json+added", &gpt2_with_flagged_added_tokens());
}

/// Contexts every code point is tried in by the sweep: alone, inside and around letters, digits,
/// spaces, punctuation, contractions and marks, the neighbours the regexes and normalizers look at.
const SWEEP_CONTEXTS: &[(&str, &str)] = &[
    ("", ""),
    ("a", "a"),
    (" ", "<"),
    ("<", "a"),
    ("", "'s"),
    ("1", "1"),
    ("A", "b"),
    ("", " \n"),
    ("", "\u{301}"),
    ("x ", " y"),
];

/// More contexts with Han and digits, for the patterns with a Han or CJK alternative (Kimi K2's,
/// DeepSeek V3's): Kimi's matcher cut `〇` otherwise only after a digit of more than one byte
/// (FUZZING.md, finding 12).
const HAN_CONTEXTS: &[(&str, &str)] = &[
    ("\u{968}", "71"),
    ("\u{104a0}", "71"),
    ("\u{663}", "\u{663}"),
    ("\u{4e2d}", "1"),
    ("1", "\u{4e2d}"),
    ("a", "\u{4e2d}"),
    ("\u{4e2d}", "a"),
    ("\u{4e2d}", "\u{4e2d}"),
];

/// [`SWEEP_CONTEXTS`] and [`HAN_CONTEXTS`].
fn han_sweep_contexts() -> Vec<(&'static str, &'static str)> {
    [SWEEP_CONTEXTS, HAN_CONTEXTS].concat()
}

/// Every Unicode scalar value in the sweep's contexts, against the oracle; prints the code points
/// where they disagree as ranges. It is how the Unicode-version routing tables in
/// `src/engine/unicode_drift.rs` were found, and it fails if any disagreement is left after
/// routing. About a minute per target in release; run by hand:
/// `cargo test --release --test differential_fuzz -- --ignored --nocapture sweep`.
fn sweep(target: &str, contexts: &[(&str, &str)], disagrees: impl Fn(&str) -> bool) {
    let started = Instant::now();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut checked = 0_u64;
    for code in 0..=0x10FFFF_u32 {
        let Some(c) = char::from_u32(code) else {
            continue;
        };
        checked += 1;
        let differs = contexts
            .iter()
            .any(|(before, after)| disagrees(&format!("{before}{c}{after}")));
        if differs {
            match ranges.last_mut() {
                Some((_, end)) if *end + 1 == code => *end = code,
                _ => ranges.push((code, code)),
            }
        }
    }
    let listed: Vec<String> = ranges
        .iter()
        .map(|(a, b)| format!("(0x{a:04X}, 0x{b:04X})"))
        .collect();
    eprintln!(
        "sweep {target}: {checked} code points x {} contexts in {:.0} s, {} disagree: [{}]",
        contexts.len(),
        started.elapsed().as_secs_f64(),
        ranges.iter().map(|(a, b)| b - a + 1).sum::<u32>(),
        listed.join(", ")
    );
    assert!(
        ranges.is_empty(),
        "{target}: code points disagree after routing"
    );
}

fn sweep_openai(name: &str, oracle: tiktoken_rs::CoreBPE) {
    sweep_rank_file(
        name,
        &Tokenizer::from_encoding(name).unwrap(),
        oracle,
        SWEEP_CONTEXTS,
    );
}

fn sweep_rank_file(
    name: &str,
    tokenizer: &Tokenizer,
    oracle: tiktoken_rs::CoreBPE,
    contexts: &[(&str, &str)],
) {
    let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
    sweep(name, contexts, |text| {
        tokenizer.encode(text, &mode).unwrap().as_slice() != oracle.encode_ordinary(text).as_slice()
    });
}

fn sweep_hugging_face(name: &str, json: &str, contexts: &[(&str, &str)]) {
    let tokenizer = Tokenizer::from_json(json, name).unwrap();
    tokenizer.wait_until_ready().unwrap();
    let mut oracle: tokenizers_stable::Tokenizer = json.parse().unwrap();
    oracle.with_padding(None);
    let mode = tokenizer
        .encode_mode(Some(false), &AllowedSpecial::None)
        .unwrap();
    sweep(name, contexts, |text| {
        tokenizer.encode(text, &mode).unwrap().as_slice()
            != oracle.encode(text, false).unwrap().get_ids()
    });
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_o200k_base() {
    sweep_openai("o200k_base", tiktoken_rs::o200k_base().unwrap());
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_cl100k_base() {
    sweep_openai("cl100k_base", tiktoken_rs::cl100k_base().unwrap());
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_p50k_base() {
    sweep_openai("p50k_base", tiktoken_rs::p50k_base().unwrap());
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_r50k_base() {
    sweep_openai("r50k_base", tiktoken_rs::r50k_base().unwrap());
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_qwen_pattern() {
    let (tokenizer, oracle) = rank_file("cl100k_base", QWEN_PATTERN);
    sweep_rank_file("qwen pattern", &tokenizer, oracle, SWEEP_CONTEXTS);
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_tekken_pattern() {
    let (tokenizer, oracle) = rank_file("o200k_base", TEKKEN_PATTERN);
    sweep_rank_file("tekken pattern", &tokenizer, oracle, SWEEP_CONTEXTS);
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_js_tiktoken_patterns() {
    for (ranks, pattern, name) in [
        (
            "cl100k_base",
            JS_CL100K_PATTERN,
            "js-tiktoken cl100k pattern",
        ),
        ("o200k_base", JS_O200K_PATTERN, "js-tiktoken o200k pattern"),
    ] {
        let (tokenizer, oracle) = rank_file(ranks, pattern);
        sweep_rank_file(name, &tokenizer, oracle, SWEEP_CONTEXTS);
    }
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_kimi_pattern() {
    let (tokenizer, oracle) = rank_file("o200k_base", KIMI_PATTERN);
    sweep_rank_file("kimi pattern", &tokenizer, oracle, &han_sweep_contexts());
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_gpt2_json_with_kimi_regex() {
    sweep_hugging_face(
        "gpt2.json+kimi regex",
        &gpt2_with_kimi_regex(),
        &han_sweep_contexts(),
    );
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_gpt2_json_with_deepseek_splits() {
    sweep_hugging_face(
        "gpt2.json+deepseek splits",
        &gpt2_with_deepseek_splits(),
        &han_sweep_contexts(),
    );
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_gpt2_json_with_normalizers() {
    for form in ["NFC", "NFD", "NFKC", "NFKD"] {
        sweep_hugging_face(
            &format!("gpt2.json+{form}"),
            &gpt2_with_normalizer(serde_json::json!({ "type": form })),
            SWEEP_CONTEXTS,
        );
    }
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_gpt2_json() {
    sweep_hugging_face("gpt2", &fixture("gpt2"), SWEEP_CONTEXTS);
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_bert_json() {
    sweep_hugging_face("bert", &fixture("bert"), SWEEP_CONTEXTS);
}

#[test]
#[ignore = "a minute or more per target; run by hand"]
fn sweep_unigram_json() {
    sweep_hugging_face("unigram", &fixture("unigram"), SWEEP_CONTEXTS);
}

/// Every disagreement the fuzz has found, minimized, against the same oracle on every run.
/// FUZZING.md tells what each one was and what was done about it.
const FOUND: &[(&str, &str)] = &[
    ("cl100k_base", "\u{a7d4}<M"),
    ("o200k_base", "\u{a7d4}'e"),
    ("p50k_base", "\u{a7cf}'s"),
    ("r50k_base", "\u{a7d4}'ll"),
    ("unigram", "\u{1ccda}"),
    ("bert", "\u{1179}\u{1b4e}"),
    ("o200k_base", "e'\u{17f}'TD"),
    ("o200k_base", " I'\u{17f}"),
    ("unigram", "V\u{1df9}\u{303}"),
    ("unigram", "I\u{1ace}\u{328}"),
    ("unigram", "i\u{1df6}\u{330}"),
    ("unigram", "\u{1d49e}\u{1ac5}\u{327}"),
    ("gpt2+added", "\u{1df7}[TOOL]"),
    ("gpt2+added", "[TOOL]\u{1e945}"),
    ("gpt2+kimi", "\u{104a0}\u{3007}71"),
    ("gpt2+kimi", "x \u{2e80}"),
    ("gpt2+nfkc", "\u{1e044}"),
    ("gpt2+nfd", "\u{16125}"),
    ("gpt2+digits", "1224"),
    ("gpt2+two digits", "1801"),
    ("kimi pattern", "\u{104a0}\u{3007}71"),
    ("kimi pattern", "x \u{2e80}"),
];

#[test]
fn every_disagreement_found_stays_fixed() {
    for &(target, text) in FOUND {
        let (ours, theirs) = if target == "kimi pattern" {
            let (tokenizer, oracle) = rank_file("o200k_base", KIMI_PATTERN);
            let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
            let ours = tokenizer.encode(text, &mode).unwrap().as_slice().to_vec();
            (ours, oracle.encode_ordinary(text))
        } else if target.ends_with("_base") {
            let oracle = match target {
                "cl100k_base" => tiktoken_rs::cl100k_base(),
                "o200k_base" => tiktoken_rs::o200k_base(),
                "p50k_base" => tiktoken_rs::p50k_base(),
                _ => tiktoken_rs::r50k_base(),
            }
            .unwrap();
            let tokenizer = Tokenizer::from_encoding(target).unwrap();
            let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
            let ours = tokenizer.encode(text, &mode).unwrap().as_slice().to_vec();
            (ours, oracle.encode_ordinary(text))
        } else {
            let json = match target {
                "gpt2+added" => gpt2_with_flagged_added_tokens(),
                "gpt2+kimi" => gpt2_with_kimi_regex(),
                "gpt2+nfkc" => gpt2_with_normalizer(serde_json::json!({"type": "NFKC"})),
                "gpt2+nfd" => gpt2_with_normalizer(serde_json::json!({"type": "NFD"})),
                "gpt2+digits" => gpt2_with_cl100k_digits(r"\p{N}+"),
                "gpt2+two digits" => gpt2_with_cl100k_digits(r"\p{N}{1,2}"),
                _ => fixture(target),
            };
            let tokenizer = Tokenizer::from_json(&json, target).unwrap();
            tokenizer.wait_until_ready().unwrap();
            let mut oracle: tokenizers_stable::Tokenizer = json.parse().unwrap();
            oracle.with_padding(None);
            let mode = tokenizer
                .encode_mode(Some(true), &AllowedSpecial::None)
                .unwrap();
            let ours = tokenizer.encode(text, &mode).unwrap().as_slice().to_vec();
            (ours, oracle.encode(text, true).unwrap().get_ids().to_vec())
        };
        assert_eq!(ours, theirs, "{target}: {text:?}");
    }
}
