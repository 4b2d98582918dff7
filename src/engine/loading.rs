//! Loading a Hugging Face tokenizer.json: ready to encode as soon as one engine is built.
//!
//! The two engines cost very different amounts to build. The stable engine is read in less than
//! the time Python `tokenizers`' `from_file` takes (the same crate, its BPE model read without the
//! crate's generic detours: `stable_reader.rs`); the release candidate's reader builds more tables
//! (its BPE merge tables and their perfect hash) and takes two to three times as long, on top of
//! the upgrade of an older file to its canonical form (`benchmark/results/load.md`). So a load builds the stable engine on the caller's thread and
//! the release candidate on a thread of its own, started first so that the two builds overlap:
//! the tokenizer is returned, and encodes, once the stable engine is built, and every text goes to
//! the stable engine, the reference itself, until the release candidate is built and its route
//! settled. From then on each text goes where the route sends it, as if the release candidate had
//! been there from the start. The embedded OpenAI encodings do the same with their rank-table
//! engine (`openai.rs`).
//!
//! Ids never depend on which engine happened to be built when a text came: the stable engine gives
//! the reference's ids for every text, and the route hands the release candidate only the texts it
//! encodes exactly (`routing.rs`). What the timing changes is speed alone; `wait_until_ready`
//! (`whenReady()` in JS) waits for the build.
//!
//! Where the stable crate cannot read a file that the release candidate can, the load waits for the
//! release candidate and the tokenizer runs on it alone, as before.

use std::sync::{Arc, OnceLock};

use super::adapter;
use super::file_tree::FileTree;
use super::leading_drop::LeadingDrop;
use super::model_config::SpecialTokens;
use super::outline::Outline;
use super::pipeline::{PipelineEngine, PreparedFile};
use super::routing::{Route, StableNeeded};
use super::stable::StableEngine;
use super::unicode_drift;
use super::{Error, ErrorKind};

/// The longest token, in UTF-8 bytes, handed to the release candidate. Its vocabulary store
/// panics on a token over 65535 bytes, and it may hold a token in its byte-level form, up to twice
/// the UTF-8 length; half the limit is therefore safe. No real tokenizer has tokens anywhere near
/// this long, so the stable engine (exact, slower) loses nothing by taking such a file.
pub(super) const PIPELINE_MAX_TOKEN_BYTES: usize = 65535 / 2;

/// The largest id handed to the release candidate. Its BPE loader fills a table of one `u32` per
/// id up to the largest (64 MiB at this bound); real vocabularies end far below it (the largest
/// known have a few hundred thousand tokens), and a file beyond it goes to the stable engine.
const PIPELINE_MAX_ID: u32 = (1 << 24) - 1;

/// How far the release candidate's build thread lowers its own priority (Linux's nice value,
/// added to the process's). Where the caller's thread and the build compete for one core (a busy
/// machine, a container with one CPU), the caller's thread, which the load waits for, gets most of
/// it: measured with `benchmark/load_stages.rs` on a loaded 2-core machine, the load's wall time
/// was twice its CPU time while the two threads had equal priority. Where cores are free, it
/// changes nothing. A bulk job that starts encoding at once awaits `whenReady()` first, so that
/// its threads do not leave the build waiting.
const BUILD_THREAD_NICENESS: i32 = 10;

/// Lowers the calling thread's priority by [`BUILD_THREAD_NICENESS`]; on Linux a nice value
/// belongs to a thread, not to the process. Elsewhere it leaves the priority as it is: there the
/// call would change the whole process's.
fn yield_to_the_callers_thread() {
    #[cfg(target_os = "linux")]
    {
        unsafe extern "C" {
            fn nice(increment: i32) -> i32;
        }
        // SAFETY: `nice` takes an integer and touches no memory of ours; on Linux it changes the
        // calling thread's nice value alone (glibc and musl call `setpriority` for thread 0, the
        // caller). A failure leaves the priority as it was, which is harmless.
        unsafe {
            nice(BUILD_THREAD_NICENESS);
        }
    }
}

/// A lookup table costs a byte per id up to the largest, a sorted list four bytes per token; the
/// table is kept while it is at most this many times the list's size, so a vocabulary that
/// declares a few ids near 2^32 costs memory by its number of tokens, not by the value of its ids.
const DENSE_TABLE_MAX_WASTE: usize = 16;

/// The ids `decode` accepts.
#[derive(Debug, Clone)]
pub(super) enum ValidIds {
    /// `table[id]`: whether `id` is valid; for vocabularies whose ids are (nearly) dense.
    Table(Vec<bool>),
    /// Every valid id, sorted and without duplicates; for sparse ids. Never empty.
    Sorted(Vec<u32>),
}

impl ValidIds {
    /// The valid ids of a vocabulary, in whatever order and with whatever repetitions it lists them.
    pub(super) fn from_ids(mut ids: Vec<u32>) -> ValidIds {
        ids.sort_unstable();
        ids.dedup();
        match ids.last() {
            Some(&largest) if (largest as usize) / DENSE_TABLE_MAX_WASTE >= ids.len() * 4 => {
                ValidIds::Sorted(ids)
            }
            largest => {
                let mut table = vec![false; largest.map_or(0, |&id| id as usize + 1)];
                for id in ids {
                    table[id as usize] = true;
                }
                ValidIds::Table(table)
            }
        }
    }

    /// Whether `id` is valid.
    pub(super) fn contains(&self, id: u32) -> bool {
        match self {
            ValidIds::Table(table) => table.get(id as usize).copied().unwrap_or(false),
            ValidIds::Sorted(ids) => ids.binary_search(&id).is_ok(),
        }
    }

    /// The largest valid id, if any.
    pub(super) fn largest(&self) -> Option<u32> {
        match self {
            ValidIds::Table(table) => table.iter().rposition(|&valid| valid).map(|id| id as u32),
            ValidIds::Sorted(ids) => ids.last().copied(),
        }
    }
}

/// The ids a tokenizer's `decode` accepts and how many tokens it has.
#[derive(Debug)]
pub(super) struct VocabularyIds {
    /// The ids `decode` accepts.
    pub valid: ValidIds,
    /// How many tokens the vocabulary has, added tokens included, as Python `tokenizers`'
    /// `get_vocab_size(with_added_tokens=True)` counts them (see `vocabulary.rs`).
    pub size: usize,
}

/// What the release-candidate build settles: the engine, where it read the file, and the route.
pub(super) struct Settled {
    /// The release candidate, where it read the file (kept where the route sends every text to the
    /// stable engine after comparing the two: its file sections still answer for the file).
    pub pipeline: Option<PipelineEngine>,
    /// Which engine encodes what.
    pub route: Route,
    /// The file tells a symbol from an unassigned code point (`unicode_drift::symbols`): a text
    /// holding a symbol Unicode 17 adds goes to the stable engine on a pipeline route.
    new_symbols: bool,
    /// The file's `Metaspace` prepends to the first piece only, behind a normalizer: a text whose
    /// first character that normalizer removes goes to the stable engine (`leading_drop.rs`).
    leading_drop: Option<LeadingDrop>,
    /// The vocabulary as the file's outline gives it, where the route trusts the outline (the
    /// release candidate encodes the tokenizer's texts and numbers the added tokens as declared);
    /// moved to [`Engines::vocabulary`] before the build settles.
    outline_vocabulary: Option<VocabularyIds>,
    /// Whether the route trusts the outline's numbering of the added tokens, without comparing
    /// it with the stable crate's.
    #[cfg_attr(not(test), allow(dead_code))]
    pub trusts_outline: bool,
    /// batchtok's own parse of the file failed: the load error, should the stable crate fail too.
    unparsed: Option<Error>,
}

impl Settled {
    /// A route that sends every text to the stable engine, with no release candidate.
    fn stable(route: Route) -> Settled {
        Settled {
            pipeline: None,
            route,
            new_symbols: true,
            leading_drop: None,
            outline_vocabulary: None,
            trusts_outline: false,
            unparsed: None,
        }
    }

    /// Whether `text` goes to the stable engine (see `routing.rs`).
    #[inline]
    pub fn wants_stable(&self, text: &str) -> bool {
        self.route.wants_stable(text, self.new_symbols)
            || self
                .leading_drop
                .as_ref()
                .is_some_and(|check| check.drops_first_character(text))
    }

    /// The route in words, with the texts a first-piece `Metaspace` sends to the stable engine.
    pub fn describe(&self) -> String {
        let route = self.route.describe();
        match (&self.route, &self.leading_drop) {
            (Route::Stable { .. }, _) | (_, None) => route,
            (_, Some(_)) => format!(
                "{route}; a text whose first character the normalizer removes goes to tokenizers \
                 0.23, since its Metaspace prepends \u{2581} only where the first piece begins \
                 at the text's start, which the 1.0 release candidate judges before normalizing"
            ),
        }
    }

    /// Whether the release candidate encodes every ordinary text, so that the tokenizer works
    /// without the stable engine.
    fn needs_no_stable_engine(&self) -> bool {
        self.pipeline.is_some() && !matches!(self.route, Route::Stable { .. })
    }
}

/// A tokenizer's engines and what its load learns of the file, some of it filled in by the
/// release candidate's build on a thread of its own. Every part is set once and never changes;
/// readers on any thread see a part either absent or whole.
pub(super) struct Engines {
    /// The stable engine: `None` inside where the stable crate could not read the file, or the
    /// tokenizer has none (the OpenAI encodings). Set by the loading thread once it is built.
    stable: OnceLock<Option<StableEngine>>,
    /// The release candidate and the route, once built.
    settled: OnceLock<Settled>,
    /// What the tokenizer.json says of its special tokens, once parsed (default where it could
    /// not be); always set before `settled`.
    file_special_tokens: OnceLock<SpecialTokens>,
    /// The valid ids and the vocabulary size, computed on first use or by the build.
    vocabulary: OnceLock<VocabularyIds>,
}

impl Engines {
    /// An OpenAI encoding's: no engine here (they belong to its `RankModel`), its ids known.
    pub fn for_encoding(vocabulary: VocabularyIds) -> Engines {
        Engines {
            stable: OnceLock::from(None),
            settled: OnceLock::from(Settled::stable(Route::Pipeline)),
            file_special_tokens: OnceLock::from(SpecialTokens::default()),
            vocabulary: OnceLock::from(vocabulary),
        }
    }

    /// Loads a tokenizer.json: starts the release candidate's build on a thread of its own, builds
    /// the stable engine on this one, and returns once the stable engine is built (or, where the
    /// stable crate refuses the file, once the release candidate is). `origin` names the file in
    /// errors.
    pub fn load(json: String, origin: &str) -> Result<Arc<Engines>, Error> {
        let engines = Arc::new(Engines {
            stable: OnceLock::new(),
            settled: OnceLock::new(),
            file_special_tokens: OnceLock::new(),
            vocabulary: OnceLock::new(),
        });
        let json = Arc::new(json);
        let builder = {
            let (engines, json, origin) =
                (Arc::clone(&engines), Arc::clone(&json), origin.to_owned());
            std::thread::Builder::new()
                .name("batchtok-load".to_owned())
                .spawn(move || {
                    yield_to_the_callers_thread();
                    engines.build_release_candidate(json, &origin)
                })
        };
        let stable = StableEngine::from_json(&json);
        let built_here = builder.is_err().then(|| Arc::clone(&json));
        drop(json);
        let refused = stable.as_ref().err().cloned();
        // The build's thread waits for this where it must compare the engines: set on every path.
        let _ = engines.stable.set(stable.ok());
        // What the stable build freed (the builders' intermediate tables) goes back to the OS:
        // mimalloc would keep it cached for this thread, which may never allocate as much again
        // (Node's main thread, a libuv thread). Each real file held 2-4 times its lasting size
        // without it (`benchmark/results/load.md`).
        crate::allocator::release_memory();
        if let Some(json) = built_here {
            // No thread to be had: build it here, as a load did before.
            engines.build_release_candidate(json, origin);
        }
        let Some(why) = refused else {
            return Ok(engines);
        };
        let settled = engines.settled.wait();
        if settled.needs_no_stable_engine() {
            return Ok(engines);
        }
        Err(settled.unparsed.clone().unwrap_or_else(|| {
            Error::new(
                ErrorKind::Load,
                format!(
                    "{origin} is not a tokenizer.json that Hugging Face tokenizers can read: {why}"
                ),
            )
        }))
    }

    /// The release candidate's build and the route; sets `settled` on every path, a panic
    /// included, so nothing waits for it forever.
    fn build_release_candidate(&self, json: Arc<String>, origin: &str) {
        let mut settled = super::error::refusing_panics(|| self.settle(json, origin))
            .unwrap_or_else(|panic| {
                Settled::stable(Route::stable_because(super::error::with_panic_text(
                    "it panicked while reading the file",
                    &*panic,
                )))
            });
        let _ = self.file_special_tokens.set(SpecialTokens::default());
        let outline_vocabulary = settled.outline_vocabulary.take();
        // What the build freed (the parsed file, the builders' tables) goes back to the OS, as
        // the caller's thread does in `load`: this thread ends next. Before `whenReady()`
        // resolves, so that the process is at its lasting size by then.
        crate::allocator::release_memory();
        let _ = self.settled.set(settled);
        // Computed here rather than at the first `decode` or vocabulary question, which would pay
        // for it on the caller's thread.
        match outline_vocabulary {
            Some(vocabulary) => {
                let _ = self.vocabulary.set(vocabulary);
            }
            None => {
                if let Some(stable) = self.stable.wait() {
                    self.vocabulary.get_or_init(|| stable_vocabulary(stable));
                }
            }
        }
    }

    /// Reads the file for the release candidate and settles the route: one parse, whose tree the
    /// release candidate's reader and batchtok's outline (ids, added tokens) both take; the BPE
    /// merges stay text until the reader takes them (`file_tree.rs`).
    fn settle(&self, json: Arc<String>, origin: &str) -> Settled {
        let mut parsed = match FileTree::parse(&json) {
            Ok(parsed) => parsed,
            Err(e) => {
                let mut settled =
                    Settled::stable(Route::stable_because(format!("it is not valid JSON: {e}")));
                settled.unparsed = Some(Error::new(
                    ErrorKind::Load,
                    format!("{origin} is not valid JSON: {e}"),
                ));
                return settled;
            }
        };
        let file = &mut parsed.tree;
        let _ = self
            .file_special_tokens
            .set(SpecialTokens::from_tokenizer_json(file));
        let Some(outline) = Outline::read(file) else {
            return Settled::stable(Route::stable_because(
                "its vocabulary or added tokens have a shape batchtok does not read for it"
                    .to_owned(),
            ));
        };
        // Checked before the release candidate sees the file: it would panic on such a token, and
        // although that panic is caught, its message would reach the user's stderr.
        if outline.longest_token > PIPELINE_MAX_TOKEN_BYTES {
            return Settled::stable(Route::stable_because(format!(
                "a token is {} bytes long; it holds tokens of up to {PIPELINE_MAX_TOKEN_BYTES} bytes",
                outline.longest_token
            )));
        }
        if outline.largest_id > PIPELINE_MAX_ID {
            // The release candidate's BPE loader fills a table as long as the largest id (16 GiB
            // for an id near 2^32, found by the parse fuzz); the stable crate keys ids by hash.
            return Settled::stable(Route::stable_because(format!(
                "its largest id is {}; it builds tables as long as the largest id, and batchtok \
                 lets it load ids up to {PIPELINE_MAX_ID}",
                outline.largest_id
            )));
        }
        // Read from the file as written: it is what the stable engine runs.
        let new_symbols = unicode_drift::symbols::file_tells_apart(file);
        let leading_drop = LeadingDrop::for_file(file);
        let adapted = adapter::for_release_candidate(file, outline.largest_id);
        let settle = move |route: Route| {
            route
                .rewritten(adapted.how)
                .with_kimi_drift(adapted.kimi_drift)
        };
        // The file's text goes before the release candidate's reader runs: the canonical text
        // holds all of the file it reads.
        let prepared = PreparedFile::of(parsed);
        drop(json);
        let pipeline = match prepared.and_then(PipelineEngine::from_prepared) {
            Ok(pipeline) => pipeline,
            Err(why) => return Settled::stable(Route::stable_because(why)),
        };
        match Route::for_pipeline(&pipeline, &outline) {
            Ok(route) => Settled {
                route: settle(route),
                new_symbols,
                leading_drop,
                pipeline: Some(pipeline),
                outline_vocabulary: Some(VocabularyIds {
                    size: outline.vocabulary_size,
                    valid: ValidIds::from_ids(outline.ids),
                }),
                trusts_outline: true,
                unparsed: None,
            },
            Err(StableNeeded::Whole(route)) => Settled::stable(settle(route)),
            Err(StableNeeded::ToCompare) => match self.stable.wait() {
                Some(stable) => Settled {
                    route: settle(Route::for_loaded(&pipeline, stable)),
                    new_symbols,
                    leading_drop,
                    pipeline: Some(pipeline),
                    outline_vocabulary: None,
                    trusts_outline: false,
                    unparsed: None,
                },
                // The stable crate refused the file, and the load fails with its reason.
                None => Settled::stable(Route::stable_because(
                    "its added tokens need the stable crate's numbering".to_owned(),
                )),
            },
        }
    }

    /// The stable engine, where there is one (built by the time the load returns).
    #[inline]
    pub fn stable(&self) -> Option<&StableEngine> {
        self.stable.get().and_then(Option::as_ref)
    }

    /// The release candidate's build and route, once settled; `None` while it is being built.
    #[inline]
    pub fn settled(&self) -> Option<&Settled> {
        self.settled.get()
    }

    /// Waits until the release candidate's build has settled the route.
    pub fn wait_until_settled(&self) -> &Settled {
        self.settled.wait()
    }

    /// What the tokenizer.json says of its special tokens (waits for the file's parse, which comes
    /// first in the build and is over long before the stable engine is built, on a file of any
    /// size).
    pub fn file_special_tokens(&self) -> &SpecialTokens {
        self.file_special_tokens.wait()
    }

    /// The vocabulary size, as [`vocabulary`](Self::vocabulary) gives it, without computing the
    /// valid ids where they are not computed yet: the stable engine knows its size at once, and the
    /// build's thread sets the ids (tens of milliseconds for the largest vocabularies) when it ends.
    pub fn vocabulary_size(&self) -> usize {
        match (self.vocabulary.get(), self.stable()) {
            (Some(vocabulary), _) => vocabulary.size,
            (None, Some(stable)) => stable.vocabulary_size(),
            (None, None) => self.vocabulary().size,
        }
    }

    /// The valid ids and the vocabulary size: the outline's where the route trusts it, else the
    /// stable engine's, whichever is computed first.
    pub fn vocabulary(&self) -> &VocabularyIds {
        if let Some(vocabulary) = self.vocabulary.get() {
            return vocabulary;
        }
        match self.stable() {
            Some(stable) => self.vocabulary.get_or_init(|| stable_vocabulary(stable)),
            // No stable engine: the load waited for the build, whose outline is set just after
            // the route.
            None => self.vocabulary.wait(),
        }
    }
}

/// The stable engine's valid ids and vocabulary size.
fn stable_vocabulary(stable: &StableEngine) -> VocabularyIds {
    let ids: Vec<u32> = stable.vocabulary().map(|(_, id)| id).collect();
    VocabularyIds {
        size: stable.vocabulary_size(),
        valid: ValidIds::from_ids(ids),
    }
}
