//! The exact fallback: the stable `tokenizers` 0.23 crate, the code the Python reference runs.

use std::sync::OnceLock;

use tokenizers_stable::models::ModelWrapper;
use tokenizers_stable::pre_tokenizer::OffsetType;
use tokenizers_stable::utils::padding::{PaddingDirection, PaddingParams, PaddingStrategy};
use tokenizers_stable::utils::truncation::{
    TruncationDirection, TruncationParams, TruncationStrategy, truncate_encodings,
};
use tokenizers_stable::{
    AddedToken, Encoding, Model, PostProcessor, PreTokenizer, Token, Tokenizer as StableTokenizer,
};

use super::error::{panic_text, refusing_panics, with_panic_text};
use super::long_texts::{Cuts, MarkedSpaces};
use super::rows::{self, FilePadding, Side, StableEncoding, Truncation};
use super::{Engine, Error, ErrorKind, Ids, Scratch, long_texts, marker_cuts, stable_reader};

/// The longest Unigram piece accepted, in UTF-8 bytes. The stable crate keeps the pieces in a trie
/// with a node per byte, which it clones and drops recursively (`models/unigram/trie.rs`), so the
/// stack it needs grows with the longest piece: about 64 bytes per byte in a release build, and
/// 520 to 680 in an unoptimized one (`npm run build:debug`, `cargo test` without `--release`, the
/// AddressSanitizer run), where a 4096-byte piece overflows a 2 MB thread stack (Rust's default,
/// and the size of the worker threads; `FUZZING.md#what-the-fuzz-found`). An overflow aborts the
/// process, and a 58 KB piece does so in a release build (the model is built, and dropped again,
/// even when another part of the file is invalid). SentencePiece pieces are a
/// few dozen bytes at most (16 characters by default); this bound keeps the recursion under
/// 0.7 MB in any build.
const UNIGRAM_MAX_PIECE_BYTES: usize = 1024;

/// The deepest nesting of arrays and objects accepted. serde_json, which both `tokenizers` crates
/// read with, stops at 128 levels; the stable crate then panics (`expect("Helper")` in
/// `decoders/mod.rs`) instead of returning the error, found by `tests/engine/parse_fuzz.rs`. Real
/// files nest about ten levels deep.
const MAX_NESTING: usize = 100;

/// What a pass over a tokenizer.json's bytes learns: its deepest nesting, and the length of its
/// longest string literal as spelled (never shorter than the string's UTF-8 bytes). Most of a
/// file's bytes are inside strings (the vocabulary, the merges), which are crossed from escape to
/// escape with `memchr` rather than byte by byte.
fn shape(json: &str) -> (usize, usize) {
    let bytes = json.as_bytes();
    let (mut deepest, mut depth, mut longest) = (0, 0_usize, 0);
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                let start = at + 1;
                let mut cursor = start;
                let closing = loop {
                    let rest = bytes.get(cursor..).unwrap_or_default();
                    match memchr::memchr2(b'"', b'\\', rest) {
                        // An escape: the byte after the backslash is never the closing quote.
                        Some(offset) if rest[offset] == b'\\' => cursor += offset + 2,
                        Some(offset) => break Some(cursor + offset),
                        None => break None,
                    }
                };
                // An unterminated string ends the file: nothing after it is structure.
                let Some(closing) = closing else { break };
                longest = longest.max(closing - start);
                at = closing + 1;
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    (deepest, longest)
}

/// The length in bytes of the longest piece of `model.vocab` when it is a Unigram vocabulary (a
/// list of `[piece, score]`). Only called for a file with a string literal over the limit: the
/// rest cannot hold a piece over it, and are not parsed again.
fn longest_unigram_piece(json: &str) -> Option<usize> {
    let file: serde_json::Value = serde_json::from_str(json).ok()?;
    file["model"]["vocab"]
        .as_array()?
        .iter()
        .filter_map(|entry| entry.get(0)?.as_str().map(str::len))
        .max()
}

/// The stable `Tokenizer`, read from any tokenizer.json the stable release reads.
///
/// One engine serves every thread, and shares nothing written per text between them except a
/// Unigram model's cache: a BPE model is read with its word cache off (the crate would keep one per
/// thread and never free it: `stable_reader.rs`), WordPiece and WordLevel keep none, and
/// `encode_fast` runs on the calling thread alone (the crate's rayon parallelism is only in its
/// batch methods).
/// `benchmark/fallback.rs` measures one engine on two threads against a clone per thread.
pub struct StableEngine {
    /// Splits added special tokens out of the text, the stable default.
    splitting: StableTokenizer,
    /// The model is a Unigram, whose piece cache sits behind a read-write lock shared by every
    /// thread (taken with `try_read` and `try_write`, once per word).
    locks_a_shared_cache: bool,
    /// The same tokenizer with `encode_special_tokens` on, made on first use: the flag lives on
    /// the tokenizer, not on the call.
    ordinary: OnceLock<StableTokenizer>,
    /// The file's padding section (the engines pad nothing themselves).
    file_padding: Option<PaddingParams>,
    /// Where a text may be cut and its parts encoded one after the other without template tokens
    /// ([`StableEngine::cuts`]); `None` where it may not. Found on first use: for a
    /// SentencePiece-style file they take a read of the whole vocabulary (some 70 ms for Gemma
    /// 3's), which a load of a tokenizer that never meets a long text should not pay.
    cuts_without_template: OnceLock<Option<Cuts>>,
    /// The ids the template puts around one text's ([`StableEngine::template_ends`]), found on
    /// first use.
    template_ends: OnceLock<Option<TemplateEnds>>,
}

/// The ids a file's template puts before and after the ids of one text: Llama 3's and Gemma's
/// `<bos>` before, BERT's `[CLS]` before and `[SEP]` after.
#[derive(Debug, Default)]
pub struct TemplateEnds {
    /// The ids before the text's.
    pub before: Vec<u32>,
    /// The ids after the text's.
    pub after: Vec<u32>,
}

/// The ends of a text encoded without template tokens: none.
static NO_TEMPLATE: TemplateEnds = TemplateEnds {
    before: Vec::new(),
    after: Vec::new(),
};

impl StableEngine {
    /// Reads a tokenizer.json. Padding is turned off: it shapes whole batches into rectangles,
    /// which batchtok's ragged results do not do; truncation stays as the file sets it.
    pub fn from_json(json: &str) -> Result<Self, String> {
        // Checked before the stable crate reads the file: it builds the model before it has read
        // the rest, and drops it again when a later part is invalid.
        let (deepest, longest_string) = shape(json);
        if deepest > MAX_NESTING {
            return Err(format!(
                "it nests {deepest} levels deep; at most {MAX_NESTING} are accepted"
            ));
        }
        if longest_string > UNIGRAM_MAX_PIECE_BYTES
            && let Some(longest) = longest_unigram_piece(json)
            && longest > UNIGRAM_MAX_PIECE_BYTES
        {
            return Err(format!(
                "a Unigram piece is {longest} bytes long; at most {UNIGRAM_MAX_PIECE_BYTES} bytes \
                 are accepted"
            ));
        }
        // Whatever else the stable crate panics on is a refusal too, as for the release candidate.
        let mut tokenizer = refusing_panics(|| stable_reader::read(json))
            .map_err(|panic| with_panic_text("it panicked while reading the file", &*panic))??;
        let file_padding = tokenizer.get_padding().cloned();
        tokenizer.with_padding(None);
        let locks_a_shared_cache = matches!(tokenizer.get_model(), ModelWrapper::Unigram(_));
        Ok(StableEngine {
            splitting: tokenizer,
            locks_a_shared_cache,
            ordinary: OnceLock::new(),
            file_padding,
            cuts_without_template: OnceLock::new(),
            template_ends: OnceLock::new(),
        })
    }

    /// Where a text may be cut (`long_texts.rs`) so that it encodes, part after part, to the ids
    /// of the whole, with special-token text split out or not, and `with_template_tokens` or
    /// without: at the word gaps outside its added tokens, where the file splits text as a
    /// pattern that may be cut does (at those of them that are spaces, where it is a
    /// SentencePiece-style file that writes spaces as `▁`, with or without one put before each
    /// text: `long_texts.rs`, for how the parts of the second go), it truncates nothing, no added
    /// token matches otherwise at either side of a cut, and, with template tokens, its template
    /// adds none around one text (each part would get them). `None` where a text is not cut.
    pub fn cuts(&self, with_template_tokens: bool) -> Option<&Cuts> {
        self.cuts_before_truncation()
            .filter(|_| self.splitting.get_truncation().is_none())
            .filter(|_| !(with_template_tokens && self.template_tokens(false) > 0))
    }

    /// Where a text may be cut so that the ids of the part before the cut, without template
    /// tokens and untruncated, are the first ids of the whole text's: [`cuts`](Self::cuts)
    /// whatever the file's truncation.
    pub fn cuts_before_truncation(&self) -> Option<&Cuts> {
        self.cuts_without_template
            .get_or_init(|| parts_encode_as_the_whole(&self.splitting))
            .as_ref()
    }

    /// The ids the template puts before and after one text's ids where `with_template_tokens`
    /// (none without): the text encodes to them around its ids without template tokens, so a text
    /// cut by [`cuts(false)`](Self::cuts) encodes as the ends around its parts. `None` where the
    /// template does more than put ids around a text's (one that truncates, or repeats the text).
    pub fn template_ends(&self, with_template_tokens: bool) -> Option<&TemplateEnds> {
        if !with_template_tokens {
            return Some(&NO_TEMPLATE);
        }
        self.template_ends
            .get_or_init(|| template_ends(&self.splitting))
            .as_ref()
    }

    /// The tokenizer.json of this tokenizer with `tokens` added, as Python `tokenizers`'
    /// `add_tokens` (or, where `special`, `add_special_tokens`) adds them: the reference's own
    /// code decides which are new, their ids and how they match.
    pub fn file_with_added_tokens(
        &self,
        tokens: Vec<AddedToken>,
        special: bool,
    ) -> Result<String, String> {
        let mut tokenizer = self.splitting.clone();
        tokenizer.with_padding(self.file_padding.clone());
        if special {
            tokenizer.add_special_tokens(tokens)
        } else {
            tokenizer.add_tokens(tokens)
        }
        .map_err(|e| e.to_string())?;
        let mut file = serde_json::to_value(&tokenizer).map_err(|e| e.to_string())?;
        // A special token added again as a plain one is written as plain, but the tokenizer
        // that added it still counts it special (decoding skips it); written so, the file reads
        // back as that tokenizer.
        let vocabulary = tokenizer.get_added_vocabulary();
        for token in file["added_tokens"].as_array_mut().into_iter().flatten() {
            let special = token["content"]
                .as_str()
                .is_some_and(|content| vocabulary.is_special_token(content));
            if special {
                token["special"] = serde_json::Value::Bool(true);
            }
        }
        Ok(file.to_string())
    }

    /// Every token of the vocabulary with its id, added tokens included.
    pub fn vocabulary(&self) -> impl Iterator<Item = (String, u32)> {
        self.splitting.get_vocab(true).into_iter()
    }

    /// Every token of the vocabulary with its id; the added tokens too where `with_added_tokens`
    /// (Python's `get_vocab`).
    pub fn vocabulary_of(&self, with_added_tokens: bool) -> Vec<(String, u32)> {
        self.splitting
            .get_vocab(with_added_tokens)
            .into_iter()
            .collect()
    }

    /// Python's `get_vocab_size(with_added_tokens=True)`.
    pub fn vocabulary_size(&self) -> usize {
        self.splitting.get_vocab_size(true)
    }

    /// The id of a token, added tokens first (Python's `token_to_id`).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.splitting.token_to_id(token)
    }

    /// The added tokens: text, id, and whether each is special (Python's
    /// `get_added_tokens_decoder`), by id.
    pub fn added_tokens_with_kind(&self) -> Vec<(String, u32, bool)> {
        let mut tokens: Vec<_> = self
            .splitting
            .get_added_tokens_decoder()
            .into_iter()
            .map(|(id, token)| (token.content, id, token.special))
            .collect();
        tokens.sort_by_key(|&(_, id, _)| id);
        tokens
    }

    /// The added tokens matched in the normalized text, by id.
    pub fn normalized_added_tokens(&self) -> Vec<String> {
        let mut tokens: Vec<_> = self
            .splitting
            .get_added_tokens_decoder()
            .into_iter()
            .filter(|(_, token)| token.normalized && !token.content.is_empty())
            .collect();
        tokens.sort_by_key(|(id, _)| *id);
        tokens.into_iter().map(|(_, token)| token.content).collect()
    }

    /// True when an added token matches only as a whole word (`single_word`).
    pub fn has_single_word_added_token(&self) -> bool {
        self.splitting
            .get_added_tokens_decoder()
            .values()
            .any(|token| token.single_word)
    }

    /// The added tokens as the file numbers them: text to id.
    pub fn added_tokens(&self) -> Vec<(String, u32)> {
        let mut tokens: Vec<_> = self
            .splitting
            .get_added_tokens_decoder()
            .into_iter()
            .map(|(id, token)| (token.content, id))
            .collect();
        tokens.sort();
        tokens
    }

    /// The token `id` stands for, as the vocabulary spells it (added tokens included).
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.splitting.id_to_token(id)
    }

    /// The byte range of `text` each token of its encoding comes from, in order, leaving out the
    /// post-processor's template tokens.
    pub fn token_offsets(
        &self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
    ) -> Result<Vec<(usize, usize)>, String> {
        let encoding = refusing_panics(|| {
            self.tokenizer(split_special)
                .encode(text, add_special_tokens)
        })
        .map_err(|panic| with_panic_text("the stable engine panicked", &*panic))?
        .map_err(|e| e.to_string())?;
        Ok(encoding
            .get_offsets()
            .iter()
            .zip(encoding.get_special_tokens_mask())
            .filter(|&(_, &template)| template == 0)
            .map(|(&offsets, _)| offsets)
            .collect())
    }

    /// The file's truncation section.
    pub fn file_truncation(&self) -> Option<Truncation> {
        let params = self.splitting.get_truncation()?;
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
    pub fn file_padding(&self) -> Option<FilePadding> {
        let params = self.file_padding.as_ref()?;
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

    /// How many tokens the post-processor adds around one sequence, or a pair.
    pub fn template_tokens(&self, pair: bool) -> usize {
        self.splitting
            .get_post_processor()
            .map_or(0, |processor| processor.added_tokens(pair))
    }

    /// One input (`first`, with `second` for a pair) encoded as the reference's `encode` does it,
    /// with `truncation` instead of the file's: each sequence encoded (the second with type id 1),
    /// the two truncated together, then the post-processor's template. The steps are the
    /// reference's own, called one by one because the stable crate keeps truncation on the
    /// tokenizer and a shared engine is never changed by a call. `details`: with character offsets,
    /// token strings and word ids (slower), else ids, type ids and masks alone.
    pub fn encode_parts(
        &self,
        first: &str,
        second: Option<&str>,
        add_special_tokens: bool,
        split_special: bool,
        truncation: Option<&Truncation>,
        details: bool,
    ) -> Result<StableEncoding, Error> {
        #[cfg(test)]
        LONGEST_TEXT.with(|longest| {
            longest.set(longest.get().max(first.len() + second.map_or(0, str::len)))
        });
        let encode = || -> tokenizers_stable::Result<StableEncoding> {
            let tokenizer = self.tokenizer(split_special);
            // Characters, as Python's `encode` counts them: the reference converts a sequence's
            // byte offsets to characters before its post-processor trims them, so a trim next to
            // a multi-byte character (RoBERTa's prefix space after an added token) moves an offset
            // by one character there, where in bytes it would land inside the character.
            let offset_type = if details {
                OffsetType::Char
            } else {
                OffsetType::None
            };
            // The reference's own steps for one sequence (`encode_single_sequence`): with
            // truncation, its model stops after `max_length` tokens of a sequence (from the end
            // truncated), except on the first sequence with `only_second`; what the overflowing
            // windows hold depends on it.
            let sequence = |text: &str, type_id: u32| {
                let mut pretokenized = tokenizer
                    .get_added_vocabulary()
                    .extract_and_normalize(tokenizer.get_normalizer(), text);
                if let Some(pre_tokenizer) = tokenizer.get_pre_tokenizer() {
                    pre_tokenizer.pre_tokenize(&mut pretokenized)?;
                }
                let limit = truncation
                    .filter(|t| t.strategy != rows::TruncationStrategy::OnlySecond || type_id != 0)
                    .map(|t| (t.max_length, stable_truncation(t).direction));
                tokenizer
                    .get_model()
                    .tokenize_in_pretokenized(&mut pretokenized, limit)?;
                pretokenized.into_encoding(None, type_id, offset_type)
            };
            let encoding = sequence(first, 0)?;
            let pair = second.map(|text| sequence(text, 1)).transpose()?;
            let processor = self.splitting.get_post_processor();
            let (encoding, pair) = match truncation {
                Some(truncation) => {
                    let added = if add_special_tokens {
                        processor.map_or(0, |p| p.added_tokens(pair.is_some()))
                    } else {
                        0
                    };
                    let params = TruncationParams {
                        max_length: truncation.max_length.saturating_sub(added),
                        ..stable_truncation(truncation)
                    };
                    truncate_encodings(encoding, pair, &params)?
                }
                None => (encoding, pair),
            };
            match processor {
                Some(processor) => processor.process(encoding, pair, add_special_tokens),
                None => {
                    let encodings = std::iter::once(encoding).chain(pair).collect();
                    let mut merged =
                        <dyn PostProcessor>::default_process(encodings, add_special_tokens)?;
                    Ok(merged.pop().expect("default_process returns one encoding"))
                }
            }
        };
        refusing_panics(encode)
            .map_err(|panic| encode_panic_error(&*panic))?
            .map_err(|e| Error::new(ErrorKind::Engine, format!("encoding failed: {e}")))
    }

    fn tokenizer(&self, split_special: bool) -> &StableTokenizer {
        if split_special {
            &self.splitting
        } else {
            self.ordinary.get_or_init(|| {
                let mut ordinary = self.splitting.clone();
                ordinary.set_encode_special_tokens(true);
                ordinary
            })
        }
    }
}

/// [`StableEngine::cuts`] of `tokenizer`, without template tokens, before its truncation (which
/// reads across every cut). No cut falls inside an added token (`Cuts::outside`), but three kinds
/// of token read the text beside them: one that ends in a letter and takes the white space after it
/// (`rstrip`) would take a space that a cut puts at the start of the next part; one that must stand
/// as a word (`single_word`) and begins with a character that is not part of a word would be
/// refused after the letter before a cut and matched at the start of the part after it; and one
/// matched in the normalized text (`normalized`, where the file normalizes) is not found by looking
/// at the text as it is. A file with a token of the first two kinds, or of the third holding a word
/// gap, is not cut. (One that takes the white space before it takes none after the letter before a
/// cut, and the same on either side of it.) A file that puts a `▁` before each text is cut only
/// where its added tokens are plain text matched as written, none beginning with a space.
fn parts_encode_as_the_whole(tokenizer: &StableTokenizer) -> Option<Cuts> {
    let component = |value: Option<serde_json::Value>| value.filter(|value| !value.is_null());
    // A sequence of no normalizers (DeepSeek V3's) leaves the text as it is: no normalizer.
    let normalizer = component(
        tokenizer
            .get_normalizer()
            .and_then(|n| serde_json::to_value(n).ok()),
    )
    .filter(|normalizer| !long_texts::normalizes_nothing(normalizer));
    let pre_tokenizer = component(
        tokenizer
            .get_pre_tokenizer()
            .and_then(|p| serde_json::to_value(p).ok()),
    );
    let added_tokens = tokenizer.get_added_tokens_decoder();
    let cuts = Cuts::outside(added_tokens.values().map(|token| token.content.as_str()));
    let cuts = if long_texts::file_splits_at_word_gaps(normalizer.as_ref(), pre_tokenizer.as_ref())
    {
        cuts
    } else if let Some(splits) =
        long_texts::file_splits_at_spaces(normalizer.as_ref(), pre_tokenizer.as_ref())
    {
        splits.cuts(cuts)
    } else if let Some(marked) =
        long_texts::file_marks_spaces(normalizer.as_ref(), pre_tokenizer.as_ref())
    {
        let cuts =
            cuts.at_spaces_after_letters_but(letters_joined_to_markers(tokenizer.get_model())?);
        match marked {
            MarkedSpaces::Alone => cuts,
            MarkedSpaces::AfterPrepended => {
                // The space at a cut goes, and the `▁` put before the part after it stands for
                // it: no added token may begin at it, take it or be matched in normalized text.
                let meets_the_space = added_tokens.values().any(|token| {
                    token.normalized
                        || token.lstrip
                        || token.rstrip
                        || token.single_word
                        || token.content.starts_with(' ')
                });
                if meets_the_space {
                    return None;
                }
                let starts = added_tokens
                    .values()
                    .filter_map(|token| token.content.chars().next());
                cuts.after_prepended_markers(starts.collect())
            }
        }
    } else {
        return None;
    };
    let reads_beside = added_tokens.values().any(|token| {
        (token.rstrip && token.content.ends_with(char::is_alphabetic))
            || (token.single_word && !token.content.starts_with(long_texts::is_word_character))
            || (token.normalized
                && normalizer.is_some()
                && long_texts::holds_word_gap(&token.content))
    });
    (!reads_beside).then_some(cuts)
}

/// The ids `tokenizer`'s post-processor puts around one text's ids, read off a text of two ids
/// put through it. Every post-processor the stable crate has (a template, BERT's, RoBERTa's,
/// byte-level offsets, a sequence of them) keeps a sequence's ids as they are, in order, whatever
/// their values, so where it puts these it puts any text's. `None` for a set-up that does
/// otherwise: the file's truncation, a template that puts the text twice or not at all, ids added
/// without template tokens, a template id equal to one of the two.
fn template_ends(tokenizer: &StableTokenizer) -> Option<TemplateEnds> {
    const TEXT: [u32; 2] = [u32::MAX - 1, u32::MAX];
    let processed = |add_special_tokens: bool| {
        let tokens = TEXT
            .map(|id| Token::new(id, String::new(), (0, 0)))
            .to_vec();
        // The stable crate panics on some post-processor set-ups instead of failing
        // (`encode_into`).
        refusing_panics(|| {
            tokenizer.post_process(Encoding::from_tokens(tokens, 0), None, add_special_tokens)
        })
        .ok()?
        .ok()
    };
    if processed(false)?.get_ids() != TEXT {
        return None;
    }
    let with_template = processed(true)?;
    let ids = with_template.get_ids();
    let at = ids.windows(TEXT.len()).position(|window| window == TEXT)?;
    let (before, after) = (&ids[..at], &ids[at + TEXT.len()..]);
    if before.iter().chain(after).any(|id| TEXT.contains(id)) {
        return None;
    }
    Some(TemplateEnds {
        before: before.to_vec(),
        after: after.to_vec(),
    })
}

/// The letters some token holds right before a `▁`, where `model` is a BPE over the text's own
/// characters that no merge crosses a `▁` in but after one of them (`marker_cuts.rs`: no dropout,
/// no skipped merges, no prefix or suffix marking a word's ends, `▁` in its vocabulary).
fn letters_joined_to_markers(model: &ModelWrapper) -> Option<Vec<char>> {
    let ModelWrapper::BPE(bpe) = model else {
        return None;
    };
    let unset = |affix: &Option<String>| affix.as_deref().is_none_or(str::is_empty);
    if bpe.dropout.is_some()
        || bpe.ignore_merges
        || !unset(&bpe.continuing_subword_prefix)
        || !unset(&bpe.end_of_word_suffix)
    {
        return None;
    }
    let vocabulary = bpe.get_vocab();
    if !vocabulary.contains_key(marker_cuts::MARKER) {
        return None;
    }
    marker_cuts::joined_to_markers(vocabulary.keys().map(String::as_str))
}

/// `truncation` in the stable crate's terms.
fn stable_truncation(truncation: &Truncation) -> TruncationParams {
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

#[cfg(test)]
thread_local! {
    /// The longest text (or pair) this thread has handed to a stable engine to encode (tests).
    pub(super) static LONGEST_TEXT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Engine for StableEngine {
    fn encode_truncated<'e>(
        &'e self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        truncation: Option<&Truncation>,
        scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        scratch.count_unknown_locks();
        let encoding = self.encode_parts(
            text,
            None,
            add_special_tokens,
            split_special,
            truncation,
            false,
        )?;
        out.extend_from_slice(encoding.get_ids());
        Ok(())
    }

    fn encode_into<'e>(
        &'e self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        // A Unigram model reads and fills its cache behind a read-write lock, once per word: a
        // count that depends on the text. The other models take no lock.
        if self.locks_a_shared_cache {
            scratch.count_unknown_locks();
        }
        #[cfg(test)]
        LONGEST_TEXT.with(|longest| longest.set(longest.get().max(text.len())));
        // The stable crate panics on some post-processor set-ups instead of failing (a template
        // handed more than two encodings by a Sequence reaches a `todo!()` in
        // `processors/template.rs`, found by `tests/engine/parse_fuzz.rs`); a panic must not cross
        // the napi boundary, so it becomes this text's error.
        let encoding = refusing_panics(|| {
            self.tokenizer(split_special)
                .encode_fast(text, add_special_tokens)
        })
        .map_err(|panic| encode_panic_error(&*panic))?
        .map_err(|e| Error::new(ErrorKind::Engine, format!("encoding failed: {e}")))?;
        out.extend_from_slice(encoding.get_ids());
        Ok(())
    }

    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        refusing_panics(|| self.splitting.decode(ids, skip_special_tokens))
            .map_err(|panic| {
                Error::new(
                    ErrorKind::Engine,
                    with_panic_text("decoding failed: the stable engine panicked", &*panic),
                )
            })?
            .map_err(|e| Error::new(ErrorKind::Engine, format!("decoding failed: {e}")))
    }
}

/// What Oniguruma reports when one match attempt backtracks more than its retry limit allows; the
/// `onig` crate's iterator panics with a message that holds it.
const RETRY_LIMIT_MESSAGE: &str = "retry-limit-in-match over";

/// The error for a panic raised while the stable crate encoded a text.
#[cold]
fn encode_panic_error(panic: &(dyn std::any::Any + Send)) -> Error {
    let message = panic_text(panic).unwrap_or("");
    if message.contains(RETRY_LIMIT_MESSAGE) {
        // Oniguruma gives up on a match attempt after a fixed number of backtracking steps (ten
        // million by default), so such a text fails in bounded time; the reference, on the same
        // regex engine, fails on the same text.
        return Error::new(
            ErrorKind::Engine,
            "encoding failed: the tokenizer's regular expression (a Split pre-tokenizer or Replace \
             normalizer) backtracked past Oniguruma's retry limit on this text, as it does in \
             Python tokenizers; the pattern backtracks catastrophically, so rewrite it without \
             nested or overlapping repetition",
        );
    }
    Error::new(
        ErrorKind::Engine,
        with_panic_text("encoding failed: the stable engine panicked", panic),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Unigram tokenizer.json with one extra piece of `len` bytes.
    fn unigram_with_piece_of(len: usize) -> String {
        format!(
            r#"{{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],
            "normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,
            "model":{{"type":"Unigram","unk_id":0,"byte_fallback":false,
            "vocab":[["<unk>",0.0],["a",-1.0],["{}",-2.0]]}}}}"#,
            "x".repeat(len)
        )
    }

    #[test]
    fn a_unigram_piece_long_enough_to_overflow_the_stack_is_refused_without_overflowing_it() {
        // The parse fuzz's case: 58163 bytes overflowed a 2 MB stack when the model dropped. Run
        // on such a thread, so that the test fails (the process aborts) if the model is built.
        let refused = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| StableEngine::from_json(&unigram_with_piece_of(58_163)).err())
            .unwrap()
            .join()
            .unwrap();
        let why = refused.expect("the file is refused");
        assert!(why.contains("58163 bytes long"), "{why}");
        // The longest piece accepted is built and dropped within the same 2 MB, in whatever build
        // the test runs (an unoptimized one needs about eight times the stack of a release one).
        let accepted = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                StableEngine::from_json(&unigram_with_piece_of(UNIGRAM_MAX_PIECE_BYTES)).is_ok()
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(accepted);
        // Escapes make the spelling longer, never the piece: 1000 escaped quotes are 1000 bytes.
        let quotes = unigram_with_piece_of(0).replace(
            r#"["",-2.0]"#,
            &format!(r#"["{}",-2.0]"#, "\\\"".repeat(1000)),
        );
        assert!(StableEngine::from_json(&quotes).is_ok());
    }

    #[test]
    fn a_file_nested_deeper_than_serde_json_reads_is_refused_without_a_panic() {
        // The parse fuzz's case: a decoder nested 1201 Sequences deep made the stable crate panic.
        let mut decoder = r#"{"type":"Fuse"}"#.to_owned();
        for _ in 0..1201 {
            decoder = format!(r#"{{"type":"Sequence","decoders":[{decoder}]}}"#);
        }
        let json = unigram_with_piece_of(1)
            .replace(r#""decoder":null"#, &format!(r#""decoder":{decoder}"#));
        let why = StableEngine::from_json(&json)
            .err()
            .expect("the file is refused");
        assert!(why.contains("nests 2404 levels deep"), "{why}");
        // Strings do not nest, whatever brackets they hold.
        let brackets = unigram_with_piece_of(0).replace(r#"["",-2.0]"#, r#"["[[[[{{{{",-2.0]"#);
        assert_eq!(shape(&brackets).0, 4);
    }

    /// Whatever the post-processor, a text with template tokens encodes to the template's ends
    /// around its ids without them; a set-up that does more than that has none.
    #[test]
    fn template_ends_are_the_ids_a_post_processor_puts_around_a_text() {
        let template = |single: &str, special: &str| {
            format!(
                r#"{{"type":"TemplateProcessing","single":{single},
                "pair":[{{"Sequence":{{"id":"A","type_id":0}}}},{{"Sequence":{{"id":"B","type_id":1}}}}],
                "special_tokens":{special}}}"#
            )
        };
        let text = r#"{"Sequence":{"id":"A","type_id":0}}"#;
        let token = |name: &str| format!(r#"{{"SpecialToken":{{"id":"{name}","type_id":0}}}}"#);
        let bos_special = r#"{"<s>":{"id":"<s>","ids":[7],"tokens":["<s>"]}}"#;
        let bos = template(&format!("[{},{text}]", token("<s>")), bos_special);
        let cls_sep = template(
            &format!("[{},{text},{}]", token("<s>"), token("</s>")),
            r#"{"<s>":{"id":"<s>","ids":[7],"tokens":["<s>"]},
               "</s>":{"id":"</s>","ids":[8,9],"tokens":["</", "s>"]}}"#,
        );
        let twice = template(&format!("[{text},{},{text}]", token("<s>")), bos_special);
        let byte_level = r#"{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,
                             "use_regex":true}"#;
        type Ends = Option<(&'static [u32], &'static [u32])>;
        let cases: [(&str, String, Ends); 7] = [
            ("none", "null".into(), Some((&[], &[]))),
            ("a BOS", bos.clone(), Some((&[7], &[]))),
            ("a start and a two-id end", cls_sep, Some((&[7], &[8, 9]))),
            (
                "BERT's",
                r#"{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}"#.into(),
                Some((&[101], &[102])),
            ),
            (
                "RoBERTa's",
                r#"{"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],
                   "trim_offsets":true,"add_prefix_space":true}"#
                    .into(),
                Some((&[0], &[2])),
            ),
            (
                "byte-level, then a BOS",
                format!(r#"{{"type":"Sequence","processors":[{byte_level},{bos}]}}"#),
                Some((&[7], &[])),
            ),
            ("the text twice", twice, None),
        ];
        let file = |post_processor: &str| {
            unigram_with_piece_of(1).replace(
                r#""post_processor":null"#,
                &format!(r#""post_processor":{post_processor}"#),
            )
        };
        for (name, post_processor, expected) in cases {
            let engine = StableEngine::from_json(&file(&post_processor)).unwrap();
            let ends = engine.template_ends(true);
            let found = ends.map(|ends| (ends.before.as_slice(), ends.after.as_slice()));
            assert_eq!(found, expected, "{name}");
            let without = engine.template_ends(false).unwrap();
            assert!(without.before.is_empty() && without.after.is_empty());
            let Some(ends) = ends else { continue };
            let encode = |add: bool| {
                let (mut scratch, mut ids) = (Scratch::new(), Ids::with_capacity(0));
                engine
                    .encode_into("a x a", add, true, &mut scratch, &mut ids)
                    .unwrap();
                ids.as_slice().to_vec()
            };
            let around = [&ends.before[..], &encode(false), &ends.after].concat();
            assert_eq!(encode(true), around, "{name}");
        }
        // A file that truncates: its template may take the text's last ids.
        let truncated = file(&bos).replace(
            r#""truncation":null"#,
            r#""truncation":{"direction":"Right","max_length":2,"strategy":"LongestFirst",
                "stride":0}"#,
        );
        let engine = StableEngine::from_json(&truncated).unwrap();
        assert!(engine.template_ends(true).is_none());
    }

    #[test]
    fn shape_reads_escapes_and_stops_at_an_unterminated_string() {
        // The escaped quote and backslash are inside the string; the brackets after it count.
        assert_eq!(shape(r#"{"a\"[\\": [[1]]}"#), (3, 6));
        assert_eq!(shape(r#"["\\"]"#), (1, 2));
        assert_eq!(shape(r#"[["ab", "abc"#), (2, 2));
        assert_eq!(shape(r#"["\"#), (1, 0));
        assert_eq!(shape(""), (0, 0));
    }
}
