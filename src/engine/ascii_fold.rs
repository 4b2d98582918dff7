//! What a file's normalizers do to ASCII text, without their Unicode tables.
//!
//! BERT-style files normalize every text with `BertNormalizer` (or `NFD`, `Lowercase`,
//! `StripAccents` in sequence). The release candidate classifies each character by binary search
//! in Unicode category tables, twice per character, which costs more than the rest of the
//! pipeline put together on English text. On ASCII those normalizers reduce to a byte map: drop
//! the control characters, fold `\t`, `\n` and `\r` to a space, lowercase `A`-`Z`; the Unicode
//! forms, accent stripping and the spacing of Chinese characters leave ASCII as it is.
//!
//! [`AsciiFold::of`] accepts a run of normalizers only when every member is one of those; the
//! members around such a run keep their own normalization (`normalization.rs` cuts a file's list
//! into runs). [`AsciiFold::apply`] serves only ASCII text and says `None` for anything else; on
//! text that is not all ASCII, `normalization.rs` folds the ASCII stretches with
//! [`AsciiFold::push`] and runs the members themselves on the rest (`ascii_stretches.rs`).
//! The tests hold the fold equal to the release candidate's normalizers on every ASCII byte under
//! every setting.

use std::borrow::Cow;

use tokenizers::pipeline::PipelineNormalizer;

/// The byte map that a list of normalizers amounts to on ASCII text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsciiFold {
    /// BERT's text cleaning: control characters dropped, `\t`, `\n`, `\r` folded to a space.
    clean_text: bool,
    /// `A`-`Z` lowercased.
    lowercase: bool,
}

impl AsciiFold {
    /// The fold `normalizers` amount to on ASCII text, or `None` when one of them is not known
    /// to reduce to it (or the list is empty: nothing to fold).
    pub fn of(normalizers: &[PipelineNormalizer]) -> Option<AsciiFold> {
        if normalizers.is_empty() {
            return None;
        }
        let mut fold = AsciiFold {
            clean_text: false,
            lowercase: false,
        };
        for normalizer in normalizers {
            match normalizer {
                PipelineNormalizer::Bert(bert) => {
                    // Cleaning after lowercasing would drop the same bytes and fold the same
                    // spaces, so the order of the members does not matter.
                    fold.clean_text |= bert.clean_text;
                    fold.lowercase |= bert.lowercase;
                }
                PipelineNormalizer::Lowercase(_) => fold.lowercase = true,
                PipelineNormalizer::NFC(_)
                | PipelineNormalizer::NFD(_)
                | PipelineNormalizer::NFKC(_)
                | PipelineNormalizer::NFKD(_)
                | PipelineNormalizer::StripAccents(_) => {}
                _ => return None,
            }
        }
        Some(fold)
    }

    /// `text` normalized, or `None` when `text` is not ASCII. Borrows `text` when the fold leaves
    /// it as it is.
    pub fn apply<'a>(&self, text: &'a str) -> Option<Cow<'a, str>> {
        if !text.is_ascii() {
            return None;
        }
        let bytes = text.as_bytes();
        if !bytes.iter().any(|&b| self.changes(b)) {
            return Some(Cow::Borrowed(text));
        }
        let mut folded = String::with_capacity(text.len());
        self.push(text, &mut folded);
        Some(Cow::Owned(folded))
    }

    /// Appends the fold of `ascii`, a stretch of ASCII text, to `out`.
    pub fn push(&self, ascii: &str, out: &mut String) {
        debug_assert!(ascii.is_ascii());
        out.extend(ascii.bytes().filter_map(|b| self.map(b)).map(char::from));
    }

    /// Whether the fold changes or drops the ASCII byte `b`.
    fn changes(&self, b: u8) -> bool {
        self.map(b) != Some(b)
    }

    /// What the fold makes of the ASCII byte `b`: `None` when it is dropped.
    fn map(&self, b: u8) -> Option<u8> {
        if self.clean_text {
            match b {
                b'\t' | b'\n' | b'\r' => return Some(b' '),
                // NUL and the other C0 controls, and DEL: category Cc, which cleaning removes.
                0x00..=0x1f | 0x7f => return None,
                _ => {}
            }
        }
        Some(if self.lowercase {
            b.to_ascii_lowercase()
        } else {
            b
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use tokenizers::normalizers::{BertNormalizer, Lowercase, NFC, NFD, NFKD, StripAccents};
    use tokenizers::pipeline::normalize_all;

    /// Every ASCII byte, alone, between letters, and in runs.
    fn ascii_texts() -> Vec<String> {
        let mut texts: Vec<String> = (0u8..0x80)
            .flat_map(|b| {
                let c = b as char;
                [c.to_string(), format!("Ab{c}Cd"), format!("{c}{c}x{c}")]
            })
            .collect();
        texts.push((0u8..0x80).map(|b| b as char).collect());
        texts.push("Hello, World!\tIt's\r\nGOOD.\u{7f}\u{0}done".to_owned());
        texts.push(String::new());
        texts
    }

    /// `BertNormalizer` under every combination of its four settings.
    pub(in crate::engine) fn bert_settings() -> Vec<BertNormalizer> {
        let mut settings = Vec::new();
        for clean_text in [false, true] {
            for handle_chinese_chars in [false, true] {
                for strip_accents in [None, Some(false), Some(true)] {
                    for lowercase in [false, true] {
                        settings.push(BertNormalizer::new(
                            clean_text,
                            handle_chinese_chars,
                            strip_accents,
                            lowercase,
                        ));
                    }
                }
            }
        }
        settings
    }

    fn assert_fold_matches(normalizers: &[PipelineNormalizer]) {
        let fold = AsciiFold::of(normalizers).expect("these normalizers fold ASCII");
        for text in ascii_texts() {
            let expected = normalize_all(normalizers, &text, 0).unwrap();
            let folded = fold.apply(&text).unwrap();
            assert_eq!(folded, expected, "{text:?} under {normalizers:?}");
        }
    }

    #[test]
    fn bert_normalizer_folds_every_ascii_byte_as_the_release_candidate_does() {
        for bert in bert_settings() {
            assert_fold_matches(&[PipelineNormalizer::Bert(bert)]);
        }
    }

    #[test]
    fn unicode_forms_lowercase_and_accent_stripping_fold_as_the_release_candidate_does() {
        assert_fold_matches(&[
            PipelineNormalizer::NFD(NFD),
            PipelineNormalizer::Lowercase(Lowercase),
            PipelineNormalizer::StripAccents(StripAccents::default()),
        ]);
        assert_fold_matches(&[PipelineNormalizer::NFC(NFC), PipelineNormalizer::NFKD(NFKD)]);
        for bert in bert_settings() {
            assert_fold_matches(&[
                PipelineNormalizer::NFC(NFC),
                PipelineNormalizer::Bert(bert),
                PipelineNormalizer::Lowercase(Lowercase),
            ]);
        }
    }

    #[test]
    fn text_beyond_ascii_and_other_normalizers_are_left_to_the_engine() {
        let fold = AsciiFold::of(&[PipelineNormalizer::Lowercase(Lowercase)]).unwrap();
        assert_eq!(fold.apply("Café"), None);
        assert_eq!(AsciiFold::of(&[]), None);
        let prepend = tokenizers::normalizers::Prepend::new("▁".to_owned());
        assert_eq!(
            AsciiFold::of(&[
                PipelineNormalizer::Lowercase(Lowercase),
                PipelineNormalizer::Prepend(prepend)
            ]),
            None
        );
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        let fold = AsciiFold::of(&[PipelineNormalizer::Bert(BertNormalizer::default())]).unwrap();
        assert!(matches!(
            fold.apply("already lower"),
            Some(Cow::Borrowed(_))
        ));
        assert!(matches!(fold.apply("Not lower"), Some(Cow::Owned(_))));
    }
}
