//! Long texts, encoded (and read) a part at a time, cut where the tokenizer's pieces always part.
//!
//! An engine's working memory for one text grows with the text (its pieces, their byte-level
//! spelling, the spans, the buffers they are built in): about four times a 150 MB text besides its
//! ids, on the release candidate. The ids of a text under a tiktoken-style pattern are the ids of
//! its pieces, each encoded alone, so a text cut where one piece ends and the next begins encodes,
//! part after part, to the ids of the whole, and each part needs working memory for its own size
//! only. [`Cuts::parts`] cuts a text into parts of at least [`PART_BYTES`] at such places;
//! [`Cuts::last_from`] finds one in the start of a text still being read (a reader's long line,
//! `Tokenizer.lastSafeCut`), since whether a place is one reads only the characters next to it.
//!
//! **Where a cut is safe.** At a *word gap*: where a letter (`\p{L}`) ends and a character that is
//! not part of a word begins (not `\w`, so no letter, mark, digit or connector; no apostrophe; not
//! Han): before the space of `…d w…`, the comma of `…d, w…`, the `。` of `…文。中…`, the tab,
//! newline or bracket after a word. Under the patterns the release candidate's matcher runs
//! (tiktoken's for GPT-2, cl100k_base and o200k_base; Qwen's, Tekken's and Kimi K2's, `openai.rs`),
//! in every spelling tiktoken's regex engine runs them:
//!
//! 1. The piece holding the letter ends at the cut. Every alternative that takes a letter takes a
//!    run of letters (with marks in o200k_base's, Tekken's and Kimi K2's; in Kimi K2's, a run of
//!    Han or a run of no Han) and at most a contraction, which begins with an apostrophe; the
//!    character at the cut continues none of them.
//! 2. The piece after it begins at the cut, in the text and in the part after the cut alike: no
//!    pattern looks behind or anchors at a start, and the part is the text from the cut on.
//! 3. No piece before the cut reads past it: the only look-ahead (`\s+(?!\S)`) and the end anchor
//!    (`\s++$`) read the character after a run of white space, and the character before the cut
//!    is a letter.
//!
//! So the pieces of the text are the pieces of its parts, in order, and the merges never cross a
//! piece. Both characters must also read the same to every engine and every normalizer a
//! tokenizer.json may have (none, NFC, NFKC): neither is one the engines' Unicode versions
//! disagree on (`unicode_drift.rs`; the classes here are Unicode 16.0's, the references'), and each
//! is a starter that NFKC leaves as it is and that composes with nothing before it
//! (`NFKC_Quick_Check=Yes`, combining class 0). Normalizing the text is then normalizing the part
//! before the cut, then the part after; the letter stays, and the character after it stays or
//! composes with marks after it into another character that is not part of a word (a test checks
//! every composition). A pattern of the user's own (`Tokenizer.fromTiktoken`) is not cut: nothing
//! is known of it.
//!
//! **Tokens found before the split** (special tokens; a tokenizer.json's added tokens) are matched
//! in the text first, and one cut in two would be matched on neither side: [`Cuts::outside`]
//! leaves out every gap inside an occurrence of one, and inside what could begin one where the
//! bytes read so far end. Each occurrence lies on one side of every cut left, so the leftmost
//! matches of the text are those of its parts.
//!
//! **A Hugging Face tokenizer.json** splits text the same way where its pre-tokenizer is one of
//! those patterns with a byte-level step that adds no space before a text
//! ([`file_splits_at_word_gaps`]); its added tokens and truncation are checked by the engine
//! that has them (`StableEngine::cuts`). Its template's tokens go around the whole text, not each
//! part: the parts are encoded without them, between the ids the template puts around any text
//! (`StableEngine::template_ends`).
//!
//! **DeepSeek V3's pre-tokenizer** ([`DEEPSEEK_V3_SPLITS`]) is three splits in turn, each keeping
//! its matches and the text between them as pieces, the next split splitting each piece again:
//! runs of digits (`\p{N}`, three at a time), runs of Han and kana, then a tiktoken-style pattern.
//! Where a split's pieces of the whole text are its pieces of the two parts but for one piece that
//! spans the cut, which the parts have in two at the cut, the next split sees the same text either
//! way but for that piece; so the pieces of the whole are those of its parts where each split
//! either ends a piece at the cut or leaves a spanning piece that the splits after it cut there,
//! and the last split ends one there. At a word gap:
//!
//! 1. A run of digits holds no letter, so none spans the cut; one starting at the cut starts there
//!    in the part after it too, and is taken three digits at a time from there in both. The text
//!    between runs that spans the cut is, in the parts, the same text in two.
//! 2. A run of Han and kana that spans the cut (a character of the kana blocks that is not part of
//!    a word, such as `・`, after the letter) is, in the parts, the run up to the cut and the run
//!    from it; the text between runs, as in 1.
//! 3. The last pattern ends a piece at the cut, argued as above: every alternative that takes a
//!    letter takes a run of letters and marks, or of ASCII letters after one punctuation mark,
//!    and nothing past it; the only look-ahead reads the character after a run of white space.
//!
//! StarCoder's pre-tokenizer is the same in two steps: digits (`Digits`: each alone, or runs),
//! then the byte-level step's own pattern, GPT-2's, as 1 and 3.
//!
//! **A file whose pre-tokenizer splits at every space** (BERT's, `Whitespace`, `WhitespaceSplit`,
//! a `Metaspace` that splits before each `▁`), behind normalizers that read one character at a
//! time (NFC, NFD, NFKC, NFKD, lowercasing, stripping accents, BERT's), gives its model a piece
//! at a time, whatever the model, and no piece holds a space: a text cut before a space after a
//! letter gives the same pieces in its parts ([`file_splits_at_spaces`]). Behind SentencePiece's
//! character map (XLM-RoBERTa's, T5's), which rewrites a grapheme cluster at a time, it is cut
//! there only where the letter and the space are clusters the map rewrites alone, into text
//! that still parts there ([`CharsMapCuts`]).
//!
//! **A SentencePiece-style BPE file** that writes each space as `▁` (`Replace`, as Gemma's) and
//! has no pre-tokenizer that cuts the text, or writes them with its pre-tokenizer alone
//! (`Metaspace`, as files converted from SentencePiece without the legacy normalizer), merges over
//! the whole text at once. Its model may be cut before a `▁` after a character no token holds
//! right before a `▁` (`marker_cuts.rs` says why: no merge crosses there); the replacement changes
//! a character for a character, so the normalized text is the normalized parts joined. Such a
//! file is cut
//! ([`Cuts::at_spaces_after_letters_but`]) at a word gap whose character is a space and whose
//! letter is not one some token joins to a `▁`.
//!
//! **A file that also puts a `▁` before each text** (`Prepend`, as Llama 2's and Mistral's older
//! files) puts one before each stretch of text between its added tokens, so a part after a cut
//! would begin with two. Each part after the first is encoded without the space it begins at
//! ([`Cuts::after_prepended_markers`]): the `▁` put before it is the one that space becomes in the
//! whole text. That holds where a character follows the space in the part and no added token
//! begins there (the stretch after the space then begins with it, in the text and in the part);
//! the added tokens must match in the text as it is, not normalized. Such parts are not the text
//! cut in two: a reader handing a text over in parts ([`Cuts::last_from`]) cuts these files only
//! where the part from the cut is encoded as one ([`Cuts::left_out_after_cut`]: without its space;
//! `Tokenizer.lastSafeCut` and the encode methods' `afterCut`), and a place there also reads the
//! character after it.

use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use regex_syntax::hir::{Class, HirKind};
use serde_json::Value;
use spm_precompiled::Precompiled;
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{IsNormalized, is_nfkc_quick};
use unicode_segmentation::GraphemeCursor;

use super::marker_cuts::MARKER;
use super::openai::cuts_safely;
use super::unicode_drift;

/// The size past which a stretch of ordinary text is encoded a part at a time, on every engine.
/// Small, since a part's working memory is many times the part (the stable engine's some 200
/// times: its normalized strings keep an alignment per byte, its encoding a string and offsets per
/// token; the release candidate's about 15 times under a Unigram model), and the allocator keeps
/// some of what each thread's parts freed: one 160 MB line under the SentencePiece fixture peaked
/// at about 300 MiB in `npx batchtok encode` with parts of 1 MiB and at about 160 MiB with parts
/// of this size, in the same time (`benchmark/results/cli.md`). Large enough that the calls and
/// cuts cost nothing measurable. While the release candidate is being built, each part goes to
/// whichever engine is ready when its turn comes, so a long text moves on to the release
/// candidate one part after its build ends.
pub const PART_BYTES: usize = 64 << 10;

/// The places a text may be cut: its word gaps, less those inside a token matched in the text
/// before it is split (the module says why both).
#[derive(Debug, Clone)]
pub struct Cuts {
    /// The tokens that hold a word gap; no other can hold a cut.
    tokens: Vec<TokenGaps>,
    /// Where the file's model merges over a whole text (a SentencePiece-style BPE): the letters
    /// some token joins to a following `▁`. A cut is then a word gap at a space whose letter
    /// before is none of these.
    spaces_after_letters_but: Option<Vec<char>>,
    /// Where the file puts a `▁` before each text: the characters its added tokens begin with.
    /// A cut is then a space with a character after it that begins none, and each part after the
    /// first is without that space (the module says why).
    prepended_marker: Option<Vec<char>>,
    /// Where the file normalizes with SentencePiece's character map before it splits at spaces:
    /// the map, which must read the letter and the space at a cut each alone.
    charsmap: Option<Arc<CharsMapCuts>>,
}

/// A token that holds word gaps, and where.
#[derive(Debug, Clone)]
struct TokenGaps {
    text: Box<[u8]>,
    /// The offsets of its word gaps.
    gaps: Vec<usize>,
}

impl Cuts {
    /// Every word gap: the cuts of a text in which no token is matched (special tokens already cut
    /// out, or read as ordinary text).
    pub const EVERY_WORD_GAP: Cuts = Cuts {
        tokens: Vec::new(),
        spaces_after_letters_but: None,
        prepended_marker: None,
        charsmap: None,
    };

    /// The word gaps outside every occurrence of `tokens`.
    pub fn outside<'t>(tokens: impl IntoIterator<Item = &'t str>) -> Cuts {
        let tokens = tokens
            .into_iter()
            .filter_map(|token| {
                let bytes = token.as_bytes();
                let gaps: Vec<usize> = word_gaps(bytes).collect();
                (!gaps.is_empty()).then(|| TokenGaps {
                    text: bytes.into(),
                    gaps,
                })
            })
            .collect();
        Cuts {
            tokens,
            spaces_after_letters_but: None,
            prepended_marker: None,
            charsmap: None,
        }
    }

    /// These cuts, only at a space after a letter that is not one of `joined_to_markers`: the
    /// cuts of a SentencePiece-style file that writes each space as `▁` and merges over the whole
    /// text, where no token holds any other letter right before a `▁` (the module says why).
    pub fn at_spaces_after_letters_but(self, joined_to_markers: Vec<char>) -> Cuts {
        Cuts {
            spaces_after_letters_but: Some(joined_to_markers),
            ..self
        }
    }

    /// These cuts, where the file also puts a `▁` before each text, whose added tokens begin with
    /// `token_starts`: only at a space that a character beginning no added token follows, each
    /// part after the first without that space ([`left_out_after_cut`](Self::left_out_after_cut)).
    pub fn after_prepended_markers(self, token_starts: Vec<char>) -> Cuts {
        Cuts {
            prepended_marker: Some(token_starts),
            ..self
        }
    }

    /// The parts of `text` to encode, in order, whose ids joined are the text's: each but the last
    /// at least `size` bytes, every cut one of these. A text without one after `size` bytes is one
    /// part. Where the file puts a `▁` before each text, each part after the first is without the
    /// space the text is cut at; otherwise the parts joined are the text.
    pub fn parts<'t>(&self, text: &'t str, size: usize) -> impl Iterator<Item = &'t str> {
        let mut rest = text;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let bytes = rest.as_bytes();
            let cut = (size.max(1)..bytes.len())
                .filter(|&at| MAY_BEGIN_GAP[usize::from(bytes[at])])
                .find(|&at| self.is_cut(bytes, at))
                .unwrap_or(bytes.len());
            // A word gap is where a character begins, so `cut` is a character boundary; where the
            // file prepends a `▁`, the byte there is a space.
            let (part, after) = rest.split_at(cut);
            rest = &after[self.left_out_after_cut(after.as_bytes())..];
            Some(part)
        })
    }

    /// How many bytes at the start of `part`, the text from one of these cuts on, are left out of
    /// what is encoded for it, so that its ids follow those of the text before the cut: the space
    /// it begins at where the file puts a `▁` before each text (that `▁` stands for the space),
    /// else none.
    pub fn left_out_after_cut(&self, part: &[u8]) -> usize {
        usize::from(self.prepended_marker.is_some() && part.first() == Some(&b' '))
    }

    /// Whether the text from a cut on is encoded without the space it begins at
    /// ([`left_out_after_cut`](Self::left_out_after_cut)), rather than as it is.
    pub fn leaves_out_space_at_cut(&self) -> bool {
        self.prepended_marker.is_some()
    }

    /// The last cut at or after `from` in `bytes`, the start of a text whose rest may not be known
    /// yet: cut there, the bytes before it encode to the ids the whole text begins with, whatever
    /// follows (from the cut on, less [`left_out_after_cut`](Self::left_out_after_cut)). A place
    /// is read from the character before it to the end of the one at it (and of the one after
    /// that, where the file puts a `▁` before each text), so a caller that finds none can ask
    /// again from `bytes.len() - 4` once more bytes come (the last character may have been
    /// incomplete), and read each byte about once.
    pub fn last_from(&self, bytes: &[u8], from: usize) -> Option<usize> {
        (from.max(1)..bytes.len())
            .rev()
            .filter(|&at| MAY_BEGIN_GAP[usize::from(bytes[at])])
            .find(|&at| self.is_cut(bytes, at))
    }

    fn is_cut(&self, bytes: &[u8], at: usize) -> bool {
        let at_a_space_it_may_cut = || match &self.spaces_after_letters_but {
            None => true,
            Some(joined) => {
                bytes[at] == b' '
                    && char_ending_at(bytes, at).is_some_and(|letter| !joined.contains(&letter))
            }
        };
        let begins_no_token_after = || match &self.prepended_marker {
            None => true,
            Some(token_starts) => (bytes[at] == b' ' && at + 1 < bytes.len())
                .then(|| char_starting_at(bytes, at + 1))
                .flatten()
                .is_some_and(|next| !token_starts.contains(&next)),
        };
        is_word_gap(bytes, at)
            && at_a_space_it_may_cut()
            && begins_no_token_after()
            && self
                .charsmap
                .as_ref()
                .is_none_or(|map| map.keeps(bytes, at))
            && !self.tokens.iter().any(|token| token.may_hold(bytes, at))
    }
}

impl TokenGaps {
    /// Whether an occurrence of the token holds `at`, or the start of one that the bytes after
    /// `bytes` could finish.
    fn may_hold(&self, bytes: &[u8], at: usize) -> bool {
        self.gaps.iter().any(|&gap| {
            at >= gap && {
                let start = at - gap;
                let end = (start + self.text.len()).min(bytes.len());
                bytes[start..end] == self.text[..end - start]
            }
        })
    }
}

/// Whether a word gap may be at a byte: it begins an ASCII character that is not part of a word,
/// or a character that is not ASCII. A long text with no gap is mostly bytes that cannot be one.
const MAY_BEGIN_GAP: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = if b.is_ascii() {
            !(b.is_ascii_alphanumeric() || b == b'_' || b == b'\'')
        } else {
            matches!(b, 0xC2..=0xF4)
        };
        byte += 1;
    }
    table
};

/// Whether `text` holds a word gap.
pub fn holds_word_gap(text: &str) -> bool {
    word_gaps(text.as_bytes()).next().is_some()
}

/// Whether `c` is part of a word (`\w`: a letter, mark, digit or connector), as the regex engines
/// read it.
pub fn is_word_character(c: char) -> bool {
    in_ranges(&classes().word, c)
}

/// The word gaps of `bytes`, in order.
fn word_gaps(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    (1..bytes.len()).filter(|&at| is_word_gap(bytes, at))
}

/// Whether `at` is a word gap of `bytes`: a letter ends there and a character that is not part of
/// a word begins there, both whole in `bytes` and read alike by every engine and normalizer.
fn is_word_gap(bytes: &[u8], at: usize) -> bool {
    let (Some(&before), Some(&after)) = (
        at.checked_sub(1).and_then(|before| bytes.get(before)),
        bytes.get(at),
    ) else {
        return false;
    };
    if before.is_ascii() && after.is_ascii() {
        return before.is_ascii_alphabetic() && MAY_BEGIN_GAP[usize::from(after)];
    }
    // The character at `at` first: no character starts at most bytes of a long text with no
    // gap (CJK letters, three bytes each), and most that do are letters.
    char_starting_at(bytes, at).is_some_and(may_follow_a_gap)
        && char_ending_at(bytes, at)
            .is_some_and(|letter| in_ranges(&classes().letters, letter) && reads_alike(letter))
}

/// Whether a word gap may be before `c`: it ends words, and every engine and normalizer reads it
/// alike. Looked up in a table for the Basic Multilingual Plane, which a text with no gap (CJK
/// letters) asks about at every character.
fn may_follow_a_gap(c: char) -> bool {
    let code = c as usize;
    match classes().before_gap_bmp.get(code / 64) {
        Some(bits) => bits >> (code % 64) & 1 == 1,
        None => classes().ends_words_alike(c),
    }
}

/// The character that starts at `at`, where `bytes` holds all of it.
fn char_starting_at(bytes: &[u8], at: usize) -> Option<char> {
    let continuation = |at: usize| {
        bytes
            .get(at)
            .filter(|&&b| b & 0xC0 == 0x80)
            .map(|&b| u32::from(b & 0x3F))
    };
    let lead = u32::from(bytes[at]);
    // The two- and three-byte forms (every letter of the Basic Multilingual Plane) decoded here, as
    // a text with no gap asks at every character; the rest by the standard library.
    let code = match lead {
        0x00..=0x7F => lead,
        0xC2..=0xDF => (lead & 0x1F) << 6 | continuation(at + 1)?,
        0xE0..=0xEF => (lead & 0x0F) << 12 | continuation(at + 1)? << 6 | continuation(at + 2)?,
        0xF0..=0xF4 => return one_char(bytes.get(at..at + 4)?),
        _ => return None,
    };
    // A three-byte form of a code point below U+0800, or a surrogate, is not UTF-8.
    char::from_u32(code).filter(|_| lead < 0xE0 || code >= 0x800)
}

/// The character that ends at `at`.
fn char_ending_at(bytes: &[u8], at: usize) -> Option<char> {
    let start = (at.saturating_sub(4)..at)
        .rev()
        .find(|&start| bytes[start] & 0xC0 != 0x80)?;
    one_char(&bytes[start..at])
}

/// `bytes` as a character, where they are the UTF-8 of one.
fn one_char(bytes: &[u8]) -> Option<char> {
    let mut chars = std::str::from_utf8(bytes).ok()?.chars();
    chars.next().filter(|_| chars.next().is_none())
}

/// Whether every engine and normalizer reads `c` alike, and normalizing a text leaves it and
/// parts the text before it from the text from it (the module says why that is needed).
fn reads_alike(c: char) -> bool {
    let mut utf8 = [0; 4];
    !unicode_drift::contains_drift(c.encode_utf8(&mut utf8), true)
        && canonical_combining_class(c) == 0
        && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes
}

/// The Unicode classes a word gap reads, as tiktoken's regex engine reads them.
struct Classes {
    letters: Vec<(char, char)>,
    word: Vec<(char, char)>,
    han: Vec<(char, char)>,
    /// [`may_follow_a_gap`] of each code point below U+10000, a bit each.
    before_gap_bmp: Vec<u64>,
}

impl Classes {
    /// Whether a letter's run ends at `c` under every pattern that is cut: `c` is not part of a
    /// word, not an apostrophe (a contraction's) and not Han (Kimi K2's runs of Han).
    fn ends_words(&self, c: char) -> bool {
        !in_ranges(&self.word, c) && c != '\'' && !in_ranges(&self.han, c)
    }

    /// [`may_follow_a_gap`], read off the classes rather than the table made of it.
    fn ends_words_alike(&self, c: char) -> bool {
        self.ends_words(c) && reads_alike(c)
    }
}

fn classes() -> &'static Classes {
    static CLASSES: OnceLock<Classes> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut classes = Classes {
            letters: class_ranges(r"\p{L}"),
            word: class_ranges(r"\w"),
            han: class_ranges(r"\p{Han}"),
            before_gap_bmp: Vec::new(),
        };
        let mut bits = vec![0u64; 0x10000 / 64];
        for c in (0..0x10000).filter_map(char::from_u32) {
            if classes.ends_words_alike(c) {
                bits[c as usize / 64] |= 1 << (c as usize % 64);
            }
        }
        classes.before_gap_bmp = bits;
        classes
    })
}

/// The ranges of a Unicode class, as `regex-syntax` resolves it.
fn class_ranges(class: &str) -> Vec<(char, char)> {
    let hir = regex_syntax::parse(class).expect("a class regex-syntax resolves");
    let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
        panic!("{class:?} is not a Unicode class");
    };
    class
        .ranges()
        .iter()
        .map(|range| (range.start(), range.end()))
        .collect()
}

/// Whether `c` is in `ranges`, sorted and disjoint.
fn in_ranges(ranges: &[(char, char)], c: char) -> bool {
    let after = ranges.partition_point(|&(_, end)| end < c);
    ranges.get(after).is_some_and(|&(start, _)| start <= c)
}

/// DeepSeek V3's splits, in order, as its tokenizer.json spells them (R1, V3.1 and V3.2 have the
/// same): digits, Han and kana, then the rest (the module says why a word gap is safe under them).
pub const DEEPSEEK_V3_SPLITS: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    concat!(
        r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"##,
        "|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    ),
];

/// Whether a tokenizer.json whose normalizer and pre-tokenizer are these (as the stable crate
/// writes them) splits a text into the pieces one of the patterns [`Cuts`] may cut splits it
/// into: no normalizer, or NFC or NFKC (alone or in a sequence); and a byte-level pre-tokenizer
/// over GPT-2's pattern, or a split by one of the patterns that keeps every match as a piece
/// (`Isolated`; or `Removed` inverted, which removes what the pattern leaves unmatched: nothing,
/// as each of them matches every character) or DeepSeek V3's three splits (`Isolated`), before a
/// byte-level step with no pattern of its own; or digits split off before a byte-level step over
/// GPT-2's pattern. The byte-level step must add no space before a text: it would add one before
/// a part that begins with a comma, and not before the comma in the whole text.
pub fn file_splits_at_word_gaps(normalizer: Option<&Value>, pre_tokenizer: Option<&Value>) -> bool {
    let keeps_word_gaps = |normalizer: &Value| matches!(kind(normalizer), "NFC" | "NFKC");
    let normalizes_safely = match normalizer {
        None | Some(Value::Null) => true,
        Some(normalizer) => {
            normalizer_steps(normalizer).is_some_and(|all| all.iter().all(keeps_word_gaps))
        }
    };
    let byte_level = |step: &Value, with_pattern: bool| {
        kind(step) == "ByteLevel"
            && step["use_regex"].as_bool() == Some(with_pattern)
            && step["add_prefix_space"].as_bool() == Some(false)
    };
    let splits_safely = |step: &Value| {
        let keeps_matches = matches!(
            (step["behavior"].as_str(), step["invert"].as_bool()),
            (Some("Isolated"), Some(false)) | (Some("Removed"), Some(true))
        );
        kind(step) == "Split"
            && keeps_matches
            && step["pattern"]["Regex"].as_str().is_some_and(cuts_safely)
    };
    let pre_tokenizes_safely = match pre_tokenizer {
        Some(step) if byte_level(step, true) => true,
        Some(sequence) if kind(sequence) == "Sequence" => {
            match sequence["pretokenizers"].as_array().map(Vec::as_slice) {
                Some([step, byte_step]) => {
                    (splits_safely(step) && byte_level(byte_step, false))
                        || (kind(step) == "Digits" && byte_level(byte_step, true))
                }
                Some([steps @ .., byte_step]) => {
                    steps
                        .iter()
                        .map(isolating_pattern)
                        .eq(DEEPSEEK_V3_SPLITS.map(Some))
                        && byte_level(byte_step, false)
                }
                _ => false,
            }
        }
        _ => false,
    };
    normalizes_safely && pre_tokenizes_safely
}

/// How a tokenizer.json whose normalizer and pre-tokenizer are these (as the stable crate writes
/// them) is cut, where it splits a text at every space into pieces its model encodes one at a
/// time: a pre-tokenizer that splits at white space (`WhitespaceSplit`; `Whitespace`, whose
/// pieces are runs of word characters or of others, none of white space; BERT's, which also
/// isolates punctuation) or writes each space as `▁` and splits before it (`Metaspace` with
/// `split`, which puts no `▁` before a text that begins with a space, in any prepend scheme),
/// alone or first in a sequence (each later step splits each piece alone, and a `Metaspace` among
/// them puts a `▁` before the piece after a cut as before that piece in the whole text); and
///
/// - no normalizer, or one made of normalizers that read a character at a time (NFC, NFD, NFKC,
///   NFKD, lowercasing, stripping accents, BERT's). Cut before a space after a letter, such a
///   text gives its model the same pieces in its parts as in the whole: no normalizer joins the
///   letter and the space (the space is a starter that composes with nothing before it), and
///   every piece ends at the space. Or
/// - SentencePiece's character map (`Precompiled`), then at most a strip of the text's end
///   (`Strip` of the right only) and a regex `Replace` of runs of spaces (` {2,}`) by text that
///   begins with a character the pre-tokenizer splits before, as transformers converts
///   SentencePiece models (XLM-RoBERTa's, T5's). The map rewrites the text a grapheme cluster at
///   a time, so it is cut only where the letter and the space are clusters of their own that it
///   rewrites alike in the parts ([`CharsMapCuts`]); the letter's rewriting then ends in no white
///   space, so the end a part is stripped of and the run of spaces after a cut are the whole
///   text's.
pub fn file_splits_at_spaces(
    normalizer: Option<&Value>,
    pre_tokenizer: Option<&Value>,
) -> Option<SplitsAtSpaces> {
    let first_step = match pre_tokenizer {
        Some(sequence) if kind(sequence) == "Sequence" => sequence["pretokenizers"].get(0),
        step => step,
    }?;
    let splits_before_marker = match kind(first_step) {
        "WhitespaceSplit" | "Whitespace" | "BertPreTokenizer" => false,
        "Metaspace"
            if first_step["replacement"].as_str() == Some(MARKER)
                && first_step["split"].as_bool() == Some(true) =>
        {
            true
        }
        _ => return None,
    };
    let reads_a_character_at_a_time = |step: &Value| {
        matches!(
            kind(step),
            "NFC" | "NFD" | "NFKC" | "NFKD" | "Lowercase" | "StripAccents" | "BertNormalizer"
        )
    };
    let steps = match normalizer {
        None | Some(Value::Null) => &[][..],
        Some(normalizer) => normalizer_steps(normalizer)?,
    };
    let charsmap = match steps {
        [map, after_map @ ..] if kind(map) == "Precompiled" => {
            // At the start of the text after a cut: a space, or a `▁` where the pre-tokenizer
            // writes spaces as `▁`.
            let begins_a_piece =
                |c: char| c == ' ' || (splits_before_marker && MARKER.starts_with(c));
            let strips_the_end =
                |step: &Value| kind(step) == "Strip" && step["strip_left"].as_bool() == Some(false);
            let joins_runs_of_spaces = |step: &Value| {
                kind(step) == "Replace"
                    && step["pattern"]["Regex"].as_str() == Some(" {2,}")
                    && step["content"]
                        .as_str()
                        .and_then(|content| content.chars().next())
                        .is_some_and(begins_a_piece)
            };
            if !after_map
                .iter()
                .all(|step| strips_the_end(step) || joins_runs_of_spaces(step))
            {
                return None;
            }
            let map = STANDARD
                .decode(map["precompiled_charsmap"].as_str()?)
                .ok()
                .and_then(|map| Precompiled::from(&map).ok())?;
            // A space is a cluster the map rewrites the same wherever it stands alone: what it
            // makes of one must begin a piece, or no space is a place to cut.
            let space = map.transform(" ").unwrap_or(" ");
            if !space.chars().next().is_some_and(begins_a_piece) {
                return None;
            }
            Some(Arc::new(CharsMapCuts { map }))
        }
        steps if steps.iter().all(reads_a_character_at_a_time) => None,
        _ => return None,
    };
    Some(SplitsAtSpaces { charsmap })
}

/// How a file that splits a text at every space is cut ([`file_splits_at_spaces`]).
#[derive(Debug)]
pub struct SplitsAtSpaces {
    charsmap: Option<Arc<CharsMapCuts>>,
}

impl SplitsAtSpaces {
    /// `cuts`, only before a space after a letter, and only where the file's character map (if
    /// it has one) reads the two alone.
    pub fn cuts(self, cuts: Cuts) -> Cuts {
        Cuts {
            charsmap: self.charsmap,
            ..cuts.at_spaces_after_letters_but(Vec::new())
        }
    }
}

/// What a cut before a space after a letter also needs where SentencePiece's character map
/// normalizes the text first. The map cuts the text into extended grapheme clusters and rewrites
/// each alone (by the entry of its shortest prefix that has one, else character by character),
/// so the text normalized is its parts normalized, joined, where a cluster boundary falls at the
/// cut: UAX #29 puts one before a space unless the character before it is a prepended
/// concatenation mark (GB9b), and the clusters of the part after the cut are the text's, as no
/// rule that reads further back reads past a space. Then the letter's cluster and the space's
/// are each rewritten alone where each is a cluster of its own: the letter's rewriting must end
/// in no white space (the text's end is stripped, and a run of spaces joined, as in the whole
/// text), and the space's begins with a character the pre-tokenizer splits before (which
/// [`file_splits_at_spaces`] checks once for the file).
#[derive(Debug)]
pub struct CharsMapCuts {
    map: Precompiled,
}

/// How far before a cut's letter the cluster rules may read: a rule that reads further (a run of
/// flags, an emoji sequence, an Indic conjunct) leaves no cut there.
const CLUSTER_CONTEXT: usize = 64;

impl CharsMapCuts {
    /// Whether a text may be cut at `at`, a space after a letter: the letter, the space and the
    /// character after the space are clusters of their own, none of the characters the rules read
    /// there is one whose classes the Unicode versions disagree on, and the map rewrites the
    /// letter as [`CharsMapCuts`] says.
    fn keeps(&self, bytes: &[u8], at: usize) -> bool {
        let (Some(letter), Some(next)) = (
            char_ending_at(bytes, at),
            bytes
                .get(at + 1)
                .and_then(|_| char_starting_at(bytes, at + 1)),
        ) else {
            return false;
        };
        let letter_start = at - letter.len_utf8();
        let end = at + 1 + next.len_utf8();
        let start = (letter_start.saturating_sub(CLUSTER_CONTEXT)..letter_start)
            .find(|&start| bytes[start] & 0xC0 != 0x80)
            .unwrap_or(letter_start);
        let Ok(window) = std::str::from_utf8(&bytes[start..end]) else {
            return false;
        };
        // From the character before the letter, which may join it (GB9b), to the one after the
        // space, which may join the space (GB9, GB9a).
        let before_letter = char_ending_at(bytes, letter_start).map_or(0, char::len_utf8);
        let read_at_the_cut = &window[letter_start - before_letter - start..];
        let clusters_alone = [letter_start, at, at + 1].into_iter().all(|place| {
            GraphemeCursor::new(place, bytes.len(), true).is_boundary(window, start) == Ok(true)
        });
        let mut utf8 = [0; 4];
        let letter = letter.encode_utf8(&mut utf8);
        let letter_mapped = self.map.transform(letter).unwrap_or(letter);
        clusters_alone
            && !unicode_drift::contains_drift(read_at_the_cut, true)
            && letter_mapped
                .chars()
                .next_back()
                .is_some_and(|last| !last.is_whitespace())
    }
}

/// How a SentencePiece-style tokenizer.json writes the spaces of a text
/// ([`file_marks_spaces`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkedSpaces {
    /// Each space as `▁`, and no `▁` before a text that begins with a space: Gemma's, and a
    /// `Metaspace` pre-tokenizer's in every prepend scheme.
    Alone,
    /// Each space as `▁`, and a `▁` before each text (Llama 2's).
    AfterPrepended,
}

/// How a tokenizer.json whose normalizer and pre-tokenizer are these (as the stable crate writes
/// them) writes spaces, where it writes each as `▁` and its model gets the pieces of the whole
/// text that it would get of the parts cut before a space: a normalizer that does (`Replace`,
/// alone or in a sequence with a `Prepend` of a `▁`) with no pre-tokenizer that cuts the text it
/// writes (none, or a split on a string holding a space, which that text no longer has); or no
/// normalizer and a `Metaspace` pre-tokenizer, as files converted from SentencePiece without the
/// legacy normalizer have. The latter puts a `▁` before a stretch of text (in its `always` and
/// `first` schemes) only where the stretch does not begin with one, so the part from a cut,
/// which begins at a space, is written as in the whole text. (One that also splits at each `▁`
/// is cut at every space after a letter: [`file_splits_at_spaces`].)
pub fn file_marks_spaces(
    normalizer: Option<&Value>,
    pre_tokenizer: Option<&Value>,
) -> Option<MarkedSpaces> {
    if normalizer.is_none() {
        return pre_tokenizer
            .filter(|step| {
                kind(step) == "Metaspace" && step["replacement"].as_str() == Some(MARKER)
            })
            .map(|_| MarkedSpaces::Alone);
    }
    let replaces_spaces = |step: &Value| {
        kind(step) == "Replace"
            && step["pattern"]["String"].as_str() == Some(" ")
            && step["content"].as_str() == Some(MARKER)
    };
    // Before the replacement or after it alike: the `▁` it puts is not a space.
    let prepends_marker =
        |step: &Value| kind(step) == "Prepend" && step["prepend"].as_str() == Some(MARKER);
    let marked = match normalizer.and_then(normalizer_steps)? {
        [step] if replaces_spaces(step) => MarkedSpaces::Alone,
        [first, second]
            if (prepends_marker(first) && replaces_spaces(second))
                || (replaces_spaces(first) && prepends_marker(second)) =>
        {
            MarkedSpaces::AfterPrepended
        }
        _ => return None,
    };
    let splits_nothing = match pre_tokenizer {
        None | Some(Value::Null) => true,
        Some(split) => {
            kind(split) == "Split"
                && split["invert"].as_bool() == Some(false)
                && split["pattern"]["String"]
                    .as_str()
                    .is_some_and(|pattern| pattern.contains(' '))
        }
    };
    splits_nothing.then_some(marked)
}

/// Whether a tokenizer.json's normalizer is a sequence of none (or of such sequences), which
/// leaves every text as it is.
pub fn normalizes_nothing(normalizer: &Value) -> bool {
    kind(normalizer) == "Sequence"
        && normalizer["normalizers"]
            .as_array()
            .is_some_and(|all| all.iter().all(normalizes_nothing))
}

/// The normalizers a tokenizer.json's normalizer runs in turn: a sequence's members, or itself.
fn normalizer_steps(normalizer: &Value) -> Option<&[Value]> {
    if kind(normalizer) == "Sequence" {
        normalizer["normalizers"].as_array().map(Vec::as_slice)
    } else {
        Some(std::slice::from_ref(normalizer))
    }
}

/// The pattern of a split that keeps its matches and the text between them as pieces
/// (`Isolated`).
fn isolating_pattern(step: &Value) -> Option<&str> {
    let isolates = kind(step) == "Split"
        && step["behavior"].as_str() == Some("Isolated")
        && step["invert"].as_bool() == Some(false);
    step["pattern"]["Regex"].as_str().filter(|_| isolates)
}

/// A tokenizer.json component's `type`.
fn kind(component: &Value) -> &str {
    component["type"].as_str().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_gap(text: &str) -> Vec<&str> {
        Cuts::EVERY_WORD_GAP.parts(text, 1).collect()
    }

    #[test]
    fn parts_join_to_the_text_and_are_cut_only_at_word_gaps() {
        let text = "Hello world, it's 42 days.  Tab\tthen é word x y\nend a b";
        for size in [1, 2, 5, 13, 40, text.len(), text.len() + 1, usize::MAX] {
            let parts: Vec<&str> = Cuts::EVERY_WORD_GAP.parts(text, size).collect();
            assert_eq!(parts.concat(), text, "size {size}");
            for (i, part) in parts.iter().enumerate() {
                assert!(!part.is_empty());
                if i + 1 < parts.len() {
                    assert!(part.len() >= size, "size {size}: {parts:?}");
                    let joined = [*part, parts[i + 1]].concat();
                    assert!(is_word_gap(joined.as_bytes(), part.len()), "{parts:?}");
                }
            }
        }
        assert_eq!(
            every_gap(text),
            [
                "Hello", " world", ", it's", " 42 days", ".  Tab", "\tthen", " é", " word", " x",
                " y", "\nend", " a", " b"
            ]
        );
        assert_eq!(every_gap(""), [""; 0]);
        assert_eq!(every_gap("日本語 テキスト"), ["日本語", " テキスト"]);
        assert_eq!(every_gap("Привет, мир!"), ["Привет", ", мир", "!"]);
        assert_eq!(
            every_gap("中文。中文「引用」好"),
            ["中文", "。中文", "「引用", "」好"]
        );
    }

    #[test]
    fn a_gap_needs_a_letter_before_a_character_that_is_not_part_of_a_word() {
        for whole in [
            "snake_case",
            "abc123",
            "it's",
            // A mark before the space, not a letter.
            "e\u{301} x",
            // A join control is part of a word.
            "a\u{200d}b",
            // Han that is no letter, a radical: Kimi K2's pattern runs Han together.
            "中\u{2e80}文",
            // NFKC reads the fullwidth comma as `,` and the ligature as `fi`.
            "中文\u{ff0c}好",
            "\u{fb01} x",
            // The engines' Unicode versions disagree on these (`unicode_drift.rs`).
            "\u{17f} x",
            "a\u{61d}b",
            "日本語テキスト",
            "12 34",
        ] {
            assert_eq!(every_gap(whole), [whole], "{whole:?}");
        }
        assert_eq!(every_gap("a\u{2019}s"), ["a", "\u{2019}s"]);
    }

    #[test]
    fn the_last_word_gap_is_found_from_where_the_search_starts() {
        let cuts = &Cuts::EVERY_WORD_GAP;
        let text = b"one two, three  four x";
        assert_eq!(cuts.last_from(text, 0), Some(20));
        assert_eq!(cuts.last_from(text, 20), Some(20));
        assert_eq!(cuts.last_from(text, 21), None);
        assert_eq!(cuts.last_from(&text[..20], 0), Some(14));
        assert_eq!(cuts.last_from(&text[..7], 0), Some(3));
        // The character at the gap must be whole; nothing after it is read.
        assert_eq!(cuts.last_from(b"one ", 0), Some(3));
        let full_stop = "文。".as_bytes();
        assert_eq!(cuts.last_from(&full_stop[..4], 0), None);
        assert_eq!(cuts.last_from(full_stop, 0), Some(3));
        assert_eq!(cuts.last_from(b" one", 0), None);
        assert_eq!(cuts.last_from(b"", 0), None);
        assert_eq!(cuts.last_from(b"ab", 5), None);
        // Bytes that are not UTF-8 hold no gap.
        assert_eq!(cuts.last_from(b"a\xff b\x80 c\xe6\x96 ", 0), None);
        // Nor do an overlong form of `/` and a surrogate after a letter.
        assert_eq!(cuts.last_from(b"a\xe0\x80\xaf", 0), None);
        assert_eq!(cuts.last_from(b"a\xed\xa0\x80", 0), None);
        assert_eq!(cuts.last_from(b"a\xe3\x80\x82", 0), Some(1));
        // Every gap `parts` cuts at, and no other, is one `last_from` finds.
        let text = "Hello world, it's 42 days.  Tab\tthen é word x y\nend a b 中文。中文";
        let mut cuts_found: Vec<usize> = Vec::new();
        let mut end = text.len();
        while let Some(at) = cuts.last_from(&text.as_bytes()[..end], 0) {
            cuts_found.push(at);
            end = at;
        }
        cuts_found.reverse();
        let part_cuts: Vec<usize> = every_gap(text)
            .iter()
            .scan(0, |at, part| {
                *at += part.len();
                Some(*at)
            })
            .filter(|&at| at < text.len())
            .collect();
        assert_eq!(cuts_found, part_cuts);
    }

    #[test]
    fn no_cut_falls_inside_a_token_or_what_may_begin_one() {
        let cuts = Cuts::outside(["<|endoftext|>", "<|im_start|>", "plain", "a b"]);
        // `plain` holds no gap, so it is not kept.
        assert_eq!(cuts.tokens.len(), 3);
        let parts: Vec<&str> = cuts.parts("say <|endoftext|>a b<|im_start|>x", 1).collect();
        assert_eq!(parts, ["say", " <|endoftext|>a b", "<|im_start|>x"]);
        // The bytes read so far end inside what may be `<|endoftext|>`: the gap before `|` waits.
        assert_eq!(cuts.last_from(b"x <|endoftext", 0), Some(1));
        assert_eq!(cuts.last_from(b"x <|endoftext|", 0), Some(1));
        assert_eq!(cuts.last_from(b"x <|endoftexx|", 0), Some(13));
        assert_eq!(cuts.last_from(b"x <|endoftext|>y z", 0), Some(16));
    }

    /// A character at a gap is left by NFKC, but may compose with the marks after it: whatever it
    /// becomes is still not part of a word, so the gap stays one (the module says why it must).
    #[test]
    fn a_character_at_a_gap_composes_only_into_one_that_ends_a_word() {
        let mut composites = 0;
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let mut decomposition = Vec::new();
            unicode_normalization::char::decompose_canonical(c, |d| decomposition.push(d));
            let [first, _, ..] = decomposition[..] else {
                continue;
            };
            if may_follow_a_gap(first) {
                composites += 1;
                assert!(classes().ends_words(c), "{first:?} composes into {c:?}");
            }
        }
        // `=` with a long solidus is `≠`, `<` with one `≮`, and a few more.
        assert!(composites > 3, "{composites}");
    }

    #[test]
    fn deepseek_v3s_splits_are_cut_in_their_order_each_keeping_its_matches() {
        use serde_json::json;

        let split = |pattern: &str, behavior: &str| {
            json!({"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior,
                   "invert": false})
        };
        let byte_level = json!({"type": "ByteLevel", "add_prefix_space": false,
                                "trim_offsets": true, "use_regex": false});
        let [digits, han_and_kana, rest] = DEEPSEEK_V3_SPLITS.map(|p| split(p, "Isolated"));
        let pre_tokenizer = |steps: &[&Value]| {
            let mut steps: Vec<&Value> = steps.to_vec();
            steps.push(&byte_level);
            json!({"type": "Sequence", "pretokenizers": steps})
        };
        let no_normalizer = json!({"type": "Sequence", "normalizers": []});
        let deepseek = pre_tokenizer(&[&digits, &han_and_kana, &rest]);
        assert!(file_splits_at_word_gaps(
            Some(&no_normalizer),
            Some(&deepseek)
        ));
        assert!(file_splits_at_word_gaps(None, Some(&deepseek)));
        let removed = split(DEEPSEEK_V3_SPLITS[2], "Removed");
        for refused in [
            pre_tokenizer(&[&han_and_kana, &digits, &rest]),
            pre_tokenizer(&[&digits, &han_and_kana, &removed]),
            pre_tokenizer(&[&digits, &rest]),
            pre_tokenizer(&[&digits]),
            pre_tokenizer(&[&digits, &digits, &han_and_kana, &rest]),
        ] {
            assert!(!file_splits_at_word_gaps(None, Some(&refused)), "{refused}");
        }
        // An empty sequence of normalizers, however nested, leaves the text as it is.
        assert!(normalizes_nothing(&no_normalizer));
        let nested = json!({"type": "Sequence", "normalizers": [no_normalizer]});
        assert!(normalizes_nothing(&nested));
        assert!(!normalizes_nothing(&json!({"type": "NFC"})));
        let nfc = json!({"type": "Sequence", "normalizers": [{"type": "NFC"}]});
        assert!(!normalizes_nothing(&nfc));
    }

    #[test]
    fn digits_are_cut_before_gpt2s_byte_level_split_only() {
        use serde_json::json;

        let digits_then = |use_regex: bool, add_prefix_space: bool| {
            json!({"type": "Sequence", "pretokenizers": [
                {"type": "Digits", "individual_digits": true},
                {"type": "ByteLevel", "add_prefix_space": add_prefix_space,
                 "trim_offsets": true, "use_regex": use_regex},
            ]})
        };
        let cut = |pre_tokenizer: Value| file_splits_at_word_gaps(None, Some(&pre_tokenizer));
        assert!(cut(digits_then(true, false)));
        assert!(!cut(digits_then(false, false)));
        assert!(!cut(digits_then(true, true)));
    }

    /// A file that puts a `▁` before each text: its parts after the first begin after the space,
    /// before a character no added token begins with, and a reader is never handed such a cut.
    #[test]
    fn after_prepended_markers_each_later_part_goes_without_its_space() {
        let cuts = Cuts::outside(["<s>", "</s>"])
            .at_spaces_after_letters_but(vec!['e'])
            .after_prepended_markers(vec!['<']);
        // Not after `e`, nor before `<`; the second space of two begins the part after the first.
        let text = "one two  three <s>x, four <s> the end and more ";
        let parts: Vec<&str> = cuts.parts(text, 1).collect();
        assert_eq!(
            parts,
            ["one two", " three <s>x, four <s> the end", "and", "more "]
        );
        // A reader's place needs the character after the space, and the part from it goes
        // without that space.
        assert_eq!(cuts.last_from(b"two six three", 0), Some(7));
        assert_eq!(cuts.last_from(b"two six ", 0), Some(3));
        assert_eq!(cuts.last_from(b"two six \xe6\x96", 0), Some(3));
        assert_eq!(cuts.last_from(b"two six \xe6\x96\x87", 0), Some(7));
        assert_eq!(cuts.last_from(b"two six <s>", 0), Some(3));
        assert_eq!(cuts.last_from(b"one three", 0), None);
        assert_eq!(cuts.left_out_after_cut(b" three"), 1);
        assert_eq!(cuts.left_out_after_cut(b"  three"), 1);
        assert_eq!(cuts.left_out_after_cut(b"three"), 0);
        assert!(cuts.leaves_out_space_at_cut());
        assert_eq!(Cuts::EVERY_WORD_GAP.last_from(b"one two", 0), Some(3));
        assert_eq!(Cuts::EVERY_WORD_GAP.left_out_after_cut(b" two"), 0);
        assert!(!Cuts::EVERY_WORD_GAP.leaves_out_space_at_cut());
    }

    #[test]
    fn files_split_at_spaces_behind_normalizers_of_one_character() {
        use serde_json::json;

        let splits = |normalizer: Value, pre_tokenizer: Value| {
            file_splits_at_spaces(Some(&normalizer), Some(&pre_tokenizer)).is_some()
        };
        let bert = json!({"type": "BertNormalizer", "clean_text": true,
                          "handle_chinese_chars": true, "strip_accents": null, "lowercase": true});
        let metaspace = |split: bool| {
            json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                   "split": split})
        };
        for pre_tokenizer in [
            json!({"type": "BertPreTokenizer"}),
            json!({"type": "Whitespace"}),
            json!({"type": "WhitespaceSplit"}),
            metaspace(true),
            json!({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}]}),
            json!({"type": "Sequence", "pretokenizers": [
                {"type": "WhitespaceSplit"}, metaspace(false)]}),
        ] {
            assert!(
                splits(Value::Null, pre_tokenizer.clone()),
                "{pre_tokenizer}"
            );
            assert!(
                splits(bert.clone(), pre_tokenizer.clone()),
                "{pre_tokenizer}"
            );
            let steps = json!({"type": "Sequence", "normalizers": [
                {"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]});
            assert!(splits(steps, pre_tokenizer.clone()), "{pre_tokenizer}");
            // Normalizers that read more than a character, or the whole text's ends.
            for normalizer in [
                json!({"type": "Strip", "strip_left": true, "strip_right": true}),
                json!({"type": "Replace", "pattern": {"String": " "}, "content": "▁"}),
                json!({"type": "Sequence", "normalizers": [
                    {"type": "NFKC"}, {"type": "Prepend", "prepend": "▁"}]}),
            ] {
                assert!(
                    !splits(normalizer.clone(), pre_tokenizer.clone()),
                    "{normalizer}"
                );
            }
        }
        // Pre-tokenizers whose pieces may hold a space, first or alone.
        for pre_tokenizer in [
            metaspace(false),
            json!({"type": "Metaspace", "replacement": "_", "prepend_scheme": "always",
                   "split": true}),
            json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                   "use_regex": false}),
            json!({"type": "Punctuation", "behavior": "Isolated"}),
            json!({"type": "Sequence", "pretokenizers": [
                {"type": "Punctuation", "behavior": "Isolated"}, {"type": "WhitespaceSplit"}]}),
            json!({"type": "Sequence", "pretokenizers": []}),
        ] {
            assert!(
                !splits(Value::Null, pre_tokenizer.clone()),
                "{pre_tokenizer}"
            );
        }
        assert!(file_splits_at_spaces(None, None).is_none());
    }

    /// The XLM-RoBERTa-style fixture's normalizer: its SentencePiece character map (`nmt_nfkc`),
    /// the text's end stripped, runs of spaces as one `▁`.
    fn sentencepiece_normalizer() -> Value {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/__test__/fixtures/tokenizers/sentencepiece.json"
        );
        let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        file["normalizer"].clone()
    }

    #[test]
    fn files_normalized_by_a_character_map_split_at_spaces_before_runs_of_spaces_they_split_at() {
        use serde_json::json;

        let normalizer = sentencepiece_normalizer();
        let steps = normalizer["normalizers"].as_array().unwrap();
        assert_eq!(
            steps.iter().map(kind).collect::<Vec<_>>(),
            ["Precompiled", "Strip", "Replace"]
        );
        let (map, strip) = (&steps[0], &steps[1]);
        let metaspace = json!({"type": "Metaspace", "replacement": "▁",
                               "prepend_scheme": "always", "split": true});
        let whitespace = json!({"type": "WhitespaceSplit"});
        let t5 =
            json!({"type": "Sequence", "pretokenizers": [whitespace.clone(), metaspace.clone()]});
        let sequence = |steps: &[&Value]| json!({"type": "Sequence", "normalizers": steps});
        let runs_as_space = json!({"type": "Replace", "pattern": {"Regex": " {2,}"},
                                   "content": " "});
        let splits = |normalizer: &Value, pre_tokenizer: &Value| {
            file_splits_at_spaces(Some(normalizer), Some(pre_tokenizer))
                .is_some_and(|splits| splits.charsmap.is_some())
        };
        for pre_tokenizer in [&metaspace, &whitespace, &t5] {
            assert!(splits(map, pre_tokenizer), "{pre_tokenizer}");
            assert!(
                splits(&sequence(&[map, strip, &runs_as_space]), pre_tokenizer),
                "{pre_tokenizer}"
            );
            let strip_left = json!({"type": "Strip", "strip_left": true, "strip_right": true});
            let runs_as_other = json!({"type": "Replace", "pattern": {"Regex": " {2,}"},
                                       "content": "-"});
            let nfkc_first = json!({"type": "NFKC"});
            for rejected in [
                sequence(&[map, &strip_left]),
                sequence(&[map, &runs_as_other]),
                sequence(&[&nfkc_first, map]),
                sequence(&[map, &nfkc_first]),
                json!({"type": "Precompiled", "precompiled_charsmap": ""}),
            ] {
                assert!(
                    file_splits_at_spaces(Some(&rejected), Some(pre_tokenizer)).is_none(),
                    "{rejected} {pre_tokenizer}"
                );
            }
        }
        // A run of spaces becomes a `▁`, which `Metaspace` splits before and `WhitespaceSplit`
        // does not.
        assert!(splits(&normalizer, &metaspace));
        assert!(file_splits_at_spaces(Some(&normalizer), Some(&whitespace)).is_none());
    }

    #[test]
    fn a_character_map_cuts_where_the_letter_and_the_space_are_clusters_of_their_own() {
        let normalizer = sentencepiece_normalizer();
        let metaspace = serde_json::json!({"type": "Metaspace", "replacement": "▁",
                                           "prepend_scheme": "always", "split": true});
        let cuts = file_splits_at_spaces(Some(&normalizer), Some(&metaspace))
            .unwrap()
            .cuts(Cuts::EVERY_WORD_GAP);
        let parts = |text: &'static str| cuts.parts(text, 1).collect::<Vec<_>>();
        assert_eq!(parts("one two, three"), ["one", " two, three"]);
        assert_eq!(parts("ab  cd"), ["ab", "  cd"]);
        assert_eq!(parts("Привет мир"), ["Привет", " мир"]);
        // A mark after the space joins it (GB9); a prepended concatenation mark before the
        // letter joins that (GB9b); a letter that is one joins the space (U+0D4E, GB9b).
        assert_eq!(parts("ab \u{301}cd ef"), ["ab \u{301}cd", " ef"]);
        assert_eq!(parts("\u{600}a b"), ["\u{600}a b"]);
        assert_eq!(parts("ab\u{d4e} cd"), ["ab\u{d4e} cd"]);
        // An Indic conjunct ends in the letter: its cluster is not the letter alone (GB9c).
        assert_eq!(
            parts("\u{915}\u{94d}\u{937} x"),
            ["\u{915}\u{94d}\u{937} x"]
        );
        // A reader's text must hold the character after the space.
        assert_eq!(cuts.last_from(b"ab cd", 0), Some(2));
        assert_eq!(cuts.last_from(b"ab ", 0), None);
        assert_eq!(cuts.last_from("ab \u{301}".as_bytes(), 0), None);
    }

    #[test]
    fn spaces_are_marked_alone_or_after_a_prepended_marker() {
        use serde_json::json;

        let replace = json!({"type": "Replace", "pattern": {"String": " "}, "content": "▁"});
        let prepend = json!({"type": "Prepend", "prepend": "▁"});
        let sequence = |steps: &[&Value]| json!({"type": "Sequence", "normalizers": steps});
        let marked = |normalizer: Value| file_marks_spaces(Some(&normalizer), None);
        assert_eq!(marked(replace.clone()), Some(MarkedSpaces::Alone));
        assert_eq!(marked(sequence(&[&replace])), Some(MarkedSpaces::Alone));
        for steps in [[&prepend, &replace], [&replace, &prepend]] {
            assert_eq!(marked(sequence(&steps)), Some(MarkedSpaces::AfterPrepended));
        }
        assert_eq!(marked(prepend.clone()), None);
        assert_eq!(marked(sequence(&[&prepend, &prepend, &replace])), None);
        assert_eq!(
            marked(sequence(&[&prepend, &json!({"type": "NFKC"})])),
            None
        );
        let other_marker = json!({"type": "Prepend", "prepend": "_"});
        assert_eq!(marked(sequence(&[&other_marker, &replace])), None);
        let metaspace = json!({"type": "Metaspace", "replacement": "▁",
                               "prepend_scheme": "always", "split": true});
        assert_eq!(file_marks_spaces(Some(&replace), Some(&metaspace)), None);
        // A Metaspace pre-tokenizer with no normalizer: its `▁` only.
        assert_eq!(
            file_marks_spaces(None, Some(&metaspace)),
            Some(MarkedSpaces::Alone)
        );
        let other_replacement = json!({"type": "Metaspace", "replacement": "_",
                                       "prepend_scheme": "first", "split": false});
        assert_eq!(file_marks_spaces(None, Some(&other_replacement)), None);
        let in_sequence = json!({"type": "Sequence", "pretokenizers": [metaspace]});
        assert_eq!(file_marks_spaces(None, Some(&in_sequence)), None);
        assert_eq!(file_marks_spaces(None, None), None);
    }

    #[test]
    fn the_classes_are_those_of_the_regex_engine() {
        let classes = classes();
        for (c, letter, word, han) in [
            ('a', true, true, false),
            ('中', true, true, true),
            ('\u{2e80}', false, false, true),
            ('1', false, true, false),
            ('_', false, true, false),
            ('\u{301}', false, true, false),
            (',', false, false, false),
            ('\u{3002}', false, false, false),
        ] {
            assert_eq!(in_ranges(&classes.letters, c), letter, "{c:?}");
            assert_eq!(in_ranges(&classes.word, c), word, "{c:?}");
            assert_eq!(in_ranges(&classes.han, c), han, "{c:?}");
        }
    }
}
