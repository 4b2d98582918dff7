//! The OpenAI encodings, embedded in the binary.
//!
//! Each rank table ships in a compact form (`encodings/*.ranks.deflate`, written by
//! `scripts/embed-encodings.js` from the `.tiktoken` files of the `tiktoken-rs` crate): for each
//! rank from 0 up, a length byte and the token's bytes, raw-deflated; a length of 0 marks a rank
//! with no ordinary token.
//!
//! An encoding is ready to encode as soon as its table is inflated and indexed (`ranks.rs`, a few
//! milliseconds): its first texts run tiktoken's own BPE on the table. Meanwhile a thread builds
//! the release-candidate engine, which takes hundreds of milliseconds for the larger tables, and
//! every text after it is ready goes to it. Both give tiktoken's ids, so which one encodes a text
//! changes only how fast.
//!
//! The release candidate's model is a byte-level BPE: the vocabulary is the ranks; the merges are
//! derived from them so that BPE by merge rank picks, at every step, the same pair tiktoken picks
//! (the adjacent pair whose concatenation has the lowest rank, the leftmost on a tie);
//! `ignore_merges` makes a piece that is itself a token come out as that token, as tiktoken's
//! first lookup does. Special tokens stay outside both engines: `special.rs` cuts out the ones a
//! call allows, and `decode` spells them.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use tokenizers::models::bpe::{BpeConfig, Merges, PipelineBPE, Vocab};
use tokenizers::pipeline::{
    PipelineModel, PipelinePostProcessor, PipelinePreTokenizer, PipelineTokenizer,
};
use tokenizers::utils::byte_level::BYTES_CHAR_LOOKUP;
use tokenizers::vocab::bucket_added_vocabulary::AddedVocabulary;

#[cfg(feature = "fastokens")]
use super::fastokens::FastokensEngine;
use super::pipeline::PipelineEngine;
use super::ranks::{RankEngine, RankTable};
use super::special::{SpecialSet, SpecialToken};
use super::tiktoken_file::RankFile;
use super::unicode_drift::{self, Routed};
use super::{Engine, Error, ErrorKind};

/// The GPT-2 pre-tokenization regex, as tiktoken's r50k_base and p50k_base use it.
const GPT2_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// cl100k_base's regex without its possessive quantifiers: Oniguruma and the engine's own matcher
/// read `?+`/`++` differently from tiktoken, and this spelling splits text the way tiktoken does.
pub(super) const CL100K_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// o200k_base's regex: case-aware letter runs with an optional contraction suffix.
const O200K_PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen's regex (its `qwen.tiktoken`'s, and Qwen 2 and 3's tokenizer.json): cl100k_base's, with
/// one digit per match.
const QWEN_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Mistral's Tekken regex (its `tekken.json`'s): o200k_base's without the contraction suffixes,
/// with one digit per match.
const TEKKEN_PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Kimi K2's regex (its `tiktoken.model`'s, as `tokenization_kimi.py` joins it): o200k_base's
/// with a first alternative for runs of Han and Han left out of the letter classes. The release
/// candidate's matcher for it cuts the Han numerals and radicals otherwise, so texts with them take
/// the exact path (`unicode_drift::KIMI_DRIFT`), and a tokenizer.json splitting by it
/// sends them to its stable engine (`adapter.rs`).
pub(super) const KIMI_PATTERN: &str = r"[\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// tiktoken's own regexes (as `tiktoken-rs` 0.12 spells them), for the texts the patterns above
/// cannot serve. The release candidate recognises the patterns above and runs them on its own
/// matcher, whose Unicode 17 tables disagree with tiktoken's Unicode 16 ones on a few thousand
/// code points (`unicode_drift.rs`). Wrapped in a group, these are not recognised and run on
/// `fancy-regex`, tiktoken's own regex engine, so they split every text as tiktoken does.
const GPT2_EXACT: &str =
    r"(?:'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s)";
const CL100K_EXACT: &str = r"(?:'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s)";
const O200K_EXACT: &str = concat!(
    "(?:",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    ")"
);

/// A regex that cuts text into the pieces BPE encodes, and what becomes of the text it does not
/// match.
#[derive(Debug, Clone, Copy)]
struct Cut {
    pattern: &'static str,
    /// The text between matches is dropped, as tiktoken's loop over the matches drops it: a rank
    /// file's own pattern, which need not match every character. The embedded encodings'
    /// patterns match every character, so for them the text between matches (none) is kept, the
    /// form in which the release candidate runs a pattern it recognises on its own matcher.
    matches_only: bool,
}

/// A rank table and the regexes that split text for it, with the engines built from them: what
/// encodings that share their ranks (o200k_base and o200k_harmony) share.
pub struct RankModel {
    /// The name of the table, for errors.
    name: &'static str,
    /// The compact table, raw-deflated; empty for a rank file read at run time, whose table is
    /// set when the model is made.
    deflated: &'static [u8],
    /// The merges, as each rank's left-part length, raw-deflated; `None` for a rank file read at
    /// run time, whose merges are derived from its table when the release candidate is built.
    merge_splits: Option<&'static [u8]>,
    /// The regex the release candidate's own matcher runs: the fast path.
    pattern: Cut,
    /// tiktoken's regex, run by tiktoken's regex engine: the slower exact path.
    exact_pattern: Cut,
    table: OnceLock<Result<RankTable, Error>>,
    /// tiktoken's BPE behind `pattern`: the engine until `full` is ready.
    first: OnceLock<Result<RankEngine, Error>>,
    /// tiktoken's BPE behind `exact_pattern`, for the texts `unicode_drift.rs` sends there.
    exact: OnceLock<Result<RankEngine, Error>>,
    /// Which characters send a text to the exact path (`unicode_drift::contains_routed`): the
    /// symbols Unicode 17 adds too where `exact_pattern` tells a symbol from an unassigned code
    /// point, and the Han numerals and radicals too where `pattern` is Kimi K2's regex on the
    /// release candidate's matcher.
    routed: Routed,
    /// Whether a long text is encoded a part at a time, cut at word gaps (`long_texts.rs`):
    /// [`cuts_safely`] of `pattern`, kept here so that no encode call compares patterns.
    cuts_at_word_gaps: bool,
    /// The release candidate behind `pattern`.
    full: OnceLock<Result<PipelineEngine, Error>>,
    /// fastokens, where it has a scanner for `pattern` and builds: the engine of the texts it
    /// takes once built (`fastokens.rs`); `None` where it has none or its build failed.
    #[cfg(feature = "fastokens")]
    fastokens: OnceLock<Option<FastokensEngine>>,
    /// Set once a thread is building `full`. Relaxed: it only keeps a second thread from
    /// starting; `full` itself is what hands the engine over.
    building: AtomicBool,
}

impl std::fmt::Debug for RankModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankModel")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RankModel {
    const fn new(
        name: &'static str,
        deflated: &'static [u8],
        merge_splits: &'static [u8],
        pattern: &'static str,
        exact_pattern: &'static str,
    ) -> Self {
        RankModel {
            name,
            deflated,
            merge_splits: Some(merge_splits),
            pattern: Cut {
                pattern,
                matches_only: false,
            },
            exact_pattern: Cut {
                pattern: exact_pattern,
                matches_only: false,
            },
            table: OnceLock::new(),
            first: OnceLock::new(),
            exact: OnceLock::new(),
            // Checked against the patterns by `embedded_patterns_read_new_symbols_alike`.
            routed: Routed {
                new_symbols: false,
                kimi_regex: false,
            },
            // Checked against the patterns by
            // `a_text_cut_at_every_word_gap_encodes_as_the_whole_text`.
            cuts_at_word_gaps: true,
            full: OnceLock::new(),
            #[cfg(feature = "fastokens")]
            fastokens: OnceLock::new(),
            building: AtomicBool::new(false),
        }
    }

    /// A rank file's model (`tiktoken_file.rs` reads the file), splitting text with `pattern` as
    /// tiktoken does. Where `pattern` is one of tiktoken's own, the release candidate runs it on
    /// its own matcher, as for the embedded encodings; any other runs on `fancy-regex`,
    /// tiktoken's regex engine, on every path. Leaked: its engines live as long as the embedded
    /// ones, and `Tokenizer::from_rank_file` makes one per distinct table and pattern.
    pub(crate) fn from_rank_file(
        name: &'static str,
        table: RankTable,
        pattern: &str,
    ) -> Result<&'static RankModel, Error> {
        let refused = |why: String| {
            Error::new(
                ErrorKind::InvalidOption,
                format!("options.pattern is not a regex tiktoken's engine reads: {why}"),
            )
        };
        // Compiled here first, as given, so that an error's position is in the user's pattern:
        // the release candidate's reader takes any pattern, and only panics when it clones the
        // pre-tokenizer.
        fancy_regex::Regex::new(pattern).map_err(|e| refused(e.to_string()))?;
        // Wrapped in a group, no pattern is one the release candidate recognises, so it runs
        // on `fancy-regex`, which keeps the text between matches out as tiktoken does.
        let exact = Cut {
            pattern: Box::leak(grouped(pattern).into_boxed_str()),
            matches_only: true,
        };
        split_pre_tokenizer(exact).map_err(refused)?;
        let fast = native_spelling(pattern).map_or(exact, |pattern| Cut {
            pattern,
            matches_only: false,
        });
        Ok(Box::leak(Box::new(RankModel {
            name,
            deflated: &[],
            merge_splits: None,
            pattern: fast,
            exact_pattern: exact,
            table: OnceLock::from(Ok(table)),
            first: OnceLock::new(),
            exact: OnceLock::new(),
            routed: Routed {
                new_symbols: unicode_drift::symbols::pattern_tells_apart(pattern),
                kimi_regex: fast.pattern == KIMI_PATTERN,
            },
            cuts_at_word_gaps: cuts_safely(fast.pattern),
            full: OnceLock::new(),
            #[cfg(feature = "fastokens")]
            fastokens: OnceLock::from(None),
            building: AtomicBool::new(false),
        })))
    }

    /// Whether a long text is encoded a part at a time, cut at word gaps (`long_texts.rs`).
    #[inline]
    pub(crate) fn cuts_at_word_gaps(&self) -> bool {
        self.cuts_at_word_gaps
    }

    /// Whether `text` goes to the exact path rather than the fast one: it holds a character the
    /// fast path's Unicode tables read differently from tiktoken's, or one the release
    /// candidate's matcher for Kimi K2's regex cuts otherwise, where that is the fast path's.
    #[inline]
    pub(crate) fn wants_exact(&self, text: &str) -> bool {
        unicode_drift::contains_routed(text, self.routed)
    }

    /// Which engine encodes which texts, in words (`Tokenizer::routing`).
    pub(crate) fn routing(&self) -> String {
        let mut words = if self.pattern.pattern == self.exact_pattern.pattern {
            "pipeline: tokenizers 1.0.0-rc.3 encodes every text, its pattern on fancy-regex, since \
             the pattern is not one its own matcher runs (about a fifth as fast)"
                .to_owned()
        } else {
            let kimi = if self.routed.kimi_regex {
                ", or a Han numeral or radical, which its matcher for Kimi K2's regex cuts otherwise"
            } else {
                ""
            };
            format!(
                "pipeline: tokenizers 1.0.0-rc.3 encodes every text on its own matcher for the \
                 pattern but those holding a character its Unicode tables read otherwise than \
                 tiktoken's{kimi}: tiktoken's BPE encodes those, the pattern on fancy-regex"
            )
        };
        if self.full_engine_if_ready().is_none() {
            words.push_str(
                "; until the release candidate is built (whenReady() waits for it), tiktoken's \
                 BPE on the rank table encodes the rest",
            );
        }
        #[cfg(feature = "fastokens")]
        if self.fastokens.get().is_some_and(Option::is_some) {
            words.push_str("; the fastokens crate encodes every text under 64 KiB");
        }
        words
    }

    /// Whether this is the model `from_rank_file` makes of `file` and `pattern`.
    pub(crate) fn is_rank_file(&'static self, file: &RankFile, pattern: &str) -> bool {
        self.is_from_rank_file()
            && ungrouped(self.exact_pattern.pattern) == Some(pattern)
            && self.table().is_ok_and(|own| {
                own.compact() == file.table && own.empty_token() == file.empty_token
            })
    }

    /// Whether the model is a rank file's, read at run time.
    pub(crate) fn is_from_rank_file(&self) -> bool {
        self.merge_splits.is_none()
    }

    fn corrupt(&self, why: impl std::fmt::Display) -> Error {
        let message = if self.is_from_rank_file() {
            format!(
                "the engine of the rank file {} cannot be built: {why}",
                self.name
            )
        } else {
            format!(
                "the embedded {} table is corrupt ({why}); rebuild batchtok",
                self.name
            )
        };
        Error::new(ErrorKind::Load, message)
    }

    /// The table, inflated and indexed on first use.
    pub(crate) fn table(&'static self) -> Result<&'static RankTable, Error> {
        self.table
            .get_or_init(|| {
                let table = miniz_oxide::inflate::decompress_to_vec(self.deflated)
                    .map_err(|e| self.corrupt(format!("{e:?}")))?;
                RankTable::new(table).map_err(|e| self.corrupt(e))
            })
            .as_ref()
            .map_err(Error::clone)
    }

    fn rank_engine(
        &'static self,
        slot: &'static OnceLock<Result<RankEngine, Error>>,
        pattern: Cut,
    ) -> Result<&'static RankEngine, Error> {
        slot.get_or_init(|| {
            let table = self.table()?;
            let pre_tokenizer = split_pre_tokenizer(pattern).map_err(|e| self.corrupt(e))?;
            Ok(RankEngine::new(table, pre_tokenizer))
        })
        .as_ref()
        .map_err(Error::clone)
    }

    /// tiktoken's BPE on the table, behind the fast path's regex: ready in milliseconds.
    pub(crate) fn first_engine(&'static self) -> Result<&'static RankEngine, Error> {
        self.rank_engine(&self.first, self.pattern)
    }

    /// The engine of the exact path: tiktoken's BPE behind tiktoken's own regex. Built on first
    /// use, since few texts need it.
    pub(crate) fn exact_engine(&'static self) -> Result<&'static RankEngine, Error> {
        self.rank_engine(&self.exact, self.exact_pattern)
    }

    /// The release-candidate engine, built on first call; a concurrent call waits for it.
    pub(crate) fn full_engine(&'static self) -> Result<&'static PipelineEngine, Error> {
        self.full
            .get_or_init(|| {
                let table = self.table()?;
                // The build reads only the embedded table; a panic in it is a bug, reported as an
                // error rather than taking the thread (or the process) down.
                std::panic::catch_unwind(|| build_tokenizer(table, self.merge_splits, self.pattern))
                    .unwrap_or_else(|panic| {
                        Err(super::error::with_panic_text(
                            "building the engine panicked",
                            &*panic,
                        ))
                    })
                    .map(PipelineEngine::from_tokenizer)
                    .map_err(|e| self.corrupt(e))
            })
            .as_ref()
            .map_err(Error::clone)
    }

    /// The release-candidate engine if it is built, without waiting.
    pub(crate) fn full_engine_if_ready(&self) -> Option<&PipelineEngine> {
        self.full.get()?.as_ref().ok()
    }

    /// The fastokens engine, if it is built and takes `text` (`routing.rs` says which texts).
    pub(crate) fn fastokens_if_ready(&self, text: &str) -> Option<&dyn Engine> {
        #[cfg(feature = "fastokens")]
        if FastokensEngine::takes(text)
            && let Some(Some(fastokens)) = self.fastokens.get()
        {
            return Some(fastokens);
        }
        let _ = text;
        None
    }

    /// Builds the fastokens engine, once; a failure leaves the release candidate in its place.
    #[cfg(feature = "fastokens")]
    pub(crate) fn fastokens_engine(&'static self) -> Option<&'static FastokensEngine> {
        self.fastokens
            .get_or_init(|| FastokensEngine::new(self.name, self.table().ok()?).ok())
            .as_ref()
    }

    /// Waits until the release-candidate engine is built (starting the build if nothing has), so
    /// that every text after this goes to it: for measuring that engine alone. With the
    /// `fastokens` feature it also waits for fastokens, which then takes the texts it takes.
    pub fn wait_for_full_engine(&'static self) -> Result<(), Error> {
        self.full_engine()?;
        #[cfg(feature = "fastokens")]
        self.fastokens_engine();
        Ok(())
    }

    /// Drops the word caches of the release-candidate engine, if it is built, and every thread's
    /// piece and pair caches (`ranks.rs`), so that the next text meets both engines cold. Not part
    /// of the API: `benchmark/anchors.rs` times every engine on text it has not seen.
    #[doc(hidden)]
    pub fn forget_word_caches_for_benchmarks(&self) {
        super::ranks::forget_caches();
        if let Some(full) = self.full_engine_if_ready() {
            full.forget_idle_scratches();
        }
    }

    /// Both engines of the fast path, the one that encodes first and the release candidate, each
    /// to be checked on its own. Exists for tests.
    #[doc(hidden)]
    pub fn engines_for_tests(&'static self) -> Result<[&'static dyn Engine; 2], Error> {
        Ok([self.first_engine()?, self.full_engine()?])
    }

    /// The engine that encodes while the release candidate builds, alone. Not part of the API:
    /// `benchmark/anchors.rs` times it.
    #[doc(hidden)]
    pub fn first_engine_for_benchmarks(&'static self) -> Result<&'static dyn Engine, Error> {
        Ok(self.first_engine()?)
    }

    /// Starts building the release-candidate engine on a thread of its own, once. Where no thread
    /// can be started it is built here, before this returns.
    pub fn build_full_engine_in_background(&'static self) {
        if self.full.get().is_some() || self.building.swap(true, Ordering::Relaxed) {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name(format!("batchtok-{}", self.name))
            .spawn(move || {
                let _ = self.full_engine();
                #[cfg(feature = "fastokens")]
                let _ = self.fastokens_engine();
                // What the build freed goes back to the OS before the thread ends, as in a
                // tokenizer.json's load (`loading.rs`): no other thread would reuse it.
                crate::allocator::release_memory();
            });
        if spawned.is_err() {
            let _ = self.full_engine();
            #[cfg(feature = "fastokens")]
            let _ = self.fastokens_engine();
        }
    }
}

static O200K: RankModel = RankModel::new(
    "o200k_base",
    include_bytes!("encodings/o200k_base.ranks.deflate"),
    include_bytes!("encodings/o200k_base.merges.deflate"),
    O200K_PATTERN,
    O200K_EXACT,
);
static CL100K: RankModel = RankModel::new(
    "cl100k_base",
    include_bytes!("encodings/cl100k_base.ranks.deflate"),
    include_bytes!("encodings/cl100k_base.merges.deflate"),
    CL100K_PATTERN,
    CL100K_EXACT,
);
static P50K: RankModel = RankModel::new(
    "p50k_base",
    include_bytes!("encodings/p50k_base.ranks.deflate"),
    include_bytes!("encodings/p50k_base.merges.deflate"),
    GPT2_PATTERN,
    GPT2_EXACT,
);
static R50K: RankModel = RankModel::new(
    "r50k_base",
    include_bytes!("encodings/r50k_base.ranks.deflate"),
    include_bytes!("encodings/r50k_base.merges.deflate"),
    GPT2_PATTERN,
    GPT2_EXACT,
);

/// One embedded OpenAI encoding.
#[derive(Debug)]
pub struct OpenAiEncoding {
    /// Its tiktoken name.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// Its ranks and regexes.
    pub model: &'static RankModel,
    /// Its special tokens with names of their own, in tiktoken's order.
    named_specials: &'static [SpecialToken],
    /// Ids whose special token is spelled `<|reserved_ID|>`, listed after the named ones.
    reserved_specials: std::ops::Range<u32>,
    /// The special tokens a user added ([`OpenAiEncoding::extended`]), also among the named ones;
    /// none for an embedded encoding.
    extra_specials: &'static [SpecialToken],
    /// The named and the reserved special tokens together, built on first use.
    all_specials: OnceLock<Vec<SpecialToken>>,
    /// Every special token's id and text, by id, built on first use: decoding looks up each id
    /// here, and o200k_harmony and a tekken file have over a thousand special tokens.
    specials_by_id: OnceLock<Vec<(u32, &'static str)>>,
    /// Every special token, as a set to find in texts, built on first use.
    special_set: OnceLock<SpecialSet>,
}

const fn special(text: &'static str, id: u32) -> SpecialToken {
    SpecialToken { text, id }
}

const fn encoding(
    name: &'static str,
    aliases: &'static [&'static str],
    model: &'static RankModel,
    named_specials: &'static [SpecialToken],
    reserved_specials: std::ops::Range<u32>,
) -> OpenAiEncoding {
    OpenAiEncoding {
        name,
        aliases,
        model,
        named_specials,
        reserved_specials,
        extra_specials: &[],
        all_specials: OnceLock::new(),
        specials_by_id: OnceLock::new(),
        special_set: OnceLock::new(),
    }
}

/// The largest id a special token added to an encoding may have: the tables of valid ids are as
/// long as the largest id, and no encoding comes near it (o200k_harmony's last is 201087).
pub const MAX_EXTRA_SPECIAL_ID: u32 = (1 << 24) - 1;

/// How many encodings are embedded.
pub const ENCODING_COUNT: usize = 6;

/// Every embedded encoding, in the order errors list them (the newest last).
pub static ENCODINGS: [OpenAiEncoding; ENCODING_COUNT] = [
    encoding(
        "o200k_base",
        &[],
        &O200K,
        &[
            special("<|endoftext|>", 199999),
            special("<|endofprompt|>", 200018),
        ],
        0..0,
    ),
    encoding(
        "cl100k_base",
        &[],
        &CL100K,
        &[
            special("<|endoftext|>", 100257),
            special("<|fim_prefix|>", 100258),
            special("<|fim_middle|>", 100259),
            special("<|fim_suffix|>", 100260),
            special("<|endofprompt|>", 100276),
        ],
        0..0,
    ),
    encoding(
        "p50k_base",
        &[],
        &P50K,
        &[special("<|endoftext|>", 50256)],
        0..0,
    ),
    encoding(
        "r50k_base",
        &["gpt2"],
        &R50K,
        &[special("<|endoftext|>", 50256)],
        0..0,
    ),
    // p50k_base's ranks and regex with the fill-in-the-middle tokens of the retired edit models.
    encoding(
        "p50k_edit",
        &[],
        &P50K,
        &[
            special("<|endoftext|>", 50256),
            special("<|fim_prefix|>", 50281),
            special("<|fim_middle|>", 50282),
            special("<|fim_suffix|>", 50283),
        ],
        0..0,
    ),
    // o200k_base's ranks and regex with the special tokens of OpenAI's harmony chat format.
    // tiktoken gives 200018 two names, `<|endofprompt|>` and `<|reserved_200018|>`; both encode
    // to it, and it decodes as the first, as tiktoken's does.
    encoding(
        "o200k_harmony",
        &[],
        &O200K,
        &[
            special("<|endoftext|>", 199999),
            special("<|endofprompt|>", 200018),
            special("<|startoftext|>", 199998),
            special("<|reserved_200000|>", 200000),
            special("<|reserved_200001|>", 200001),
            special("<|return|>", 200002),
            special("<|constrain|>", 200003),
            special("<|reserved_200004|>", 200004),
            special("<|channel|>", 200005),
            special("<|start|>", 200006),
            special("<|end|>", 200007),
            special("<|message|>", 200008),
            special("<|reserved_200009|>", 200009),
            special("<|reserved_200010|>", 200010),
            special("<|reserved_200011|>", 200011),
            special("<|call|>", 200012),
        ],
        200013..201088,
    ),
];

/// Finds an encoding by name or alias; an unknown name is an error listing the valid ones.
pub fn find(name: &str) -> Result<&'static OpenAiEncoding, Error> {
    ENCODINGS
        .iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
        .ok_or_else(|| {
            let valid: Vec<String> = ENCODINGS
                .iter()
                .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
                .map(|n| format!("'{n}'"))
                .collect();
            Error::new(
                ErrorKind::Load,
                format!(
                    "unknown encoding '{name}'; the embedded encodings are {}",
                    valid.join(", ")
                ),
            )
        })
}

impl OpenAiEncoding {
    /// Its special tokens, as tiktoken defines them, in tiktoken's order.
    pub fn specials(&self) -> &[SpecialToken] {
        if self.reserved_specials.is_empty() {
            return self.named_specials;
        }
        self.all_specials.get_or_init(|| {
            let reserved = self.reserved_specials.clone().map(|id| SpecialToken {
                // Leaked once per process: the encodings are statics, and their special tokens'
                // text is `&'static str` like the named ones'.
                text: Box::leak(format!("<|reserved_{id}|>").into_boxed_str()),
                id,
            });
            self.named_specials
                .iter()
                .cloned()
                .chain(reserved)
                .collect()
        })
    }

    /// Every special token, as a set to find in texts (`allowedSpecial: 'all'`); its automaton is
    /// built once.
    pub fn special_set(&self) -> SpecialSet {
        self.special_set
            .get_or_init(|| SpecialSet::new(self.specials().to_vec()))
            .clone()
    }

    /// The text of the special token `id`, if `id` is one.
    pub fn special_text(&self, id: u32) -> Option<&'static str> {
        let by_id = self.specials_by_id.get_or_init(|| {
            // o200k_harmony lists `<|endofprompt|>` and `<|reserved_200018|>` at one id; the
            // first listed names it, as the text a named token's id decodes to.
            let mut by_id: Vec<(u32, &'static str)> =
                self.specials().iter().map(|s| (s.id, s.text)).collect();
            by_id.sort_by_key(|&(id, _)| id);
            by_id.dedup_by_key(|&mut (id, _)| id);
            by_id
        });
        by_id
            .binary_search_by_key(&id, |&(id, _)| id)
            .ok()
            .map(|at| by_id[at].1)
    }

    /// The special tokens a user added to it ([`extended`](Self::extended)); none for an
    /// embedded encoding.
    pub fn extra_specials(&self) -> &[SpecialToken] {
        self.extra_specials
    }

    /// Checks `extra` as special tokens to add to this encoding, as tiktoken's
    /// `Encoding(special_tokens={**base, **extra})` and js-tiktoken's `extendSpecialTokens` add
    /// them; returns the ones it does not have yet, in id order. Each must have text, an id no
    /// ordinary token has, and an id and text no other special token has, except a token of the
    /// encoding given again with its own id.
    pub fn check_extra_specials(
        &self,
        extra: &[(String, u32)],
    ) -> Result<Vec<(String, u32)>, Error> {
        let table = self.model.table()?;
        let specials = self.specials();
        let out_of_range = |message: String| Error::new(ErrorKind::OutOfRange, message);
        let mut added: Vec<(String, u32)> = Vec::with_capacity(extra.len());
        for (text, id) in extra {
            if text.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidOption,
                    "a special token's text is empty; give each one its text, e.g. '<|im_start|>'",
                ));
            }
            if let Some(own) = specials.iter().find(|s| s.text == text) {
                if own.id == *id {
                    continue;
                }
                return Err(out_of_range(format!(
                    "{text:?} is {}'s special token {}, not {id}; leave it out to keep it",
                    self.name, own.id
                )));
            }
            if *id > MAX_EXTRA_SPECIAL_ID {
                return Err(out_of_range(format!(
                    "the id {id} of {text:?} is too large; an added special token's id is at most \
                     {MAX_EXTRA_SPECIAL_ID}"
                )));
            }
            if let Some(token) = table.token(*id) {
                return Err(out_of_range(format!(
                    "the id {id} of {text:?} is the ordinary token {:?} of {}, whose ordinary \
                     tokens have the ids below {}; give it an id no token has",
                    String::from_utf8_lossy(token),
                    self.name,
                    table.len()
                )));
            }
            let taken = specials
                .iter()
                .map(|s| (s.text, s.id))
                .chain(added.iter().map(|(t, i)| (t.as_str(), *i)))
                .find(|(_, taken)| taken == id);
            if let Some((other, _)) = taken {
                return Err(out_of_range(format!(
                    "the id {id} of {text:?} is already the special token {other:?}'s; give each \
                     special token an id of its own"
                )));
            }
            if added.iter().any(|(t, _)| t == text) {
                return Err(out_of_range(format!(
                    "{text:?} is given twice; give each special token once"
                )));
            }
            added.push((text.clone(), *id));
        }
        added.sort_by_key(|(_, id)| *id);
        Ok(added)
    }

    /// This encoding with the special tokens `extra` added (checked by
    /// [`check_extra_specials`](Self::check_extra_specials), in id order), sharing its ranks and
    /// engines. The new encoding and its tokens' text are leaked: special tokens' text is
    /// `&'static str` throughout, like the embedded ones'. `Tokenizer::from_encoding_with`
    /// keeps each encoding it makes and gives it again for the same tokens, so a process leaks
    /// one per distinct set it uses.
    pub fn extended(&'static self, extra: Vec<(String, u32)>) -> &'static OpenAiEncoding {
        let extra = leak_specials(extra);
        let named: Vec<SpecialToken> = self.named_specials.iter().chain(extra).cloned().collect();
        Box::leak(Box::new(OpenAiEncoding {
            name: self.name,
            aliases: self.aliases,
            model: self.model,
            named_specials: Box::leak(named.into_boxed_slice()),
            reserved_specials: self.reserved_specials.clone(),
            extra_specials: extra,
            all_specials: OnceLock::new(),
            specials_by_id: OnceLock::new(),
            special_set: OnceLock::new(),
        }))
    }

    /// The encoding of a rank file's `model` named `name`, with the special tokens `specials`
    /// (checked as [`check_extra_specials`](Self::check_extra_specials) checks added ones), as
    /// tiktoken's `Encoding(name, pat_str, mergeable_ranks, special_tokens)` makes one. Leaked,
    /// as [`extended`](Self::extended)'s are.
    pub fn from_rank_file(
        name: &'static str,
        model: &'static RankModel,
        specials: &[(String, u32)],
    ) -> Result<&'static OpenAiEncoding, Error> {
        let bare = encoding(name, &[], model, &[], 0..0);
        let specials = leak_specials(bare.check_extra_specials(specials)?);
        Ok(Box::leak(Box::new(OpenAiEncoding {
            named_specials: specials,
            ..bare
        })))
    }

    /// `valid[id]` is true for every id of an ordinary or special token.
    pub fn valid_ids(&'static self) -> Result<Vec<bool>, Error> {
        let table = self.model.table()?;
        let specials = self.specials();
        let size = specials
            .iter()
            .map(|s| s.id as usize + 1)
            .max()
            .unwrap_or(0)
            .max(table.len());
        let mut valid = vec![false; size];
        for (rank, valid) in valid.iter_mut().enumerate().take(table.len()) {
            *valid = table.token(rank as u32).is_some();
        }
        for s in specials {
            valid[s.id as usize] = true;
        }
        Ok(valid)
    }
}

/// Special tokens whose text lives as long as the embedded ones'.
fn leak_specials(specials: Vec<(String, u32)>) -> &'static [SpecialToken] {
    let specials: Vec<SpecialToken> = specials
        .into_iter()
        .map(|(text, id)| SpecialToken {
            text: Box::leak(text.into_boxed_str()),
            id,
        })
        .collect();
    Box::leak(specials.into_boxed_slice())
}

/// A tokenizer.json with only the pre-tokenizer (a `Split` on `pattern`) and the byte-level
/// decoder, read by the release candidate: the pipeline an encoding's model goes into.
fn skeleton(cut: Cut) -> Result<PipelineTokenizer, String> {
    let (behavior, invert) = if cut.matches_only {
        // Inverted, the text between matches is what `Removed` removes.
        ("Removed", true)
    } else {
        ("Isolated", false)
    };
    let skeleton = json!({
        "version": "2.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {
            "type": "Split",
            "pattern": { "Regex": cut.pattern },
            "behavior": behavior,
            "invert": invert,
        },
        "post_processor": null,
        "decoder": { "type": "ByteLevel" },
        // The release candidate cannot build a model with an empty vocabulary.
        "model": { "type": "BPE", "byte_level": false, "vocab": { "a": 0 }, "merges": [] },
    });
    tokenizers::from_json(&skeleton.to_string()).map_err(|e| e.to_string())
}

/// The `Split` pre-tokenizer that cuts as `cut` says.
fn split_pre_tokenizer(cut: Cut) -> Result<PipelinePreTokenizer, String> {
    Ok(skeleton(cut)?.get_pre_tokenizer().clone())
}

/// The contraction suffixes as tiktoken writes them, in cl100k_base's and o200k_base's patterns.
const CONTRACTIONS: &str = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";

/// The same suffixes as js-tiktoken writes them in its `ranks/*` files' `pat_str` (JS regexes had
/// no inline `(?i:…)`): each case spelled out. The two match the same texts but for `ſ` (U+017F),
/// which `(?i:…)` folds to `s` and this does not; texts with it go to the exact path
/// (`unicode_drift.rs`), which runs the pattern as given.
const JS_CONTRACTIONS: &str =
    "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)";

/// The spelling the release candidate runs on its own matcher of a rank file's `pattern`, where
/// `pattern` is one of tiktoken's: GPT-2's (r50k_base, p50k_base), cl100k_base's (also Llama 3's
/// `tokenizer.model`, written without possessive quantifiers) and o200k_base's, each as tiktoken,
/// js-tiktoken ([`JS_CONTRACTIONS`]) or a Hugging Face file writes it; or Qwen's, Mistral's Tekken
/// or Kimi K2's regex, as their files write them. The spellings split every text as tiktoken
/// does, but for the characters `unicode_drift.rs` sends to the exact path (they name the classes
/// cl100k_base's and o200k_base's do; `tests/engine/differential_fuzz.rs` fuzzes and sweeps each
/// against tiktoken-rs).
fn native_spelling(pattern: &str) -> Option<&'static str> {
    let pattern = pattern.replace(JS_CONTRACTIONS, CONTRACTIONS);
    let pattern = pattern.as_str();
    [
        (ungrouped(GPT2_EXACT), GPT2_PATTERN),
        (Some(GPT2_PATTERN), GPT2_PATTERN),
        (ungrouped(CL100K_EXACT), CL100K_PATTERN),
        (Some(CL100K_PATTERN), CL100K_PATTERN),
        (ungrouped(O200K_EXACT), O200K_PATTERN),
        (Some(QWEN_PATTERN), QWEN_PATTERN),
        (Some(TEKKEN_PATTERN), TEKKEN_PATTERN),
        (Some(KIMI_PATTERN), KIMI_PATTERN),
    ]
    .into_iter()
    .find(|(spelling, _)| *spelling == Some(pattern))
    .map(|(_, native)| native)
}

/// Whether a long text split by `pattern` may be cut at word gaps: `pattern` is one for which
/// `long_texts.rs` shows the cut is safe. Listed one by one, not read off `native_spelling`: a
/// pattern the release candidate's matcher comes to run is cut only once the argument has been
/// checked for it. A pattern of the user's own is left whole.
pub(super) fn cuts_safely(pattern: &str) -> bool {
    [
        GPT2_PATTERN,
        CL100K_PATTERN,
        O200K_PATTERN,
        QWEN_PATTERN,
        TEKKEN_PATTERN,
        KIMI_PATTERN,
    ]
    .contains(&pattern)
}

/// `pattern` in a non-capturing group, which no engine recognises as one of tiktoken's: the form
/// the exact path runs on `fancy-regex`.
fn grouped(pattern: &str) -> String {
    format!("(?:{pattern})")
}

/// The pattern inside a [`grouped`] one.
fn ungrouped(pattern: &str) -> Option<&str> {
    pattern.strip_prefix("(?:")?.strip_suffix(')')
}

/// The byte-level alphabet spelling of `bytes`, as a byte-level BPE vocabulary writes tokens.
fn byte_level(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| BYTES_CHAR_LOOKUP[b as usize])
        .collect()
}

/// A merge: the left and the right part of the token it forms.
type Merge<'t> = (&'t [u8], &'t [u8]);

/// The merges of `table` from their embedded form (`splits`, raw-deflated: for each rank, the length
/// of the left part of the merge that forms its token, 0 for none), in merge-rank order: the
/// merges [`derive_merges`] finds, which `scripts/embed-encodings.js` derives the same way.
fn embedded_merges<'t>(table: &'t RankTable, splits: &[u8]) -> Result<Vec<Merge<'t>>, String> {
    let splits = miniz_oxide::inflate::decompress_to_vec(splits)
        .map_err(|e| format!("its merges do not inflate: {e:?}"))?;
    if splits.len() != table.len() {
        return Err(format!("{} merges for {} ranks", splits.len(), table.len()));
    }
    let mut merges = Vec::with_capacity(table.len());
    for (rank, &split) in splits.iter().enumerate() {
        if split == 0 {
            continue;
        }
        match table.token(rank as u32) {
            Some(token) if (split as usize) < token.len() => {
                merges.push(token.split_at(split as usize));
            }
            _ => return Err(format!("rank {rank} has no merge at byte {split}")),
        }
    }
    Ok(merges)
}

/// Merges that make BPE by merge rank reproduce tiktoken's BPE by token rank.
///
/// tiktoken joins, at each step, the adjacent pair whose concatenation has the lowest rank (the
/// leftmost on a tie). Wherever a token forms inside a longer piece, the parts inside its span
/// evolve exactly as they do when the token's bytes are encoded alone: a merge across the span's
/// edge would have kept the token from forming. So a token forms by one merge only, the last merge
/// of encoding its own bytes, and only if that encoding ends as the token itself. Those merges,
/// ranked by the token's rank, are the whole merge list (about one per token; every cut of every
/// token would be twice as many, and the engine's load time grows with them).
///
/// An embedded encoding's engine is built from its embedded merges ([`embedded_merges`], which
/// the tests hold to this definition): the derivation takes a few hundred milliseconds for
/// o200k_base. A rank file's are derived, on the thread that builds its engine.
fn derive_merges(table: &RankTable) -> Vec<Merge<'_>> {
    let mut merges = Vec::with_capacity(table.len());
    let mut cuts = Vec::new();
    for rank in 0..table.len() as u32 {
        match table.token(rank) {
            Some(token) if token.len() >= 2 => {
                if let Some(last) = last_merge(token, table, &mut cuts) {
                    merges.push(last);
                }
            }
            _ => {}
        }
    }
    merges
}

/// Encodes `bytes` with tiktoken's BPE; if it ends as one token, returns the pair the last merge
/// joined. `cuts` is scratch space.
fn last_merge<'t>(bytes: &'t [u8], table: &RankTable, cuts: &mut Vec<usize>) -> Option<Merge<'t>> {
    cuts.clear();
    cuts.extend(0..=bytes.len());
    let mut last = None;
    while cuts.len() > 2 {
        let best = (0..cuts.len() - 2)
            .filter_map(|i| {
                table
                    .rank(&bytes[cuts[i]..cuts[i + 2]])
                    .map(|rank| (rank, i))
            })
            .min()?;
        let i = best.1;
        last = Some((
            &bytes[cuts[i]..cuts[i + 1]],
            &bytes[cuts[i + 1]..cuts[i + 2]],
        ));
        cuts.remove(i + 1);
    }
    last
}

/// The release candidate's `PipelineTokenizer` for an embedded encoding, built exactly as the
/// engine's. Not part of the API: `benchmark/scheduler.rs` uses it to time the release candidate's
/// own parallel batch encode on the same model as batchtok's scheduler.
#[doc(hidden)]
pub fn pipeline_tokenizer_for_benchmarks(name: &str) -> Result<PipelineTokenizer, String> {
    let model = find(name).map_err(|e| e.to_string())?.model;
    build_tokenizer(
        model.table().map_err(|e| e.to_string())?,
        model.merge_splits,
        model.pattern,
    )
}

/// A release-candidate engine of an encoding of its own, sharing no state with the one batchtok
/// serves. Not part of the API: `benchmark/scheduler.rs` gives each thread of its hand-sharded
/// contender one.
#[doc(hidden)]
pub struct IndependentEngine(PipelineEngine);

impl IndependentEngine {
    /// The engine, to encode with.
    pub fn engine(&self) -> &dyn Engine {
        &self.0
    }

    /// Drops its word caches, so that the next text meets it cold, as
    /// [`RankModel::forget_word_caches_for_benchmarks`] does for the served engine.
    pub fn forget_word_caches(&self) {
        self.0.forget_idle_scratches();
    }
}

/// An [`IndependentEngine`] of the encoding `name`. Not part of the API.
#[doc(hidden)]
pub fn independent_engine_for_benchmarks(name: &str) -> Result<IndependentEngine, String> {
    pipeline_tokenizer_for_benchmarks(name)
        .map(|tokenizer| IndependentEngine(PipelineEngine::from_tokenizer(tokenizer)))
}

/// The ordinary tokens of an embedded encoding as `(bytes, rank)` pairs, in rank order: the form
/// other engines take a rank table in. Not part of the API: `benchmark/anchors.rs` builds the
/// published engines it times from the same table as batchtok's.
#[doc(hidden)]
pub fn ranks_for_benchmarks(name: &str) -> Result<Vec<(Vec<u8>, u32)>, String> {
    let table = find(name)
        .map_err(|e| e.to_string())?
        .model
        .table()
        .map_err(|e| e.to_string())?;
    Ok((0..table.len() as u32)
        .filter_map(|rank| table.token(rank).map(|token| (token.to_vec(), rank)))
        .collect())
}

/// The release candidate's tokenizer of an encoding, built from its rank table.
///
/// The model is built directly from the vocabulary and the embedded merges: writing and re-reading them as a
/// tokenizer.json took over a second for o200k_base. The rest of the pipeline (the pre-tokenizer
/// on the encoding's regex, the byte-level decoder) is read from a small tokenizer.json whose model
/// is empty. Special tokens are not added tokens: the engine would renumber them densely from the
/// vocabulary's end (o200k_base's `<|endofprompt|>` is 200018, not 200000), so `special.rs` handles
/// them around the engine.
fn build_tokenizer(
    table: &RankTable,
    merge_splits: Option<&[u8]>,
    pattern: Cut,
) -> Result<PipelineTokenizer, String> {
    let skeleton = skeleton(pattern)?;
    let mut vocab = Vocab::with_capacity(table.len());
    for rank in 0..table.len() as u32 {
        // The empty token is left out: the engine's vocabulary holds what its merges can form.
        if let Some(token) = table.token(rank).filter(|token| !token.is_empty()) {
            vocab.insert(byte_level(token), rank);
        }
    }
    let merges = match merge_splits {
        Some(splits) => embedded_merges(table, splits)?,
        None => derive_merges(table),
    };
    let merges: Merges = merges
        .into_iter()
        .map(|(l, r)| (byte_level(l), byte_level(r)))
        .collect();
    let model = PipelineBPE::from_config(BpeConfig {
        vocab,
        merges,
        byte_level: true,
        ignore_merges: true,
        ..BpeConfig::default()
    })
    .map_err(|e| e.to_string())?;
    Ok(PipelineTokenizer::from_parts(
        AddedVocabulary::new(),
        Vec::new(),
        skeleton.get_pre_tokenizer().clone(),
        PipelineModel::BPE(model),
        PipelinePostProcessor::default(),
        skeleton.get_decoder().cloned(),
        BTreeMap::new(),
        None,
        None,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded encodings' patterns name no class that tells a symbol from an unassigned
    /// code point, so their models leave the symbols Unicode 17 adds on the fast path; a rank
    /// file's pattern is read when it is loaded.
    #[test]
    fn embedded_patterns_read_new_symbols_alike() {
        for model in [&O200K, &CL100K, &P50K, &R50K] {
            assert_eq!(
                model.routed.new_symbols,
                unicode_drift::symbols::pattern_tells_apart(model.exact_pattern.pattern),
                "{}",
                model.name
            );
        }
        assert!(unicode_drift::symbols::pattern_tells_apart(KIMI_PATTERN));
    }

    /// The embedded merges are the ones `derive_merges` finds, for every table.
    #[test]
    fn embedded_merges_equal_the_derivation() {
        for model in [&O200K, &CL100K, &P50K, &R50K] {
            let table = model.table().unwrap();
            let embedded = embedded_merges(table, model.merge_splits.unwrap()).unwrap();
            let derived = derive_merges(table);
            assert_eq!(embedded.len(), derived.len(), "{}", model.name);
            assert!(embedded == derived, "{}: the merges differ", model.name);
        }
    }

    /// js-tiktoken's `pat_str`s for cl100k_base and o200k_base (its `ranks/*.js`, version 1.0.21)
    /// run natively as tiktoken's spellings do; any other change to a pattern does not.
    #[test]
    fn js_tiktoken_spellings_run_natively() {
        let cl100k = r"('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
        let o200k = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";
        assert_eq!(native_spelling(cl100k), Some(CL100K_PATTERN));
        assert_eq!(native_spelling(o200k), Some(O200K_PATTERN));
        let fewer_cases = cl100k.replace("|'LL", "");
        assert_eq!(native_spelling(&fewer_cases), None);
        assert_eq!(native_spelling(&cl100k.replace("{1,3}", "{1,4}")), None);
    }

    /// Every special token, named or reserved, is found by its id, and nothing else is.
    #[test]
    fn special_tokens_are_found_by_id() {
        let harmony = find("o200k_harmony").unwrap();
        for special in harmony.specials() {
            let first = harmony
                .specials()
                .iter()
                .find(|s| s.id == special.id)
                .unwrap();
            assert_eq!(harmony.special_text(special.id), Some(first.text));
        }
        assert_eq!(harmony.special_text(200018), Some("<|endofprompt|>"));
        assert!(harmony.specials().len() > 1000);
        assert_eq!(harmony.special_text(0), None);
        assert_eq!(harmony.special_text(u32::MAX), None);
        assert_eq!(
            find("r50k_base").unwrap().special_text(50256),
            Some("<|endoftext|>")
        );
    }

    /// Added special tokens are checked against the encoding's tokens: a token of its own given
    /// with its own id is left out, the rest come back in id order; an id or text taken is refused.
    #[test]
    fn extra_special_tokens_are_checked_against_the_encoding() {
        let cl100k = find("cl100k_base").unwrap();
        let token = |text: &str, id: u32| (text.to_owned(), id);
        let added = cl100k
            .check_extra_specials(&[
                token("<|im_end|>", 100265),
                token("<|endoftext|>", 100257),
                token("<|im_start|>", 100264),
            ])
            .unwrap();
        assert_eq!(
            added,
            [token("<|im_start|>", 100264), token("<|im_end|>", 100265)]
        );
        let refused = |extra: &[(String, u32)]| cl100k.check_extra_specials(extra).unwrap_err();
        assert_eq!(refused(&[token("x", 5)]).kind(), ErrorKind::OutOfRange);
        assert!(
            refused(&[token("x", 100276)])
                .to_string()
                .contains("<|endofprompt|>")
        );
        assert!(
            refused(&[token("a", 100300), token("b", 100300)])
                .to_string()
                .contains("\"a\"")
        );
        assert!(
            refused(&[token("a", 100300), token("a", 100301)])
                .to_string()
                .contains("twice")
        );
        assert!(
            refused(&[token("<|endoftext|>", 100300)])
                .to_string()
                .contains("100257")
        );
        assert!(
            refused(&[token("x", MAX_EXTRA_SPECIAL_ID + 1)])
                .to_string()
                .contains("too large")
        );
        assert_eq!(
            refused(&[token("", 100300)]).kind(),
            ErrorKind::InvalidOption
        );
        let extended = cl100k.extended(added);
        assert_eq!(extended.extra_specials().len(), 2);
        assert_eq!(extended.specials().len(), cl100k.specials().len() + 2);
        assert!(std::ptr::eq(extended.model, cl100k.model));
    }

    /// Merges that do not fit the table are refused with a reason, not built from.
    #[test]
    fn merges_that_do_not_fit_the_table_are_refused() {
        let table = O200K.table().unwrap();
        let deflate = |splits: &[u8]| miniz_oxide::deflate::compress_to_vec(splits, 6);
        let short = embedded_merges(table, &deflate(&[0; 3])).unwrap_err();
        assert!(short.contains("merges for"), "{short}");
        // Rank 0 is a single byte: no merge can split it.
        let mut splits = vec![0; table.len()];
        splits[0] = 1;
        let inside = embedded_merges(table, &deflate(&splits)).unwrap_err();
        assert!(inside.contains("rank 0 has no merge"), "{inside}");
        assert!(embedded_merges(table, b"not deflate").is_err());
    }

    /// A text cut at every word gap (`long_texts.rs`) encodes, part after part, to the ids of the
    /// whole text, on each engine of each pattern that is cut: the embedded encodings' and the
    /// rank files' patterns the release candidate's matcher runs (on o200k_base's table).
    #[test]
    fn a_text_cut_at_every_word_gap_encodes_as_the_whole_text() {
        use super::super::long_texts::Cuts;
        use super::super::test_fixtures::corpus_texts;
        use super::super::{Ids, Scratch};

        let mut texts = corpus_texts();
        texts.extend(
            [
                "a b",
                "A B",
                "it's dog",
                "it 's dog",
                "x  y",
                "word \n next",
                "HELLO World",
                "don't stop",
                "DON'T STOP",
                "a 1 b",
                "zz\u{301} e",
                "e \u{301}x",
                "a b c d",
                "Ab Cd",
                "ab Cd",
                "AB cd",
                "over  the\t\tlazy dog.  \n\n  Then a b",
                "中文。中文「引用」好，好",
                "Привет, мир! Ελλάδα; עברית.",
                "a\u{2019}s don\u{2019}t",
                "e\u{301}. x\u{301}) y",
                "a=\u{338}b <\u{338}c",
                "ab\r\ncd\u{3000}ef\u{a0}gh",
                "中\u{2e80}文〇字々",
                "HELLO,World;ABC.Def",
                "x\u{200d}. y",
            ]
            .map(str::to_owned),
        );
        let ids = |engine: &dyn Engine, pieces: &mut dyn Iterator<Item = &str>| {
            let (mut scratch, mut out) = (Scratch::new(), Ids::with_capacity(0));
            for piece in pieces {
                engine
                    .encode_into(piece, false, false, &mut scratch, &mut out)
                    .unwrap();
            }
            out.as_slice().to_vec()
        };
        let o200k_table = || RankTable::new(O200K.table().unwrap().compact().to_vec()).unwrap();
        let mut models: Vec<&'static RankModel> = vec![&O200K, &CL100K, &P50K, &R50K];
        for pattern in [QWEN_PATTERN, TEKKEN_PATTERN, KIMI_PATTERN] {
            models.push(RankModel::from_rank_file("cut", o200k_table(), pattern).unwrap());
        }
        for model in models {
            assert!(model.cuts_at_word_gaps(), "{}", model.pattern.pattern);
            assert!(
                cuts_safely(model.pattern.pattern),
                "{}",
                model.pattern.pattern
            );
            let engines: [(&str, &dyn Engine); 3] = [
                ("first", model.first_engine().unwrap()),
                ("exact", model.exact_engine().unwrap()),
                ("full", model.full_engine().unwrap()),
            ];
            for (engine_name, engine) in engines {
                let mut cut_texts = 0;
                for text in &texts {
                    let cut = ids(engine, &mut Cuts::EVERY_WORD_GAP.parts(text, 1));
                    let whole = ids(engine, &mut std::iter::once(text.as_str()));
                    assert!(
                        cut == whole,
                        "{} {engine_name}: {text:?} cut as {:?}",
                        model.pattern.pattern,
                        Cuts::EVERY_WORD_GAP.parts(text, 1).collect::<Vec<_>>()
                    );
                    cut_texts += usize::from(Cuts::EVERY_WORD_GAP.parts(text, 1).nth(1).is_some());
                }
                assert!(
                    cut_texts > 50,
                    "{engine_name}: only {cut_texts} texts had a word gap"
                );
            }
        }
        let own = RankModel::from_rank_file("own", o200k_table(), r"\S+|\s+").unwrap();
        assert!(!own.cuts_at_word_gaps());
    }

    /// A tokenizer.json that splits text as a pattern that is cut does (`long_texts.rs`) encodes a
    /// text cut at every word gap, part after part, to the ids of the whole, with and without
    /// template tokens and with special-token text split out or not, never inside an added token;
    /// one whose normalizer, pre-tokenizer, template, truncation or added tokens read across a cut
    /// is not cut, and for each, a cut would change the ids.
    #[test]
    fn a_tokenizer_json_cut_at_every_word_gap_encodes_as_the_whole_text() {
        use serde_json::{Value, json};

        use super::super::long_texts::{Cuts, DEEPSEEK_V3_SPLITS, PART_BYTES};
        use super::super::test_fixtures::{corpus_texts, root};
        use super::super::{AllowedSpecial, Ids, Scratch, Tokenizer};

        let gpt2: Value = serde_json::from_str(
            &std::fs::read_to_string(root().join("__test__/fixtures/tokenizers/gpt2.json"))
                .unwrap(),
        )
        .unwrap();
        let split_by = |pattern: &str, behavior: &str, invert: bool| {
            json!({"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior,
                 "invert": invert},
                {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                 "use_regex": false},
            ]})
        };
        let digits_before_byte_level = |individual_digits: bool| {
            json!({"type": "Sequence", "pretokenizers": [
                {"type": "Digits", "individual_digits": individual_digits},
                {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                 "use_regex": true},
            ]})
        };
        let added = |content: &str, lstrip: bool, rstrip: bool| {
            json!({"id": 50257, "content": content, "single_word": false, "lstrip": lstrip,
                   "rstrip": rstrip, "normalized": false, "special": false})
        };
        let add_token = |file: &mut Value, token: Value| {
            file["added_tokens"].as_array_mut().unwrap().push(token);
        };
        let file = |edit: &dyn Fn(&mut Value)| {
            let mut file = gpt2.clone();
            edit(&mut file);
            let tokenizer = Tokenizer::from_json(&file.to_string(), "cut").unwrap();
            tokenizer.wait_until_ready().unwrap();
            tokenizer
        };
        let cut = [
            ("byte-level over GPT-2's pattern", file(&|_| {})),
            (
                "cl100k_base's, isolated",
                file(&|f| f["pre_tokenizer"] = split_by(CL100K_PATTERN, "Isolated", false)),
            ),
            (
                "o200k_base's, removed inverted, NFC",
                file(&|f| {
                    f["pre_tokenizer"] = split_by(O200K_PATTERN, "Removed", true);
                    f["normalizer"] = json!({"type": "NFC"});
                }),
            ),
            (
                "Qwen's, NFKC in a sequence",
                file(&|f| {
                    f["pre_tokenizer"] = split_by(QWEN_PATTERN, "Isolated", false);
                    f["normalizer"] =
                        json!({"type": "Sequence", "normalizers": [{"type": "NFKC"}]});
                }),
            ),
            (
                "Tekken's, an added token that takes the space before it",
                file(&|f| {
                    f["pre_tokenizer"] = split_by(TEKKEN_PATTERN, "Isolated", false);
                    add_token(f, added("hello", true, false));
                }),
            ),
            (
                "an added token holding word gaps",
                file(&|f| add_token(f, added("say, hello", false, false))),
            ),
            (
                "digits, one at a time, before GPT-2's byte-level split",
                file(&|f| f["pre_tokenizer"] = digits_before_byte_level(true)),
            ),
            (
                "runs of digits before GPT-2's byte-level split",
                file(&|f| f["pre_tokenizer"] = digits_before_byte_level(false)),
            ),
            (
                "DeepSeek V3's three splits",
                file(&|f| {
                    let splits = DEEPSEEK_V3_SPLITS.map(|pattern| {
                        json!({"type": "Split", "pattern": {"Regex": pattern},
                               "behavior": "Isolated", "invert": false})
                    });
                    f["pre_tokenizer"] = split_by(DEEPSEEK_V3_SPLITS[2], "Isolated", false);
                    f["pre_tokenizer"]["pretokenizers"]
                        .as_array_mut()
                        .unwrap()
                        .splice(0..1, splits);
                    f["normalizer"] = json!({"type": "Sequence", "normalizers": []});
                }),
            ),
        ];
        let mut texts: Vec<String> = corpus_texts().into_iter().step_by(5).collect();
        texts.extend(
            [
                "say hello world",
                "hello <|endoftext|> hello",
                "x hello y",
                "ab Cd <|endoftext|>zz e",
                "they say, hello. say, hellos",
                "中文。中文「引用」好，好 Привет, мир!",
                "a\u{2019}s e\u{301}. x=\u{338}y",
                "e\u{301} x\u{301}",
                "over  the\t\tlazy dog.  \n\n  Then a b",
                "カタ・カナ、ひら゛がな 日本語・テキスト。漢字゠かな",
                "a\u{bd}\u{bd}\u{bd}\u{bd} b\u{b2}1234 x12345.y \u{2167}x",
                "x.ab,Cd;\u{e9}f z!!a",
            ]
            .map(str::to_owned),
        );
        for (name, tokenizer) in &cut {
            assert_eq!(
                tokenizer.last_safe_cut(b"x y", 0, true, false),
                Some(1),
                "{name}"
            );
            for add_special_tokens in [false, true] {
                for ordinary in [false, true] {
                    let mode = tokenizer
                        .encode_mode(Some(add_special_tokens), &AllowedSpecial::None)
                        .unwrap()
                        .with_special_text_as_ordinary(ordinary);
                    let cuts = tokenizer.cuts(add_special_tokens).unwrap();
                    let mut cut_texts = 0;
                    for text in &texts {
                        let whole = tokenizer.encode(text, &mode).unwrap().as_slice().to_vec();
                        let cut: Vec<u32> = cuts
                            .parts(text, 1)
                            .flat_map(|part| {
                                tokenizer.encode(part, &mode).unwrap().as_slice().to_vec()
                            })
                            .collect();
                        assert!(
                            cut == whole,
                            "{name}: {text:?} cut as {:?}",
                            cuts.parts(text, 1).collect::<Vec<_>>()
                        );
                        cut_texts += usize::from(cuts.parts(text, 1).nth(1).is_some());
                    }
                    assert!(
                        cut_texts > 50,
                        "{name}: only {cut_texts} texts had a word gap"
                    );
                }
            }
        }
        let bos_template = json!({
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256],
                                                 "tokens": ["<|endoftext|>"]}},
        });
        let not_cut = [
            (
                "Lowercase",
                file(&|f| f["normalizer"] = json!({"type": "Lowercase"})),
            ),
            (
                "a template with a BOS",
                file(&|f| f["post_processor"] = bos_template.clone()),
            ),
            (
                "a truncation",
                file(&|f| {
                    f["truncation"] = json!({"direction": "Right", "max_length": 512,
                                             "strategy": "LongestFirst", "stride": 0});
                }),
            ),
            (
                "an added token ending in a letter that takes the space after it",
                file(&|f| add_token(f, added("hello", false, true))),
            ),
            (
                "a single-word added token beginning with a space",
                file(&|f| {
                    let mut token = added(" hi", false, false);
                    token["single_word"] = json!(true);
                    add_token(f, token);
                }),
            ),
            (
                "a normalized added token holding a word gap, under NFKC",
                file(&|f| {
                    f["normalizer"] = json!({"type": "NFKC"});
                    let mut token = added("ab cd", false, false);
                    token["normalized"] = json!(true);
                    add_token(f, token);
                }),
            ),
            (
                "a byte-level step that adds a space before a text",
                file(&|f| f["pre_tokenizer"]["add_prefix_space"] = json!(true)),
            ),
            (
                "a pattern of its own",
                file(&|f| f["pre_tokenizer"] = split_by(r"\S+|\s+", "Isolated", false)),
            ),
            (
                "a split that removes the matches",
                file(&|f| f["pre_tokenizer"] = split_by(CL100K_PATTERN, "Removed", false)),
            ),
            (
                "two splits",
                file(&|f| {
                    let mut sequence = split_by(CL100K_PATTERN, "Isolated", false);
                    let split = sequence["pretokenizers"][0].clone();
                    sequence["pretokenizers"]
                        .as_array_mut()
                        .unwrap()
                        .insert(0, split);
                    f["pre_tokenizer"] = sequence;
                }),
            ),
        ];
        let not_cut_file = |name: &str| &not_cut.iter().find(|(each, _)| *each == name).unwrap().1;
        for (name, tokenizer) in &not_cut {
            assert_eq!(
                tokenizer.last_safe_cut(b"x y", 0, true, false),
                None,
                "{name}"
            );
            // Without its template tokens, the file with a BOS is cut.
            let without = tokenizer.last_safe_cut(b"x y", 0, false, false);
            assert_eq!(
                without.is_some(),
                *name == "a template with a BOS",
                "{name}"
            );
        }
        let bos = not_cut_file("a template with a BOS");
        let bos_cuts = bos.cuts(false).unwrap();
        let without_template = bos.encode_mode(Some(false), &AllowedSpecial::None).unwrap();
        for text in &texts {
            let whole = bos
                .encode(text, &without_template)
                .unwrap()
                .as_slice()
                .to_vec();
            let cut: Vec<u32> = bos_cuts
                .parts(text, 1)
                .flat_map(|part| {
                    bos.encode(part, &without_template)
                        .unwrap()
                        .as_slice()
                        .to_vec()
                })
                .collect();
            assert!(cut == whole, "BOS, without: {text:?}");
        }
        // A text longer than a part, which `encode` cuts itself, encodes as the stable engine
        // encodes it whole.
        let joined = texts.join(" ");
        let long = joined.repeat(PART_BYTES / joined.len() + 2);
        let cut_long = cut.iter().map(|(name, tokenizer)| (*name, tokenizer, true));
        let bos_long = [("BOS, without", bos, false), ("BOS, with", bos, true)];
        for (name, tokenizer, add) in cut_long.chain(bos_long) {
            let mode = tokenizer
                .encode_mode(Some(add), &AllowedSpecial::None)
                .unwrap();
            let stable = tokenizer.fallback_engine().unwrap();
            let (mut scratch, mut whole) = (Scratch::new(), Ids::with_capacity(0));
            stable
                .encode_into(&long, add, true, &mut scratch, &mut whole)
                .unwrap();
            assert!(
                tokenizer.encode(&long, &mode).unwrap().as_slice() == whole.as_slice(),
                "{name}"
            );
        }
        // Each file that reads across a cut: cut at every word gap, a text's ids are not its
        // parts'.
        for (name, text) in [
            ("a template with a BOS", "a b"),
            (
                "an added token ending in a letter that takes the space after it",
                "say hello world",
            ),
            ("a single-word added token beginning with a space", "x hi"),
            (
                "a normalized added token holding a word gap, under NFKC",
                "\u{ff41}b cd",
            ),
            ("a byte-level step that adds a space before a text", "a,b"),
        ] {
            let tokenizer = not_cut_file(name);
            let mode = tokenizer
                .encode_mode(Some(true), &AllowedSpecial::None)
                .unwrap();
            let whole = tokenizer.encode(text, &mode).unwrap().as_slice().to_vec();
            let cut: Vec<u32> = Cuts::EVERY_WORD_GAP
                .parts(text, 1)
                .flat_map(|part| tokenizer.encode(part, &mode).unwrap().as_slice().to_vec())
                .collect();
            assert_ne!(cut, whole, "{name}");
        }
    }
}
