//! A text cut into ASCII stretches and the spans around its non-ASCII characters, so that a
//! normalizer with a cheap form on ASCII can use it on text that is mostly ASCII.
//!
//! A normalizer may be applied piece by piece when no piece's result depends on its neighbours.
//! [`non_ascii_spans`] cuts only between two ASCII characters that are not `"\r\n"`, and each span
//! reaches one ASCII character beyond its non-ASCII run (two for a `"\r\n"`). At such a cut:
//!
//! - **Grapheme clusters** (SentencePiece's character map looks up whole clusters): UAX #29 puts a
//!   boundary between any two ASCII characters (GB999) except inside `"\r\n"` (GB3). The ASCII
//!   character next to a non-ASCII one, which may share its cluster (a combining mark joins the
//!   character before it, GB9; a prepended concatenation mark the one after it, GB9b), is inside
//!   the span. The rules that look further back (emoji sequences GB11, flag pairs GB12/13, Indic
//!   conjuncts GB9c) only chain through non-ASCII characters.
//! - **Unicode normalization forms**: every ASCII character is a starter (combining class 0) that
//!   no composition takes as its second character, so canonical reordering and composition never
//!   cross from one side of such a cut to the other; the starter before a run of combining marks,
//!   which they may compose with, is inside the span.
//! - **Character by character** maps (BERT's cleaning, Chinese-character spacing, accent
//!   stripping, lowercasing by `char::to_lowercase`) need no more than any cut.

use std::borrow::Cow;
use std::ops::Range;

/// The spans of `text` that hold its non-ASCII characters, each with the ASCII character on either
/// side (both of a `"\r\n"`), spans that would touch merged. In order and apart; everything
/// between them is ASCII.
pub fn non_ascii_spans(text: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut searched = 0;
    let mut pending: Option<Range<usize>> = None;
    std::iter::from_fn(move || {
        while let Some(found) = text[searched..].iter().position(|b| !b.is_ascii()) {
            let run_start = searched + found;
            let run_end = text[run_start..]
                .iter()
                .position(u8::is_ascii)
                .map_or(text.len(), |n| run_start + n);
            let span = widen_back(text, run_start)..widen_forward(text, run_end);
            searched = span.end;
            match &mut pending {
                Some(open) if span.start <= open.end => open.end = span.end,
                _ => {
                    if let Some(done) = pending.replace(span) {
                        return Some(done);
                    }
                }
            }
        }
        pending.take()
    })
}

/// `text` rewritten piece by piece: each ASCII stretch appended by `ascii`, each span of
/// [`non_ascii_spans`] rewritten by `span` (given the span and where it starts in `text`).
pub fn rewrite_by_pieces(
    text: &str,
    mut ascii: impl FnMut(&str, &mut String),
    mut span: impl FnMut(&str, usize) -> tokenizers::Result<Cow<'_, str>>,
) -> tokenizers::Result<String> {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut done = 0;
    for piece in non_ascii_spans(text.as_bytes()) {
        ascii(&text[done..piece.start], &mut out);
        out.push_str(&span(&text[piece.clone()], piece.start)?);
        done = piece.end;
    }
    ascii(&text[done..], &mut out);
    Ok(out)
}

/// Where a span starts, for a non-ASCII run starting at `run_start`: at the ASCII character before
/// it, or the `"\r\n"` before it.
fn widen_back(text: &[u8], run_start: usize) -> usize {
    match run_start {
        0 | 1 => 0,
        _ if text[run_start - 2..run_start] == *b"\r\n" => run_start - 2,
        _ => run_start - 1,
    }
}

/// Where a span ends, for a non-ASCII run ending at `run_end`: after the ASCII character that
/// follows it, or the `"\r\n"` that follows it.
fn widen_forward(text: &[u8], run_end: usize) -> usize {
    if run_end == text.len() {
        run_end
    } else if text[run_end..].starts_with(b"\r\n") {
        run_end + 2
    } else {
        run_end + 1
    }
}

/// Texts that mix ASCII with the characters that cross the rules above, for the tests of the
/// normalizers that use these pieces.
#[cfg(test)]
pub mod mixed_texts {
    /// Characters that share a cluster with ASCII, chain clusters through lookbehind, reorder,
    /// compose or decompose, or that normalizers rewrite: combining marks of several classes, a
    /// prepended concatenation mark, ZWJ and emoji, regional indicators, Hangul jamo and a
    /// syllable, a Devanagari conjunct, fullwidth forms, a ligature, the Angstrom and Kelvin signs
    /// (which decompose to ASCII letters), letters whose lowercase is longer, a Chinese character,
    /// no-break, ideographic and line-separator spaces, the replacement character, C1 controls.
    const NON_ASCII: &str = "\u{301}\u{308}\u{327}\u{323}\u{344}\u{600}\u{605}\u{6dd}\u{110bd}\
        \u{200d}\u{1f468}\u{1f3fb}\u{1f1fa}\u{1f1f8}\u{1100}\u{1161}\u{11a8}\u{ac00}\u{915}\u{94d}\
        \u{937}\u{ff21}\u{ff10}\u{fb01}\u{212b}\u{212a}\u{130}\u{1c5}\u{3a3}éß日\u{a0}\u{3000}\
        \u{2028}\u{fffd}\u{85}\u{9f}\u{fe0f}\u{e0067}\u{2019}";
    const ASCII: &[&str] = &[
        "a", "Z", "e", "A", "k", " ", "  ", "\r", "\n", "\r\n", "\t", "\0", "\u{1}", "\u{7f}", "~",
        "0", "#", "*", ".", "'",
    ];

    /// A deterministic generator (xorshift): every run tests the same texts.
    pub struct MixedTexts {
        state: u64,
        non_ascii: Vec<char>,
    }

    impl MixedTexts {
        pub fn new() -> Self {
            MixedTexts {
                state: 0x9e37_79b9_7f4a_7c15,
                non_ascii: NON_ASCII.chars().collect(),
            }
        }

        fn next(&mut self) -> u64 {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            self.state
        }

        /// A text of up to 11 pieces, a third of them non-ASCII characters.
        pub fn text(&mut self) -> String {
            let len = self.next() % 12;
            let mut text = String::new();
            for _ in 0..len {
                if self.next().is_multiple_of(3) {
                    let pick = (self.next() % self.non_ascii.len() as u64) as usize;
                    text.push(self.non_ascii[pick]);
                } else {
                    text.push_str(ASCII[(self.next() % ASCII.len() as u64) as usize]);
                }
            }
            text
        }
    }

    /// Texts the generator misses by chance: each rule's case at a span's edge.
    pub const EDGES: &[&str] = &[
        "",
        "plain ascii",
        "e\u{301}",
        "\u{600}1",
        "\r\n\u{301}\r\n",
        "a\r\n\u{301}\r\nb",
        "\u{301}",
        "x\u{1f468}\u{200d}\u{1f468}y",
        "\u{1f1fa}\u{1f1f8}\u{1f1fa}a",
        "ＡＢＣ abc ﬁne\u{3000}done",
        "e\u{323}\u{301}x e\u{301}\u{323}",
        "\u{1100}\u{1161}\u{11a8}a",
        "Don\u{2019}t STOP",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_reach_one_ascii_character_past_each_run_and_merge_when_they_touch() {
        let spans = |text: &str| non_ascii_spans(text.as_bytes()).collect::<Vec<_>>();
        assert!(spans("abc").is_empty());
        assert_eq!(spans("ab\u{e9}cd"), vec![1..5]);
        assert_eq!(spans("\u{e9}"), vec![0..2]);
        assert_eq!(spans("a\r\n\u{e9}\r\nb"), vec![1..7]);
        assert_eq!(spans("\u{e9}x\u{e9}"), vec![0..5]);
        assert_eq!(spans("\u{e9}xy\u{e9}"), vec![0..6]);
        assert_eq!(spans("\u{e9}xyz\u{e9}"), vec![0..3, 4..7]);
    }

    #[test]
    fn pieces_join_to_the_text() {
        let mut texts = mixed_texts::MixedTexts::new();
        for _ in 0..10_000 {
            let text = texts.text();
            let joined = rewrite_by_pieces(
                &text,
                |ascii, out| {
                    assert!(ascii.is_ascii());
                    out.push_str(ascii)
                },
                |span, start| {
                    assert_eq!(&text[start..start + span.len()], span);
                    Ok(Cow::Borrowed(span))
                },
            )
            .unwrap();
            assert_eq!(joined, text);
        }
    }
}
