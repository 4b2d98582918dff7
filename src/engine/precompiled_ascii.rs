//! SentencePiece's character map (`Precompiled`) on the ASCII parts of a text, by table.
//!
//! Files converted from SentencePiece models (T5, XLM-RoBERTa and the embedding models built on
//! it, ALBERT, mBART, DeBERTa-v2) normalize with the model's `precompiled_charsmap`. The release
//! candidate runs it as SentencePiece does: it cuts the text into extended grapheme clusters and
//! looks each one up in the map's trie (a lookup that allocates), then each of its characters
//! where the cluster has no entry. That costs as much as the rest of the pipeline on English text.
//!
//! On ASCII the map is a table, read from the map itself at load:
//!
//! - Between two ASCII characters there is always a grapheme boundary (UAX #29 rule GB999),
//!   except inside `"\r\n"` (GB3). So an ASCII stretch is single-character clusters and `"\r\n"`
//!   pairs, and the map's result is the concatenation of what each of those becomes alone.
//! - An ASCII character next to a non-ASCII one can share its cluster: a combining mark joins the
//!   character before it (GB9), a prepended concatenation mark joins the one after it (GB9b).
//!   So the stretch handed to the real map reaches one ASCII character beyond each non-ASCII run
//!   (two for a `"\r\n"`). Every cut then falls between two ASCII characters that are not
//!   `"\r\n"`, which is a cluster boundary whatever lies further away: the rules that look
//!   further back (emoji sequences GB11, flag pairs GB12/13, Indic conjuncts GB9c) only chain
//!   through non-ASCII characters.
//!
//! The result is byte for byte the map's own; the tests compare the two on texts built to cross
//! every one of those rules.

use std::borrow::Cow;
use std::ops::Range;

use tokenizers::pipeline::{Normalizer, PipelineNormalizer};

/// A `Precompiled` normalizer's results on ASCII, with the normalizer for everything else.
#[derive(Clone, Debug)]
pub struct PrecompiledAscii {
    /// What each ASCII character becomes, alone.
    single: Vec<Box<str>>,
    /// What the one cluster `"\r\n"` becomes: not always what `'\r'` and `'\n'` become one by one
    /// (the map takes the entry of the shortest prefix of a cluster that has one).
    crlf: Box<str>,
    /// The ASCII bytes the table rewrites, and `'\r'` always, whose result depends on the next
    /// byte.
    rewrites: [bool; 128],
}

impl PrecompiledAscii {
    /// The table of `normalizer`, when it is a `Precompiled`; `None` for any other normalizer.
    pub fn of(normalizer: &PipelineNormalizer) -> tokenizers::Result<Option<PrecompiledAscii>> {
        if !matches!(normalizer, PipelineNormalizer::Precompiled(_)) {
            return Ok(None);
        }
        let mut single = Vec::with_capacity(128);
        let mut rewrites = [false; 128];
        for byte in 0u8..128 {
            let alone = char::from(byte).to_string();
            let result = normalizer.normalize(&alone, 0)?;
            rewrites[usize::from(byte)] = result != alone.as_str();
            single.push(Box::from(result.as_ref()));
        }
        rewrites[usize::from(b'\r')] = true;
        let crlf = Box::from(normalizer.normalize("\r\n", 0)?.as_ref());
        Ok(Some(PrecompiledAscii {
            single,
            crlf,
            rewrites,
        }))
    }

    /// `text` normalized by `normalizer`, the `Precompiled` this table was read from: ASCII
    /// stretches by table, the clusters around non-ASCII characters by `normalizer`. Borrows
    /// `text` when it is ASCII the map leaves as it is.
    pub fn normalize<'t>(
        &self,
        normalizer: &PipelineNormalizer,
        text: &'t str,
        offset: usize,
    ) -> tokenizers::Result<Cow<'t, str>> {
        let bytes = text.as_bytes();
        if text.is_ascii() && !bytes.iter().any(|&b| self.rewrites[usize::from(b)]) {
            return Ok(Cow::Borrowed(text));
        }
        let mut out = String::with_capacity(text.len() + text.len() / 4);
        let mut by_table = 0;
        for span in mapped_spans(bytes) {
            self.push_ascii(&text[by_table..span.start], &mut out);
            out.push_str(&normalizer.normalize(&text[span.clone()], offset + span.start)?);
            by_table = span.end;
        }
        self.push_ascii(&text[by_table..], &mut out);
        Ok(Cow::Owned(out))
    }

    /// Appends what the map makes of `ascii`, a stretch of ASCII text.
    fn push_ascii(&self, ascii: &str, out: &mut String) {
        let bytes = ascii.as_bytes();
        let mut kept = 0;
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            if !self.rewrites[usize::from(byte)] {
                at += 1;
                continue;
            }
            out.push_str(&ascii[kept..at]);
            if byte == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
                out.push_str(&self.crlf);
                at += 2;
            } else {
                out.push_str(&self.single[usize::from(byte)]);
                at += 1;
            }
            kept = at;
        }
        out.push_str(&ascii[kept..]);
    }
}

/// The stretches of `text` the real map must see: each run of non-ASCII characters with the ASCII
/// character on either side (both of a `"\r\n"`), runs that would touch merged. In order, apart.
fn mapped_spans(text: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
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

/// Where a stretch for the real map starts, for a non-ASCII run starting at `run_start`: at the
/// ASCII character before it, or the `"\r\n"` before it.
fn widen_back(text: &[u8], run_start: usize) -> usize {
    match run_start {
        0 => 0,
        1 => 0,
        _ if text[run_start - 2..run_start] == *b"\r\n" => run_start - 2,
        _ => run_start - 1,
    }
}

/// Where a stretch for the real map ends, for a non-ASCII run ending at `run_end`: after the
/// ASCII character that follows it, or the `"\r\n"` that follows it.
fn widen_forward(text: &[u8], run_end: usize) -> usize {
    if run_end == text.len() {
        run_end
    } else if text[run_end..].starts_with(b"\r\n") {
        run_end + 2
    } else {
        run_end + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pipeline::PipelineEngine;
    use crate::engine::test_fixtures;

    /// The committed SentencePiece fixture, whose normalizers hold the `nmt_nfkc` map.
    fn fixture_engine() -> PipelineEngine {
        PipelineEngine::from_value(test_fixtures::fixture_json("tokenizers/sentencepiece.json"))
            .unwrap()
    }

    /// The `Precompiled` member of `engine`'s normalizers.
    fn precompiled(engine: &PipelineEngine) -> &PipelineNormalizer {
        engine
            .tokenizer()
            .get_normalizers()
            .iter()
            .find(|n| matches!(n, PipelineNormalizer::Precompiled(_)))
            .expect("the fixture normalizes with a Precompiled map")
    }

    /// Characters that sit next to ASCII in a cluster, or that the map rewrites, or that chain
    /// clusters through lookbehind: combining marks, a prepended concatenation mark, ZWJ and
    /// emoji, regional indicators, Hangul jamo, a Devanagari conjunct, fullwidth forms, a
    /// ligature, no-break and ideographic spaces.
    const NON_ASCII: &str = "\u{301}\u{308}\u{600}\u{605}\u{6dd}\u{110bd}\u{200d}\
        \u{1f468}\u{1f3fb}\u{1f1fa}\u{1f1f8}\u{1100}\u{1161}\u{11a8}\u{915}\u{94d}\u{937}\
        \u{ff21}\u{ff10}\u{fb01}\u{a0}\u{3000}éß日\u{2028}\u{fe0f}\u{e0067}";
    const ASCII: &[&str] = &[
        "a", "Z", " ", "  ", "\r", "\n", "\r\n", "\t", "\0", "\u{1}", "\u{7f}", "~", "0", "#", "*",
    ];

    /// A small deterministic generator (xorshift): every run tests the same texts.
    struct Texts(u64);

    impl Texts {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn text(&mut self) -> String {
            let len = self.next() % 12;
            let non_ascii: Vec<char> = NON_ASCII.chars().collect();
            let mut text = String::new();
            for _ in 0..len {
                if self.next() % 3 == 0 {
                    text.push(non_ascii[(self.next() % non_ascii.len() as u64) as usize]);
                } else {
                    text.push_str(ASCII[(self.next() % ASCII.len() as u64) as usize]);
                }
            }
            text
        }
    }

    fn assert_same(table: &PrecompiledAscii, map: &PipelineNormalizer, text: &str) {
        let expected = map.normalize(text, 0).unwrap();
        let by_table = table.normalize(map, text, 0).unwrap();
        assert_eq!(by_table, expected, "{text:?}");
    }

    #[test]
    fn every_ascii_byte_and_pair_is_mapped_as_the_map_does() {
        let engine = fixture_engine();
        let map = precompiled(&engine);
        let table = PrecompiledAscii::of(map).unwrap().unwrap();
        for a in 0u8..128 {
            for b in 0u8..128 {
                let pair = [char::from(a), char::from(b), 'x', char::from(a)];
                assert_same(&table, map, &pair.iter().collect::<String>());
            }
        }
        assert!(
            table.rewrites[usize::from(b'\n')],
            "nmt_nfkc rewrites newlines"
        );
    }

    #[test]
    fn texts_mixing_ascii_and_clusters_are_normalized_as_the_map_does() {
        let engine = fixture_engine();
        let map = precompiled(&engine);
        let table = PrecompiledAscii::of(map).unwrap().unwrap();
        let mut texts = Texts(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200_000 {
            assert_same(&table, map, &texts.text());
        }
        for text in [
            "",
            "plain ascii the map keeps",
            "e\u{301}",
            "\u{600}1",
            "\r\n\u{301}\r\n",
            "a\r\n\u{301}\r\nb",
            "\u{301}",
            "x\u{1f468}\u{200d}\u{1f468}y",
            "\u{1f1fa}\u{1f1f8}\u{1f1fa}a",
            "ＡＢＣ abc ﬁne\u{3000}done",
        ] {
            assert_same(&table, map, text);
        }
    }

    #[test]
    fn unchanged_ascii_is_borrowed_and_other_normalizers_have_no_table() {
        let engine = fixture_engine();
        let map = precompiled(&engine);
        let table = PrecompiledAscii::of(map).unwrap().unwrap();
        assert!(matches!(
            table.normalize(map, "kept as it is", 0).unwrap(),
            Cow::Borrowed(_)
        ));
        let lowercase = PipelineNormalizer::Lowercase(tokenizers::normalizers::Lowercase);
        assert!(PrecompiledAscii::of(&lowercase).unwrap().is_none());
    }

    #[test]
    fn spans_reach_one_ascii_character_past_each_run_and_merge_when_they_touch() {
        let spans = |text: &str| mapped_spans(text.as_bytes()).collect::<Vec<_>>();
        assert!(spans("abc").is_empty());
        assert_eq!(spans("ab\u{e9}cd"), vec![1..5]);
        assert_eq!(spans("\u{e9}"), vec![0..2]);
        assert_eq!(spans("a\r\n\u{e9}\r\nb"), vec![1..7]);
        assert_eq!(spans("\u{e9}x\u{e9}"), vec![0..5]);
        assert_eq!(spans("\u{e9}xy\u{e9}"), vec![0..6]);
        assert_eq!(spans("\u{e9}xyz\u{e9}"), vec![0..3, 4..7]);
    }
}
