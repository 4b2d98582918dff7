//! A `Metaspace` that prepends `▁` to the first piece only, behind a normalizer that can remove
//! the text's first characters.
//!
//! With `prepend_scheme: "first"`, the reference prepends `▁` to a piece only where the piece
//! begins at the start of the original text. It normalizes the text, then cuts the result into
//! the pieces between added tokens, each a slice whose origin is that of its first character. A
//! normalizer that removes the text's first characters (a `Strip`, `StripAccents` on a leading
//! combining mark, `BertNormalizer`'s cleaning of a leading zero-width or control character, a
//! `Replace` with nothing) leaves a first piece that begins further on, so the reference prepends
//! nothing there. The release candidate asks where the text began before normalization, so it
//! prepends `▁` all the same: `"  hello"` under a `Strip` gives `▁hello`'s ids there and
//! `hello`'s in the reference.
//!
//! [`LeadingDrop`] finds such texts: it runs the file's normalizer, as the stable crate reads it,
//! on the first [`PREFIX_CHARS`] characters of a text, and says whether the result begins later
//! than the text. The route sends those texts to the stable engine (`routing.rs`); every other
//! text has a first piece that begins where the text does, in both engines.

use serde_json::Value;
use tokenizers_stable::normalizer::Range;
use tokenizers_stable::normalizers::NormalizerWrapper;
use tokenizers_stable::{NormalizedString, Normalizer};

/// How many characters of a text the check normalizes. A normalizer that removes a text's first
/// character does so whatever follows it (a whitespace, a mark, a control character); the
/// characters after it are there for a pattern that reads the first with its neighbours.
const PREFIX_CHARS: usize = 16;

/// The file's normalizer, for a file whose `Metaspace` prepends to the first piece only.
pub struct LeadingDrop {
    normalizer: NormalizerWrapper,
    /// The normalizer keeps a leading ASCII letter or digit, so a text beginning with one needs
    /// no check: it has no `Replace` (whose pattern could match one) and keeps each alone.
    keeps_ascii_alphanumerics: bool,
}

impl LeadingDrop {
    /// The check for `file`, a parsed tokenizer.json as written: `None` where its pre-tokenizer has
    /// no `Metaspace` with `prepend_scheme: "first"` (on its own or in a `Sequence`) or it has no
    /// normalizer, and where the stable crate does not read its normalizer (the stable engine then
    /// refuses the file too).
    pub fn for_file(file: &Value) -> Option<LeadingDrop> {
        let pre_tokenizer = file.get("pre_tokenizer")?;
        let members = match pre_tokenizer.get("pretokenizers") {
            Some(Value::Array(members)) => members.iter().collect(),
            _ => vec![pre_tokenizer],
        };
        let prepends_first = members.iter().any(|member| {
            member.get("type").and_then(Value::as_str) == Some("Metaspace")
                && member.get("prepend_scheme").and_then(Value::as_str) == Some("first")
        });
        if !prepends_first {
            return None;
        }
        let normalizer = file.get("normalizer").filter(|n| !n.is_null())?;
        let mut check = LeadingDrop {
            normalizer: serde_json::from_value(normalizer.clone()).ok()?,
            keeps_ascii_alphanumerics: false,
        };
        check.keeps_ascii_alphanumerics = !has_replace(&check.normalizer)
            && (b'0'..=b'9')
                .chain(b'A'..=b'Z')
                .chain(b'a'..=b'z')
                .all(|c| !check.normalizes_away_the_start(&char::from(c).to_string()));
        Some(check)
    }

    /// True when the normalizer removes `text`'s first character, so that the reference prepends
    /// no `▁` to it: the normalized start of the text comes from further on, or is empty.
    pub fn drops_first_character(&self, text: &str) -> bool {
        match text.as_bytes().first() {
            None => false,
            Some(c) if c.is_ascii_alphanumeric() && self.keeps_ascii_alphanumerics => false,
            Some(_) => self.normalizes_away_the_start(text),
        }
    }

    /// True when normalizing the start of `text` removes its first character.
    fn normalizes_away_the_start(&self, text: &str) -> bool {
        let end = text
            .char_indices()
            .nth(PREFIX_CHARS)
            .map_or(text.len(), |(at, _)| at);
        let mut normalized = NormalizedString::from(&text[..end]);
        // A normalizer that fails here fails the text in the stable engine too, which says why.
        if self.normalizer.normalize(&mut normalized).is_err() {
            return true;
        }
        // Where the first piece's slice begins in the original text.
        normalized
            .convert_offsets(Range::Normalized(0..normalized.len()))
            .is_none_or(|original| normalized.is_empty() || original.start != 0)
    }
}

/// Whether `normalizer` holds a `Replace`, on its own or in a `Sequence` at any depth.
fn has_replace(normalizer: &NormalizerWrapper) -> bool {
    match normalizer {
        NormalizerWrapper::Replace(_) => true,
        NormalizerWrapper::Sequence(members) => members.as_ref().iter().any(has_replace),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file(normalizer: Value, pre_tokenizer: Value) -> Value {
        json!({"normalizer": normalizer, "pre_tokenizer": pre_tokenizer})
    }

    fn metaspace(scheme: &str) -> Value {
        json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": scheme, "split": true})
    }

    #[test]
    fn only_a_first_scheme_behind_a_normalizer_is_checked() {
        let strip = json!({"type": "Strip", "strip_left": true, "strip_right": true});
        assert!(LeadingDrop::for_file(&file(strip.clone(), metaspace("first"))).is_some());
        let in_sequence = json!({"type": "Sequence", "pretokenizers": [metaspace("first")]});
        assert!(LeadingDrop::for_file(&file(strip.clone(), in_sequence)).is_some());
        assert!(LeadingDrop::for_file(&file(strip.clone(), metaspace("always"))).is_none());
        assert!(LeadingDrop::for_file(&file(Value::Null, metaspace("first"))).is_none());
        let byte_level = json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true});
        assert!(LeadingDrop::for_file(&file(strip, byte_level)).is_none());
    }

    #[test]
    fn texts_whose_first_characters_the_normalizer_removes() {
        let check = |normalizer: Value, text: &str| {
            LeadingDrop::for_file(&file(normalizer, metaspace("first")))
                .unwrap()
                .drops_first_character(text)
        };
        let strip = json!({"type": "Strip", "strip_left": true, "strip_right": true});
        assert!(check(strip.clone(), "  hello"));
        assert!(check(strip.clone(), "\n\thello"));
        assert!(check(strip.clone(), &" ".repeat(40)));
        assert!(!check(strip.clone(), "hello  "));
        assert!(!check(strip, ""));
        let accents =
            json!({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]});
        assert!(check(accents.clone(), "\u{301}hello"));
        assert!(!check(accents, "\u{e9}t\u{e9}"));
        let bert = json!({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": false});
        assert!(check(bert.clone(), "\u{200b}hello"));
        assert!(check(bert.clone(), "\u{0}hello"));
        assert!(!check(bert, "\u{a0}hello"));
    }

    #[test]
    fn a_leading_ascii_alphanumeric_is_checked_only_behind_a_replace() {
        let strip = json!({"type": "Strip", "strip_left": true, "strip_right": true});
        let check = LeadingDrop::for_file(&file(strip, metaspace("first"))).unwrap();
        assert!(check.keeps_ascii_alphanumerics);
        let replace = json!({"type": "Replace", "pattern": {"String": "x"}, "content": ""});
        let check = LeadingDrop::for_file(&file(replace.clone(), metaspace("first"))).unwrap();
        assert!(!check.keeps_ascii_alphanumerics);
        assert!(check.drops_first_character("xylophone"));
        assert!(!check.drops_first_character("ylophone"));
        let nested = json!({"type": "Sequence", "normalizers": [{"type": "NFKC"},
            {"type": "Sequence", "normalizers": [replace]}]});
        let check = LeadingDrop::for_file(&file(nested, metaspace("first"))).unwrap();
        assert!(!check.keeps_ascii_alphanumerics);
        assert!(check.drops_first_character("xylophone"));
    }
}
