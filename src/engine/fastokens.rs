//! The `fastokens` crate behind the engine trait: a candidate engine for o200k_base and
//! cl100k_base, built from the same embedded rank table as the others. Compiled only with the
//! `fastokens` cargo feature (off by default; `benchmark/results/anchors.md` says why).
//!
//! fastokens 0.3.5 (Apache-2.0, as batchtok; its PCRE2 dependency is BSD) reads tiktoken rank
//! tables directly (`Tokenizer::from_tiktoken_ranks`) and, for the o200k and cl100k patterns,
//! splits text with a hand-written scanner whose character classes come from `regex-syntax`, the
//! tables tiktoken's own regex engine uses; its BPE keeps a pretoken cache per thread, seeded from
//! the vocabulary when a thread first encodes with a model. One instance serves every thread
//! (`Send + Sync`); its mutable state is per thread or behind its own locks.
//!
//! Two of its behaviours do not fit batchtok and are kept out:
//!
//! - **Its own threads.** A text of [`WHOLE_TEXT_MAX_BYTES`] or more is cut at newlines and
//!   spread over a pool of up to 32 threads that fastokens starts itself (sized by
//!   `FASTOKENS_BPE_THREADS`, read once per process). batchtok's scheduler owns the process's
//!   threads, so such a text never reaches this engine: [`FastokensEngine::takes`] says no, and
//!   the release candidate encodes it. Below that size fastokens encodes on the calling thread
//!   and starts no thread.
//! - **Its opt-in caches** (`FASTOKENS_INPUT_CACHE`, `FASTOKENS_SEGMENT_CACHE`), read from the
//!   environment when a tokenizer is built, are off unless the user sets them, as with the crate
//!   itself; they only reuse the ids of text seen before, so they change no id.
//!
//! Special tokens stay outside, as for every OpenAI engine: `special.rs` cuts out the ones a call
//! allows, and the text between them is encoded here as ordinary text.

use super::ranks::RankTable;
use super::{Engine, Error, ErrorKind, Ids, Scratch};

/// Texts shorter than this are encoded by fastokens on the calling thread; from this length on
/// it would spread one text over threads of its own (its `SCAN_FUSED_PARALLEL_MIN`, 64 KiB).
pub const WHOLE_TEXT_MAX_BYTES: usize = 64 * 1024;

/// fastokens' `Tokenizer` for one embedded encoding.
pub struct FastokensEngine {
    tokenizer: fastokens::Tokenizer,
}

impl FastokensEngine {
    /// Builds the engine of the encoding `name` (`o200k_base` or `cl100k_base`; fastokens has a
    /// scanner for no other OpenAI pattern) from its rank table, with no special tokens.
    pub fn new(name: &str, table: &RankTable) -> Result<FastokensEngine, String> {
        let preset = fastokens::tiktoken::TiktokenConfig::from_preset(name)
            .ok_or_else(|| format!("fastokens has no preset for {name}"))?;
        let ranks: Vec<(Vec<u8>, u32)> = (0..table.len() as u32)
            .filter_map(|rank| table.token(rank).map(|token| (token.to_vec(), rank)))
            .collect();
        let config = fastokens::tiktoken::TiktokenConfig::new(preset.pattern, Vec::new());
        let build = || fastokens::Tokenizer::from_tiktoken_ranks(&ranks, config);
        let tokenizer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(build))
            .map_err(|panic| {
                super::error::with_panic_text(
                    "fastokens panicked while building the engine",
                    &*panic,
                )
            })?
            .map_err(|e| e.to_string())?;
        Ok(FastokensEngine { tokenizer })
    }

    /// Whether this engine encodes `text` on the calling thread, as the scheduler needs.
    pub fn takes(text: &str) -> bool {
        text.len() < WHOLE_TEXT_MAX_BYTES
    }
}

impl Engine for FastokensEngine {
    fn encode_into<'e>(
        &'e self,
        text: &str,
        _add_special_tokens: bool,
        _split_special: bool,
        _scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        let encode = || self.tokenizer.encode_ordinary(text);
        let ids = std::panic::catch_unwind(std::panic::AssertUnwindSafe(encode))
            .map_err(|panic| {
                let message =
                    super::error::with_panic_text("fastokens panicked while encoding", &*panic);
                Error::new(ErrorKind::Engine, message)
            })?
            .map_err(|e| Error::new(ErrorKind::Engine, format!("encoding failed: {e}")))?;
        out.extend_from_slice(&ids);
        Ok(())
    }

    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        self.tokenizer
            .decode(ids, skip_special_tokens)
            .map_err(|e| Error::new(ErrorKind::Engine, format!("decoding failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    //! fastokens against tiktoken (`tiktoken-rs`, and batchtok's exact engines, which the oracle
    //! tests hold equal to it): the four corpora, the fixture texts, real text files, seeded random
    //! texts of the classes where engines differ, and every Unicode scalar value in contexts where
    //! its class decides a cut.

    use super::*;
    use crate::engine::openai;
    use crate::engine::test_fixtures::{fixture_texts, root};
    use crate::engine::{AllowedSpecial, Tokenizer};

    const ENCODINGS: [&str; 2] = ["o200k_base", "cl100k_base"];

    fn engine(name: &'static str) -> FastokensEngine {
        let model = openai::find(name).unwrap().model;
        FastokensEngine::new(name, model.table().unwrap()).unwrap()
    }

    fn oracle(name: &str) -> tiktoken_rs::CoreBPE {
        match name {
            "o200k_base" => tiktoken_rs::o200k_base().unwrap(),
            "cl100k_base" => tiktoken_rs::cl100k_base().unwrap(),
            _ => unreachable!(),
        }
    }

    fn fastokens_ids(engine: &FastokensEngine, text: &str) -> Vec<u32> {
        let mut ids = Ids::default();
        engine
            .encode_into(text, false, false, &mut Scratch::new(), &mut ids)
            .unwrap();
        ids.into_vec()
    }

    /// Texts of the four corpora (`node scripts/corpus.js corpora`), where present, and the
    /// fixture texts.
    fn texts() -> Vec<String> {
        let mut texts = Vec::new();
        for name in ["prose", "code", "multilingual", "chat"] {
            if let Ok(file) =
                std::fs::read_to_string(root().join(format!(".cache/corpus/{name}.jsonl")))
            {
                texts.extend(
                    file.lines()
                        .filter(|l| !l.is_empty())
                        .map(|l| serde_json::from_str::<String>(l).unwrap()),
                );
            }
        }
        texts.extend(fixture_texts());
        texts
    }

    /// Seeded random texts from pieces where tokenizers tend to differ: contractions in any case,
    /// digit runs, every kind of white space and line end, marks, scripts without spaces, emoji,
    /// unassigned and private-use code points, special-token text.
    fn random_texts(seed: u64, count: usize) -> Vec<String> {
        const PIECES: &[&str] = &[
            "hello",
            "World",
            "don't",
            "WE'LL",
            "'S",
            "'ve",
            "naïve",
            "Ångström",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\r",
            "\n\n",
            " \n",
            "\u{a0}",
            "\u{3000}",
            "\u{2028}",
            "\u{85}",
            "\u{0}",
            "\u{7f}",
            "0",
            "12345",
            "3.14",
            "1,000",
            "日本語",
            "中文字符",
            "한국어",
            "ไทย",
            "русский",
            "عربى",
            "हिन्दी",
            "👨‍👩‍👧‍👦",
            "🇫🇷",
            "👍🏽",
            "e\u{301}",
            "a\u{300}\u{301}",
            "\u{378}",
            "\u{e000}",
            "\u{10ffff}",
            "\u{a7d4}",
            "\u{1ccda}",
            "<|endoftext|>",
            "!!!",
            "...",
            "—",
            "“quoted”",
            "ﬁ",
            "Ⅻ",
            "²",
            "/",
            "//",
            "x/y",
            "CamelCase",
            "ALLCAPS",
            "ǅ",
            "ǈ",
            "ʰ",
            "\u{2d2f}",
            "  \t\n",
        ];
        let mut state = seed;
        let mut next = move |n: usize| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
        };
        (0..count)
            .map(|_| {
                (0..1 + next(16))
                    .map(|_| PIECES[next(PIECES.len())])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn fastokens_matches_tiktoken_on_corpora_fixtures_and_random_texts() {
        let mut texts = texts();
        texts.extend(random_texts(0x5eed_fa57, 20_000));
        for name in ENCODINGS {
            let engine = engine(name);
            let oracle = oracle(name);
            let tokenizer = Tokenizer::from_encoding(name).unwrap();
            let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
            let mut differ = Vec::new();
            for (index, text) in texts.iter().enumerate() {
                let theirs = oracle.encode_ordinary(text);
                assert_eq!(
                    tokenizer.encode(text, &mode).unwrap().as_slice(),
                    &theirs[..],
                    "{name}: batchtok differs from tiktoken-rs on text {index}"
                );
                // A text the engine does not take goes to the release candidate; encoding it here
                // would also start fastokens' own threads, which `texts_it_takes_start_no_thread`
                // checks do not exist.
                if FastokensEngine::takes(text) && fastokens_ids(&engine, text) != theirs {
                    differ.push(index);
                }
            }
            assert!(
                differ.is_empty(),
                "{name}: fastokens differs from tiktoken on {} of {} texts, first {:?}",
                differ.len(),
                texts.len(),
                texts[differ[0]]
            );
        }
    }

    /// The contexts a character is tried in: next to letters of either case, digits, white space,
    /// a contraction, punctuation, a line end, and repeated.
    fn contexts(c: char) -> [String; 10] {
        [
            format!("a{c}b"),
            format!("A{c}a"),
            format!(" {c}x"),
            format!("1{c}2"),
            format!("{c}'s"),
            format!("x{c}{c}y"),
            format!("!{c}!"),
            format!("\n{c}\n"),
            format!(" {c} "),
            format!("{c}\u{301}a"),
        ]
    }

    /// Every Unicode scalar value in every context of [`contexts`], against tiktoken-rs: the
    /// scanner's character classes against tiktoken's regex engine. Code points are tried a block
    /// at a time (the contexts joined by a space); a block that differs is tried code point by
    /// code point, so a failure names the code points.
    #[test]
    fn fastokens_classifies_every_code_point_as_tiktoken() {
        for name in ENCODINGS {
            let engine = engine(name);
            let oracle = oracle(name);
            let mut differ: Vec<u32> = Vec::new();
            let chars: Vec<char> = (0..=0x10ffffu32).filter_map(char::from_u32).collect();
            for block in chars.chunks(256) {
                let text: String = block
                    .iter()
                    .flat_map(|&c| contexts(c))
                    .collect::<Vec<_>>()
                    .join(" ");
                if fastokens_ids(&engine, &text) == oracle.encode_ordinary(&text) {
                    continue;
                }
                for &c in block {
                    if contexts(c)
                        .iter()
                        .any(|t| fastokens_ids(&engine, t) != oracle.encode_ordinary(t))
                    {
                        differ.push(c as u32);
                    }
                }
            }
            let shown: Vec<String> = differ
                .iter()
                .take(20)
                .map(|c| format!("U+{c:04X}"))
                .collect();
            assert!(
                differ.is_empty(),
                "{name}: fastokens splits {} code points otherwise than tiktoken: {}",
                differ.len(),
                shown.join(", ")
            );
        }
    }

    /// A text long enough that fastokens would spread it over threads of its own is not taken.
    #[test]
    fn texts_it_would_spread_over_threads_are_not_taken() {
        assert!(FastokensEngine::takes(
            &"a".repeat(WHOLE_TEXT_MAX_BYTES - 1)
        ));
        assert!(!FastokensEngine::takes(&"a".repeat(WHOLE_TEXT_MAX_BYTES)));
    }

    /// Encoding texts it takes starts no thread of fastokens' own.
    #[cfg(target_os = "linux")]
    #[test]
    fn texts_it_takes_start_no_thread() {
        let engine = engine("o200k_base");
        let text = "word ".repeat((WHOLE_TEXT_MAX_BYTES - 1) / 5);
        assert!(FastokensEngine::takes(&text));
        fastokens_ids(&engine, &text);
        let names: Vec<String> = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .collect();
        assert!(
            !names.iter().any(|n| n.starts_with("fastokens")),
            "threads: {names:?}"
        );
    }

    /// One engine serves every thread at once.
    #[test]
    fn it_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<FastokensEngine>();
    }

    /// Decoding gives the text back.
    #[test]
    fn decode_round_trips() {
        let engine = engine("cl100k_base");
        let text = "Hello, world! naïve 日本語 👍🏽\n";
        assert_eq!(
            engine.decode(&fastokens_ids(&engine, text), false).unwrap(),
            text
        );
    }
}
