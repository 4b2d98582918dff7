//! tiktoken's `encode_with_unstable`: the ids of a text whose end may still grow (a prompt a
//! model is about to continue), split into the ids that no continuation can change and every
//! sequence of ids the rest could become.
//!
//! BPE is not prefix-stable: appending text can merge the last piece's bytes with what follows,
//! or move a regex split. The answer is tiktoken's, step for step, so that the completions are
//! its set exactly:
//!
//! 1. Encode the text as `encode` does (with the call's allowed special tokens), noting how many
//!    ids the last regex piece gave. A text that ends with a special token, or has no piece after
//!    its last one, has no unstable end.
//! 2. Where those ids begin with a token of spaces, tabs and newlines alone, the tokens of that
//!    kind before them join the unstable end: a pattern such as cl100k_base's `\s*[\r\n]+` can
//!    join white space across what was a split.
//! 3. The unstable end's bytes give the completions: every token that begins with all of them;
//!    for each place inside them, every token that begins with the bytes after the place, joined
//!    to the bytes before it and encoded (`encode_ordinary` where the join is UTF-8, else BPE on
//!    the bytes), cut after the id that covers the unstable bytes; and where the last character
//!    is white space, the bytes before it and it merged apart.
//!
//! The completions are a set in tiktoken (their order is its hash table's); here they come in
//! ascending order of their ids, compared as sequences.

use std::collections::BTreeSet;

use super::ranks::{RankEngine, RankTable};
use super::special::{self, Segment};
use super::{EncodeMode, Engine, Error, ErrorKind, Family, Ids, Scratch, Tokenizer};

/// A text's ids split where a continuation of the text could change them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnstableEncoding {
    /// The ids no continuation of the text changes: those of a start of the text.
    pub stable: Vec<u32>,
    /// Each sequence of ids the rest of the text, continued, can begin with.
    pub completions: Vec<Vec<u32>>,
}

impl Tokenizer {
    /// tiktoken's `encode_with_unstable` of `text` (see the module's documentation), for an
    /// OpenAI-style encoding.
    pub fn encode_with_unstable(
        &self,
        text: &str,
        mode: &EncodeMode,
    ) -> Result<UnstableEncoding, Error> {
        let Family::OpenAi(encoding) = self.family() else {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                "encodeWithUnstable applies to the OpenAI-style encodings (tiktoken's \
                 encode_with_unstable); a Hugging Face tokenizer has no such method",
            ));
        };
        special::refuse_disallowed(text, mode.disallowed_special())?;
        // tiktoken's own regex and BPE, which `encode` gives the same ids as.
        let engine = encoding.model.exact_engine()?;
        let mut ids = Ids::with_capacity(text.len() / 3 + 4);
        let mut last_piece_ids = 0;
        special::for_each_segment(text, mode.allowed_special_set(), |segment| {
            match segment {
                Segment::Text(text) => {
                    last_piece_ids = engine.encode_noting_last_piece(text, &mut ids)?;
                }
                Segment::Special(id) => {
                    ids.push(id);
                    last_piece_ids = 0;
                }
            }
            Ok::<_, Error>(())
        })?;
        let mut stable = ids.into_vec();
        if last_piece_ids == 0 {
            return Ok(UnstableEncoding {
                stable,
                completions: Vec::new(),
            });
        }
        let table = engine.table();
        let unstable_ids = with_white_space_before(table, &stable, last_piece_ids);
        let unstable = table.decode_bytes(&stable[stable.len() - unstable_ids..])?;
        stable.truncate(stable.len() - unstable_ids);
        Ok(UnstableEncoding {
            stable,
            completions: completions(engine, &unstable)?.into_iter().collect(),
        })
    }
}

/// How many ids end `ids` unstably: the last piece's `last_piece_ids`, and where the first of them
/// is a token of spaces, tabs and newlines alone, every such token right before them too.
fn with_white_space_before(table: &RankTable, ids: &[u32], last_piece_ids: usize) -> usize {
    // A special token is none (tiktoken looks only among the ordinary tokens); the empty token
    // is, as "all of its bytes" are.
    let blank = |id: u32| {
        table
            .token(id)
            .is_some_and(|token| token.iter().all(|b| b" \n\t".contains(b)))
    };
    let mut count = last_piece_ids;
    if blank(ids[ids.len() - count]) {
        while count < ids.len() && blank(ids[ids.len() - count - 1]) {
            count += 1;
        }
    }
    count
}

/// Every sequence of ids that `unstable`, the bytes of a text's unstable end, can begin as once
/// more text follows (the module's step 3).
fn completions(engine: &RankEngine, unstable: &[u8]) -> Result<BTreeSet<Vec<u32>>, Error> {
    let table = engine.table();
    let mut found = BTreeSet::new();
    if unstable.is_empty() {
        return Ok(found);
    }
    for (id, _) in table.tokens_starting_with(unstable) {
        found.insert(vec![id]);
    }
    let mut joined = Vec::new();
    let mut ids = Ids::default();
    for place in 1..unstable.len() {
        let (before, after) = unstable.split_at(place);
        for (_, token) in table.tokens_starting_with(after) {
            joined.clear();
            joined.extend_from_slice(before);
            joined.extend_from_slice(token);
            ids.clear();
            match std::str::from_utf8(&joined) {
                Ok(text) => {
                    engine.encode_into(text, false, false, &mut Scratch::new(), &mut ids)?
                }
                Err(_) => engine.merge_bytes(&joined, &mut ids),
            }
            let mut covered = 0;
            let mut completion = Vec::new();
            for &id in ids.as_slice() {
                completion.push(id);
                covered += table.token(id).map_or(0, <[u8]>::len);
                if covered >= unstable.len() {
                    break;
                }
            }
            found.insert(completion);
        }
    }
    // A pattern's `\s+(?!\S)` splits white space from what follows it only once something follows:
    // the last character, if white space, may become a token of its own.
    if let Some(last) = last_char(unstable)
        && last.is_whitespace()
        && last.len_utf8() < unstable.len()
    {
        let (head, tail) = unstable.split_at(unstable.len() - last.len_utf8());
        ids.clear();
        engine.merge_bytes(head, &mut ids);
        engine.merge_bytes(tail, &mut ids);
        found.insert(ids.as_slice().to_vec());
    }
    Ok(found)
}

/// The character `bytes` end with, where they end with a whole one.
fn last_char(bytes: &[u8]) -> Option<char> {
    let start = (bytes.len().saturating_sub(4)..bytes.len())
        .rev()
        .find(|&at| bytes[at] & 0xC0 != 0x80)?;
    std::str::from_utf8(&bytes[start..]).ok()?.chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::AllowedSpecial;

    fn unstable(encoding: &str, text: &str, allowed: AllowedSpecial) -> UnstableEncoding {
        let tokenizer = Tokenizer::from_encoding(encoding).unwrap();
        let mode = tokenizer.encode_mode(None, &allowed).unwrap();
        tokenizer.encode_with_unstable(text, &mode).unwrap()
    }

    #[test]
    fn tiktokens_example() {
        // tiktoken's docstring: `enc.encode_with_unstable("hello fanta")` on gpt2 gives
        // ([31373], [(277, 4910), (5113, 265), ..., (8842,)]).
        let got = unstable("gpt2", "hello fanta", AllowedSpecial::None);
        assert_eq!(got.stable, [31373]);
        for completion in [&[277, 4910][..], &[5113, 265], &[8842]] {
            assert!(
                got.completions.iter().any(|c| c == completion),
                "{completion:?}"
            );
        }
    }

    #[test]
    fn every_completion_spells_the_text_on() {
        let tokenizer = Tokenizer::from_encoding("cl100k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        for text in [
            "hello world",
            "x = 1  \n",
            "日本語のテキスト",
            "a   ",
            "12345",
            "héllo wörld",
        ] {
            let got = tokenizer.encode_with_unstable(text, &mode).unwrap();
            let stable = tokenizer.decode_bytes(&got.stable, false).unwrap();
            assert!(text.as_bytes().starts_with(&stable), "{text:?}");
            assert!(!got.completions.is_empty(), "{text:?}");
            for completion in &got.completions {
                let ids = [got.stable.as_slice(), completion].concat();
                let spelled = tokenizer.decode_bytes(&ids, false).unwrap();
                assert!(
                    spelled.starts_with(text.as_bytes()),
                    "{text:?}: {completion:?}"
                );
            }
        }
    }

    #[test]
    fn a_text_ending_with_an_allowed_special_token_is_stable() {
        let got = unstable("cl100k_base", "hi <|endoftext|>", AllowedSpecial::All);
        assert_eq!(got.stable, [6151, 220, 100257]);
        assert!(got.completions.is_empty());
        let empty = unstable("cl100k_base", "", AllowedSpecial::None);
        assert!(empty.stable.is_empty() && empty.completions.is_empty());
    }

    #[test]
    fn white_space_tokens_before_the_last_piece_join_it() {
        // "\n" then "\n  ": with text after, cl100k_base's `\s*[\r\n]+` could join them.
        let got = unstable("cl100k_base", "a\n\n  ", AllowedSpecial::None);
        assert_eq!(got.stable, [64]);
    }

    #[test]
    fn last_char_is_the_whole_last_character_or_none() {
        assert_eq!(last_char("ab\u{3000}".as_bytes()), Some('\u{3000}'));
        assert_eq!(last_char(b"a "), Some(' '));
        assert_eq!(last_char(&"\u{3000}".as_bytes()[..2]), None);
        assert_eq!(last_char(b""), None);
    }

    #[test]
    fn a_hugging_face_tokenizer_is_refused() {
        let tokenizer = crate::engine::test_fixtures::fixture_tokenizer("gpt2");
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let error = tokenizer.encode_with_unstable("hello", &mode).unwrap_err();
        assert!(error.to_string().contains("OpenAI-style"), "{error}");
    }
}
