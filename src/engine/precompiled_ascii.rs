//! SentencePiece's character map (`Precompiled`) on the ASCII parts of a text, by table.
//!
//! Files converted from SentencePiece models (T5, XLM-RoBERTa and the embedding models built on
//! it, ALBERT, mBART, DeBERTa-v2) normalize with the model's `precompiled_charsmap`. The release
//! candidate runs it as SentencePiece does: it cuts the text into extended grapheme clusters and
//! looks each one up in the map's trie (a lookup that allocates), then each of its characters
//! where the cluster has no entry. On English text that costs twice what the rest of the pipeline
//! does.
//!
//! On ASCII the map is a table, read from the map itself at load: what each ASCII character
//! becomes alone, and what `"\r\n"` becomes (one cluster). The text is cut as
//! `ascii_stretches.rs` cuts it, which never splits a cluster: its ASCII stretches go through the
//! table, the spans around its non-ASCII characters through the map itself. The result is the
//! map's own, byte for byte; the tests compare the two on texts built to cross every rule that
//! joins characters into clusters.

use std::borrow::Cow;

use tokenizers::pipeline::{Normalizer, PipelineNormalizer};

use super::ascii_stretches::rewrite_by_pieces;

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
        rewrite_by_pieces(
            text,
            |ascii, out| self.push_ascii(ascii, out),
            |span, start| normalizer.normalize(span, offset + start),
        )
        .map(Cow::Owned)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ascii_stretches::mixed_texts::{EDGES, MixedTexts};
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
        let mut texts = MixedTexts::new();
        for _ in 0..200_000 {
            assert_same(&table, map, &texts.text());
        }
        for text in EDGES {
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
}
