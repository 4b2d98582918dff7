//! Entry-point fuzz: the inputs batchtok parses must give `Ok` or `Err`, never a panic
//! and never a hang.
//!
//! - tokenizer.json loading, from mutated fixture files: cut short, bytes flipped, spans deleted or
//!   doubled, values swapped for huge, negative or ill-typed ones, components nested deep, regexes
//!   and added tokens made hostile. A file that loads is then used: texts encoded, ids decoded.
//! - decode, with id lists around the edges of each vocabulary: an id outside it must be an
//!   `OutOfRange` error, and ids inside it must decode as the oracle decodes them.
//!
//! Encoding well-formed tokenizers is the differential fuzz's (`differential_fuzz.rs`). Time
//! budgets and seeds as there (`fuzz.rs`).

use std::cell::{Cell, RefCell};
use std::sync::mpsc;
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use crate::fuzz::{Rng, Settings, Tally, TextGen, catch};
use batchtok::engine::{AllowedSpecial, ErrorKind, Tokenizer};
use serde_json::{Value, json};

/// Longest one load-and-use case may take before it counts as a hang. Loading the full GPT-2
/// fixture takes well under a second alone; the margin covers a machine shared with other builds.
const CASE_LIMIT: Duration = Duration::from_secs(60);

thread_local! {
    /// Set on the threads that run fuzz cases: their panics are expected (the release candidate
    /// panics on some files and batchtok catches it), so the hook records them instead of printing.
    static QUIET: Cell<bool> = const { Cell::new(false) };
    /// Where the panics of this thread were raised, while `QUIET` is set.
    static RAISED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Installs, once per process, a panic hook that is silent on fuzz-case threads and leaves every
/// other thread's panics (the tests' own assertions) to the default hook.
fn quiet_panics_on_case_threads() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.get() {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                RAISED.with_borrow_mut(|raised| raised.push(at));
            } else {
                default(info);
            }
        }));
    });
}

/// What one case did.
struct Outcome {
    /// `Some(routing)` when the file loaded.
    loaded: Option<String>,
    /// A panic that escaped batchtok: the finding this fuzz is for.
    escaped: Option<String>,
    /// Panics raised and caught inside (the release candidate's, caught at load), by location.
    caught: Vec<String>,
    /// An error of a kind other than `Load` from loading.
    wrong_kind: Option<String>,
}

/// Runs `case` on its own thread, bounded by `CASE_LIMIT`; `None` when it did not finish.
fn bounded(case: impl FnOnce() -> Outcome + Send + 'static) -> Option<Outcome> {
    let (send, receive) = mpsc::channel();
    std::thread::Builder::new()
        .name("fuzz case".to_owned())
        .spawn(move || {
            QUIET.set(true);
            // A hung case's thread is left behind: it cannot be stopped, and the test fails.
            let _ = send.send(case());
        })
        .expect("a thread for the case");
    receive.recv_timeout(CASE_LIMIT).ok()
}

/// Loads `json` and, if it loads, encodes and decodes with it; every panic is caught and told.
fn load_and_use(json: String, seed: u64) -> Outcome {
    let mut outcome = Outcome {
        loaded: None,
        escaped: None,
        caught: Vec::new(),
        wrong_kind: None,
    };
    let result = catch(|| {
        let tokenizer = match Tokenizer::from_json(&json, "a fuzzed tokenizer.json") {
            Ok(tokenizer) => tokenizer,
            Err(e) => {
                if e.kind() != ErrorKind::Load {
                    return Err(format!("{:?}: {}", e.kind(), e.message()));
                }
                return Ok(None);
            }
        };
        // The release candidate is built on a thread of its own: its panics, caught there, belong
        // to the load.
        tokenizer.wait_until_ready().map_err(|e| e.to_string())?;
        let routing = tokenizer.routing();
        // Panics raised while loading were caught by batchtok (the release candidate's refusal);
        // from here on, any panic would be an escaped one.
        let mut generator = TextGen::new(seed);
        for add in [true, false] {
            let mode = tokenizer
                .encode_mode(Some(add), &AllowedSpecial::None)
                .expect("a Hugging Face tokenizer takes addSpecialTokens");
            for _ in 0..3 {
                let _ = tokenizer.encode(&generator.text(), &mode);
            }
        }
        let size = tokenizer.id_limit();
        let rng = generator.rng();
        for _ in 0..4 {
            let ids: Vec<u32> = (0..rng.below(12))
                .map(|_| match rng.below(4) {
                    0 => size.wrapping_add(rng.below(3) as u32).wrapping_sub(1),
                    1 => u32::MAX - rng.below(2) as u32,
                    _ => rng.next() as u32 % size.max(1),
                })
                .collect();
            match tokenizer.decode(&ids, rng.one_in(2)) {
                Err(e) if ids.iter().any(|&id| id >= size) && e.kind() != ErrorKind::OutOfRange => {
                    return Err(format!("decode({ids:?}) failed with {:?}: {e}", e.kind()));
                }
                _ => {}
            }
        }
        Ok(Some(routing))
    });
    outcome.caught = RAISED.with_borrow_mut(std::mem::take);
    match result {
        Ok(Ok(loaded)) => outcome.loaded = loaded,
        Ok(Err(wrong)) => outcome.wrong_kind = Some(wrong),
        Err(panic) => {
            let at = outcome.caught.pop().unwrap_or_default();
            outcome.escaped = Some(format!("{panic} (at {at})"));
        }
    }
    outcome
}

/// Small versions of the fixtures, so that most cases parse in milliseconds rather than the
/// fraction of a second the full GPT-2 file takes; the full files are used now and then.
fn base_documents() -> Vec<(&'static str, Value)> {
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(crate::fuzz::fixture_path(name)).unwrap())
            .unwrap()
    };
    let gpt2 = read("gpt2");
    let mut small_gpt2 = gpt2.clone();
    const KEPT: u64 = 1000;
    let vocab = small_gpt2["model"]["vocab"].as_object_mut().unwrap();
    vocab.retain(|_, id| id.as_u64().unwrap() < KEPT);
    vocab.insert("<|endoftext|>".to_owned(), json!(KEPT));
    let kept = vocab.clone();
    let merges = small_gpt2["model"]["merges"].as_array_mut().unwrap();
    merges.retain(|pair| {
        let (a, b) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
        kept.contains_key(a) && kept.contains_key(b) && kept.contains_key(&format!("{a}{b}"))
    });
    small_gpt2["added_tokens"][0]["id"] = json!(KEPT);

    let bert = read("bert");
    let mut small_bert = bert.clone();
    small_bert["model"]["vocab"]
        .as_object_mut()
        .unwrap()
        .retain(|_, id| id.as_u64().unwrap() < 2000);

    let word_level = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hello": 1, "world": 2, "!": 3},
                  "unk_token": "[UNK]"}
    });
    vec![
        ("gpt2 (small)", small_gpt2),
        ("bert (small)", small_bert),
        ("unigram", read("unigram")),
        ("word level", word_level),
        ("gpt2", gpt2),
        ("bert", bert),
    ]
}

const NUMBERS: &[&str] = &[
    "-1",
    "0",
    "-0",
    "0.5",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "1e308",
    "-1e308",
    "1e-320",
    "1e999",
];

const TYPE_NAMES: &[&str] = &[
    "BPE",
    "WordPiece",
    "WordLevel",
    "Unigram",
    "Sequence",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "Strip",
    "StripAccents",
    "Replace",
    "Prepend",
    "Precompiled",
    "BertNormalizer",
    "ByteLevel",
    "Metaspace",
    "Whitespace",
    "WhitespaceSplit",
    "Split",
    "Digits",
    "Punctuation",
    "UnicodeScripts",
    "CharDelimiterSplit",
    "BertPreTokenizer",
    "FixedLength",
    "TemplateProcessing",
    "RobertaProcessing",
    "BertProcessing",
    "ByteFallback",
    "Fuse",
    "CTC",
    "Nope",
    "",
];

/// Regexes a Split pre-tokenizer or a Replace normalizer may be given: invalid ones, empty
/// matches, lookaround, and nested quantifiers that backtrack badly.
const PATTERNS: &[&str] = &[
    "",
    "(",
    "\\",
    "[",
    "(?=)",
    "$",
    "^",
    "\\b",
    "a*",
    "(a*)*b",
    "(\\s*)*$",
    "(?<=\\s)",
    "\\p{Nope}",
    "\\X",
    "x{1000000}",
    "(?:(?:(?:(?:a*)*)*)*)*",
    "\\s+(?!\\S)|\\s+",
    ".",
];

/// Text-level mutations: what a truncated download or a hand edit does to a file.
fn mutate_text(text: &mut String, rng: &mut Rng) -> String {
    let len = text.len();
    let at = |rng: &mut Rng, text: &str| {
        let mut at = rng.below(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    match rng.below(5) {
        0 => {
            let cut = at(rng, text);
            text.truncate(cut);
            format!("truncated at {cut} of {len}")
        }
        1 => {
            let mut bytes = std::mem::take(text).into_bytes();
            let flips = rng.between(1, 4);
            for _ in 0..flips {
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
            }
            *text = String::from_utf8_lossy(&bytes).into_owned();
            format!("{flips} bits flipped")
        }
        2 => {
            let start = at(rng, text);
            let mut end = (start + rng.between(1, 64)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text.replace_range(start..end, "");
            format!("bytes {start}..{end} deleted")
        }
        3 => {
            let start = at(rng, text);
            let mut end = (start + rng.between(1, 256)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let span = text[start..end].to_owned();
            let to = at(rng, text);
            text.insert_str(to, &span);
            format!("bytes {start}..{end} copied to {to}")
        }
        _ => {
            let junk = *rng.pick(&[
                "{",
                "}",
                "[",
                "]",
                "\"",
                ",",
                ":",
                "null",
                "-1",
                "1e999",
                "\\u0000",
                "\"\\ud800\"",
            ]);
            let to = at(rng, text);
            text.insert_str(to, junk);
            format!("{junk:?} inserted at {to}")
        }
    }
}

/// Every node of `value` by JSON pointer, the vocabulary and merges left out half the time so
/// that the configuration, which is small, is not drowned by them.
fn pointers(value: &Value, skip_tables: bool) -> Vec<String> {
    fn walk(value: &Value, at: String, skip_tables: bool, out: &mut Vec<String>) {
        let is_table = at.ends_with("/model/vocab") || at.ends_with("/model/merges");
        out.push(at.clone());
        if skip_tables && is_table {
            return;
        }
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    walk(child, format!("{at}/{key}"), skip_tables, out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(child, format!("{at}/{i}"), skip_tables, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, String::new(), skip_tables, &mut out);
    out
}

/// Structure-level mutations: values a careless converter or a hostile author writes.
fn mutate_value(doc: &mut Value, rng: &mut Rng) -> String {
    let all = pointers(doc, rng.one_in(2));
    let at = rng.pick(&all).clone();
    let kind = rng.below(9);
    // The mutations from 5 on write into named fields, which needs objects where they go.
    if kind >= 5 && !(doc.is_object() && (doc["model"].is_object() || doc["model"].is_null())) {
        return "no object to write into".to_owned();
    }
    match kind {
        0 => {
            let numbers: Vec<&String> = all
                .iter()
                .filter(|p| doc.pointer(p).is_some_and(Value::is_number))
                .collect();
            let Some(&target) = numbers.get(rng.below(numbers.len().max(1))) else {
                return "no number to swap".to_owned();
            };
            let number = *rng.pick(NUMBERS);
            // Out-of-range literals (1e999, 2^64) are not representable as a `Value`: they go in
            // as text, to meet the parser itself.
            *doc.pointer_mut(target).unwrap() = serde_json::from_str(number)
                .unwrap_or_else(|_| Value::String(format!("@@{number}@@")));
            format!("{target} = {number}")
        }
        1 => {
            let other = doc
                .pointer(rng.pick(&all).as_str())
                .cloned()
                .unwrap_or(Value::Null);
            let replacement = match rng.below(8) {
                0 => Value::Null,
                1 => json!(""),
                2 => json!([]),
                3 => json!({}),
                4 => json!(true),
                5 => json!("x".repeat(rng.between(1, 100_000))),
                _ => other,
            };
            let shown: String = replacement.to_string().chars().take(60).collect();
            *doc.pointer_mut(&at).unwrap() = replacement;
            format!("{at} = {shown}")
        }
        2 => {
            let Some((parent, key)) = at.rsplit_once('/') else {
                return "nothing to delete".to_owned();
            };
            match doc.pointer_mut(parent) {
                Some(Value::Object(map)) => {
                    map.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(items)) => {
                    items.remove(key.parse::<usize>().unwrap());
                }
                _ => {}
            }
            format!("{at} deleted")
        }
        3 => {
            let arrays: Vec<&String> = all
                .iter()
                .filter(|p| {
                    doc.pointer(p)
                        .is_some_and(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                })
                .collect();
            let Some(&target) = arrays.get(rng.below(arrays.len().max(1))) else {
                return "no array to grow".to_owned();
            };
            let items = doc.pointer_mut(target).unwrap().as_array_mut().unwrap();
            let copied = items[rng.below(items.len())].clone();
            let times = rng.between(1, 3);
            for _ in 0..times {
                items.insert(rng.below(items.len() + 1), copied.clone());
            }
            format!("an item of {target} doubled {times} times")
        }
        4 => {
            let types: Vec<&String> = all.iter().filter(|p| p.ends_with("/type")).collect();
            let Some(&target) = types.get(rng.below(types.len().max(1))) else {
                return "no type to swap".to_owned();
            };
            let name = *rng.pick(TYPE_NAMES);
            *doc.pointer_mut(target).unwrap() = json!(name);
            format!("{target} = {name:?}")
        }
        5 => {
            let (field, list) = *rng.pick(&[
                ("normalizer", "normalizers"),
                ("pre_tokenizer", "pretokenizers"),
                ("decoder", "decoders"),
                ("post_processor", "processors"),
            ]);
            // serde_json refuses nesting past 128 levels; both sides of that limit are tried.
            let depth = if rng.one_in(4) {
                rng.between(60, 2000)
            } else {
                rng.between(1, 60)
            };
            let mut node = doc[field].take();
            for _ in 0..depth {
                node = json!({ "type": "Sequence", list: [node] });
            }
            doc[field] = node;
            format!("{field} nested {depth} deep in Sequences")
        }
        6 => {
            let pattern = *rng.pick(PATTERNS);
            let behavior = *rng.pick(&[
                "Removed",
                "Isolated",
                "MergedWithPrevious",
                "MergedWithNext",
                "Contiguous",
                "Bogus",
            ]);
            if rng.one_in(2) {
                doc["pre_tokenizer"] = json!({
                    "type": "Split", "pattern": {"Regex": pattern},
                    "behavior": behavior, "invert": rng.one_in(2),
                });
                format!("pre_tokenizer = Split {pattern:?} {behavior}")
            } else {
                doc["normalizer"] = json!({
                    "type": "Replace", "pattern": {"Regex": pattern}, "content": "",
                });
                format!("normalizer = Replace {pattern:?}")
            }
        }
        7 => {
            let vocab_size = doc["model"]["vocab"]
                .as_object()
                .map(|v| v.len())
                .or_else(|| doc["model"]["vocab"].as_array().map(|v| v.len()))
                .unwrap_or(0) as u64;
            let existing = doc["added_tokens"]
                .as_array()
                .and_then(|a| a.first())
                .and_then(|t| t["content"].as_str())
                .unwrap_or("[UNK]")
                .to_owned();
            let content = match rng.below(5) {
                0 => String::new(),
                1 => existing,
                2 => "Ġthe".to_owned(),
                3 => "<|".repeat(rng.between(1, 5000)),
                _ => " ".to_owned(),
            };
            let id = *rng.pick(&[0, vocab_size, vocab_size + 7, u32::MAX as u64, u64::MAX]);
            let token = json!({
                "id": id, "content": content, "single_word": rng.one_in(2),
                "lstrip": rng.one_in(2), "rstrip": rng.one_in(2),
                "normalized": rng.one_in(2), "special": rng.one_in(2),
            });
            match doc["added_tokens"].as_array_mut() {
                Some(tokens) => tokens.push(token),
                None => doc["added_tokens"] = json!([token]),
            }
            format!("added token {:.20?} with id {id}", content)
        }
        _ => {
            let model = &mut doc["model"];
            let choices = [
                ("vocab", json!({})),
                ("vocab", json!([])),
                ("merges", json!([["a", "b"], ["zz", "yy"]])),
                ("merges", json!(["a b c", "", " "])),
                ("unk_token", json!("<never in the vocabulary>")),
                ("unk_id", json!(99_999_999)),
                ("byte_fallback", json!(true)),
                ("dropout", json!(2.0)),
                ("dropout", json!(-1.0)),
                ("max_input_chars_per_word", json!(0)),
                ("continuing_subword_prefix", json!("")),
                ("end_of_word_suffix", json!("</w>")),
                ("fuse_unk", json!(true)),
                ("ignore_merges", json!(true)),
            ];
            let (key, value) = choices[rng.below(choices.len())].clone();
            model[key] = value.clone();
            format!("model.{key} = {value}")
        }
    }
}

/// One mutated document: up to three mutations of its structure, then perhaps one of its text.
fn mutant(doc: &Value, rng: &mut Rng) -> (String, Vec<String>) {
    let mut doc = doc.clone();
    let mut steps = Vec::new();
    for _ in 0..rng.between(1, 3) {
        steps.push(mutate_value(&mut doc, rng));
    }
    let mut text = doc.to_string();
    // Literals a `Value` cannot hold were left as marked strings; unquote them into the text.
    for number in NUMBERS {
        text = text.replace(&format!("\"@@{number}@@\""), number);
    }
    if rng.one_in(3) {
        steps.push(mutate_text(&mut text, rng));
    }
    (text, steps)
}

#[test]
fn mutated_tokenizer_json_loads_or_fails_cleanly() {
    quiet_panics_on_case_threads();
    let target = "tokenizer.json loading";
    let settings = Settings::from_env();
    let mut rng = Rng::new(settings.seed_for(target));
    let documents = base_documents();
    // Each case's mutations, before it runs: what a crash that takes the process down left.
    let verbose = std::env::var("BATCHTOK_FUZZ_VERBOSE").is_ok_and(|v| v == "1");
    eprintln!(
        "fuzz {target}: seed {:#018x}, {:.0} s",
        settings.seed,
        settings.budget.as_secs_f64()
    );
    let mut tally = Tally::default();
    let (mut loaded, mut refused_by_rc) = (0, 0);
    let mut caught_at: Vec<(String, u64)> = Vec::new();
    let mut findings = Vec::new();
    let started = Instant::now();
    while started.elapsed() < settings.budget {
        // The full-size fixtures are slow to parse; one case in twenty uses one.
        let (name, doc) = if rng.one_in(20) {
            rng.pick(&documents[4..])
        } else {
            rng.pick(&documents[..4])
        };
        let (json, steps) = mutant(doc, &mut rng);
        if verbose {
            eprintln!("case #{}: {name}: {}", tally.inputs + 1, steps.join("; "));
            let dir = crate::fuzz::root().join("target/fuzz-findings");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("current.json"), &json).unwrap();
        }
        tally.inputs += 1;
        tally.bytes += json.len() as u64;
        let case_seed = rng.next();
        let json = Arc::new(json);
        let for_case = Arc::clone(&json);
        let outcome = bounded(move || load_and_use((*for_case).clone(), case_seed));
        let problem = match outcome {
            None => Some(format!("did not finish within {CASE_LIMIT:?}")),
            Some(outcome) => {
                for at in &outcome.caught {
                    match caught_at.iter_mut().find(|(seen, _)| seen == at) {
                        Some((_, count)) => *count += 1,
                        None => caught_at.push((at.clone(), 1)),
                    }
                }
                if let Some(routing) = &outcome.loaded {
                    loaded += 1;
                    refused_by_rc += routing.contains("cannot read it") as u64;
                }
                outcome
                    .escaped
                    .map(|panic| format!("panicked: {panic}"))
                    .or(outcome.wrong_kind.map(|e| format!("failed with {e}")))
            }
        };
        if let Some(problem) = problem {
            let dir = crate::fuzz::root().join("target/fuzz-findings");
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join(format!(
                "parse-{:016x}-{}.json",
                settings.seed, tally.inputs
            ));
            std::fs::write(&file, json.as_bytes()).unwrap();
            findings.push(format!(
                "- case #{} from {name} ({}): {problem}; the file is {}",
                tally.inputs,
                steps.join("; "),
                file.display()
            ));
            if !settings.keep_going || problem.starts_with("did not finish") {
                break;
            }
        }
    }
    tally.summary(target, &settings, started, findings.len());
    eprintln!(
        "fuzz {target}: {loaded} loaded ({refused_by_rc} of them refused by the release candidate \
         and routed to the stable engine), {} refused",
        tally.inputs - loaded
    );
    for (at, count) in &caught_at {
        eprintln!("fuzz {target}: {count} panic(s) caught inside batchtok, raised at {at}");
    }
    assert!(
        findings.is_empty(),
        "{target} (BATCHTOK_FUZZ_SEED={:#x}):\n{}",
        settings.seed,
        findings.join("\n")
    );
}

/// A tokenizer, and the oracle's view of which ids exist and what they decode to.
struct DecodeCase {
    name: &'static str,
    tokenizer: Arc<Tokenizer>,
    oracle: DecodeOracle,
    /// Ids worth aiming at besides the random ones: specials, and gaps between ranges.
    edges: Vec<u32>,
}

enum DecodeOracle {
    OpenAi(tiktoken_rs::CoreBPE),
    /// Boxed: a stable tokenizer is over a kilobyte, which every case would carry otherwise.
    HuggingFace(Box<tokenizers_stable::Tokenizer>),
}

impl DecodeOracle {
    fn knows(&self, id: u32) -> bool {
        match self {
            DecodeOracle::OpenAi(bpe) => bpe.decode_bytes(&[id]).is_ok(),
            DecodeOracle::HuggingFace(tokenizer) => tokenizer.id_to_token(id).is_some(),
        }
    }

    /// The text of `ids`, all of which the oracle knows. tiktoken decodes to bytes; invalid UTF-8
    /// becomes U+FFFD as Python tiktoken's `decode(errors="replace")` does. Special tokens are
    /// ASCII, so leaving them out or spelling them does not move a replacement character.
    fn decode(&self, ids: &[u32], skip_special: bool, specials: &[u32]) -> String {
        match self {
            DecodeOracle::OpenAi(bpe) => {
                let kept: Vec<u32> = ids
                    .iter()
                    .copied()
                    .filter(|id| !(skip_special && specials.contains(id)))
                    .collect();
                String::from_utf8_lossy(&bpe.decode_bytes(&kept).unwrap()).into_owned()
            }
            DecodeOracle::HuggingFace(tokenizer) => tokenizer.decode(ids, skip_special).unwrap(),
        }
    }
}

fn decode_cases() -> Vec<DecodeCase> {
    let mut cases = Vec::new();
    for (name, bpe, specials) in [
        (
            "o200k_base",
            tiktoken_rs::o200k_base(),
            &[199_998, 199_999, 200_000, 200_018, 200_019][..],
        ),
        (
            "cl100k_base",
            tiktoken_rs::cl100k_base(),
            &[100_256, 100_257, 100_261, 100_275, 100_276][..],
        ),
        (
            "p50k_base",
            tiktoken_rs::p50k_base(),
            &[50_255, 50_256, 50_280, 50_281][..],
        ),
        (
            "r50k_base",
            tiktoken_rs::r50k_base(),
            &[50_255, 50_256, 50_257][..],
        ),
    ] {
        cases.push(DecodeCase {
            name,
            tokenizer: Tokenizer::from_encoding(name).unwrap(),
            oracle: DecodeOracle::OpenAi(bpe.unwrap()),
            edges: specials.to_vec(),
        });
    }
    for name in ["gpt2", "bert", "unigram"] {
        let path = crate::fuzz::fixture_path(name);
        let json = std::fs::read_to_string(&path).unwrap();
        let mut oracle = tokenizers_stable::Tokenizer::from_file(&path).unwrap();
        oracle.with_padding(None);
        let edges = oracle.get_added_tokens_decoder().into_keys().collect();
        cases.push(DecodeCase {
            name,
            tokenizer: Arc::new({
                let tokenizer = Tokenizer::from_json(&json, name).unwrap();
                tokenizer.wait_until_ready().unwrap();
                tokenizer
            }),
            oracle: DecodeOracle::HuggingFace(Box::new(oracle)),
            edges,
        });
    }
    cases
}

#[test]
fn decode_rejects_unknown_ids_and_matches_the_oracle() {
    let target = "decode";
    let settings = Settings::from_env();
    let mut rng = Rng::new(settings.seed_for(target));
    let cases = decode_cases();
    eprintln!(
        "fuzz {target}: seed {:#018x}, {:.0} s",
        settings.seed,
        settings.budget.as_secs_f64()
    );
    let mut tally = Tally::default();
    let mut rejected = 0;
    let started = Instant::now();
    while started.elapsed() < settings.budget {
        let case = rng.pick(&cases);
        let size = case.tokenizer.id_limit();
        // Half the lists hold only ids below the vocabulary size, so that decoding gets past the
        // range check; the others aim at its edges.
        let inside = rng.one_in(2);
        let ids: Vec<u32> = (0..rng.below(48))
            .map(|_| match (inside, rng.below(10)) {
                (_, 0..=4) => rng.below(size as usize) as u32,
                (_, 5) => rng.below(300) as u32,
                (_, 6) => *rng.pick(&case.edges),
                (true, _) => size - 1 - rng.below(3) as u32,
                (false, 7) => size.wrapping_add(rng.below(5) as u32).wrapping_sub(2),
                (false, 8) => *rng.pick(&[u32::MAX, u32::MAX - 1, i32::MAX as u32, 1 << 31]),
                (false, _) => rng.next() as u32,
            })
            .collect();
        let skip = rng.one_in(2);
        tally.inputs += 1;
        tally.bytes += 4 * ids.len() as u64;
        let ours = catch(|| case.tokenizer.decode(&ids, skip));
        let unknown = ids.iter().position(|&id| !case.oracle.knows(id));
        let specials: Vec<u32> = match case.tokenizer.family() {
            batchtok::engine::Family::OpenAi(encoding) => {
                encoding.specials().iter().map(|s| s.id).collect()
            }
            batchtok::engine::Family::HuggingFace => Vec::new(),
        };
        let context = || format!("{} decode({ids:?}, skip_special={skip})", case.name);
        match (ours, unknown) {
            (Err(panic), _) => panic!("{} panicked: {panic}", context()),
            (Ok(Err(e)), Some(index)) => {
                rejected += 1;
                assert_eq!(e.kind(), ErrorKind::OutOfRange, "{}: {e}", context());
                assert!(
                    e.message().contains(&format!("at index {index} ")),
                    "{}: the error names another id: {e}",
                    context()
                );
            }
            (Ok(Ok(text)), Some(index)) => panic!(
                "{}: id {} at index {index} is not in the oracle's vocabulary, but batchtok \
                 decoded to {text:?}",
                context(),
                ids[index]
            ),
            (Ok(Err(e)), None) => panic!("{}: failed on known ids: {e:?}", context()),
            (Ok(Ok(text)), None) => {
                let expected = case.oracle.decode(&ids, skip, &specials);
                assert_eq!(text, expected, "{}: differs from the oracle", context());
            }
        }
    }
    tally.summary(target, &settings, started, 0);
    eprintln!(
        "fuzz {target}: {rejected} of {} id lists held an unknown id and were rejected",
        tally.inputs
    );
}

/// Loads and uses one file, as a fuzz case does, on a thread of the size the cases get: the way
/// to replay a finding the fuzz saved (`BATCHTOK_FUZZ_FILE=target/fuzz-findings/....json`).
#[test]
#[ignore = "replays one saved case; run by hand"]
fn replay_one_file() {
    quiet_panics_on_case_threads();
    let path = std::env::var("BATCHTOK_FUZZ_FILE").expect("BATCHTOK_FUZZ_FILE names the file");
    let json = std::fs::read_to_string(path).unwrap();
    let outcome = bounded(move || load_and_use(json, 1)).expect("the case finished");
    eprintln!(
        "loaded: {:?}; escaped: {:?}; wrong kind: {:?}; caught at {:?}",
        outcome.loaded, outcome.escaped, outcome.wrong_kind, outcome.caught
    );
    assert!(outcome.escaped.is_none() && outcome.wrong_kind.is_none());
}
