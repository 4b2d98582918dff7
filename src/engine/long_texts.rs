//! Long texts, encoded (and read) a part at a time, cut where the tokenizer's pieces always part.
//!
//! An engine's working memory for one text grows with the text (its pieces, their byte-level
//! spelling, the spans, the buffers they are built in): about four times a 150 MB text besides its
//! ids, on the release candidate. The ids of a text under a tiktoken-style pattern are the ids of
//! its pieces, each encoded alone, so a text cut where one piece ends and the next begins encodes,
//! part after part, to the ids of the whole, and each part needs working memory for its own size
//! only. [`parts`] cuts a text into parts of at least [`PART_BYTES`] at such places;
//! [`last_word_gap`] finds one in the start of a text still being read (a reader's long line,
//! `Tokenizer.lastSafeCut`), since whether a place is one reads no byte past the letter after it.
//!
//! **Where a cut is safe.** Before a space that has an ASCII letter on each side (`…d w…`), under
//! the patterns the release candidate's matcher runs (tiktoken's for GPT-2, cl100k_base and
//! o200k_base; Qwen's, Tekken's and Kimi K2's, `openai.rs`), in every spelling tiktoken's regex
//! engine runs them:
//!
//! 1. The piece holding the letter ends at the cut. Every alternative that takes a letter takes a
//!    run of letters (with, at most, a contraction, which begins with an apostrophe), and none
//!    takes a space after a letter.
//! 2. The piece after it begins at the cut, in the text and in the part after the cut alike: no
//!    pattern looks behind or anchors at a start, and the space goes with the word it precedes
//!    (` ?\p{L}+`, `[^\r\n\p{L}\p{N}]?\p{L}+` and o200k_base's cased forms).
//! 3. No piece before the cut reads past it: the only look-ahead (`\s+(?!\S)`) and the end anchor
//!    (`\s++$`) read the character after a run of white space, and the run before the letter ends
//!    before it.
//!
//! So the pieces of the text are the pieces of its parts, in order, and the merges never cross a
//! piece. Special tokens are cut out of the text before (`special.rs`), so no part splits one. A
//! pattern of the user's own (`Tokenizer.fromTiktoken`) is not cut: nothing is known of it.
//!
//! **A Hugging Face tokenizer.json** splits text the same way where its pre-tokenizer is one of
//! those patterns with a byte-level step ([`file_splits_at_word_gaps`]): each piece is then
//! encoded alone, as above. What it does to the whole text must not read across the cut either:
//! its normalizer is none, NFC or NFKC (a space is a starter that composes with nothing, so
//! normalizing either side of it alone gives the same text), and its added tokens, template and
//! truncation are checked by the engine that has them (`StableEngine::cuts_at_word_gaps`).

use serde_json::Value;

use super::openai::cuts_safely;

/// The size past which a stretch of ordinary text is encoded a part at a time: large enough that
/// the cuts cost nothing measurable, small enough that a part's working memory is a few MiB.
pub const PART_BYTES: usize = 1 << 20;

/// The parts of `text`, in order: each but the last at least `size` bytes, every cut before a
/// space with an ASCII letter on each side (the module says why that cut is safe). A text
/// without such a space after `size` bytes is one part.
pub fn parts(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = word_gap_from(rest.as_bytes(), size.max(1)).unwrap_or(rest.len());
        // A word gap is an ASCII space, so `cut` is a character boundary.
        let (part, after) = rest.split_at(cut);
        rest = after;
        Some(part)
    })
}

/// The last position at or after `from` of a space with an ASCII letter on each side in `bytes`,
/// the start of a text whose rest may not be known yet: cut there, the bytes before it encode to
/// the ids the whole text begins with, whatever follows (the module says why). Only the bytes
/// from `from` are read, so a caller that finds none can ask again from `bytes.len() - 1` once
/// more bytes come, and read each byte about once.
pub fn last_word_gap(bytes: &[u8], from: usize) -> Option<usize> {
    let searched = bytes.get(from.max(1)..)?;
    memchr::memrchr_iter(b' ', searched)
        .map(|at| from.max(1) + at)
        .find(|&at| is_word_gap(bytes, at))
}

/// Whether `bytes[at]` is a space with an ASCII letter on each side.
fn is_word_gap(bytes: &[u8], at: usize) -> bool {
    at > 0
        && bytes[at - 1].is_ascii_alphabetic()
        && bytes.get(at + 1).is_some_and(u8::is_ascii_alphabetic)
}

/// Whether a tokenizer.json whose normalizer and pre-tokenizer are these (as the stable crate
/// writes them) splits a text into the pieces one of the patterns [`parts`] may cut splits it
/// into: no normalizer, or NFC or NFKC (alone or in a sequence); and a byte-level pre-tokenizer
/// over GPT-2's pattern, or a split by one of the patterns that keeps every match as a piece
/// (`Isolated`; or `Removed` inverted, which removes what the pattern leaves unmatched: nothing,
/// as each of them matches every character) before a byte-level step with no pattern of its own.
pub fn file_splits_at_word_gaps(normalizer: Option<&Value>, pre_tokenizer: Option<&Value>) -> bool {
    let keeps_word_gaps = |normalizer: &Value| matches!(kind(normalizer), "NFC" | "NFKC");
    let normalizes_safely = match normalizer {
        None | Some(Value::Null) => true,
        Some(normalizer) if kind(normalizer) == "Sequence" => normalizer["normalizers"]
            .as_array()
            .is_some_and(|all| all.iter().all(keeps_word_gaps)),
        Some(normalizer) => keeps_word_gaps(normalizer),
    };
    let byte_level = |step: &Value, with_pattern: bool| {
        kind(step) == "ByteLevel" && step["use_regex"].as_bool() == Some(with_pattern)
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
                Some([split, byte_step]) => splits_safely(split) && byte_level(byte_step, false),
                _ => false,
            }
        }
        _ => false,
    };
    normalizes_safely && pre_tokenizes_safely
}

/// A tokenizer.json component's `type`.
fn kind(component: &Value) -> &str {
    component["type"].as_str().unwrap_or("")
}

/// The first position at or after `from` of a space with an ASCII letter on each side.
fn word_gap_from(bytes: &[u8], from: usize) -> Option<usize> {
    let searched = bytes.get(from..)?;
    memchr::memchr_iter(b' ', searched)
        .map(|at| from + at)
        .find(|&at| is_word_gap(bytes, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_join_to_the_text_and_are_cut_only_at_word_gaps() {
        let text = "Hello world, it's 42 days.  Tab\tthen é word x y\nend a b";
        for size in [1, 2, 5, 13, 40, text.len(), text.len() + 1, usize::MAX] {
            let parts: Vec<&str> = parts(text, size).collect();
            assert_eq!(parts.concat(), text, "size {size}");
            for (i, part) in parts.iter().enumerate() {
                assert!(!part.is_empty());
                if i + 1 < parts.len() {
                    assert!(part.len() >= size, "size {size}: {parts:?}");
                    let next = parts[i + 1].as_bytes();
                    assert!(part.as_bytes().last().unwrap().is_ascii_alphabetic());
                    assert!(
                        next[0] == b' ' && next[1].is_ascii_alphabetic(),
                        "{parts:?}"
                    );
                }
            }
        }
        let every_gap: Vec<&str> = parts(text, 1).collect();
        assert_eq!(
            every_gap,
            [
                "Hello",
                " world, it's 42 days.  Tab\tthen é word",
                " x",
                " y\nend",
                " a",
                " b"
            ]
        );
        assert_eq!(parts("", 1).count(), 0);
        assert_eq!(parts("日本語 テキスト", 1).count(), 1);
    }

    #[test]
    fn the_last_word_gap_is_found_from_where_the_search_starts() {
        let text = b"one two, three  four x";
        assert_eq!(last_word_gap(text, 0), Some(20));
        assert_eq!(last_word_gap(text, 20), Some(20));
        assert_eq!(last_word_gap(text, 21), None);
        assert_eq!(last_word_gap(&text[..20], 0), Some(3));
        // The letter after the space must be there: a space at the end is not yet a gap.
        assert_eq!(last_word_gap(b"one ", 0), None);
        assert_eq!(last_word_gap(b" one", 0), None);
        assert_eq!(last_word_gap(b"", 0), None);
        assert_eq!(last_word_gap(b"ab", 5), None);
        // Every gap `parts` cuts at, and no other, is one `last_word_gap` finds.
        let text = "Hello world, it's 42 days.  Tab\tthen é word x y\nend a b";
        let mut cuts: Vec<usize> = Vec::new();
        let mut end = text.len();
        while let Some(at) = last_word_gap(&text.as_bytes()[..end], 0) {
            cuts.push(at);
            end = at;
        }
        cuts.reverse();
        let lengths: Vec<usize> = parts(text, 1).map(str::len).collect();
        let part_cuts: Vec<usize> = lengths
            .iter()
            .scan(0, |at, length| {
                *at += length;
                Some(*at)
            })
            .take(lengths.len() - 1)
            .collect();
        assert_eq!(cuts, part_cuts);
    }
}
