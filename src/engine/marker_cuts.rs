//! Cutting pre-tokens where no merge can cross: before SentencePiece's word marker, and around a
//! character no token holds.
//!
//! SentencePiece-style BPE files (Llama 2, Gemma, Gemini, Mistral's older ones) mark each word's
//! start with `▁` (U+2581, the normalizer's replacement for a space) and have no pre-tokenizer:
//! the model gets the whole text as one pre-token. The release candidate then merges over the
//! whole text at once, and its word cache keys on whole texts, so a text it has not seen runs at
//! about a tenth of the speed of one split into words (`benchmark/results/files.md`).
//!
//! The cut is exact where the vocabulary allows it. In BPE every merge makes a vocabulary token
//! (the pair's concatenation), so a merge across a position `p` makes a token that holds the two
//! characters on either side of `p`. So where no token holds `c▁`, no merge ever crosses a `▁`
//! that follows `c`, and the merges on each side of such a position are the merges of the whole:
//! running the model on the pieces gives the same ids as running it on the whole. The cut is made
//! before every `▁` except one that follows a character some token holds right before a `▁`:
//! another `▁` (runs stay together; tokens such as `▁▁▁▁` exist for indentation), and the rare
//! others (Gemma 3's vocabulary has `>▁</`). By the same argument a character that no token holds
//! at all (a line feed, in vocabularies that spell it with a byte-fallback token) is cut off on
//! both sides: no merge ever touches it. Hard-wrapped prose has one every few words. What else the
//! model does per character or per pre-token must not see the cut either, so the model must have:
//! - no byte-level alphabet: its symbols are the text's own characters, so a `▁` in the text is
//!   the `▁` of its tokens;
//! - no dropout (random merges are no claim about ids), no `ignore_merges` (a piece found whole
//!   in the vocabulary would skip the merges the whole text needs), no continuing-subword prefix
//!   or end-of-word suffix (they mark a pre-token's own start and end);
//! - `▁` in its vocabulary, so that the character after a cut is never unknown and never fused
//!   with an unknown character before it (`fuse_unk`); characters no token holds are cut off
//!   only where they can never be fused either: the model spells them with byte tokens (byte
//!   fallback, all 256 present) or does not fuse unknown characters.
//!
//! The differential tests hold the cut engine equal to the stable crate on the real files it cuts
//! (Llama 2, Gemma 3, Gemini) and on synthetic ones.

use serde_json::Value;
use tokenizers::pipeline::Span;

/// SentencePiece's word marker, `▁` (U+2581).
const MARKER: &str = "\u{2581}";

/// Where a file's pre-tokens are cut: before a `▁` after any character but some, and around the
/// ASCII characters no token holds.
#[derive(Debug, PartialEq)]
pub struct MarkerCuts {
    /// The characters some token holds right before a `▁` (`▁` among them, where the vocabulary
    /// has a run of two), after which a `▁` is not cut.
    joined_before: Vec<char>,
    /// Per byte: an ASCII character no token holds, cut off on both sides (`false` for every byte
    /// where such cuts are not exact, see the module's docs).
    alone: [bool; 128],
}

/// More characters joined to a following `▁` than any real vocabulary has: a vocabulary with more
/// does not keep its words apart, and is not cut.
const MAX_JOINED_BEFORE: usize = 64;

impl MarkerCuts {
    /// The cuts for `model` (a canonical, `"version": "2.0"` tokenizer.json's model), where it is a
    /// BPE that can be cut (see the module's docs).
    pub fn of(model: &Value) -> Option<MarkerCuts> {
        let unset = |key: &str| match model.get(key) {
            None | Some(Value::Null) => true,
            Some(Value::String(text)) => text.is_empty(),
            Some(Value::Bool(flag)) => !flag,
            Some(_) => false,
        };
        if model.get("type").and_then(Value::as_str) != Some("BPE")
            || model.get("byte_level").and_then(Value::as_bool) != Some(false)
            || ![
                "dropout",
                "ignore_merges",
                "continuing_subword_prefix",
                "end_of_word_suffix",
            ]
            .into_iter()
            .all(unset)
        {
            return None;
        }
        let vocab = model.get("vocab").and_then(Value::as_object)?;
        if !vocab.contains_key(MARKER) {
            return None;
        }
        let mut joined_before = Vec::new();
        let mut held = [false; 128];
        for token in vocab.keys() {
            for (at, _) in token.match_indices(MARKER) {
                if let Some(before) = token[..at].chars().next_back()
                    && !joined_before.contains(&before)
                {
                    joined_before.push(before);
                }
            }
            if joined_before.len() > MAX_JOINED_BEFORE {
                return None;
            }
            for &byte in token.as_bytes().iter().filter(|byte| byte.is_ascii()) {
                held[usize::from(byte)] = true;
            }
        }
        let spelled_in_bytes = model.get("byte_fallback").and_then(Value::as_bool) == Some(true)
            && (0..=u8::MAX).all(|byte| vocab.contains_key(&format!("<0x{byte:02X}>")));
        let never_fused = model.get("fuse_unk").and_then(Value::as_bool) != Some(true);
        let mut alone = [false; 128];
        if spelled_in_bytes || never_fused {
            for (byte, held) in held.iter().enumerate() {
                alone[byte] = !held;
            }
        }
        Some(MarkerCuts {
            joined_before,
            alone,
        })
    }

    /// Appends `spans` (ranges of `text`) to `cut`, each cut before every `▁` that follows a
    /// character of the same span that no token joins to a `▁`, and around every ASCII character
    /// no token holds.
    pub fn cut(&self, text: &str, spans: &[Span], cut: &mut Vec<Span>) {
        let marker = MARKER.as_bytes();
        let bytes = text.as_bytes();
        for span in spans {
            let mut start = span.start as usize;
            let end = span.end as usize;
            for at in start..end {
                let byte = bytes[at];
                if byte.is_ascii() {
                    if self.alone[usize::from(byte)] {
                        if at > start {
                            cut.push(span_of(start, at));
                        }
                        // The character alone; what follows starts a piece of its own.
                        cut.push(span_of(at, at + 1));
                        start = at + 1;
                    }
                } else if byte == marker[0]
                    && bytes[at..end].starts_with(marker)
                    && text[start..at]
                        .chars()
                        .next_back()
                        .is_some_and(|before| !self.joined_before.contains(&before))
                {
                    cut.push(span_of(start, at));
                    start = at;
                }
            }
            if start < end || start == span.start as usize {
                cut.push(span_of(start, end));
            }
        }
    }
}

/// A span of byte positions that came from a `u32` span.
fn span_of(start: usize, end: usize) -> Span {
    Span::new(start as u32, end as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cuts_with<'t>(joined_before: &[char], text: &'t str) -> Vec<&'t str> {
        let cuts = MarkerCuts {
            joined_before: joined_before.to_vec(),
            alone: [false; 128],
        };
        let mut cut = Vec::new();
        cuts.cut(text, &[span_of(0, text.len())], &mut cut);
        cut.iter().map(|span| &text[span.range()]).collect()
    }

    fn cuts(text: &str) -> Vec<&str> {
        cuts_with(&['▁'], text)
    }

    #[test]
    fn cuts_before_each_marker_after_another_character() {
        assert_eq!(cuts("▁Hello▁world"), ["▁Hello", "▁world"]);
        assert_eq!(cuts("a▁▁▁b▁"), ["a", "▁▁▁b", "▁"]);
        assert_eq!(cuts("▁▁x"), ["▁▁x"]);
        assert_eq!(cuts("no marker"), ["no marker"]);
        assert_eq!(cuts(""), [""]);
        // Other characters whose UTF-8 starts with the marker's first byte are not markers.
        assert_eq!(cuts("a–b▁€"), ["a–b", "▁€"]);
    }

    #[test]
    fn keeps_a_marker_after_a_character_a_token_joins_to_it() {
        assert_eq!(cuts_with(&['>'], "<b>▁</b>x▁y"), ["<b>▁</b>x", "▁y"]);
        // Without `▁` among them, a run is cut before each of its markers.
        assert_eq!(cuts_with(&[], "a▁▁b"), ["a", "▁", "▁b"]);
    }

    #[test]
    fn cuts_around_a_character_no_token_holds() {
        let mut alone = [false; 128];
        alone[usize::from(b'\n')] = true;
        let cuts = MarkerCuts {
            joined_before: vec!['▁'],
            alone,
        };
        let text = "\n▁a\nb\n\n▁c▁d\n";
        let mut cut = Vec::new();
        cuts.cut(text, &[span_of(0, text.len())], &mut cut);
        let pieces: Vec<&str> = cut.iter().map(|span| &text[span.range()]).collect();
        assert_eq!(
            pieces,
            ["\n", "▁a", "\n", "b", "\n", "\n", "▁c", "▁d", "\n"]
        );
    }

    #[test]
    fn cuts_within_each_span_only() {
        let text = "x▁a|y▁b";
        let mut cut = Vec::new();
        let cuts = MarkerCuts {
            joined_before: Vec::new(),
            alone: [false; 128],
        };
        cuts.cut(text, &[span_of(0, 5), span_of(6, 11)], &mut cut);
        let pieces: Vec<&str> = cut.iter().map(|span| &text[span.range()]).collect();
        assert_eq!(pieces, ["x", "▁a", "y", "▁b"]);
    }

    #[test]
    fn takes_only_a_char_level_bpe_and_learns_what_its_tokens_join_to_a_marker() {
        let model = |vocab: Value, extra: Value| {
            let mut model = json!({"type": "BPE", "byte_level": false, "vocab": vocab,
                                   "merges": [], "dropout": null, "ignore_merges": false});
            for (key, value) in extra.as_object().unwrap() {
                model[key] = value.clone();
            }
            model
        };
        let joined =
            |vocab: Value| MarkerCuts::of(&model(vocab, json!({}))).map(|c| c.joined_before);
        let good = json!({"▁": 0, "a": 1, "▁a": 2, "▁▁": 3, "▁▁a": 4});
        assert_eq!(joined(good.clone()), Some(vec!['▁']));
        assert_eq!(joined(json!({"▁": 0, ">▁</": 1})), Some(vec!['>']));
        assert_eq!(joined(json!({"a": 0})), None);
        for extra in [
            json!({"byte_level": true}),
            json!({"dropout": 0.1}),
            json!({"ignore_merges": true}),
            json!({"continuing_subword_prefix": "##"}),
            json!({"end_of_word_suffix": "</w>"}),
            json!({"type": "WordPiece"}),
        ] {
            assert_eq!(
                MarkerCuts::of(&model(good.clone(), extra.clone())),
                None,
                "{extra}"
            );
        }
    }

    #[test]
    fn cuts_off_a_character_no_token_holds_only_where_it_is_never_fused() {
        let mut vocab = json!({"▁": 0, "a": 1, "▁a": 2});
        let alone = |vocab: &Value, extra: Value| {
            let mut model = json!({"type": "BPE", "byte_level": false, "vocab": vocab,
                                   "merges": [], "fuse_unk": true, "byte_fallback": true});
            for (key, value) in extra.as_object().unwrap() {
                model[key] = value.clone();
            }
            MarkerCuts::of(&model).unwrap().alone[usize::from(b'\n')]
        };
        // Fused unknown characters, and no byte tokens to spell a line feed with.
        assert!(!alone(&vocab, json!({})));
        assert!(alone(&vocab, json!({"fuse_unk": false})));
        for byte in 0..=u8::MAX {
            vocab[format!("<0x{byte:02X}>")] = json!(3 + u32::from(byte));
        }
        assert!(alone(&vocab, json!({})));
        // A token that holds it: never alone.
        vocab["a\n"] = json!(300);
        assert!(!alone(&vocab, json!({"fuse_unk": false})));
    }
}
