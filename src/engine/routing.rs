//! Which engine encodes what.
//!
//! The release candidate is the fast engine; the stable crate is the reference. A tokenizer goes to
//! the stable engine whole when the release candidate cannot read it, cannot run it, or reads it
//! differently, and a text alone where its characters need the reference's Unicode tables:
//!
//! - **It refuses the file.** Three shapes it refuses as written are handed to it in an equivalent
//!   form first (`adapter.rs` says why each gives the same ids, `differential.rs` checks them): a
//!   BPE declaring byte fallback whose missing `<0xXX>` tokens the reference never reaches
//!   (Gemini's lacks `<0x09>` and holds the tab itself), a `ByteLevel` pre-tokenizer with
//!   `add_prefix_space: true` (RoBERTa's), spelled as a last normalizer that prepends the space,
//!   and a pre-tokenizer `Sequence` of one member (DeBERTa-v2's `Metaspace`), read as that member.
//!   What is left goes to the stable engine: byte fallback missing a byte token the reference does
//!   reach (it gives the unknown token there, and the release candidate has no such mode);
//!   `add_prefix_space` inside a `Sequence` (the space goes before each piece an earlier member
//!   cut, which no normalizer can do) or with an added token matched in the normalized text (the
//!   prepended space would come before it); and files it panics on (an empty vocabulary).
//! - **It numbers the added tokens differently.** Both engines give added tokens dense ids from the
//!   end of the model's vocabulary, whatever ids the file declares (so the reference does too, and
//!   the embedded OpenAI encodings keep their gapped specials outside the engine). Any difference
//!   between their added vocabularies is checked at load and sends the tokenizer to the stable
//!   engine, so a change in either cannot go unnoticed. A token matched in the normalized text
//!   only has to keep its id: the release candidate names it by its normalized form (Llama 2's
//!   `<pad>` as `▁<pad>`), and the check of such tokens below tries each on both engines.
//!
//! - **An added token is `single_word`.** The release candidate decides where a word ends with
//!   other character classes than the stable crate (next to some marks and letters), so such a
//!   tokenizer goes to the stable engine whole.
//! - **It cuts the text around an added token matched in the normalized text differently.** The
//!   stable crate normalizes and pre-tokenizes each piece between such tokens on its own, so a
//!   `Metaspace` that prepends `▁` to every piece gives the text after the token one; on a
//!   SentencePiece-style Unigram file the release candidate did not. Each such token (up to 64)
//!   is tried on both engines at load, at a text's start, inside a word, between words and at
//!   the end, and a difference sends the tokenizer to the stable engine whole.
//! - **It cannot run a part of the file exactly.** Its reader keeps a `Split` whose regex is not one
//!   of the patterns it runs natively (GPT-2's, cl100k's and Llama 3's, Qwen's, o200k's, Mistral's
//!   Tekken, DeepSeek's three) without any way to search for it, and such a `Split` would fail on
//!   every text; cl100k_base's regex with `\p{N}{1,2}` or `\p{N}+` as its digit rule, which it
//!   recognises but runs with `\p{N}{1,3}`'s, and Kimi K2's regex behind a normalizer (below),
//!   each grouped by `adapter.rs` so that it is such a regex too; a regex `Replace` normalizer it
//!   runs with `fancy-regex`, whose syntax and classes are not Oniguruma's, unless the pattern is
//!   repeated literals (SentencePiece converters' `" {2,}"`), which the two read alike
//!   (`is_repeated_literals` in `pipeline.rs`); and a BPE model with an
//!   `end_of_word_suffix` (GPT-1's and HerBERT's `</w>`), whose suffix the release candidate
//!   leaves off a word of one character (its shortcut for a word that is itself a token).
//!   All are found at load (`PipelineEngine::cannot_run`, which also encodes a few probe texts),
//!   and the stable engine runs the file as Python `tokenizers` does, patterns with Oniguruma. A
//!   pattern that backtracks catastrophically fails there as in Python: Oniguruma stops a match
//!   attempt at its retry limit, and the text's error says so.
//! - **A `Metaspace` prepends to the first piece only, and the normalizer removes the text's first
//!   character.** With `prepend_scheme: "first"` (transformers' SentencePiece converters with
//!   `legacy: false`), the reference prepends `▁` only where the first piece, after
//!   normalization, still begins at the text's start; the release candidate judges by where the
//!   text began before normalization. So a text whose first characters the normalizer removes (a
//!   `Strip` on leading white space, `StripAccents` on a leading mark) goes to the stable engine
//!   (`leading_drop.rs` runs the stable crate's normalizer on the text's start to tell).
//! - **The text holds a character the two engines' Unicode versions read differently.** The rule: a
//!   text holding a code point that Unicode 17.0 assigns and the reference's Unicode 16.0 does not
//!   goes to the stable engine, since the release candidate gives it a Unicode 17 class and the
//!   reference none; so does a text holding a character whose class or normalization the sweep in
//!   `tests/engine/differential_fuzz.rs` found read differently, or that the two engines'
//!   normalization tables (Unicode 9.0 in the stable crate, 17.0 in the release candidate)
//!   decompose or compose differently. The symbols Unicode 17.0 adds (its new emoji, the Saudi
//!   riyal sign) are the exception: they stay on the fast engine where nothing in the file tells
//!   a symbol from an unassigned code point (no pattern names `\p{S}`, a script or a POSIX class,
//!   no `UnicodeScripts`: `unicode_drift::symbols`), as in every real file checked but DeepSeek
//!   V3's. `unicode_drift.rs` holds the tables; only such a text leaves the fast engine. The OpenAI
//!   encodings, which have no stable engine, send it to an exact path of their own (`openai.rs`).
//! - **The file splits its text by Kimi K2's regex.** The release candidate runs that regex on a
//!   matcher of its own, which cuts the Han numerals (`〇`, `〡`-`〩`, `〸`-`〺`) and the CJK and
//!   Kangxi radicals otherwise than the regex does, and every other character as it does (the
//!   sweep, in ten contexts and eight more with Han and multi-byte digits). Where the regex sees
//!   the text as given (no normalizer), a text holding one of those characters goes to the stable
//!   engine (`unicode_drift::KIMI_DRIFT`, the route `KimiRegex`); behind a normalizer, which
//!   could make one, the file goes to the stable engine whole (`adapter.rs`).
//!
//! **The OpenAI encodings** (`openai.rs`) have no stable engine: tiktoken's BPE on the rank table
//! (`ranks.rs`) encodes until the release candidate is built, and behind tiktoken's own regex it
//! encodes the texts with drifting characters. Built with the `fastokens` cargo feature, o200k_base
//! (and o200k_harmony, which shares its ranks) and cl100k_base hand every text under 64 KiB to the
//! `fastokens` crate once it is built, drifting characters included: it reads every Unicode scalar
//! value as tiktoken does (`fastokens.rs` sweeps them all in ten contexts, and checks the corpora,
//! the fixture texts and seeded random texts against `tiktoken-rs`), and once a thread has encoded
//! with it, it encodes 1.3 to 2.8 times as fast per core as the release candidate, from Rust and
//! from JS (`benchmark/results/anchors.md`). Longer texts stay on the release candidate, because
//! fastokens would spread them over threads of its own, outside the scheduler. p50k_base and
//! r50k_base stay where they are: fastokens has no scanner for their pattern. The feature is off
//! by default, for what the speed costs: the encoding is ready about three times later, the
//! process holds about 100 MiB more, and every thread that encodes copies a pretoken cache seeded
//! from the vocabulary (tens of MiB, a tenth of a second or more on its first text), so a fresh
//! process's first batch on a new thread was slower than the release candidate's.
//!
//! **An encoding read from a rank file** (`Tokenizer::from_rank_file`, and Mistral's tekken files,
//! `Tokenizer::from_tekken`) routes as the embedded ones do, between the same three engines built
//! from its table. Where its pattern is one of tiktoken's (as tiktoken, js-tiktoken or a Hugging
//! Face file spells it), or Qwen's, Mistral's Tekken or Kimi K2's regex (all of which the release
//! candidate also has a matcher for, naming the classes cl100k_base's and o200k_base's do, so the
//! same texts with drifting characters leave it; with Kimi's, the texts with Han numerals and
//! radicals too), the release candidate runs that pattern on its own matcher and the exact path
//! runs the pattern as given; `tests/engine/differential_fuzz.rs` fuzzes and sweeps each against
//! tiktoken-rs. Any other pattern runs on `fancy-regex` on every path, exact by construction and
//! about a fifth as fast. fastokens never takes one: its scanners are the embedded encodings'.
//!
//! What the stable route costs: the stable crate encodes 30 to 60 times slower than the release
//! candidate on the same texts (`benchmark/results/fallback.md`), since it builds a normalized
//! string with alignments, offsets and a token string per token for every text. That is why the
//! rewrites above exist, and no real file measured there stays on it. It shares nothing between
//! threads that costs it CPU time (a BPE model's word cache is per thread in 0.23, and batchtok
//! leaves it off: `stable_reader.rs`; only a Unigram model's cache is behind a lock), so one
//! engine serves every worker; a clone per thread gains nothing and costs the whole vocabulary
//! again.
//!
//! The route is settled once the release candidate is built, on a thread of its own; until then
//! the stable engine, built first, encodes every text (`loading.rs` says why), and `routing` says
//! so.
//!
//! The differential test (`differential.rs`) runs both engines on the fixture tokenizers over the
//! fixture texts, the corpora and seeded random texts of the classes where engines tend to differ
//! (unusual white space, unassigned code points, combining marks, special-token text), and the
//! differential fuzz (`tests/engine/differential_fuzz.rs`, FUZZING.md) against independent
//! oracles; no other input class disagreed in `tokenizers` 1.0.0-rc.3.

use std::collections::HashSet;

use super::outline::Outline;
use super::pipeline::PipelineEngine;
use super::stable::StableEngine;
use super::unicode_drift::{self, Routed};
use super::{Engine, Ids, Scratch};

/// Why [`Route::for_pipeline`] cannot settle a route without the stable engine.
pub enum StableNeeded {
    /// Every text goes to the stable engine, on this route.
    Whole(Route),
    /// The release candidate numbers the added tokens otherwise than the file declares them, or
    /// an added token is matched in the normalized text: the stable engine decides (see
    /// [`Route::for_loaded`]).
    ToCompare,
}

/// The most added tokens matched in the normalized text that a load tries on both engines.
const NORMALIZED_TOKENS_TRIED: usize = 64;

/// The first added token matched in the normalized text around which the two engines cut a text
/// differently, of the first [`NORMALIZED_TOKENS_TRIED`]. Where the stable crate cuts at such a
/// token, each piece between is normalized and pre-tokenized on its own (a `Metaspace` that
/// prepends to every piece gives the text after the token its `▁`); the release candidate did not
/// on a SentencePiece-style Unigram file, so each is tried at a text's start, inside a word,
/// between words and at the end, on both engines.
fn cut_differently_around<'t>(
    pipeline: &PipelineEngine,
    stable: &StableEngine,
    normalized: &'t [String],
) -> Option<&'t String> {
    let mut scratch = Scratch::new();
    let (mut ours, mut reference) = (Ids::with_capacity(64), Ids::with_capacity(64));
    normalized
        .iter()
        .take(NORMALIZED_TOKENS_TRIED)
        .find(|token| {
            let text = format!("{token}a{token}b c {token} d{token}");
            ours.clear();
            reference.clear();
            let ours_ok = pipeline.encode_into(&text, true, true, &mut scratch, &mut ours);
            let reference_ok = stable.encode_into(&text, true, true, &mut scratch, &mut reference);
            ours_ok.is_err() || reference_ok.is_err() || ours.as_slice() != reference.as_slice()
        })
}

/// The route a tokenizer's texts take.
#[derive(Debug, Clone)]
pub enum Route {
    /// Every text goes to the release-candidate engine.
    Pipeline,
    /// Every text goes to the release-candidate engine, which reads an equivalent form of the
    /// file (`adapter.rs`).
    Rewritten {
        /// What was rewritten, in words.
        how: Vec<String>,
    },
    /// Every text goes to the release-candidate engine (reading the file as written, or as
    /// `how` says) but those holding a Han numeral or radical, which go to the stable engine: the
    /// file splits its text by Kimi K2's regex, which the release candidate runs on a matcher of
    /// its own that cuts those characters otherwise (`unicode_drift::KIMI_DRIFT`).
    KimiRegex {
        /// What was rewritten, in words (empty: nothing).
        how: Vec<String>,
    },
    /// Every text goes to the stable engine, for the reason given.
    Stable {
        /// Why, in words.
        reason: String,
    },
}

impl Route {
    /// The route for a tokenizer.json the release candidate has read, from what it can run and
    /// the file's outline, without the stable engine where that settles it.
    pub fn for_pipeline(
        pipeline: &PipelineEngine,
        outline: &Outline,
    ) -> Result<Route, StableNeeded> {
        if outline.has_single_word_added_token() {
            return Err(StableNeeded::Whole(Route::single_word()));
        }
        if let Some(why) = pipeline.cannot_run() {
            return Err(StableNeeded::Whole(Route::Stable {
                reason: format!("the 1.0 release candidate cannot run it exactly ({why})"),
            }));
        }
        // A file written by `tokenizers` declares the ids the stable crate gives its added
        // tokens when it reads the file back; where the release candidate gives the same ids,
        // the engines agree (`added_tokens_numbered_as_declared_are_numbered_alike` in
        // `tokenizer.rs` tries many numberings). Any other file is compared with the stable
        // engine's own numbering.
        if pipeline.added_tokens() != outline.added_tokens() || outline.has_normalized_added_token()
        {
            return Err(StableNeeded::ToCompare);
        }
        Ok(Route::Pipeline)
    }

    fn single_word() -> Route {
        Route::Stable {
            reason: "an added token is single_word, and the 1.0 release candidate finds word \
                     boundaries differently"
                .to_owned(),
        }
    }

    /// The route for a tokenizer.json both engines have read.
    pub fn for_loaded(pipeline: &PipelineEngine, stable: &StableEngine) -> Route {
        // Where a whole word ends, the release candidate decides with other character classes
        // than the stable crate (around marks and some letters: `"\u{1df7}[TOOL]"` matched a
        // `single_word` token in one and not the other, found by the differential fuzz).
        if stable.has_single_word_added_token() {
            return Route::single_word();
        }
        // The release candidate keys a token matched in the normalized text by its normalized
        // form (Llama 2's `<pad>` as `▁<pad>`): such a token must keep its id, and the probe
        // below checks that the engines cut around it alike.
        let normalized = stable.normalized_added_tokens();
        let matched_normalized: HashSet<&str> = normalized.iter().map(String::as_str).collect();
        let by_id = |tokens: Vec<(String, u32)>| {
            let mut tokens: Vec<(u32, String)> =
                tokens.into_iter().map(|(text, id)| (id, text)).collect();
            tokens.sort();
            tokens
        };
        let ours = by_id(pipeline.added_tokens());
        let reference = by_id(stable.added_tokens());
        let alike = |(our_id, our_text): &(u32, String), (id, text): &(u32, String)| {
            our_id == id && (our_text == text || matched_normalized.contains(text.as_str()))
        };
        let differing = reference
            .iter()
            .zip(&ours)
            .find(|(theirs, ours)| !alike(ours, theirs))
            .map(|(theirs, _)| theirs)
            .or_else(|| reference.get(ours.len()));
        if differing.is_some() || ours.len() != reference.len() {
            let differing = differing
                .map(|(id, text)| format!("{text:?} is {id} in the file"))
                .unwrap_or_else(|| "the added tokens differ".to_owned());
            return Route::Stable {
                reason: format!(
                    "the 1.0 release candidate numbers its added tokens differently ({differing})"
                ),
            };
        }
        if let Some(token) = cut_differently_around(pipeline, stable, &normalized) {
            return Route::Stable {
                reason: format!(
                    "the 1.0 release candidate cuts the text around its added token {token:?}, \
                     matched in the normalized text, differently from the reference"
                ),
            };
        }
        Route::Pipeline
    }

    /// The route for a tokenizer.json the release candidate refused.
    pub fn stable_because(why: String) -> Route {
        Route::Stable {
            reason: format!("the 1.0 release candidate cannot read it ({why})"),
        }
    }

    /// True when `text` goes to the stable engine: always on the stable route, and on a pipeline
    /// route when the text holds a character the two engines' Unicode tables disagree on (of the
    /// symbols Unicode 17 adds, only where `new_symbols` says the file tells a symbol from an
    /// unassigned code point), or one the matcher for Kimi K2's regex cuts otherwise where the
    /// file splits by it.
    #[inline]
    pub fn wants_stable(&self, text: &str, new_symbols: bool) -> bool {
        matches!(self, Route::Stable { .. })
            || unicode_drift::contains_routed(
                text,
                Routed {
                    new_symbols,
                    kimi_regex: matches!(self, Route::KimiRegex { .. }),
                },
            )
    }

    /// This route, for a file that splits its text as given by Kimi K2's regex (`kimi_drift`,
    /// from `adapter.rs`): a pipeline route sends the texts with the characters its matcher cuts
    /// otherwise to the stable engine.
    pub fn with_kimi_drift(self, kimi_drift: bool) -> Route {
        match self {
            _ if !kimi_drift => self,
            Route::Pipeline => Route::KimiRegex { how: Vec::new() },
            Route::Rewritten { how } => Route::KimiRegex { how },
            route => route,
        }
    }

    /// This route, for a release candidate that read the file as `adapter.rs` rewrote it (`how`,
    /// empty where it read the file as written). A stable route's reason says what was rewritten
    /// too, since the reason may name the rewritten form.
    pub fn rewritten(self, how: Vec<String>) -> Route {
        match self {
            _ if how.is_empty() => self,
            Route::Pipeline => Route::Rewritten { how },
            Route::Stable { reason } => Route::Stable {
                reason: format!(
                    "{reason}; the release candidate read the file rewritten: {}",
                    how.join("; ")
                ),
            },
            route => route,
        }
    }

    /// The route in words, for users and tests.
    pub fn describe(&self) -> String {
        match self {
            Route::Pipeline => "pipeline: tokenizers 1.0.0-rc.3 encodes every text".to_owned(),
            Route::Rewritten { how } => format!(
                "pipeline: tokenizers 1.0.0-rc.3 encodes every text, reading an equivalent form \
                 of the file ({})",
                how.join("; ")
            ),
            Route::KimiRegex { how } => {
                let mut words = "pipeline: tokenizers 1.0.0-rc.3 encodes every text but those \
                                 holding a Han numeral or radical (\u{3007}, \u{3021}-\u{3029}, \
                                 \u{3038}-\u{303a}, U+2E80-U+2FD5), which its matcher for Kimi K2's \
                                 regex cuts otherwise; tokenizers 0.23 encodes those"
                    .to_owned();
                if !how.is_empty() {
                    words.push_str(&format!(
                        ". It reads an equivalent form of the file ({})",
                        how.join("; ")
                    ));
                }
                words
            }
            Route::Stable { reason } => {
                format!("stable: tokenizers 0.23 encodes every text, because {reason}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::test_fixtures::{fixture_texts, root};
    use crate::engine::{AllowedSpecial, Tokenizer};

    /// The fixture file `name` with `token` added as a plain token, matched in normalized text.
    fn with_plain_token(name: &str, token: &str) -> Tokenizer {
        let path = root().join(format!("__test__/fixtures/tokenizers/{name}.json"));
        let mut file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let id = file["added_tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_u64().unwrap())
            .max()
            .unwrap()
            .max(match &file["model"]["vocab"] {
                serde_json::Value::Array(pieces) => pieces.len() as u64,
                vocab => vocab.as_object().unwrap().len() as u64,
            })
            + 1;
        file["added_tokens"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({
                "id": id, "content": token, "single_word": false, "lstrip": false, "rstrip": false,
                "normalized": true, "special": false
            }));
        let tokenizer = Tokenizer::from_json(&file.to_string(), name).unwrap();
        tokenizer.wait_until_ready().unwrap();
        tokenizer
    }

    /// The GPT-2 fixture split by `regex` before its byte-level step (as a file converted from a
    /// tiktoken-style `tokenizer.model` is), with `normalizer` in front.
    fn gpt2_split_by(regex: &str, normalizer: serde_json::Value) -> Tokenizer {
        let path = root().join("__test__/fixtures/tokenizers/gpt2.json");
        let mut file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        file["normalizer"] = normalizer;
        file["pre_tokenizer"] = serde_json::json!({
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated",
                 "invert": false},
                {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                 "use_regex": false},
            ],
        });
        let tokenizer = Tokenizer::from_json(&file.to_string(), "split").unwrap();
        tokenizer.wait_until_ready().unwrap();
        tokenizer
    }

    /// `tokenizer`'s ids of each text are its stable engine's, whichever engine encodes it.
    fn assert_ids_are_the_stable_engines(tokenizer: &Tokenizer, texts: &[String], what: &str) {
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let stable = tokenizer.fallback_engine().unwrap();
        for text in texts {
            let mut expected = crate::engine::Ids::with_capacity(0);
            stable
                .encode_into(
                    text,
                    true,
                    true,
                    &mut crate::engine::Scratch::new(),
                    &mut expected,
                )
                .unwrap();
            let ids = tokenizer.encode(text, &mode).unwrap();
            assert_eq!(ids.as_slice(), expected.as_slice(), "{what}: {text:?}");
        }
    }

    /// A file split by Kimi K2's regex keeps the release candidate for every text but those with
    /// a Han numeral or radical; behind a normalizer, which could make one, it goes to the stable
    /// engine whole. Either way the ids are the stable engine's.
    #[test]
    fn a_kimi_regex_file_sends_only_han_numerals_and_radicals_to_the_stable_engine() {
        let kimi = crate::engine::openai::KIMI_PATTERN;
        let raw = gpt2_split_by(kimi, serde_json::Value::Null);
        assert!(
            raw.routing().starts_with("pipeline") && raw.routing().contains("Kimi K2"),
            "{}",
            raw.routing()
        );
        assert!(raw.wants_stable("二〇二四年"));
        assert!(raw.wants_stable("x \u{2e80}"));
        assert!(!raw.wants_stable("人々の中文 text 2024"));
        let normalized = gpt2_split_by(kimi, serde_json::json!({"type": "NFC"}));
        assert!(
            normalized.routing().starts_with("stable") && normalized.routing().contains("grouped"),
            "{}",
            normalized.routing()
        );
        let mut texts = fixture_texts();
        texts.extend(
            [
                "\u{104a0}\u{3007}71",
                "x \u{2e80}",
                "二〇二四年 中文 日本の人々 ⼀⼆",
                "〡〢〸 12〇3",
            ]
            .map(str::to_owned),
        );
        assert_ids_are_the_stable_engines(&raw, &texts, "as given");
        assert_ids_are_the_stable_engines(&normalized, &texts, "behind NFC");
    }

    /// cl100k_base's regex with `\p{N}{1,2}` or `\p{N}+` as its digit rule, which the release
    /// candidate recognises but runs with `\p{N}{1,3}`'s, sends the file to the stable engine;
    /// with `\p{N}{1,3}` or Qwen's `\p{N}` the release candidate keeps it. The ids are the
    /// stable engine's either way.
    #[test]
    fn cl100k_regexes_whose_digit_rule_the_release_candidate_misreads_go_to_the_stable_engine() {
        let mut texts = fixture_texts();
        texts.extend(
            [
                "1224",
                "12",
                "123",
                "12345678 and 9",
                "x=1000000; y=42",
                "٣٤٥٦ ¹²³⁴",
            ]
            .map(str::to_owned),
        );
        for (digits, route) in [
            (r"\p{N}{1,2}", "stable"),
            (r"\p{N}+", "stable"),
            (r"\p{N}{1,3}", "pipeline"),
            (r"\p{N}", "pipeline"),
        ] {
            let regex = format!(
                r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|{digits}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
            );
            let tokenizer = gpt2_split_by(&regex, serde_json::Value::Null);
            assert!(
                tokenizer.routing().starts_with(route),
                "{digits}: {}",
                tokenizer.routing()
            );
            assert_ids_are_the_stable_engines(&tokenizer, &texts, digits);
        }
    }

    /// A plain added token on the SentencePiece-style Unigram file, whose `Metaspace` prepends
    /// `▁` to every piece, is cut around differently by the release candidate: the load finds it
    /// and routes the file to the stable engine. On GPT-2's and BERT's files the two agree, and
    /// the release candidate keeps them, a token the normalizer changes too. Either way the ids
    /// are the stable engine's.
    #[test]
    fn a_plain_added_token_goes_where_the_engines_agree() {
        let mut texts = fixture_texts();
        texts.push("<new_token>a<new_token>b c <new_token> d".to_owned());
        texts.push("HELLO World, hello world: Hello World".to_owned());
        for (name, token, route) in [
            ("unigram", "<new_token>", "stable"),
            ("gpt2", "<new_token>", "pipeline"),
            ("bert", "<new_token>", "pipeline"),
            // BERT's file lowercases: the release candidate keys the token as "hello world".
            ("bert", "Hello World", "pipeline"),
        ] {
            let tokenizer = with_plain_token(name, token);
            assert!(
                tokenizer.routing().starts_with(route),
                "{name}: {}",
                tokenizer.routing()
            );
            assert_ids_are_the_stable_engines(&tokenizer, &texts, name);
        }
    }
}
