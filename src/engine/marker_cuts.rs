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
//! Most such files spell their spaces with two plain normalizers, `Replace(" ", "▁")` and
//! `Prepend("▁")`, and have no pre-tokenizer (or one that splits on a space, which the replaced
//! text no longer has). For them [`MarkerCuts::mark_and_cut`] writes the normalized text and finds
//! its cuts in one pass over each text between added tokens; the release candidate's normalizers,
//! pre-tokenizer and second search for added tokens (none is matched in normalized text there)
//! would each walk it again.
//!
//! The differential tests hold the cut engine equal to the stable crate on the real files it cuts
//! (Mistral 7B's in Llama 2's shape, Gemma 3, Gemini) and on synthetic ones, by both ways.

use serde_json::Value;
use tokenizers::pipeline::{PipelineNormalizer, PipelinePreTokenizer, Span};
use tokenizers::pre_tokenizers::split::SplitPattern;
use tokenizers::utils::search::ReplacePattern;

/// SentencePiece's word marker, `▁` (U+2581).
pub const MARKER: &str = "\u{2581}";

/// Where a file's pre-tokens are cut: before a `▁` after any character but some, and around the
/// ASCII characters no token holds.
#[derive(Debug, PartialEq)]
pub struct MarkerCuts {
    /// The characters some token holds right before a `▁` (`▁` among them, where the vocabulary
    /// has a run of two), after which a `▁` is not cut.
    joined_before: Vec<char>,
    /// Per byte of normalized text: [`ALONE`] for an ASCII character no token holds, cut off on
    /// both sides (never where such cuts are not exact, see the module's docs), [`MARKER_LEAD`]
    /// for the first byte of `▁`, [`ORDINARY`] for the rest.
    class: [u8; 256],
    /// Per byte of text before [`SpaceMarkers`]' normalization: the same, and [`SPACE`] for a
    /// space.
    raw_class: [u8; 256],
}

/// A byte the cuts pass over.
const ORDINARY: u8 = 0;
/// An ASCII character no token holds.
const ALONE: u8 = 1;
/// The first byte of `▁` and of other characters of U+2000-U+2FFF.
const MARKER_LEAD: u8 = 2;
/// A space, written `▁` by [`SpaceMarkers`]' normalization.
const SPACE: u8 = 3;

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
            if !add_joined_to_markers(token, &mut joined_before) {
                return None;
            }
            for &byte in token.as_bytes().iter().filter(|byte| byte.is_ascii()) {
                held[usize::from(byte)] = true;
            }
        }
        let spelled_in_bytes = model.get("byte_fallback").and_then(Value::as_bool) == Some(true)
            && (0..=u8::MAX).all(|byte| vocab.contains_key(&format!("<0x{byte:02X}>")));
        let never_fused = model.get("fuse_unk").and_then(Value::as_bool) != Some(true);
        let mut class = [ORDINARY; 256];
        class[usize::from(MARKER.as_bytes()[0])] = MARKER_LEAD;
        if spelled_in_bytes || never_fused {
            for (byte, held) in held.iter().enumerate() {
                if !held {
                    class[byte] = ALONE;
                }
            }
        }
        Some(MarkerCuts::new(joined_before, class))
    }

    fn new(joined_before: Vec<char>, class: [u8; 256]) -> MarkerCuts {
        let mut raw_class = class;
        raw_class[usize::from(b' ')] = SPACE;
        MarkerCuts {
            joined_before,
            class,
            raw_class,
        }
    }

    /// Appends `spans` (ranges of `text`) to `cut`, each cut before every `▁` that follows a
    /// character of the same span that no token joins to a `▁`, and around every ASCII character
    /// no token holds.
    pub fn cut(&self, text: &str, spans: &[Span], cut: &mut Vec<Span>) {
        let bytes = text.as_bytes();
        for span in spans {
            let (start, end) = (span.start as usize, span.end as usize);
            let mut pieces = Pieces::new(self, cut, start);
            let mut at = start;
            while at < end {
                match self.class[usize::from(bytes[at])] {
                    ORDINARY => at += 1,
                    ALONE => {
                        pieces.alone(at);
                        at += 1;
                    }
                    _ if bytes[at..end].starts_with(MARKER.as_bytes()) => {
                        pieces.marker(bytes, at);
                        at += MARKER.len();
                    }
                    _ => at += 1,
                }
            }
            pieces.finish(end);
        }
    }

    /// Normalizes `raw` as [`SpaceMarkers`] says into `buffer` (cleared first), appends the
    /// pieces of the result to `cut` (what [`cut`](Self::cut) makes of it, found in the same pass
    /// that writes it), and returns the normalized text. An empty `raw` gives no text and no piece.
    pub fn mark_and_cut<'b>(
        &self,
        markers: SpaceMarkers,
        raw: &str,
        buffer: &'b mut Vec<u8>,
        cut: &mut Vec<Span>,
    ) -> &'b str {
        buffer.clear();
        if raw.is_empty() {
            return "";
        }
        let marker = MARKER.as_bytes();
        buffer.reserve(raw.len() + raw.len() / 2 + marker.len());
        if markers.prepend {
            buffer.extend_from_slice(marker);
        }
        let bytes = raw.as_bytes();
        let mut pieces = Pieces::new(self, cut, 0);
        // `buffer` holds `raw[..copied]` with its spaces written as markers.
        let mut copied = 0;
        let mut at = 0;
        while at < bytes.len() {
            let class = self.raw_class[usize::from(bytes[at])];
            if class == ORDINARY {
                at += 1;
                continue;
            }
            buffer.extend_from_slice(&bytes[copied..at]);
            match class {
                SPACE => {
                    pieces.marker(buffer, buffer.len());
                    buffer.extend_from_slice(marker);
                    at += 1;
                }
                ALONE => {
                    pieces.alone(buffer.len());
                    buffer.push(bytes[at]);
                    at += 1;
                }
                _ if bytes[at..].starts_with(marker) => {
                    pieces.marker(buffer, buffer.len());
                    buffer.extend_from_slice(marker);
                    at += marker.len();
                }
                _ => {
                    buffer.push(bytes[at]);
                    at += 1;
                }
            }
            copied = at;
        }
        buffer.extend_from_slice(&bytes[copied..]);
        pieces.finish(buffer.len());
        // SAFETY: `buffer` is `raw`, a `str`, with each space (one byte, a whole character)
        // replaced by `▁`'s UTF-8 bytes and, where `prepend` says so, `▁` put first: whole
        // characters of UTF-8 in the order of `raw`, so UTF-8. Checking it again cost a tenth of
        // the encode on marker-heavy text, where the check's ASCII fast path never applies.
        unsafe { std::str::from_utf8_unchecked(buffer) }
    }
}

/// The cuts of one span, made left to right.
struct Pieces<'c> {
    cuts: &'c MarkerCuts,
    out: &'c mut Vec<Span>,
    /// Where the span starts.
    span_start: usize,
    /// Where the piece being made starts.
    start: usize,
}

impl<'c> Pieces<'c> {
    fn new(cuts: &'c MarkerCuts, out: &'c mut Vec<Span>, span_start: usize) -> Self {
        Pieces {
            cuts,
            out,
            span_start,
            start: span_start,
        }
    }

    /// A `▁` at `at` of `text` (UTF-8 up to `at`): a piece starts there unless the piece before
    /// it is empty or ends in a character some token joins to a `▁`.
    #[inline(always)]
    fn marker(&mut self, text: &[u8], at: usize) {
        if at == self.start {
            return;
        }
        let last = text[at - 1];
        let before = if last.is_ascii() {
            char::from(last)
        } else {
            // The last character starts at the last byte that is not a continuation byte.
            let mut first = at - 1;
            while first > self.start && text[first] & 0xC0 == 0x80 {
                first -= 1;
            }
            match std::str::from_utf8(&text[first..at]).map(|last| last.chars().next()) {
                Ok(Some(before)) => before,
                _ => unreachable!("the text before a marker is whole characters"),
            }
        };
        if !self.cuts.joined_before.contains(&before) {
            self.out.push(span_of(self.start, at));
            self.start = at;
        }
    }

    /// An ASCII character no token holds at `at`: a piece of its own.
    #[inline(always)]
    fn alone(&mut self, at: usize) {
        if at > self.start {
            self.out.push(span_of(self.start, at));
        }
        self.out.push(span_of(at, at + 1));
        self.start = at + 1;
    }

    /// The span ends at `end`: the last piece, or the whole span where it is empty.
    fn finish(self, end: usize) {
        if self.start < end || self.start == self.span_start {
            self.out.push(span_of(self.start, end));
        }
    }
}

/// The characters that some token of `tokens` holds right before a `▁`, after which a `▁` is not
/// cut; `None` where there are more than a vocabulary that keeps its words apart has.
pub fn joined_to_markers<'t>(tokens: impl IntoIterator<Item = &'t str>) -> Option<Vec<char>> {
    let mut joined = Vec::new();
    tokens
        .into_iter()
        .all(|token| add_joined_to_markers(token, &mut joined))
        .then_some(joined)
}

/// Adds to `joined` each character `token` holds right before a `▁`; false once `joined` holds
/// more than [`MAX_JOINED_BEFORE`].
fn add_joined_to_markers(token: &str, joined: &mut Vec<char>) -> bool {
    for (at, _) in token.match_indices(MARKER) {
        if let Some(before) = token[..at].chars().next_back()
            && !joined.contains(&before)
        {
            joined.push(before);
        }
    }
    joined.len() <= MAX_JOINED_BEFORE
}

/// The normalizers SentencePiece-style files spell their spaces with: every space replaced by `▁`
/// (`Replace`), and a `▁` put before a text that is not empty (`Prepend`, where the file has one).
/// A file whose normalizers are exactly these, and whose pre-tokenizer cannot cut the text they
/// write (none, or a `Split` on a string holding a space), is normalized and cut in one pass
/// ([`MarkerCuts::mark_and_cut`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpaceMarkers {
    prepend: bool,
}

impl SpaceMarkers {
    /// What `normalizers` and `pre_tokenizer` amount to, where they are the spaces-to-markers form
    /// above.
    pub fn of(
        normalizers: &[PipelineNormalizer],
        pre_tokenizer: &PipelinePreTokenizer,
    ) -> Option<SpaceMarkers> {
        let splits_nothing = match pre_tokenizer {
            PipelinePreTokenizer::None => true,
            // The text it sees holds no space: a string pattern with one never matches.
            PipelinePreTokenizer::Split(split) => {
                !split.invert
                    && matches!(&split.pattern, SplitPattern::String(pattern) if pattern.contains(' '))
            }
            _ => false,
        };
        if !splits_nothing {
            return None;
        }
        let (mut replaced, mut prepend) = (false, false);
        for normalizer in normalizers {
            match normalizer {
                PipelineNormalizer::Replace(replace)
                    if !replaced
                        && replace.content == MARKER
                        && matches!(replace.pattern(), ReplacePattern::String(pattern) if pattern == " ") =>
                {
                    replaced = true
                }
                // Before or after the replacement alike: the `▁` it writes is not a space.
                PipelineNormalizer::Prepend(put) if !prepend && put.prepend == MARKER => {
                    prepend = true
                }
                _ => return None,
            }
        }
        replaced.then_some(SpaceMarkers { prepend })
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

    /// Cuts that keep `joined_before` together with a following `▁` and cut off `alone`.
    fn marker_cuts(joined_before: &[char], alone: &[u8]) -> MarkerCuts {
        let mut class = [ORDINARY; 256];
        class[usize::from(MARKER.as_bytes()[0])] = MARKER_LEAD;
        for &byte in alone {
            class[usize::from(byte)] = ALONE;
        }
        MarkerCuts::new(joined_before.to_vec(), class)
    }

    fn cuts_with<'t>(joined_before: &[char], text: &'t str) -> Vec<&'t str> {
        let cuts = marker_cuts(joined_before, &[]);
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
        let cuts = marker_cuts(&['▁'], b"\n");
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
        let cuts = marker_cuts(&[], &[]);
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
            MarkerCuts::of(&model).unwrap().class[usize::from(b'\n')] == ALONE
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

    /// Normalizing and cutting in one pass gives the text `Replace` and `Prepend` write and the
    /// pieces `cut` makes of it, on texts made of the characters each branch looks at.
    #[test]
    fn marks_and_cuts_as_normalizing_then_cutting() {
        let alphabet = [
            " ", "▁", "a", "b", ">", "\n", "\t", "é", "–", "€", "日", "👍",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let mut texts: Vec<String> = vec![String::new(), " ".into(), "▁".into(), "\n".into()];
        texts.extend((0..20_000).map(|_| {
            (0..next(12))
                .map(|_| alphabet[next(alphabet.len())])
                .collect()
        }));
        for (joined_before, alone) in [
            (&['▁'][..], &b"\n"[..]),
            (&['▁', '>', 'é'][..], &b"\n\t"[..]),
            // No token holds a space: in the text before normalization it is still a marker.
            (&['▁'][..], &b"\n "[..]),
            (&[][..], &[][..]),
        ] {
            let cuts = marker_cuts(joined_before, alone);
            for prepend in [false, true] {
                let (mut buffer, mut pieces) = (Vec::new(), Vec::new());
                for raw in &texts {
                    let mut expected = raw.replace(' ', MARKER);
                    if prepend && !expected.is_empty() {
                        expected.insert_str(0, MARKER);
                    }
                    let mut expected_pieces = Vec::new();
                    if !expected.is_empty() {
                        cuts.cut(
                            &expected,
                            &[span_of(0, expected.len())],
                            &mut expected_pieces,
                        );
                    }
                    pieces.clear();
                    let text =
                        cuts.mark_and_cut(SpaceMarkers { prepend }, raw, &mut buffer, &mut pieces);
                    assert_eq!(text, expected, "{raw:?}");
                    assert_eq!(pieces, expected_pieces, "{raw:?}, prepend {prepend}");
                }
            }
        }
    }
}
