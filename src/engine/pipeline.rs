//! The release-candidate engine: `tokenizers` 1.0.0-rc.3's `PipelineTokenizer`.
//!
//! A worker's texts go through the pipeline's public stages with working memory the worker holds
//! for the whole batch (`scratch.rs` says why); one text on its own goes through
//! `PipelineTokenizer::encode_into` itself.

use serde_json::Value;
use tokenizers::SplitDelimiterBehavior;
use tokenizers::pipeline::{
    EncodeOptions, Model, Override, PipelineNormalizer, PipelinePreTokenizer, PipelineToken,
    PipelineTokenizer, PreTokenizer, PreTokenizerScratch, Segment, SpecialSegmentIterator,
    normalize_all,
};
use tokenizers::pre_tokenizers::split::{Search, Split, SplitPattern};
use tokenizers::utils::search::ReplacePattern;
use tokenizers::{
    PaddingDirection, PaddingStrategy, TruncationDirection, TruncationParams, TruncationStrategy,
    truncate_pair,
};

use super::added_search::{AddedSegment, AddedTokenSearch};
use super::file_tree::FileTree;
use super::marker_cuts::{MarkerCuts, SpaceMarkers};
use super::normalization::Normalization;
use super::rows::{self, FilePadding, RowOptions, Rows, Side, Truncation};
use super::scratch::{IdleScratches, PipelineScratch, Scratch, oversized_piece};
use super::{Engine, Error, ErrorKind, Ids};

/// `PipelineTokenizer`, read from a canonical (`"version": "2.0"`) tokenizer.json.
pub struct PipelineEngine {
    tokenizer: PipelineTokenizer,
    /// Working memory no worker holds at the moment.
    idle: IdleScratches,
    /// No added tokens and no normalizers (the OpenAI encodings): a text goes straight to the
    /// pre-tokenizer, with no search for added tokens that cannot be there.
    plain: bool,
    /// The normalizers with their shortcuts (`normalization.rs`), where a member has one: BERT's
    /// on ASCII text, SentencePiece's character map on ASCII stretches.
    normalization: Option<Normalization>,
    /// Where pre-tokens are cut because no merge crosses there, before a word marker `▁` and
    /// around a character no token holds (`marker_cuts.rs`): SentencePiece-style files.
    marker_cuts: Option<MarkerCuts>,
    /// Where those files spell spaces as `▁` with plain normalizers and match no added token in
    /// normalized text: each text between added tokens is normalized and cut in one pass.
    space_markers: Option<SpaceMarkers>,
    /// Where those files' added tokens are all matched as plain text as written: the search for
    /// them (`added_search.rs`).
    added_search: Option<AddedTokenSearch>,
    /// The BPE model's `end_of_word_suffix`, where it has one (GPT-1's and HerBERT's `</w>`).
    end_of_word_suffix: Option<String>,
}

/// A tokenizer.json as the release candidate's reader takes it, with what batchtok reads of the
/// file for the engine's shortcuts. Apart from the engine so that the caller can free the file's
/// text before the reader, the build's largest step, runs.
pub(super) struct PreparedFile {
    /// The file in canonical form (`"version": "2.0"`).
    canonical: String,
    marker_cuts: Option<MarkerCuts>,
    end_of_word_suffix: Option<String>,
    /// Some added token is matched in normalized text.
    added_in_normalized_text: bool,
    added_tokens: Option<Value>,
}

impl PreparedFile {
    /// Upgrades a file written by an older version to the canonical form; only a file the
    /// release candidate's reader cannot take as it is (`"version"` other than `"2.0"`) goes
    /// through the upgrade pass. The caller's one parse of the file serves it.
    pub(super) fn of(file: FileTree<'_>) -> Result<PreparedFile, String> {
        refusing_panics(move || {
            let canonical = file.upgrade()?;
            let file = &canonical.tree;
            let marker_cuts = file.get("model").and_then(MarkerCuts::of);
            let end_of_word_suffix = file
                .get("model")
                .filter(|model| model.get("merges").is_some())
                .and_then(|model| model.get("end_of_word_suffix")?.as_str())
                .filter(|suffix| !suffix.is_empty())
                .map(str::to_owned);
            let added_in_normalized_text = file
                .get("added_tokens")
                .and_then(Value::as_array)
                .is_some_and(|tokens| {
                    tokens.iter().any(|token| {
                        token.get("normalized").and_then(Value::as_bool) != Some(false)
                    })
                });
            let added_tokens = file.get("added_tokens").cloned();
            Ok(PreparedFile {
                canonical: canonical.into_text()?,
                marker_cuts,
                end_of_word_suffix,
                added_in_normalized_text,
                added_tokens,
            })
        })
    }
}

/// Runs a step of reading a file. A release candidate can panic on a file it does not expect (an
/// empty vocabulary does); that is a refusal too, not a crash.
fn refusing_panics<T>(read: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    super::error::refusing_panics(read).unwrap_or_else(|panic| {
        Err(super::error::with_panic_text(
            "it panicked while reading the file",
            &*panic,
        ))
    })
}

impl PipelineEngine {
    /// Reads a tokenizer.json, upgrading a file written by an older version to the canonical form
    /// first. The error says why the release candidate refuses it (the caller then falls back).
    ///
    /// A release candidate can panic on a file it does not expect (an empty vocabulary does); that
    /// is a refusal too, not a crash. The differential tests read files this way.
    #[cfg(test)]
    pub fn from_json(json: &str) -> Result<Self, String> {
        let file: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        Self::from_value(file)
    }

    /// [`from_json`](Self::from_json) for a file already parsed whole.
    #[cfg(test)]
    pub fn from_value(file: Value) -> Result<Self, String> {
        Self::from_prepared(PreparedFile::of(FileTree::whole(file))?)
    }

    /// Reads a file made ready by [`PreparedFile::of`].
    pub(super) fn from_prepared(file: PreparedFile) -> Result<Self, String> {
        refusing_panics(move || {
            let tokenizer = tokenizers::from_json(&file.canonical).map_err(|e| e.to_string())?;
            drop(file.canonical);
            let added_vocabulary = tokenizer.get_added_vocabulary();
            let added_search = file.added_tokens.as_ref().and_then(|tokens| {
                AddedTokenSearch::of(tokens, |content| added_vocabulary.token_to_id(content))
            });
            let space_markers = file
                .marker_cuts
                .as_ref()
                .filter(|_| !file.added_in_normalized_text)
                .and_then(|_| {
                    SpaceMarkers::of(tokenizer.get_normalizers(), tokenizer.get_pre_tokenizer())
                });
            Ok(PipelineEngine {
                marker_cuts: file.marker_cuts,
                end_of_word_suffix: file.end_of_word_suffix,
                added_search: added_search.filter(|_| space_markers.is_some()),
                space_markers,
                ..PipelineEngine::from_tokenizer(tokenizer)
            })
        })
    }

    /// Why the engine cannot encode every text of this tokenizer exactly as the reference, if it
    /// cannot: a part it reads but cannot run, or runs with other semantics. Checked at load, so
    /// that such a tokenizer goes to the stable engine whole instead of failing at encode time.
    pub fn cannot_run(&self) -> Option<String> {
        if let Some(why) = pre_tokenizer_cannot_run(self.tokenizer.get_pre_tokenizer()) {
            return Some(why);
        }
        if let Some(suffix) = &self.end_of_word_suffix {
            // Its shortcut for a word that is itself a token skips the suffix: a word of one
            // character comes out as that character's token, not the suffixed one (or the
            // unknown token, where the vocabulary has no suffixed form).
            return Some(format!(
                "its BPE model's end_of_word_suffix {suffix:?}, which the release candidate leaves \
                 off a word of one character"
            ));
        }
        for normalizer in self.tokenizer.get_normalizers() {
            if let PipelineNormalizer::Replace(replace) = normalizer
                && let ReplacePattern::Regex(pattern) = replace.pattern()
                && !is_repeated_literals(pattern)
            {
                return Some(format!(
                    "its Replace normalizer's pattern {pattern:?} is a regular expression, which \
                     the release candidate runs with fancy-regex, not with Oniguruma as the \
                     reference does"
                ));
            }
        }
        // The pass that settles anything the walk above does not know of: a part that fails at
        // encode time fails on these texts too.
        let mut scratch = self.idle.take().unwrap_or_else(|| self.new_scratch());
        let mut out = Vec::new();
        let mut failure = None;
        for text in PROBE_TEXTS {
            for split_special in [true, false] {
                out.clear();
                let truncation = self.tokenizer.get_truncation();
                if let Err(e) = self.encode_with(
                    text,
                    true,
                    split_special,
                    truncation,
                    &mut scratch,
                    &mut out,
                ) {
                    failure.get_or_insert_with(|| format!("encoding {text:?} failed: {e}"));
                }
            }
        }
        self.idle.give_back(scratch);
        failure
    }

    /// The added tokens as the engine numbered them: text to id.
    pub fn added_tokens(&self) -> Vec<(String, u32)> {
        let mut tokens: Vec<_> = self
            .tokenizer
            .get_added_vocabulary()
            .get_vocab()
            .into_iter()
            .collect();
        tokens.sort();
        tokens
    }

    /// The release candidate's tokenizer itself, for what the engine trait does not cover (token
    /// strings, the decoder).
    pub(super) fn tokenizer(&self) -> &PipelineTokenizer {
        &self.tokenizer
    }

    /// Wraps a tokenizer built in code (the embedded encodings).
    pub fn from_tokenizer(tokenizer: PipelineTokenizer) -> Self {
        PipelineEngine {
            plain: tokenizer.get_added_vocabulary().is_empty()
                && tokenizer.get_normalizers().is_empty(),
            // Reading the tables runs the normalizers on single characters; one that fails there
            // leaves the list to `normalize_all`, which reports the failure on a real text.
            normalization: Normalization::of(tokenizer.get_normalizers())
                .ok()
                .flatten(),
            tokenizer,
            idle: IdleScratches::default(),
            marker_cuts: None,
            space_markers: None,
            added_search: None,
            end_of_word_suffix: None,
        }
    }

    /// Drops the working memory no worker holds, and with it the word caches earlier texts
    /// filled: the next text meets the engine as a fresh process does.
    pub(super) fn forget_idle_scratches(&self) {
        while self.idle.take().is_some() {}
    }

    /// Whether pre-tokens are cut where no merge crosses (`marker_cuts.rs`).
    #[cfg(test)]
    pub(super) fn cuts_before_word_markers(&self) -> bool {
        self.marker_cuts.is_some()
    }

    /// Whether texts between added tokens are normalized and cut in one pass (`marker_cuts.rs`).
    #[cfg(test)]
    pub(super) fn marks_spaces_itself(&self) -> bool {
        self.space_markers.is_some()
    }

    /// Whether the engine finds added tokens with its own search (`added_search.rs`).
    #[cfg(test)]
    pub(super) fn searches_added_tokens_itself(&self) -> bool {
        self.added_search.is_some()
    }

    /// New working memory for this engine's model.
    fn new_scratch(&self) -> PipelineScratch {
        PipelineScratch {
            model: self.tokenizer.get_model().init_scratch(),
            split: PreTokenizerScratch::default(),
            spans: Vec::new(),
            cut_spans: Vec::new(),
            normalized: Vec::new(),
            oversized_piece: 0,
        }
    }

    /// The stages `PipelineTokenizer::encode_into` runs for one text, with the caller's working
    /// memory: added tokens are cut out of the raw text, the rest normalized, added tokens cut
    /// out of that, the rest pre-tokenized and run through the model (a plain tokenizer's text
    /// goes straight to the pre-tokenizer); the sequence is truncated as `truncation` says, and
    /// the single-sequence template's tokens go around it.
    fn encode_with(
        &self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        truncation: Option<&TruncationParams>,
        scratch: &mut PipelineScratch,
        out: &mut Vec<PipelineToken>,
    ) -> tokenizers::Result<()> {
        let template = &self.tokenizer.get_post_processor().single;
        if add_special_tokens {
            out.extend(template.prefix.iter().map(|&(id, _)| id));
        }
        let sequence_start = out.len();
        self.encode_sequence(text, split_special, scratch, out)?;
        if let Some(truncation) = truncation {
            let specials = if add_special_tokens {
                template.n_special()
            } else {
                0
            };
            // Only a sequence that is cut leaves `out` for the engine's own truncation.
            if out.len() - sequence_start + specials > truncation.max_length {
                let sequence = out.split_off(sequence_start);
                let (kept, _) = truncate_pair(sequence, None, Some(truncation), specials)?;
                out.extend_from_slice(&kept);
            }
        }
        if add_special_tokens {
            out.extend(template.suffix.iter().map(|&(id, _)| id));
        }
        Ok(())
    }

    /// Appends the ids of one sequence, with no template and no truncation.
    #[inline]
    fn encode_sequence(
        &self,
        text: &str,
        split_special: bool,
        scratch: &mut PipelineScratch,
        out: &mut Vec<PipelineToken>,
    ) -> tokenizers::Result<()> {
        if self.plain {
            self.tokenize(text, scratch, out)
        } else {
            self.encode_segments(text, split_special, scratch, out)
        }
    }

    /// Cuts added tokens out of the raw text, normalizes the rest, cuts added tokens out of
    /// that, and tokenizes what is left.
    fn encode_segments(
        &self,
        text: &str,
        split_special: bool,
        scratch: &mut PipelineScratch,
        out: &mut Vec<PipelineToken>,
    ) -> tokenizers::Result<()> {
        if let (Some(markers), Some(cuts)) = (self.space_markers, &self.marker_cuts) {
            return self.encode_marked(text, split_special, markers, cuts, scratch, out);
        }
        let added = self.tokenizer.get_added_vocabulary();
        let encode_special_tokens = !split_special;
        for raw in SpecialSegmentIterator::new(text, added, false, encode_special_tokens) {
            let (raw, input_offset) = match raw {
                Segment::SpecialToken(id) => {
                    out.push(PipelineToken::from(id));
                    continue;
                }
                Segment::Text { text, input_offset } => (text, input_offset),
            };
            let normalizers = self.tokenizer.get_normalizers();
            let normalized = match &self.normalization {
                Some(normalization) => normalization.apply(normalizers, raw, input_offset)?,
                None => normalize_all(normalizers, raw, input_offset)?,
            };
            for piece in
                SpecialSegmentIterator::new(&normalized, added, true, encode_special_tokens)
            {
                match piece {
                    Segment::SpecialToken(id) => out.push(PipelineToken::from(id)),
                    Segment::Text { text, .. } => self.tokenize(text, scratch, out)?,
                }
            }
        }
        Ok(())
    }

    /// [`encode_segments`](Self::encode_segments) for a file whose engine normalizes and cuts the
    /// text between added tokens itself (`marker_cuts.rs`), finding the added tokens with its own
    /// search where it has one (`added_search.rs`).
    fn encode_marked(
        &self,
        text: &str,
        split_special: bool,
        markers: SpaceMarkers,
        cuts: &MarkerCuts,
        scratch: &mut PipelineScratch,
        out: &mut Vec<PipelineToken>,
    ) -> tokenizers::Result<()> {
        let PipelineScratch {
            model,
            cut_spans,
            normalized,
            oversized_piece: longest,
            ..
        } = scratch;
        let mut encode_text = |raw: &str, out: &mut Vec<PipelineToken>| {
            cut_spans.clear();
            let normalized = cuts.mark_and_cut(markers, raw, normalized, cut_spans);
            check_span_range(normalized)?;
            *longest = (*longest).max(oversized_piece(normalized.len(), cut_spans));
            self.tokenizer
                .get_model()
                .tokenize_spans(normalized, cut_spans, model, out)
        };
        match &self.added_search {
            Some(search) => {
                for segment in search.segments(text, split_special) {
                    match segment {
                        AddedSegment::Token(id) => out.push(PipelineToken::from(id)),
                        AddedSegment::Text(raw) => encode_text(raw, out)?,
                    }
                }
            }
            None => {
                let added = self.tokenizer.get_added_vocabulary();
                for segment in SpecialSegmentIterator::new(text, added, false, !split_special) {
                    match segment {
                        Segment::SpecialToken(id) => out.push(PipelineToken::from(id)),
                        Segment::Text { text, .. } => encode_text(text, out)?,
                    }
                }
            }
        }
        Ok(())
    }

    /// Pre-tokenizes normalized text that holds no added token, and runs the model on the pieces.
    #[inline]
    fn tokenize(
        &self,
        text: &str,
        scratch: &mut PipelineScratch,
        out: &mut Vec<PipelineToken>,
    ) -> tokenizers::Result<()> {
        check_span_range(text)?;
        scratch.spans.clear();
        self.tokenizer.get_pre_tokenizer().pre_tokenize(
            text,
            &mut scratch.split,
            &mut scratch.spans,
        )?;
        let spans = match &self.marker_cuts {
            Some(cuts) => {
                scratch.cut_spans.clear();
                cuts.cut(text, &scratch.spans, &mut scratch.cut_spans);
                &scratch.cut_spans
            }
            None => &scratch.spans,
        };
        scratch.oversized_piece = scratch
            .oversized_piece
            .max(oversized_piece(text.len(), spans));
        self.tokenizer
            .get_model()
            .tokenize_spans(text, spans, &mut scratch.model, out)
    }
}

/// Pre-tokens are `u32` ranges of the text: a longer normalized text cannot be split.
fn check_span_range(text: &str) -> tokenizers::Result<()> {
    if u32::try_from(text.len()).is_err() {
        return Err(format!(
            "the text is {} bytes after normalization; the engine splits texts of up to {} bytes",
            text.len(),
            u32::MAX
        )
        .into());
    }
    Ok(())
}

/// Texts every tokenizer is tried on at load: letters, digits, punctuation, white space of several
/// kinds and scripts, so that every pre-tokenizer and normalizer runs on something.
const PROBE_TEXTS: [&str; 3] = [
    "Hello, world! It's 2024: x=1.5e3 ; don't-stop",
    " \t\n\r\n  naïve Ångström 日本語 ひらがな カタカナ 한국어 русский عربى 👍🏽",
    "a",
];

/// Why the release candidate cannot run `pre_tokenizer`, if it cannot: its reader keeps a `Split`
/// whose regex it does not recognise without compiling it (a `Split` built with `Split::native`
/// has no search), and such a `Split` fails on every text.
fn pre_tokenizer_cannot_run(pre_tokenizer: &PipelinePreTokenizer) -> Option<String> {
    match pre_tokenizer {
        PipelinePreTokenizer::Split(split) => split_cannot_run(split),
        PipelinePreTokenizer::Sequence(sequence) => {
            let members = sequence.pre_tokenizers();
            if sequence.is_deepseek() {
                // DeepSeek's three Splits run as one native pass, and the members after them are
                // not run at all: only byte-level mapping, which the reader turns into `None`,
                // may follow.
                return members[3..]
                    .iter()
                    .find(|member| !matches!(member, PipelinePreTokenizer::None))
                    .map(|_| {
                        "its pre-tokenizer continues after DeepSeek's three Splits, which the \
                         release candidate runs as one pass that ignores what follows"
                            .to_owned()
                    });
            }
            members.iter().find_map(pre_tokenizer_cannot_run)
        }
        _ => None,
    }
}

/// Whether `pattern` is only literal characters, each taken once or repeated greedily at least
/// once (`x`, `x+`, `x{2}`, `x{2,}`, `x{2,5}`): SentencePiece's converted files collapse runs of
/// spaces with `Replace(" {2,}")`. Such a pattern means the same to `fancy-regex` and to
/// Oniguruma: no class, escape, anchor, group, alternation or flag whose reading could differ, and
/// no empty match, past which the two engines' searches may move on differently. Among several
/// ways to match at a start, both take the greedy one first. Anything else stays with Oniguruma.
fn is_repeated_literals(pattern: &str) -> bool {
    const SYNTAX: &[char] = &[
        '\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}', '#',
    ];
    let mut rest = pattern;
    while let Some(atom) = rest.chars().next() {
        if SYNTAX.contains(&atom) {
            return false;
        }
        rest = &rest[atom.len_utf8()..];
        if let Some(after) = rest.strip_prefix('+') {
            rest = after;
        } else if let Some(after) = rest.strip_prefix('{') {
            let Some((bound, after)) = after.split_once('}') else {
                return false;
            };
            let (min, max) = bound.split_once(',').unwrap_or((bound, bound));
            let count = |digits: &str| -> Option<u32> {
                let digits_only = digits.bytes().all(|b| b.is_ascii_digit());
                ((1..=4).contains(&digits.len()) && digits_only).then(|| digits.parse().ok())?
            };
            let max = if max.is_empty() {
                Some(u32::MAX)
            } else {
                count(max)
            };
            match (count(min), max) {
                (Some(min), Some(max)) if min >= 1 && max >= min => rest = after,
                _ => return false,
            }
        }
        // A lazy (`x+?`) or possessive (`x++`) quantifier, or a second one.
        if rest.starts_with(['?', '+', '*', '{']) {
            return false;
        }
    }
    !pattern.is_empty()
}

/// Why the release candidate cannot run `split`, if it cannot.
fn split_cannot_run(split: &Split) -> Option<String> {
    let native = split.grammar().is_some()
        && !split.invert
        && split.behavior == SplitDelimiterBehavior::Isolated;
    if native || !matches!(split.search, Search::Unavailable) {
        return None;
    }
    let pattern = match &split.pattern {
        SplitPattern::Regex(pattern) | SplitPattern::String(pattern) => pattern,
    };
    Some(format!(
        "its Split pre-tokenizer's pattern {pattern:?} (behavior {:?}, invert {}) is not one of \
         the patterns the release candidate runs natively; the stable engine runs it with \
         Oniguruma, as Python tokenizers does",
        split.behavior, split.invert
    ))
}

impl PipelineEngine {
    /// `Engine::encode_into` with the truncation `truncation` chooses.
    #[inline]
    fn encode_truncating<'e>(
        &'e self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        truncation: Override<TruncationParams>,
        scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        let encoded = match scratch.leased_from(&self.idle, || self.new_scratch()) {
            Some(held) => {
                let encoded = self.encode_with(
                    text,
                    add_special_tokens,
                    split_special,
                    self.tokenizer.resolve_truncation(&truncation),
                    held,
                    out.tokens_mut(),
                );
                held.let_go_of_oversized(text.len(), || self.tokenizer.get_model().init_scratch());
                encoded
            }
            None => {
                // rc.3 takes working memory out of the tokenizer's pool and puts it back: two
                // locks, on the calling thread's shard of the pool (`tk-encode`,
                // `pipeline/scratch_pool.rs`).
                scratch.count_locks(2);
                let options = EncodeOptions {
                    add_special_tokens,
                    encode_special_tokens: !split_special,
                    truncation,
                    ..EncodeOptions::default()
                };
                self.tokenizer.encode_into(text, &options, out.tokens_mut())
            }
        };
        encoded.map_err(|e| Error::new(ErrorKind::Engine, format!("encoding failed: {e}")))
    }

    /// The file's truncation section.
    pub(super) fn file_truncation(&self) -> Option<Truncation> {
        let params = self.tokenizer.get_truncation()?;
        Some(Truncation {
            max_length: params.max_length,
            strategy: match params.strategy {
                TruncationStrategy::LongestFirst => rows::TruncationStrategy::LongestFirst,
                TruncationStrategy::OnlyFirst => rows::TruncationStrategy::OnlyFirst,
                TruncationStrategy::OnlySecond => rows::TruncationStrategy::OnlySecond,
            },
            stride: params.stride,
            direction: match params.direction {
                TruncationDirection::Left => Side::Left,
                TruncationDirection::Right => Side::Right,
            },
        })
    }

    /// The file's padding section.
    pub(super) fn file_padding(&self) -> Option<FilePadding> {
        let params = self.tokenizer.get_padding()?;
        Some(FilePadding {
            fixed: match params.strategy {
                PaddingStrategy::BatchLongest => None,
                PaddingStrategy::Fixed(length) => Some(length),
            },
            side: match params.direction {
                PaddingDirection::Left => Side::Left,
                PaddingDirection::Right => Side::Right,
            },
            multiple_of: params.pad_to_multiple_of,
            pad_id: params.pad_id,
            pad_type_id: params.pad_type_id,
            pad_token: params.pad_token.clone(),
        })
    }

    /// How many tokens the template adds around one sequence, or a pair.
    pub(super) fn template_tokens(&self, pair: bool) -> usize {
        let templates = self.tokenizer.get_post_processor();
        if pair {
            templates.pair.n_special()
        } else {
            templates.single.n_special()
        }
    }

    /// Appends the ids and type ids of one input (a pair where `second` is given) to the row
    /// being written in `rows`: each sequence encoded, the pair truncated as `options` says, and
    /// the template's tokens around them, as `PipelineTokenizer::encode` does for a pair, without
    /// its per-input allocations (the sequences are encoded into `rows`'s own buffers).
    pub(super) fn encode_row<'e>(
        &'e self,
        first: &str,
        second: Option<&str>,
        options: &RowOptions,
        scratch: &mut Scratch<'e>,
        rows: &mut Rows,
    ) -> Result<(), Error> {
        let failed =
            |e: tokenizers::Error| Error::new(ErrorKind::Engine, format!("encoding failed: {e}"));
        let mut own = None;
        let held = match scratch.leased_from(&self.idle, || self.new_scratch()) {
            Some(held) => held,
            None => own.insert(self.new_scratch()),
        };
        let mut a = std::mem::take(&mut rows.first);
        let mut b = std::mem::take(&mut rows.second);
        a.clear();
        b.clear();
        let encoded = (|| -> tokenizers::Result<()> {
            self.encode_sequence(first, options.split_special, held, &mut a)?;
            if let Some(second) = second {
                self.encode_sequence(second, options.split_special, held, &mut b)?;
            }
            Ok(())
        })();
        let longest = first.len().max(second.map_or(0, str::len));
        held.let_go_of_oversized(longest, || self.tokenizer.get_model().init_scratch());
        let templates = self.tokenizer.get_post_processor();
        let template = if second.is_some() {
            &templates.pair
        } else {
            &templates.single
        };
        let specials = if options.add_special_tokens {
            template.n_special()
        } else {
            0
        };
        let result = encoded.and_then(|()| {
            if let Some(truncation) = &options.truncation
                && a.len() + b.len() + specials > truncation.max_length
            {
                let (kept_a, kept_b) = truncate_pair(
                    std::mem::take(&mut a),
                    second.map(|_| std::mem::take(&mut b)),
                    Some(&rc_truncation(truncation)),
                    specials,
                )?;
                a = kept_a;
                b = kept_b.unwrap_or_default();
            }
            Ok(())
        });
        if result.is_ok() {
            let add = options.add_special_tokens;
            let push_run = |rows: &mut Rows, run: &[(PipelineToken, u8)]| {
                if add {
                    rows.ids.extend(run.iter().map(|&(id, _)| u32::from(id)));
                    rows.type_ids
                        .extend(run.iter().map(|&(_, type_id)| u32::from(type_id)));
                }
            };
            push_run(rows, &template.prefix);
            rows.ids.extend_from_slice(PipelineToken::cast_slice(&a));
            rows.type_ids
                .extend(std::iter::repeat_n(u32::from(template.a_type_id), a.len()));
            push_run(rows, &template.infix);
            if second.is_some() {
                rows.ids.extend_from_slice(PipelineToken::cast_slice(&b));
                let b_type = template.b_type_id.unwrap_or(1);
                rows.type_ids
                    .extend(std::iter::repeat_n(u32::from(b_type), b.len()));
            }
            push_run(rows, &template.suffix);
        }
        rows.first = a;
        rows.second = b;
        result.map_err(failed)
    }
}

/// `truncation` in the release candidate's terms.
fn rc_truncation(truncation: &Truncation) -> TruncationParams {
    TruncationParams {
        max_length: truncation.max_length,
        strategy: match truncation.strategy {
            rows::TruncationStrategy::LongestFirst => TruncationStrategy::LongestFirst,
            rows::TruncationStrategy::OnlyFirst => TruncationStrategy::OnlyFirst,
            rows::TruncationStrategy::OnlySecond => TruncationStrategy::OnlySecond,
        },
        stride: truncation.stride,
        direction: match truncation.direction {
            Side::Left => TruncationDirection::Left,
            Side::Right => TruncationDirection::Right,
        },
    }
}

impl Engine for PipelineEngine {
    #[inline]
    fn encode_into<'e>(
        &'e self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        self.encode_truncating(
            text,
            add_special_tokens,
            split_special,
            Override::InheritConfig,
            scratch,
            out,
        )
    }

    #[inline]
    fn encode_truncated<'e>(
        &'e self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        truncation: Option<&Truncation>,
        scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        let truncation = match truncation {
            Some(truncation) => Override::With(rc_truncation(truncation)),
            None => Override::Off,
        };
        self.encode_truncating(
            text,
            add_special_tokens,
            split_special,
            truncation,
            scratch,
            out,
        )
    }

    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        self.tokenizer
            .decode(ids, skip_special_tokens)
            .map_err(|e| Error::new(ErrorKind::Engine, format!("decoding failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::super::scratch::{KEEP_TEXT_BYTES, oversized_texts};
    use super::super::test_fixtures::root;
    use super::super::{Engine, Ids, Scratch};
    use super::{PipelineEngine, is_repeated_literals};

    fn gpt2() -> PipelineEngine {
        let path = root().join("__test__/fixtures/tokenizers/gpt2.json");
        PipelineEngine::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn ids<'e>(engine: &'e PipelineEngine, text: &str, scratch: &mut Scratch<'e>) -> Vec<u32> {
        let mut out = Ids::default();
        engine
            .encode_into(text, false, false, scratch, &mut out)
            .unwrap();
        out.as_slice().to_vec()
    }

    #[test]
    fn a_huge_text_or_piece_leaves_no_buffers_of_its_size_in_the_scratch() {
        let engine = gpt2();
        let mut scratch = Scratch::new();
        let [huge_piece, huge_text] = oversized_texts();
        for text in [huge_piece.as_str(), huge_text.as_str(), "a short text"] {
            let leased = ids(&engine, text, &mut scratch);
            let own_pool = ids(&engine, text, &mut Scratch::engine_pool());
            assert_eq!(leased, own_pool, "{} bytes", text.len());
            let held = scratch
                .leased_from(&engine.idle, || unreachable!())
                .unwrap();
            assert_eq!(held.oversized_piece, 0);
            if text.len() > KEEP_TEXT_BYTES {
                assert_eq!(held.spans.capacity(), 0);
            }
        }
        // A text under the limit keeps its buffers for the next one.
        let held = scratch
            .leased_from(&engine.idle, || unreachable!())
            .unwrap();
        assert!(held.spans.capacity() > 0);
    }

    #[test]
    fn only_literals_repeated_at_least_once_count_as_the_same_in_both_regex_engines() {
        for pattern in [" {2,}", " ", "ab", "a+", "x{3}", "ab{2,5}c", "▁{2,}", "\t+"] {
            assert!(is_repeated_literals(pattern), "{pattern:?}");
        }
        for pattern in [
            "", "\\s+", "[ ]{2,}", "a|b", " *", "a?", "a{0,3}", "a{,3}", "a{3,2}", "a{2", "a{x}",
            "a+?", "a++", "a{2}{3}", "(a)", ".", "^ ", " $", "a{12345}", "#", "\\t",
        ] {
            assert!(!is_repeated_literals(pattern), "{pattern:?}");
        }
    }
}
