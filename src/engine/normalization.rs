//! A file's normalizers, with the shortcuts that give their exact results for less.
//!
//! The release candidate runs a file's normalizers one after another (`normalize_all`). Two kinds
//! of member have a cheaper exact form here:
//!
//! - a run of BERT-style members folds to a byte map on ASCII (`ascii_fold.rs`);
//! - a `Precompiled` map is a table on ASCII (`precompiled_ascii.rs`).
//!
//! Either serves the ASCII stretches of any text, and the members themselves the spans around its
//! non-ASCII characters (`ascii_stretches.rs` says why the pieces join to the whole's result).
//!
//! [`Normalization`] cuts the list into stages, in order: each such run or map is a stage with its
//! shortcut, and the members between them run as the release candidate runs them. Every stage
//! sees what the one before it wrote, as in `normalize_all`, so the result is the same text.

use std::borrow::Cow;
use std::ops::Range;

use tokenizers::pipeline::{PipelineNormalizer, normalize_all};

use super::ascii_fold::AsciiFold;
use super::ascii_stretches::rewrite_by_pieces;
use super::precompiled_ascii::PrecompiledAscii;

/// A file's normalizers as stages, where at least one stage has a shortcut.
#[derive(Clone, Debug)]
pub struct Normalization {
    stages: Vec<Stage>,
}

/// Consecutive members of the normalizer list, and how they run.
#[derive(Clone, Debug)]
enum Stage {
    /// Members that fold to one byte map on ASCII; the spans around non-ASCII characters go
    /// through the members themselves.
    Fold(AsciiFold, Range<usize>),
    /// One `Precompiled` member.
    Precompiled(PrecompiledAscii, usize),
    /// Members with no shortcut.
    Members(Range<usize>),
}

impl Normalization {
    /// The stages of `normalizers`, or `None` when no member has a shortcut (the list is then
    /// best run by `normalize_all` itself).
    pub fn of(normalizers: &[PipelineNormalizer]) -> tokenizers::Result<Option<Normalization>> {
        let folds = |n: &PipelineNormalizer| AsciiFold::of(std::slice::from_ref(n)).is_some();
        let precompiled = |n: &PipelineNormalizer| matches!(n, PipelineNormalizer::Precompiled(_));
        let mut stages = Vec::new();
        let mut start = 0;
        while let Some(first) = normalizers.get(start) {
            if let Some(table) = PrecompiledAscii::of(first)? {
                stages.push(Stage::Precompiled(table, start));
                start += 1;
                continue;
            }
            let folding = folds(first);
            let end = normalizers[start..]
                .iter()
                .position(|n| folds(n) != folding || precompiled(n))
                .map_or(normalizers.len(), |n| start + n);
            stages.push(match AsciiFold::of(&normalizers[start..end]) {
                Some(fold) if folding => Stage::Fold(fold, start..end),
                _ => Stage::Members(start..end),
            });
            start = end;
        }
        let shortcut = stages.iter().any(|s| !matches!(s, Stage::Members(_)));
        Ok(shortcut.then_some(Normalization { stages }))
    }

    /// `text` normalized by `normalizers`, the list these stages were cut from. `offset` is where
    /// `text` starts in its sequence, as `normalize_all` takes it.
    pub fn apply<'t>(
        &self,
        normalizers: &[PipelineNormalizer],
        text: &'t str,
        offset: usize,
    ) -> tokenizers::Result<Cow<'t, str>> {
        let mut text = Cow::Borrowed(text);
        for stage in &self.stages {
            text = match text {
                Cow::Borrowed(input) => stage.apply(normalizers, input, offset)?,
                Cow::Owned(input) => {
                    let rewritten = match stage.apply(normalizers, &input, offset)? {
                        Cow::Owned(output) => Some(output),
                        Cow::Borrowed(output)
                            if output.as_ptr() == input.as_ptr() && output.len() == input.len() =>
                        {
                            None
                        }
                        Cow::Borrowed(part) => Some(part.to_owned()),
                    };
                    Cow::Owned(rewritten.unwrap_or(input))
                }
            };
        }
        Ok(text)
    }
}

impl Stage {
    fn apply<'t>(
        &self,
        normalizers: &[PipelineNormalizer],
        text: &'t str,
        offset: usize,
    ) -> tokenizers::Result<Cow<'t, str>> {
        match self {
            Stage::Fold(fold, members) => match fold.apply(text) {
                Some(folded) => Ok(folded),
                None => rewrite_by_pieces(
                    text,
                    |ascii, out| fold.push(ascii, out),
                    |span, start| {
                        normalize_all(&normalizers[members.clone()], span, offset + start)
                    },
                )
                .map(Cow::Owned),
            },
            Stage::Precompiled(table, member) => {
                table.normalize(&normalizers[*member], text, offset)
            }
            Stage::Members(members) => normalize_all(&normalizers[members.clone()], text, offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ascii_fold::tests::bert_settings;
    use crate::engine::ascii_stretches::mixed_texts::{EDGES, MixedTexts};
    use crate::engine::pipeline::PipelineEngine;
    use crate::engine::test_fixtures;

    fn fixture_engine(name: &str) -> PipelineEngine {
        PipelineEngine::from_value(test_fixtures::fixture_json(&format!("tokenizers/{name}")))
            .unwrap()
    }

    #[test]
    fn stages_give_what_the_release_candidate_gives_on_the_parity_texts() {
        for name in ["sentencepiece.json", "bert.json", "unigram.json"] {
            let engine = fixture_engine(name);
            let normalizers = engine.tokenizer().get_normalizers();
            let Some(normalization) = Normalization::of(normalizers).unwrap() else {
                continue;
            };
            for text in test_fixtures::fixture_texts() {
                let expected = normalize_all(normalizers, &text, 0).unwrap();
                let staged = normalization.apply(normalizers, &text, 0).unwrap();
                assert_eq!(staged, expected, "{name}: {text:?}");
            }
        }
    }

    #[test]
    fn folds_give_what_the_release_candidate_gives_on_texts_mixing_ascii_and_other_characters() {
        use tokenizers::normalizers::{Lowercase, NFC, NFD, NFKC, NFKD, StripAccents};
        let mut lists: Vec<Vec<PipelineNormalizer>> = bert_settings()
            .into_iter()
            .map(|bert| vec![PipelineNormalizer::Bert(bert)])
            .collect();
        lists.push(vec![
            PipelineNormalizer::NFD(NFD),
            PipelineNormalizer::Lowercase(Lowercase),
            PipelineNormalizer::StripAccents(StripAccents::default()),
        ]);
        lists.push(vec![PipelineNormalizer::NFC(NFC)]);
        lists.push(vec![
            PipelineNormalizer::NFKC(NFKC),
            PipelineNormalizer::Lowercase(Lowercase),
        ]);
        lists.push(vec![PipelineNormalizer::NFKD(NFKD)]);
        for list in &lists {
            let normalization = Normalization::of(list).unwrap().unwrap();
            let mut texts = MixedTexts::new();
            let texts = (0..20_000).map(|_| texts.text());
            for text in texts.chain(EDGES.iter().map(|&edge| edge.to_owned())) {
                assert_eq!(
                    normalization.apply(list, &text, 0).unwrap(),
                    normalize_all(list, &text, 0).unwrap(),
                    "{text:?} under {list:?}"
                );
            }
        }
    }

    #[test]
    fn runs_of_members_become_stages_in_order() {
        use tokenizers::normalizers::{Lowercase, NFKD, Strip};
        let list = [
            PipelineNormalizer::NFKD(NFKD),
            PipelineNormalizer::Lowercase(Lowercase),
            PipelineNormalizer::Strip(Strip::new(true, true)),
            PipelineNormalizer::Lowercase(Lowercase),
        ];
        let normalization = Normalization::of(&list).unwrap().unwrap();
        let ranges: Vec<_> = normalization
            .stages
            .iter()
            .map(|stage| match stage {
                Stage::Fold(_, members) => ("fold", members.clone()),
                Stage::Precompiled(_, member) => ("precompiled", *member..*member + 1),
                Stage::Members(members) => ("members", members.clone()),
            })
            .collect();
        assert_eq!(
            ranges,
            vec![("fold", 0..2), ("members", 2..3), ("fold", 3..4)]
        );
        for text in ["  Hello World  ", "  Café  ", ""] {
            assert_eq!(
                normalization.apply(&list, text, 0).unwrap(),
                normalize_all(&list, text, 0).unwrap()
            );
        }
        let strip_only = [PipelineNormalizer::Strip(Strip::new(true, true))];
        assert!(Normalization::of(&strip_only).unwrap().is_none());
    }
}
